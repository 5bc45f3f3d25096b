"""Issue 17, item 1: one number from the server (or the credentials file) must
not crash a tool. Each header or field a tool reads a time or a wait from is fed
0, -1, 1e300, inf, nan, 2^63 and text: the run ends with exit 0 or 1 and one
envelope per record, never a signal. A wait beyond --max-wait ends as rate_limit,
with `reset` only when the time is a real date; an absurd lifetime is treated as
no known expiry; a refresh's new pair reaches the file whatever the numbers
beside it; a credentials value out of range is exit 3 naming profile and key."""
import json
import time

import pytest

from toolenv import (FB_APP_TOKEN, FB_PAGE_TOKEN, FB_USER1, FB_USER2, clean_env, credentials_path, fb_credentials, jl,
                     run_tool, write_private, x_credentials)

# Each as an HTTP header value; `json` marks those that can also be a JSON number or string.
NUMBERS = ["0", "-1", "1e300", "inf", "nan", "9223372036854775808", "text"]
# Those that name a wait (or a time) no run can make, so that waiting would never end.
ENDLESS = {"1e300", "inf", "9223372036854775808"}
# The same as JSON text in an answer: inf and nan as JavaScript writes them (not JSON at all).
JSON_NUMBERS = {"0": "0", "-1": "-1", "1e300": "1e300", "inf": "Infinity", "nan": "NaN",
                "9223372036854775808": "9223372036854775808", "text": '"text"'}
SIGNALS = "a signal (a trap in the tool)"

TWEETS = {"method": "POST", "path": "/2/tweets"}
FOLLOWS_1001 = "1000000000000000014"
FOLLOWING = {"method": "GET", "path": "/2/users/%s/following" % FOLLOWS_1001}
FEED = "POST /{id}/feed"
PERMISSIONS = "GET /{id}/permissions"


def x_run(tool, home, sb, name, args, stdin, extra=None):
    env = clean_env(home, dict(x_credentials(), TW_API_BASE=sb.url, **(extra or {})))
    r = run_tool(tool(name), env, args, stdin, timeout=60)
    assert r.returncode in (0, 1), (SIGNALS, r)
    return r


def fb_run(tool, home, sb, name, args, stdin, token):
    env = clean_env(home, dict(fb_credentials(token), FB_API_BASE=sb.url))
    r = run_tool(tool(name), env, args, stdin, timeout=60)
    assert r.returncode in (0, 1), (SIGNALS, r)
    return r


def assert_endless_wait(error):
    """A rate limit whose end is no date: not waited for, and no `reset`."""
    assert error["kind"] == "rate_limit", error
    assert "reset" not in error, error


# --------------------------------------------------------------------------------------
# X: Retry-After, x-rate-limit-reset, the 24-hour caps
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("value", NUMBERS)
def test_retry_after_of_a_429_on_a_post(tool, home, sb, value):
    sb.fault("status", match=TWEETS, status=429, headers={"Retry-After": value})
    r = x_run(tool, home, sb, "tw-post", [], jl("after a 429 " + value))
    [e] = r.envelopes
    if value in ENDLESS:
        assert_endless_wait(e["error"])
        assert e["error"]["attempts"] == 1, e
    else:
        # 0 goes again at once; a value that is no wait is ignored for the usual backoff.
        assert e["ok"], e


@pytest.mark.parametrize("value", NUMBERS)
def test_retry_after_of_a_503_on_a_page(tool, home, sb, value):
    sb.fault("status", match=FOLLOWING, status=503, skip=1, headers={"Retry-After": value})
    r = x_run(tool, home, sb, "tw-friends", ["--page-size", "500"], jl("follows_1001"))
    if value in ENDLESS:
        *accounts, last = r.envelopes
        assert len(accounts) == 500 and all(e["ok"] for e in accounts), r
        assert last["error"]["kind"] == "http" and last["error"]["status"] == 503, last
        assert "beyond --max-wait" in last["error"]["message"], last
        assert last["error"]["resume"]["username"] == "follows_1001", last
    else:
        assert len(r.envelopes) == 1001 and all(e["ok"] for e in r.envelopes), r


@pytest.mark.parametrize("value", NUMBERS)
def test_rate_limit_reset_of_an_exhausted_window(tool, home, sb, value):
    # The first page says the window is spent until `value`; the second must wait for it.
    sb.fault("headers", match=FOLLOWING, headers={"x-rate-limit-remaining": "0", "x-rate-limit-reset": value})
    r = x_run(tool, home, sb, "tw-friends", ["--page-size", "500"], jl("follows_1001"))
    if value in ENDLESS:
        *accounts, last = r.envelopes
        assert len(accounts) == 500, r
        assert_endless_wait(last["error"])
        assert last["error"]["resume"]["pagination_token"], last
    else:
        # A reset already past (0, -1) or unreadable (nan, text) holds nothing back.
        assert len(r.envelopes) == 1001 and all(e["ok"] for e in r.envelopes), r


@pytest.mark.parametrize("value", NUMBERS)
@pytest.mark.parametrize("scope", ["user", "app"])
def test_twenty_four_hour_reset_of_a_spent_cap(tool, home, sb, value, scope):
    sb.fault("headers", match=TWEETS, headers={"x-%s-limit-24hour-remaining" % scope: "0",
                                                "x-%s-limit-24hour-reset" % scope: value})
    r = x_run(tool, home, sb, "tw-post", [], jl("cap spent " + value + scope, "after the cap " + value + scope))
    first, second = r.envelopes
    assert first["ok"], first
    if value in ENDLESS:
        assert_endless_wait(second["error"])
        assert second["error"]["attempts"] == 0, second
    else:
        assert second["ok"], second


# --------------------------------------------------------------------------------------
# Graph: estimated_time_to_regain_access
# --------------------------------------------------------------------------------------

def usage_with_regain(text):
    return ('{"call_count":100,"total_cputime":50,"total_time":50,"estimated_time_to_regain_access":%s}'
            % JSON_NUMBERS[text])


@pytest.mark.parametrize("value", NUMBERS)
def test_regain_time_of_a_throttled_page_post(tool, home, sb, value):
    sb.fault("error", match={"method": "POST", "endpoint": FEED}, code=32, headers={"X-App-Usage": usage_with_regain(value)})
    r = fb_run(tool, home, sb, "fb-feed", [], jl("throttled " + value, "after " + value), FB_PAGE_TOKEN)
    first, second = r.envelopes
    if value == "1e300":
        # Minutes beyond any date: never waited for, and no reset is named.
        for e in (first, second):
            assert_endless_wait(e["error"])
    else:
        # No regain time to read (jansson cannot hold 2^63 either): the post backs off and goes again.
        assert first["ok"] and second["ok"], r


@pytest.mark.parametrize("value", NUMBERS)
def test_regain_time_on_a_permissions_read(tool, home, sb, value):
    sb.fault("headers", match={"endpoint": PERMISSIONS}, headers={"X-App-Usage": usage_with_regain(value)})
    r = fb_run(tool, home, sb, "fb-perm-check", ["-j", "1"],
               jl({"permission": "email", "user": FB_USER1}, {"permission": "email", "user": FB_USER2}), FB_APP_TOKEN)
    first, second = r.envelopes
    assert first["ok"], first
    if value == "1e300":
        assert_endless_wait(second["error"])
    else:
        assert second["ok"], second


# --------------------------------------------------------------------------------------
# Token lifetimes: an OAuth 2.0 refresh, debug_token's times
# --------------------------------------------------------------------------------------

REFRESHABLE, REFRESH = "sandbox-oauth2-refreshable-token", "sandbox-oauth2-refresh-token"
SECRETS_HERE = (REFRESHABLE, REFRESH)


def write_oauth2_profile(home, expires_at):
    path = credentials_path(home)
    section = {"client_id": "sandbox-oauth2-client-id", "access_token": REFRESHABLE, "refresh_token": REFRESH,
               "expires_at": expires_at, "scopes": "tweet.read tweet.write users.read offline.access"}
    write_private(path, {"default": "o2", "profiles": {"o2": {"twitter": {"oauth2": section}}}})
    return path


@pytest.mark.parametrize("value", NUMBERS + ["7200"])
def test_a_refresh_saves_the_new_pair_whatever_its_lifetime_says(tool, home, sb, value):
    path = write_oauth2_profile(home, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 10)))
    sb.fault("patch", match={"method": "POST", "path": "/2/oauth2/token"},
             members={"expires_in": JSON_NUMBERS.get(value, value)})
    env = clean_env(home, {"TW_API_BASE": sb.url})
    r = run_tool(tool("tw-post"), env, [], jl("after a refresh " + value), timeout=30,
                 secrets=SECRETS_HERE)
    assert r.returncode in (0, 1), (SIGNALS, r)
    stored = json.loads(path.read_text())["profiles"]["o2"]["twitter"]["oauth2"]
    if value in ("inf", "nan"):
        # Not JSON at all: the answer cannot be read, and the record says the refresh failed.
        [e] = r.envelopes
        assert e["error"]["kind"] == "auth" and "tw-auth oauth2 --profile o2" in e["error"]["message"], e
        return
    [e] = r.envelopes
    assert e["ok"], e
    assert stored["access_token"] != REFRESHABLE and stored["refresh_token"] != REFRESH, "the new pair is saved"
    if value == "7200":
        assert abs(time.mktime(time.strptime(stored["expires_at"], "%Y-%m-%dT%H:%M:%SZ")) - time.timezone
                   - (time.time() + 7200)) < 60, stored
    else:
        # No lifetime that is a date: no expiry is kept (the token is used until refused).
        assert "expires_at" not in stored, stored


@pytest.mark.parametrize("value", ["0", "-1", "1e300", "9223372036854775807", "text"])
def test_debug_token_times_that_are_no_date(tool, home, sb, value):
    answer = {"data": {"app_id": "100000000000001", "type": "USER", "is_valid": True, "user_id": FB_USER1,
                       "scopes": ["email"], "expires_at": "@", "data_access_expires_at": "@"}}
    body = json.dumps(answer).replace('"@"', JSON_NUMBERS.get(value, value))
    sb.fault("status", match={"batch_item": True}, status=200, body=body, count=None)
    env = clean_env(home, dict(fb_credentials("sandbox-fb-user-token", secret="sandbox-app-secret",
                                              app_id="100000000000001"), FB_API_BASE=sb.url))
    r = run_tool(tool("fb-perm-check"), env, ["--token"], jl({"permission": "email"}), timeout=30)
    assert r.returncode in (0, 1), (SIGNALS, r)
    [e] = r.envelopes
    token = e["result"]["token"]
    assert token["expires_at"] is None and token["data_access_expires_at"] is None, token


# --------------------------------------------------------------------------------------
# The credentials file
# --------------------------------------------------------------------------------------

BAD_TIMES = [1e300, -1e300, 1e19, -1, "soon", True]
X_TOOLS = [("tw-post", []), ("tw-friends", []), ("tw-auth", ["status"])]
FB_TOOLS = [("fb-feed", []), ("fb-perm-check", [])]


@pytest.mark.parametrize("value", BAD_TIMES)
@pytest.mark.parametrize("name,args", X_TOOLS)
def test_an_oauth2_expiry_out_of_range_is_a_configuration_error(tool, home, sb, value, name, args):
    write_oauth2_profile(home, value)
    env = clean_env(home, {"TW_API_BASE": sb.url})
    r = run_tool(tool(name), env, args, jl("never sent"), timeout=30, secrets=SECRETS_HERE)
    assert r.returncode == 3, r
    message = r.stderr.decode()
    assert 'profile "o2"' in message and "twitter.oauth2.expires_at" in message, message
    assert sb.log() == []


@pytest.mark.parametrize("value", BAD_TIMES)
@pytest.mark.parametrize("name,args", FB_TOOLS)
def test_a_facebook_expiry_out_of_range_is_a_configuration_error(tool, home, sb, value, name, args):
    path = credentials_path(home)
    write_private(path, {"default": "page", "profiles": {"page": {"facebook": {
        "access_token": FB_PAGE_TOKEN, "token_type": "user", "expires_at": value}}}})
    env = clean_env(home, {"FB_API_BASE": sb.url})
    r = run_tool(tool(name), env, args, jl("never sent"), timeout=30)
    assert r.returncode == 3, r
    message = r.stderr.decode()
    assert 'profile "page"' in message and "facebook.expires_at" in message, message
    assert sb.log() == []


@pytest.mark.parametrize("value", [0, 1798106400, 1798106400.5, "2026-12-24T10:00:00Z", None])
def test_expiry_times_in_range_are_read(tool, home, sb, value):
    path = credentials_path(home)
    write_private(path, {"default": "page", "profiles": {"page": {"facebook": {
        "access_token": FB_PAGE_TOKEN, "token_type": "page", "expires_at": value}}}})
    r = run_tool(tool("fb-feed"), clean_env(home, {"FB_API_BASE": sb.url}), ["--dry-run"], jl("fine"), timeout=30)
    assert r.returncode == 0, r
