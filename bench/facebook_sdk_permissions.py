#!/usr/bin/env python3
"""The facebook-sdk contender of the fb-perm-check benchmark: a sequential loop
of facebook.GraphAPI.get_permissions(user), one call per input line, as a
script that asks "may this token do X?" once per check would do.

    python bench/facebook_sdk_permissions.py --api-base URL [--graph-version vNN.0]
                                             --stats FILE <checks.jsonl >out.jsonl

Input: the same JSON lines fb-perm-check reads, {"permission": NAME, "user": ID}
records (a JSON string is a permission of "me"). Credentials: FB_ACCESS_TOKEN,
as for fb-perm-check (the benchmark gives the app token, which reads any of the
app's users' permissions). Output: one line per input line,
{"ok":true,"line":N,"result":{"user","permission","granted"}} or
{"ok":false,"line":N,"error":...}. --stats FILE receives {"ok","failed",
"seconds"}, where seconds is the time of the loop alone (after interpreter
start-up, imports, reading the input and building the client).

get_permissions returns the set of the user's *granted* permissions (it drops
the others' statuses), so `granted` is all it can say; the benchmark checks it
against fb-perm-check's `granted` and the sandbox's configuration.

What is changed in facebook-sdk 3.1.0, and why (as in facebook_sdk_post.py,
the fb-feed benchmark's contender: both take the client from peerlib.graph_api):

- The version. Its constructor accepts only "2.8" to "3.1" and the sandbox,
  like the real service, answers v3.1 with code 2635 (deprecated version), so
  the client is built with version="3.1" and its `version` attribute is then
  set to --graph-version (default v27.0, fb-perm-check's default), as
  Tests/sandbox/test_client_facebook_sdk.py does.
- The host. facebook-sdk sends to FACEBOOK_GRAPH_URL (https://graph.facebook.com/);
  fb-perm-check is measured over plain HTTP with FB_API_BASE, so this client is
  given, through the constructor's own `session=` argument, peerlib's
  RedirectingSession, which rewrites that prefix to --api-base before the
  request is prepared.

Nothing else is changed: get_permissions still puts the token in the query
string as the sdk does (fb-perm-check sends it in an Authorization header),
parses the JSON answer and raises GraphAPIError on an error object; the
session keeps its connection alive as the sdk's own requests.Session does.
"""
import argparse
import os
import sys

import facebook
import requests

from peerlib import answer_each, graph_api, input_values


def read_checks(stream):
    """(user, permission) per non-blank input line."""
    return [(str(value.get("user", "me")), value["permission"]) if isinstance(value, dict) else ("me", value)
            for value in input_values(stream)]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--api-base", required=True, help="base URL of the Graph API (the sandbox)")
    p.add_argument("--graph-version", default="v27.0")
    p.add_argument("--stats", help="write {ok, failed, seconds} here")
    args = p.parse_args(argv)

    api = graph_api(os.environ["FB_ACCESS_TOKEN"], args.api_base, args.graph_version)
    checks = read_checks(sys.stdin)

    def check(item):
        user, permission = item
        granted = permission in api.get_permissions(user)
        return {"user": user, "permission": permission, "granted": granted}

    return answer_each(checks, check,
                       (facebook.GraphAPIError, requests.RequestException, KeyError, TypeError, ValueError), args.stats,
                       ensure_ascii=True)


if __name__ == "__main__":
    sys.exit(main())
