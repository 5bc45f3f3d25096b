"""Graph API behaviour: Page feed posts, tokens, permissions, debug_token,
appsecret_proof, batch requests, versions and error objects."""
import hashlib
import hmac
import http.client
import json
import time

import pytest
import requests

G = "/v27.0"


def get(sb, path, **params):
    return requests.get(sb.url + G + path, params=params)


def post(sb, path, **form):
    return requests.post(sb.url + G + path, data=form)


def error(r):
    return r.json()["error"]


def proof(secret, token, stamp=None):
    msg = token if stamp is None else "%s|%s" % (token, stamp)
    return hmac.new(secret.encode(), msg.encode(), hashlib.sha256).hexdigest()


# -- publishing -------------------------------------------------------------------

def test_page_token_posts_to_the_page_feed(sb, fb):
    r = post(sb, "/%s/feed" % fb["page_id"], message="hello page", access_token=fb["page_token"])
    assert r.status_code == 200
    post_id = r.json()["id"]
    page, number = post_id.split("_")
    assert page == fb["page_id"] and number.isdigit()
    assert r.headers["facebook-api-version"] == "v27.0"
    assert r.headers["Content-Type"].startswith("application/json")
    assert r.headers["x-fb-trace-id"]
    assert sb.posts("facebook")["counts"] == {"hello page": 1}
    feed = get(sb, "/%s/feed" % fb["page_id"], access_token=fb["page_token"]).json()
    assert [p["id"] for p in feed["data"]] == [post_id]
    assert get(sb, "/" + post_id, access_token=fb["page_token"]).json()["message"] == "hello page"


def test_user_token_gets_the_misleading_publish_actions_error(sb, fb):
    r = post(sb, "/%s/feed" % fb["page_id"], message="as user", access_token=fb["user_token"])
    assert r.status_code == 403
    err = error(r)
    assert (err["code"], err["type"]) == (200, "OAuthException")
    assert err["message"] == ("(#200) This endpoint is deprecated since the required permission "
                              "publish_actions is deprecated")
    assert err["fbtrace_id"] == r.headers["x-fb-trace-id"]
    r = post(sb, "/me/feed", message="timeline", access_token=fb["user_token"])
    assert error(r)["code"] == 200
    assert sb.posts()["total"] == 0


def test_page_token_without_manage_posts_is_refused(sb, fb):
    r = post(sb, "/%s/feed" % fb["page_id"], message="ro", access_token="sandbox-fb-page-readonly-token")
    err = error(r)
    assert err["code"] == 200 and "pages_manage_posts" in err["message"]
    # Declining the permission afterwards takes it from the token too.
    sb.control(permission={"user_id": fb["user_id"], "permission": "pages_manage_posts", "status": "declined"})
    r = post(sb, "/%s/feed" % fb["page_id"], message="declined", access_token=fb["page_token"])
    assert error(r)["code"] == 200


def test_post_parameters(sb, fb):
    feed = "/%s/feed" % fb["page_id"]
    tok = fb["page_token"]
    assert error(post(sb, feed, access_token=tok))["message"] == "(#100) Missing message or attachment"
    assert error(post(sb, feed, link="not a url", access_token=tok))["code"] == 100
    r = post(sb, feed, link="https://example.com/", access_token=tok, fields="id,permalink_url,created_time")
    body = r.json()
    assert set(body) == {"id", "permalink_url", "created_time"}
    assert body["permalink_url"].startswith("https://www.facebook.com/%s/posts/" % fb["page_id"])
    soon = int(time.time()) + 60
    later = int(time.time()) + 3600
    assert error(post(sb, feed, message="s", scheduled_publish_time=str(later), access_token=tok))["code"] == 100
    assert error(post(sb, feed, message="s", published="false", scheduled_publish_time=str(soon),
                      access_token=tok))["message"] == "(#100) The specified scheduled publish time is invalid."
    r = post(sb, feed, message="scheduled", published="false", scheduled_publish_time=str(later), access_token=tok)
    assert r.status_code == 200
    r = post(sb, feed, message="legacy fields", name="ignored", caption="ignored", access_token=tok)
    assert r.status_code == 200
    posts = {p["text"]: p for p in sb.posts("facebook")["posts"]}
    assert posts["scheduled"]["published"] is False
    assert posts["legacy fields"]["ignored_fields"] == ["name", "caption"]
    visible = get(sb, feed, access_token=tok).json()["data"]
    assert "scheduled" not in [p.get("message") for p in visible]


def test_duplicate_and_blocked_page(sb, fb):
    feed = "/%s/feed" % fb["page_id"]
    assert post(sb, feed, message="dup", access_token=fb["page_token"]).status_code == 200
    r = post(sb, feed, message="dup", access_token=fb["page_token"])
    assert (r.status_code, error(r)["code"], error(r)["message"]) == (400, 506, "(#506) Duplicate status message")
    r = post(sb, "/200000000000002/feed", message="blocked", access_token="sandbox-fb-blocked-page-token")
    assert (error(r)["code"], error(r)["error_subcode"]) == (368, 1390008)
    assert sb.posts()["counts"] == {"dup": 1}


def test_feed_paging(sb, fb):
    feed = "/%s/feed" % fb["page_id"]
    for i in range(5):
        post(sb, feed, message="p%d" % i, access_token=fb["page_token"])
    first = get(sb, feed, access_token=fb["page_token"], limit=2).json()
    assert [p["message"] for p in first["data"]] == ["p4", "p3"]
    nxt = requests.get(first["paging"]["next"]).json()
    assert [p["message"] for p in nxt["data"]] == ["p2", "p1"]
    r = get(sb, feed, access_token=fb["user_token"])
    assert error(r)["code"] == 10


# -- tokens -----------------------------------------------------------------------

def test_token_errors_are_code_190_with_subcodes(sb, fb):
    r = get(sb, "/me", access_token="garbage")
    err = error(r)
    assert (r.status_code, err["code"], err["type"]) == (400, 190, "OAuthException")
    assert err["message"] == "Invalid OAuth access token - Cannot parse access token"
    assert "invalid_token" in r.headers["WWW-Authenticate"]
    err = error(get(sb, "/me", access_token="sandbox-fb-expired-user-token"))
    assert (err["code"], err["error_subcode"]) == (190, 463)
    assert err["message"].startswith("Error validating access token: Session has expired on")
    sb.control(revoke_token={"token": fb["user_token"], "subcode": 460})
    err = error(get(sb, "/me", access_token=fb["user_token"]))
    assert (err["code"], err["error_subcode"]) == (190, 460)
    sb.control(restore_token=fb["user_token"], expire_token=fb["page_token"])
    assert get(sb, "/me", access_token=fb["user_token"]).status_code == 200
    assert error(get(sb, "/me", access_token=fb["page_token"]))["error_subcode"] == 463
    r = get(sb, "/me")
    assert error(r)["code"] == 2500
    r = get(sb, "/%s/feed" % fb["page_id"])
    assert error(r)["code"] == 104


def test_token_in_authorization_header(sb, fb):
    r = requests.get(sb.url + G + "/me", headers={"Authorization": "OAuth " + fb["user_token"]})
    assert r.json() == {"id": fb["user_id"], "name": "Sandbox Demo"}
    r = requests.get(sb.url + G + "/me", headers={"Authorization": "Bearer " + fb["page_token"]})
    assert r.json()["id"] == fb["page_id"]


def test_debug_token(sb, fb):
    app_token = "%s|%s" % (fb["app_id"], fb["app_secret"])
    data = get(sb, "/debug_token", input_token=fb["page_token"], access_token=app_token).json()["data"]
    assert data["type"] == "PAGE" and data["is_valid"] is True
    assert data["app_id"] == fb["app_id"] and data["expires_at"] == 0
    assert data["scopes"] == ["pages_manage_posts", "pages_read_engagement"]
    assert {"scope": "pages_manage_posts", "target_ids": [fb["page_id"]]} in data["granular_scopes"]
    assert data["profile_id"] == fb["page_id"] and data["user_id"] == fb["user_id"]
    data = get(sb, "/debug_token", input_token="sandbox-fb-expired-user-token",
               access_token=app_token).json()["data"]
    assert data["is_valid"] is False and data["error"]["subcode"] == 463 and data["expires_at"] == 1700000000
    data = get(sb, "/debug_token", input_token="nonsense", access_token=app_token).json()["data"]
    assert data["is_valid"] is False and data["error"]["code"] == 190
    assert error(get(sb, "/debug_token", access_token=app_token))["code"] == 100
    other = get(sb, "/debug_token", input_token="sandbox-fb-secure-page-token", access_token=app_token)
    assert error(other)["code"] == 100
    assert error(get(sb, "/debug_token", input_token=fb["page_token"],
                     access_token="%s|wrong" % fb["app_id"]))["code"] == 190


def test_token_exchange_and_app_token(sb, fb):
    r = get(sb, "/oauth/access_token", grant_type="client_credentials", client_id=fb["app_id"],
            client_secret=fb["app_secret"])
    assert r.json() == {"access_token": "%s|%s" % (fb["app_id"], fb["app_secret"]), "token_type": "bearer"}
    r = get(sb, "/oauth/access_token", grant_type="fb_exchange_token", client_id=fb["app_id"],
            client_secret=fb["app_secret"], fb_exchange_token=fb["user_token"])
    long_lived = r.json()
    assert long_lived["expires_in"] == 5183944
    assert get(sb, "/me", access_token=long_lived["access_token"]).json()["id"] == fb["user_id"]
    assert error(get(sb, "/oauth/access_token", grant_type="client_credentials", client_id=fb["app_id"],
                     client_secret="wrong"))["code"] == 1
    assert all(long_lived["access_token"] not in json.dumps(e) for e in sb.log())


# -- appsecret_proof -------------------------------------------------------------------

def test_appsecret_proof_when_the_app_requires_it(sb, fb):
    token = "sandbox-fb-secure-page-token"
    secret = "sandbox-secure-app-secret"
    r = get(sb, "/me", access_token=token)
    err = error(r)
    assert (err["code"], err["type"]) == (100, "GraphMethodException")
    assert err["message"] == "API calls from the server require an appsecret_proof argument"
    assert get(sb, "/me", access_token=token, appsecret_proof=proof(secret, token)).status_code == 200
    stamp = str(int(time.time()))
    assert get(sb, "/me", access_token=token, appsecret_time=stamp,
               appsecret_proof=proof(secret, token, stamp)).status_code == 200
    old = str(int(time.time()) - 400)
    err = error(get(sb, "/me", access_token=token, appsecret_time=old, appsecret_proof=proof(secret, token, old)))
    assert err["message"] == "Invalid appsecret_proof provided in the API argument"
    err = error(get(sb, "/me", access_token=token, appsecret_proof=proof("another-app-secret", token)))
    assert err["code"] == 100
    # A wrong proof is refused even when the app does not require one.
    assert error(get(sb, "/me", access_token=fb["user_token"], appsecret_proof="00"))["code"] == 100
    logged = json.dumps(sb.log())
    assert proof(secret, token) not in logged and token not in logged
    assert sb.log()[1]["query"]["appsecret_proof"] == ["[masked]"]


# -- permissions -------------------------------------------------------------------------

def test_permissions(sb, fb):
    data = get(sb, "/me/permissions", access_token=fb["user_token"]).json()["data"]
    statuses = {d["permission"]: d["status"] for d in data}
    assert statuses["pages_manage_posts"] == "granted"
    assert statuses["email"] == "declined" and statuses["user_posts"] == "expired"
    one = get(sb, "/me/permissions/email", access_token=fb["user_token"]).json()
    assert one == {"data": [{"permission": "email", "status": "declined"}]}
    assert get(sb, "/me/permissions/publish_actions", access_token=fb["user_token"]).json() == {"data": []}
    by_id = get(sb, "/%s/permissions" % fb["user_id"], access_token="%s|%s" % (fb["app_id"], fb["app_secret"]))
    assert by_id.json()["data"] == data
    granted = get(sb, "/me/permissions", access_token=fb["user_token"], status="granted").json()["data"]
    assert all(d["status"] == "granted" for d in granted)
    err = error(get(sb, "/me/permissions", access_token=fb["page_token"]))
    assert err["message"] == "(#100) Tried accessing nonexisting field (permissions) on node type (Page)"


def test_revoking_permissions(sb, fb):
    r = requests.delete(sb.url + G + "/me/permissions/pages_show_list", params={"access_token": fb["user_token"]})
    assert r.json() == {"success": True}
    one = get(sb, "/me/permissions/pages_show_list", access_token=fb["user_token"]).json()
    assert one["data"][0]["status"] == "declined"
    requests.delete(sb.url + G + "/me/permissions", params={"access_token": fb["user_token"]})
    err = error(get(sb, "/me", access_token=fb["page_token"]))
    assert (err["code"], err["error_subcode"]) == (190, 458)


def test_accounts_lists_pages_with_their_tokens(sb, fb):
    data = get(sb, "/me/accounts", access_token=fb["user_token"]).json()["data"]
    page = next(p for p in data if p["id"] == fb["page_id"])
    assert page["access_token"] == fb["page_token"] and "CREATE_CONTENT" in page["tasks"]


# -- versions and routes -------------------------------------------------------------------

def test_old_and_unknown_versions(sb, fb):
    r = requests.get(sb.url + "/v3.1/me", params={"access_token": fb["user_token"]})
    assert (r.status_code, error(r)["code"]) == (400, 2635)
    r = requests.get(sb.url + "/v21.0/me", params={"access_token": fb["user_token"]})
    assert r.status_code == 200 and r.headers["facebook-api-version"] == "v21.0"
    assert requests.get(sb.url + "/v99.0/me", params={"access_token": fb["user_token"]}).status_code == 400
    err = error(get(sb, "/123456/feed", access_token=fb["page_token"]))
    assert (err["code"], err["error_subcode"], err["type"]) == (100, 33, "GraphMethodException")
    err = error(get(sb, "/me/nonsense", access_token=fb["page_token"]))
    assert err["message"] == "Unknown path components: /nonsense"


# -- batch -----------------------------------------------------------------------------------

def batch(sb, items, **form):
    form.setdefault("access_token", "sandbox-fb-page-token")
    return requests.post(sb.url + G + "/", data=dict(form, batch=json.dumps(items)))


def test_batch_posts_and_reads_in_order(sb, fb):
    feed = "%s/feed" % fb["page_id"]
    items = [{"method": "POST", "relative_url": feed, "body": "message=batch+one"},
             {"method": "POST", "relative_url": feed, "body": "message=batch+two"},
             {"method": "GET", "relative_url": "me/permissions?access_token=" + fb["user_token"]},
             {"method": "POST", "relative_url": feed, "body": "message=as+user&access_token=" + fb["user_token"]}]
    r = batch(sb, items)
    assert r.status_code == 200
    slots = r.json()
    assert [s["code"] for s in slots] == [200, 200, 200, 403]
    assert json.loads(slots[0]["body"])["id"].startswith(fb["page_id"] + "_")
    assert json.loads(slots[2]["body"])["data"][0]["permission"] == "public_profile"
    assert json.loads(slots[3]["body"])["error"]["code"] == 200
    assert {"name": "facebook-api-version", "value": "v27.0"} in slots[0]["headers"]
    assert sb.posts()["counts"] == {"batch one": 1, "batch two": 1}
    entry = sb.log()[-1]
    assert [i["status"] for i in entry["batch"]] == [200, 200, 200, 403]
    assert fb["user_token"] not in json.dumps(entry)


def test_batch_limits_and_headers_option(sb, fb):
    items = [{"method": "GET", "relative_url": "me"}] * 51
    r = batch(sb, items)
    assert (r.status_code, error(r)["code"]) == (400, 100)
    assert "Maximum batch size is 50" in error(r)["message"]
    r = batch(sb, items[:50], include_headers="false")
    assert len(r.json()) == 50 and all("headers" not in s for s in r.json())
    r = batch(sb, items[:1], access_token="garbage")
    assert error(r)["code"] == 190


def test_batch_null_slots_and_item_faults(sb, fb):
    feed = "/v27.0/%s/feed" % fb["page_id"]
    sb.fault("null", match={"batch_item": True, "body_contains": "message=lost"})
    sb.fault("error", match={"batch_item": True, "path": feed, "body_contains": "message=throttled"}, code=32)
    items = [{"method": "POST", "relative_url": feed.lstrip("/"), "body": "message=" + m}
             for m in ("kept", "lost", "throttled")]
    slots = batch(sb, items).json()
    assert slots[1] is None
    assert slots[0]["code"] == 200
    assert json.loads(slots[2]["body"])["error"]["code"] == 32
    assert sb.posts()["counts"] == {"kept": 1}


def test_batch_dependencies(sb, fb):
    items = [{"method": "GET", "relative_url": "me", "name": "me"},
             {"method": "GET", "relative_url": "{result=me:$.id}?fields=id,name"},
             {"method": "GET", "relative_url": "me", "name": "kept", "omit_response_on_success": False},
             {"method": "GET", "relative_url": "nonexistent999", "name": "bad"},
             {"method": "GET", "relative_url": "me", "depends_on": "bad"}]
    slots = batch(sb, items).json()
    assert slots[0] is None
    assert json.loads(slots[1]["body"]) == {"id": fb["page_id"], "name": "socialpipe Sandbox Page"}
    assert slots[2]["code"] == 200
    assert slots[3]["code"] == 400
    assert slots[4]["code"] == 400


def test_appsecret_proof_in_batch_covers_the_top_level_token_only(sb, fb):
    token = "sandbox-fb-secure-page-token"
    secret = "sandbox-secure-app-secret"
    items = [{"method": "GET", "relative_url": "me"},
             {"method": "GET", "relative_url": "me?access_token=" + token},
             {"method": "GET", "relative_url": "me?access_token=%s&appsecret_proof=%s" % (token, proof(secret, token))}]
    slots = batch(sb, items, access_token=token, appsecret_proof=proof(secret, token)).json()
    assert slots[0]["code"] == 200
    assert slots[2]["code"] == 200
    # Item 1 names the token itself, so the top-level proof does not reach it.
    assert slots[1]["code"] == 400


# -- headers and unversioned paths ----------------------------------------------------------------

def raw(sb, method, path, body=None, headers=None):
    """(status, header values by lowercase name, body) as sent on the wire: repeated headers stay apart."""
    conn = http.client.HTTPConnection("127.0.0.1", sb.port, timeout=10)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        seen = {}
        for name, value in resp.getheaders():
            seen.setdefault(name.lower(), []).append(value)
        return resp.status, seen, resp.read()
    finally:
        conn.close()


def test_every_graph_response_carries_content_type_once(sb, fb):
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    sb.fault("status", match={"path": "/v27.0/%s/feed" % fb["page_id"]}, status=503)
    requests_ = [
        ("GET", "/v27.0/me?access_token=" + fb["user_token"], None, None),             # success
        ("GET", "/v27.0/me", None, None),                                              # error 2500
        ("GET", "/v27.0/%s/feed" % fb["page_id"], None, None),                           # error 104
        ("GET", "/v27.0/me?access_token=nope", None, None),                            # 190 + WWW-Authenticate
        ("GET", "/v3.1/me?access_token=" + fb["user_token"], None, None),              # 2635
        ("GET", "/v27.5/me?access_token=" + fb["user_token"], None, None),             # 100
        ("POST", "/v27.0/%s/feed" % fb["page_id"], "message=m&access_token=" + fb["page_token"], form),  # fault
        ("POST", "/v27.0/", "batch=%5B%7B%22relative_url%22%3A%22me%22%7D%5D&access_token=" + fb["page_token"],
         form),                                                                        # batch
        ("POST", "/", "batch=%5B%7B%22relative_url%22%3A%22me%22%7D%5D&access_token=" + fb["page_token"], form),
        ("GET", "/me?access_token=" + fb["user_token"], None, None),                   # unversioned
        ("GET", "/2/users/by/username/jack", None, {"Authorization": "Bearer sandbox-bearer-token"}),  # X
    ]
    for method, path, body, headers in requests_:
        status, seen, _ = raw(sb, method, path, body, headers)
        assert len(seen["content-type"]) == 1, (path, status, seen["content-type"])
        assert len(seen["content-length"]) == 1, path


@pytest.mark.parametrize("method,path", [("GET", "/me"), ("GET", "/me/accounts"), ("GET", "/debug_token"),
                                         ("POST", "/200000000000001/feed"), ("GET", "/v27/me"),
                                         ("DELETE", "/me/permissions"), ("GET", "/")])
def test_unversioned_graph_paths_answer_in_graph_shape(sb, fb, method, path):
    r = requests.request(method, sb.url + path, params={"access_token": fb["user_token"]})
    assert r.status_code == 400
    assert r.headers["Content-Type"] == "application/json; charset=UTF-8"
    assert r.headers["facebook-api-version"] == "v27.0"
    assert r.json() == {"error": {"message": "Unknown path components: %s" % path, "type": "OAuthException",
                                  "code": 100, "is_transient": False,
                                  "fbtrace_id": r.headers["x-fb-trace-id"]}}
    entry = sb.log()[-1]
    assert (entry["service"], entry["endpoint"], entry["status"], entry["auth"]) == ("facebook", None, 400, None)
    assert sb.posts()["total"] == 0
