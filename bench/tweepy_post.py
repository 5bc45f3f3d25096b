#!/usr/bin/env python3
"""The tweepy contender of the tw-post benchmark: a sequential loop of
tweepy.Client.create_tweet(text=..., user_auth=True), one post per input line.

    python bench/tweepy_post.py --api-base URL --stats FILE <texts.jsonl >out.jsonl

Input: the same JSON lines tw-post reads ({"text": ...} records or JSON
strings). Credentials: TW_CONSUMER_KEY, TW_CONSUMER_SECRET, TW_ACCESS_TOKEN,
TW_ACCESS_TOKEN_SECRET, as for tw-post. Output: one line per input line,
{"ok":true,"line":N,"result":{"id","text"}} or {"ok":false,"line":N,"error":...}.
--stats FILE receives {"ok","failed","seconds"}, where seconds is the time of
the posting loop alone (after interpreter start-up, imports, reading the input
and building the client).

tweepy hard-codes https://api.twitter.com. The client's requests.Session is
replaced by one that rewrites that prefix to --api-base in Session.request,
before the request is prepared, so tweepy's OAuth 1.0a signing (requests-oauthlib,
HMAC-SHA1) still runs on every post, over the URL actually sent. Nothing else
in tweepy is changed; the session keeps connections alive as tweepy's own does.
"""
import argparse
import json
import os
import sys
import time

import requests
import tweepy

TWEEPY_HOST = "https://api.twitter.com"


class RedirectingSession(requests.Session):
    """A requests.Session that sends what tweepy addresses to api.twitter.com
    to another base URL instead."""

    def __init__(self, base):
        super().__init__()
        self.base = base.rstrip("/")

    def request(self, method, url, *args, **kwargs):
        if isinstance(url, str) and url.startswith(TWEEPY_HOST + "/"):
            url = self.base + url[len(TWEEPY_HOST):]
        return super().request(method, url, *args, **kwargs)


def read_texts(stream):
    texts = []
    for raw in stream:
        raw = raw.strip()
        if not raw:
            continue
        value = json.loads(raw)
        texts.append(value["text"] if isinstance(value, dict) else value)
    return texts


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--api-base", required=True, help="base URL of the X API (the sandbox)")
    p.add_argument("--stats", help="write {ok, failed, seconds} here")
    args = p.parse_args(argv)

    env = os.environ
    client = tweepy.Client(consumer_key=env["TW_CONSUMER_KEY"], consumer_secret=env["TW_CONSUMER_SECRET"],
                           access_token=env["TW_ACCESS_TOKEN"], access_token_secret=env["TW_ACCESS_TOKEN_SECRET"])
    client.session = RedirectingSession(args.api_base)
    texts = read_texts(sys.stdin)

    out = sys.stdout
    ok = failed = 0
    started = time.perf_counter()
    for n, text in enumerate(texts, 1):
        try:
            resp = client.create_tweet(text=text, user_auth=True)
            out.write(json.dumps({"ok": True, "line": n, "result": {"id": resp.data["id"], "text": resp.data["text"]}},
                                 ensure_ascii=False, separators=(",", ":")) + "\n")
            ok += 1
        except (tweepy.TweepyException, requests.RequestException) as e:
            failed += 1
            out.write(json.dumps({"ok": False, "line": n, "error": "%s: %s" % (type(e).__name__, e)},
                                 ensure_ascii=False, separators=(",", ":")) + "\n")
    seconds = time.perf_counter() - started
    out.flush()
    if args.stats:
        with open(args.stats, "w", encoding="utf-8") as f:
            json.dump({"ok": ok, "failed": failed, "seconds": seconds}, f)
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
