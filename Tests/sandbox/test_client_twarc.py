"""twarc2, unmodified, against the HTTPS sandbox reached as https://api.twitter.com."""
import time

import pytest
from twarc.client2 import Twarc2

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def user_twarc(demo):
    return Twarc2(consumer_key=demo["consumer_key"], consumer_secret=demo["consumer_secret"],
                  access_token=demo["access_token"], access_token_secret=demo["access_token_secret"],
                  metadata=False)


def test_user_lookup_by_username(real_hosts, demo):
    tw = Twarc2(bearer_token=demo["bearer_token"], metadata=False)
    page = next(tw.user_lookup(["jack", "socialpipe_demo", "nobody_zz"], usernames=True))
    assert [u["username"] for u in page["data"]] == ["jack", "socialpipe_demo"]
    assert page["errors"][0]["detail"] == "Could not find user with usernames: [nobody_zz]."
    assert page["data"][0]["created_at"] == "2006-03-21T20:50:14.000Z"
    page = next(tw.user_lookup(["12"]))
    assert page["data"][0]["username"] == "jack"


def test_following_walks_a_million_accounts_once_each(real_hosts, demo):
    tw = Twarc2(bearer_token=demo["bearer_token"], metadata=False)
    seen = set()
    pages = 0
    for page in tw.following("jack", max_results=1000, user_fields="id,username", tweet_fields="id"):
        pages += 1
        seen.update(u["id"] for u in page["data"])
    assert pages == 1000
    assert len(seen) == 1_000_000
    # twarc resolved the username first, then walked the list.
    assert real_hosts.log(limit=1001)[0]["path"] == "/2/users/by"


def test_following_with_user_auth_and_every_field(real_hosts, demo):
    tw = user_twarc(demo)
    users = [u for page in tw.following(demo["user_id"]) for u in page["data"]]
    assert len(users) == len({u["id"] for u in users}) == 2500
    assert {"created_at", "public_metrics", "description"} <= set(users[1])
    assert all(e["auth"]["scheme"] == "oauth1" and e["auth"]["outcome"] == "ok" for e in real_hosts.log())


def test_app_auth_from_consumer_keys(real_hosts, demo):
    tw = Twarc2(consumer_key=demo["consumer_key"], consumer_secret=demo["consumer_secret"], metadata=False)
    page = next(tw.following("12", user_id="12", max_results=5))
    assert page["meta"]["result_count"] == 5
    assert [e["path"] for e in real_hosts.log()] == ["/oauth2/token", "/2/users/12/following"]


def test_empty_following_list(real_hosts, demo):
    tw = Twarc2(bearer_token=demo["bearer_token"], metadata=False)
    pages = list(tw.following("1000000000000000002", user_id="1000000000000000002"))
    assert pages == [{"meta": {"result_count": 0}}]


def test_twarc_retries_a_server_error(real_hosts, demo):
    real_hosts.fault("status", match={"path": "/2/users/12/following"}, status=503)
    tw = Twarc2(bearer_token=demo["bearer_token"], metadata=False)
    t = time.time()
    page = next(tw.following("12", user_id="12", max_results=10))
    assert page["meta"]["result_count"] == 10
    assert time.time() - t >= 1.0
    assert [e["status"] for e in real_hosts.log()] == [503, 200]
