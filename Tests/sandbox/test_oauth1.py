"""OAuth 1.0a as X checks it: HMAC-SHA1 over the URL actually requested (query
and form body signed, JSON not), timestamp window, nonce replay, the 401 shapes."""
import time
import urllib.parse

import pytest
import requests
from requests_oauthlib import OAuth1

import harness
import sandbox_x
from sandbox_http import Request
from toolenv import oauth1  # Tests/conftest.py puts Tests/ on sys.path

V2_401 = {"title": "Unauthorized", "type": "about:blank", "status": 401, "detail": "Unauthorized"}


def last_auth(sb):
    return sb.log()[-1]["auth"]


# x-api.md §9.4: the published test vector, on both hosts.
VECTOR = {
    "oauth_consumer_key": "xvz1evFS4wEEPTGEFPHBog",
    "oauth_nonce": "kYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg",
    "oauth_signature_method": "HMAC-SHA1",
    "oauth_timestamp": "1318622958",
    "oauth_token": "370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb",
    "oauth_version": "1.0",
}
VECTOR_BODY = "status=" + urllib.parse.quote("Hello Ladies + Gentlemen, a signed OAuth request!", safe="")


@pytest.mark.parametrize("host,expected", [
    ("api.x.com", "Ls93hJiZbQ3akF3HF3x1Bz8/zU4="),
    ("api.twitter.com", "hCtSmYh+iHYCEqBWrE7C7hYmtUk="),
])
def test_verifier_accepts_the_published_test_vector_for_the_host_received(host, expected):
    params = dict(VECTOR, oauth_signature=expected)
    header = "OAuth " + ", ".join('%s="%s"' % (k, urllib.parse.quote(v, safe="")) for k, v in params.items())
    req = Request("POST", "/1.1/statuses/update.json?include_entities=true",
                  {"content-type": "application/x-www-form-urlencoded", "authorization": header},
                  VECTOR_BODY.encode(), "https", host)
    consumer_secret = "kAcSOqF21Fu85e7zjz7ZN2U4ZRhfV3WpwPAoE3Z7kBw"
    token_secret = "LswwdoUaIvS8ltyTt5jkRh4J50vUPVVHtR2YPi5kE"
    assert sandbox_x.verify_signature(req, header, expected, consumer_secret, token_secret)
    other_host = "api.twitter.com" if host == "api.x.com" else "api.x.com"
    req.host = other_host
    assert not sandbox_x.verify_signature(req, header, expected, consumer_secret, token_secret)
    req.host = host
    req.body = VECTOR_BODY.replace("Hello", "Howdy").encode()
    req._form = None
    assert not sandbox_x.verify_signature(req, header, expected, consumer_secret, token_secret)


def test_signed_request_for_the_local_url_verifies(sb, demo):
    r = requests.get(sb.url + "/2/users/me", auth=oauth1(demo))
    assert r.status_code == 200
    assert r.json()["data"]["id"] == demo["user_id"]
    assert last_auth(sb) == {"scheme": "oauth1", "outcome": "ok", "credential": "demo",
                             "user_id": demo["user_id"], "app": "socialpipe-sandbox"}


def test_host_header_is_part_of_what_is_verified(sb, demo):
    # Signed for http://127.0.0.1:PORT, then sent with a Host header naming another host.
    s = requests.Session()
    prepared = s.prepare_request(requests.Request("GET", sb.url + "/2/users/me", auth=oauth1(demo)))
    prepared.headers["Host"] = "api.x.com"
    r = s.send(prepared)
    assert r.status_code == 401
    assert r.json() == V2_401
    assert last_auth(sb)["outcome"] == "bad_signature"


def test_client_signing_for_the_host_header_it_sends_verifies(sb, demo):
    # oauthlib signs for the Host header when one is given; so does the sandbox.
    r = requests.get(sb.url + "/2/users/me", auth=oauth1(demo), headers={"Host": "api.x.com"})
    assert r.status_code == 200


def test_localhost_url_verifies_with_its_own_host(sb, demo):
    url = "http://localhost:%d/2/users/me" % sb.port
    r = requests.get(url, auth=oauth1(demo))
    assert r.status_code == 200


def test_query_parameters_are_signed(sb, demo):
    s = requests.Session()
    prepared = s.prepare_request(requests.Request("GET", sb.url + "/2/users/me",
                                                  params={"user.fields": "created_at"}, auth=oauth1(demo)))
    prepared.url = prepared.url.replace("created_at", "description")
    r = s.send(prepared)
    assert r.status_code == 401
    assert last_auth(sb)["outcome"] == "bad_signature"


def test_form_body_is_signed(sb, demo):
    s = requests.Session()
    prepared = s.prepare_request(requests.Request("POST", sb.url + "/1.1/statuses/update.json",
                                                  data={"status": "original text"}, auth=oauth1(demo)))
    prepared.body = "status=tampered+text"
    prepared.headers["Content-Length"] = str(len(prepared.body))
    r = s.send(prepared)
    assert r.status_code == 401
    assert r.json() == {"errors": [{"code": 32, "message": "Could not authenticate you."}]}
    assert sb.posts()["total"] == 0


def test_json_body_is_not_signed(sb, demo):
    s = requests.Session()
    prepared = s.prepare_request(requests.Request("POST", sb.url + "/2/tweets", json={"text": "signed?"},
                                                  auth=oauth1(demo)))
    prepared.body = b'{"text": "changed after signing"}'
    prepared.headers["Content-Length"] = str(len(prepared.body))
    r = s.send(prepared)
    assert r.status_code == 201
    assert r.json()["data"]["text"] == "changed after signing"


def test_wrong_secret_is_refused_on_v2_and_v11(sb, demo):
    bad = OAuth1(demo["consumer_key"], "not-the-secret", demo["access_token"], demo["access_token_secret"])
    assert requests.get(sb.url + "/2/users/me", auth=bad).json() == V2_401
    r = requests.get(sb.url + "/1.1/account/verify_credentials.json", auth=bad)
    assert (r.status_code, r.json()) == (401, {"errors": [{"code": 32, "message": "Could not authenticate you."}]})
    assert "x-rate-limit-limit" not in r.headers


@pytest.mark.parametrize("method", ["HMAC-SHA256", "PLAINTEXT"])
def test_only_hmac_sha1_is_accepted(sb, demo, method):
    r = requests.get(sb.url + "/2/users/me", auth=oauth1(demo, signature_method=method))
    assert (r.status_code, r.json()) == (401, V2_401)
    assert last_auth(sb)["outcome"] == "unsupported_signature_method"


def test_timestamp_outside_the_window_is_refused(sb, demo):
    old = str(int(time.time()) - 301)
    r = requests.get(sb.url + "/2/users/me", auth=oauth1(demo, timestamp=old))
    assert (r.status_code, r.json()) == (401, V2_401)
    r = requests.get(sb.url + "/1.1/account/verify_credentials.json", auth=oauth1(demo, timestamp=old))
    assert (r.status_code, r.json()) == (401, {"errors": [{"code": 135, "message": "Timestamp out of bounds."}]})
    near = str(int(time.time()) - 250)
    assert requests.get(sb.url + "/2/users/me", auth=oauth1(demo, timestamp=near)).status_code == 200


def test_replayed_nonce_is_refused(sb, demo):
    ts = str(int(time.time()))
    first = requests.get(sb.url + "/2/users/me", auth=oauth1(demo, nonce="fixed-nonce-1", timestamp=ts))
    again = requests.get(sb.url + "/2/users/me", auth=oauth1(demo, nonce="fixed-nonce-1", timestamp=ts))
    assert first.status_code == 200
    assert (again.status_code, again.json()) == (401, V2_401)
    assert last_auth(sb)["outcome"] == "nonce_replayed"
    # The nonce is per consumer key and token: jack may use the same one.
    jack = oauth1(demo, "12-sandboxjackaccesstoken", "sandbox-jack-token-secret", nonce="fixed-nonce-1", timestamp=ts)
    assert requests.get(sb.url + "/2/users/me", auth=jack).status_code == 200


def test_unknown_token_and_missing_auth_shapes(sb, demo):
    bad = oauth1(demo, "999-unknown", "whatever")
    r = requests.get(sb.url + "/1.1/account/verify_credentials.json", auth=bad)
    assert (r.status_code, r.json()) == (401, {"errors": [{"code": 89, "message": "Invalid or expired token."}]})
    r = requests.get(sb.url + "/1.1/account/verify_credentials.json")
    assert (r.status_code, r.json()) == (400, {"errors": [{"code": 215, "message": "Bad Authentication data."}]})
    r = requests.get(sb.url + "/2/users/me")
    assert (r.status_code, r.json()) == (401, V2_401)
    assert r.headers["Content-Type"].startswith("application/problem+json")


def test_revoked_token_is_refused_until_restored(sb, demo):
    sb.control(revoke_token=demo["access_token"])
    r = requests.get(sb.url + "/1.1/account/verify_credentials.json", auth=oauth1(demo))
    assert (r.status_code, r.json()["errors"][0]["code"]) == (401, 89)
    assert last_auth(sb)["outcome"] == "revoked"
    sb.control(restore_token=demo["access_token"])
    assert requests.get(sb.url + "/2/users/me", auth=oauth1(demo)).status_code == 200


def test_no_verify_signatures_skips_the_signature_but_not_the_token(demo):
    with harness.Sandbox.start(extra_args=["--no-verify-signatures"]) as sb:
        bad = OAuth1(demo["consumer_key"], "wrong", demo["access_token"], "wrong", timestamp="1")
        r = requests.post(sb.url + "/2/tweets", json={"text": "unverified"}, auth=bad)
        assert r.status_code == 201
        unknown = OAuth1(demo["consumer_key"], "wrong", "1-unknown-token", "wrong")
        assert requests.get(sb.url + "/2/users/me", auth=unknown).status_code == 401
