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
replaced by peerlib's RedirectingSession, which rewrites that prefix to
--api-base in Session.request, before the request is prepared, so tweepy's
OAuth 1.0a signing (requests-oauthlib, HMAC-SHA1) still runs on every post,
over the URL actually sent. Nothing else in tweepy is changed; the session keeps
connections alive as tweepy's own does.
"""
import argparse
import os
import sys

import requests
import tweepy

from peerlib import TWITTER_HOST, RedirectingSession, answer_each, input_values


def read_texts(stream):
    return [value["text"] if isinstance(value, dict) else value for value in input_values(stream)]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--api-base", required=True, help="base URL of the X API (the sandbox)")
    p.add_argument("--stats", help="write {ok, failed, seconds} here")
    args = p.parse_args(argv)

    env = os.environ
    client = tweepy.Client(consumer_key=env["TW_CONSUMER_KEY"], consumer_secret=env["TW_CONSUMER_SECRET"],
                           access_token=env["TW_ACCESS_TOKEN"], access_token_secret=env["TW_ACCESS_TOKEN_SECRET"])
    client.session = RedirectingSession(args.api_base, TWITTER_HOST)
    texts = read_texts(sys.stdin)

    def post(text):
        resp = client.create_tweet(text=text, user_auth=True)
        return {"id": resp.data["id"], "text": resp.data["text"]}

    return answer_each(texts, post, (tweepy.TweepyException, requests.RequestException), args.stats)


if __name__ == "__main__":
    sys.exit(main())
