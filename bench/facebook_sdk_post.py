#!/usr/bin/env python3
"""The facebook-sdk contender of the fb-feed benchmark: a sequential loop of
facebook.GraphAPI.put_object(page, "feed", message=...), one post per input line.

    python bench/facebook_sdk_post.py --api-base URL [--graph-version vNN.0] [--page ID]
                                      --stats FILE <records.jsonl >out.jsonl

Input: the same JSON lines fb-feed reads ({"message": ..., "page": ...} records
or JSON strings, which are messages for --page). Credentials: FB_ACCESS_TOKEN
(a Page access token), as for fb-feed. Output: one line per input line,
{"ok":true,"line":N,"result":{"id"}} or {"ok":false,"line":N,"error":...}.
--stats FILE receives {"ok","failed","seconds"}, where seconds is the time of
the posting loop alone (after interpreter start-up, imports, reading the input
and building the client).

What is changed in facebook-sdk 3.1.0, and why:

- The version. Its constructor accepts only "2.8" to "3.1" (a built-in list,
  and a regex `^\\d\\.\\d{1,2}$` that rejects two-digit majors), while the
  sandbox, like the real service today, serves v21.0 to v27.0 and answers
  v3.1 with code 2635 (deprecated version). So the client is built with
  version="3.1" and its `version` attribute is then set to --graph-version
  (default v27.0, fb-feed's default), as Tests/sandbox/test_client_facebook_sdk.py
  does. The sdk builds every path from that attribute.
- The host. facebook-sdk sends to the module constant FACEBOOK_GRAPH_URL
  (https://graph.facebook.com/). The sandbox tests reach it under that name
  over HTTPS (certificates and a patched resolver); fb-feed is measured over
  plain HTTP with FB_API_BASE, so this client is given, through the
  constructor's own `session=` argument, peerlib's RedirectingSession, which
  rewrites that prefix to --api-base in Session.request, before the request is
  prepared (as tweepy_post.py does for tweepy). Same effect as assigning
  facebook.FACEBOOK_GRAPH_URL, without touching the module.

Nothing else is changed: put_object still adds the token to the form body as
the sdk does (fb-feed sends it in an Authorization header), parses the JSON
answer and raises GraphAPIError on an error object; the session keeps its
connection alive as the sdk's own requests.Session does.
"""
import argparse
import os
import sys

import facebook
import requests

from peerlib import answer_each, graph_api, input_values


def read_records(stream, default_page):
    """(page, message) per non-blank input line."""
    return [(str(value.get("page", default_page)), value["message"]) if isinstance(value, dict)
            else (default_page, value) for value in input_values(stream)]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--api-base", required=True, help="base URL of the Graph API (the sandbox)")
    p.add_argument("--graph-version", default="v27.0")
    p.add_argument("--page", default="me", help="the Page of records that name none")
    p.add_argument("--stats", help="write {ok, failed, seconds} here")
    args = p.parse_args(argv)

    api = graph_api(os.environ["FB_ACCESS_TOKEN"], args.api_base, args.graph_version)
    records = read_records(sys.stdin, args.page)

    def post(record):
        page, message = record
        return {"id": api.put_object(page, "feed", message=message)["id"]}

    return answer_each(records, post,
                       (facebook.GraphAPIError, requests.RequestException, KeyError, TypeError, ValueError), args.stats)


if __name__ == "__main__":
    sys.exit(main())
