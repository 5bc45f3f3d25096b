"""End-to-end tests of `fb-perm-check` (spec: issue 10 and the interface notes of issues 9/10;
contract: docs/contract.md §1-§6; Graph API: docs/reference/graph-api.md §3-§5, §7, §9;
sandbox: sandbox/README.md §2, §4-§6).

Every test runs the built binary (`$SOCIALPIPE_BIN/fb-perm-check`) as a subprocess in a
scrubbed environment (temporary HOME and XDG_CONFIG_HOME, no other TW_*/FB_*/
SOCIALPIPE_* variables, no proxies) with a Facebook token of the sandbox's demo world
and FB_API_BASE pointing at the local API sandbox (sandbox/), started once for this
module and reset before every test. Every run also checks that no token, app token or
app secret ever appears on stdout or stderr and that every stdout line is a well-formed
envelope (contract §2).

The sandbox's demo users (README §2):
  300000000000001 (token sandbox-fb-user-token): pages_manage_posts granted, email
      declined, user_posts expired;
  300000000000002 (sandbox-fb-user2-token): email granted, pages_manage_posts declined;
  300000000000003 (sandbox-fb-user3-token): user_posts granted, pages_show_list declined,
      pages_manage_posts expired;
and the app token `100000000000001|sandbox-app-secret` reads any of their permissions.

What was sent is read back from the sandbox's request log (`sb.log()`, every token,
input_token and appsecret_proof masked, with per-item details of batches).

Sections:
  1. statuses: granted / declined / expired / not_requested; list records; user ids;
     shorthand strings, -R, positional arguments; key order
  2. legacy names: status `removed`, replacement, message; no request when only those
  3. one request per (credentials, user): 100 records over 3 users, all in flight at once,
     records arriving while the answer is pending and after it; profiles
  4. shared errors: revoked token, app token on `me` (2500), a failing user among others
  5. exit statuses and -q
  6. --token: valid, expired, revoked, data access lapsed, another app; exit 3 without app id/secret
  7. no token in any URL, on stdout or on stderr; appsecret_proof
  8. throttling (code 17): regain time beyond --max-wait, none (backoff), retries exhausted
  9. input, usage and configuration errors
 10. answers read in place (issue 17): a large answer, one past the size cap, names listed twice
"""
import json
import os
import re
import subprocess
import time
import urllib.parse

import pytest

from toolenv import (FB_APP_ID as APP_ID, FB_APP_SECRET as APP_SECRET, FB_APP_TOKEN as APP_TOKEN,
                     FB_DATA_LAPSED_TOKEN as LAPSED_TOKEN, FB_DATA_EXPIRED_TOKEN as DATA_EXPIRED_TOKEN,
                     FB_EXPIRED_USER_TOKEN as EXPIRED_USER_TOKEN,
                     FB_SECURE_APP_SECRET as SECURE_APP_SECRET, FB_SECURE_PAGE_TOKEN as SECURE_PAGE_TOKEN,
                     FB_SUBCODE_MEANINGS as SUBCODE_MEANINGS, FB_USER1 as USER1, FB_USER2 as USER2,
                     FB_USER2_TOKEN as USER2_TOKEN, FB_USER3 as USER3, FB_USER3_TOKEN as USER3_TOKEN,
                     FB_USER_TOKEN as USER_TOKEN, FB_PAGE_TOKEN as PAGE_TOKEN)
from toolenv import (COST_OPTIONS, SANDBOX_SECRETS, Running, assert_fresh_accepted_proofs, assert_no_cost_option,
                     assert_no_cost_shown, assert_no_secrets,
                     assert_no_token_in_urls, assert_usage_error, batch_items, batch_requests, check_api_error_extras,
                     check_graph_error, check_throttled_without_waiting, credentials_path, iso_to_epoch, jl,
                     parse_envelope, peak_rss_while_answering, throttle_fault, wait_for_fault_hit, write_private)

TOOL = "fb-perm-check"
FB_TOKEN = USER_TOKEN               # the token of `run` and `fb_env` (conftest) unless a test names another
# A made-up token some runs inspect: never on stdout or stderr either (contract §4). The sandbox's
# tokens and app secrets are in SANDBOX_SECRETS (the app token holds the app secret).
EXTRA_SECRETS = ("not-a-sandbox-token",)
FB_SECRETS = SANDBOX_SECRETS + EXTRA_SECRETS

USERS = (USER1, USER2, USER3)
LAPSED_AT = "2025-07-01T00:00:00Z"           # its data_access_expires_at, 1751328000
TOKEN_OF = {USER1: USER_TOKEN, USER2: USER2_TOKEN, USER3: USER3_TOKEN}

# What each configured user granted, declined or let expire (sandbox default-config.json).
STATUS = {
    USER1: {"public_profile": "granted", "email": "declined", "pages_show_list": "granted",
            "pages_manage_posts": "granted", "pages_read_engagement": "granted", "user_posts": "expired",
            "publish_to_groups": "declined"},
    USER2: {"public_profile": "granted", "email": "granted", "pages_show_list": "granted",
            "pages_read_engagement": "granted", "pages_manage_posts": "declined"},
    USER3: {"public_profile": "granted", "user_posts": "granted", "pages_show_list": "declined",
            "pages_manage_posts": "expired", "pages_read_engagement": "expired"},
}
ASKED = ["email", "pages_manage_posts", "user_posts", "pages_show_list", "instagram_basic"]

# The spec's removed legacy names and today's permission for each.
REMOVED = {"status_update": "pages_manage_posts", "publish_stream": "pages_manage_posts",
           "publish_actions": "pages_manage_posts", "manage_pages": "pages_show_list",
           "read_stream": "pages_read_engagement"}

VERSION = "v27.0"
PERMISSIONS = "GET /{id}/permissions"     # the sandbox log's endpoint key


# --------------------------------------------------------------------------------------
# helpers (the Graph ones every Facebook tool needs are in toolenv.py, the fixtures
# `run` (= fb_run) and `fb_env` in conftest.py)
# --------------------------------------------------------------------------------------

@pytest.fixture
def run(fb_run):
    """run(args, stdin, token=USER_TOKEN, secret=None, app_id=None, api_base=True, extra=None,
    timeout=30) -> toolenv.Run, after checking that no token or secret reached stdout or stderr."""
    return fb_run


def with_app(token=USER_TOKEN):
    """Keyword arguments of `run` for credentials with the sandbox app's id and secret (--token)."""
    return {"token": token, "secret": APP_SECRET, "app_id": APP_ID}


def perm_requests(sb, user=None):
    """Log entries of GET /{user}/permissions (optionally of one path segment: me or an id)."""
    entries = [e for e in sb.log(service="facebook") if e["endpoint"] == PERMISSIONS]
    if user is None:
        return entries
    return [e for e in entries if e["path"] == "/%s/%s/permissions" % (VERSION, user)]


def debug_token_items(sb):
    """Every debug_token item of every batch request, with its logged batch entry."""
    out = []
    for e in batch_requests(sb):
        for item, logged in zip(batch_items(e), e.get("batch") or []):
            if item["relative_url"].split("?")[0].rstrip("/").endswith("debug_token"):
                out.append((item, logged))
    return out


def single(user, name, status):
    """The result of a single-permission record (key order: user, permission, status, granted)."""
    return {"user": user, "permission": name, "status": status, "granted": status == "granted"}


def check_result(env, expected):
    """A successful envelope whose result equals `expected`, keys in the same order."""
    assert env["ok"] is True, env
    got = env["result"]
    assert got == expected, env
    assert list(got) == list(expected), ("result keys out of order", list(got), list(expected))


def perm_path(user):
    return "/%s/%s/permissions" % (VERSION, user)


def many_records(n=100):
    """n records over the three users (single and list records mixed), and what each must answer."""
    records, expected = [], []
    for i in range(n):
        user = USERS[i % 3]
        if i % 4 == 3:
            names = [ASKED[(i + k) % len(ASKED)] for k in range(3)]
            records.append({"permissions": names, "user": user})
            table = {name: STATUS[user].get(name, "not_requested") for name in names}
            expected.append({"user": user, "granted": all(s == "granted" for s in table.values()),
                             "permissions": table})
        else:
            name = ASKED[i % len(ASKED)]
            records.append({"permission": name, "user": user})
            expected.append(single(user, name, STATUS[user].get(name, "not_requested")))
    return records, expected


def assert_answers(r, expected, first_line=1):
    got = r.by_line()
    assert sorted(got) == list(range(first_line, first_line + len(expected))), sorted(got)
    for i, want in enumerate(expected):
        check_result(got[first_line + i], want)


# --------------------------------------------------------------------------------------
# 1. statuses
# --------------------------------------------------------------------------------------

def test_granted_declined_expired_and_not_requested(run, sb):
    r = run([], jl({"permission": "pages_manage_posts"}, {"permission": "email"},
                   {"permission": "user_posts"}, {"permission": "instagram_basic"}))
    assert r.returncode == 1, r
    assert [e["line"] for e in r.envelopes] == [1, 2, 3, 4], r
    check_result(r.envelopes[0], single("me", "pages_manage_posts", "granted"))
    check_result(r.envelopes[1], single("me", "email", "declined"))
    check_result(r.envelopes[2], single("me", "user_posts", "expired"))
    check_result(r.envelopes[3], single("me", "instagram_basic", "not_requested"))
    for e in r.envelopes:
        assert e["input"] == {"permission": e["result"]["permission"]}, e
    [req] = perm_requests(sb)
    assert req["path"] == perm_path("me") and req["status"] == 200, req
    assert req["auth"]["credential"] == "fb-user", req["auth"]


def test_all_granted_exits_0(run, sb):
    r = run([], jl("pages_manage_posts", "public_profile", {"permissions": ["pages_show_list",
                                                                          "pages_read_engagement"]}))
    assert r.returncode == 0, r
    assert all(e["ok"] and e["result"]["granted"] is True for e in r.envelopes), r
    assert len(perm_requests(sb)) == 1


def test_list_record_is_granted_only_if_all_are(run, sb):
    r = run([], jl({"permissions": ["pages_manage_posts", "pages_read_engagement"]},
                   {"permissions": ["pages_manage_posts", "email", "user_posts", "instagram_basic"]},
                   {"permissions": ["public_profile"], "user": "me"}))
    assert r.returncode == 1, r
    check_result(r.envelopes[0], {"user": "me", "granted": True,
                                  "permissions": {"pages_manage_posts": "granted", "pages_read_engagement": "granted"}})
    check_result(r.envelopes[1], {"user": "me", "granted": False,
                                  "permissions": {"pages_manage_posts": "granted", "email": "declined",
                                                  "user_posts": "expired", "instagram_basic": "not_requested"}})
    assert list(r.envelopes[1]["result"]["permissions"]) == ["pages_manage_posts", "email", "user_posts",
                                                             "instagram_basic"], "names in the order asked"
    check_result(r.envelopes[2], {"user": "me", "granted": True, "permissions": {"public_profile": "granted"}})
    assert len(perm_requests(sb)) == 1


def test_user_ids_with_the_app_token(run, sb):
    """The app token reads each user's permissions by id; `user` in the result is as asked
    (a string of digits, also when the record gave an integer)."""
    r = run([], jl({"permission": "email", "user": USER1}, {"permission": "email", "user": int(USER2)},
                   {"permission": "pages_manage_posts", "user": USER3},
                   {"permissions": ["user_posts", "pages_show_list"], "user": USER3}), token=APP_TOKEN)
    assert r.returncode == 1, r
    check_result(r.envelopes[0], single(USER1, "email", "declined"))
    check_result(r.envelopes[1], single(USER2, "email", "granted"))
    assert r.envelopes[1]["input"] == {"permission": "email", "user": int(USER2)}, r.envelopes[1]
    check_result(r.envelopes[2], single(USER3, "pages_manage_posts", "expired"))
    check_result(r.envelopes[3], {"user": USER3, "granted": False,
                                  "permissions": {"user_posts": "granted", "pages_show_list": "declined"}})
    assert sorted(e["path"] for e in perm_requests(sb)) == sorted(perm_path(u) for u in USERS)
    for e in perm_requests(sb):
        assert e["auth"]["token_type"] == "APP", e["auth"]


def test_each_users_own_token_sees_its_permissions(run, sb):
    r = run([], jl("email", "pages_manage_posts", "user_posts"), token=USER2_TOKEN)
    assert [e["result"]["status"] for e in r.envelopes] == ["granted", "declined", "not_requested"], r
    r = run([], jl("email", "pages_manage_posts", "user_posts"), token=USER3_TOKEN)
    assert [e["result"]["status"] for e in r.envelopes] == ["not_requested", "expired", "granted"], r
    assert [e["auth"]["user_id"] for e in perm_requests(sb)] == [USER2, USER3]


def test_shorthand_raw_input_and_positional_arguments(run, sb):
    r = run([], b'"pages_manage_posts"\n\n"email"\n')
    assert r.returncode == 1, r
    assert [e["line"] for e in r.envelopes] == [1, 3], "blank lines are counted"
    check_result(r.envelopes[0], single("me", "pages_manage_posts", "granted"))
    assert r.envelopes[1]["input"] == {"permission": "email"}, r.envelopes[1]
    check_result(r.envelopes[1], single("me", "email", "declined"))

    r = run(["-R"], b"pages_manage_posts\r\nuser_posts\n")
    assert [e["input"] for e in r.envelopes] == [{"permission": "pages_manage_posts"},
                                                 {"permission": "user_posts"}], r
    assert [e["result"]["status"] for e in r.envelopes] == ["granted", "expired"], r

    r = run(["pages_manage_posts", "public_profile"], b'"email"\n')
    assert r.returncode == 0, ("positional arguments replace stdin", r)
    assert [(e["line"], e["input"]) for e in r.envelopes] == [(1, {"permission": "pages_manage_posts"}),
                                                              (2, {"permission": "public_profile"})], r
    r = run(["--", "email"])
    assert r.returncode == 1 and r.envelopes[0]["result"]["status"] == "declined", r
    assert len(perm_requests(sb)) == 4, "one request per run"


def test_graph_version_option_and_environment(run, sb):
    r = run(["--graph-version", "v25.0"], jl("email"))
    assert r.envelopes[0]["ok"], r
    r = run([], jl("email"), extra={"FB_GRAPH_VERSION": "v24.0"})
    assert r.envelopes[0]["ok"], r
    assert [e["path"] for e in perm_requests(sb)] == ["/v25.0/me/permissions", "/v24.0/me/permissions"]


def test_verbose_shows_each_request_without_secrets(run, sb):
    r = run(["-v"], jl("email", "pages_manage_posts"), secret=APP_SECRET)
    err = r.stderr.decode()
    assert re.search(r"GET http://127\.0\.0\.1:[0-9]+/v27\.0/me/permissions", err), err
    assert "200 GET" in err and "facebook-api-version=v27.0" in err, err
    assert "appsecret_proof=" not in err or "appsecret_proof=[" in err, ("the proof is redacted", err)


# --------------------------------------------------------------------------------------
# 2. legacy names
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(REMOVED))
def test_removed_legacy_name_has_replacement_and_message_and_sends_nothing(run, sb, name):
    r = run([], jl(name))
    assert r.returncode == 1, ("a removed permission is not granted", r)
    [e] = r.envelopes
    assert e["ok"] is True, e
    res = e["result"]
    assert list(res) == ["user", "permission", "status", "granted", "replacement", "message"], res
    assert res["user"] == "me" and res["permission"] == name, res
    assert res["status"] == "removed" and res["granted"] is False, res
    assert res["replacement"] == REMOVED[name], res
    assert isinstance(res["message"], str) and name in res["message"], res
    assert REMOVED[name] in res["message"], ("the message says what to use today", res)
    assert sb.log() == [], "nothing to ask the API about a removed permission"


def test_publish_to_groups_is_removed_and_nothing_replaces_it(run, sb):
    """The Groups API went on 2024-04-22 (graph-api.md §3): removed, even where the user's
    permissions still list it, with a null replacement."""
    r = run([], jl("publish_to_groups", {"permissions": ["publish_to_groups", "pages_manage_posts"]}))
    assert r.returncode == 1, r
    first, second = r.envelopes
    res = first["result"]
    assert res["status"] == "removed" and res["granted"] is False and res["replacement"] is None, res
    assert "2024-04-22" in res["message"], res
    check_result(second, {"user": "me", "granted": False,
                          "permissions": {"publish_to_groups": "removed", "pages_manage_posts": "granted"},
                          "removed": {"publish_to_groups": None}})


def test_a_page_token_is_told_to_ask_with_a_user_token(run, sb):
    """`me` of a Page token is a Page, which has no permissions edge (code 100): the error
    says which token to ask with instead."""
    r = run([], jl("pages_manage_posts"), token=PAGE_TOKEN)
    assert r.returncode == 1, r
    err = check_graph_error(r.envelopes[0], "http", code="100", attempts=1)
    assert "Page token" in err["message"] and "user" in err["message"], err


def test_a_name_that_is_no_permission_is_warned_about_even_with_quiet(run, sb):
    """A misspelt name still answers not_requested (exit 1), but stderr names the nearest known
    permission, once a run, also under -q in a Makefile; known and removed names are not warned about."""
    stdin = jl("pages_manage_post", {"permissions": ["pages_manage_post", "email"]}, "publish_actions",
               "pages_manage_posts", "zzzz_not_a_thing")
    for quiet in ([], ["-q"]):
        r = run(quiet, stdin)
        assert r.returncode == 1, r
        lines = r.stderr.decode().splitlines()
        warnings = [line for line in lines if "not a known Graph permission" in line]
        assert warnings == [
            'fb-perm-check: "pages_manage_post" is not a known Graph permission: did you mean pages_manage_posts?',
            'fb-perm-check: "zzzz_not_a_thing" is not a known Graph permission '
            '(fb-perm-check --list-permissions lists the known ones)'], r.stderr
        if not quiet:
            check_result(r.envelopes[0], single("me", "pages_manage_post", "not_requested"))
            check_result(r.envelopes[3], single("me", "pages_manage_posts", "granted"))


def test_list_permissions_prints_the_known_names_and_reads_nothing(bin_path, sb):
    """The one list the completions offer: one name a line, current names only; no credentials,
    no input, nothing sent."""
    p = subprocess.run([bin_path, "--list-permissions"], capture_output=True, stdin=subprocess.PIPE,
                       env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}, timeout=10)
    assert p.returncode == 0 and p.stderr == b"", p
    names = p.stdout.decode().split("\n")
    assert names[-1] == "" and all(re.fullmatch(r"[a-z_]+", n) for n in names[:-1]), p.stdout
    names = names[:-1]
    assert len(names) == len(set(names)) and {"pages_manage_posts", "pages_read_engagement", "pages_show_list",
                                              "public_profile", "email", "instagram_basic"} <= set(names), names
    assert not set(names) & (set(REMOVED) | {"publish_to_groups"}), names
    assert sb.log() == []


def test_a_page_token_profile_with_its_user_token_is_a_gate(run, sb, home):
    """The profile "Getting credentials" ends with (fb-auth pages --store: a Page token,
    token_type page, the user token beside it as user_access_token) asks for the permissions with
    the user token (said under -v); --token still inspects the Page token itself."""
    write_private(credentials_path(home), {"default": "page", "profiles": {"page": {"facebook": {
        "access_token": PAGE_TOKEN, "token_type": "page", "user_access_token": USER_TOKEN,
        "app_id": APP_ID, "app_secret": APP_SECRET}}}})
    r = run(["-v"], jl("pages_manage_posts", "email"), token=None)
    assert r.returncode == 1, r
    check_result(r.envelopes[0], single("me", "pages_manage_posts", "granted"))
    check_result(r.envelopes[1], single("me", "email", "declined"))
    assert r.stderr.decode().count('profile "page" holds a Page token') == 1, r.stderr
    [req] = perm_requests(sb)
    assert req["auth"]["user_id"] == USER1 and req["path"] == perm_path("me"), req
    assert "appsecret_proof" in req["query"] and req["auth"]["outcome"] == "ok", req
    r = run(["-q", "--profile", "page"], jl("pages_manage_posts"), token=None)
    assert r.returncode == 0 and r.stderr == b"", r
    r = run(["--token"], jl("pages_manage_posts"), token=None)
    assert r.returncode == 0, r
    assert r.envelopes[0]["result"]["token"]["type"] == "PAGE", r.envelopes[0]
    assert 'holds a Page token' not in r.stderr.decode(), ("said only under -v", r.stderr)


def test_list_of_only_removed_names_sends_nothing(run, sb):
    r = run([], jl({"permissions": list(REMOVED)}, {"permissions": ["publish_actions"], "user": USER2}),
            token=USER_TOKEN)
    assert r.returncode == 1, r
    check_result(r.envelopes[0], {"user": "me", "granted": False,
                                  "permissions": {n: "removed" for n in REMOVED}, "removed": dict(REMOVED)})
    check_result(r.envelopes[1], {"user": USER2, "granted": False, "permissions": {"publish_actions": "removed"},
                                  "removed": {"publish_actions": "pages_manage_posts"}})
    assert sb.log() == []


def test_list_mixing_removed_and_current_names(run, sb):
    r = run([], jl({"permissions": ["manage_pages", "pages_show_list", "read_stream", "email"]}))
    assert r.returncode == 1, r
    check_result(r.envelopes[0], {"user": "me", "granted": False,
                                  "permissions": {"manage_pages": "removed", "pages_show_list": "granted",
                                                  "read_stream": "removed", "email": "declined"},
                                  "removed": {"manage_pages": "pages_show_list",
                                              "read_stream": "pages_read_engagement"}})
    assert len(perm_requests(sb)) == 1


# --------------------------------------------------------------------------------------
# 3. one request per (credentials, user)
# --------------------------------------------------------------------------------------

def test_100_records_over_3_users_make_3_requests(run, sb):
    records, expected = many_records(100)
    r = run([], jl(*records), token=APP_TOKEN)
    assert_answers(r, expected)
    assert r.returncode == 1, r
    reqs = perm_requests(sb)
    assert sorted(e["path"] for e in reqs) == sorted(perm_path(u) for u in USERS), [e["path"] for e in reqs]
    assert len(sb.log()) == 3


@pytest.mark.parametrize("parallel", [[], ["-j", "1"], ["-j", "16"]], ids=["default", "j1", "j16"])
def test_100_records_read_before_the_first_answer_still_make_3_requests(run, sb, parallel):
    """300 ms before every answer and all 100 lines piped at once: every record is read
    (and waits) while the first requests are in flight; they share them."""
    sb.control(latency_ms=300)
    records, expected = many_records(100)
    r = run(parallel, jl(*records), token=APP_TOKEN, timeout=20)
    assert_answers(r, expected)
    reqs = perm_requests(sb)
    assert sorted(e["path"] for e in reqs) == sorted(perm_path(u) for u in USERS), [e["path"] for e in reqs]
    assert len(sb.log()) == 3
    assert r.elapsed < 5, ("100 records are answered by 3 requests, not 100", r.elapsed)


def test_100_records_over_3_profiles_make_3_requests(run, sb, home):
    """Profiles with each user's own token: one request per profile, `me` each time."""
    write_private(credentials_path(home), {
        "default": "u1",
        "profiles": {"u%d" % i: {"facebook": {"access_token": TOKEN_OF[u]}} for i, u in enumerate(USERS, 1)}})
    sb.control(latency_ms=200)
    records, expected = [], []
    for i in range(100):
        k = i % 3
        name = ASKED[i % len(ASKED)]
        records.append({"permission": name, "profile": "u%d" % (k + 1)})
        expected.append(single("me", name, STATUS[USERS[k]].get(name, "not_requested")))
    r = run([], jl(*records), token=None, timeout=20)
    assert_answers(r, expected)
    reqs = perm_requests(sb)
    assert len(reqs) == 3, [(e["path"], e["auth"]) for e in reqs]
    assert sorted(e["auth"]["user_id"] for e in reqs) == sorted(USERS)
    assert all(e["path"] == perm_path("me") for e in reqs)


def test_the_same_user_through_other_credentials_is_asked_again(run, sb, home):
    """One request per (credentials, user): the same user via the app token and via a
    profile holding the user's own token are two requests, each shared by its records."""
    write_private(credentials_path(home), {"profiles": {"own": {"facebook": {"access_token": USER_TOKEN}}}})
    recs = []
    for i in range(10):
        recs.append({"permission": "email", "user": USER1})
        recs.append({"permission": "email", "user": USER1, "profile": "own"})
    r = run([], jl(*recs), token=APP_TOKEN)
    assert all(e["ok"] and e["result"]["status"] == "declined" for e in r.envelopes), r
    reqs = perm_requests(sb)
    assert sorted(e["auth"]["credential"] for e in reqs) == sorted(["app:" + APP_ID, "fb-user"]), reqs


def test_records_arriving_while_the_answer_is_pending_or_after_it_share_it(bin_path, fb_env, sb):
    """All of one user's records share one request: those read while it is in flight and
    those read after its answer came (one request per run)."""
    delays = [sb.fault("delay", match={"path": perm_path(u)}, ms=1500) for u in USERS]
    records, expected = many_records(130)
    with Running(bin_path, fb_env(APP_TOKEN)) as tool:
        tool.write(jl(*records[:60]))
        assert all(wait_for_fault_hit(sb, f, 5) for f in delays), "the three requests never went out"
        tool.write(jl(*records[60:100]))                  # while all three answers are pending
        first = [tool.out.get(timeout=10) for _ in range(100)]
        time.sleep(0.2)
        tool.write(jl(*records[100:]))                    # after every answer came
        tool.p.stdin.close()
        rest = tool.out.rest(timeout=10)
        rc = tool.p.wait(timeout=10)
    assert_no_secrets(b"".join(first + rest), tool.stderr, secrets=FB_SECRETS)
    envs = [parse_envelope(l) for l in first + rest]
    assert [e["line"] for e in envs] == list(range(1, 131)), [e["line"] for e in envs]
    for e, want in zip(envs, expected):
        check_result(e, want)
    assert rc == 1
    assert sorted(e["path"] for e in perm_requests(sb)) == sorted(perm_path(u) for u in USERS)


# --------------------------------------------------------------------------------------
# 4. shared errors
# --------------------------------------------------------------------------------------

def test_revoked_token_fails_every_record_with_one_request(run, sb):
    sb.control(revoke_token={"token": USER_TOKEN, "subcode": 460})
    recs = ["email", {"permissions": ["email", "user_posts"]}, "pages_manage_posts"] * 5
    r = run([], jl(*recs))
    assert r.returncode == 1, r
    assert len(r.envelopes) == 15, r
    messages = set()
    for e in r.envelopes:
        err = check_graph_error(e, "auth", code="190", status=400, attempts=1)
        check_api_error_extras(err)
        assert err["error_subcode"] == 460, err
        assert "(subcode 460: %s)" % SUBCODE_MEANINGS[460] in err["message"], err
        messages.add(err["message"])
    assert len(messages) == 1, ("the same error for every record", messages)
    assert len(perm_requests(sb)) == 1


def test_expired_token_is_auth_with_subcode_463_shared(run, sb):
    r = run([], jl("email", "pages_manage_posts", "user_posts"), token=EXPIRED_USER_TOKEN)
    assert r.returncode == 1, r
    for e in r.envelopes:
        err = check_graph_error(e, "auth", code="190", status=400, attempts=1)
        assert err["error_subcode"] == 463, err
        assert "Session has expired" in err["message"], ("the API's message is kept", err)
        assert "(subcode 463: the token has expired)" in err["message"], err
    assert len(perm_requests(sb)) == 1


def test_app_token_asking_about_me_is_auth_2500_shared(run, sb):
    r = run([], jl("email", {"permissions": ["email"]}, {"permission": "email", "user": USER2}, "user_posts"),
            token=APP_TOKEN)
    assert r.returncode == 1, r
    got = r.by_line()
    for line in (1, 2, 4):
        err = check_graph_error(got[line], "auth", code="2500", status=400, attempts=1)
        check_api_error_extras(err)
        assert "current user" in err["message"], err
    check_result(got[3], single(USER2, "email", "granted"))
    assert sorted(e["path"] for e in perm_requests(sb)) == sorted([perm_path("me"), perm_path(USER2)])


def test_an_error_for_one_user_is_shared_by_its_records_only(run, sb):
    sb.control(latency_ms=100)
    sb.fault("error", match={"path": perm_path(USER2)}, code=10, count=None,
             message="(#10) Application does not have permission for this action")
    records, expected = many_records(60)
    r = run([], jl(*records), token=APP_TOKEN)
    assert r.returncode == 1, r
    got = r.by_line()
    for i, rec in enumerate(records, 1):
        if rec["user"] == USER2:
            err = check_graph_error(got[i], "permission", code="10", status=403, attempts=1)
            assert "(#10)" in err["message"], err
        else:
            check_result(got[i], expected[i - 1])
    assert len(perm_requests(sb, USER2)) == 1, "the error answer is shared, not asked again per record"
    assert len(perm_requests(sb)) == 3


def test_a_transient_error_is_retried_once_for_all_records_of_the_user(run, sb):
    sb.fault("error", match={"path": perm_path(USER3)}, code=2, status=503)
    records, expected = many_records(30)
    r = run([], jl(*records), token=APP_TOKEN, timeout=20)
    assert_answers(r, expected)
    assert len(perm_requests(sb, USER3)) == 2, "one failed request and one retry, shared by every record"
    assert len(perm_requests(sb)) == 4


# --------------------------------------------------------------------------------------
# 5. exit statuses and -q
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("quiet", [[], ["-q"], ["--quiet"]], ids=["loud", "q", "quiet"])
def test_exit_statuses(run, sb, quiet):
    cases = [
        (jl("pages_manage_posts", {"permissions": ["public_profile", "pages_show_list"]}), USER_TOKEN, 0),
        (jl("pages_manage_posts", "email"), USER_TOKEN, 1),                      # one declined
        (jl({"permissions": ["pages_manage_posts", "user_posts"]}), USER_TOKEN, 1),   # one expired in a list
        (jl("pages_manage_posts", "instagram_basic"), USER_TOKEN, 1),            # not requested
        (jl("pages_manage_posts", "publish_actions"), USER_TOKEN, 1),            # removed
        (jl("pages_manage_posts", "Not A Name"), USER_TOKEN, 1),                 # a failed record (input)
        (jl("pages_manage_posts"), EXPIRED_USER_TOKEN, 1),                       # a failed record (auth)
        (jl("email"), USER2_TOKEN, 0),
    ]
    for stdin, token, status in cases:
        r = run(quiet, stdin, token=token)
        assert r.returncode == status, (stdin, token, r)
        if quiet:
            assert r.stdout == b"", ("-q writes nothing on stdout", r)
        else:
            assert len(r.envelopes) == stdin.count(b"\n"), r


def test_quiet_still_exits_2_and_3(run, sb):
    r = run(["-q", "--bogus"], jl("email"))
    assert_usage_error(r, TOOL)
    r = run(["-q"], jl("email"), token=None)
    assert r.returncode == 3 and r.stdout == b"", r
    assert sb.log() == []


def test_quiet_gate_in_a_shell(bin_path, fb_env, sb):
    """`fb-perm-check -q NAME && …`: the shell's `&&` sees the answer."""
    env = fb_env()
    script = '"$0" -q pages_manage_posts && echo allowed; "$0" -q email && echo allowed-email; echo done'
    p = subprocess.run(["sh", "-c", script, bin_path], capture_output=True, env=env, timeout=20)
    assert p.stdout == b"allowed\ndone\n", p
    assert_no_secrets(p.stdout, p.stderr, secrets=FB_SECRETS)


# --------------------------------------------------------------------------------------
# 6. --token
# --------------------------------------------------------------------------------------

def check_token_object(token, user_id, scopes, data_access_expires_at=None):
    assert list(token) == ["is_valid", "type", "app_id", "user_id", "expires_at", "data_access_expires_at",
                           "scopes"], token
    assert token["is_valid"] is True and token["type"] == "USER", token
    assert token["app_id"] == APP_ID and token["user_id"] == user_id, token
    assert token["expires_at"] is None, ("expires_at 0 (never) is shown as null", token)
    if data_access_expires_at is None:
        # issued at sandbox start + 90 days
        lapse = iso_to_epoch(token["data_access_expires_at"])
        assert time.time() + 89 * 86400 < lapse < time.time() + 91 * 86400, token
    else:
        assert token["data_access_expires_at"] == data_access_expires_at, token
    assert token["scopes"] == scopes, token


def test_token_valid_adds_the_token_object(run, sb):
    r = run(["--token"], jl("pages_manage_posts", {"permissions": ["pages_show_list", "pages_read_engagement"]}),
            **with_app())
    assert r.returncode == 0, r
    first, second = r.envelopes
    res = first["result"]
    assert list(res) == ["user", "permission", "status", "granted", "token"], res
    assert res["status"] == "granted" and res["granted"] is True, res
    check_token_object(res["token"], USER1, ["public_profile", "pages_show_list", "pages_manage_posts",
                                             "pages_read_engagement"])
    assert list(second["result"]) == ["user", "granted", "permissions", "token"], second
    assert second["result"]["token"] == res["token"], second
    assert len(perm_requests(sb)) == 1
    items = debug_token_items(sb)
    assert items, "debug_token was asked"
    for item, logged in items:
        assert item["method"] == "GET" and item["relative_url"].startswith("debug_token?input_token="), item
        assert logged["status"] == 200, logged


def test_token_of_another_user(run, sb):
    r = run(["--token"], jl("email", "pages_manage_posts"), **with_app(USER2_TOKEN))
    assert r.returncode == 1, r
    assert [e["result"]["status"] for e in r.envelopes] == ["granted", "declined"], r
    for e in r.envelopes:
        check_token_object(e["result"]["token"], USER2, ["public_profile", "email", "pages_show_list",
                                                         "pages_read_engagement"])


def test_token_debug_token_goes_in_a_batch_with_the_app_token(run, sb):
    """debug_token is asked with the app token (APP_ID|APP_SECRET) in the Authorization header;
    the inspected token is in the batch body, never in a URL."""
    r = run(["--token"], jl("email"), **with_app())
    assert r.envelopes[0]["ok"], r
    [batch] = batch_requests(sb)
    assert batch["path"] == "/%s/" % VERSION, batch
    assert "input_token" not in batch["query"] and "access_token" not in batch["query"], batch["query"]
    assert batch["headers"]["authorization"].lower().startswith("bearer "), batch["headers"]
    assert batch["auth"]["token_type"] == "APP" and batch["auth"]["credential"] == "app:" + APP_ID, batch["auth"]
    [item] = batch_items(batch)
    assert item["relative_url"] == "debug_token?input_token=[masked]", item
    assert "access_token" not in json.dumps(item), item


def test_token_expired_is_auth_with_the_subcode_meaning(run, sb):
    r = run(["--token"], jl("email", "publish_actions"), **with_app(EXPIRED_USER_TOKEN))
    assert r.returncode == 1, r
    for e in r.envelopes:
        err = check_graph_error(e, "auth", code="190", attempts=1)
        assert err["error_subcode"] == 463, err
        assert "(subcode 463: the token has expired)" in err["message"], err


@pytest.mark.parametrize("subcode", [458, 460, 467])
def test_token_revoked_is_auth_with_the_subcode_meaning(run, sb, subcode):
    sb.control(revoke_token={"token": USER_TOKEN, "subcode": subcode})
    # publish_actions alone needs no /permissions: the verdict is debug_token's.
    r = run(["--token"], jl("publish_actions", "email"), **with_app())
    assert r.returncode == 1, r
    for e in r.envelopes:
        err = check_graph_error(e, "auth", code="190", attempts=1)
        assert err["error_subcode"] == subcode, err
        assert "(subcode %d: %s)" % (subcode, SUBCODE_MEANINGS[subcode]) in err["message"], err


def test_token_with_lapsed_data_access(run, sb):
    """Valid, never expires, but data access lapsed on 2025-07-01: every granted permission
    reads `expired` and the token object shows the past date and no scopes."""
    r = run(["--token"], jl("pages_manage_posts", "email", {"permissions": ["public_profile", "pages_show_list"]}),
            **with_app(LAPSED_TOKEN))
    assert r.returncode == 1, r
    first, second, third = r.envelopes
    assert first["result"]["status"] == "expired" and first["result"]["granted"] is False, first
    assert second["result"]["status"] == "declined", second
    assert third["result"]["permissions"] == {"public_profile": "expired", "pages_show_list": "expired"}, third
    for e in r.envelopes:
        check_token_object(e["result"]["token"], USER1, [], data_access_expires_at=LAPSED_AT)
    [req] = perm_requests(sb)
    assert req["auth"].get("data_access") == "expired", req["auth"]


def test_lapsed_token_without_token_option_reads_expired(run, sb):
    r = run([], jl("pages_manage_posts"), token=LAPSED_TOKEN)
    assert r.returncode == 1, r
    check_result(r.envelopes[0], single("me", "pages_manage_posts", "expired"))


@pytest.mark.parametrize("args", [[], ["--token"]])
def test_token_refused_for_lapsed_data_access_is_auth_saying_to_log_in_again(run, sb, args):
    """Contract §7: 190 with subcode 493, from /permissions or from debug_token, ends
    every record `auth`, its message naming fb-auth device; one request shared."""
    extra = with_app(DATA_EXPIRED_TOKEN) if args else {"token": DATA_EXPIRED_TOKEN}
    r = run(args, jl("pages_manage_posts", {"permissions": ["email", "public_profile"]}), **extra)
    assert r.returncode == 1, r
    for e in r.envelopes:
        err = check_graph_error(e, "auth", code="190", attempts=1)
        assert err["error_subcode"] == 493, err
        assert "The user's data access for this app has expired" in err["message"], err
        # Issue 20: then the command that fixes it (the token is the environment's).
        remedy = ("; the token comes from FB_ACCESS_TOKEN: set a new one, or unset it and get a new token "
                  "with: fb-auth device --profile default, or fb-auth exchange --profile default")
        assert err["message"].endswith("(subcode 493: %s)" % SUBCODE_MEANINGS[493] + remedy), err
    assert r.stderr.endswith(b"fb-perm-check: 2 of 2 failed (auth 2)\n"), r.stderr
    assert len(perm_requests(sb)) == 1


def test_token_of_another_app_removed_names_only(run, sb):
    """Only debug_token is asked (publish_actions needs no /permissions): the proof-requiring
    app's token inspected with app 100000000000001's id and secret is `auth`, saying so."""
    r = run(["--token"], jl("publish_actions"), **with_app(SECURE_PAGE_TOKEN))
    assert r.returncode == 1, r
    err = check_graph_error(r.envelopes[0], "auth", attempts=1)
    assert "another app" in err["message"], err
    assert len(debug_token_items(sb)) == 1 and perm_requests(sb) == []


def test_token_of_another_app(run, sb):
    """The record asks a current permission: with --token the record still ends `auth`
    saying that the token belongs to another app (not a bare appsecret_proof refusal)."""
    r = run(["--token"], jl("pages_manage_posts", {"permissions": ["pages_show_list"]}),
            **with_app(SECURE_PAGE_TOKEN))
    assert r.returncode == 1, r
    for e in r.envelopes:
        err = check_graph_error(e, "auth")
        assert "another app" in err["message"], err


def test_token_needs_app_id_and_secret_exit_3(run, sb):
    for kw in ({"secret": None, "app_id": None}, {"secret": APP_SECRET, "app_id": None},
               {"secret": None, "app_id": APP_ID}):
        r = run(["--token"], jl("email"), **kw)
        assert r.returncode == 3, (kw, r)
        assert r.stdout == b"", r
        assert b"FB_APP_ID" in r.stderr and b"FB_APP_SECRET" in r.stderr, r
        r = run(["--token", "-q"], jl("email"), **kw)
        assert r.returncode == 3, (kw, r)
    assert sb.log() == []


def test_token_with_a_profile(run, sb, home):
    write_private(credentials_path(home), {
        "default": "main",
        "profiles": {"main": {"facebook": {"access_token": USER3_TOKEN, "app_id": APP_ID,
                                           "app_secret": APP_SECRET}}}})
    r = run(["--token"], jl("user_posts"), token=None)
    assert r.returncode == 0, r
    check_token_object(r.envelopes[0]["result"]["token"], USER3, ["public_profile", "user_posts"])
    [req] = perm_requests(sb)
    assert "appsecret_proof" in req["query"] and req["auth"]["outcome"] == "ok", req


# --------------------------------------------------------------------------------------
# 7. no token in any URL, on stdout or on stderr; appsecret_proof
# --------------------------------------------------------------------------------------

def test_no_token_in_any_url_or_output(run, sb):
    """Plain, --token, errors, -v and --dry-run, with and without a secret: `run` checks
    stdout and stderr for every token and secret; the log for URLs."""
    runs = [run(["-v"], jl("email", "pages_manage_posts"), secret=APP_SECRET),
            run(["-v", "--token"], jl("email", "publish_actions"), **with_app()),
            run(["-v", "--token"], jl("email"), **with_app(LAPSED_TOKEN)),
            run(["-v", "--token"], jl("email"), **with_app(EXPIRED_USER_TOKEN)),
            run(["-v", "--token"], jl("publish_actions"), **with_app("not-a-sandbox-token")),
            run(["-v"], jl({"permission": "email", "user": USER2}), token=APP_TOKEN),
            run(["-v", "--dry-run"], jl("email", {"permission": "email", "user": USER3}), secret=APP_SECRET),
            run(["-v", "--dry-run", "--token"], jl("email", "publish_actions"), **with_app())]
    assert [len(r.envelopes) for r in runs] == [2, 2, 1, 1, 1, 1, 2, 2]
    assert_no_token_in_urls(sb)
    assert debug_token_items(sb), "--token asked debug_token"
    for r in runs[6:]:
        for e in r.envelopes:
            req = e["result"]["request"]
            assert set(req) == {"method", "url", "headers", "body"}, req
            assert "access_token" not in req["url"], req
            assert "access_token" not in (req.get("body") or ""), req
    dry = runs[6].envelopes[0]["result"]["request"]
    assert dry["method"] == "GET", dry
    assert urllib.parse.urlsplit(dry["url"]).path == perm_path("me"), dry
    assert any(h.lower().startswith("authorization: bearer ") and "redacted" in h.lower() for h in dry["headers"]), dry


def test_dry_run_with_token_shows_no_input_token_in_a_url(run, sb):
    """With --token the inspected token travels in the body of a batch POST, never in a
    URL; --dry-run shows the request as it would be sent, so its URL has no input_token
    either (the value is redacted, but a URL carrying it is what the design avoids)."""
    r = run(["--dry-run", "--token"], jl("publish_actions", "email"), **with_app())
    assert len(r.envelopes) == 2, r
    for e in r.envelopes:
        req = e["result"]["request"]
        assert "input_token" not in req["url"] and "access_token" not in req["url"], req
    assert sb.log() == []


def test_dry_run_sends_nothing(run, sb):
    r = run(["--dry-run"], jl("email", {"permissions": ["email", "user_posts"], "user": USER2}))
    assert len(r.envelopes) == 2 and all(e["ok"] for e in r.envelopes), r
    urls = [urllib.parse.urlsplit(e["result"]["request"]["url"]).path for e in r.envelopes]
    assert urls == [perm_path("me"), perm_path(USER2)], urls
    assert sb.log() == []


def test_app_secret_adds_an_accepted_proof_to_every_permissions_request(run, sb):
    r = run([], jl({"permission": "email", "user": USER1}, {"permission": "email", "user": USER2}),
            token=APP_TOKEN, secret=APP_SECRET)
    assert all(e["ok"] for e in r.envelopes), r
    r = run(["--token"], jl("email"), **with_app())
    assert r.envelopes[0]["ok"], r
    entries = perm_requests(sb)
    assert len(entries) == 3, entries
    assert_fresh_accepted_proofs(entries)


def test_no_secret_no_proof(run, sb):
    r = run([], jl("email"))
    assert r.envelopes[0]["ok"], r
    [e] = perm_requests(sb)
    assert "appsecret_proof" not in e["query"] and "appsecret_time" not in e["query"], e["query"]


def test_proof_requiring_app_with_its_secret(run, sb):
    """sandbox-fb-secure-page-token is a Page token: /permissions is not a Page's edge (code
    100), but the proof is accepted."""
    r = run([], jl("pages_manage_posts"), token=SECURE_PAGE_TOKEN, secret=SECURE_APP_SECRET)
    assert r.returncode == 1, r
    check_graph_error(r.envelopes[0], "http", code="100", attempts=1)
    [e] = perm_requests(sb)
    assert e["auth"]["outcome"] == "ok", e["auth"]
    r = run([], jl("pages_manage_posts"), token=SECURE_PAGE_TOKEN)
    err = check_graph_error(r.envelopes[0], "auth", code="100", attempts=1)
    assert "appsecret_proof" in err["message"], err


# --------------------------------------------------------------------------------------
# 8. throttling (as in issue 7 / fb-feed)
# --------------------------------------------------------------------------------------

def test_throttle_with_regain_beyond_max_wait_fails_now_and_stops_the_token(run, sb):
    """Code 17 with 1 minute to regain, --max-wait 0: the record is rate_limit with reset, and
    the later records on the same token (other users asked with it) are not sent."""
    throttle_fault(sb, {"path": perm_path("me")}, 17, regain=1)
    t0 = time.time()
    r = run(["-j", "1", "--max-wait", "0"],
            jl("email", {"permission": "email", "user": USER1}, {"permissions": ["email"], "user": USER1}),
            timeout=10)
    check_throttled_without_waiting(r, t0, "17", regain=1, records=3, status=403)
    assert [e["path"] for e in perm_requests(sb)] == [perm_path("me")], "later records on the token are not sent"


def test_throttle_regain_beyond_default_max_wait(run, sb):
    throttle_fault(sb, {"path": perm_path("me")}, 17, regain=60)
    t0 = time.time()
    r = run(["-j", "1"], jl("email", {"permission": "email", "user": USER1}), timeout=10)
    check_throttled_without_waiting(r, t0, "17", regain=60, records=2)
    assert len(perm_requests(sb)) == 1


def test_throttle_shared_by_the_records_of_that_request(run, sb):
    throttle_fault(sb, {"path": perm_path("me")}, 17, regain=5)
    r = run(["--max-wait", "0"], jl("email", "pages_manage_posts", {"permissions": ["user_posts"]}), timeout=10)
    assert r.returncode == 1, r
    for e in r.envelopes:
        err = check_graph_error(e, "rate_limit")
        assert "reset" in err, e
    assert len(perm_requests(sb)) == 1


def test_throttle_without_regain_backs_off_and_resends(run, sb):
    throttle_fault(sb, {"path": perm_path("me")}, 17)     # no usage header: back off
    r = run([], jl("pages_manage_posts", "public_profile"), timeout=20)
    assert r.returncode == 0, r
    assert [e["result"]["status"] for e in r.envelopes] == ["granted", "granted"], r
    refused, accepted = perm_requests(sb)
    assert (refused["status"], accepted["status"]) == (403, 200)
    assert r.elapsed < 10, r


def test_throttle_without_regain_exhausts_retries_and_stops_the_token(run, sb):
    throttle_fault(sb, {"path": perm_path("me")}, 17, count=None)
    r = run(["-j", "1", "--retries", "2"], jl("email", {"permission": "email", "user": USER1}), timeout=20)
    assert r.returncode == 1, r
    first, second = r.envelopes
    check_graph_error(first, "rate_limit", code="17", status=403, attempts=3)
    check_graph_error(second, "rate_limit", attempts=0)
    assert [e["path"] for e in perm_requests(sb)] == [perm_path("me")] * 3


def test_sandbox_user_budget_gives_code_17(run, sb):
    """The sandbox's own user budget, 2 calls an hour: the third run's request is refused
    with code 17 (no regain time: with --retries 0, rate_limit at once)."""
    sb.control(facebook_limits={"user": {"limit": 2, "window": 3600}})
    for _ in range(2):
        r = run([], jl("pages_manage_posts"))
        assert r.returncode == 0, r
    r = run(["--retries", "0"], jl("pages_manage_posts", {"permissions": ["email"]}), timeout=20)
    assert r.returncode == 1, r
    for e in r.envelopes:
        check_graph_error(e, "rate_limit", code="17", status=403, attempts=1)
    assert len(perm_requests(sb)) == 3


# --------------------------------------------------------------------------------------
# 9. input, usage and configuration errors
# --------------------------------------------------------------------------------------

def test_input_errors_are_per_line_and_never_sent(run, sb):
    lines = [b"not json",                                               # 1
             jl({"permission": "Email"}).strip(),                       # 2 upper case
             jl({"permission": "pages-manage"}).strip(),                # 3 hyphen
             jl({"permission": ""}).strip(),                            # 4 empty
             jl({"permission": 5}).strip(),                             # 5 not a string
             jl({"permissions": []}).strip(),                           # 6 empty list
             jl({"permissions": "email"}).strip(),                      # 7 not a list
             jl({"permissions": ["email", 1]}).strip(),                 # 8 not all strings
             jl({"permission": "email", "permissions": ["email"]}).strip(),   # 9 both
             jl({}).strip(),                                            # 10 neither
             jl({"permission": "email", "user": "abc"}).strip(),        # 11 user not digits
             b'{"permission":"email","permission":"email"}',            # 12 duplicate key
             b"[1]",                                                    # 13 not an object
             jl({"permission": "email", "user": "300000000000001x"}).strip()]   # 14
    r = run([], b"\n".join(lines) + b"\n")
    assert r.returncode == 1, r
    assert [e["line"] for e in r.envelopes] == list(range(1, 15)), r
    for e in r.envelopes:
        assert e["ok"] is False and e["error"]["kind"] == "input", e
        assert e["error"]["attempts"] == 0, e
    assert sb.log() == []


@pytest.mark.parametrize("record,key,nearest", [
    ({"permision": "email"}, "permision", "permission"),
    ({"permission": "email", "usr": USER2}, "usr", "user"),
    ({"permissions": ["email"], "profiles": "main"}, "profiles", "profile"),
    ({"permission": "email", "scope": "x"}, "scope", None),
], ids=["permision", "usr", "profiles", "scope"])
def test_a_record_with_an_unknown_key_is_input_naming_it_and_the_nearest_known_one(run, sb, record, key, nearest):
    """Issue 17 §5: `{"permission":"email","usr":"…"}` asked about the token's own user."""
    r = run([], jl(record, "email"), token=APP_TOKEN if "usr" in record else USER_TOKEN)
    assert r.returncode == 1, r
    first, second = r.envelopes
    assert first["ok"] is False and first["error"]["kind"] == "input" and first["error"]["attempts"] == 0, first
    message = first["error"]["message"]
    assert '"%s"' % key in message, message
    if nearest:
        assert 'did you mean "%s"' % nearest in message, message
    assert second["line"] == 2, r
    assert all(e["path"] != perm_path(USER2) for e in perm_requests(sb)), "nothing is sent for the record"


def test_a_long_name_is_not_quoted_whole(run, sb):
    """A name of a megabyte (--max-line raised) is refused with its start, not all of it."""
    name = "x" * 1_000_000 + "!"
    r = run(["--max-line", "2000000"], jl({"permission": name}))
    [e] = r.envelopes
    assert e["error"]["kind"] == "input", e
    assert len(e["error"]["message"]) < 300 and "x" * 100 + "…" in e["error"]["message"], e
    assert sb.log() == []


def test_unknown_profile_is_auth_for_that_record(run, sb, home):
    write_private(credentials_path(home), {"default": "main",
                                           "profiles": {"main": {"facebook": {"access_token": USER_TOKEN}},
                                                        "x-only": {"twitter": {"bearer_token": "b"}}}})
    r = run([], jl("pages_manage_posts", {"permission": "email", "profile": "missing"},
                   {"permission": "email", "profile": "x-only"}, "public_profile"), token=None)
    assert r.returncode == 1, r
    got = r.by_line()
    assert got[1]["ok"] and got[4]["ok"], r
    for line in (2, 3):
        assert got[line]["error"]["kind"] == "auth" and got[line]["error"]["attempts"] == 0, got[line]
    assert len(perm_requests(sb)) == 1


@pytest.mark.parametrize("args", [["--bogus"], ["--graph-version", "27"], ["--graph-version", "v27"],
                                  ["--graph-version", "v27.1"], ["-j", "0"], ["--token=yes"],
                                  ["--max-line", "x"]],
                         ids=lambda a: " ".join(a))
def test_usage_errors_exit_2_and_send_nothing(run, sb, args):
    r = run(args, jl("email"))
    assert_usage_error(r, TOOL)
    assert sb.log() == []


@pytest.mark.parametrize("args", COST_OPTIONS, ids=lambda a: a[0])
def test_fb_perm_check_has_no_cost_options(run, sb, args):
    """Contract §7: Graph requests have no price, so none of the X tools' cost options."""
    assert_no_cost_option(run(args, jl("never read")), sb, TOOL, args)


def test_a_run_shows_no_cost_and_reads_no_prices(run, tmp_path):
    assert_no_cost_shown(lambda env: run([], jl("pages_manage_posts", {"permission": 5}), extra=env), TOOL, tmp_path)


def test_usage_error_comes_before_the_missing_credentials(run, sb):
    r = run(["--graph-version", "27"], jl("email"), token=None)
    assert_usage_error(r, TOOL)


def test_no_credentials_anywhere_is_exit_3(run, sb):
    r = run([], jl("email"), token=None)
    assert r.returncode == 3 and r.stdout == b"", r
    assert b"FB_ACCESS_TOKEN" in r.stderr, r
    r = run(["pages_manage_posts"], b"", token=None, secret=APP_SECRET, app_id=APP_ID)
    assert r.returncode == 3 and r.stdout == b"", ("an app id and secret are no token", r)
    assert sb.log() == []


def test_help_and_version(bin_path, fb_env):
    p = subprocess.run([bin_path, "--help"], capture_output=True, env=fb_env(), timeout=10)
    assert p.returncode == 0 and b"--token" in p.stdout and b"--graph-version" in p.stdout, p
    p = subprocess.run([bin_path, "--version"], capture_output=True, env=fb_env(), timeout=10)
    assert p.returncode == 0 and re.fullmatch(rb"fb-perm-check [0-9][^\n]*\n", p.stdout), p


# --------------------------------------------------------------------------------------
# 10. answers read in place (issue 17)
# --------------------------------------------------------------------------------------

def permissions_answer(entries):
    """The JSON text of a /permissions answer listing (name, status) pairs, in order."""
    return json.dumps({"data": [{"permission": n, "status": s} for n, s in entries]}, separators=(",", ":"))


def answer_permissions_with(sb, body, count=1):
    """The next `count` /permissions requests are answered 200 with `body` (JSON text)."""
    return sb.fault("status", match={"endpoint": PERMISSIONS}, status=200, body=body, count=count)


def test_a_large_answer_is_read_in_place(bin_path, fb_env, sb):
    """An answer of 12 MB (270,000 entries) is read where it lies, not built into a
    jansson tree (200 MiB): peak RSS (VmHWM, read while the process is alive) stays
    within 2.5 times the answer (itself, and where its entries lie) plus 16 MiB, and the
    names asked about are found wherever they stand, by every record that shares it."""
    if not os.path.exists("/proc/self/status"):
        pytest.skip("needs /proc for VmHWM")
    made_up = [("made_up_%07d" % i, "granted") for i in range(270_000)]
    body = permissions_answer([("pages_manage_posts", "granted")] + made_up + [("email", "declined")])
    answer_permissions_with(sb, body)
    lines, peak, rc, err = peak_rss_while_answering(
        [bin_path], fb_env(), jl({"permissions": ["pages_manage_posts", "email", "user_posts"]}, "made_up_0135000"), lines=2)
    assert_no_secrets(*lines, err, secrets=FB_SECRETS)
    assert rc == 1, err
    table, single_ = [parse_envelope(line) for line in lines]
    check_result(table, {"user": "me", "granted": False, "permissions": {
        "pages_manage_posts": "granted", "email": "declined", "user_posts": "not_requested"}})
    check_result(single_, single("me", "made_up_0135000", "granted"))
    assert peak * 1024 <= 2.5 * len(body) + (16 << 20), "peak RSS %.1f MiB for an answer of %.1f MiB" % (
        peak / 1024, len(body) / 2 ** 20)
    assert len(perm_requests(sb)) == 1


def test_an_answer_past_the_size_cap_is_http_naming_the_cap_and_not_asked_again(run, sb):
    """Past 16 MiB an answer is not read to its end: each record that shares it ends
    `http`, after the one request (asked again, it would be as long again)."""
    made_up = [("made_up_%07d" % i, "granted") for i in range(400_000)]
    body = permissions_answer([("email", "granted")] + made_up)
    assert len(body) > 16 << 20
    answer_permissions_with(sb, body, count=None)
    r = run([], jl("email", {"permissions": ["email", "user_posts"]}), timeout=60)
    assert r.returncode == 1, r
    for e in r.envelopes:
        err = check_graph_error(e, "http", status=200, attempts=1)
        assert "16 MiB" in err["message"], err
    assert len(perm_requests(sb)) == 1


@pytest.mark.parametrize("first,second", [("declined", "granted"), ("granted", "declined")])
def test_a_name_listed_twice_with_two_statuses_is_http(run, sb, first, second):
    """Issue 17 §5: which of the two entries holds is a guess, and a guess must never
    read as granted. The records that ask about other names are answered."""
    answer_permissions_with(sb, permissions_answer([("email", first), ("public_profile", "granted"),
                                                    ("email", second)]))
    r = run([], jl("email", "public_profile", {"permissions": ["public_profile", "email"]}))
    assert r.returncode == 1, r
    got = r.by_line()
    for line in (1, 3):
        err = check_graph_error(got[line], "http", status=200, attempts=1)
        assert "inconsistent" in err["message"] and "email" in err["message"], err
    check_result(got[2], single("me", "public_profile", "granted"))
    assert len(perm_requests(sb)) == 1


def test_a_name_listed_twice_alike_is_answered(run, sb):
    answer_permissions_with(sb, permissions_answer([("email", "granted"), ("email", "granted")]))
    r = run([], jl("email"))
    assert r.returncode == 0, r
    check_result(r.envelopes[0], single("me", "email", "granted"))
