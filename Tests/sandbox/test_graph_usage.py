"""Graph headers: one Content-Type on every answer, usage headers on errors and
on the batch's own answer, and the ways a test makes a feed post come back
throttled (faults with headers, the `headers` fault kind, exhausted budgets)."""
import http.client
import json
import urllib.parse

import pytest
import requests

import harness

PAGE = "200000000000001"
PAGE_TOKEN = "sandbox-fb-page-token"
USER_TOKEN = "sandbox-fb-user-token"
FEED_PATH = "/v27.0/%s/feed" % PAGE
FEED = {"endpoint": "POST /{id}/feed"}
JSON_TYPE = "application/json; charset=UTF-8"


def raw(sb, method, path, body=None, headers=None):
    """(status, [(name, value)] as sent on the wire, body bytes)."""
    conn = http.client.HTTPConnection("127.0.0.1", sb.port, timeout=10)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, resp.getheaders(), resp.read()
    finally:
        conn.close()


def values(headers, name):
    return [v for k, v in headers if k.lower() == name.lower()]


def form(**fields):
    return urllib.parse.urlencode(fields), {"Content-Type": "application/x-www-form-urlencoded"}


def post_feed(sb, message, token=PAGE_TOKEN):
    return requests.post(sb.url + FEED_PATH, data={"message": message, "access_token": token})


def batch(sb, items, token=PAGE_TOKEN, **extra):
    data = dict(extra, batch=json.dumps(items))
    if token:
        data["access_token"] = token
    return requests.post(sb.url + "/v27.0/", data=data)


def feed_item(message):
    return {"method": "POST", "relative_url": "%s/feed" % PAGE, "body": urllib.parse.urlencode({"message": message})}


def buc(response_headers):
    return json.loads(response_headers["X-Business-Use-Case-Usage"])[PAGE][0]


def slot_headers(slot):
    return [(h["name"], h["value"]) for h in slot["headers"]]


# -- Content-Type ----------------------------------------------------------------------------

def test_every_graph_answer_and_batch_slot_has_one_json_content_type(sb):
    usage = '{"call_count":95,"total_cputime":20,"total_time":20}'
    sb.fault("error", match={"path": FEED_PATH, "body_contains": "message=err"}, code=32,
             headers={"X-Business-Use-Case-Usage": "{}", "content-type": JSON_TYPE})
    sb.fault("status", match={"path": FEED_PATH, "body_contains": "message=status"}, status=503, retry_after=3)
    sb.fault("headers", match={"path": FEED_PATH, "body_contains": "message=busy"}, headers={"X-App-Usage": usage})
    sb.fault("error", match={"batch_item": True, "body_contains": "message=slot-err"}, code=80001,
             headers={"Content-Type": JSON_TYPE, "X-Page-Usage": usage})
    sb.fault("headers", match={"batch_item": True, "body_contains": "message=slot-busy"},
             headers={"X-Page-Usage": usage})
    items = [feed_item(m) for m in ("slot-ok", "slot-err", "slot-busy")] + \
        [{"method": "GET", "relative_url": "nonexistent999"}]
    cases = [
        ("GET", "/v27.0/me?access_token=" + USER_TOKEN, None, {}),
        ("GET", "/v27.0/me/permissions", None, {}),
        ("GET", "/v27.0/%s/feed" % PAGE, None, {}),
        ("GET", "/v27.0/nonexistent999?access_token=" + USER_TOKEN, None, {}),
        ("GET", "/v27.0/me?access_token=sandbox-fb-expired-user-token", None, {}),
        ("GET", "/v3.1/me?access_token=" + USER_TOKEN, None, {}),
        ("GET", "/me?access_token=" + USER_TOKEN, None, {}),
        ("POST", FEED_PATH) + form(message="err", access_token=PAGE_TOKEN),
        ("POST", FEED_PATH) + form(message="status", access_token=PAGE_TOKEN),
        ("POST", FEED_PATH) + form(message="busy", access_token=PAGE_TOKEN),
        ("POST", "/v27.0/") + form(batch=json.dumps(items), access_token=PAGE_TOKEN),
        ("POST", "/") + form(batch=json.dumps(items[:1]), access_token=PAGE_TOKEN),
        ("POST", "/v27.0/") + form(batch=json.dumps(items * 13), access_token=PAGE_TOKEN),
    ]
    for method, path, body, headers in cases:
        status, seen, content = raw(sb, method, path, body, headers)
        assert values(seen, "Content-Type") == [JSON_TYPE], (path, status, seen)
        assert len(values(seen, "Content-Length")) == 1, path
        if path == "/v27.0/" and status == 200:
            slots = json.loads(content)
            assert [s["code"] for s in slots] == [200, 400, 200, 400]
            for slot in slots:
                assert values(slot_headers(slot), "Content-Type") == [JSON_TYPE], slot
            assert values(slot_headers(slots[1]), "X-Page-Usage") == [usage]
            assert values(slot_headers(slots[2]), "X-Page-Usage") == [usage]
    assert sb.posts()["counts"] == {"busy": 1, "slot-ok": 1, "slot-busy": 1}


# -- usage headers on errors and batches ------------------------------------------------------

@pytest.fixture(scope="module")
def budgets():
    cfg = harness.merged_config(facebook={"limits": {"app": {"limit": 10, "window": 600},
                                                     "user": {"limit": 50, "window": 600},
                                                     "page": {"limit": 10, "window": 600},
                                                     "feed_post": None}})
    with harness.Sandbox.start(config=cfg) as sandbox:
        yield sandbox


@pytest.fixture
def bsb(budgets):
    budgets.clear()
    return budgets


def app_usage(r):
    return json.loads(r.headers["X-App-Usage"])["call_count"]


def test_error_answers_carry_the_usage_of_a_recognised_token(bsb):
    g = bsb.url + "/v27.0"
    ok = requests.get(g + "/me", params={"access_token": USER_TOKEN})
    assert app_usage(ok) == 10
    missing = requests.get(g + "/nonexistent999", params={"access_token": USER_TOKEN})
    assert (missing.status_code, missing.json()["error"]["code"]) == (400, 100)
    assert app_usage(missing) == 20                     # counted: it got past authentication
    me_app = requests.get(g + "/me", params={"access_token": "100000000000001|sandbox-app-secret"})
    assert (me_app.json()["error"]["code"], app_usage(me_app)) == (2500, 30)
    user_post = requests.post(g + "/%s/feed" % PAGE, data={"message": "u", "access_token": USER_TOKEN})
    assert (user_post.json()["error"]["code"], app_usage(user_post)) == (200, 40)
    expired = requests.get(g + "/me", params={"access_token": "sandbox-fb-expired-user-token"})
    assert (expired.json()["error"]["error_subcode"], app_usage(expired)) == (463, 40)   # shown, not counted
    assert "X-App-Usage" not in requests.get(g + "/me", params={"access_token": "nonsense"}).headers
    assert "X-App-Usage" not in requests.get(g + "/me").headers
    assert "X-App-Usage" not in requests.get(bsb.url + "/v3.1/me", params={"access_token": USER_TOKEN}).headers

    assert post_feed(bsb, "dup").status_code == 200
    dup = post_feed(bsb, "dup")
    assert dup.json()["error"]["code"] == 506
    assert buc(dup.headers)["call_count"] == 20
    secure = requests.get(g + "/me", params={"access_token": "sandbox-fb-secure-page-token"})
    assert secure.json()["error"]["message"] == "API calls from the server require an appsecret_proof argument"
    assert buc(secure.headers)["call_count"] == 20       # same Page, not counted


def test_the_batch_answer_carries_the_usage_its_calls_made(bsb):
    r = batch(bsb, [feed_item("b%d" % i) for i in range(3)])
    assert [s["code"] for s in r.json()] == [200, 200, 200]
    assert buc(r.headers) == {"type": "pages", "call_count": 30, "total_cputime": 15, "total_time": 15,
                              "estimated_time_to_regain_access": 0}
    assert "X-App-Usage" not in r.headers
    # Items with user and app tokens under a Page top-level token: both headers.
    items = [{"method": "GET", "relative_url": "me?access_token=" + USER_TOKEN},
             {"method": "GET", "relative_url": "me?access_token=" + USER_TOKEN},
             feed_item("b3")]
    r = batch(bsb, items)
    assert app_usage(r) == 20 and buc(r.headers)["call_count"] == 40
    # A user top-level token whose items all use it.
    r = batch(bsb, [{"method": "GET", "relative_url": "me"}], token=USER_TOKEN)
    assert app_usage(r) == 30 and "X-Business-Use-Case-Usage" not in r.headers
    # No item ran (a null slot): the top-level token's usage as it stands.
    bsb.fault("null", match={"batch_item": True})
    r = batch(bsb, [feed_item("never")])
    assert r.json() == [None] and buc(r.headers)["call_count"] == 40
    # A refused batch with a known token still says where it stands.
    r = batch(bsb, [feed_item("x")] * 51)
    assert r.json()["error"]["code"] == 100 and buc(r.headers)["call_count"] == 40


def test_an_exhausted_page_budget_gives_minutes_to_regain_access(bsb):
    bsb.control(facebook_limits={"page": {"limit": 20, "window": 600}})
    rs = [post_feed(bsb, "p%d" % i) for i in range(18)]
    assert all(r.status_code == 200 for r in rs)
    busy = [post_feed(bsb, "p18"), post_feed(bsb, "p19")]
    assert [buc(r.headers)["call_count"] for r in busy] == [95, 100]
    assert [buc(r.headers)["estimated_time_to_regain_access"] for r in busy] == [0, 0]
    refused = post_feed(bsb, "p20")
    err = refused.json()["error"]
    assert (refused.status_code, err["code"], err["is_transient"]) == (403, 32, True)
    assert buc(refused.headers)["estimated_time_to_regain_access"] == 10
    # Within a batch: each slot refused with the regain time, and the batch's answer says so too.
    r = batch(bsb, [feed_item("late1"), feed_item("late2")])
    slots = r.json()
    assert [json.loads(s["body"])["error"]["code"] for s in slots] == [32, 32]
    slot_usage = json.loads(dict(slot_headers(slots[0]))["X-Business-Use-Case-Usage"])[PAGE][0]
    assert slot_usage["estimated_time_to_regain_access"] == 10
    assert buc(r.headers)["estimated_time_to_regain_access"] == 10
    assert bsb.posts()["total"] == 20


def test_the_feed_post_budget_gives_613_with_the_posting_windows_minutes(bsb):
    bsb.control(facebook_limits={"feed_post": {"limit": 2, "window": 300}})
    assert [post_feed(bsb, m).status_code for m in ("f1", "f2")] == [200, 200]
    r = post_feed(bsb, "f3")
    assert (r.status_code, r.json()["error"]["code"]) == (400, 613)
    assert buc(r.headers)["estimated_time_to_regain_access"] == 5
    assert buc(r.headers)["call_count"] == 30


def test_user_and_app_budgets_throttle_with_17_and_4(bsb):
    bsb.control(facebook_limits={"user": {"limit": 1, "window": 60}})
    g = bsb.url + "/v27.0/me"
    assert requests.get(g, params={"access_token": USER_TOKEN}).status_code == 200
    r = requests.get(g, params={"access_token": USER_TOKEN})
    assert (r.status_code, r.json()["error"]["code"]) == (403, 17)
    assert "estimated_time_to_regain_access" not in r.headers["X-App-Usage"]


# -- throttling through faults ---------------------------------------------------------------------

def buc_value(minutes=None):
    entry = {"type": "pages", "call_count": 100, "total_cputime": 40, "total_time": 40}
    if minutes is not None:
        entry["estimated_time_to_regain_access"] = minutes
    return json.dumps({PAGE: [entry]})


@pytest.mark.parametrize("code,status", [(32, 403), (80001, 400), (4, 403), (17, 403), (613, 400)])
def test_a_throttle_fault_with_and_without_a_regain_time(sb, code, status):
    sb.fault("error", match=FEED, code=code, headers={"X-Business-Use-Case-Usage": buc_value(7)})
    sb.fault("error", match=FEED, code=code, headers={"X-Business-Use-Case-Usage": buc_value()})
    sb.fault("error", match=FEED, code=code)
    with_time, without_key, without_header = (post_feed(sb, "t%d" % i) for i in range(3))
    for r in (with_time, without_key, without_header):
        err = r.json()["error"]
        assert (r.status_code, err["code"], err["is_transient"]) == (status, code, True)
        assert values(list(r.headers.items()), "Content-Type") == [JSON_TYPE]
    assert buc(with_time.headers)["estimated_time_to_regain_access"] == 7
    assert "estimated_time_to_regain_access" not in buc(without_key.headers)
    assert "X-Business-Use-Case-Usage" not in without_header.headers
    assert "X-App-Usage" not in without_header.headers
    assert sb.posts()["total"] == 0
    assert post_feed(sb, "after").status_code == 200


def test_busy_usage_headers_before_the_throttle(sb):
    page_usage = '{"call_count":95,"total_cputime":20,"total_time":20}'
    sb.control(faults=[
        {"kind": "headers", "match": FEED, "count": 3, "headers": {"X-Page-Usage": page_usage}},
        {"kind": "headers", "match": FEED, "count": 1, "headers": {"X-App-Usage": page_usage}},
        {"kind": "error", "match": FEED, "code": 32, "headers": {"X-Business-Use-Case-Usage": buc_value(1)}}])
    rs = [post_feed(sb, "busy %d" % i) for i in range(5)]
    assert [r.status_code for r in rs] == [200, 200, 200, 200, 403]
    assert [r.headers.get("X-Page-Usage") for r in rs[:3]] == [page_usage] * 3
    assert rs[3].headers["X-App-Usage"] == page_usage
    assert buc(rs[0].headers)["call_count"] == 1          # the sandbox's own header stays
    assert buc(rs[4].headers)["estimated_time_to_regain_access"] == 1
    assert sb.posts()["total"] == 4
    assert [e["fault"]["kind"] for e in sb.log()] == ["headers"] * 4 + ["error"]


def test_headers_faults_are_checked(sb):
    for bad in ({"kind": "headers"}, {"kind": "headers", "headers": {}},
                {"kind": "error", "code": 32, "headers": ["X-Page-Usage"]},
                {"kind": "headers", "headers": {"X-Page-Usage": {"call_count": 95}}}):
        with pytest.raises(harness.SandboxError):
            sb.control(fault=bad)
