"""Login for Devices as Meta's guide sends it
(https://developers.facebook.com/docs/facebook-login/for-devices): the client token
APP_ID|CLIENT_TOKEN travels as access_token in the POST body of device/login and
device/login_status, and nowhere else; the token a login ends with is long-lived
(contract section 7). The whole flow, consent and expiry: test_auth_flows.py."""
import json
import time

import pytest
import requests

APP = "100000000000001"
CLIENT = APP + "|sandbox-fb-client-token"
APP_TOKEN = APP + "|sandbox-app-secret"
LONG_LIVED = 5183944
NO_TOKEN = {"message": "An access token is required to request this resource.", "type": "OAuthException",
            "code": 104, "is_transient": False}


def device(sb, endpoint, **kw):
    return requests.post(sb.url + "/v27.0/device/" + endpoint, **kw)


def refused_without_token(r):
    assert r.status_code == 400, r.text
    err = dict(r.json()["error"])
    err.pop("fbtrace_id")
    assert err == NO_TOKEN


def start(sb, **kw):
    r = device(sb, "login", **kw)
    assert r.status_code == 200, r.text
    return r.json()


@pytest.mark.parametrize("place", ["query", "header", "header_oauth"])
def test_a_client_token_outside_the_body_is_not_taken(sb, place):
    """In the URL or the Authorization header the client token counts for nothing:
    the call is answered as one without a token, on both endpoints."""
    if place == "query":
        kw = {"params": {"access_token": CLIENT}}
    else:
        scheme = "OAuth " if place == "header_oauth" else "Bearer "
        kw = {"headers": {"Authorization": scheme + CLIENT}}
    refused_without_token(device(sb, "login", data={"scope": "public_profile"}, **kw))
    code = start(sb, data={"access_token": CLIENT, "scope": "public_profile"})["code"]
    refused_without_token(device(sb, "login_status", data={"code": code}, **kw))
    where = "query" if place == "query" else "header"
    logged = [e["auth"] for e in sb.log(service="facebook")]
    assert logged[0] == logged[2] == {"scheme": "facebook", "outcome": "missing", "token_in": where}, logged
    assert logged[1]["outcome"] == "ok"
    assert sb.state()["pending"]["device"][0]["scope"] == "public_profile"    # only the body's login started


def test_the_body_wins_over_a_header_and_may_be_json(sb):
    """A form or a JSON body carries it; a token in a header beside it changes nothing."""
    start(sb, data={"access_token": CLIENT, "scope": "public_profile"},
          headers={"Authorization": "Bearer sandbox-fb-user-token"})
    login = start(sb, json={"access_token": CLIENT, "scope": "pages_show_list"})
    assert [e["auth"]["credential"] for e in sb.log(service="facebook")] == ["client:" + APP] * 2
    r = device(sb, "login_status", json={"access_token": CLIENT, "code": login["code"]})
    assert r.json()["error"]["error_subcode"] == 1349174


def test_the_token_a_device_login_ends_with_is_long_lived(sb):
    sb.control(device_interval=0)
    login = start(sb, data={"access_token": CLIENT, "scope": "pages_show_list,pages_manage_posts"})
    sb.control(approve_device={"user_code": login["user_code"], "user": "300000000000001"})
    t0 = time.time()
    r = device(sb, "login_status", data={"access_token": CLIENT, "code": login["code"]})
    assert r.status_code == 200 and r.json()["expires_in"] == LONG_LIVED, r.text
    token = r.json()["access_token"]
    info = requests.get(sb.url + "/v27.0/debug_token", params={"input_token": token},
                        headers={"Authorization": "Bearer " + APP_TOKEN}).json()["data"]
    assert abs(info["expires_at"] - (t0 + LONG_LIVED)) < 10, info
    pages = requests.get(sb.url + "/v27.0/me/accounts", headers={"Authorization": "Bearer " + token}).json()
    page_token = pages["data"][0]["access_token"]
    info = requests.get(sb.url + "/v27.0/debug_token", params={"input_token": page_token},
                        headers={"Authorization": "Bearer " + APP_TOKEN}).json()["data"]
    assert info["expires_at"] == 0, info        # a Page token of a long-lived user token never expires


def test_a_batch_item_takes_the_client_token_from_its_own_body_only(sb):
    items = [{"method": "POST", "relative_url": "device/login",
              "body": "scope=public_profile&access_token=" + CLIENT.replace("|", "%7C")},
             {"method": "POST", "relative_url": "device/login?access_token=" + CLIENT.replace("|", "%7C"),
              "body": "scope=public_profile"}]
    slots = requests.post(sb.url + "/v27.0/", data={"batch": json.dumps(items), "include_headers": "false",
                                                    "access_token": APP_TOKEN}).json()
    assert slots[0]["code"] == 200 and "user_code" in json.loads(slots[0]["body"]), slots
    assert json.loads(slots[1]["body"])["error"]["code"] == 104, slots
