"""tweepy, unmodified, against the HTTPS sandbox reached as https://api.twitter.com."""
import time

import pytest
import requests
import tweepy

# tweepy 4.x warns about its own deprecated internals.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

JACK_FOLLOWING = 1_000_000


def user_client(demo, **kw):
    return tweepy.Client(consumer_key=demo["consumer_key"], consumer_secret=demo["consumer_secret"],
                         access_token=demo["access_token"], access_token_secret=demo["access_token_secret"], **kw)


def v11(demo):
    auth = tweepy.OAuth1UserHandler(demo["consumer_key"], demo["consumer_secret"], demo["access_token"],
                                    demo["access_token_secret"])
    return tweepy.API(auth)


def test_create_tweet_is_signed_and_created(real_hosts, demo):
    client = user_client(demo)
    resp = client.create_tweet(text="tweepy was here")
    assert resp.data["text"] == "tweepy was here"
    posts = real_hosts.posts()["posts"]
    assert [(p["id"], p["author_id"]) for p in posts] == [(resp.data["id"], demo["user_id"])]
    entry = real_hosts.log()[-1]
    assert entry["headers"]["host"] == "api.twitter.com"
    assert entry["auth"]["outcome"] == "ok" and entry["auth"]["scheme"] == "oauth1"


def test_create_tweet_options(real_hosts, demo):
    real_hosts.control(self_serve=False)    # Enterprise: replies to anyone, quotes
    client = user_client(demo)
    reply = client.create_tweet(text="a reply", in_reply_to_tweet_id="20").data["id"]
    client.create_tweet(text="a quote", quote_tweet_id=reply)
    client.create_tweet(text="with media", media_ids=["1000000000000000501", "1000000000000000502"])
    posts = real_hosts.posts()["posts"]
    assert posts[0]["in_reply_to_tweet_id"] == "20"
    assert posts[1]["quote_tweet_id"] == reply
    assert posts[2]["media_ids"] == ["1000000000000000501", "1000000000000000502"]


def test_duplicate_and_bad_credentials_raise_tweepy_errors(real_hosts, demo):
    client = user_client(demo)
    client.create_tweet(text="only once")
    with pytest.raises(tweepy.Forbidden) as info:
        client.create_tweet(text="only once")
    assert info.value.response.json()["detail"] == "You are not allowed to create a Tweet with duplicate content."
    bad = tweepy.Client(consumer_key=demo["consumer_key"], consumer_secret="wrong",
                        access_token=demo["access_token"], access_token_secret=demo["access_token_secret"])
    with pytest.raises(tweepy.Unauthorized):
        bad.get_me(user_auth=True)
    with pytest.raises(tweepy.Forbidden):
        tweepy.Client(bearer_token=demo["bearer_token"]).create_tweet(text="app only", user_auth=False)
    assert real_hosts.posts()["counts"] == {"only once": 1}


def test_server_errors_surface(real_hosts, demo):
    real_hosts.fault("status", match={"path": "/2/tweets"}, status=503)
    with pytest.raises(tweepy.TwitterServerError):
        user_client(demo).create_tweet(text="unlucky")
    assert real_hosts.posts()["total"] == 0


def test_get_me(real_hosts, demo):
    me = user_client(demo).get_me(user_auth=True, user_fields=["created_at", "public_metrics"])
    assert (me.data.id, me.data.username) == (int(demo["user_id"]), "socialpipe_demo")
    assert me.data.public_metrics["following_count"] == 2500


def test_paginator_walks_a_million_accounts_once_each(real_hosts, demo):
    client = tweepy.Client(bearer_token=demo["bearer_token"])
    seen = set()
    pages = 0
    for resp in tweepy.Paginator(client.get_users_following, 12, max_results=1000):
        pages += 1
        for user in resp.data or []:
            seen.add(user.id)
    assert pages == 1000
    assert len(seen) == JACK_FOLLOWING


def test_paginator_with_user_auth_and_fields(real_hosts, demo):
    client = user_client(demo)
    users = list(tweepy.Paginator(client.get_users_following, demo["user_id"], user_auth=True,
                                  max_results=1000, user_fields=["created_at"]).flatten())
    assert len(users) == len({u.id for u in users}) == 2500
    assert users[0].username == "jack" and users[1].created_at is not None


def test_wait_on_rate_limit_sleeps_until_the_reset(real_hosts, demo):
    real_hosts.control(rate_limits={"GET /2/users/me": {"limit": 1, "window": 2}})
    client = user_client(demo, wait_on_rate_limit=True)
    client.get_me(user_auth=True)
    t = time.time()
    me = client.get_me(user_auth=True)
    waited = time.time() - t
    assert me.data.username == "socialpipe_demo"
    statuses = [e["status"] for e in real_hosts.log(path="/2/users/me")]
    assert statuses == [200, 429, 200]
    assert 0.5 <= waited < 5


def test_v11_update_status_and_duplicate_code(real_hosts, demo):
    api = v11(demo)
    status = api.update_status("v1.1 via tweepy")
    assert status.id_str == real_hosts.posts()["posts"][0]["id"]
    with pytest.raises(tweepy.Forbidden) as info:
        api.update_status("v1.1 via tweepy")
    assert info.value.api_codes == [187]


def test_v11_friend_ids_cursor_over_a_million(real_hosts, demo):
    api = v11(demo)
    assert len(api.get_friend_ids(screen_name="socialpipe_demo")) == 2500
    seen = set()
    for page in tweepy.Cursor(api.get_friend_ids, user_id=12, count=5000).pages():
        seen.update(page)
    assert len(seen) == JACK_FOLLOWING


def test_v11_app_auth_fetches_the_bearer_token(real_hosts, demo):
    api = tweepy.API(tweepy.OAuth2AppHandler(demo["consumer_key"], demo["consumer_secret"]))
    ids = api.get_friend_ids(screen_name="socialpipe_demo", count=10)
    assert ids[0] == 12 and len(ids) == 10
    assert [e["path"] for e in real_hosts.log()] == ["/oauth2/token", "/1.1/friends/ids.json"]


@pytest.mark.parametrize("kind,errors,created", [
    ("reset_before", (requests.ConnectionError,), 0),
    ("reset_after", (requests.ConnectionError,), 1),
    ("truncate", (requests.exceptions.ChunkedEncodingError, requests.ConnectionError), 1),
    ("malformed", (ValueError,), 1),
])
def test_how_tweepy_meets_each_connection_fault(real_hosts, demo, kind, errors, created):
    real_hosts.fault(kind, match={"method": "POST", "path": "/2/tweets"})
    with pytest.raises(errors):
        user_client(demo).create_tweet(text="fault " + kind)
    posts = real_hosts.posts()
    assert posts["total"] == created
    if created:
        assert posts["posts"][0]["delivered"] is (kind == "malformed")
