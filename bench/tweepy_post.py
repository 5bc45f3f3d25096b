#!/usr/bin/env python3
"""The tweepy contender of the tw-post benchmarks: a sequential loop of
tweepy.Client.create_tweet(text=..., user_auth=True), one post per input line;
for a record with `media`, each file uploaded first with tweepy.API.media_upload
(v1.1 POST media/upload.json) and the post made with the media_ids it returned.

    python bench/tweepy_post.py --api-base URL --stats FILE [--media-dir DIR] <in.jsonl >out.jsonl

Input: the same JSON lines tw-post reads ({"text": ...} records or JSON
strings; `media`: a list of paths, relative to --media-dir, as tw-post's).
Credentials: TW_CONSUMER_KEY, TW_CONSUMER_SECRET, TW_ACCESS_TOKEN,
TW_ACCESS_TOKEN_SECRET, as for tw-post. Output: one line per input line,
{"ok":true,"line":N,"result":{"id","text"[,"media_ids"]}} or
{"ok":false,"line":N,"error":...}. --stats FILE receives {"ok","failed","seconds"},
where seconds is the time of the posting loop alone (after interpreter start-up,
imports, reading the input and building the clients).

tweepy hard-codes https://api.twitter.com (and https://upload.twitter.com for
media). The clients' requests.Session is replaced by peerlib's
RedirectingSession, which rewrites those prefixes to --api-base in
Session.request, before the request is prepared, so tweepy's OAuth 1.0a signing
(requests-oauthlib, HMAC-SHA1) still runs on every request, over the URL
actually sent. Nothing else in tweepy is changed: Client's session keeps
connections alive as tweepy's own does, and API closes its session after every
request, as tweepy's own does.
"""
import argparse
import os
import sys

import requests
import tweepy

from peerlib import TWITTER_HOST, TWITTER_UPLOAD_HOST, RedirectingSession, answer_each, input_values


def read_records(stream):
    """(text, media paths) of each input line."""
    return [(value.get("text", ""), value.get("media", [])) if isinstance(value, dict) else (value, [])
            for value in input_values(stream)]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--api-base", required=True, help="base URL of the X API (the sandbox)")
    p.add_argument("--stats", help="write {ok, failed, seconds} here")
    p.add_argument("--media-dir", default=".", help="where the records' media paths are (default .)")
    args = p.parse_args(argv)

    env = os.environ
    keys = (env["TW_CONSUMER_KEY"], env["TW_CONSUMER_SECRET"], env["TW_ACCESS_TOKEN"], env["TW_ACCESS_TOKEN_SECRET"])
    client = tweepy.Client(consumer_key=keys[0], consumer_secret=keys[1], access_token=keys[2],
                           access_token_secret=keys[3])
    client.session = RedirectingSession(args.api_base, TWITTER_HOST)
    records = read_records(sys.stdin)
    api = None
    if any(media for _, media in records):
        api = tweepy.API(tweepy.OAuth1UserHandler(*keys))
        api.session = RedirectingSession(args.api_base, TWITTER_HOST, TWITTER_UPLOAD_HOST)

    def post(record):
        text, media = record
        media_ids = [api.media_upload(os.path.join(args.media_dir, path)).media_id_string for path in media]
        resp = client.create_tweet(text=text, media_ids=media_ids or None, user_auth=True)
        result = {"id": resp.data["id"], "text": resp.data["text"]}
        if media_ids:
            result["media_ids"] = media_ids
        return result

    return answer_each(records, post, (tweepy.TweepyException, requests.RequestException, OSError), args.stats)


if __name__ == "__main__":
    sys.exit(main())
