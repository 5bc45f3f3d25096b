"""Graph batches as fb-feed and fb-perm-check use them: null slots on demand,
include_headers=false, the top-level proof covering items of a proof-requiring
app, and debug_token as a batch item or with the app token in the header."""
import hashlib
import hmac
import json
import time
import urllib.parse

import requests

PAGE = "200000000000001"
PAGE_TOKEN = "sandbox-fb-page-token"
APP_TOKEN = "100000000000001|sandbox-app-secret"
SECURE_TOKEN = "sandbox-fb-secure-page-token"
SECURE_SECRET = "sandbox-secure-app-secret"


def proof(secret, token, stamp):
    return hmac.new(secret.encode(), ("%s|%s" % (token, stamp)).encode(), hashlib.sha256).hexdigest()


def feed_item(message):
    return {"method": "POST", "relative_url": "%s/feed" % PAGE, "body": urllib.parse.urlencode({"message": message})}


def batch(sb, items, token=PAGE_TOKEN, query=None, **form):
    """POST /v27.0/ with the token in the Authorization header, as fb-feed sends it."""
    headers = {"Authorization": "Bearer " + token} if token else {}
    return requests.post(sb.url + "/v27.0/", params=query or {}, headers=headers,
                         data=dict(form, batch=json.dumps(items)))


# -- null slots -------------------------------------------------------------------------------------

def test_a_null_fault_answers_the_first_matching_slot_only(sb):
    sb.control(facebook_limits={"page": {"limit": 3, "window": 600}})
    fid = sb.fault("null", match={"batch_item": True, "endpoint": "POST /{id}/feed"})
    r = batch(sb, [feed_item("record %03d" % i) for i in range(3)])
    slots = r.json()
    assert slots[0] is None
    assert [s["code"] for s in slots[1:]] == [200, 200]
    assert sb.posts()["counts"] == {"record 001": 1, "record 002": 1}
    entry = sb.log()[-1]
    assert entry["batch"][0]["status"] is None and entry["batch"][0]["fault"] == {"id": fid, "kind": "null"}
    assert "post_ids" not in entry["batch"][0] and len(entry["post_ids"]) == 2
    # The item was not run, so it cost nothing: two of the Page's three calls are used.
    assert json.loads(r.headers["X-Business-Use-Case-Usage"])[PAGE][0]["call_count"] == 67
    assert sb.state()["faults"][0]["remaining"] == 0
    assert all(s is not None for s in batch(sb, [feed_item("record 003")]).json())


def test_body_contains_picks_one_records_slot_and_count_spans_batches(sb):
    sb.fault("null", match={"batch_item": True, "body_contains": "message=record+007"})
    sb.fault("null", match={"batch_item": True, "path": "/v27.0/%s/feed" % PAGE}, skip=10, count=2)
    first = batch(sb, [feed_item("record %03d" % i) for i in range(10)]).json()
    assert [i for i, s in enumerate(first) if s is None] == [7]
    # skip counts matching slots across batches: record 007 was taken by the first fault,
    # so the 11th and 12th matching slots are records 011 and 012.
    second = batch(sb, [feed_item("record %03d" % i) for i in range(10, 15)]).json()
    assert [i + 10 for i, s in enumerate(second) if s is None] == [11, 12]
    counts = sb.posts()["counts"]
    assert sorted(counts) == ["record %03d" % i for i in range(15) if i not in (7, 11, 12)]
    assert set(counts.values()) == {1}


def test_a_null_slot_of_a_named_item_fails_its_dependants(sb):
    sb.fault("null", match={"batch_item": True, "path": "/v27.0/me"})
    items = [{"method": "GET", "relative_url": "me", "name": "who"},
             {"method": "GET", "relative_url": "{result=who:$.id}", "depends_on": "who"}]
    slots = batch(sb, items).json()
    assert slots[0] is None
    assert json.loads(slots[1]["body"])["error"]["code"] == 100


# -- include_headers ------------------------------------------------------------------------------------

def test_include_headers_false_drops_every_slots_headers(sb):
    sb.fault("error", match={"batch_item": True, "body_contains": "throttled"}, code=32,
             headers={"X-Business-Use-Case-Usage": "{}"})
    sb.fault("status", match={"batch_item": True, "body_contains": "unavailable"}, status=503, retry_after=2)
    items = [feed_item("fine"), feed_item("throttled"), feed_item("unavailable"),
             {"method": "GET", "relative_url": "nonexistent999"}]
    slots = batch(sb, items, include_headers="false").json()
    assert [s["code"] for s in slots] == [200, 403, 503, 400]
    assert all(set(s) == {"code", "body"} for s in slots)
    with_headers = batch(sb, [feed_item("again")]).json()
    assert {"name": "facebook-api-version", "value": "v27.0"} in with_headers[0]["headers"]


# -- proofs -------------------------------------------------------------------------------------------------

def test_the_top_level_proof_covers_items_of_a_proof_requiring_app(sb):
    stamp = str(int(time.time()))
    good = {"appsecret_proof": proof(SECURE_SECRET, SECURE_TOKEN, stamp), "appsecret_time": stamp}
    items = [feed_item("secure %d" % i) for i in range(3)] + [{"method": "GET", "relative_url": "me"}]
    r = batch(sb, items, token=SECURE_TOKEN, query=good, include_headers="false")
    assert r.status_code == 200
    assert [s["code"] for s in r.json()] == [200, 200, 200, 200]
    assert sb.posts()["counts"] == {"secure 0": 1, "secure 1": 1, "secure 2": 1}
    entry = sb.log()[-1]
    assert entry["query"] == {"appsecret_proof": ["[masked]"], "appsecret_time": [stamp]}
    assert [i["auth"]["outcome"] for i in entry["batch"]] == ["ok"] * 4
    # Without the proof, or with a stale one, the whole batch is refused.
    err = batch(sb, [feed_item("no proof")], token=SECURE_TOKEN).json()["error"]
    assert (err["code"], err["type"]) == (100, "GraphMethodException")
    old = str(int(time.time()) - 1000)
    stale = {"appsecret_proof": proof(SECURE_SECRET, SECURE_TOKEN, old), "appsecret_time": old}
    assert batch(sb, [feed_item("stale")], token=SECURE_TOKEN, query=stale).json()["error"]["code"] == 100
    # An item naming a token itself needs its own proof.
    named = [{"method": "GET", "relative_url": "me?access_token=" + SECURE_TOKEN}]
    slot = batch(sb, named, token=SECURE_TOKEN, query=good).json()[0]
    assert json.loads(slot["body"])["error"]["message"] == \
        "API calls from the server require an appsecret_proof argument"
    assert sb.posts()["total"] == 3


# -- debug_token --------------------------------------------------------------------------------------------

def test_debug_token_with_the_app_token_in_the_authorization_header(sb):
    r = requests.get(sb.url + "/v27.0/debug_token", params={"input_token": "sandbox-fb-user-token"},
                     headers={"Authorization": "Bearer " + APP_TOKEN})
    assert r.status_code == 200
    data = r.json()["data"]
    assert (data["type"], data["is_valid"], data["user_id"]) == ("USER", True, "300000000000001")
    entry = sb.log()[-1]
    assert entry["headers"]["authorization"] == "Bearer [masked]"
    assert entry["query"] == {"input_token": ["[masked]"]}
    assert entry["auth"]["token_type"] == "APP"


def test_debug_token_as_a_batch_item_under_the_app_token(sb):
    items = [{"method": "GET", "relative_url": "debug_token?input_token=sandbox-fb-page-token"},
             {"method": "GET", "relative_url": "v27.0/debug_token?input_token=sandbox-fb-expired-user-token"},
             {"method": "GET", "relative_url": "debug_token", "body": "input_token=sandbox-fb-user2-token"},
             {"method": "GET", "relative_url": "debug_token?input_token=sandbox-fb-secure-page-token"}]
    r = batch(sb, items, token=APP_TOKEN)
    assert r.status_code == 200
    slots = r.json()
    assert [s["code"] for s in slots] == [200, 200, 200, 400]
    page, expired, user2 = (json.loads(s["body"])["data"] for s in slots[:3])
    assert (page["type"], page["profile_id"], page["is_valid"]) == ("PAGE", PAGE, True)
    assert (expired["is_valid"], expired["error"]["subcode"]) == (False, 463)
    assert user2["user_id"] == "300000000000002"
    assert json.loads(slots[3]["body"])["error"]["code"] == 100          # another app's token
    logged = json.dumps(sb.log())
    for secret in ("sandbox-fb-page-token", "sandbox-fb-expired-user-token", "sandbox-fb-user2-token",
                   "sandbox-fb-secure-page-token", "sandbox-app-secret"):
        assert secret not in logged, secret
    entry = sb.log()[-1]
    assert entry["batch"][0]["relative_url"] == "debug_token?input_token=[masked]"
    assert "input_token=[masked]" in entry["body"]["batch"][0]
