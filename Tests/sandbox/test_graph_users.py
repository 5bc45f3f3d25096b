"""Users and tokens for permission checks: /me without a token (2500), three
users with their own permission sets and tokens, the app token reading each
user's permissions, and tokens whose data access has lapsed: one that stays
valid with its permissions expired, and ones refused with 190/493."""
import json
import time

import pytest
import requests

import harness

APP_TOKEN = "100000000000001|sandbox-app-secret"
LAPSED = "sandbox-fb-data-lapsed-token"
LAPSED_AT = 1751328000
REFUSED = "sandbox-fb-data-expired-token"            # data_access_lapse "refuse"
REFUSED_PAGE = "sandbox-fb-data-expired-page-token"
DATA_ACCESS_MESSAGE = ("Error validating access token: The user's data access for this app has expired. "
                       "The user must log in to the app again.")
USERS = {
    "300000000000001": ("sandbox-fb-user-token", {
        "public_profile": "granted", "email": "declined", "pages_show_list": "granted",
        "pages_manage_posts": "granted", "pages_read_engagement": "granted", "user_posts": "expired",
        "publish_to_groups": "declined"}),
    "300000000000002": ("sandbox-fb-user2-token", {
        "public_profile": "granted", "email": "granted", "pages_show_list": "granted",
        "pages_read_engagement": "granted", "pages_manage_posts": "declined"}),
    "300000000000003": ("sandbox-fb-user3-token", {
        "public_profile": "granted", "user_posts": "granted", "pages_show_list": "declined",
        "pages_manage_posts": "expired", "pages_read_engagement": "expired"}),
}


def get(sb, path, token=None, **params):
    if token:
        params["access_token"] = token
    return requests.get(sb.url + "/v27.0" + path, params=params)


def statuses(r):
    assert r.status_code == 200, r.text
    return {d["permission"]: d["status"] for d in r.json()["data"]}


def debug(sb, token):
    return get(sb, "/debug_token", APP_TOKEN, input_token=token).json()["data"]


# -- /me without a token ------------------------------------------------------------------------------

@pytest.mark.parametrize("path", ["/me/permissions", "/me", "/me/permissions/pages_manage_posts",
                                  "/me/accounts"])
def test_me_without_a_token_is_2500(sb, path):
    r = get(sb, path)
    assert r.status_code == 400
    assert r.json()["error"] == {
        "message": "An active access token must be used to query information about the current user.",
        "type": "OAuthException", "code": 2500, "is_transient": False,
        "fbtrace_id": r.headers["x-fb-trace-id"]}
    assert sb.log()[-1]["auth"] == {"scheme": "facebook", "outcome": "missing"}


def test_other_paths_without_a_token_stay_104_and_batch_items_follow_the_same_rule(sb):
    assert get(sb, "/300000000000001/permissions").json()["error"]["code"] == 104
    items = [{"method": "GET", "relative_url": "me/permissions"},
             {"method": "GET", "relative_url": "300000000000001/permissions"}]
    slots = requests.post(sb.url + "/v27.0/", data={"batch": json.dumps(items)}).json()
    assert [json.loads(s["body"])["error"]["code"] for s in slots] == [2500, 104]


# -- three users ---------------------------------------------------------------------------------------

def test_each_user_token_reads_its_own_users_permissions(sb):
    for uid, (token, expected) in USERS.items():
        assert statuses(get(sb, "/me/permissions", token)) == expected
        assert statuses(get(sb, "/%s/permissions" % uid, token)) == expected
        assert get(sb, "/me", token).json()["id"] == uid
    err = get(sb, "/300000000000003/permissions", "sandbox-fb-user2-token").json()["error"]
    assert (err["code"], err["error_subcode"]) == (100, 33)


def test_the_app_token_reads_every_users_permissions(sb):
    for uid, (_, expected) in USERS.items():
        assert statuses(get(sb, "/%s/permissions" % uid, APP_TOKEN)) == expected
        one = get(sb, "/%s/permissions/pages_manage_posts" % uid, APP_TOKEN).json()["data"]
        assert one == [{"permission": "pages_manage_posts", "status": expected["pages_manage_posts"]}]


def test_user_tokens_carry_their_users_granted_permissions(sb):
    assert debug(sb, "sandbox-fb-user2-token")["scopes"] == [
        "public_profile", "email", "pages_show_list", "pages_read_engagement"]
    assert debug(sb, "sandbox-fb-user3-token")["scopes"] == ["public_profile", "user_posts"]


def test_a_hundred_permission_reads_over_three_users(sb):
    tokens = [USERS[uid][0] for uid in sorted(USERS)]
    for i in range(100):
        token = tokens[i % 3]
        uid = sorted(USERS)[i % 3]
        assert statuses(get(sb, "/me/permissions", token)) == USERS[uid][1]
    users = [e["auth"]["user_id"] for e in sb.log()]
    assert {u: users.count(u) for u in set(users)} == {"300000000000001": 34, "300000000000002": 33,
                                                       "300000000000003": 33}


# -- data access lapsed ---------------------------------------------------------------------------------

def test_a_token_whose_data_access_lapsed_is_valid_but_holds_nothing(sb):
    data = debug(sb, LAPSED)
    assert data["is_valid"] is True and "error" not in data
    assert (data["type"], data["user_id"], data["expires_at"]) == ("USER", "300000000000001", 0)
    assert data["data_access_expires_at"] == LAPSED_AT < time.time()
    assert data["issued_at"] == LAPSED_AT - 90 * 86400
    assert data["scopes"] == [] and data["granular_scopes"] == []
    # Every permission the user granted reads expired through it; declined ones stay declined.
    lapsed = statuses(get(sb, "/me/permissions", LAPSED))
    expected = {p: ("expired" if s == "granted" else s) for p, s in USERS["300000000000001"][1].items()}
    assert lapsed == expected
    assert get(sb, "/me/permissions/pages_manage_posts", LAPSED).json()["data"] == [
        {"permission": "pages_manage_posts", "status": "expired"}]
    assert statuses(get(sb, "/me/permissions", LAPSED, status="granted")) == {}
    # The user's other token and the app token are unaffected.
    assert statuses(get(sb, "/me/permissions", "sandbox-fb-user-token")) == USERS["300000000000001"][1]
    assert statuses(get(sb, "/300000000000001/permissions", APP_TOKEN)) == USERS["300000000000001"][1]
    # It authenticates, but nothing that needs a permission works.
    assert get(sb, "/me", LAPSED).json() == {"id": "300000000000001", "name": "Sandbox Demo"}
    assert get(sb, "/me/accounts", LAPSED).json()["data"] == []
    assert get(sb, "/me/accounts", "sandbox-fb-user-token").json()["data"] != []
    entry = sb.log()[-2]
    assert entry["auth"]["data_access"] == "expired" and entry["auth"]["outcome"] == "ok"
    assert "data_access" not in sb.log()[-1]["auth"]


def data_access_error(r):
    """The 190/493 answer, checked whole; its error object."""
    assert r.status_code == 400, r.text
    err = r.json()["error"]
    assert (err["code"], err["error_subcode"], err["type"], err["message"]) == (
        190, 493, "OAuthException", DATA_ACCESS_MESSAGE), err
    assert r.headers["WWW-Authenticate"].startswith('OAuth "Facebook Platform" "invalid_token"')
    return err


@pytest.mark.parametrize("method,path,token,form", [
    ("GET", "/me", REFUSED, None), ("GET", "/me/permissions", REFUSED, None),
    ("GET", "/me/accounts", REFUSED, None),
    ("POST", "/200000000000001/feed", REFUSED_PAGE, {"message": "after the lapse"}),
    ("GET", "/200000000000001/feed", REFUSED_PAGE, None)])
def test_a_token_refused_for_lapsed_data_access_answers_190_493_on_every_call(sb, method, path, token, form):
    r = requests.request(method, sb.url + "/v27.0" + path, headers={"Authorization": "Bearer " + token}, data=form)
    data_access_error(r)
    entry = sb.log()[-1]
    assert entry["auth"]["outcome"] == "data_access_expired", entry["auth"]
    assert sb.posts()["counts"] == {}


def test_a_refused_token_in_a_batch_and_under_debug_token(sb):
    """The batch's own token refused fails the batch; an item carrying it fails alone;
    debug_token calls it invalid with the same error; it cannot be exchanged."""
    items = [{"method": "GET", "relative_url": "me"}]
    r = requests.post(sb.url + "/v27.0/", data={"batch": json.dumps(items), "access_token": REFUSED})
    data_access_error(r)
    items = [{"method": "GET", "relative_url": "me?access_token=" + REFUSED},
             {"method": "GET", "relative_url": "me"}]
    slots = requests.post(sb.url + "/v27.0/", data={"batch": json.dumps(items), "include_headers": "false",
                                                    "access_token": "sandbox-fb-user-token"}).json()
    assert json.loads(slots[0]["body"])["error"]["error_subcode"] == 493 and slots[0]["code"] == 400
    assert json.loads(slots[1]["body"])["id"] == "300000000000001"
    for token in (REFUSED, REFUSED_PAGE):
        data = debug(sb, token)
        assert data["is_valid"] is False and data["data_access_expires_at"] == LAPSED_AT, data
        assert data["error"] == {"code": 190, "message": DATA_ACCESS_MESSAGE, "subcode": 493}
    r = get(sb, "/oauth/access_token", grant_type="fb_exchange_token", client_id="100000000000001",
            client_secret="sandbox-app-secret", fb_exchange_token=REFUSED)
    data_access_error(r)


def test_the_user_of_a_refused_token_keeps_what_they_granted_for_other_tokens(sb):
    """The lapse is the token's: the user's other tokens and the app token read the
    permissions as configured, and the token that stays valid still reads them expired."""
    assert statuses(get(sb, "/300000000000001/permissions", APP_TOKEN)) == USERS["300000000000001"][1]
    assert statuses(get(sb, "/me/permissions", "sandbox-fb-user-token")) == USERS["300000000000001"][1]
    assert statuses(get(sb, "/me/permissions", LAPSED))["pages_manage_posts"] == "expired"


def test_a_token_refused_once_its_data_access_lapses_during_the_run(fb):
    tokens = harness.default_config()["facebook"]["tokens"] + [
        {"name": "soon", "token": "soon-refused-token", "type": "USER", "app_id": fb["app_id"],
         "user_id": fb["user_id"], "data_access_expires_in": 1.5, "data_access_lapse": "refuse"}]
    with harness.Sandbox.start(config=harness.merged_config(facebook={"tokens": tokens})) as sb:
        started = sb.state()["started"]
        assert get(sb, "/me", "soon-refused-token").json() == {"id": fb["user_id"], "name": "Sandbox Demo"}
        time.sleep(max(0.0, started + 1.6 - time.time()))
        data_access_error(get(sb, "/me", "soon-refused-token"))


def test_an_ordinary_token_has_ninety_days_of_data_access(sb):
    data = debug(sb, "sandbox-fb-user-token")
    assert data["data_access_expires_at"] == data["issued_at"] + 90 * 86400 > time.time()
    assert data["scopes"] != []


def test_data_access_can_be_configured_to_lapse_before_or_during_the_run(fb):
    tokens = harness.default_config()["facebook"]["tokens"] + [
        {"name": "flag", "token": "flag-token", "type": "USER", "app_id": fb["app_id"],
         "user_id": fb["user_id"], "data_access_expired": True},
        {"name": "soon", "token": "soon-token", "type": "USER", "app_id": fb["app_id"],
         "user_id": fb["user_id"], "data_access_expires_in": 1.5}]
    with harness.Sandbox.start(config=harness.merged_config(facebook={"tokens": tokens})) as sb:
        started = sb.state()["started"]
        flag = debug(sb, "flag-token")
        assert flag["is_valid"] is True and flag["data_access_expires_at"] == int(started) - 86400
        assert flag["issued_at"] == flag["data_access_expires_at"] - 90 * 86400
        assert statuses(get(sb, "/me/permissions", "flag-token"))["pages_manage_posts"] == "expired"
        assert statuses(get(sb, "/me/permissions", "soon-token"))["pages_manage_posts"] == "granted"
        assert debug(sb, "soon-token")["data_access_expires_at"] == int(started + 1.5)
        time.sleep(max(0.0, started + 1.6 - time.time()))
        assert statuses(get(sb, "/me/permissions", "soon-token"))["pages_manage_posts"] == "expired"


@pytest.mark.parametrize("bad", [{"data_access_expired": True, "data_access_expires_at": 1751328000},
                                 {"data_access_expired": "yes"}, {"data_access_expires_at": "2025-07-01"},
                                 {"data_access_expires_in": "soon"}, {"data_access_lapse": "error"},
                                 {"data_access_lapse": True}])
def test_bad_data_access_settings_are_configuration_errors(fb, bad):
    token = dict({"token": "bad-token", "type": "USER", "app_id": fb["app_id"], "user_id": fb["user_id"]}, **bad)
    cfg = harness.merged_config(facebook={"tokens": [token]})
    with pytest.raises(harness.SandboxError) as info:
        harness.Sandbox.start(config=cfg).stop()
    assert "data_access" in str(info.value)
