"""Rate limits: per endpoint and token, x-rate-limit-* headers, 24-hour posting
headers and caps, usage caps, and the Graph API's usage headers and codes."""
import json
import subprocess
import sys
import time

import pytest
import requests
from requests_oauthlib import OAuth1

import harness
from toolenv import oauth1  # Tests/conftest.py puts Tests/ on sys.path


@pytest.fixture(scope="module")
def limited():
    cfg = harness.merged_config(
        x={"rate_limits": {"GET /2/users/me": {"limit": 3, "window": 2},
                           "GET /2/users/by/username/:username": {"limit": 5, "window": 60, "app_limit": 2},
                           "POST /2/tweets": {"limit": 50, "window": 60},
                           "GET /1.1/friends/ids.json": {"limit": 1, "window": 60}},
           "post_caps": {"user": {"limit": 3, "window": 60}, "app": {"limit": 100, "window": 60}}},
        facebook={"limits": {"app": {"limit": 4, "window": 60}, "user": {"limit": 2, "window": 60},
                             "page": {"limit": 2, "window": 120}, "feed_post": None}})
    with harness.Sandbox.start(config=cfg) as sb:
        yield sb


@pytest.fixture
def rl(limited):
    limited.clear()
    return limited


def rate(r):
    return tuple(int(r.headers[h]) for h in ("x-rate-limit-limit", "x-rate-limit-remaining", "x-rate-limit-reset"))


def test_headers_count_down_then_429_then_reset(rl, demo):
    seen = [requests.get(rl.url + "/2/users/me", auth=oauth1(demo)) for _ in range(4)]
    assert [r.status_code for r in seen] == [200, 200, 200, 429]
    assert [rate(r)[:2] for r in seen] == [(3, 2), (3, 1), (3, 0), (3, 0)]
    assert seen[3].json() == {"title": "Too Many Requests", "detail": "Too Many Requests", "type": "about:blank",
                              "status": 429}
    reset = rate(seen[3])[2]
    assert time.time() <= reset <= time.time() + 3
    # Another token has its own window.
    jack = oauth1(demo, "12-sandboxjackaccesstoken", "sandbox-jack-token-secret")
    assert requests.get(rl.url + "/2/users/me", auth=jack).status_code == 200
    time.sleep(max(0.0, reset - time.time()) + 0.05)
    r = requests.get(rl.url + "/2/users/me", auth=oauth1(demo))
    assert (r.status_code, rate(r)[1]) == (200, 2)
    assert rl.log()[3]["rate_limited"] is True


def test_app_only_tokens_have_the_app_limit(rl, demo):
    bearer = {"Authorization": "Bearer sandbox-bearer-token"}
    codes = [requests.get(rl.url + "/2/users/by/username/jack", headers=bearer).status_code for _ in range(3)]
    assert codes == [200, 200, 429]
    assert requests.get(rl.url + "/2/users/by/username/jack", auth=oauth1(demo)).headers["x-rate-limit-limit"] == "5"


def test_401_has_no_rate_headers(rl, demo):
    r = requests.get(rl.url + "/2/users/me", auth=OAuth1(demo["consumer_key"], "bad", demo["access_token"], "bad"))
    assert r.status_code == 401 and "x-rate-limit-remaining" not in r.headers


def test_24_hour_posting_cap(rl, demo):
    rs = [requests.post(rl.url + "/2/tweets", json={"text": "post %d" % i}, auth=oauth1(demo)) for i in range(4)]
    assert [r.status_code for r in rs] == [201, 201, 201, 429]
    assert [r.headers["x-user-limit-24hour-remaining"] for r in rs] == ["2", "1", "0", "0"]
    assert rs[0].headers["x-app-limit-24hour-limit"] == "100"
    # The 15-minute window still has room: only the 24-hour headers explain the 429.
    assert int(rs[3].headers["x-rate-limit-remaining"]) > 0
    assert int(rs[3].headers["x-user-limit-24hour-reset"]) >= int(time.time())
    assert rl.posts()["total"] == 3


def test_usage_cap_is_a_distinct_429(rl, demo):
    rl.control(usage_cap={"consumer_key": demo["consumer_key"], "period": "Daily", "scope": "Account"})
    r = requests.get(rl.url + "/2/users/me", auth=oauth1(demo))
    assert r.status_code == 429
    body = r.json()
    assert body["type"].endswith("/2/problems/usage-capped")
    assert (body["period"], body["scope"]) == ("Daily", "Account")
    rl.control(usage_cap=None)
    assert requests.get(rl.url + "/2/users/me", auth=oauth1(demo)).status_code == 200


def test_v11_rate_limit_is_code_88(rl, demo):
    assert requests.get(rl.url + "/1.1/friends/ids.json", auth=oauth1(demo)).status_code == 200
    r = requests.get(rl.url + "/1.1/friends/ids.json", auth=oauth1(demo))
    assert (r.status_code, r.json()) == (429, {"errors": [{"code": 88, "message": "Rate limit exceeded"}]})


def test_limits_can_be_changed_at_runtime(rl, demo):
    rl.control(rate_limits={"GET /2/users/me": {"limit": 1, "window": 30}})
    assert requests.get(rl.url + "/2/users/me", auth=oauth1(demo)).status_code == 200
    assert requests.get(rl.url + "/2/users/me", auth=oauth1(demo)).status_code == 429
    rl.control(reset_rate_limits=True, rate_limits={"GET /2/users/me": {"limit": 3, "window": 2}})
    assert requests.get(rl.url + "/2/users/me", auth=oauth1(demo)).status_code == 200


def test_legacy_429_style(demo):
    cfg = harness.merged_config(x={"v2_429_style": "legacy",
                                   "rate_limits": {"GET /2/users/me": {"limit": 1, "window": 60}}})
    with harness.Sandbox.start(config=cfg) as sb:
        requests.get(sb.url + "/2/users/me", auth=oauth1(demo))
        r = requests.get(sb.url + "/2/users/me", auth=oauth1(demo))
        assert (r.status_code, r.json()["errors"][0]["code"]) == (429, 88)


# -- Graph ----------------------------------------------------------------------

def test_graph_user_and_app_limits(rl, fb):
    url = rl.url + "/v27.0/me"
    rs = [requests.get(url, params={"access_token": fb["user_token"]}) for _ in range(3)]
    assert [r.status_code for r in rs] == [200, 200, 403]
    assert [json.loads(r.headers["X-App-Usage"])["call_count"] for r in rs[:2]] == [25, 50]
    err = rs[2].json()["error"]
    assert (err["code"], err["message"], err["is_transient"]) == (17, "(#17) User request limit reached", True)
    app_token = "%s|%s" % (fb["app_id"], fb["app_secret"])
    rs = [requests.get(rl.url + "/v27.0/debug_token", params={"access_token": app_token,
                                                             "input_token": fb["user_token"]}) for _ in range(3)]
    assert [r.status_code for r in rs] == [200, 200, 403]
    assert rs[2].json()["error"]["code"] == 4
    assert json.loads(rs[2].headers["X-App-Usage"])["call_count"] == 100


def test_graph_page_limit_reports_business_use_case_usage(rl, fb):
    url = rl.url + "/v27.0/%s/feed" % fb["page_id"]
    rs = [requests.post(url, data={"message": "page %d" % i, "access_token": fb["page_token"]}) for i in range(3)]
    assert [r.status_code for r in rs] == [200, 200, 403]
    usage = json.loads(rs[1].headers["X-Business-Use-Case-Usage"])
    entry = usage[fb["page_id"]][0]
    assert (entry["type"], entry["call_count"], entry["estimated_time_to_regain_access"]) == ("pages", 100, 0)
    blocked = json.loads(rs[2].headers["X-Business-Use-Case-Usage"])[fb["page_id"]][0]
    assert blocked["estimated_time_to_regain_access"] == 2
    assert rs[2].json()["error"]["code"] == 32
    assert rl.posts()["total"] == 2


def test_graph_custom_feed_limit_is_613(fb):
    cfg = harness.merged_config(facebook={"limits": {"feed_post": {"limit": 1, "window": 60}}})
    with harness.Sandbox.start(config=cfg) as sb:
        url = sb.url + "/v27.0/%s/feed" % fb["page_id"]
        assert requests.post(url, data={"message": "one", "access_token": fb["page_token"]}).status_code == 200
        r = requests.post(url, data={"message": "two", "access_token": fb["page_token"]})
        assert (r.status_code, r.json()["error"]["code"]) == (400, 613)


# -- runtime changes through the control API --------------------------------------------------

def test_changing_a_limit_resets_the_open_windows_of_that_endpoint(rl, demo):
    bearer = {"Authorization": "Bearer sandbox-bearer-token"}
    # Another endpoint's exhausted window is left alone.
    assert [requests.get(rl.url + "/2/users/by/username/jack", headers=bearer).status_code
            for _ in range(3)] == [200, 200, 429]
    rl.control(rate_limits={"GET /2/users/me": {"limit": 1, "window": 900}})
    assert requests.get(rl.url + "/2/users/me", auth=oauth1(demo)).status_code == 200
    r = requests.get(rl.url + "/2/users/me", auth=oauth1(demo))
    assert r.status_code == 429 and rate(r)[2] >= time.time() + 800
    # Lowering the window must not leave the 900 s window open (tweepy slept 902 s).
    rl.control(rate_limits={"GET /2/users/me": {"limit": 1, "window": 3}})
    r = requests.get(rl.url + "/2/users/me", auth=oauth1(demo))
    assert (r.status_code, rate(r)[:2]) == (200, (1, 0))
    assert rate(r)[2] <= time.time() + 4
    assert requests.get(rl.url + "/2/users/by/username/jack", headers=bearer).status_code == 429


def test_post_caps_through_the_control_api(rl, demo):
    rl.control(post_caps={"user": {"limit": 1, "window": 3600}})
    assert rl.state()["x_post_caps"]["user"] == {"limit": 1, "window": 3600.0}
    rs = [requests.post(rl.url + "/2/tweets", json={"text": "capped %d" % i}, auth=oauth1(demo)) for i in range(2)]
    assert [r.status_code for r in rs] == [201, 429]
    assert [r.headers["x-user-limit-24hour-remaining"] for r in rs] == ["0", "0"]
    assert rs[1].headers["x-user-limit-24hour-limit"] == "1"
    assert int(rs[1].headers["x-user-limit-24hour-reset"]) >= time.time() + 3500
    r = requests.post(rl.url + "/1.1/statuses/update.json", data={"status": "capped v1.1"}, auth=oauth1(demo))
    assert (r.status_code, r.json()["errors"][0]["code"]) == (403, 185)
    # Changing a cap restarts its count; null lifts it (and its headers).
    rl.control(post_caps={"user": {"limit": 2, "window": 60}})
    r = requests.post(rl.url + "/2/tweets", json={"text": "capped 2"}, auth=oauth1(demo))
    assert (r.status_code, r.headers["x-user-limit-24hour-remaining"]) == (201, "1")
    rl.control(post_caps={"user": None, "app": {"limit": 1, "window": 60}})
    r = requests.post(rl.url + "/2/tweets", json={"text": "capped 3"}, auth=oauth1(demo))
    assert r.status_code == 201 and "x-user-limit-24hour-limit" not in r.headers
    assert r.headers["x-app-limit-24hour-remaining"] == "0"
    assert requests.post(rl.url + "/2/tweets", json={"text": "capped 4"}, auth=oauth1(demo)).status_code == 429
    # reset goes back to the configured caps (user 3 / 60 in this module).
    rl.clear()
    assert rl.state()["x_post_caps"] == {"user": {"limit": 3, "window": 60.0}, "app": {"limit": 100, "window": 60.0}}
    for bad in ({"users": {"limit": 1, "window": 60}}, {"user": {"limit": 1, "window": 60, "app_limit": 1}},
                {"user": {"limit": -1, "window": 60}}, []):
        with pytest.raises(harness.SandboxError) as info:
            rl.control(post_caps=bad)
        assert "400" in str(info.value) and "post_caps" in str(info.value)


@pytest.mark.parametrize("limits,named", [
    ({"GET /2/user/me": {"limit": 1, "window": 60}}, "GET /2/user/me"),
    ({"GET /2/users/me": {"limit": 1, "window": 60, "limt": 2}}, "limt"),
    ({"GET /2/users/me": {"limit": 1, "window": 60}, "get /2/users/me": {"limit": 1, "window": 60}},
     "get /2/users/me"),
])
def test_unknown_rate_limit_keys_are_refused_by_the_control_api(rl, demo, limits, named):
    before = rl.state()["x_rate_limits"]
    with pytest.raises(harness.SandboxError) as info:
        rl.control(rate_limits=limits)
    assert "400" in str(info.value) and named in str(info.value)
    assert rl.state()["x_rate_limits"] == before


def test_unknown_rate_limit_keys_are_refused_in_the_config(tmp_path):
    for limits, named in (({"GET /2/users/following": {"limit": 1, "window": 60}}, "GET /2/users/following"),
                          ({"POST /2/tweets": {"limit": 1, "window": 60, "windows": 2}}, "windows")):
        cfg = harness.merged_config(x={"rate_limits": limits})
        path = tmp_path / "config.json"
        path.write_text(json.dumps(cfg))
        proc = subprocess.run([sys.executable, str(harness.SERVER), "--port", "0", "--config", str(path)],
                              capture_output=True, timeout=20)
        assert proc.returncode == 2 and proc.stdout == b""
        assert named in proc.stderr.decode() and "x.rate_limits" in proc.stderr.decode()
