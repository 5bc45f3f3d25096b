"""What the Python contenders of the sandbox benchmarks share (tweepy_post.py,
friends_peers.py, facebook_sdk_post.py, facebook_sdk_permissions.py): the
session that takes a library's hard-coded host to the sandbox, their input
lines, and the timed loop that writes one envelope per input line and the
--stats file. Only what the peers import anyway (json, sys, time, requests),
so importing it costs a peer no start-up time or memory of its own."""
import json
import sys
import time

import requests

TWITTER_HOST = "https://api.twitter.com"   # what tweepy and twarc hard-code
TWITTER_UPLOAD_HOST = "https://upload.twitter.com"   # tweepy.API's media uploads


class RedirectingSession(requests.Session):
    """A requests.Session that sends what a client library addresses to one of
    `hosts` (its hard-coded https://… bases) to `base` instead. The URL is
    rewritten in Session.request, before the request is prepared, so the
    library still signs or authorises every request as it would, over the URL
    actually sent; nothing else in the library is changed, and the session
    keeps its connection alive as the library's own would."""

    def __init__(self, base, *hosts):
        super().__init__()
        self.base = base.rstrip("/")
        self.hosts = tuple(host.rstrip("/") for host in hosts)

    def request(self, method, url, *args, **kwargs):
        if isinstance(url, str):
            for host in self.hosts:
                if url.startswith(host + "/"):
                    url = self.base + url[len(host):]
                    break
        return super().request(method, url, *args, **kwargs)


def input_values(stream):
    """The JSON value of each non-blank input line."""
    for raw in stream:
        raw = raw.strip()
        if raw:
            yield json.loads(raw)


def write_stats(path, **figures):
    """The --stats file, when one was asked for."""
    if path:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(figures, f)


def answer_each(items, answer, errors, stats, ensure_ascii=False):
    """The timed loop of a peer: answer(item) for each input item in turn, one
    envelope line per item on stdout, {"ok":true,"line":N,"result":answer(item)},
    or {"ok":false,"line":N,"error":"Type: message"} when it raises one of
    `errors`. Then {"ok","failed","seconds"} to the stats file, seconds being
    the loop alone (after interpreter start-up, imports, reading the input and
    building the client). Returns the exit status: 0 when every item was answered."""
    out = sys.stdout
    ok = failed = 0
    started = time.perf_counter()
    for n, item in enumerate(items, 1):
        try:
            out.write(json.dumps({"ok": True, "line": n, "result": answer(item)},
                                 ensure_ascii=ensure_ascii, separators=(",", ":")) + "\n")
            ok += 1
        except errors as e:
            failed += 1
            out.write(json.dumps({"ok": False, "line": n, "error": "%s: %s" % (type(e).__name__, e)},
                                 ensure_ascii=ensure_ascii, separators=(",", ":")) + "\n")
    seconds = time.perf_counter() - started
    out.flush()
    write_stats(stats, ok=ok, failed=failed, seconds=seconds)
    return 0 if failed == 0 else 1


def graph_api(token, base, version):
    """facebook-sdk's GraphAPI for the sandbox, changed from outside the
    library only: built with version "3.1" (the newest its constructor takes)
    and its `version` then set to `version`, from which the sdk builds every
    path; and, through the constructor's own session= argument, a
    RedirectingSession from facebook.FACEBOOK_GRAPH_URL to base (the same
    effect as assigning that module constant, without touching the module)."""
    import facebook  # the facebook-sdk peers have imported it already

    api = facebook.GraphAPI(access_token=token, version="3.1",
                            session=RedirectingSession(base, facebook.FACEBOOK_GRAPH_URL))
    api.version = version
    return api
