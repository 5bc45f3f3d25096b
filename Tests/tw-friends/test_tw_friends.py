"""End-to-end tests of `tw-friends` (spec: issue 8; contract: docs/contract.md §1-§6;
X API: docs/reference/x-api.md §4.2-§4.4, §5, §7).

Every test runs the built binary (`$SOCIALPIPE_BIN/tw-friends`) as a subprocess in a
scrubbed environment with the sandbox's demo credentials (socialpipe_demo) against
the local API sandbox (sandbox/), started once for this module and reset before
every test. Every run also checks that no secret reaches stdout or stderr, that
every stdout line is a well-formed envelope (contract §2), and the tw-friends rule
for `resume`: present on every error but `input`, `validation` and `not_found`,
after the contract's keys.

What a list should hold comes from the sandbox itself: `reference()` walks the same
endpoint directly (urllib, the app-only bearer token, so the walk has rate-limit
windows of its own and never spends the tool's), and the sandbox's log shows which
pages the tool asked for.

Sections:
  1. complete lists: 0, 1, 999, 1000, 1001 and 25,000 accounts, v2 and v1.1
  2. records: shorthand, -R, positional arguments, user_id, {} and --me, max, --fields
  3. refused: not_found, input errors, usage errors, no credentials
  4. API errors: auth, permission, protected account, app-only --me, usage cap
  5. rate limits: a short window waited for; --max-wait 0 stops with `resume`, and the
     resume fed back yields exactly the rest; a limit met before the first page
  6. faults mid-list: a 503 and a connection reset recovered, each page with its own
     retries; retries exhausted end the list with `resume`
  7. short and empty pages that still carry next_token
  8. several users: ordered and contiguous, --unordered, memory while a list waits
     behind a slow one, `| head -1`, SIGINT/SIGTERM
  9. --dry-run
"""
import calendar
import json
import math
import os
import re
import signal
import subprocess
import threading
import time
import urllib.parse
import urllib.request

import pytest

from toolenv import (X_APP_BEARER_TOKEN, ERROR_KEY_ORDER, Running, assert_no_secrets, assert_usage_error,
                     credentials_path, jl, parse_envelope, reap, run_with_stdin_pipe, settled, start, through_head,
                     twitter_section, vm_hwm_kib, wait_for_fault_hit, wait_until, write_private, x_credentials)

TOOL = "tw-friends"

# The sandbox world (sandbox/README.md §2): username -> (id, accounts it follows).
USERS = {
    "socialpipe_demo": ("1000000000000000001", 2500),
    "jack": ("12", 1_000_000),
    "nobody_follows": ("1000000000000000002", 0),
    "follows_one": ("1000000000000000011", 1),
    "follows_999": ("1000000000000000012", 999),
    "follows_1000": ("1000000000000000013", 1000),
    "follows_1001": ("1000000000000000014", 1001),
    "follows_25000": ("1000000000000000015", 25_000),
    "protected_user": ("1000000000000000016", 10),
}
DEMO = "socialpipe_demo"     # the account of the demo credentials: what {} and --me list
UNKNOWN_NAME = "no_such_user_zz"
UNKNOWN_ID = "3"             # neither configured nor in the generated range

FOLLOWING = "GET /2/users/:id/following"
FRIENDS_IDS = "GET /1.1/friends/ids.json"
BY_USERNAME = "GET /2/users/by/username/:username"
ME = "GET /2/users/me"
PAGE_ENDPOINT = {"2": FOLLOWING, "1.1": FRIENDS_IDS}
PAGE_SIZE = {"2": 1000, "1.1": 5000}
TOKEN_PARAM = {"2": "pagination_token", "1.1": "cursor"}
NO_RESUME = {"input", "validation", "not_found"}
RESUME_KEYS = {"username", "user_id", "profile", "pagination_token", "cursor"}
ISO_UTC = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z")


# --------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------

def uid(name):
    return USERS[name][0]


def check_friends_error(env):
    """The tw-friends rules for an error envelope (issue 8): `resume` on every error but
    input, validation and not_found, after the contract's keys (and `reset`), holding
    only a selector, `profile` and a page position; `reset` in ISO 8601 UTC."""
    err = env["error"]
    keys = list(err)
    if err["kind"] in NO_RESUME:
        assert "resume" not in err, ("no resume on %s errors" % err["kind"], env)
    else:
        assert isinstance(err.get("resume"), dict), ("a %s error carries resume" % err["kind"], env)
        resume = err["resume"]
        assert set(resume) <= RESUME_KEYS, env
        assert not ({"username", "user_id"} <= set(resume)), env
        assert not ({"pagination_token", "cursor"} <= set(resume)), env
        if "cursor" in resume:
            assert isinstance(resume["cursor"], str) and re.fullmatch(r"-?[0-9]+", resume["cursor"]), env
        if "pagination_token" in resume:
            assert isinstance(resume["pagination_token"], str) and resume["pagination_token"], env
        contract = [k for k in keys if k in ERROR_KEY_ORDER or k == "reset"]
        assert keys.index("resume") > max(keys.index(k) for k in contract), ("resume after the contract's keys", env)
    if "reset" in err:
        assert err["kind"] == "rate_limit" and ISO_UTC.fullmatch(err["reset"]), env
        if "resume" in err:
            assert keys.index("reset") < keys.index("resume"), env


def check_run(r):
    for e in r.envelopes:
        if not e["ok"]:
            check_friends_error(e)
    return r


def results(r, line=None):
    """The results of the successful envelopes (of one line), in output order."""
    return [e["result"] for e in r.envelopes if e["ok"] and (line is None or e["line"] == line)]


def as_written(api, accounts):
    """What tw-friends writes as results for these reference accounts: the user objects
    as sent (key order kept) for v2, {"id": "…"} for v1.1."""
    if api == "1.1":
        return [{"id": i} for i in accounts]
    return accounts


def assert_list(r, line, api, expected):
    """Line `line` got exactly these accounts, in this order, each written once as the
    API sent it (for v2, the same keys in the same order)."""
    got = results(r, line)
    want = as_written(api, expected)
    assert len(got) == len(want), ("accounts written for line %d: %d, expected %d" % (line, len(got), len(want)))
    first_wrong = next((i for i, (a, b) in enumerate(zip(got, want))
                        if a != b or list(a) != list(b)), None)
    assert first_wrong is None, ("line %d: account %d differs" % (line, first_wrong), got[first_wrong],
                                 want[first_wrong])
    ids = [a["id"] for a in got]
    assert len(set(ids)) == len(ids), "duplicate accounts"
    assert all(isinstance(i, str) and i.isdigit() for i in ids), "ids stay strings"


def tool_requests(sb, endpoint=None, path=None):
    """The sandbox log (oldest first), optionally one endpoint's or one path's entries."""
    entries = sb.log(path=path) if path else sb.log()
    return [e for e in entries if endpoint is None or e["endpoint"] == endpoint]


def page_requests(sb, api, user=None):
    path = None
    if user is not None and api == "2":
        path = "/2/users/%s/following" % uid(user)
    entries = tool_requests(sb, PAGE_ENDPOINT[api], path)
    if user is not None and api == "1.1":
        entries = [e for e in entries if e["query"].get("user_id", [None])[0] == uid(user)
                   or e["query"].get("screen_name", [None])[0] == user]
    return entries


def page_position(entry, api):
    """The page a request asked for: its pagination_token / cursor (None = the first)."""
    value = entry["query"].get(TOKEN_PARAM[api], [None])[0]
    return None if api == "1.1" and value == "-1" else value


def assert_pages_once(entries, api, expected_pages=None):
    """Every page answered once: no page lost (when a count is given) or fetched twice."""
    answered = [page_position(e, api) for e in entries if e["status"] == 200 and e["outcome"] == "answered"]
    assert len(answered) == len(set(answered)), ("a page was fetched twice", answered)
    if expected_pages is not None:
        assert len(answered) == expected_pages, (len(answered), expected_pages)


def pages_for(n, api, page_size=None):
    return max(1, math.ceil(n / (page_size or PAGE_SIZE[api])))


def request_of(env):
    """A --dry-run envelope's request: (method, path, query dict, headers dict, body)."""
    assert list(env["result"]) == ["request"], env
    req = env["result"]["request"]
    assert set(req) == {"method", "url", "headers", "body"}, req
    url = urllib.parse.urlsplit(req["url"])
    headers = {h.split(":", 1)[0].lower(): h.split(":", 1)[1].strip() for h in req["headers"]}
    return req["method"], url, urllib.parse.parse_qs(url.query, keep_blank_values=True), headers, req["body"]


# The sandbox's own answer, walked directly with the app-only bearer token.
_REFERENCE = {}


def _get(sb, path, query):
    req = urllib.request.Request("%s%s?%s" % (sb.url, path, urllib.parse.urlencode(query)),
                                 headers={"Authorization": "Bearer " + X_APP_BEARER_TOKEN})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read().decode("utf-8"))


def _walk(sb, api, user_id, fields, limit):
    out = []
    if api == "2":
        query = {"max_results": "1000"}
        if fields:
            query["user.fields"] = fields
        while limit is None or len(out) < limit:
            page = _get(sb, "/2/users/%s/following" % user_id, query)
            out += page.get("data", [])
            token = page.get("meta", {}).get("next_token")
            if not token:
                break
            query["pagination_token"] = token
    else:
        query = {"user_id": user_id, "cursor": "-1", "count": "5000", "stringify_ids": "true"}
        while limit is None or len(out) < limit:
            page = _get(sb, "/1.1/friends/ids.json", query)
            out += page["ids"]
            if page["next_cursor_str"] == "0":
                break
            query["cursor"] = page["next_cursor_str"]
    return out if limit is None else out[:limit]


@pytest.fixture
def reference(sb):
    """reference(username, api="2", fields=None, limit=None): the accounts the user
    follows, in API order -- v2 user objects, or v1.1 id strings -- walked from the
    sandbox directly. Leaves the sandbox's log empty."""
    def _reference(name, api="2", fields=None, limit=None):
        key = (name, api, fields, limit)
        if key not in _REFERENCE:
            _REFERENCE[key] = _walk(sb, api, uid(name), fields, limit)
            assert limit is not None or len(_REFERENCE[key]) == USERS[name][1], \
                "the sandbox's %s does not follow %d accounts" % (name, USERS[name][1])
        sb.control(clear_log=True)
        return _REFERENCE[key]
    return _reference


@pytest.fixture
def run(run):
    """The shared run fixture (Tests/conftest.py), plus the tw-friends error rules."""
    return lambda *args, **kwargs: check_run(run(*args, **kwargs))


def api_args(api):
    return [] if api == "2" else ["--api", "1.1"]


def limit_pages(sb, api, limit, window=900):
    """Sets the tool's page window (resetting windows already open)."""
    sb.control(rate_limits={PAGE_ENDPOINT[api]: {"limit": limit, "window": window}})


# --------------------------------------------------------------------------------------
# 1. complete lists
# --------------------------------------------------------------------------------------

SIZES = ["follows_one", "follows_999", "follows_1000", "follows_1001", "follows_25000"]


@pytest.mark.parametrize("api", ["2", "1.1"])
@pytest.mark.parametrize("name", SIZES)
def test_every_account_once_in_api_order(run, sb, reference, name, api):
    expected = reference(name, api)
    r = run(api_args(api) + [name], timeout=60)
    assert r.returncode == 0, r
    assert {e["line"] for e in r.envelopes} == {1}
    assert all(e["ok"] and e["input"] == {"username": name} for e in r.envelopes), r
    assert_list(r, 1, api, expected)
    pages = page_requests(sb, api)
    assert_pages_once(pages, api, pages_for(len(expected), api))
    for e in pages:
        q = e["query"]
        if api == "2":
            assert e["path"] == "/2/users/%s/following" % uid(name), e
            assert q["max_results"] == ["1000"] and "user.fields" not in q, q
        else:
            assert q["screen_name"] == [name] and "user_id" not in q, q
            assert q["count"] == ["5000"] and q["stringify_ids"] == ["true"], q
        assert e["auth"]["scheme"] == "oauth1" and e["auth"]["outcome"] == "ok", e
    assert page_position(pages[0], api) is None, "the walk starts at the first page"
    if api == "2":
        assert len(tool_requests(sb, BY_USERNAME)) == 1
    else:
        assert pages[0]["query"]["cursor"] == ["-1"]
        assert [e["endpoint"] for e in sb.log()] == [FRIENDS_IDS] * len(pages), "v1.1 needs no lookup"
    assert r.stderr == b"", r


@pytest.mark.parametrize("api", ["2", "1.1"])
def test_an_account_that_follows_nobody_writes_nothing_and_succeeds(run, sb, api):
    r = run(api_args(api) + ["nobody_follows"])
    assert r.returncode == 0, r
    assert r.stdout == b"", r
    assert len(page_requests(sb, api)) == 1


@pytest.mark.parametrize("api", ["2", "1.1"])
def test_records_that_follow_nobody_leave_no_gap_in_the_others(run, sb, reference, api):
    expected = reference("follows_one", api)
    r = run(api_args(api), jl("nobody_follows", "follows_one", "nobody_follows", "follows_one"))
    assert r.returncode == 0, r
    assert [e["line"] for e in r.envelopes] == [2, 4], r
    assert_list(r, 2, api, expected)
    assert_list(r, 4, api, expected)


# --------------------------------------------------------------------------------------
# 2. records
# --------------------------------------------------------------------------------------

def test_shorthand_objects_and_user_ids(run, sb, reference):
    expected = reference("follows_one")
    big_id = int(uid("follows_one"))       # above 2^53: must be echoed exactly
    stdin = jl("follows_one", {"username": "follows_one"}, "@follows_one", {"username": "@follows_one"},
               {"user_id": uid("follows_one")}, {"user_id": big_id}) + b"\n  \t\n" + jl("follows_one")
    r = run([], stdin)
    assert r.returncode == 0, r
    assert [e["line"] for e in r.envelopes] == [1, 2, 3, 4, 5, 6, 9], r
    inputs = {e["line"]: e["input"] for e in r.envelopes}
    assert inputs == {1: {"username": "follows_one"}, 2: {"username": "follows_one"},
                      3: {"username": "@follows_one"}, 4: {"username": "@follows_one"},
                      5: {"user_id": uid("follows_one")}, 6: {"user_id": big_id}, 9: {"username": "follows_one"}}
    for line in inputs:
        assert_list(r, line, "2", expected)
    # One lookup for the run; a user_id needs none.
    assert [e["path"] for e in tool_requests(sb, BY_USERNAME)] == ["/2/users/by/username/follows_one"]
    assert tool_requests(sb, ME) == []


def test_raw_input_lines_are_usernames(run, sb, reference):
    expected = reference("follows_one")
    r = run(["-R"], b'follows_one\n@follows_one\n{"username":"follows_one"}\n')
    assert r.returncode == 1, r
    got = {e["line"]: e for e in r.envelopes if not e["ok"]}
    assert list(got) == [3] and got[3]["error"]["kind"] == "input", r
    assert got[3]["input"] == {"username": '{"username":"follows_one"}'}, got[3]
    assert_list(r, 1, "2", expected)
    assert_list(r, 2, "2", expected)


def test_positional_arguments_are_usernames_and_stdin_is_not_read(bin_path, make_env, sb, reference):
    one, many = reference("follows_one"), reference("follows_999")
    data = jl("follows_1000")
    r, left = run_with_stdin_pipe([bin_path, "follows_one", "@follows_one", "nobody_follows", "follows_999"],
                                  make_env(), data, timeout=30)
    r = check_run(r)
    assert r.returncode == 0, r
    assert left == data, "stdin must not be read when arguments are given"
    assert sorted({e["line"] for e in r.envelopes}) == [1, 2, 4], r
    assert {e["line"]: e["input"] for e in r.envelopes} == \
        {1: {"username": "follows_one"}, 2: {"username": "@follows_one"}, 4: {"username": "follows_999"}}
    assert_list(r, 1, "2", one)
    assert_list(r, 2, "2", one)
    assert_list(r, 4, "2", many)
    lookups = [e["path"].rsplit("/", 1)[1] for e in tool_requests(sb, BY_USERNAME)]
    assert sorted(lookups) == ["follows_999", "follows_one", "nobody_follows"], "each resolution once per run"


@pytest.mark.parametrize("api", ["2", "1.1"])
def test_an_empty_record_lists_the_authenticated_user(run, sb, reference, api):
    expected = reference(DEMO, api)
    r = run(api_args(api), jl({}))
    assert r.returncode == 0, r
    assert all(e["input"] == {} for e in r.envelopes)
    assert_list(r, 1, api, expected)
    assert results(r)[0]["id"] == uid("jack"), "socialpipe_demo follows jack first"
    if api == "2":
        assert len(tool_requests(sb, ME)) == 1
        assert {e["path"] for e in page_requests(sb, api)} == {"/2/users/%s/following" % uid(DEMO)}
    else:
        for e in page_requests(sb, api):
            assert "user_id" not in e["query"] and "screen_name" not in e["query"], e


@pytest.mark.parametrize("api", ["2", "1.1"])
def test_me_lists_the_authenticated_user_without_reading_stdin(bin_path, make_env, sb, reference, api):
    expected = reference(DEMO, api)
    data = jl("follows_one")
    r, left = run_with_stdin_pipe([bin_path, "--me"] + api_args(api), make_env(), data, timeout=30)
    r = check_run(r)
    assert r.returncode == 0, r
    assert left == data, "--me reads no records"
    assert all(e["line"] == 1 and e["input"] == {} for e in r.envelopes), r
    assert_list(r, 1, api, expected)


@pytest.mark.parametrize("api", ["2", "1.1"])
def test_max_stops_after_that_many_accounts(run, sb, reference, api):
    full = reference("follows_25000", api)
    small = reference("follows_1001", api)
    one = reference("follows_one", api)
    records = [{"username": "follows_1001", "max": 5},
               {"username": "follows_25000", "max": PAGE_SIZE[api] + 500},
               {"username": "follows_one", "max": 10},
               {"username": "follows_1001", "max": 1001}]
    r = run(api_args(api), jl(*records), timeout=60)
    assert r.returncode == 0, r
    assert_list(r, 1, api, small[:5])
    assert_list(r, 2, api, full[:PAGE_SIZE[api] + 500])
    assert_list(r, 3, api, one)
    assert_list(r, 4, api, small)
    # No page beyond what `max` needs.
    assert len(page_requests(sb, api, "follows_25000")) == 2
    assert len(page_requests(sb, api, "follows_1001")) == (2 if api == "2" else 1) + 1


def test_fields_become_user_fields_and_reach_the_results(run, sb, reference):
    fields = "created_at,public_metrics,description"
    expected = reference("follows_999", fields=fields)
    assert {"created_at", "public_metrics"} <= set(expected[0]), "the sandbox fills these fields"
    r = run(["--fields", fields, "follows_999"])
    assert r.returncode == 0, r
    assert_list(r, 1, "2", expected)
    for e in page_requests(sb, "2"):
        assert set(",".join(e["query"]["user.fields"]).split(",")) == set(fields.split(",")), e


def test_page_size_sets_max_results_and_count(run, sb, reference):
    expected = reference("follows_1001")
    r = run(["--page-size", "100", "follows_1001"])
    assert r.returncode == 0, r
    assert_list(r, 1, "2", expected)
    pages = page_requests(sb, "2")
    assert {e["query"]["max_results"][0] for e in pages} == {"100"}
    assert_pages_once(pages, "2", 11)
    sb.clear()
    ids = reference("follows_25000", "1.1")
    r = run(["--api", "1.1", "--page-size", "3000", "follows_25000"])
    assert r.returncode == 0, r
    assert_list(r, 1, "1.1", ids)
    pages = page_requests(sb, "1.1")
    assert {e["query"]["count"][0] for e in pages} == {"3000"}
    assert_pages_once(pages, "1.1", 9)


def test_a_record_may_start_from_a_page_position(run, sb, reference):
    """pagination_token / cursor in a record: the walk starts there (as a resume does)."""
    expected = reference("follows_1001")
    page = _get(sb, "/2/users/%s/following" % uid("follows_1001"), {"max_results": "400"})
    ids = reference("follows_25000", "1.1")
    first = _get(sb, "/1.1/friends/ids.json", {"user_id": uid("follows_25000"), "cursor": "-1", "count": "7000"})
    sb.control(clear_log=True)
    r = run([], jl({"username": "follows_1001", "pagination_token": page["meta"]["next_token"]}))
    assert r.returncode == 0, r
    assert_list(r, 1, "2", expected[400:])
    r = run(["--api", "1.1"], jl({"user_id": uid("follows_25000"), "cursor": first["next_cursor_str"]}))
    assert r.returncode == 0, r
    assert_list(r, 1, "1.1", ids[5000:])          # count is capped at 5000


# --------------------------------------------------------------------------------------
# 3. refused
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("api", ["2", "1.1"])
def test_unknown_user_is_not_found_and_the_run_goes_on(run, sb, reference, api):
    expected = reference("follows_one", api)
    r = run(api_args(api), jl(UNKNOWN_NAME, {"user_id": UNKNOWN_ID}, "follows_one"))
    assert r.returncode == 1, r
    got = {}
    for e in r.envelopes:
        got.setdefault(e["line"], []).append(e)
    assert sorted(got) == [1, 2, 3], r
    for line in (1, 2):
        [e] = got[line]
        err = e["error"]
        assert err["kind"] == "not_found" and err["attempts"] == 1, e
        assert "resume" not in err
    assert_list(r, 3, api, expected)


def test_input_errors_are_per_line_and_never_sent(run, sb, reference):
    expected = reference("follows_one")
    bad = [b"not json",                                               # 1
           b"[1]",                                                    # 2
           b"5",                                                      # 3
           b"null",                                                   # 4
           {"username": 5},                                           # 5
           {"username": ""},                                          # 6
           {"username": "@"},                                         # 7
           {"username": "has space"},                                 # 8
           {"username": "sixteen_chars_xx"},                          # 9: 16 characters
           {"username": "@@jack"},                                    # 10: one @ is stripped
           {"username": "caf\u00e9"},                                 # 11
           {"user_id": "12a"},                                        # 12
           {"user_id": ""},                                           # 13
           {"user_id": -12},                                          # 14
           {"user_id": 1.5},                                          # 15
           {"user_id": True},                                         # 16
           {"username": "jack", "user_id": "12"},                     # 17: both
           {"username": "jack", "max": 0},                            # 18
           {"username": "jack", "max": -1},                           # 19
           {"username": "jack", "max": "5"},                          # 20
           {"username": "jack", "max": 2.5},                          # 21
           {"user_id": "12", "pagination_token": 5},                  # 22
           {"username": "jack", "profile": 5},                        # 23
           b'{"username":"jack","username":"jack"}',                  # 24: a key twice
           "bad name!"]                                               # 25: shorthand
    r = run([], jl(*bad, "follows_one"))
    assert r.returncode == 1, r
    n = len(bad)
    got = {}
    for e in r.envelopes:
        got.setdefault(e["line"], []).append(e)
    assert sorted(got) == list(range(1, n + 2)), r
    for line in range(1, n + 1):
        [e] = got[line]
        assert e["ok"] is False and e["error"]["kind"] == "input", (line, e)
        assert e["error"]["attempts"] == 0 and "resume" not in e["error"], (line, e)
    for line in (1, 2, 3, 4):
        assert got[line][0]["input"] is None and "raw" in got[line][0], got[line]
    assert_list(r, n + 1, "2", expected)
    assert {e["path"] for e in sb.log()} == {"/2/users/by/username/follows_one",
                                             "/2/users/%s/following" % uid("follows_one")}


@pytest.mark.parametrize("args", [["--bogus"], ["--api", "3"], ["--page-size", "0"], ["--page-size", "1001"],
                                  ["--api", "2", "--page-size", "1001"], ["--page-size", "5001", "--api", "1.1"],
                                  ["--page-size", "x"], ["--fields", "created_at", "--api", "1.1"],
                                  ["--api", "1.1", "--fields", "created_at"], ["--me", "jack"], ["-j", "0"],
                                  ["--max-wait", "-1"], ["--retries", "-1"], ["--timeout", "soon"]],
                         ids=lambda a: " ".join(a))
def test_usage_errors_exit_2_and_send_nothing(run, sb, args):
    r = run(args, jl("follows_one"))
    assert_usage_error(r, TOOL)
    assert sb.log() == []


def test_no_credentials_anywhere_is_a_configuration_error_before_reading(bin_path, scrubbed_env, sb):
    data = jl("follows_one")
    r, left = run_with_stdin_pipe([bin_path], scrubbed_env({"TW_API_BASE": sb.url}), data)
    assert r.returncode == 3, r
    assert r.stdout == b"" and r.stderr.startswith(b"tw-friends: "), r
    assert left == data, "stdin must not be read"
    assert sb.log() == []


def test_help_and_version(bin_path, make_env):
    p = subprocess.run([bin_path, "--help"], capture_output=True, env=make_env(), timeout=10)
    assert p.returncode == 0, p
    for option in (b"--me", b"--api", b"--page-size", b"--fields", b"--parallel", b"--max-wait"):
        assert option in p.stdout, option
    p = subprocess.run([bin_path, "--version"], capture_output=True, env=make_env(), timeout=10)
    assert p.returncode == 0 and re.fullmatch(rb"tw-friends \S+\n", p.stdout), p


# --------------------------------------------------------------------------------------
# 4. API errors
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("api", ["2", "1.1"])
def test_bad_credentials_are_auth_with_resume(run, sb, api):
    r = run(api_args(api), jl("follows_one"), credentials=x_credentials(TW_ACCESS_TOKEN_SECRET="wrong-token-secret"))
    assert r.returncode == 1, r
    [e] = r.envelopes
    err = e["error"]
    assert (err["kind"], err["status"], err["attempts"]) == ("auth", 401, 1), e
    assert err["resume"] == {"username": "follows_one"}, e


def test_unenrolled_app_is_permission(run, sb):
    unenrolled = {"TW_CONSUMER_KEY": "sandbox-unenrolled-consumer-key",
                  "TW_CONSUMER_SECRET": "sandbox-unenrolled-consumer-secret",
                  "TW_ACCESS_TOKEN": "1000000000000000001-sandboxunenrolledtoken",
                  "TW_ACCESS_TOKEN_SECRET": "sandbox-unenrolled-token-secret"}
    r = run([], jl({"user_id": uid("follows_one")}), credentials=unenrolled)
    [e] = r.envelopes
    err = e["error"]
    assert (err["kind"], err["status"], err.get("code"), err["attempts"]) == \
        ("permission", 403, "client-forbidden", 1), e
    assert err["resume"] == {"user_id": uid("follows_one")}, e
    assert r.returncode == 1


def test_protected_account_v2_is_permission(run, sb):
    """v2 answers 200 with only a not-authorized-for-resource error for the list."""
    r = run([], jl("protected_user", "follows_one"))
    assert r.returncode == 1, r
    first = [e for e in r.envelopes if e["line"] == 1]
    assert len(first) == 1 and first[0]["ok"] is False, r
    err = first[0]["error"]
    assert err["kind"] == "permission" and err["attempts"] == 2, first
    assert err["resume"] == {"username": "protected_user"}, first
    assert len(results(r, 2)) == 1


def test_protected_account_v11_is_auth(run, sb):
    r = run(["--api", "1.1"], jl("protected_user"))
    assert r.returncode == 1, r
    [e] = r.envelopes
    err = e["error"]
    assert (err["kind"], err["status"], err["attempts"]) == ("auth", 401, 1), e
    assert err["resume"] == {"username": "protected_user"}, e


def test_app_only_bearer_lists_users_but_not_me(run, sb, reference):
    expected = reference("follows_999")
    bearer = {"TW_BEARER_TOKEN": X_APP_BEARER_TOKEN}
    r = run([], jl("follows_999"), credentials=bearer)
    assert r.returncode == 0, r
    assert_list(r, 1, "2", expected)
    assert {e["auth"]["scheme"] for e in sb.log()} == {"app"}
    r = run(["--me"], credentials=bearer)
    assert r.returncode == 1, r
    [e] = r.envelopes
    err = e["error"]
    assert (err["kind"], err["status"], err["attempts"]) == ("permission", 403, 1), e
    assert err["resume"] == {}, "the record {} has no selector"


def test_usage_cap_is_not_waited_for(run, sb):
    sb.control(usage_cap={})
    r = run(["--max-wait", "60"], jl({"user_id": uid("follows_1001")}), timeout=20)
    assert r.elapsed < 5, r
    [e] = r.envelopes
    err = e["error"]
    assert (err["kind"], err["status"], err.get("code"), err["attempts"]) == \
        ("rate_limit", 429, "usage-capped", 1), e
    assert err["resume"] == {"user_id": uid("follows_1001")}, e
    assert len(sb.log()) == 1


# --------------------------------------------------------------------------------------
# 5. rate limits
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("api,name,page_size,limit,shown", [
    ("2", "follows_1001", 250, 3, "750 accounts (page 4)"),
    ("1.1", "follows_25000", 5000, 2, "10,000 accounts (page 3)"),
])
def test_short_window_mid_list_is_waited_for_without_losing_or_repeating_a_page(run, sb, reference,
                                                                                api, name, page_size, limit, shown):
    expected = reference(name, api)
    limit_pages(sb, api, limit, window=2)
    r = run(api_args(api) + ["--progress", "--page-size", str(page_size), name], timeout=40)
    assert r.returncode == 0, r
    assert_list(r, 1, api, expected)
    # While the list waits, the progress line counts the accounts written
    # and the page asked for, not the one record still in flight.
    drawn = r.stderr.decode("utf-8").replace("\x1b[K", "").split("\r")
    assert any(re.fullmatch(r"tw-friends: %s, 0 failed, waiting 0:0\d for the rate limit" % re.escape(shown), line)
               for line in drawn), drawn
    pages = page_requests(sb, api)
    n = pages_for(len(expected), api, page_size)
    assert_pages_once(pages, api, n)
    assert {e["status"] for e in pages} <= {200, 429}, pages
    assert r.elapsed < 30, r


def assert_stopped_with_resume(r, sb, name, api, written, expected):
    """A run of one record stopped by the rate limit: `written` accounts, then one
    rate_limit envelope with `reset` and a resume holding the next page."""
    assert r.returncode == 1, r
    assert [e["line"] for e in r.envelopes] == [1] * (written + 1), r
    assert all(e["ok"] for e in r.envelopes[:-1]), r
    assert_list(r, 1, api, expected[:written])
    err = r.envelopes[-1]["error"]
    assert err["kind"] == "rate_limit", err
    assert err["attempts"] == len(sb.log()), ("attempts: every request made for the record", err)
    reset = err.get("reset")
    assert reset is not None, "the window's reset is known from the headers"
    left = calendar.timegm(time.strptime(reset[:19], "%Y-%m-%dT%H:%M:%S")) - time.time()
    assert 0 < left <= 905, reset
    resume = err["resume"]
    assert set(resume) == {"username", TOKEN_PARAM[api]}, resume
    assert resume["username"] == name
    return resume


@pytest.mark.parametrize("api", ["2", "1.1"])
def test_max_wait_0_stops_with_resume_and_the_resume_yields_exactly_the_rest(run, sb, reference, api):
    name = "follows_25000"
    expected = reference(name, api)
    pages_allowed = 2 if api == "2" else 1
    limit_pages(sb, api, pages_allowed)
    r = run(api_args(api) + ["--max-wait", "0"], jl(name), timeout=20)
    assert r.elapsed < 5, ("a reset beyond --max-wait is not waited for", r)
    written = pages_allowed * PAGE_SIZE[api]
    resume = assert_stopped_with_resume(r, sb, name, api, written, expected)
    # A fresh window; the resume fed back as a record, once alone and once with `max`,
    # which counts from the resume's own starting point.
    limit_pages(sb, api, 300)
    sb.control(clear_log=True)
    r = run(api_args(api), jl(resume, dict(resume, max=500)), timeout=60)
    assert r.returncode == 0, r
    assert all(e["input"] == resume for e in r.envelopes if e["line"] == 1)
    assert_list(r, 1, api, expected[written:])
    assert_list(r, 2, api, expected[written:written + 500])
    assert page_position(page_requests(sb, api)[0], api) == resume[TOKEN_PARAM[api]]


def write_profile_file(home, name):
    write_private(credentials_path(home), {"profiles": {name: {"twitter": twitter_section(x_credentials())}}})


@pytest.mark.parametrize("record,user", [
    ({"username": "@follows_1001"}, "follows_1001"),
    ({"user_id": uid("follows_1001")}, "follows_1001"),
    ({}, DEMO),
    ({"username": "follows_1001", "profile": "kestrel"}, "follows_1001"),
], ids=["username-with-at", "user_id", "authenticated-user", "profile"])
def test_resume_keeps_the_records_own_selector_and_profile(run, sb, reference, home, record, user):
    expected = reference(user)
    write_profile_file(home, "kestrel")
    limit_pages(sb, "2", 1)
    r = run(["--max-wait", "0"], jl(record), timeout=20)
    assert r.returncode == 1, r
    assert_list(r, 1, "2", expected[:1000])
    err = r.envelopes[-1]["error"]
    assert err["kind"] == "rate_limit", r
    token = err["resume"].pop("pagination_token")
    assert err["resume"] == record, ("the record's own selector, as given, and its profile", err)
    limit_pages(sb, "2", 300)
    r = run([], jl(dict(record, pagination_token=token)), timeout=30)
    assert r.returncode == 0, r
    assert_list(r, 1, "2", expected[1000:])


@pytest.mark.parametrize("api", ["2", "1.1"])
def test_a_limit_met_before_the_first_page_resumes_from_the_start(run, sb, reference, api):
    limit_pages(sb, api, 1)
    assert run(api_args(api), jl("follows_one")).returncode == 0     # spends the window
    sb.control(clear_log=True)
    r = run(api_args(api) + ["--max-wait", "0"], jl("follows_1001"), timeout=20)
    assert r.returncode == 1, r
    [e] = r.envelopes
    err = e["error"]
    assert err["kind"] == "rate_limit" and err["attempts"] == len(sb.log()), e
    assert err["resume"] == {"username": "follows_1001"}, "no page position before the first page"
    assert r.elapsed < 5, r


# --------------------------------------------------------------------------------------
# 6. faults mid-list
# --------------------------------------------------------------------------------------

# (user, page size): five pages each.
FIVE_PAGES = {"2": ("follows_1001", 250), "1.1": ("follows_25000", 5000)}


def page_match(api, user):
    if api == "2":
        return {"method": "GET", "path": "/2/users/%s/following" % uid(user)}
    return {"method": "GET", "endpoint": FRIENDS_IDS}


@pytest.mark.parametrize("reset", ["reset_before", "reset_after"])
@pytest.mark.parametrize("api", ["2", "1.1"])
def test_503_and_connection_reset_mid_list_are_retried_per_page(run, sb, reference, api, reset):
    """Page 2 answers 503 twice, page 4 loses its connection twice; with --retries 2
    each page has its own three attempts, so the list completes, each page once."""
    user, size = FIVE_PAGES[api]
    expected = reference(user, api)
    match = page_match(api, user)
    sb.fault("status", match=match, status=503, skip=1, count=2)
    # Requests this second fault lets through first: page 1 (the first fault skipped
    # it), page 2's third attempt and page 3 (the first fault spent).
    sb.fault(reset, match=match, skip=3, count=2)
    r = run(api_args(api) + ["--retries", "2", "--page-size", str(size), user], timeout=60)
    assert r.returncode == 0, r
    assert_list(r, 1, api, expected)
    pages = page_requests(sb, api)
    assert_pages_once(pages, api, 5)
    assert len(pages) == 9, [(page_position(e, api), e["status"], e["outcome"]) for e in pages]
    positions = [page_position(e, api) for e in pages]
    assert positions[1] == positions[2] == positions[3], "page 2 asked for again, the same page"
    assert positions[5] == positions[6] == positions[7], "page 4 asked for again, the same page"


@pytest.mark.parametrize("api", ["2", "1.1"])
def test_retries_exhausted_mid_list_end_it_with_resume(run, sb, reference, api):
    user, size = FIVE_PAGES[api]
    expected = reference(user, api)
    sb.fault("status", match=page_match(api, user), status=503, skip=1, count=None)
    r = run(api_args(api) + ["--retries", "1", "--page-size", str(size), user], timeout=60)
    assert r.returncode == 1, r
    assert all(e["ok"] for e in r.envelopes[:-1]), r
    assert_list(r, 1, api, expected[:size])
    err = r.envelopes[-1]["error"]
    assert (err["kind"], err["status"]) == ("http", 503), err
    assert err["attempts"] == len(sb.log()) == (1 if api == "2" else 0) + 1 + 2, err
    resume = err["resume"]
    assert set(resume) == {"username", TOKEN_PARAM[api]} and resume["username"] == user, resume
    sb.control(clear_faults=True)
    r = run(api_args(api) + ["--page-size", str(size)], jl(resume), timeout=60)
    assert r.returncode == 0, r
    assert_list(r, 1, api, expected[size:])


# --------------------------------------------------------------------------------------
# 7. short and empty pages
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("api", ["2", "1.1"])
def test_short_and_empty_pages_with_a_next_token_continue(run, sb, reference, api):
    name = "follows_25000"
    expected = reference(name, api)
    sb.control(x_page_shape="ragged")
    try:
        r = run(api_args(api) + [name], timeout=60)
    finally:
        sb.control(x_page_shape="full")
    assert r.returncode == 0, r
    assert_list(r, 1, api, expected)
    pages = page_requests(sb, api)
    assert_pages_once(pages, api)
    if api == "2":
        assert len(pages) > pages_for(len(expected), api), "ragged pages: more pages than full ones"


# --------------------------------------------------------------------------------------
# 8. several users, memory, closed stdout, signals
# --------------------------------------------------------------------------------------

def test_two_users_in_parallel_come_out_ordered_and_contiguous(run, sb, reference):
    first, second = reference("follows_1001"), reference("follows_999")
    delayed = sb.fault("delay", match={"method": "GET", "path": "/2/users/%s/following" % uid("follows_1001")},
                       ms=1500)
    r = run(["--parallel", "2"], jl("follows_1001", "follows_999"), timeout=30)
    assert r.returncode == 0, r
    assert [e["line"] for e in r.envelopes] == [1] * len(first) + [2] * len(second), "contiguous, in input order"
    assert_list(r, 1, "2", first)
    assert_list(r, 2, "2", second)
    # Both lists were in flight together: the second user's page was asked for
    # while the first user's page was held.
    [held] = [e for e in page_requests(sb, "2", "follows_1001") if e["fault"] and e["fault"]["id"] == delayed]
    other = page_requests(sb, "2", "follows_999")[0]
    assert other["time"] < held["time"] + 1.0, (other["time"], held["time"])


def test_unordered_lets_a_fast_list_overtake_and_keeps_each_users_order(run, sb, reference):
    first, second = reference("follows_1001"), reference("follows_999")
    sb.fault("delay", match={"method": "GET", "path": "/2/users/%s/following" % uid("follows_1001")}, ms=1500)
    r = run(["--parallel", "2", "--unordered"], jl("follows_1001", "follows_999"), timeout=30)
    assert r.returncode == 0, r
    lines = [e["line"] for e in r.envelopes]
    assert lines[0] == 2, "the list that was not held comes out first"
    assert_list(r, 1, "2", first)
    assert_list(r, 2, "2", second)


def test_memory_stays_flat_while_a_later_list_waits_behind_a_slow_one(bin_path, make_env, sb, reference):
    """jack's list (100,000 accounts here) waits in ordered mode behind follows_1001,
    whose second page the sandbox holds for 4 s: jack's walk stops a few pages ahead
    instead of buffering its list, and the peak RSS (VmHWM, read while the process is
    alive) stays under 32 MiB."""
    if not os.path.exists("/proc/self/status"):
        pytest.skip("needs /proc for VmHWM")
    first = reference("follows_1001")
    jack_max = 100_000
    fault = sb.fault("delay", match={"method": "GET", "path": "/2/users/%s/following" % uid("follows_1001")},
                     skip=1, ms=4000)
    p = start(bin_path, make_env(), ["-q"])
    lines, ids = [], []
    done = threading.Event()

    def read():
        for raw in p.stdout:
            e = json.loads(raw)
            lines.append(e["line"])
            ids.append(e["result"]["id"] if e["ok"] else None)
            if len(lines) == len(first) + jack_max:
                break
        done.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        p.stdin.write(jl("follows_1001", {"username": "jack", "max": jack_max}))
        p.stdin.flush()                       # stdin stays open: the process stays alive to be measured
        assert wait_for_fault_hit(sb, fault, timeout=10), "follows_1001's second page was never asked for"
        time.sleep(2.5)
        held_pages = len(page_requests(sb, "2", "jack"))
        peak = vm_hwm_kib(p.pid)
        assert done.wait(timeout=120), "not every account came out (%d lines)" % len(lines)
        peak = max(peak, vm_hwm_kib(p.pid))
        p.stdin.close()
        rc = p.wait(timeout=10)
    finally:
        err = reap(p)
    assert_no_secrets(err)
    assert rc == 0, err
    assert 1 <= held_pages <= 4, ("jack's walk should stop a few pages ahead while it waits", held_pages)
    assert peak / 1024 <= 32, "peak RSS %.1f MiB" % (peak / 1024)
    assert lines == [1] * len(first) + [2] * jack_max
    assert ids[:len(first)] == [u["id"] for u in first]
    assert len(set(ids[len(first):])) == jack_max and None not in ids


def test_memory_stays_flat_when_a_large_record_waits_behind_a_slow_one(bin_path, make_env, sb, reference, home):
    """Issue 17 §4: every envelope echoes its record. jack's list (3,000 accounts here),
    asked for by a record of 256 KiB (a profile with a name that long), waits in
    ordered mode behind follows_1001, whose second page the sandbox holds for 3 s:
    the lines jack's walk holds meanwhile must not each hold a copy of the record
    (2,000 of them were 500 MiB). Peak RSS (VmHWM, read while the process is alive)
    stays under 32 MiB, and every line still comes out whole and in order."""
    if not os.path.exists("/proc/self/status"):
        pytest.skip("needs /proc for VmHWM")
    first = reference("follows_1001")
    jack = reference("jack", limit=3000)
    profile = "p" * (256 << 10)
    write_private(credentials_path(home), {"profiles": {profile: {"twitter": twitter_section(x_credentials())}}})
    records = [{"username": "follows_1001", "profile": profile}, {"username": "jack", "profile": profile, "max": 3000}]
    fault = sb.fault("delay", match={"method": "GET", "path": "/2/users/%s/following" % uid("follows_1001")},
                     skip=1, ms=3000)
    p = start(bin_path, make_env(), ["-q"])
    envelope_start = re.compile(rb'\{"ok":(true|false),"line":([0-9]+),"input":')
    lines, ids, echoes = [], [], []
    done = threading.Event()

    def read():
        # Lines of a quarter of a megabyte, read in large chunks.
        rest = b""
        while len(lines) < len(first) + len(jack):
            chunk = p.stdout.read1(1 << 20)
            if not chunk:
                break
            rest += chunk
            *complete, rest = rest.split(b"\n")
            for line in complete:
                m = envelope_start.match(line)
                lines.append(int(m.group(2)) if m and m.group(1) == b"true" else None)
                ids.append(json.loads(line[line.rindex(b',"result":') + 10:-1])["id"] if m else None)
                if len(echoes) < 2 and lines[-1] == len(echoes) + 1:
                    echoes.append(json.loads(line)["input"])
        done.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        p.stdin.write(jl(*records))
        p.stdin.flush()                       # stdin stays open: the process stays alive to be measured
        assert wait_for_fault_hit(sb, fault, timeout=10), "follows_1001's second page was never asked for"
        time.sleep(2)
        held_pages = len(page_requests(sb, "2", "jack"))
        assert done.wait(timeout=120), "not every account came out (%d lines)" % len(lines)
        peak = vm_hwm_kib(p.pid)
        p.stdin.close()
        rc = p.wait(timeout=10)
    finally:
        err = reap(p)
    assert_no_secrets(err)
    assert rc == 0, err
    assert held_pages >= 2, ("jack's walk should go on a page or two while it waits", held_pages)
    assert peak / 1024 <= 32, "peak RSS %.1f MiB" % (peak / 1024)
    assert lines == [1] * len(first) + [2] * len(jack)
    assert ids == [u["id"] for u in first] + [u["id"] for u in jack]
    assert echoes == records, "the lines held behind the head carry their record whole"


@pytest.mark.parametrize("api", ["2", "1.1"])
def test_closed_stdout_ends_the_run_quietly_with_at_most_one_more_page(bin_path, make_env, sb, api):
    first, rc, err, elapsed = through_head([bin_path] + api_args(api) + ["jack"], make_env(), timeout=10)
    e = parse_envelope(first.splitlines()[0])
    assert e["ok"] and e["input"] == {"username": "jack"}, e
    assert rc in (141, -signal.SIGPIPE), (rc, err)
    assert err == b"", err
    assert elapsed < 5, elapsed
    settled(sb.log, len, quiet=1.5)      # a closed socket's data can land a second later
    pages = page_requests(sb, api)
    assert 1 <= len(pages) <= 2, "at most one more page after the first: %d asked for" % len(pages)


@pytest.mark.parametrize("signum,status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"])
def test_interrupt_mid_list_ends_it_cancelled_with_resume(bin_path, make_env, sb, reference, signum, status):
    sb.control(latency_ms=100)
    lines = []
    with Running(bin_path, make_env(), ["-q"]) as tool:
        tool.write(jl("jack"))              # stdin stays open
        while len(lines) < 1000:
            line = tool.out.get(timeout=10)
            assert line is not None, "the first page never came out"
            lines.append(line)
        rest, rc = tool.interrupt(signum)
        lines += rest
    err = tool.stderr
    assert_no_secrets(b"".join(lines), err)
    assert rc == status, (rc, err)
    envs = [parse_envelope(l) for l in lines]
    assert {e["line"] for e in envs} == {1}
    assert all(e["ok"] for e in envs[:-1])
    last = envs[-1]
    assert last["ok"] is False, "an interrupted list ends with an error envelope"
    check_friends_error(last)
    assert last["error"]["kind"] == "cancelled", last
    # The request in flight at the signal counts in attempts; the data of a socket
    # closed by the exit can still reach the sandbox a second later: let it land
    # before the log is cleared, not in the next test.
    wait_until(lambda: len(sb.log()) >= last["error"]["attempts"], timeout=5)
    resume = last["error"]["resume"]
    assert set(resume) == {"username", "pagination_token"} and resume["username"] == "jack", resume
    written = len(envs) - 1
    expected = reference("jack", limit=written + 10)
    assert [e["result"] for e in envs[:-1]] == expected[:written]
    sb.control(latency_ms=0)
    r = subprocess.run([bin_path], input=jl(dict(resume, max=10)), capture_output=True, env=make_env(), timeout=30)
    assert r.returncode == 0, r
    assert [parse_envelope(l)["result"] for l in r.stdout.splitlines()] == expected[written:written + 10], \
        "the resume continues exactly after the last account written"


# --------------------------------------------------------------------------------------
# 9. --dry-run
# --------------------------------------------------------------------------------------

def assert_signed_oauth1(headers):
    auth = headers["authorization"]
    assert auth.startswith("OAuth "), auth
    assert 'oauth_consumer_key="%s"' % x_credentials()["TW_CONSUMER_KEY"] in auth, auth
    assert 'oauth_token="%s"' % x_credentials()["TW_ACCESS_TOKEN"] in auth, auth


def test_dry_run_shows_the_first_request_of_each_record_and_sends_nothing(run, sb):
    records = ["jack", {}, {"user_id": "12"}, {"user_id": "12", "pagination_token": "0123456789abcdef"},
               {"username": "@jack", "max": 3}]
    r = run(["--dry-run"], jl(*records))
    assert r.returncode == 0, r
    assert [e["line"] for e in r.envelopes] == [1, 2, 3, 4, 5], "one envelope per record"
    got = [request_of(e) for e in r.envelopes]
    for method, url, query, headers, body in got:
        assert method == "GET" and body in (None, ""), (method, body)
        assert "%s://%s" % (url.scheme, url.netloc) == sb.url, url
        assert_signed_oauth1(headers)
    assert got[0][1].path == "/2/users/by/username/jack"
    assert got[1][1].path == "/2/users/me"
    assert got[2][1].path == "/2/users/12/following" and got[2][2] == {"max_results": ["1000"]}, got[2]
    assert got[3][1].path == "/2/users/12/following"
    assert got[3][2] == {"max_results": ["1000"], "pagination_token": ["0123456789abcdef"]}, got[3]
    assert got[4][1].path == "/2/users/by/username/jack", "the @ is not part of the name"
    assert sb.log() == []


def test_dry_run_page_size_and_fields(run, sb):
    r = run(["--dry-run", "--page-size", "200", "--fields", "created_at,public_metrics"], jl({"user_id": "12"}))
    assert r.returncode == 0, r
    _, url, query, _, _ = request_of(r.envelopes[0])
    assert url.path == "/2/users/12/following"
    assert query["max_results"] == ["200"], query
    assert set(",".join(query["user.fields"]).split(",")) == {"created_at", "public_metrics"}, query
    assert sb.log() == []


def test_dry_run_v11_friends_ids(run, sb):
    records = ["jack", {"user_id": "12"}, {}, {"username": "jack", "cursor": "1234567890"}]
    r = run(["--dry-run", "--api", "1.1", "--page-size", "5000"], jl(*records))
    assert r.returncode == 0, r
    got = [request_of(e) for e in r.envelopes]
    for method, url, query, headers, body in got:
        assert method == "GET" and url.path == "/1.1/friends/ids.json", url
        assert_signed_oauth1(headers)
    common = {"count": ["5000"], "stringify_ids": ["true"]}
    assert got[0][2] == dict(common, cursor=["-1"], screen_name=["jack"]), got[0][2]
    assert got[1][2] == dict(common, cursor=["-1"], user_id=["12"]), got[1][2]
    assert got[2][2] == dict(common, cursor=["-1"]), "no user parameter for the authenticated user"
    assert got[3][2] == dict(common, cursor=["1234567890"], screen_name=["jack"]), got[3][2]
    assert sb.log() == []


def test_dry_run_me_and_a_bearer_token_redacted(run, sb):
    r = run(["--dry-run", "--me"], credentials={"TW_BEARER_TOKEN": X_APP_BEARER_TOKEN})
    assert r.returncode == 0, r
    [e] = r.envelopes
    assert e["input"] == {}
    _, url, _, headers, _ = request_of(e)
    assert url.path == "/2/users/me"
    assert X_APP_BEARER_TOKEN not in headers["authorization"] and "redacted" in headers["authorization"].lower()
    assert sb.log() == []


# --------------------------------------------------------------------------------------
# 10. what a server sends is checked before it is copied out or sent on (issue 17)
# --------------------------------------------------------------------------------------

def jq_reads(stdout):
    return subprocess.run(["jq", "-c", "."], input=stdout, capture_output=True).returncode == 0


@pytest.mark.parametrize("api", ["2", "1.1"])
@pytest.mark.parametrize("fault", ["malformed", "truncate"])
def test_a_page_that_cannot_be_read_is_asked_for_again(run, sb, reference, api, fault):
    """A 200 whose body is cut short or not JSON: a read changed nothing, so it goes
    again (within --retries) like a 5xx, and the list completes, each account once."""
    user, size = FIVE_PAGES[api]
    expected = reference(user, api)
    sb.fault(fault, match=page_match(api, user), skip=1, count=2)
    r = run(api_args(api) + ["--page-size", str(size), user], timeout=60)
    assert r.returncode == 0, r
    assert_list(r, 1, api, expected)


def test_a_page_that_is_never_readable_ends_the_list_with_resume(run, sb, reference):
    user, size = FIVE_PAGES["2"]
    expected = reference(user, "2")
    sb.fault("malformed", match=page_match("2", user), skip=1, count=None)
    r = run(["--retries", "1", "--page-size", str(size), user], timeout=60)
    assert r.returncode == 1, r
    assert_list(r, 1, "2", expected[:size])
    err = check_run(r).envelopes[-1]["error"]
    assert err["kind"] == "http" and "not JSON" in err["message"] and err["attempts"] == 1 + 1 + 2, err
    assert err["resume"]["pagination_token"], err


def test_a_lookup_that_cannot_be_read_is_asked_for_again(run, sb, reference):
    sb.fault("malformed", match={"endpoint": BY_USERNAME}, count=1)
    r = run([], jl("follows_999"), timeout=60)
    assert r.returncode == 0, r
    assert_list(r, 1, "2", reference("follows_999", "2"))


def fake_page(users, next_token=None):
    page = {"data": users, "meta": {"result_count": len(users)}}
    if next_token is not None:
        page["meta"]["next_token"] = next_token
    return page


USER_A = {"id": "500000000000000001", "name": "A", "username": "a"}


def test_a_page_token_given_twice_ends_the_list_instead_of_looping(run, sb):
    sb.fault("status", match=page_match("2", "follows_1001"), status=200, body=fake_page([USER_A], "loop"), count=None)
    r = run([], jl("follows_1001"), timeout=20)
    assert r.returncode == 1, r
    assert [e["result"] for e in r.envelopes if e["ok"]] == [USER_A, USER_A], "the first page, then the loop is seen"
    err = check_run(r).envelopes[-1]["error"]
    assert err["kind"] == "http" and "given before" in err["message"], err
    assert len(page_requests(sb, "2")) == 2


def test_a_cursor_given_twice_ends_a_v11_list(run, sb):
    body = {"ids": ["500000000000000001"], "next_cursor_str": "1234", "next_cursor": 1234}
    sb.fault("status", match=page_match("1.1", "follows_1001"), status=200, body=body, count=None)
    r = run(["--api", "1.1"], jl("follows_1001"), timeout=20)
    assert r.returncode == 1, r
    err = check_run(r).envelopes[-1]["error"]
    assert err["kind"] == "http" and "given before" in err["message"] and err["resume"]["cursor"] == "1234", err
    assert len(page_requests(sb, "1.1")) == 2


BAD_V2_PAGES = {
    "data an object": {"data": USER_A, "meta": {"result_count": 1}},
    "a user not an object": {"data": [USER_A, "x"], "meta": {"result_count": 2}},
    "a user without an id": {"data": [{"name": "no id"}], "meta": {"result_count": 1}},
    "an id with a slash": {"data": [dict(USER_A, id="../1.1/statuses/update.json")], "meta": {"result_count": 1}},
    # Written compactly, as X writes pages, these start as the users tw-friends reads at once do.
    "an id of twenty digits": {"data": [dict(USER_A, id="1" * 20)], "meta": {"result_count": 1}},
    "an empty id": {"data": [dict(USER_A, id="")], "meta": {"result_count": 1}},
    "an id of digits then a letter": {"data": [dict(USER_A, id="12345678901234a")], "meta": {"result_count": 1}},
    "an id that is a number": {"data": [dict(USER_A, id=12)], "meta": {"result_count": 1}},
    "the page not an object": [USER_A],
    "a next_token with reserved characters": fake_page([USER_A], "x&user.fields=email"),
    "a next_token not a string": fake_page([USER_A], 5),
}


@pytest.mark.parametrize("shape", sorted(BAD_V2_PAGES))
def test_a_v2_page_of_another_shape_is_the_pages_error(run, sb, shape):
    sb.fault("status", match=page_match("2", "follows_1001"), status=200, body=BAD_V2_PAGES[shape])
    r = run([], jl("follows_1001"), timeout=20)
    assert r.returncode == 1, r
    [e] = check_run(r).envelopes
    assert e["error"]["kind"] == "http" and "page could not be read" in e["error"]["message"], e
    assert e["error"]["resume"] == {"username": "follows_1001"}, e
    assert len(page_requests(sb, "2")) == 1, "nothing follows a page that cannot be read"


BAD_V11_PAGES = {
    "an id that is an object": {"ids": [{"a": 'b"c'}], "next_cursor_str": "0"},
    "an id with letters": {"ids": ["12a"], "next_cursor_str": "0"},
    "a negative id": {"ids": [-12], "next_cursor_str": "0"},
    "ids an object": {"ids": {"12": 1}, "next_cursor_str": "0"},
    "a cursor that adds a parameter": {"ids": ["12"], "next_cursor_str": "1&screen_name=jack"},
    # Written as X writes a list, `"12","34"`: digits, quotes and commas only.
    "an id with a comma": {"ids": ["12", "34,56", "78"], "next_cursor_str": "0"},
    "an empty id": {"ids": ["12", ""], "next_cursor_str": "0"},
    "an id of twenty digits": {"ids": ["12", "1" * 20], "next_cursor_str": "0"},
    "an id of twenty digits, unquoted": {"ids": [12, 10 ** 19], "next_cursor_str": "0"},
}


@pytest.mark.parametrize("shape", sorted(BAD_V11_PAGES))
def test_a_v11_page_of_another_shape_is_the_pages_error(run, sb, shape):
    sb.fault("status", match=page_match("1.1", "follows_1001"), status=200, body=BAD_V11_PAGES[shape])
    r = run(["--api", "1.1"], jl("follows_1001"), timeout=20)
    assert r.returncode == 1, r
    assert jq_reads(r.stdout), r
    [e] = check_run(r).envelopes
    assert e["error"]["kind"] == "http" and "page could not be read" in e["error"]["message"], e
    assert len(page_requests(sb, "1.1")) == 1


def test_v11_ids_are_read_as_strings_or_integers_with_or_without_spaces(run, sb):
    ids = ["500000000000000001", 500000000000000002, "3", 4]
    for text in (json.dumps({"ids": ids, "next_cursor_str": "0"}, separators=(",", ":")),
                 json.dumps({"ids": ids, "next_cursor_str": "0"})):
        sb.fault("status", match=page_match("1.1", "follows_1001"), status=200, body=text, count=1)
        r = run(["--api", "1.1"], jl("follows_1001"), timeout=20)
        assert r.returncode == 0, r
        assert [e["result"]["id"] for e in check_run(r).envelopes] == [str(i) for i in ids], r


def test_an_id_written_with_escapes_is_read_as_its_digits(run, sb):
    text = json.dumps(fake_page([USER_A]), separators=(",", ":")).replace('"id":"500000000000000001"',
                                                                         '"id":"50000000000000000\\u0031"')
    assert "\\u0031" in text
    sb.fault("status", match=page_match("2", "follows_1001"), status=200, body=text)
    r = run([], jl("follows_1001"), timeout=20)
    assert r.returncode == 0, r
    [e] = check_run(r).envelopes
    assert e["result"]["id"] == "500000000000000001", e


def test_a_looked_up_id_that_is_not_digits_is_never_sent(run, sb):
    body = {"data": {"id": "../../1.1/statuses/update.json?status=pwned#", "name": "x", "username": "follows_1001"}}
    sb.fault("status", match={"endpoint": BY_USERNAME}, status=200, body=body)
    r = run([], jl("follows_1001"), timeout=20)
    assert r.returncode == 1, r
    [e] = check_run(r).envelopes
    assert e["error"]["kind"] == "http" and "user id" in e["error"]["message"], e
    assert [x["endpoint"] for x in sb.log()] == [BY_USERNAME], "nothing is sent with that id"


def test_a_user_with_a_lone_surrogate_never_reaches_the_output(run, sb):
    text = json.dumps(fake_page([USER_A]))
    body = text.replace('"name": "A"', '"name": "\\ud800"')
    sb.fault("status", match=page_match("2", "follows_1001"), status=200, body=body, count=None)
    r = run(["--retries", "0"], jl("follows_1001"), timeout=20)
    assert r.returncode == 1, r
    assert jq_reads(r.stdout) and b"ud800" not in r.stdout, r
    [e] = check_run(r).envelopes
    assert e["error"]["kind"] == "http", e


@pytest.mark.parametrize("record,key,nearest", [
    ({"usename": "jack"}, "usename", "username"),
    ({"username": "jack", "mx": 5}, "mx", None),
    ({"user_id": "12", "pagination": "x"}, "pagination", None),
    ({"username": "jack", "cusor": "5"}, "cusor", "cursor"),
])
def test_an_unknown_key_is_an_input_error_naming_the_nearest(run, sb, record, key, nearest):
    r = run([], jl(record))
    assert r.returncode == 1, r
    [e] = r.envelopes
    assert e["error"]["kind"] == "input" and '"%s"' % key in e["error"]["message"], e
    if nearest:
        assert 'did you mean "%s"' % nearest in e["error"]["message"], e
    else:
        assert "did you mean" not in e["error"]["message"], e
    assert sb.log() == []
