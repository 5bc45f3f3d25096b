"""Users and tokens for permission checks: /me without a token (2500), three
users with their own permission sets and tokens, the app token reading each
user's permissions, and a token whose data access has lapsed."""
import json
import time

import pytest
import requests

import harness

APP_TOKEN = "100000000000001|sandbox-app-secret"
LAPSED = "sandbox-fb-data-lapsed-token"
LAPSED_AT = 1751328000
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
                                 {"data_access_expires_in": "soon"}])
def test_bad_data_access_settings_are_configuration_errors(fb, bad):
    token = dict({"token": "bad-token", "type": "USER", "app_id": fb["app_id"], "user_id": fb["user_id"]}, **bad)
    cfg = harness.merged_config(facebook={"tokens": [token]})
    with pytest.raises(harness.SandboxError) as info:
        harness.Sandbox.start(config=cfg).stop()
    assert "data_access" in str(info.value)
