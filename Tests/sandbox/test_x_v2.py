"""X API v2 behaviour: POST /2/tweets, users/me, user lookup, following lists."""
import pytest
import requests
from twitter_text import parse_tweet

from toolenv import oauth1  # Tests/conftest.py puts Tests/ on sys.path

PROBLEMS = "https://api.twitter.com/2/problems/"


def bearer(token):
    return {"Authorization": "Bearer " + token}


def post(sb, demo, body, **kw):
    auth = kw.pop("auth") if "auth" in kw else oauth1(demo)
    return requests.post(sb.url + "/2/tweets", json=body, auth=auth, **kw)


# -- POST /2/tweets -----------------------------------------------------------

def test_create_post_returns_201_with_id_and_text(sb, demo):
    first = post(sb, demo, {"text": "hello from the sandbox"})
    second = post(sb, demo, {"text": "another one"})
    assert first.status_code == 201
    data = first.json()["data"]
    assert data["text"] == "hello from the sandbox"
    assert len(data["id"]) == 19 and data["id"].isdigit()
    assert int(second.json()["data"]["id"]) > int(data["id"])
    assert first.headers["Content-Type"].startswith("application/json")
    posts = sb.posts()
    assert posts["counts"] == {"hello from the sandbox": 1, "another one": 1}
    assert posts["posts"][0]["author_id"] == demo["user_id"]
    assert posts["posts"][0]["request_seq"] == sb.log()[0]["seq"]


def test_create_post_requires_json_content_type(sb, demo):
    r = requests.post(sb.url + "/2/tweets", data='{"text": "x"}', auth=oauth1(demo),
                      headers={"Content-Type": "text/plain"})
    assert r.status_code == 400
    body = r.json()
    assert body["title"] == "Invalid Request"
    assert body["type"] == PROBLEMS + "invalid-request"
    assert body["errors"] == [{"message": "Requests with bodies must have content-type of application/json."}]
    assert sb.posts()["total"] == 0


def test_unknown_body_keys_are_rejected(sb, demo):
    r = post(sb, demo, {"text": "x", "status": "y"})
    assert r.status_code == 400
    assert "$.status: is not defined in the schema" in r.json()["errors"][0]["message"]


def test_duplicate_text_by_the_same_author_is_the_real_403(sb, demo):
    assert post(sb, demo, {"text": "same words"}).status_code == 201
    r = post(sb, demo, {"text": "same words"})
    assert r.status_code == 403
    assert r.json() == {"title": "Forbidden", "type": "about:blank", "status": 403,
                        "detail": "You are not allowed to create a Tweet with duplicate content."}
    jack = oauth1(demo, "12-sandboxjackaccesstoken", "sandbox-jack-token-secret")
    assert post(sb, demo, {"text": "same words"}, auth=jack).status_code == 201
    assert sb.posts()["counts"] == {"same words": 2}
    assert sb.log()[1]["duplicate"] is True


@pytest.mark.parametrize("text,ok", [
    ("a" * 280, True),
    ("a" * 281, False),
    ("\u65e5" * 140, True),                        # CJK weighs 2
    ("\u65e5" * 141, False),
    ("a\r\n" * 140, True),                         # CR LF counts as one, as X converts it
    ("x" * 256 + " https://example.com/a/very/long/path/that/is/counted/as/23", True),
    ("x" * 257 + " https://example.com/a/very/long/path/that/is/counted/as/23", False),
    ("\U0001F468\u200D\U0001F469\u200D\U0001F467" * 140, True),   # a ZWJ family counts 2
])
def test_weighted_length_limit(sb, demo, text, ok):
    r = post(sb, demo, {"text": text})
    normalized = text.replace("\r\n", "\n")
    assert (parse_tweet(normalized).weightedLength <= 280) == ok
    assert r.status_code == (201 if ok else 400), r.text
    if not ok:
        err = r.json()["errors"][0]
        assert err["parameters"] == {"text": [text]}
        assert "too long" in err["message"]


def test_reply_quote_and_media(sb, demo):
    sb.control(self_serve=False)    # Enterprise: replies to anyone, quotes
    r = post(sb, demo, {"text": "replying", "reply": {"in_reply_to_tweet_id": "20"}})
    assert r.status_code == 201
    own = r.json()["data"]["id"]
    assert post(sb, demo, {"text": "quoting", "quote_tweet_id": own}).status_code == 201
    r = post(sb, demo, {"text": "", "media": {"media_ids": ["1000000000000000501"]}})
    assert r.status_code == 201
    posts = sb.posts()["posts"]
    assert posts[0]["in_reply_to_tweet_id"] == "20"
    assert posts[1]["quote_tweet_id"] == own
    assert posts[2]["media_ids"] == ["1000000000000000501"]


def test_reply_to_missing_post_and_bad_ids(sb, demo):
    r = post(sb, demo, {"text": "to nowhere", "reply": {"in_reply_to_tweet_id": "999"}})
    assert r.status_code == 403
    assert r.json()["detail"] == "You attempted to reply to a Tweet that is deleted or not visible to you."
    r = post(sb, demo, {"text": "bad id", "reply": {"in_reply_to_tweet_id": "abc"}})
    assert r.status_code == 400
    r = post(sb, demo, {"text": "x", "media": {"media_ids": ["123"]}})
    assert r.status_code == 400 and r.json()["errors"][0]["message"] == "Your media IDs are invalid."
    r = post(sb, demo, {"text": "x", "media": {"media_ids": ["1000000000000000501"] * 5}})
    assert r.status_code == 400
    r = post(sb, demo, {"text": "x", "quote_tweet_id": "20", "media": {"media_ids": ["1000000000000000501"]}})
    assert r.status_code == 400
    r = post(sb, demo, {})
    assert r.status_code == 400
    assert sb.posts()["total"] == 0


def test_auth_types_per_endpoint(sb, demo):
    r = post(sb, demo, {"text": "app only"}, auth=None, headers=bearer("sandbox-bearer-token"))
    assert r.status_code == 403
    body = r.json()
    assert body["type"] == PROBLEMS + "unsupported-authentication"
    assert body["detail"].startswith("Authenticating with OAuth 2.0 Application-Only is forbidden")
    r = post(sb, demo, {"text": "oauth2 user"}, auth=None, headers=bearer("sandbox-oauth2-user-token"))
    assert r.status_code == 201
    r = post(sb, demo, {"text": "no write scope"}, auth=None, headers=bearer("sandbox-oauth2-read-token"))
    assert r.status_code == 403
    r = post(sb, demo, {"text": "expired"}, auth=None, headers=bearer("sandbox-oauth2-expired-token"))
    assert r.status_code == 401
    r = post(sb, demo, {"text": "unknown"}, auth=None, headers=bearer("nope"))
    assert r.status_code == 401
    assert sb.posts()["counts"] == {"oauth2 user": 1}


def test_read_only_and_unenrolled_apps(sb, demo):
    ro = oauth1(demo, "1000000000000000001-sandboxreadonlytoken", "sandbox-readonly-token-secret",
               ("sandbox-readonly-consumer-key", "sandbox-readonly-consumer-secret"))
    r = post(sb, demo, {"text": "read only"}, auth=ro)
    assert r.status_code == 403 and r.json()["type"] == PROBLEMS + "oauth1-permissions"
    assert requests.get(sb.url + "/2/users/me", auth=ro).status_code == 200
    un = oauth1(demo, "1000000000000000001-sandboxunenrolledtoken", "sandbox-unenrolled-token-secret",
               ("sandbox-unenrolled-consumer-key", "sandbox-unenrolled-consumer-secret"))
    r = requests.get(sb.url + "/2/users/me", auth=un)
    body = r.json()
    assert r.status_code == 403
    assert body["type"] == PROBLEMS + "client-forbidden" and body["reason"] == "client-not-enrolled"
    assert "registration_url" in body and "required_enrollment" in body


# -- users ----------------------------------------------------------------------

def test_users_me(sb, demo):
    r = requests.get(sb.url + "/2/users/me", auth=oauth1(demo))
    assert r.json() == {"data": {"id": demo["user_id"], "name": "socialpipe demo", "username": "socialpipe_demo"}}
    r = requests.get(sb.url + "/2/users/me", params={"user.fields": "created_at,public_metrics"}, auth=oauth1(demo))
    data = r.json()["data"]
    assert data["created_at"] == "2026-01-01T00:00:00.000Z"
    assert data["public_metrics"]["following_count"] == 2500
    r = requests.get(sb.url + "/2/users/me", params={"user.fields": "shoe_size"}, auth=oauth1(demo))
    assert r.status_code == 400 and r.json()["errors"][0]["parameters"] == {"user.fields": ["shoe_size"]}
    r = requests.get(sb.url + "/2/users/me", params={"colour": "red"}, auth=oauth1(demo))
    assert r.status_code == 400
    r = requests.get(sb.url + "/2/users/me", headers=bearer("sandbox-bearer-token"))
    assert r.status_code == 403


def test_user_by_username(sb, demo):
    r = requests.get(sb.url + "/2/users/by/username/JACK", headers=bearer("sandbox-bearer-token"))
    assert r.json() == {"data": {"id": "12", "name": "jack", "username": "jack"}}
    r = requests.get(sb.url + "/2/users/by/username/nobody_zz", auth=oauth1(demo))
    assert r.status_code == 200
    body = r.json()
    assert "data" not in body
    assert body["errors"] == [{
        "value": "nobody_zz", "detail": "Could not find user with username: [nobody_zz].",
        "title": "Not Found Error", "resource_type": "user", "parameter": "username",
        "resource_id": "nobody_zz", "type": PROBLEMS + "resource-not-found"}]
    r = requests.get(sb.url + "/2/users/by/username/not-valid!", auth=oauth1(demo))
    assert r.status_code == 400
    r = requests.get(sb.url + "/2/users/by/username/u42", auth=oauth1(demo))
    assert r.json()["data"] == {"id": "500000000000000042", "name": "Account 42", "username": "u42"}


def test_multi_user_lookup_mixes_data_and_errors(sb, demo):
    r = requests.get(sb.url + "/2/users/by", params={"usernames": "jack,nobody_zz"},
                     headers=bearer("sandbox-bearer-token"))
    body = r.json()
    assert [u["id"] for u in body["data"]] == ["12"]
    assert body["errors"][0]["value"] == "nobody_zz"
    r = requests.get(sb.url + "/2/users", params={"ids": "12,1000000000000000001"},
                     headers=bearer("sandbox-bearer-token"))
    assert [u["username"] for u in r.json()["data"]] == ["jack", "socialpipe_demo"]


# -- following ----------------------------------------------------------------------

def walk(sb, user_id, headers=None, auth=None, **params):
    pages, token = [], None
    while True:
        q = dict(params)
        if token:
            q["pagination_token"] = token
        r = requests.get(sb.url + "/2/users/%s/following" % user_id, params=q, headers=headers, auth=auth)
        assert r.status_code == 200, r.text
        page = r.json()
        pages.append(page)
        token = page["meta"].get("next_token")
        if not token:
            return pages


def test_following_walk_is_complete_and_duplicate_free(sb, demo):
    pages = walk(sb, demo["user_id"], auth=oauth1(demo), max_results=1000)
    assert [p["meta"]["result_count"] for p in pages] == [1000, 1000, 500]
    ids = [u["id"] for p in pages for u in p["data"]]
    assert len(ids) == len(set(ids)) == 2500
    assert ids[0] == "12"
    assert "previous_token" not in pages[0]["meta"] and "previous_token" in pages[1]["meta"]
    again = walk(sb, demo["user_id"], auth=oauth1(demo), max_results=1000)
    assert [u["id"] for p in again for u in p["data"]] == ids


def test_following_default_page_size_and_fields(sb, demo):
    r = requests.get(sb.url + "/2/users/12/following", params={"user.fields": "created_at,protected"},
                     headers=bearer("sandbox-bearer-token"))
    body = r.json()
    assert body["meta"]["result_count"] == 100 and len(body["data"]) == 100
    assert set(body["data"][0]) == {"id", "name", "username", "created_at", "protected"}
    prev = requests.get(sb.url + "/2/users/12/following",
                        params={"pagination_token": body["meta"]["next_token"]},
                        headers=bearer("sandbox-bearer-token")).json()
    back = requests.get(sb.url + "/2/users/12/following",
                        params={"pagination_token": prev["meta"]["previous_token"]},
                        headers=bearer("sandbox-bearer-token")).json()
    assert [u["id"] for u in back["data"]] == [u["id"] for u in body["data"]]


def test_empty_following_page_has_no_data_key(sb, demo):
    r = requests.get(sb.url + "/2/users/1000000000000000002/following", auth=oauth1(demo))
    assert r.json() == {"meta": {"result_count": 0}}
    r = requests.get(sb.url + "/2/users/500000000000000042/following", auth=oauth1(demo))
    assert r.json() == {"meta": {"result_count": 0}}


@pytest.mark.parametrize("params", [{"max_results": "0"}, {"max_results": "1001"}, {"max_results": "ten"},
                                    {"pagination_token": "nonsense"}, {"pagination_token": "0000000000000000"}])
def test_following_rejects_bad_parameters(sb, demo, params):
    r = requests.get(sb.url + "/2/users/12/following", params=params, auth=oauth1(demo))
    assert r.status_code == 400
    body = r.json()
    assert body["type"] == PROBLEMS + "invalid-request"
    assert list(body["errors"][0]["parameters"]) == list(params)


def test_following_token_is_bound_to_its_list(sb, demo):
    token = requests.get(sb.url + "/2/users/12/following", auth=oauth1(demo)).json()["meta"]["next_token"]
    r = requests.get(sb.url + "/2/users/%s/following" % demo["user_id"], params={"pagination_token": token},
                     auth=oauth1(demo))
    assert r.status_code == 400


def test_following_of_unknown_user_is_a_200_with_errors(sb, demo):
    r = requests.get(sb.url + "/2/users/77/following", auth=oauth1(demo))
    assert r.status_code == 200
    assert r.json()["errors"][0]["detail"] == "Could not find user with id: [77]."


def test_unknown_routes(sb, demo):
    assert requests.get(sb.url + "/2/nothing", auth=oauth1(demo)).status_code == 404
    r = requests.get(sb.url + "/1.1/nothing.json", auth=oauth1(demo))
    assert (r.status_code, r.json()["errors"][0]["code"]) == (404, 34)
