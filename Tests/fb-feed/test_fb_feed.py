"""End-to-end tests of `fb-feed` (spec: issue 9 and the interface notes of issues 9/10;
contract: docs/contract.md §1-§6; Graph API: docs/reference/graph-api.md §2, §3, §6-§9;
sandbox: sandbox/README.md §2, §4-§6).

Every test runs the built binary (`$SOCIALPIPE_BIN/fb-feed`) as a subprocess in a
scrubbed environment (temporary HOME and XDG_CONFIG_HOME, no other TW_*/FB_*/
SOCIALPIPE_* variables, no proxies) with a Facebook token of the sandbox's demo
world and FB_API_BASE pointing at the local API sandbox (sandbox/), started once
for this module and reset before every test. Every run also checks that no
token or app secret ever appears on stdout or stderr and that every stdout line
is a well-formed envelope (contract §2).

What was sent is read back from the sandbox: its request log (`sb.log()`, with
every token and `appsecret_proof` masked, and per-item details of batches) and
the posts it created (`sb.posts()`, which also lists posts whose answer was lost).

Sections:
  1. success: Page token to a Page id and to `me`, shorthand, -R, arguments, link,
     read-after-write fields, --graph-version, --verbose, credentials file
  2. refused before sending: input (page, types, params), validation (link, empty,
     scheduling window, legacy fields)
  3. API errors: user token on a Page, expired/revoked tokens, missing permission,
     duplicate, 368, not_found, 2635; the Graph error envelope
  4. throttling: regain time beyond --max-wait, within it, none (backoff), the
     sandbox's own budgets, spacing above 90 % usage
  5. appsecret_proof: present and fresh with a secret, absent without, required by an app
  6. no token in any URL, on stdout or on stderr
  7. --batch: 50/50/20, per-slot errors, null slots, lost answers, prompt batches
     from slow input, --dry-run
  8. fault matrix on POST /{page}/feed (a post is never re-sent)
  9. usage and configuration errors, --help, --version
"""
import datetime
import json
import re
import signal
import subprocess
import time
import urllib.parse

import pytest

from toolenv import (FB_APP_ID, FB_APP_SECRET as APP_SECRET, FB_BLOCKED_PAGE as BLOCKED_PAGE,
                     FB_BLOCKED_PAGE_TOKEN as BLOCKED_PAGE_TOKEN, FB_EXPIRED_USER_TOKEN as EXPIRED_USER_TOKEN,
                     FB_DATA_EXPIRED_PAGE_TOKEN as DATA_EXPIRED_PAGE_TOKEN,
                     FB_PAGE as PAGE, FB_PAGE_TOKEN as PAGE_TOKEN, FB_READONLY_PAGE_TOKEN as READONLY_PAGE_TOKEN,
                     FB_SECURE_APP_SECRET as SECURE_APP_SECRET, FB_SECURE_PAGE_TOKEN as SECURE_PAGE_TOKEN,
                     FB_SUBCODE_MEANINGS as SUBCODE_MEANINGS, FB_USER_TOKEN as USER_TOKEN)
from toolenv import (COST_OPTIONS, SANDBOX_SECRETS, Running, assert_fresh_accepted_proofs, assert_no_cost_option,
                     assert_no_cost_shown, assert_no_secrets,
                     assert_no_token_in_urls, assert_usage_error, batch_items, batch_requests, check_api_error_extras,
                     check_fault_row,
                     check_graph_error, check_throttled_without_waiting, closed_port, credentials_path, jl,
                     parse_envelope, settled, throttle_fault, wait_until, write_private)

TOOL = "fb-feed"
FB_TOKEN = PAGE_TOKEN               # the token of `run` and `fb_env` (conftest) unless a test names another
# Made-up secrets some records and runs carry: never on stdout or stderr either (contract §4).
EXTRA_SECRETS = ("zz-param-secret", "wrong-app-secret")
FB_SECRETS = SANDBOX_SECRETS + EXTRA_SECRETS

MISSING_PAGE = "999999999999999"
VERSION = "v27.0"
FEED = "POST /{id}/feed"            # the sandbox log's endpoint key of a top-level feed post
BATCH_PATH = "/%s/" % VERSION
ME_FEED_PATH = "/%s/me/feed" % VERSION
PAGE_FEED_PATH = "/%s/%s/feed" % (VERSION, PAGE)
POST_ID = re.compile(r"%s_[0-9]+" % PAGE)
LEGACY_FIELDS = ["picture", "name", "caption", "description", "app_id"]
IGNORED_BY_SANDBOX = ["picture", "name", "caption", "description"]   # app_id is not a post field at all
BUC = "X-Business-Use-Case-Usage"   # the usage header Graph sends for a Page token


# --------------------------------------------------------------------------------------
# helpers (the Graph ones every Facebook tool needs are in toolenv.py, the fixtures
# `run` (= fb_run) and `fb_env` in conftest.py)
# --------------------------------------------------------------------------------------

@pytest.fixture
def run(fb_run):
    """run(args, stdin, token=PAGE_TOKEN, secret=None, app_id=None, api_base=True, extra=None, timeout=30)
    -> toolenv.Run of fb-feed, after checking that no token or secret reached stdout or stderr."""
    return fb_run


def posts_of(sb):
    """sb.posts("facebook"), after checking that no message was ever posted twice."""
    p = sb.posts("facebook")
    assert p["duplicates"] == [], ("a message was posted twice", p["duplicates"])
    return p


def feed_requests(sb, text=None):
    """Log entries of top-level POST /{page}/feed requests (optionally only those whose
    form body carries exactly this message)."""
    entries = [e for e in sb.log(service="facebook") if e["endpoint"] == FEED]
    if text is None:
        return entries
    return [e for e in entries if isinstance(e["body"], dict) and e["body"].get("message") == [text]]


def item_form(item):
    """A batch item's form body as {name: value}."""
    return dict(urllib.parse.parse_qsl(item["body"], keep_blank_values=True))


def batch_messages(entry):
    return [item_form(i).get("message") for i in batch_items(entry)]


def feed_match(needle):
    """A sandbox fault `match` for the top-level feed post whose form body holds
    `message=NEEDLE` (needles are plain [a-z0-9-] so the form encoding keeps them)."""
    return {"method": "POST", "endpoint": FEED, "body_contains": "message=" + needle}


def item_match(needle):
    """The same for a batch item."""
    return {"batch_item": True, "endpoint": FEED, "body_contains": "message=" + needle}


def feed_throttle(sb, needle, code=32, regain=None, header=BUC, count=1):
    """toolenv.throttle_fault on the post of `needle`: code 32 (Page) by default, the
    regain time (minutes) in the Page's X-Business-Use-Case-Usage unless told otherwise."""
    return throttle_fault(sb, feed_match(needle), code, regain=regain, header=header, count=count)


def settled_posts(sb):
    """posts_of(sb) once no post has landed for a moment (toolenv.settled)."""
    return settled(lambda: posts_of(sb), lambda p: p["total"])


# --------------------------------------------------------------------------------------
# 1. success
# --------------------------------------------------------------------------------------

def test_page_token_posts_to_the_page_and_answers_the_post_id(run, sb):
    r = run([], jl({"message": "hello page", "page": PAGE}))
    assert r.returncode == 0, r
    [e] = r.envelopes
    assert e["ok"] is True and e["line"] == 1, r
    assert e["input"] == {"message": "hello page", "page": PAGE}, e
    assert list(e["result"]) == ["id"], e
    assert POST_ID.fullmatch(e["result"]["id"]), e
    [post] = posts_of(sb)["posts"]
    assert post["id"] == e["result"]["id"]
    assert (post["page_id"], post["message"], post["published"], post["credential"]) == (
        PAGE, "hello page", True, "fb-page"), post
    assert post["batch_item"] is False and post["delivered"] is True, post
    [entry] = feed_requests(sb)
    assert entry["path"] == PAGE_FEED_PATH, entry
    assert entry["headers"]["content-type"].startswith("application/x-www-form-urlencoded"), entry
    assert entry["body"] == {"message": ["hello page"]}, entry
    assert entry["auth"]["outcome"] == "ok" and entry["auth"]["credential"] == "fb-page", entry
    assert entry["headers"]["authorization"] == "Bearer [masked]", entry
    assert entry["query"] == {}, "no secret -> no query at all: %r" % entry["query"]
    assert batch_requests(sb) == []
    assert r.stderr == b"", r


def test_shorthand_string_posts_to_me_and_page_ids_as_string_or_integer(run, sb):
    r = run([], b'"hello me"\n\n' + jl({"message": "integer page", "page": int(PAGE)},
                                       {"message": "explicit me", "page": "me"}))
    assert r.returncode == 0, r
    assert [e["line"] for e in r.envelopes] == [1, 3, 4], r
    got = r.by_line()
    assert got[1]["input"] == {"message": "hello me"}, got[1]
    for e in got.values():
        assert e["ok"] is True and POST_ID.fullmatch(e["result"]["id"]), e
    paths = [(e["body"]["message"][0], e["path"]) for e in feed_requests(sb)]
    assert paths == [("hello me", ME_FEED_PATH), ("integer page", PAGE_FEED_PATH),
                     ("explicit me", ME_FEED_PATH)], paths
    posts = {p["message"]: p for p in posts_of(sb)["posts"]}
    assert set(posts) == {"hello me", "integer page", "explicit me"}
    assert all(p["page_id"] == PAGE for p in posts.values())
    assert posts["hello me"]["id"] == got[1]["result"]["id"]


def test_raw_input_lines_are_messages(run, sb):
    r = run(["-R"], b'{"message":"not parsed"}\nplain words "quoted"\n')
    assert r.returncode == 0, r
    assert [e["input"] for e in r.envelopes] == [{"message": '{"message":"not parsed"}'},
                                                 {"message": 'plain words "quoted"'}], r
    assert posts_of(sb)["counts"] == {'{"message":"not parsed"}': 1, 'plain words "quoted"': 1}


def test_positional_arguments_are_messages(run, sb):
    r = run(["first argument", "second argument"], b'"stdin is not read"\n')
    assert r.returncode == 0, r
    assert [(e["line"], e["input"], e["ok"]) for e in r.envelopes] == [
        (1, {"message": "first argument"}, True), (2, {"message": "second argument"}, True)], r
    assert posts_of(sb)["counts"] == {"first argument": 1, "second argument": 1}


def test_link_posts_with_and_without_message(run, sb):
    r = run([], jl({"link": "https://example.com/only-link"},
                   {"message": "with a link", "link": "http://example.com/a?b=c&d=e"}))
    assert r.returncode == 0, r
    assert all(e["ok"] for e in r.envelopes), r
    posts = {p["link"]: p for p in posts_of(sb)["posts"]}
    assert posts["https://example.com/only-link"]["message"] is None
    assert posts["http://example.com/a?b=c&d=e"]["message"] == "with a link"
    first, second = feed_requests(sb)
    assert first["body"] == {"link": ["https://example.com/only-link"]}, first
    assert second["body"] == {"message": ["with a link"], "link": ["http://example.com/a?b=c&d=e"]}, second


def test_read_after_write_fields_join_the_result(run, sb):
    r = run([], jl({"message": "read after write", "params": {"fields": "id,permalink_url,created_time"}}))
    assert r.returncode == 0, r
    res = r.envelopes[0]["result"]
    [post] = posts_of(sb)["posts"]
    assert res["id"] == post["id"], res
    assert res["permalink_url"] == post["permalink_url"], res
    assert res["created_time"] == post["created_time"], res


def test_graph_version_option_and_environment(run, sb):
    r = run(["--graph-version", "v25.0"], jl("version option"))
    assert r.returncode == 0, r
    r = run([], jl("version env"), extra={"FB_GRAPH_VERSION": "v24.0"})
    assert r.returncode == 0, r
    assert [e["path"] for e in feed_requests(sb)] == ["/v25.0/me/feed", "/v24.0/me/feed"]


def test_api_base_option(run, sb):
    r = run(["--api-base", sb.url], jl("api base option"), api_base=False)
    assert r.returncode == 0, r
    assert posts_of(sb)["counts"] == {"api base option": 1}


def test_verbose_shows_requests_and_the_api_version_header(run, sb):
    r = run(["--verbose"], jl("verbose post"), secret=APP_SECRET)
    assert r.returncode == 0, r
    err = r.stderr.decode()
    base = re.escape(sb.url + ME_FEED_PATH)
    assert re.search(r"(^|\s)POST %s\S*\n" % base, err), err
    assert re.search(r"200 POST %s\S* \([0-9]+ ms\) facebook-api-version=v27\.0" % base, err), err


# What an `auth` error of a token from FB_ACCESS_TOKEN ends with (issue 20).
ENVIRONMENT_TOKEN_REMEDY = ("; the token comes from FB_ACCESS_TOKEN: set a new one, or unset it and get a new token with: "
                            "fb-auth device --profile default, or fb-auth exchange --profile default")


def test_credentials_file_profiles(run, sb, home):
    path = credentials_path(home)
    write_private(path, {
        "default": "main",
        "profiles": {"main": {"facebook": {"access_token": PAGE_TOKEN, "app_secret": APP_SECRET}},
                     "ro": {"facebook": {"access_token": READONLY_PAGE_TOKEN}},
                     "x-only": {"twitter": {"consumer_key": "k", "consumer_secret": "s",
                                            "access_token": "t", "access_token_secret": "u"}}}})
    r = run([], jl("from the default profile", {"message": "from ro", "profile": "ro"},
                   {"message": "from x-only", "profile": "x-only"},
                   {"message": "from nowhere", "profile": "missing"}, "after the missing one"), token=None)
    got = r.by_line()
    assert r.returncode == 1, r
    assert got[1]["ok"] is True and got[5]["ok"] is True, r
    check_graph_error(got[2], "permission", code="200", attempts=1)
    # Issue 20: each error says what fixes it, for the profile in use.
    assert got[2]["error"]["message"].endswith(
        "; ask for pages_read_engagement, pages_manage_posts with: fb-auth device --profile ro "
        "--scopes pages_show_list,pages_manage_posts,pages_read_engagement"), got[2]
    for line in (3, 4):
        assert got[line]["error"]["kind"] == "auth" and got[line]["error"]["attempts"] == 0, got[line]
    assert got[3]["error"]["message"] == 'profile "x-only" has no facebook credentials: fb-auth device --profile x-only', got[3]
    assert got[4]["error"]["message"] == 'no profile "missing" in %s (its profiles: main, ro, x-only)' % path, got[4]
    assert posts_of(sb)["counts"] == {"from the default profile": 1, "after the missing one": 1}
    by_msg = {e["body"]["message"][0]: e for e in feed_requests(sb)}
    assert set(by_msg) == {"from the default profile", "from ro", "after the missing one"}
    # The profile's app_secret signs its own token's requests; the ro profile has none.
    assert "appsecret_proof" in by_msg["from the default profile"]["query"], by_msg
    assert "appsecret_proof" not in by_msg["from ro"]["query"], by_msg["from ro"]
    assert by_msg["from ro"]["auth"]["credential"] == "fb-page-readonly"


def test_app_secret_in_the_environment_does_not_sign_a_profile_token(run, sb, home):
    """The environment is a source only when FB_ACCESS_TOKEN is set; a stray
    FB_APP_SECRET must not be paired with the profile's token (its proof would be wrong)."""
    write_private(credentials_path(home), {"default": "main",
                                           "profiles": {"main": {"facebook": {"access_token": PAGE_TOKEN}}}})
    r = run([], jl("profile token, env secret"), token=None, extra={"FB_APP_SECRET": "wrong-app-secret"})
    assert r.returncode == 0, r
    [entry] = feed_requests(sb)
    assert "appsecret_proof" not in entry["query"], entry["query"]


# --------------------------------------------------------------------------------------
# 2. refused before sending
# --------------------------------------------------------------------------------------

def test_input_errors_are_per_line_and_never_sent(run, sb):
    lines = [b"not json",                                                   # 1
             b"[1,2]",                                                      # 2
             jl({"message": 5})[:-1],                                       # 3
             jl({"message": "p1", "page": "my-page"})[:-1],                 # 4
             jl({"message": "p2", "page": "12a"})[:-1],                     # 5
             jl({"message": "p3", "page": ""})[:-1],                        # 6
             jl({"message": "p4", "page": "me/feed"})[:-1],                 # 7
             jl({"message": "p5", "page": True})[:-1],                      # 8
             jl({"message": "p6", "page": -5})[:-1],                        # 9
             jl({"message": "b1", "published": "false"})[:-1],              # 10
             jl({"message": "s1", "published": False, "scheduled_publish_time": True})[:-1],   # 11
             jl({"link": 5})[:-1],                                          # 12
             b'{"message":"twice","message":"again"}',                      # 13
             jl({"message": "params not an object", "params": "place=1"})[:-1],   # 14
             jl("still going")[:-1]]                                        # 15
    r = run([], b"\n".join(lines) + b"\n")
    assert r.returncode == 1, r
    got = r.by_line()
    assert sorted(got) == list(range(1, 16)), r
    for line in range(1, 15):
        e = got[line]
        assert e["ok"] is False and e["error"]["kind"] == "input", (line, e)
        assert e["error"]["attempts"] == 0, e
    assert got[1]["input"] is None and got[1]["raw"] == "not json"
    assert got[15]["ok"] is True
    assert [e["body"]["message"] for e in feed_requests(sb)] == [["still going"]]


def test_validation_link_and_missing_content(run, sb):
    recs = [{"message": "bad link", "link": "ftp://example.com/x"},    # 1
            {"message": "relative link", "link": "example.com"},       # 2
            {},                                                         # 3
            {"message": ""},                                            # 4
            {"message": "", "link": ""},                                # 5
            {"page": PAGE},                                             # 6
            "sent"]                                                     # 7
    r = run([], jl(*recs))
    assert r.returncode == 1, r
    got = r.by_line()
    for line in range(1, 7):
        err = got[line]["error"]
        assert err["kind"] == "validation", got[line]
        assert err["attempts"] == 0 and "status" not in err, got[line]
    assert got[7]["ok"] is True
    assert len(feed_requests(sb)) == 1, "validation failures are never sent"


def _iso(t, offset_hours=0):
    tz = datetime.timezone(datetime.timedelta(hours=offset_hours))
    s = datetime.datetime.fromtimestamp(t, tz).isoformat(timespec="seconds")
    return s.replace("+00:00", "Z")


def test_scheduled_posts_inside_the_window(run, sb):
    now = int(time.time())
    unix, iso_z, iso_offset = now + 3600, now + 2 * 3600, now + 3 * 86400
    recs = [{"message": "scheduled unix", "scheduled_publish_time": unix},
            {"message": "scheduled iso z", "scheduled_publish_time": _iso(iso_z)},
            {"message": "scheduled iso offset", "scheduled_publish_time": _iso(iso_offset, 1)},
            {"message": "scheduled explicit", "published": False, "scheduled_publish_time": now + 7200 + 60},
            {"message": "unpublished", "published": False}]
    assert recs[2]["scheduled_publish_time"].endswith("+01:00")
    r = run([], jl(*recs))
    assert r.returncode == 0, r
    assert all(e["ok"] for e in r.envelopes), r
    posts = {p["message"]: p for p in posts_of(sb)["posts"]}
    expected = {"scheduled unix": unix, "scheduled iso z": iso_z, "scheduled iso offset": iso_offset,
                "scheduled explicit": now + 7260}
    for msg, t in expected.items():
        assert posts[msg]["published"] is False, posts[msg]
        assert posts[msg]["scheduled_publish_time"] == t, (msg, posts[msg])
        [entry] = feed_requests(sb, msg)
        assert entry["body"]["published"] == ["false"], entry["body"]
        assert entry["body"]["scheduled_publish_time"] == [str(t)], ("sent as Unix seconds", entry["body"])
    assert posts["unpublished"]["published"] is False and posts["unpublished"]["scheduled_publish_time"] is None


def test_scheduled_posts_outside_the_window_are_validation_errors(run, sb):
    now = int(time.time())
    recs = [{"message": "too soon", "scheduled_publish_time": now + 300},                       # 1
            {"message": "too late", "scheduled_publish_time": now + 31 * 86400},                # 2
            {"message": "in the past", "scheduled_publish_time": now - 60},                     # 3
            {"message": "too soon iso", "scheduled_publish_time": _iso(now + 120)},             # 4
            {"message": "too late iso", "scheduled_publish_time": _iso(now + 40 * 86400, -5)},  # 5
            {"message": "published and scheduled", "published": True,
             "scheduled_publish_time": now + 3600},                                             # 6
            {"message": "fine", "scheduled_publish_time": now + 3600}]                          # 7
    r = run([], jl(*recs))
    assert r.returncode == 1, r
    got = r.by_line()
    for line in range(1, 7):
        err = got[line]["error"]
        assert err["kind"] == "validation" and err["attempts"] == 0, got[line]
    for line in range(1, 6):
        msg = got[line]["error"]["message"]
        assert re.search(r"10 ?min", msg) and re.search(r"30 ?day", msg), ("the message names the window", msg)
    assert got[7]["ok"] is True, got[7]
    assert [e["body"]["message"] for e in feed_requests(sb)] == [["fine"]]


@pytest.mark.parametrize("field", LEGACY_FIELDS)
def test_legacy_fields_are_refused_naming_the_field(run, sb, field):
    value = "https://example.com/p.png" if field == "picture" else ("100000000000001" if field == "app_id"
                                                                    else "old %s" % field)
    r = run([], jl({"message": "legacy %s" % field, "link": "https://example.com/", field: value},
                   {"message": "legacy in params %s" % field, "params": {field: value}},
                   "after legacy"))
    assert r.returncode == 1, r
    first, second, third = r.envelopes
    for e in (first, second):
        err = e["error"]
        assert err["kind"] == "validation" and err["attempts"] == 0, e
        assert re.search(r"\b%s\b" % field, err["message"]), ("names the field", err["message"])
        if field == "app_id":
            # graph-api.md §3: app_id was never a post field (it belongs to the app or a Feed
            # Dialog URL), so "ignored since July 2017" would be untrue; either wording is accepted.
            assert "2017" in err["message"] or "not a field" in err["message"], err["message"]
        else:
            assert "2017" in err["message"], ("says Facebook ignores it since July 2017", err["message"])
    assert third["ok"] is True
    assert [e["body"]["message"] for e in feed_requests(sb)] == [["after legacy"]]


def test_allow_legacy_fields_sends_them_with_one_warning_per_field(run, sb):
    rec = {"message": "legacy allowed", "link": "https://example.com/page", "picture": "https://example.com/p.png",
           "name": "Old name", "caption": "Old caption", "description": "Old description",
           "app_id": "100000000000001"}
    r = run(["--allow-legacy-fields"], jl(rec, {"message": "legacy allowed again", "picture": "https://example.com/q"},
                                          {"message": "legacy in params", "params": {"caption": "from params"}}))
    assert r.returncode == 0, r
    assert all(e["ok"] for e in r.envelopes), r
    posts = {p["message"]: p for p in posts_of(sb)["posts"]}
    assert posts["legacy allowed"]["ignored_fields"] == IGNORED_BY_SANDBOX, posts["legacy allowed"]
    assert posts["legacy allowed again"]["ignored_fields"] == ["picture"]
    assert posts["legacy in params"]["ignored_fields"] == ["caption"]
    body = feed_requests(sb, "legacy allowed")[0]["body"]
    for f in LEGACY_FIELDS:
        assert body[f] == [rec[f]], (f, body)
    err = r.stderr.decode()
    for f in LEGACY_FIELDS:
        assert re.search(r"\b%s\b" % f, err), ("a warning names %s" % f, err)
    # Once per run per field: two records with `picture` warn exactly as much as one.
    once = run(["--allow-legacy-fields"], jl({"message": "picture once", "picture": "https://example.com/1"}))
    twice = run(["--allow-legacy-fields"], jl({"message": "picture twice a", "picture": "https://example.com/2"},
                                              {"message": "picture twice b", "picture": "https://example.com/3"}))
    assert once.returncode == 0 and twice.returncode == 0, (once, twice)
    assert once.stderr and re.search(rb"\bpicture\b", once.stderr), once
    assert len(twice.stderr.splitlines()) == len(once.stderr.splitlines()), (once.stderr, twice.stderr)


def test_allow_legacy_fields_still_needs_string_values(run, sb):
    r = run(["--allow-legacy-fields"], jl({"message": "numeric caption", "caption": 5}))
    assert r.envelopes[0]["error"]["kind"] == "input", r
    assert feed_requests(sb) == []


def test_documented_params_pass_through_in_order(run, sb):
    params = {"place": "110843418940484", "privacy": '{"value":"SELF"}', "formatting": "MARKDOWN",
              "backdated_time": "1700000000", "targeting": '{"geo_locations":{"countries":["US"]}}',
              "call_to_action": '{"type":"LEARN_MORE","value":{"link":"https://example.com/"}}'}
    rec = {"message": "with params", "link": "https://example.com/", "published": False, "params": params,
           "description": "legacy last"}
    r = run(["--allow-legacy-fields"], jl(rec))
    assert r.returncode == 0, r
    [entry] = feed_requests(sb)
    body = entry["body"]
    for k, v in params.items():
        assert body[k] == [v], (k, body)
    keys = list(body)
    # message, link, published, (scheduled_publish_time), then params, then legacy fields.
    assert keys[:3] == ["message", "link", "published"], keys
    assert set(keys[3:3 + len(params)]) == set(params), keys
    assert keys[-1] == "description", keys


@pytest.mark.parametrize("params", [
    {"access_token": "zz-param-secret"},
    {"appsecret_proof": "zz-proof-value"},
    {"page_access_token": "zz-param-secret"},
    {"client_secret": "zz-param-secret"},
    {"method": "DELETE"},
    {"batch": "[]"},
    {"no_such_field": "x"},
    {"place": 110843418940484},
    {"privacy": {"value": "SELF"}},
    {"published": "false"},
    {"message": "from params"},
    {"link": "https://example.com/"},
    {"scheduled_publish_time": "1900000000"},
], ids=lambda p: "%s=%s" % next(iter(p.items())))
def test_refused_params_are_input_errors(run, sb, params):
    r = run([], jl({"message": "refused params", "params": params}, "after refused params"))
    assert r.returncode == 1, r
    first, second = r.envelopes
    assert first["error"]["kind"] == "input" and first["error"]["attempts"] == 0, first
    assert second["ok"] is True
    assert [e["body"]["message"] for e in feed_requests(sb)] == [["after refused params"]]
    key = next(iter(params))
    if key.endswith(("_token", "_secret")):
        assert b"zz-param-secret" not in r.stdout, r
        assert first["input"]["params"][key] == "[redacted]", first


# --------------------------------------------------------------------------------------
# 3. API errors
# --------------------------------------------------------------------------------------

def test_user_token_on_a_page_is_permission_saying_a_page_token_is_needed(run, sb):
    r = run([], jl({"message": "user token post", "page": PAGE}), token=USER_TOKEN)
    assert r.returncode == 1, r
    err = check_graph_error(r.envelopes[0], "permission", code="200", status=403, attempts=1)
    check_api_error_extras(err)
    assert "Page access token" in err["message"], err
    assert "/me/accounts" in err["message"], err
    assert len(feed_requests(sb)) == 1
    assert posts_of(sb)["total"] == 0


def test_expired_token_is_auth_with_subcode_463(run, sb):
    r = run([], jl({"message": "expired token post", "page": PAGE}), token=EXPIRED_USER_TOKEN)
    assert r.returncode == 1, r
    err = check_graph_error(r.envelopes[0], "auth", code="190", status=400, attempts=1)
    check_api_error_extras(err)
    assert err["error_subcode"] == 463, err
    assert "Session has expired" in err["message"], ("the API's message is kept", err)
    assert "(subcode 463: the token has expired)" in err["message"], err
    assert posts_of(sb)["total"] == 0


@pytest.mark.parametrize("args", [[], ["--batch", "10"]])
def test_lapsed_data_access_is_auth_saying_to_log_in_again(run, sb, args):
    """Contract §7: 190 with subcode 493 (data access expired after 90 days without use)
    ends the record `auth`, not retried, its message naming fb-auth device."""
    r = run(args, jl("after 90 days", "and again"), token=DATA_EXPIRED_PAGE_TOKEN)
    assert r.returncode == 1, r
    for e in r.envelopes:
        err = check_graph_error(e, "auth", code="190", status=400, attempts=1)
        check_api_error_extras(err)
        assert err["error_subcode"] == 493, err
        assert err["message"].startswith("Error validating access token: The user's data access"), err
        # Issue 20: then the command that fixes it; the token is the environment's.
        assert err["message"].endswith("(subcode 493: %s)" % SUBCODE_MEANINGS[493] + ENVIRONMENT_TOKEN_REMEDY), err
    assert r.stderr.endswith(b"fb-feed: 2 of 2 failed (auth 2)\n"), r.stderr
    assert posts_of(sb)["total"] == 0


@pytest.mark.parametrize("subcode", [458, 459, 460, 464, 467, 492, 493])
def test_revoked_token_subcode_meanings(run, sb, subcode):
    sb.control(revoke_token={"token": PAGE_TOKEN, "subcode": subcode})
    r = run([], jl("revoked %d" % subcode))
    err = check_graph_error(r.envelopes[0], "auth", code="190", attempts=1)
    assert err["error_subcode"] == subcode, err
    assert "(subcode %d: %s)" % (subcode, SUBCODE_MEANINGS[subcode]) in err["message"], err


def test_page_token_without_pages_manage_posts_is_permission(run, sb):
    r = run([], jl("readonly page token"), token=READONLY_PAGE_TOKEN)
    assert r.returncode == 1, r
    err = check_graph_error(r.envelopes[0], "permission", code="200", status=403, attempts=1)
    check_api_error_extras(err)
    assert posts_of(sb)["total"] == 0


def test_duplicate_is_code_506(run, sb):
    r = run([], jl("said twice", "said twice"))
    assert r.returncode == 1, r
    first, second = r.envelopes
    assert first["ok"] is True, r
    err = check_graph_error(second, "duplicate", code="506", status=400, attempts=1)
    check_api_error_extras(err)
    assert posts_of(sb)["counts"] == {"said twice": 1}
    assert len(feed_requests(sb, "said twice")) == 2


def test_blocked_page_368_is_permission_and_never_retried(run, sb):
    r = run(["--retries", "3"], jl("blocked page post", {"message": "blocked by id", "page": BLOCKED_PAGE}),
            token=BLOCKED_PAGE_TOKEN)
    assert r.returncode == 1, r
    for e in r.envelopes:
        err = check_graph_error(e, "permission", code="368", status=400, attempts=1)
        check_api_error_extras(err)
        assert err["error_subcode"] == 1390008, err
    assert len(feed_requests(sb, "blocked page post")) == 1
    assert len(feed_requests(sb, "blocked by id")) == 1
    assert posts_of(sb)["total"] == 0


def test_unknown_page_is_not_found(run, sb):
    r = run([], jl({"message": "to nowhere", "page": MISSING_PAGE}))
    err = check_graph_error(r.envelopes[0], "not_found", code="100", status=400, attempts=1)
    assert err["error_subcode"] == 33 and err["type"] == "GraphMethodException", err


def test_deprecated_graph_version_is_http_2635_suggesting_the_option(run, sb):
    r = run(["--graph-version", "v20.0"], jl("old version"))
    err = check_graph_error(r.envelopes[0], "http", code="2635", status=400, attempts=1)
    assert "--graph-version" in err["message"], err


def test_other_graph_error_is_http(run, sb):
    sb.fault("error", match=feed_match("other-error"), code=100, message="(#100) Invalid parameter")
    r = run([], jl("other-error"))
    err = check_graph_error(r.envelopes[0], "http", code="100", status=400, attempts=1)
    check_api_error_extras(err)


# --------------------------------------------------------------------------------------
# 4. throttling
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("header", ["X-Business-Use-Case-Usage", "X-Page-Usage", "X-App-Usage"])
def test_throttle_with_regain_beyond_max_wait_fails_now_and_stops_the_token(run, sb, header):
    feed_throttle(sb, "throttled-first", regain=1, header=header)
    t0 = time.time()
    r = run(["--max-wait", "0"], jl("throttled-first", "throttled-second", "throttled-third"), timeout=10)
    check_throttled_without_waiting(r, t0, "32", regain=1, records=3, status=403)
    assert [e["body"]["message"] for e in feed_requests(sb)] == [["throttled-first"]], \
        "later records on the throttled token are not sent"
    assert posts_of(sb)["total"] == 0


def test_throttle_regain_beyond_default_max_wait(run, sb):
    feed_throttle(sb, "regain-hour", regain=60)
    t0 = time.time()
    r = run([], jl("regain-hour", "after-regain-hour"), timeout=10)
    check_throttled_without_waiting(r, t0, "32", regain=60, records=2)
    assert len(feed_requests(sb)) == 1


def test_throttle_with_regain_within_max_wait_waits_without_sending(bin_path, fb_env, sb):
    """Regain 1 minute, --max-wait 900: the record waits (nothing more is sent, no
    envelope yet); SIGTERM then ends the run with an envelope for both records."""
    feed_throttle(sb, "wait-first", regain=1)
    with Running(bin_path, fb_env(), ["--max-wait", "900"]) as tool:
        tool.write(jl("wait-first", "wait-second"))
        assert wait_until(lambda: len(feed_requests(sb)) >= 1, 5), "the first post never reached the sandbox"
        time.sleep(2)
        assert tool.out.q.empty(), "a record throttled with a regain time within --max-wait must wait"
        assert len(feed_requests(sb)) == 1, "nothing is sent on a throttled token while it waits"
        lines, rc = tool.interrupt(signal.SIGTERM)
    assert_no_secrets(b"".join(lines), tool.stderr, secrets=FB_SECRETS)
    assert rc == 143, (rc, tool.stderr)
    envs = [parse_envelope(l) for l in lines]
    assert [e["line"] for e in envs] == [1, 2], envs
    assert envs[0]["error"]["kind"] in ("rate_limit", "cancelled"), envs[0]
    assert envs[1]["error"]["kind"] == "cancelled" and envs[1]["error"]["attempts"] == 0, envs[1]
    assert posts_of(sb)["total"] == 0


def test_throttle_with_regain_within_max_wait_waits_then_succeeds(run, sb):
    """Regain 0.04 minutes (2.4 s: the tool takes fractions of a minute), --max-wait 120:
    the record waits about that long, nothing at all is sent meanwhile, then it goes
    again and is posted, and the next record follows."""
    feed_throttle(sb, "regain-soon", regain=0.04)
    r = run(["--max-wait", "120"], jl("regain-soon", "after-regain-soon"), timeout=30)
    assert r.returncode == 0, r
    assert [(e["line"], e["ok"]) for e in r.envelopes] == [(1, True), (2, True)], r
    assert r.elapsed >= 2, r
    entries = sb.log()
    assert [(e["endpoint"], e["body"]["message"], e["status"]) for e in entries] == [
        (FEED, ["regain-soon"], 403), (FEED, ["regain-soon"], 200), (FEED, ["after-regain-soon"], 200)], \
        "nothing is sent while the token waits"
    refused, accepted, after = entries
    assert 2 <= accepted["time"] - refused["time"] < 5, ("waits the regain time, 2.4 s",
                                                          accepted["time"] - refused["time"])
    assert after["time"] >= accepted["time"]
    posts = posts_of(sb)
    assert posts["counts"] == {"regain-soon": 1, "after-regain-soon": 1}
    assert r.envelopes[0]["result"]["id"] == {p["message"]: p["id"] for p in posts["posts"]}["regain-soon"]


def test_throttle_without_regain_backs_off_and_resends(run, sb):
    feed_throttle(sb, "backoff-once")               # no usage header: back off with jitter
    r = run([], jl("backoff-once", "after-backoff"), timeout=20)
    assert r.returncode == 0, r
    assert [e["ok"] for e in r.envelopes] == [True, True], r
    refused, accepted = feed_requests(sb, "backoff-once")
    assert (refused["status"], accepted["status"]) == (403, 200)
    assert r.elapsed < 10, r
    assert posts_of(sb)["counts"] == {"backoff-once": 1, "after-backoff": 1}


def test_throttle_without_regain_exhausts_retries_and_stops_the_token(run, sb):
    feed_throttle(sb, "always-throttled", code=613, count=None)
    r = run(["--retries", "2"], jl("always-throttled", "never-sent"), timeout=20)
    assert r.returncode == 1, r
    first, second = r.envelopes
    check_graph_error(first, "rate_limit", code="613", status=400, attempts=3)
    check_graph_error(second, "rate_limit", attempts=0)
    assert len(feed_requests(sb, "always-throttled")) == 3
    assert feed_requests(sb, "never-sent") == []
    assert posts_of(sb)["total"] == 0


@pytest.mark.parametrize("code", [4, 17, 80001])
def test_other_throttling_codes_are_rate_limit(run, sb, code):
    feed_throttle(sb, "code-%d" % code, code=code, count=None)
    r = run(["--retries", "0"], jl("code-%d" % code), timeout=10)
    check_graph_error(r.envelopes[0], "rate_limit", code=str(code), attempts=1)


def test_sandbox_budgets_space_requests_above_90_percent_then_throttle(run, sb):
    """Page budget 20 calls: the 19th answer reports 95 % -> the next request waits
    1 s; the 21st is refused (code 32, regain ~60 minutes, beyond --max-wait) and
    the 22nd is not sent."""
    sb.control(facebook_limits={"page": {"limit": 20, "window": 3600}})
    msgs = ["budget-%02d" % i for i in range(1, 23)]
    r = run([], jl(*msgs), timeout=30)
    got = r.by_line()
    assert all(got[i]["ok"] for i in range(1, 21)), r
    err = check_graph_error(got[21], "rate_limit", code="32", attempts=1)
    assert "reset" in err, err
    check_graph_error(got[22], "rate_limit", attempts=0)
    entries = feed_requests(sb)
    assert [e["body"]["message"][0] for e in entries] == msgs[:21]
    times = [e["time"] for e in entries]
    assert times[19] - times[18] >= 0.95, "not spaced after a 95 % usage answer: %.2f s" % (times[19] - times[18])
    assert times[18] - times[0] < 3, "requests below 90 %% must not be slowed: %.2f s" % (times[18] - times[0])


@pytest.mark.parametrize("header,usage", [
    ("X-Page-Usage", {"call_count": 20, "total_cputime": 10, "total_time": 95}),
    ("X-App-Usage", {"call_count": 20, "total_cputime": 95, "total_time": 10}),
], ids=["X-Page-Usage-total_time", "X-App-Usage-total_cputime"])
def test_usage_above_90_percent_spaces_the_next_request(run, sb, header, usage):
    """The largest of the three percentages counts; one answer above 90 % spaces the
    next request 1 s, and an answer at 90 % or less (the sandbox's own low usage)
    ends the spacing."""
    sb.fault("headers", match=feed_match("busy-one"), headers={header: json.dumps(usage, separators=(",", ":"))})
    r = run([], jl("busy-one", "busy-two", "busy-three"), timeout=15)
    assert r.returncode == 0, r
    t1, t2, t3 = [e["time"] for e in feed_requests(sb)]
    assert t2 - t1 >= 0.95, "not spaced after a %s answer at 95 %%: %.2f s" % (header, t2 - t1)
    assert t3 - t2 < 0.7, "still spaced after an answer below 90 %%: %.2f s" % (t3 - t2)


# --------------------------------------------------------------------------------------
# 5. appsecret_proof
# --------------------------------------------------------------------------------------

def test_app_secret_adds_a_fresh_accepted_proof_to_every_request(run, sb):
    r = run([], jl("proof one", "proof two", "proof one"), secret=APP_SECRET)
    assert [e["ok"] for e in r.envelopes] == [True, True, False], r
    r = run(["--batch", "5"], jl("proof batch one", "proof batch two"), secret=APP_SECRET)
    assert r.returncode == 0, r
    entries = sb.log(service="facebook")
    assert len(entries) == 4, [(e["method"], e["path"]) for e in entries]
    assert_fresh_accepted_proofs(entries)
    for e in entries:
        if isinstance(e["body"], dict):
            assert "appsecret_proof" not in e["body"], e["body"]
    assert batch_requests(sb), "the batch request carries the proof on the outer query"
    for item in batch_items(batch_requests(sb)[0]):
        assert "appsecret_proof" not in item["relative_url"] and "appsecret_proof" not in item["body"], item


def test_wrong_app_secret_is_refused_by_the_api(run, sb):
    """A proof made with the wrong secret is a credentials problem (auth), and says so."""
    r = run([], jl("wrong secret"), secret="wrong-app-secret")
    err = check_graph_error(r.envelopes[0], "auth", code="100", attempts=1)
    assert "appsecret_proof" in err["message"] and "another app" in err["message"], err
    [entry] = feed_requests(sb)
    assert entry["auth"]["outcome"] == "appsecret_proof_invalid", entry["auth"]


def test_proof_requiring_app_needs_the_secret(run, sb):
    r = run([], jl("secure with secret"), token=SECURE_PAGE_TOKEN, secret=SECURE_APP_SECRET)
    assert r.returncode == 0 and r.envelopes[0]["ok"] is True, r
    r = run([], jl("secure without secret"), token=SECURE_PAGE_TOKEN)
    assert r.returncode == 1, r
    err = check_graph_error(r.envelopes[0], "auth", code="100", status=400, attempts=1)
    assert err["type"] == "GraphMethodException" and "appsecret_proof" in err["message"], err
    assert "FB_APP_SECRET" in err["message"], err
    ok, refused = feed_requests(sb)
    assert ok["auth"]["outcome"] == "ok" and refused["auth"]["outcome"] == "appsecret_proof_missing"
    # In a batch the outer proof covers the items (sandbox/README.md §5, batch).
    r = run(["--batch", "5"], jl("secure batch one", "secure batch two"), token=SECURE_PAGE_TOKEN,
            secret=SECURE_APP_SECRET)
    assert r.returncode == 0, r
    [b] = batch_requests(sb)
    assert b["auth"]["outcome"] == "ok" and "appsecret_proof" in b["query"], b
    assert posts_of(sb)["counts"] == {"secure with secret": 1, "secure batch one": 1, "secure batch two": 1}


def test_no_secret_no_proof(run, sb):
    r = run([], jl("no proof one", "no proof two"))
    assert r.returncode == 0, r
    r = run(["--batch", "2"], jl("no proof batch one", "no proof batch two"))
    assert r.returncode == 0, r
    entries = sb.log(service="facebook")
    assert len(entries) == 3
    for e in entries:
        assert "appsecret_proof" not in e["query"] and "appsecret_time" not in e["query"], e["query"]
        if isinstance(e["body"], dict):
            assert "appsecret_proof" not in e["body"] and "appsecret_time" not in e["body"], e["body"]


# --------------------------------------------------------------------------------------
# 6. no token in any URL, on stdout or on stderr
# --------------------------------------------------------------------------------------

def test_no_token_in_any_url_or_output(run, sb):
    """Single posts, errors, a batch, --verbose and --dry-run, with and without an app
    secret: the log shows no access_token in any query, path or batch item, the token
    in the Authorization header; `run` checks stdout and stderr for every token and secret."""
    runs = [run(["--verbose"], jl("url one", "url one"), secret=APP_SECRET),
            run(["--verbose", "--batch", "3"], jl("url batch one", "url batch two", "url batch three")),
            run(["--verbose"], jl("user token url"), token=USER_TOKEN),
            run(["--verbose"], jl("expired token url"), token=EXPIRED_USER_TOKEN),
            run(["--dry-run", "--verbose"], jl("dry url"), secret=APP_SECRET),
            run(["--dry-run", "--batch", "2"], jl("dry batch one", "dry batch two"))]
    assert [len(r.envelopes) for r in runs] == [2, 3, 1, 1, 1, 2]
    entries = assert_no_token_in_urls(sb)
    assert len(entries) == 5, [(e["method"], e["path"]) for e in entries]
    for r in runs[4:]:
        for e in r.envelopes:
            req = e["result"]["request"]
            assert "access_token" not in req["url"], req
            assert "access_token" not in (req.get("body") or ""), req


def test_dry_run_shows_the_request_and_sends_nothing(run, sb):
    r = run(["--dry-run"], jl({"message": "dry \u2603 & more", "link": "https://example.com/"}))
    assert r.returncode == 0, r
    [e] = r.envelopes
    assert list(e["result"]) == ["request"], e
    req = e["result"]["request"]
    assert set(req) == {"method", "url", "headers", "body"}, req
    assert req["method"] == "POST" and req["url"] == sb.url + ME_FEED_PATH, req
    headers = {h.split(":", 1)[0].lower(): h.split(":", 1)[1].strip() for h in req["headers"]}
    assert headers["content-type"].startswith("application/x-www-form-urlencoded"), headers
    assert headers["authorization"].startswith("Bearer ") and "redacted" in headers["authorization"].lower()
    assert urllib.parse.parse_qs(req["body"]) == {"message": ["dry \u2603 & more"],
                                                  "link": ["https://example.com/"]}, req["body"]
    assert sb.log() == []


# --------------------------------------------------------------------------------------
# 7. --batch
# --------------------------------------------------------------------------------------

def test_batch_50_over_120_records_makes_3_batch_requests_in_order(run, sb):
    msgs = ["batch-120-%03d" % i for i in range(120)]
    r = run(["--batch", "50"], jl(*msgs), timeout=30)
    assert r.returncode == 0, r
    assert [e["line"] for e in r.envelopes] == list(range(1, 121)), "envelopes in input order"
    assert all(e["ok"] for e in r.envelopes), [e for e in r.envelopes if not e["ok"]][:3]
    batches = batch_requests(sb)
    assert [len(batch_items(b)) for b in batches] == [50, 50, 20], [len(batch_items(b)) for b in batches]
    assert [len(b["batch"]) for b in batches] == [50, 50, 20]
    assert sum((batch_messages(b) for b in batches), []) == msgs, "slots in input order"
    assert feed_requests(sb) == [], "with --batch every record travels in a batch"
    for b in batches:
        assert b["path"] == BATCH_PATH, b["path"]
        assert b["body"]["include_headers"] == ["false"], b["body"]
        assert set(b["body"]) == {"batch", "include_headers"}, b["body"]
        assert b["auth"]["outcome"] == "ok" and b["auth"]["credential"] == "fb-page", b["auth"]
        for item in batch_items(b):
            assert (item["method"], item["relative_url"]) == ("POST", "me/feed"), item
            assert set(item_form(item)) == {"message"}, item
        assert all(s["status"] == 200 for s in b["batch"]), b["batch"]
    posts = posts_of(sb)
    assert posts["total"] == 120 and set(posts["counts"]) == set(msgs)
    ids = {p["message"]: p["id"] for p in posts["posts"]}
    assert all(p["batch_item"] for p in posts["posts"])
    for msg, e in zip(msgs, r.envelopes):
        assert e["input"] == {"message": msg} and e["result"] == {"id": ids[msg]}, e
    assert_no_token_in_urls(sb)


def test_batch_pre_duplicated_slot_fails_alone(run, sb):
    assert run([], jl("batch-dup")).envelopes[0]["ok"]
    msgs = ["batch-dup-before", "batch-dup-other", "batch-dup", "batch-dup-after", "batch-dup-last"]
    r = run(["--batch", "50"], jl(*msgs))
    assert r.returncode == 1, r
    got = r.by_line()
    for line in (1, 2, 4, 5):
        assert got[line]["ok"] is True, got[line]
    err = check_graph_error(got[3], "duplicate", code="506", attempts=1)
    check_api_error_extras(err)
    [b] = batch_requests(sb)
    assert batch_messages(b) == msgs
    assert posts_of(sb)["counts"] == {m: 1 for m in msgs}


def test_batch_slot_errors_are_classified_per_slot(run, sb):
    sb.fault("error", match=item_match("slot-expired"), code=190, subcode=463)
    sb.fault("error", match=item_match("slot-throttled-368"), code=368)
    r = run(["--batch", "10"], jl("slot-fine", "slot-expired", "slot-throttled-368", "slot-also-fine"))
    got = r.by_line()
    assert got[1]["ok"] and got[4]["ok"], r
    err = check_graph_error(got[2], "auth", code="190", attempts=1)
    assert err["error_subcode"] == 463, err
    check_graph_error(got[3], "permission", code="368", attempts=1)
    assert len(batch_requests(sb)) == 1, "a 368 slot is never re-sent"
    assert posts_of(sb)["counts"] == {"slot-fine": 1, "slot-also-fine": 1}


def test_batch_with_a_readonly_page_token_fails_each_slot_as_permission(run, sb):
    r = run(["--batch", "10"], jl("ro batch one", "ro batch two", "ro batch three"), token=READONLY_PAGE_TOKEN)
    assert r.returncode == 1, r
    for e in r.envelopes:
        check_graph_error(e, "permission", code="200", attempts=1)
    assert len(batch_requests(sb)) == 1
    assert posts_of(sb)["total"] == 0


def test_batch_top_level_token_error_fails_every_record_as_auth(run, sb):
    r = run(["--batch", "10"], jl("expired batch one", "expired batch two"), token=EXPIRED_USER_TOKEN)
    assert r.returncode == 1, r
    for e in r.envelopes:
        err = check_graph_error(e, "auth", code="190", attempts=1)
        assert err.get("error_subcode") == 463, err
    assert len(batch_requests(sb)) == 1


def test_batch_records_of_different_credentials_go_in_separate_batches(run, sb, home):
    write_private(credentials_path(home), {"profiles": {"ro": {"facebook": {"access_token": READONLY_PAGE_TOKEN}}}})
    recs = ["cred-page-1", {"message": "cred-ro-1", "profile": "ro"}, "cred-page-2",
            {"message": "cred-ro-2", "profile": "ro"}]
    r = run(["--batch", "10"], jl(*recs))
    got = r.by_line()
    assert got[1]["ok"] and got[3]["ok"], r
    check_graph_error(got[2], "permission", attempts=1)
    check_graph_error(got[4], "permission", attempts=1)
    batches = batch_requests(sb)
    assert len(batches) == 2, [batch_messages(b) for b in batches]
    by_cred = {b["auth"]["credential"]: batch_messages(b) for b in batches}
    assert by_cred == {"fb-page": ["cred-page-1", "cred-page-2"], "fb-page-readonly": ["cred-ro-1", "cred-ro-2"]}, \
        by_cred
    assert posts_of(sb)["counts"] == {"cred-page-1": 1, "cred-page-2": 1}


def test_batch_null_slot_is_sent_again_once_and_succeeds(run, sb):
    sb.fault("null", match=item_match("null-slot-3"), count=1)
    msgs = ["null-slot-1", "null-slot-2", "null-slot-3", "null-slot-4", "null-slot-5"]
    r = run(["--batch", "50"], jl(*msgs))
    assert r.returncode == 0, r
    assert [e["line"] for e in r.envelopes] == [1, 2, 3, 4, 5]
    assert all(e["ok"] for e in r.envelopes), r
    first, second = batch_requests(sb)
    assert batch_messages(first) == msgs
    assert first["batch"][2]["status"] is None, first["batch"]
    assert batch_messages(second) == ["null-slot-3"], "only the null slot is sent again"
    posts = posts_of(sb)
    assert posts["counts"] == {m: 1 for m in msgs}
    assert r.envelopes[2]["result"]["id"] == {p["message"]: p["id"] for p in posts["posts"]}["null-slot-3"]


def test_batch_null_slot_twice_is_http_did_not_complete(run, sb):
    sb.fault("null", match=item_match("null-twice-2"), count=2)
    r = run(["--batch", "50"], jl("null-twice-1", "null-twice-2", "null-twice-3"))
    assert r.returncode == 1, r
    got = r.by_line()
    assert got[1]["ok"] and got[3]["ok"], r
    err = got[2]["error"]
    assert err["kind"] == "http" and err["attempts"] == 2, got[2]
    assert "did not complete" in err["message"], err
    assert len(batch_requests(sb)) == 2, "sent again once, not more"
    assert posts_of(sb)["counts"] == {"null-twice-1": 1, "null-twice-3": 1}


def test_batch_throttled_slot_is_sent_again_and_posted_once(run, sb):
    """A throttled slot was not applied (code 32): it may travel again; the others are done."""
    sb.fault("error", match=item_match("slot-throttled-2"), code=32, count=1)
    msgs = ["slot-throttled-1", "slot-throttled-2", "slot-throttled-3"]
    r = run(["--batch", "10"], jl(*msgs), timeout=20)
    assert r.returncode == 0, r
    assert all(e["ok"] for e in r.envelopes), r
    batches = batch_requests(sb)
    carried = sum(batch_messages(b).count("slot-throttled-2") for b in batches) + \
        len(feed_requests(sb, "slot-throttled-2"))
    assert carried == 2, [batch_messages(b) for b in batches]
    assert sum(batch_messages(b).count("slot-throttled-1") for b in batches) == 1
    assert posts_of(sb)["counts"] == {m: 1 for m in msgs}


LOST_BATCH = {
    "reset-after": ("reset_after", {}, True, None),
    "503": ("status", {"status": 503}, False, 503),
    "500-code-1": ("error", {"code": 1}, False, 500),
    "truncate": ("truncate", {}, True, None),
    "malformed": ("malformed", {}, True, 200),
}


@pytest.mark.parametrize("name", list(LOST_BATCH))
def test_batch_lost_answer_makes_every_record_in_it_ambiguous(run, sb, name):
    kind, fields, processed, status = LOST_BATCH[name]
    sb.fault(kind, match={"method": "POST", "path": BATCH_PATH}, count=1, **fields)
    msgs = ["lost-%s-%02d" % (name, i) for i in range(60)]
    r = run(["--batch", "50"], jl(*msgs), timeout=30)
    assert r.returncode == 1, r
    assert [e["line"] for e in r.envelopes] == list(range(1, 61)), r
    for e in r.envelopes[:50]:
        assert e["ok"] is False and e["error"]["kind"] == "ambiguous", e
        assert e["error"]["attempts"] == 1, ("a lost batch is never re-sent", e)
        if status is not None:
            assert e["error"].get("status") == status, e
    assert all(e["ok"] for e in r.envelopes[50:]), r.envelopes[50:]
    batches = batch_requests(sb)
    assert [len(batch_items(b)) for b in batches] == [50, 10], [len(batch_items(b)) for b in batches]
    assert sum((batch_messages(b) for b in batches), []) == msgs, "no record travels twice"
    counts = settled_posts(sb)["counts"]       # also asserts nothing was posted twice
    if processed:
        assert counts == {m: 1 for m in msgs}, counts
    else:
        assert counts == {m: 1 for m in msgs[50:]}, counts


def test_batch_goes_out_promptly_when_input_pauses(bin_path, fb_env, sb):
    """`tail -f | fb-feed --batch 50`: 3 lines, then nothing -- their envelopes must come
    within about a second (50 ms idle + one request), long before EOF."""
    with Running(bin_path, fb_env(), ["--batch", "50"]) as tool:
        t0 = time.monotonic()
        tool.write(jl("tail-one", "tail-two", "tail-three"))
        got = []
        while len(got) < 3:
            line = tool.out.get(timeout=max(0.01, 1.5 - (time.monotonic() - t0)))
            assert line is not None, "fb-feed ended early: %r" % got
            got.append(parse_envelope(line))
        assert time.monotonic() - t0 < 1.5
        assert [(e["line"], e["ok"]) for e in got] == [(1, True), (2, True), (3, True)], got
        t1 = time.monotonic()
        tool.write(jl("tail-four", "tail-five"))
        more = [parse_envelope(tool.out.get(timeout=1.5)), parse_envelope(tool.out.get(timeout=1.5))]
        assert time.monotonic() - t1 < 1.5
        assert [(e["line"], e["ok"]) for e in more] == [(4, True), (5, True)], more
        tool.p.stdin.close()
        assert tool.out.rest(timeout=5) == []
        assert tool.p.wait(timeout=5) == 0
    assert_no_secrets(tool.stderr, secrets=FB_SECRETS)
    batches = batch_requests(sb)
    assert [batch_messages(b) for b in batches] == [["tail-one", "tail-two", "tail-three"],
                                                    ["tail-four", "tail-five"]]
    assert posts_of(sb)["total"] == 5


def test_dry_run_with_batch_shows_each_records_own_request(run, sb):
    r = run(["--dry-run", "--batch", "10"], jl("dry batch one", {"message": "dry batch two", "page": PAGE}))
    assert r.returncode == 0, r
    reqs = [e["result"]["request"] for e in r.envelopes]
    # "Each record's own request": either its own POST /{page}/feed, or a batch request
    # holding its slot alone -- never the shared batch of several records.
    seen = []
    for q in reqs:
        assert q["method"] == "POST", q
        form = urllib.parse.parse_qs(q["body"])
        if q["url"] == sb.url + BATCH_PATH:
            items = json.loads(form["batch"][0])
            assert len(items) == 1, ("one record's own request, not the shared batch", items)
            seen.append((items[0]["relative_url"], urllib.parse.parse_qs(items[0]["body"])))
        else:
            seen.append((q["url"][len(sb.url + "/v27.0/"):], form))
    assert seen == [("me/feed", {"message": ["dry batch one"]}),
                    ("%s/feed" % PAGE, {"message": ["dry batch two"]})], reqs
    assert sb.log() == []


def test_batch_validation_and_input_errors_are_not_sent(run, sb):
    r = run(["--batch", "10"], jl("batch valid one", {"message": "bad page", "page": "x"}, {},
                                  {"message": "legacy", "caption": "c"}, "batch valid two"))
    got = r.by_line()
    assert got[1]["ok"] and got[5]["ok"], r
    assert [got[i]["error"]["kind"] for i in (2, 3, 4)] == ["input", "validation", "validation"], r
    assert [batch_messages(b) for b in batch_requests(sb)] == [["batch valid one", "batch valid two"]]


# --------------------------------------------------------------------------------------
# 8. fault matrix on POST /{page}/feed
# --------------------------------------------------------------------------------------

# name -> (fault kind, fault fields, extra args, outcome of record 2, posts of record 2,
#          requests for record 2, error status or None)
FAULTS = {
    "500": ("status", {"status": 500}, [], "ambiguous", 0, 1, 500),
    "503": ("status", {"status": 503, "retry_after": 1}, [], "ambiguous", 0, 1, 503),
    "transient-code-2": ("error", {"code": 2}, [], "ambiguous", 0, 1, 503),
    "reset-before": ("reset_before", {}, [], "ambiguous", 0, 1, None),
    "reset-after": ("reset_after", {}, [], "ambiguous", 1, 1, None),
    "hang": ("hang", {}, ["--timeout", "2"], "ambiguous", 0, 1, None),
    "hang-processed": ("hang", {"process": True}, ["--timeout", "2"], "ambiguous", 1, 1, None),
    "truncate": ("truncate", {"bytes": 5}, [], "ambiguous", 1, 1, None),
    "malformed-200": ("malformed", {}, [], "ambiguous", 1, 1, 200),
    "200-without-id": ("status", {"status": 200, "body": {"success": True}}, [], "ambiguous", 0, 1, 200),
    "200-numeric-id": ("status", {"status": 200, "body": {"id": 123}}, [], "ambiguous", 0, 1, 200),
    "delay": ("delay", {"ms": 1200}, ["--timeout", "5"], "ok", 1, 1, None),
}


@pytest.mark.parametrize("name", list(FAULTS))
def test_fault_matrix(run, sb, name):
    kind, fields, args, outcome, posted, requests, status = FAULTS[name]
    msgs = ["fault-%s-one" % name, "fault-%s-two" % name, "fault-%s-three" % name]
    sb.fault(kind, match=feed_match(msgs[1]), **fields)
    r = run(args, jl(*msgs), timeout=15)
    check_fault_row(r, msgs, settled_posts(sb)["counts"], feed_requests(sb, msgs[1]), outcome, posted, requests, status,
                    hangs=name.startswith("hang"))


def test_connection_refused_is_network(run, sb):
    port = closed_port()
    r = run(["--retries", "0", "--api-base", "http://127.0.0.1:%d" % port], jl("nowhere"), api_base=False,
            timeout=10)
    assert r.returncode == 1, r
    err = r.envelopes[0]["error"]
    assert err["kind"] == "network" and "status" not in err and err["attempts"] == 1, r


def test_connection_refused_with_batch_is_network_for_each_record(run, sb):
    port = closed_port()
    r = run(["--retries", "0", "--batch", "5", "--api-base", "http://127.0.0.1:%d" % port],
            jl("refused batch one", "refused batch two"), api_base=False, timeout=10)
    assert r.returncode == 1, r
    for e in r.envelopes:
        assert e["error"]["kind"] == "network" and e["error"]["attempts"] == 1, e


def test_default_parallelism_is_one(run, sb):
    for msg in ("serial-one", "serial-two"):
        sb.fault("delay", match=feed_match(msg), ms=700)
    r = run([], jl("serial-one", "serial-two"), timeout=30)
    assert r.returncode == 0, r
    first, second = feed_requests(sb)
    assert second["time"] >= first["time"] + 0.65, (first["time"], second["time"])


def test_streaming_each_line_is_posted_when_it_arrives(bin_path, fb_env, sb):
    with Running(bin_path, fb_env()) as tool:
        tool.write(jl("streamed-one"))
        first = tool.out.get(timeout=5)
        assert first is not None
        assert parse_envelope(first)["ok"] is True
        assert posts_of(sb)["counts"] == {"streamed-one": 1}
        tool.write(jl("streamed-two"))
        assert parse_envelope(tool.out.get(timeout=5))["line"] == 2
        tool.p.stdin.close()
        assert tool.out.rest(timeout=5) == []
        assert tool.p.wait(timeout=5) == 0


# --------------------------------------------------------------------------------------
# 9. usage and configuration errors
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("args", [["--batch", "1"], ["--batch", "51"], ["--batch", "0"], ["--batch", "x"],
                                  ["--batch=51"], ["--graph-version", "27"], ["--graph-version", "v27"],
                                  ["--graph-version", "v27.1"], ["--graph-version", "27.0"], ["--bogus"]],
                         ids=lambda a: " ".join(a))
def test_usage_errors_exit_2_and_send_nothing(run, sb, args):
    r = run(args, jl("never read"))
    assert_usage_error(r, TOOL)
    assert sb.log() == []


@pytest.mark.parametrize("args", COST_OPTIONS, ids=lambda a: a[0])
def test_fb_feed_has_no_cost_options(run, sb, args):
    """Contract §7: Graph requests have no price, so none of the X tools' cost options."""
    assert_no_cost_option(run(args, jl("never read")), sb, TOOL, args)


def test_a_run_shows_no_cost_and_reads_no_prices(run, tmp_path):
    assert_no_cost_shown(lambda env: run([], jl("priced nowhere", "priced nowhere"), extra=env), TOOL, tmp_path)


def test_usage_error_comes_before_the_missing_credentials(run, sb):
    r = run(["--batch", "1"], jl("never read"), token=None)
    assert_usage_error(r, TOOL)


def test_no_credentials_anywhere_is_exit_3(run, sb, home):
    r = run([], jl("no credentials", "second"), token=None)
    assert r.returncode == 3, r
    assert r.stdout == b"", r
    assert b"FB_ACCESS_TOKEN" in r.stderr and b"fb-auth device" in r.stderr, r
    r = run([], jl("only a secret"), token=None, secret=APP_SECRET)
    assert r.returncode == 3 and r.stdout == b"", r
    # A dry run too (contract §3's exit table, issue 20 item 11).
    r = run(["--dry-run"], jl("no credentials"), token=None)
    assert r.returncode == 3 and r.stdout == b"" and b"no Facebook credentials" in r.stderr, r
    # A profile with a facebook section but no access_token: the profile and the field are named.
    write_private(credentials_path(home), {"default": "page", "profiles": {"page": {"facebook": {"app_id": FB_APP_ID}}}})
    r = run([], jl("no token"), token=None)
    assert r.returncode == 3 and r.stdout == b"", r
    assert r.stderr == b'fb-feed: profile "page" has no facebook.access_token: fb-auth device --profile page\n', r
    assert sb.log() == []


def test_a_revoked_page_token_of_a_profile_says_how_to_get_it_again(run, sb, home):
    write_private(credentials_path(home), {"default": "page", "profiles": {"page": {"facebook": {
        "access_token": PAGE_TOKEN, "token_type": "page", "user_access_token": USER_TOKEN}}}})
    sb.control(revoke_token=PAGE_TOKEN)
    r = run([], jl("revoked"), token=None)
    err = check_graph_error(r.envelopes[0], "auth", code="190", attempts=1)
    assert err["message"].endswith("; get a new user token and the Page's token again with: fb-auth device --profile page, "
                                   "then fb-auth pages --profile page --store PAGE_ID"), err


def test_help_and_version(bin_path, fb_env):
    p = subprocess.run([bin_path, "--help"], capture_output=True, env=fb_env(), timeout=10)
    assert p.returncode == 0, p
    for opt in (b"--batch", b"--graph-version", b"--allow-legacy-fields"):
        assert opt in p.stdout, (opt, p.stdout)
    p = subprocess.run([bin_path, "--version"], capture_output=True, env=fb_env(), timeout=10)
    assert p.returncode == 0 and re.fullmatch(rb"fb-feed \S+\n", p.stdout), p


def test_a_token_in_the_answer_never_reaches_stdout(run, sb):
    """params.fields lets a record ask for fields of the created post; an answer that
    carries a token (field expansion such as from{access_token}) is redacted."""
    sb.fault("status", match=feed_match("answer-with-a-token"), status=200,
             body={"id": PAGE + "_1", "from": {"id": PAGE, "access_token": PAGE_TOKEN}})
    r = run([], jl({"message": "answer-with-a-token", "params": {"fields": "id,from"}}))
    [e] = r.envelopes
    assert e["ok"] is True, e
    assert e["result"] == {"id": PAGE + "_1", "from": {"id": PAGE, "access_token": "[redacted]"}}, e
    assert PAGE_TOKEN.encode() not in r.stdout

