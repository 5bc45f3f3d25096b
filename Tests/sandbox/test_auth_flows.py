"""Getting tokens from the sandbox as a person would (issue 11): the X PIN flow
and OAuth 2.0 Authorization Code with PKCE, refresh-token rotation, revocation,
the app-only bearer; Graph Login for Devices, the long-lived exchange and the
Page tokens /me/accounts hands out. The person's consent comes from the
control API (sandbox/README.md section 6)."""
import base64
import hashlib
import time
import urllib.parse

import facebook
import pytest
import requests
import tweepy
from requests_oauthlib import OAuth1, OAuth1Session

import harness

# tweepy 4.x warns about its own deprecated internals.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

PUBLIC = "sandbox-oauth2-client-id"
CONFIDENTIAL = ("sandbox-oauth2-confidential-id", "sandbox-oauth2-client-secret")
REDIRECT = "http://127.0.0.1:8739/callback"
VERIFIER = "a-code-verifier-of-the-right-length-0123456789-abcdefghijklmnop"
REFRESHABLE, REFRESH = "sandbox-oauth2-refreshable-token", "sandbox-oauth2-refresh-token"
CONF_ACCESS, CONF_REFRESH = "sandbox-oauth2-confidential-token", "sandbox-oauth2-confidential-refresh-token"
INVALID_TOKEN = {"error": "invalid_request", "error_description": "Value passed for the token was invalid."}
INVALID_CODE = {"error": "invalid_request", "error_description": "Value passed for the authorization code was invalid."}
NO_BASIC = {"error": "unauthorized_client", "error_description": "Missing valid authorization header"}
BAD_PIN = "Error processing your OAuth request: Invalid oauth_verifier parameter"
REFRESH_ENDPOINT = "POST /2/oauth2/token grant_type=refresh_token"

FB_APP, FB_SECRET = "100000000000001", "sandbox-app-secret"
FB_APP_TOKEN = FB_APP + "|" + FB_SECRET
FB_CLIENT = FB_APP + "|sandbox-fb-client-token"
FB_USER, FB_USER2, FB_PAGE = "300000000000001", "300000000000002", "200000000000001"
PAGE_SCOPES = "pages_show_list,pages_manage_posts,pages_read_engagement"
SIXTY_DAYS = 5183944


# ---------------------------------------------------------------------------
# helpers

def legacy_code(r):
    return r.status_code, r.json()["errors"][0]["code"]


def request_token(sb, demo, **kw):
    r = requests.post(sb.url + "/oauth/request_token",
                      auth=OAuth1(demo["consumer_key"], demo["consumer_secret"], callback_uri="oob"), **kw)
    assert r.status_code == 200, r.text
    return dict(urllib.parse.parse_qsl(r.text))


def access_token(sb, demo, rt, pin, secret=None):
    auth = OAuth1(demo["consumer_key"], demo["consumer_secret"], rt["oauth_token"],
                  secret or rt["oauth_token_secret"], verifier=pin)
    return requests.post(sb.url + "/oauth/access_token", auth=auth)


def approve_pin(sb, rt, user="socialpipe_demo"):
    return sb.control(authorize_request_token={"oauth_token": rt["oauth_token"], "user": user})["pin"]


def user_auth(demo, token, secret):
    return OAuth1(demo["consumer_key"], demo["consumer_secret"], token, secret)


def challenge(verifier, method="S256"):
    if method == "plain":
        return verifier
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


def open_authorize(sb, client_id=PUBLIC, state="state-1", scope="tweet.read tweet.write users.read offline.access",
                   redirect=REDIRECT, verifier=VERIFIER, method="S256", **extra):
    params = {"response_type": "code", "client_id": client_id, "redirect_uri": redirect, "scope": scope,
              "state": state, "code_challenge": challenge(verifier, method), "code_challenge_method": method}
    params.update(extra)
    return requests.get(sb.url + "/i/oauth2/authorize", params=params)


def consent(sb, state="state-1", user="socialpipe_demo", **kw):
    """The code of an approved authorization (the browser's redirect, read)."""
    assert open_authorize(sb, state=state, **kw).status_code == 200
    redirect = sb.control(authorize_oauth2={"state": state, "user": user})["redirect"]
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(redirect).query))["code"]


def token_call(sb, client, **data):
    """POST /2/oauth2/token: a public client names itself, a confidential one uses Basic auth."""
    if isinstance(client, tuple):
        return requests.post(sb.url + "/2/oauth2/token", data=data, auth=client)
    return requests.post(sb.url + "/2/oauth2/token", data=dict(data, client_id=client))


def exchange(sb, code, client=PUBLIC, verifier=VERIFIER, redirect=REDIRECT):
    return token_call(sb, client, grant_type="authorization_code", code=code, redirect_uri=redirect,
                      code_verifier=verifier)


def refresh(sb, token, client=PUBLIC):
    return token_call(sb, client, grant_type="refresh_token", refresh_token=token)


def revoke(sb, token, client=PUBLIC):
    if isinstance(client, tuple):
        return requests.post(sb.url + "/2/oauth2/revoke", data={"token": token}, auth=client)
    return requests.post(sb.url + "/2/oauth2/revoke", data={"token": token, "client_id": client})


def me(sb, bearer):
    return requests.get(sb.url + "/2/users/me", headers={"Authorization": "Bearer " + bearer})


def graph(sb, method, path, **params):
    return requests.request(method, sb.url + "/v27.0/" + path, params=params)


def debug(sb, token):
    return graph(sb, "GET", "debug_token", input_token=token, access_token=FB_APP_TOKEN).json()["data"]


def device(sb, endpoint, **form):
    """Login for Devices as Facebook documents it: every parameter in the form body."""
    return requests.post(sb.url + "/v27.0/device/" + endpoint, data=form)


def device_login(sb, scope=PAGE_SCOPES):
    r = device(sb, "login", access_token=FB_CLIENT, scope=scope)
    assert r.status_code == 200, r.text
    return r.json()


def poll(sb, code):
    return device(sb, "login_status", access_token=FB_CLIENT, code=code)


def device_error(r):
    err = r.json()["error"]
    return r.status_code, err["code"], err.get("error_subcode"), err["type"]


# ---------------------------------------------------------------------------
# X: the OAuth 1.0a PIN flow

def test_pin_flow_gives_a_token_that_works_as_the_user(sb, demo):
    r = requests.post(sb.url + "/oauth/request_token",
                      auth=OAuth1(demo["consumer_key"], demo["consumer_secret"], callback_uri="oob"))
    assert r.status_code == 200 and r.headers["content-type"] == "text/html; charset=utf-8"
    rt = dict(urllib.parse.parse_qsl(r.text))
    assert list(rt) == ["oauth_token", "oauth_token_secret", "oauth_callback_confirmed"]
    assert rt["oauth_callback_confirmed"] == "true"
    assert sb.state()["pending"]["request_tokens"] == [
        {"oauth_token": rt["oauth_token"], "app": "socialpipe-sandbox", "access_level": "read-write"}]
    page = requests.get(sb.url + "/oauth/authorize", params={"oauth_token": rt["oauth_token"]})
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "socialpipe-sandbox" in page.text and "oauth_pin" not in page.text

    pin = approve_pin(sb, rt)
    assert len(pin) == 7 and pin.isdigit()
    page = requests.get(sb.url + "/oauth/authorize", params={"oauth_token": rt["oauth_token"]})
    assert '<code id="oauth_pin">%s</code>' % pin in page.text

    session = OAuth1Session(demo["consumer_key"], client_secret=demo["consumer_secret"],
                            resource_owner_key=rt["oauth_token"], resource_owner_secret=rt["oauth_token_secret"],
                            verifier=pin)
    token = session.fetch_access_token(sb.url + "/oauth/access_token")
    assert sorted(token) == ["oauth_token", "oauth_token_secret", "screen_name", "user_id"]
    assert (token["user_id"], token["screen_name"]) == (demo["user_id"], "socialpipe_demo")
    assert token["oauth_token"].startswith(demo["user_id"] + "-")
    assert token["oauth_token"] != demo["access_token"]

    auth = user_auth(demo, token["oauth_token"], token["oauth_token_secret"])
    assert requests.get(sb.url + "/2/users/me", auth=auth).json()["data"]["username"] == "socialpipe_demo"
    assert requests.post(sb.url + "/2/tweets", json={"text": "after a PIN"}, auth=auth).status_code == 201
    r = requests.get(sb.url + "/1.1/account/verify_credentials.json", auth=auth)
    assert r.json()["id_str"] == demo["user_id"]
    log = sb.log()
    assert [e["endpoint"] for e in log[:3]] == ["POST /oauth/request_token", "GET /oauth/authorize",
                                                "GET /oauth/authorize"]
    assert log[-1]["auth"]["credential"].startswith("sha256:")
    access_entry = next(e for e in log if e["endpoint"] == "POST /oauth/access_token")
    assert pin not in str(access_entry) and 'oauth_verifier="[masked]"' in access_entry["headers"]["authorization"]


def test_pin_flow_with_tweepy_on_the_real_host_and_read_access(real_hosts, demo):
    handler = tweepy.OAuth1UserHandler(demo["consumer_key"], demo["consumer_secret"], callback="oob")
    url = handler.get_authorization_url(access_type="read")
    assert url.startswith("https://api.twitter.com/oauth/authorize?oauth_token=")
    assert real_hosts.state()["pending"]["request_tokens"][0]["access_level"] == "read"
    pin = real_hosts.control(authorize_request_token={"user": "socialpipe_demo"})["pin"]   # the only pending one
    key, secret = handler.get_access_token(pin)
    client = tweepy.Client(consumer_key=demo["consumer_key"], consumer_secret=demo["consumer_secret"],
                           access_token=key, access_token_secret=secret)
    assert client.get_me(user_auth=True).data.username == "socialpipe_demo"
    with pytest.raises(tweepy.Forbidden) as info:
        client.create_tweet(text="read access only")
    assert info.value.response.json()["type"].endswith("/oauth1-permissions")
    assert real_hosts.log()[0]["headers"]["host"] == "api.twitter.com"
    assert real_hosts.posts()["total"] == 0


def test_wrong_pin_spends_the_request_token(sb, demo):
    rt = request_token(sb, demo)
    pin = approve_pin(sb, rt)
    wrong = "0000000" if pin != "0000000" else "1111111"
    r = access_token(sb, demo, rt, wrong)
    assert (r.status_code, r.text) == (401, BAD_PIN)
    assert legacy_code(access_token(sb, demo, rt, pin)) == (401, 89)
    page = requests.get(sb.url + "/oauth/authorize", params={"oauth_token": rt["oauth_token"]})
    assert page.status_code == 400
    # a PIN before any approval is just as wrong
    rt = request_token(sb, demo)
    assert (access_token(sb, demo, rt, "1234567").status_code, sb.state()["pending"]["request_tokens"]) == (401, [])


def test_pin_is_single_use_and_denial_gives_nothing(sb, demo):
    rt = request_token(sb, demo)
    pin = approve_pin(sb, rt)
    assert access_token(sb, demo, rt, pin).status_code == 200
    assert legacy_code(access_token(sb, demo, rt, pin)) == (401, 89)

    rt = request_token(sb, demo)
    reply = sb.control(authorize_request_token={"oauth_token": rt["oauth_token"], "deny": True})
    assert reply["pin"] is None
    assert "did not authorize" in requests.get(sb.url + "/oauth/authorize",
                                               params={"oauth_token": rt["oauth_token"]}).text
    assert access_token(sb, demo, rt, "1234567").status_code == 401


def test_request_token_needs_the_consumer_signature_and_oob(sb, demo):
    bad = OAuth1(demo["consumer_key"], "wrong-secret", callback_uri="oob")
    assert legacy_code(requests.post(sb.url + "/oauth/request_token", auth=bad)) == (401, 32)
    web = OAuth1(demo["consumer_key"], demo["consumer_secret"], callback_uri="https://example.com/cb")
    r = requests.post(sb.url + "/oauth/request_token", auth=web)
    assert legacy_code(r) == (403, 415)
    assert legacy_code(requests.post(sb.url + "/oauth/request_token")) == (400, 215)
    rt = request_token(sb, demo)
    pin = approve_pin(sb, rt)
    assert legacy_code(access_token(sb, demo, rt, pin, secret="not-its-secret")) == (401, 32)
    assert access_token(sb, demo, rt, pin).status_code == 200        # a bad signature spends nothing
    unknown = {"oauth_token": "no-such-request-token", "oauth_token_secret": "x"}
    assert legacy_code(access_token(sb, demo, unknown, pin)) == (401, 89)


def test_invalidate_token_revokes_a_user_token(sb, demo):
    rt = request_token(sb, demo)
    token = dict(urllib.parse.parse_qsl(access_token(sb, demo, rt, approve_pin(sb, rt)).text))
    auth = user_auth(demo, token["oauth_token"], token["oauth_token_secret"])
    r = requests.post(sb.url + "/1.1/oauth/invalidate_token", auth=auth)
    assert (r.status_code, r.json()) == (200, {"access_token": token["oauth_token"]})
    assert requests.get(sb.url + "/2/users/me", auth=auth).status_code == 401
    assert legacy_code(requests.get(sb.url + "/1.1/account/verify_credentials.json", auth=auth)) == (401, 89)
    # the configured demo token too, until reset; and an app without v1.1 access may call it
    demo_auth = user_auth(demo, demo["access_token"], demo["access_token_secret"])
    assert requests.post(sb.url + "/1.1/oauth/invalidate_token", auth=demo_auth).status_code == 200
    assert requests.get(sb.url + "/2/users/me", auth=demo_auth).status_code == 401
    unenrolled = OAuth1("sandbox-unenrolled-consumer-key", "sandbox-unenrolled-consumer-secret",
                        "1000000000000000001-sandboxunenrolledtoken", "sandbox-unenrolled-token-secret")
    assert requests.post(sb.url + "/1.1/oauth/invalidate_token", auth=unenrolled).status_code == 200
    sb.clear()
    assert requests.get(sb.url + "/2/users/me", auth=demo_auth).status_code == 200


# ---------------------------------------------------------------------------
# X: OAuth 2.0 Authorization Code with PKCE

def test_pkce_flow_with_the_public_client(sb):
    page = open_authorize(sb)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert sb.state()["pending"]["oauth2"] == [{"state": "state-1", "client_id": PUBLIC, "redirect_uri": REDIRECT,
                                                "scope": "tweet.read tweet.write users.read offline.access"}]
    redirect = sb.control(authorize_oauth2={"state": "state-1", "user": "socialpipe_demo"})["redirect"]
    assert redirect.startswith(REDIRECT + "?state=state-1&code=")
    assert sb.state()["pending"]["oauth2"] == []
    code = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(redirect).query))["code"]

    r = exchange(sb, code)
    assert r.status_code == 200, r.text
    body = r.json()
    assert list(body) == ["token_type", "expires_in", "access_token", "scope", "refresh_token"]
    assert (body["token_type"], body["expires_in"]) == ("bearer", 7200)
    assert body["scope"] == "tweet.read tweet.write users.read offline.access"
    assert me(sb, body["access_token"]).json()["data"]["username"] == "socialpipe_demo"
    r = requests.post(sb.url + "/2/tweets", json={"text": "via PKCE"},
                      headers={"Authorization": "Bearer " + body["access_token"]})
    assert r.status_code == 201
    log = sb.log()
    assert [e["endpoint"] for e in log[:2]] == ["GET /i/oauth2/authorize",
                                                "POST /2/oauth2/token grant_type=authorization_code"]
    assert log[1]["body"]["code"] == ["[masked]"] and log[1]["body"]["code_verifier"] == ["[masked]"]
    assert log[1]["auth"] == {"scheme": "oauth2_client", "outcome": "ok", "client_id": PUBLIC,
                              "user_id": "1000000000000000001"}
    assert log[-1]["auth"]["scheme"] == "oauth2_user"


def test_tweepy_oauth2_user_handler_with_the_confidential_client(real_hosts, monkeypatch):
    monkeypatch.setenv("OAUTHLIB_INSECURE_TRANSPORT", "1")     # the loopback redirect is plain http
    handler = tweepy.OAuth2UserHandler(client_id=CONFIDENTIAL[0], redirect_uri=REDIRECT,
                                       scope=["tweet.read", "users.read", "offline.access"],
                                       client_secret=CONFIDENTIAL[1])
    url = handler.get_authorization_url()
    assert url.startswith("https://twitter.com/i/oauth2/authorize?")
    page = requests.get(real_hosts.url + "/i/oauth2/authorize?" + urllib.parse.urlsplit(url).query)
    assert page.status_code == 200
    redirect = real_hosts.control(authorize_oauth2={"user": "socialpipe_demo"})["redirect"]
    token = handler.fetch_token(redirect)
    assert token["expires_in"] == 7200 and "refresh_token" in token
    client = tweepy.Client(token["access_token"])
    assert client.get_me(user_auth=False).data.username == "socialpipe_demo"
    entry = [e for e in real_hosts.log() if e["path"] == "/2/oauth2/token"][0]
    assert entry["headers"]["host"] == "api.twitter.com"
    assert entry["headers"]["authorization"] == "Basic [masked]"
    assert entry["auth"]["client_id"] == CONFIDENTIAL[0]


def test_plain_challenge_and_a_wrong_verifier(sb):
    code = consent(sb, method="plain")
    assert exchange(sb, code).status_code == 200
    code = consent(sb, state="state-2")
    r = exchange(sb, code, verifier="x" * 60)
    assert (r.status_code, r.json()) == (400, {"error": "invalid_request", "error_description":
                                               "Value passed for the code verifier did not match the code "
                                               "challenge."})
    assert exchange(sb, code).json() == INVALID_CODE            # the failed exchange spent it
    r = token_call(sb, PUBLIC, grant_type="authorization_code", code=consent(sb, state="s3"), redirect_uri=REDIRECT)
    assert r.json()["error_description"] == "Missing required parameter [code_verifier]."


def test_a_code_used_twice_revokes_what_it_gave(sb):
    code = consent(sb)
    first = exchange(sb, code).json()
    r = exchange(sb, code)
    assert (r.status_code, r.json()) == (400, INVALID_CODE)
    assert sb.log()[-1]["token_reuse"] is True
    assert me(sb, first["access_token"]).status_code == 401
    assert refresh(sb, first["refresh_token"]).json() == INVALID_TOKEN


def test_codes_expire(sb):
    sb.control(oauth2_code_lifetime=0.3)
    assert sb.state()["oauth2_code_lifetime"] == 0.3
    code = consent(sb)
    time.sleep(0.5)
    assert exchange(sb, code).json() == INVALID_CODE
    sb.clear()
    assert sb.state()["oauth2_code_lifetime"] == 30


def test_redirect_uri_must_be_registered_and_match(sb):
    for uri in ("http://127.0.0.1:8739/other", "https://example.com/callback", "http://localhost:8739/callback"):
        r = open_authorize(sb, redirect=uri)
        assert r.status_code == 400 and "redirect_uri" in r.text, uri
    # the public client takes any loopback port; the confidential one only what is registered
    assert open_authorize(sb, state="any-port", redirect="http://127.0.0.1:51234/callback").status_code == 200
    assert open_authorize(sb, redirect="http://[::1]:51234/callback").status_code == 400   # host as registered
    assert open_authorize(sb, client_id=CONFIDENTIAL[0], redirect="http://127.0.0.1:51234/callback").status_code == 400
    assert open_authorize(sb, client_id=CONFIDENTIAL[0]).status_code == 200
    redirect = sb.control(authorize_oauth2={"state": "any-port", "user": "socialpipe_demo"})["redirect"]
    assert redirect.startswith("http://127.0.0.1:51234/callback?state=any-port&code=")
    code = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(redirect).query))["code"]
    r = exchange(sb, code, redirect=REDIRECT)
    assert r.json()["error_description"] == ("Value passed for the redirect uri did not match the uri of the "
                                             "authorization code.")


def test_authorize_checks_its_parameters(sb):
    for extra in ({"scope": "tweet.read no.such.scope"}, {"state": ""}, {"code_challenge": ""},
                  {"code_challenge_method": "S512"}, {"response_type": "token"}, {"client_id": "nobody"}):
        r = open_authorize(sb, **extra)
        assert r.status_code == 400, extra
    assert sb.state()["pending"]["oauth2"] == []
    assert open_authorize(sb, code_challenge_method="s256").status_code == 200   # as X accepts it


def test_confidential_client_must_use_basic_auth(sb):
    code = consent(sb, client_id=CONFIDENTIAL[0])
    r = exchange(sb, code, client=CONFIDENTIAL[0])
    assert (r.status_code, r.json()) == (401, NO_BASIC)
    r = exchange(sb, code, client=(CONFIDENTIAL[0], "wrong-secret"))
    assert (r.status_code, r.json()) == (401, NO_BASIC)
    assert exchange(sb, code, client=CONFIDENTIAL).status_code == 200
    r = requests.post(sb.url + "/2/oauth2/token", data={"grant_type": "refresh_token", "refresh_token": "x"})
    assert r.json()["error_description"] == "Missing required parameter [client_id]."


def test_denied_consent_redirects_with_access_denied(sb):
    assert open_authorize(sb, state="st-d").status_code == 200
    redirect = sb.control(authorize_oauth2={"state": "st-d", "deny": True})["redirect"]
    assert redirect == REDIRECT + "?error=access_denied&state=st-d"
    assert sb.state()["pending"]["oauth2"] == []
    with pytest.raises(harness.SandboxError):
        sb.control(authorize_oauth2={"state": "st-d", "user": "socialpipe_demo"})


def test_without_offline_access_there_is_no_refresh_token_and_scopes_hold(sb):
    body = exchange(sb, consent(sb, scope="tweet.read users.read")).json()
    assert "refresh_token" not in body and body["scope"] == "tweet.read users.read"
    assert me(sb, body["access_token"]).status_code == 200
    r = requests.post(sb.url + "/2/tweets", json={"text": "no write scope"},
                      headers={"Authorization": "Bearer " + body["access_token"]})
    assert r.status_code == 403 and sb.log()[-1]["auth"]["missing_scopes"] == ["tweet.write"]


def test_refresh_rotates_and_an_old_refresh_token_revokes_the_family(sb):
    assert me(sb, REFRESHABLE).status_code == 200
    r = refresh(sb, REFRESH)
    assert r.status_code == 200, r.text
    body = r.json()
    assert list(body) == ["token_type", "expires_in", "access_token", "scope", "refresh_token"]
    assert body["scope"] == "tweet.read tweet.write users.read follows.read offline.access"
    assert body["access_token"] != REFRESHABLE and body["refresh_token"] != REFRESH
    assert me(sb, body["access_token"]).status_code == 200
    assert me(sb, REFRESHABLE).status_code == 200        # the previous access token lives out its time

    r = refresh(sb, REFRESH)
    assert (r.status_code, r.json()) == (400, INVALID_TOKEN)
    assert me(sb, body["access_token"]).status_code == 401
    assert me(sb, REFRESHABLE).status_code == 401
    assert refresh(sb, body["refresh_token"]).json() == INVALID_TOKEN
    log = sb.log()
    refreshes = [e for e in log if e["endpoint"] == REFRESH_ENDPOINT]
    assert [(e["status"], e.get("token_reuse")) for e in refreshes] == [(200, None), (400, True), (400, None)]
    assert all(e["body"]["refresh_token"] == ["[masked]"] for e in refreshes)
    assert REFRESH not in str(log) and body["refresh_token"] not in str(log)


def test_a_rotation_chain_and_reset(sb):
    token = REFRESH
    for _ in range(3):
        body = refresh(sb, token).json()
        assert me(sb, body["access_token"]).status_code == 200
        token = body["refresh_token"]
    assert len([e for e in sb.log() if e["endpoint"] == REFRESH_ENDPOINT]) == 3
    sb.clear()
    assert refresh(sb, REFRESH).status_code == 200
    assert me(sb, token).status_code == 401                 # runtime tokens are gone after reset


def test_reuse_may_leave_the_family_alone():
    with harness.Sandbox.start(config=harness.merged_config(x={"oauth2_reuse_revokes_family": False})) as sb:
        body = refresh(sb, REFRESH).json()
        assert refresh(sb, REFRESH).json() == INVALID_TOKEN
        assert me(sb, body["access_token"]).status_code == 200
        assert refresh(sb, body["refresh_token"]).status_code == 200


def test_refresh_belongs_to_its_client(sb):
    r = refresh(sb, CONF_REFRESH, client=CONFIDENTIAL)
    assert r.status_code == 200 and me(sb, r.json()["access_token"]).status_code == 200
    assert refresh(sb, REFRESH, client=CONFIDENTIAL).json() == INVALID_TOKEN
    assert refresh(sb, r.json()["refresh_token"], client=CONFIDENTIAL[0]).json() == NO_BASIC
    assert refresh(sb, REFRESH).status_code == 200          # still unused: the refusals spent nothing


def test_short_lifetimes_and_expire_token(sb):
    sb.control(oauth2_token_lifetime=1)
    body = refresh(sb, REFRESH).json()
    assert body["expires_in"] == 1
    assert me(sb, body["access_token"]).status_code == 200
    time.sleep(1.2)
    assert me(sb, body["access_token"]).status_code == 401
    again = refresh(sb, body["refresh_token"])             # refresh tokens do not expire with it
    assert again.status_code == 200
    sb.control(expire_token=again.json()["access_token"])
    assert me(sb, again.json()["access_token"]).status_code == 401
    sb.control(restore_token=again.json()["access_token"])
    assert me(sb, again.json()["access_token"]).status_code == 200
    sb.control(expire_token=CONF_ACCESS)
    assert me(sb, CONF_ACCESS).status_code == 401
    assert refresh(sb, CONF_REFRESH, client=CONFIDENTIAL).status_code == 200
    with pytest.raises(harness.SandboxError):
        sb.control(oauth2_token_lifetime=0)


def test_revoke_an_access_token_or_a_refresh_token_with_its_family(sb):
    r = revoke(sb, REFRESHABLE)
    assert (r.status_code, r.json()) == (200, {"revoked": True})
    assert me(sb, REFRESHABLE).status_code == 401
    body = refresh(sb, REFRESH).json()                       # the refresh token still works
    assert revoke(sb, body["refresh_token"]).status_code == 200
    assert me(sb, body["access_token"]).status_code == 401
    assert refresh(sb, body["refresh_token"]).json() == INVALID_TOKEN
    assert revoke(sb, "never-issued").json() == {"revoked": True}
    assert revoke(sb, CONF_ACCESS).json() == INVALID_TOKEN   # another client's
    assert revoke(sb, "sandbox-bearer-token").json()["error"] == "unsupported_token_type"
    assert revoke(sb, CONF_REFRESH, client=CONFIDENTIAL).status_code == 200
    assert me(sb, CONF_ACCESS).status_code == 401
    # a configured token of the app without a client of its own: any client of the app
    assert revoke(sb, "sandbox-oauth2-user-token").status_code == 200
    assert me(sb, "sandbox-oauth2-user-token").status_code == 401
    assert all(e["body"]["token"] == ["[masked]"] for e in sb.log() if e["path"] == "/2/oauth2/revoke")


def test_app_only_bearer_comes_back_until_invalidated(sb, demo):
    # x-api.md section 10: Basic of the percent-encoded key and secret, a form body with a charset.
    basic = base64.b64encode(("%s:%s" % (urllib.parse.quote(demo["consumer_key"]),
                                         urllib.parse.quote(demo["consumer_secret"]))).encode()).decode()
    headers = {"Authorization": "Basic " + basic,
               "Content-Type": "application/x-www-form-urlencoded;charset=UTF-8"}
    token = lambda: requests.post(sb.url + "/oauth2/token", data="grant_type=client_credentials", headers=headers)
    assert token().json() == {"token_type": "bearer", "access_token": demo["bearer_token"]}
    assert token().json()["access_token"] == demo["bearer_token"]
    r = requests.post(sb.url + "/oauth2/invalidate_token", data={"access_token": demo["bearer_token"]},
                      headers={"Authorization": "Basic " + basic})
    assert (r.status_code, r.json()) == (200, {"access_token": demo["bearer_token"]})
    lookup = lambda t: requests.get(sb.url + "/2/users/by/username/jack", headers={"Authorization": "Bearer " + t})
    assert lookup(demo["bearer_token"]).status_code == 401
    fresh = token().json()["access_token"]
    assert fresh != demo["bearer_token"] and lookup(fresh).status_code == 200
    assert token().json()["access_token"] == fresh
    r = requests.post(sb.url + "/oauth2/invalidate_token", data={"access_token": fresh},
                      auth=(demo["consumer_key"], "wrong"))
    assert legacy_code(r) == (403, 99)
    assert [e["auth"]["scheme"] for e in sb.log() if e["path"].startswith("/oauth2/")] == ["basic"] * 6


def test_consent_controls_refuse_what_is_not_pending(sb, demo):
    for body in ({"authorize_request_token": {"oauth_token": "nope", "user": "socialpipe_demo"}},
                 {"authorize_request_token": {"user": "socialpipe_demo"}},
                 {"authorize_oauth2": {"user": "socialpipe_demo"}},
                 {"approve_device": {"user": FB_USER}},
                 {"device_interval": -1}):
        with pytest.raises(harness.SandboxError):
            sb.control(**body)
    rt = request_token(sb, demo)
    for spec in ({"oauth_token": rt["oauth_token"], "user": "nobody_here"},
                 {"oauth_token": rt["oauth_token"], "user": "socialpipe_demo", "pin": "1"}):
        with pytest.raises(harness.SandboxError):
            sb.control(authorize_request_token=spec)
    assert approve_pin(sb, rt, user="1000000000000000002")              # by id as well as username


# ---------------------------------------------------------------------------
# Graph: Login for Devices, exchange, Page tokens

def test_device_login_from_code_to_a_page_post(sb):
    sb.control(device_interval=1)
    login = device_login(sb)
    assert sorted(login) == ["code", "expires_in", "interval", "user_code", "verification_uri"]
    assert (login["verification_uri"], login["expires_in"], login["interval"]) == (
        "https://www.facebook.com/device", 420, 1)
    r = poll(sb, login["code"])
    assert device_error(r) == (400, 31, 1349174, "OAuthException")
    assert r.json()["error"]["error_user_title"] == "Device Login Authorization Pending"
    assert device_error(poll(sb, login["code"])) == (400, 17, 1349172, "OAuthException")
    assert sb.state()["pending"]["device"] == [{"user_code": login["user_code"], "app_id": FB_APP,
                                                "scope": PAGE_SCOPES}]
    granted = sb.control(approve_device={"user_code": login["user_code"], "user": FB_USER})["scopes"]
    assert granted == ["public_profile"] + PAGE_SCOPES.split(",")
    time.sleep(1.05)
    r = poll(sb, login["code"])
    assert r.status_code == 200 and list(r.json()) == ["access_token", "expires_in"]
    # Login for Devices hands out a long-lived user token (contract section 7).
    token, lifetime = r.json()["access_token"], r.json()["expires_in"]
    assert lifetime == SIXTY_DAYS
    time.sleep(1.05)
    assert device_error(poll(sb, login["code"]))[1:3] == (463, 1349152)     # spent

    info = debug(sb, token)
    assert (info["type"], info["user_id"], info["is_valid"]) == ("USER", FB_USER, True)
    assert abs(info["expires_at"] - (time.time() + SIXTY_DAYS)) < 10 and info["scopes"] == granted
    assert graph(sb, "GET", "me", access_token=token).json()["id"] == FB_USER
    pages = graph(sb, "GET", "me/accounts", access_token=token).json()["data"]
    page_token = next(p["access_token"] for p in pages if p["id"] == FB_PAGE)
    info = debug(sb, page_token)
    assert (info["type"], info["profile_id"], info["expires_at"]) == ("PAGE", FB_PAGE, 0)
    r = graph(sb, "POST", FB_PAGE + "/feed", access_token=page_token, message="after a device login")
    assert r.status_code == 200 and sb.posts()["counts"] == {"after a device login": 1}
    log = sb.log()
    assert [e["endpoint"] for e in log[:2]] == ["POST /device/login", "POST /device/login_status"]
    assert log[0]["auth"] == {"scheme": "facebook", "outcome": "ok", "credential": "client:" + FB_APP,
                              "token_type": "CLIENT"}
    assert "sandbox-fb-client-token" not in str(log) and token not in str(log)


def test_device_codes_expire_and_a_cancelled_login_ends(sb):
    sb.control(device_interval=0, device_expires_in=1)
    login = device_login(sb)
    assert login["expires_in"] == 1 and login["interval"] == 0
    assert device_error(poll(sb, login["code"]))[1:3] == (31, 1349174)
    time.sleep(1.1)
    r = poll(sb, login["code"])
    assert device_error(r) == (400, 463, 1349152, "OAuthException")
    assert r.json()["error"]["error_user_title"] == "Activation Code Expired"
    sb.control(device_expires_in=420)
    login = device_login(sb)
    assert sb.control(approve_device={"deny": True})["scopes"] is None
    assert device_error(poll(sb, login["code"]))[1:3] == (463, 1349152)


def test_device_approval_grants_what_was_asked_but_not_what_was_declined(sb):
    sb.control(device_interval=0)
    login = device_login(sb, scope="pages_show_list,pages_manage_posts,email")
    granted = sb.control(approve_device={"user_code": login["user_code"].lower(), "user": FB_USER,
                                         "decline": ["pages_manage_posts"]})["scopes"]
    assert granted == ["public_profile", "pages_show_list"]       # email was declined before: not asked again
    token = poll(sb, login["code"]).json()["access_token"]
    assert debug(sb, token)["scopes"] == granted
    perms = graph(sb, "GET", FB_USER + "/permissions", access_token=FB_APP_TOKEN).json()["data"]
    assert {"permission": "pages_manage_posts", "status": "declined"} in perms
    login = device_login(sb, scope="pages_manage_posts,user_posts")
    granted = sb.control(approve_device={"user_code": login["user_code"], "user": FB_USER2})["scopes"]
    assert granted == ["public_profile", "user_posts"]


def test_device_login_needs_the_client_token(sb):
    cases = [(FB_APP_TOKEN, 190), ("sandbox-fb-user-token", 190), (None, 104),
             ("100000000000002|sandbox-fb-secure-client-token", 3)]
    for token, code in cases:
        params = {"scope": "public_profile"}
        if token:
            params["access_token"] = token
        r = device(sb, "login", **params)
        assert r.json()["error"]["code"] == code, token
    assert poll(sb, "no-such-code").json()["error"]["code"] == 100
    assert graph(sb, "GET", "device/login", access_token=FB_CLIENT).json()["error"]["code"] == 100


def test_page_tokens_last_as_long_as_the_user_token_they_came_from(sb):
    short = "sandbox-fb-short-user-token"
    user_expiry = debug(sb, short)["expires_at"]
    assert 0 < user_expiry - time.time() <= 3600
    pages = graph(sb, "GET", "me/accounts", access_token=short).json()["data"]
    page_token = next(p["access_token"] for p in pages if p["id"] == FB_PAGE)
    assert page_token != "sandbox-fb-page-token"
    assert debug(sb, page_token)["expires_at"] == user_expiry
    r = graph(sb, "GET", FB_PAGE, fields="access_token", access_token=short)
    assert r.json()["access_token"] == page_token
    long = graph(sb, "GET", "oauth/access_token", grant_type="fb_exchange_token", client_id=FB_APP,
                 client_secret=FB_SECRET, fb_exchange_token=short).json()["access_token"]
    pages = graph(sb, "GET", "me/accounts", access_token=long).json()["data"]
    lasting = next(p["access_token"] for p in pages if p["id"] == FB_PAGE)
    assert lasting != page_token and debug(sb, lasting)["expires_at"] == 0
    pages = graph(sb, "GET", "me/accounts", access_token="sandbox-fb-user-token").json()["data"]
    assert next(p["access_token"] for p in pages if p["id"] == FB_PAGE) == "sandbox-fb-page-token"


def test_facebook_sdk_extends_a_device_token(real_hosts):
    real_hosts.control(device_interval=0)
    url = "https://graph.facebook.com/v27.0/device/"
    login = requests.post(url + "login", data={"access_token": FB_CLIENT, "scope": PAGE_SCOPES}).json()
    real_hosts.control(approve_device={"user": FB_USER})
    answer = requests.post(url + "login_status", data={"access_token": FB_CLIENT, "code": login["code"]}).json()
    api = facebook.GraphAPI(access_token=answer["access_token"], version="3.1")
    api.version = "v27.0"
    extended = api.extend_access_token(FB_APP, FB_SECRET)
    assert extended["expires_in"] == SIXTY_DAYS and extended["token_type"] == "bearer"
    api.access_token = extended["access_token"]
    pages = api.get_object("me/accounts")["data"]
    assert [p["id"] for p in pages] == [FB_PAGE, "200000000000002"]
    assert real_hosts.log()[0]["headers"]["host"] == "graph.facebook.com"
