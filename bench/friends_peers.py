#!/usr/bin/env python3
"""The Python contenders of the tw-friends benchmark: one user's following list
walked with an unmodified client library, one JSON line per account on stdout.

    python bench/friends_peers.py CLIENT --api-base URL --user NAME [--max N] --stats FILE >out.jsonl

CLIENT is one of
  tweepy       tweepy.Paginator over Client.get_users_following (API v2, max_results=1000)
  twarc2       Twarc2.following (API v2, max_results=1000, user.fields id,name,username)
  tweepy-v1.1  tweepy.Cursor over API.get_friend_ids (API v1.1, count=5000, stringify_ids)

Each first looks the user up by name (v2: a user lookup, as tw-friends does;
v1.1 sends screen_name), then pages through the list with OAuth 1.0a user
context, the credentials coming from TW_CONSUMER_KEY, TW_CONSUMER_SECRET,
TW_ACCESS_TOKEN and TW_ACCESS_TOKEN_SECRET as for tw-friends. An output line
is the user object as the library gives it back (v2) or {"id": ID} (v1.1).
--stats FILE receives {"accounts", "pages", "seconds"}: seconds is the walk
alone (the lookup included), after interpreter start-up and imports.

Both libraries hard-code https://api.twitter.com; each gets peerlib's
RedirectingSession, which sends those requests to --api-base before they are
prepared, so the libraries still sign (requests-oauthlib, HMAC-SHA1)
every request over the URL actually sent. twarc2's own OAuth1Session is the
same thing: a requests.Session whose auth is requests_oauthlib.OAuth1.
"""
import argparse
import json
import os
import sys
import time

import tweepy
from requests_oauthlib import OAuth1
from twarc.client2 import Twarc2

from peerlib import TWITTER_HOST, RedirectingSession, write_stats

# Sandbox defaults: the fields a v2 user object has when none are asked for.
DEFAULT_USER_FIELDS = "id,name,username"


def credentials():
    e = os.environ
    return e["TW_CONSUMER_KEY"], e["TW_CONSUMER_SECRET"], e["TW_ACCESS_TOKEN"], e["TW_ACCESS_TOKEN_SECRET"]


def walk_tweepy(base, user):
    ck, cs, at, ats = credentials()
    client = tweepy.Client(consumer_key=ck, consumer_secret=cs, access_token=at, access_token_secret=ats)
    client.session = RedirectingSession(base, TWITTER_HOST)
    user_id = client.get_user(username=user, user_auth=True).data.id
    for response in tweepy.Paginator(client.get_users_following, user_id, max_results=1000, user_auth=True):
        yield [u.data for u in response.data or []]


def walk_twarc2(base, user):
    ck, cs, at, ats = credentials()
    tw = Twarc2(consumer_key=ck, consumer_secret=cs, access_token=at, access_token_secret=ats, metadata=False)
    session = RedirectingSession(base, TWITTER_HOST)
    session.auth = OAuth1(ck, cs, at, ats)
    tw.client = session
    for page in tw.following(user, max_results=1000, user_fields=DEFAULT_USER_FIELDS):
        yield page.get("data", [])


def walk_tweepy_v11(base, user):
    ck, cs, at, ats = credentials()
    api = tweepy.API(tweepy.OAuth1UserHandler(ck, cs, at, ats))
    api.session = RedirectingSession(base, TWITTER_HOST)
    for ids in tweepy.Cursor(api.get_friend_ids, screen_name=user, count=5000, stringify_ids=True).pages():
        yield [{"id": i} for i in ids]


CLIENTS = {"tweepy": walk_tweepy, "twarc2": walk_twarc2, "tweepy-v1.1": walk_tweepy_v11}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("client", choices=sorted(CLIENTS))
    p.add_argument("--api-base", required=True, help="base URL of the X API (the sandbox)")
    p.add_argument("--user", required=True)
    p.add_argument("--max", type=int, help="stop after this many accounts")
    p.add_argument("--stats", help="write {accounts, pages, seconds} here")
    args = p.parse_args(argv)

    out = sys.stdout
    accounts = pages = 0
    dump = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    started = time.perf_counter()
    for page in CLIENTS[args.client](args.api_base, args.user):
        pages += 1
        if args.max is not None:
            page = page[:args.max - accounts]
        out.write("".join(dump(a) + "\n" for a in page))
        accounts += len(page)
        if args.max is not None and accounts >= args.max:
            break
    out.flush()
    seconds = time.perf_counter() - started
    write_stats(args.stats, accounts=accounts, pages=pages, seconds=seconds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
