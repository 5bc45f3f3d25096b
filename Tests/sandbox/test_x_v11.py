"""The X API v1.1 subset: statuses/update (signed form body) and friends/ids."""
import requests
from requests_oauthlib import OAuth1

from toolenv import oauth1  # Tests/conftest.py puts Tests/ on sys.path


def update(sb, demo, **form):
    return requests.post(sb.url + "/1.1/statuses/update.json", data=form, auth=oauth1(demo))


def test_status_update_returns_the_tweet_object(sb, demo):
    r = update(sb, demo, status="v1.1 says hi \u2603")
    assert r.status_code == 200
    tweet = r.json()
    assert tweet["text"] == "v1.1 says hi \u2603"
    assert tweet["id_str"] == str(tweet["id"]) and len(tweet["id_str"]) == 19
    assert tweet["user"]["screen_name"] == "socialpipe_demo"
    assert sb.posts()["posts"][0]["api"] == "1.1"


def test_status_update_errors_use_legacy_codes(sb, demo):
    assert update(sb, demo, status="twice").status_code == 200
    r = update(sb, demo, status="twice")
    assert (r.status_code, r.json()) == (403, {"errors": [{"code": 187, "message": "Status is a duplicate."}]})
    r = update(sb, demo, status="x" * 281)
    assert (r.status_code, r.json()["errors"][0]["code"]) == (403, 186)
    r = update(sb, demo)
    assert (r.status_code, r.json()["errors"][0]["code"]) == (400, 170)
    r = update(sb, demo, status="bad media", media_ids="42")
    assert (r.status_code, r.json()["errors"][0]["code"]) == (400, 324)
    assert sb.posts()["counts"] == {"twice": 1}


def test_reply_id_is_ignored_unless_the_author_is_mentioned(sb, demo):
    sb.control(self_serve=False)    # Enterprise: jack's post 20 does not summon the demo user
    assert update(sb, demo, status="no mention", in_reply_to_status_id="20").json()["in_reply_to_status_id"] is None
    r = update(sb, demo, status="@jack with mention", in_reply_to_status_id="20")
    assert r.json()["in_reply_to_status_id_str"] == "20"
    assert r.json()["in_reply_to_screen_name"] == "jack"
    r = update(sb, demo, status="auto", in_reply_to_status_id="20", auto_populate_reply_metadata="true")
    assert r.json()["in_reply_to_status_id"] == 20
    r = update(sb, demo, status="auto missing", in_reply_to_status_id="999", auto_populate_reply_metadata="true")
    assert (r.status_code, r.json()["errors"][0]["code"]) == (403, 385)


def test_friends_ids_cursor_walk(sb, demo):
    ids, cursor, pages = [], "-1", 0
    while cursor != "0":
        r = requests.get(sb.url + "/1.1/friends/ids.json",
                         params={"screen_name": "socialpipe_demo", "cursor": cursor, "count": 1000,
                                 "stringify_ids": "true"}, auth=oauth1(demo))
        body = r.json()
        assert all(isinstance(i, str) for i in body["ids"])
        assert str(body["next_cursor"]) == body["next_cursor_str"]
        if pages:
            assert body["previous_cursor"] < 0
        ids += body["ids"]
        cursor = body["next_cursor_str"]
        pages += 1
    assert pages == 3
    assert len(ids) == len(set(ids)) == 2500 and ids[0] == "12"


def test_friends_ids_numbers_paging_back_and_count_cap(sb, demo):
    first = requests.get(sb.url + "/1.1/friends/ids.json", params={"user_id": "12", "count": 10},
                         headers={"Authorization": "Bearer sandbox-bearer-token"}).json()
    assert all(isinstance(i, int) for i in first["ids"]) and len(first["ids"]) == 10
    assert first["previous_cursor"] == 0
    second = requests.get(sb.url + "/1.1/friends/ids.json",
                          params={"user_id": "12", "count": 10, "cursor": first["next_cursor_str"]},
                          headers={"Authorization": "Bearer sandbox-bearer-token"}).json()
    back = requests.get(sb.url + "/1.1/friends/ids.json",
                        params={"user_id": "12", "count": 10, "cursor": second["previous_cursor_str"]},
                        headers={"Authorization": "Bearer sandbox-bearer-token"}).json()
    assert back["ids"] == first["ids"]
    big = requests.get(sb.url + "/1.1/friends/ids.json", params={"user_id": "12", "count": 9000},
                       auth=oauth1(demo)).json()
    assert len(big["ids"]) == 5000
    r = requests.get(sb.url + "/1.1/friends/ids.json", params={"user_id": "12", "cursor": "12345"},
                     auth=oauth1(demo))
    assert r.status_code == 400
    r = requests.get(sb.url + "/1.1/friends/ids.json", params={"screen_name": "nobody_zz"}, auth=oauth1(demo))
    assert (r.status_code, r.json()["errors"][0]["code"]) == (404, 50)


def test_auth_kinds_on_v11(sb, demo):
    r = requests.post(sb.url + "/1.1/statuses/update.json", data={"status": "bearer"},
                      headers={"Authorization": "Bearer sandbox-bearer-token"})
    assert (r.status_code, r.json()["errors"][0]["code"]) == (403, 220)
    un = OAuth1("sandbox-unenrolled-consumer-key", "sandbox-unenrolled-consumer-secret",
                "1000000000000000001-sandboxunenrolledtoken", "sandbox-unenrolled-token-secret")
    r = requests.get(sb.url + "/1.1/friends/ids.json", auth=un)
    assert (r.status_code, r.json()["errors"][0]["code"]) == (403, 453)
    ro = OAuth1("sandbox-readonly-consumer-key", "sandbox-readonly-consumer-secret",
                "1000000000000000001-sandboxreadonlytoken", "sandbox-readonly-token-secret")
    r = requests.post(sb.url + "/1.1/statuses/update.json", data={"status": "ro"}, auth=ro)
    assert (r.status_code, r.json()) == (401, {"request": "/1.1/statuses/update.json",
                                               "error": "Read-only application cannot POST."})
    assert "x-rate-limit-limit" not in r.headers and sb.posts()["total"] == 0
    assert requests.get(sb.url + "/1.1/friends/ids.json", auth=ro).status_code == 200
    r = requests.get(sb.url + "/1.1/account/verify_credentials.json", auth=oauth1(demo))
    assert r.json()["id_str"] == demo["user_id"] and r.json()["friends_count"] == 2500


def test_app_only_token_endpoint(sb, demo):
    r = requests.post(sb.url + "/oauth2/token", data={"grant_type": "client_credentials"},
                      auth=(demo["consumer_key"], demo["consumer_secret"]))
    assert r.json() == {"token_type": "bearer", "access_token": "sandbox-bearer-token"}
    r = requests.post(sb.url + "/oauth2/token", data={"grant_type": "client_credentials"},
                      auth=(demo["consumer_key"], "wrong"))
    assert (r.status_code, r.json()["errors"][0]["code"]) == (403, 99)
    log = sb.log()
    assert all("sandbox-consumer-secret" not in str(e) for e in log)
    assert log[0]["headers"]["authorization"] == "Basic [masked]"
