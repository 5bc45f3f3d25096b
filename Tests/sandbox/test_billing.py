"""X's pay-per-usage billing as the sandbox plays it: what each request costs,
the ledger, the 24-hour UTC day deduplication of reads, the 402 when the
credits are gone, the 403 at the spending limit, and their control API."""
import pytest
import requests

import harness
from toolenv import oauth1  # Tests/conftest.py puts Tests/ on sys.path

PROBLEMS = "https://api.twitter.com/2/problems/"
DEMO_ID = "1000000000000000001"
JACK = ("12-sandboxjackaccesstoken", "sandbox-jack-token-secret")
READONLY = dict(token="1000000000000000001-sandboxreadonlytoken", secret="sandbox-readonly-token-secret",
                consumer=("sandbox-readonly-consumer-key", "sandbox-readonly-consumer-secret"))
PRICES = {"post_create": 0.015, "post_create_url": 0.2, "post_create_summoned": 0.01, "media_metadata": 0.005,
          "user_read": 0.01, "following_read": 0.01, "owned_read": 0.001}
CREDITS_DEPLETED = {"account_id": int(DEMO_ID), "title": "CreditsDepleted",
                    "detail": "Your enrolled account [%s] does not have any credits to fulfill this request." % DEMO_ID,
                    "type": PROBLEMS + "credits"}
SPEND_CAP = {"account_id": int(DEMO_ID), "title": "SpendCapReached",
             "detail": "Your enrolled account [%s] has reached its spending limit for the current billing cycle."
                       % DEMO_ID,
             "type": PROBLEMS + "spend-cap"}


def post(sb, auth, text, **body):
    return requests.post(sb.url + "/2/tweets", json=dict(body, text=text), auth=auth)


def following(sb, auth, user_id, **params):
    return requests.get(sb.url + "/2/users/%s/following" % user_id, params=params, auth=auth)


def charged(sb):
    """(key, units, amount) of each charge, in order."""
    return [(c["key"], c["units"], c["amount"]) for c in sb.ledger()["charges"]]


def test_a_fresh_sandbox_has_a_large_balance_and_x_prices(sb):
    assert sb.ledger() == {"balance": 1000000.0, "total": 0.0, "spending_limit": None, "prices": PRICES,
                           "charges": []}
    assert sb.state()["credits"] == {"balance": 1000000.0, "total": 0.0, "spending_limit": None,
                                     "prices": PRICES, "charges": 0}
    assert sb.state()["self_serve"] is True


def test_posts_cost_per_request_and_a_url_costs_more(sb, demo):
    ids = [post(sb, oauth1(demo), text).json()["data"]["id"]
           for text in ("plain words", "see example.com", "https://x.com/i/1", "version 1.2.3 is out")]
    r = requests.post(sb.url + "/1.1/statuses/update.json", data={"status": "v1.1 with socialpipe.dev"},
                      auth=oauth1(demo))
    ids.append(r.json()["id_str"])
    ledger = sb.ledger()
    assert [(c["key"], c["post_id"]) for c in ledger["charges"]] == list(zip(
        ["post_create", "post_create_url", "post_create_url", "post_create", "post_create_url"], ids))
    first = ledger["charges"][0]
    assert {k: first[k] for k in ("key", "units", "each", "amount", "method", "path", "user", "app")} == {
        "key": "post_create", "units": 1, "each": 0.015, "amount": 0.015, "method": "POST", "path": "/2/tweets",
        "user": DEMO_ID, "app": "socialpipe-sandbox"}
    assert ledger["total"] == pytest.approx(0.63) and ledger["balance"] == pytest.approx(1000000 - 0.63)
    assert sb.log()[0]["charged"] == 0.015


def test_a_summoned_reply_costs_what_x_charges_for_it(sb, demo):
    own = post(sb, oauth1(demo), "my post").json()["data"]["id"]
    post(sb, oauth1(demo), "to myself", reply={"in_reply_to_tweet_id": own})
    post(sb, oauth1(demo), "thanks jack", reply={"in_reply_to_tweet_id": "21"})
    post(sb, oauth1(demo), "thanks again, see example.com", reply={"in_reply_to_tweet_id": "21"})
    assert charged(sb) == [("post_create", 1, 0.015), ("post_create", 1, 0.015),
                           ("post_create_summoned", 1, 0.01), ("post_create_url", 1, 0.2)]


def test_failed_requests_and_upload_steps_cost_nothing(sb, demo):
    me = oauth1(demo)
    assert post(sb, me, "once").status_code == 201
    assert post(sb, me, "once").status_code == 403                       # duplicate
    assert post(sb, me, "x" * 281).status_code == 400
    assert post(sb, me, "hi jack", reply={"in_reply_to_tweet_id": "20"}).status_code == 403   # not summoned
    r = requests.get(sb.url + "/2/users/by/username/no_such_user", auth=me)
    assert r.status_code == 200 and "data" not in r.json()
    assert following(sb, me, "1000000000000000002").json() == {"meta": {"result_count": 0}}
    r = requests.post(sb.url + "/2/media/upload/initialize", auth=me,
                      json={"media_type": "image/png", "total_bytes": 20, "media_category": "tweet_image"})
    media_id = r.json()["data"]["id"]
    files = {"segment_index": (None, "0"), "media": ("blob", b"\x89PNG\r\n\x1a\n" + b"\0" * 12, "image/png")}
    assert requests.post(sb.url + "/2/media/upload/%s/append" % media_id, files=files, auth=me).status_code == 200
    assert requests.post(sb.url + "/2/media/upload/%s/finalize" % media_id, auth=me).status_code == 200
    r = requests.post(sb.url + "/2/media/metadata", auth=me,
                      json={"id": media_id, "metadata": {"alt_text": {"text": "a dot"}}})
    assert r.status_code == 200
    r = requests.post(sb.url + "/2/media/metadata", auth=me, json={"id": "42", "metadata": {}})
    assert r.status_code == 400
    assert charged(sb) == [("post_create", 1, 0.015), ("media_metadata", 1, 0.005)]


def test_a_post_whose_answer_was_lost_is_charged(sb, demo):
    sb.fault("reset_after", match={"path": "/2/tweets"})
    with pytest.raises(requests.ConnectionError):
        post(sb, oauth1(demo), "accepted, answer lost")
    [charge] = sb.ledger()["charges"]
    assert charge["post_id"] == sb.posts()["posts"][0]["id"]


def test_user_reads_cost_per_user_returned(sb, demo):
    me = oauth1(demo)
    requests.get(sb.url + "/2/users/me", auth=me)
    requests.get(sb.url + "/2/users/by/username/jack", auth=me)
    requests.get(sb.url + "/2/users/1000000000000000012", auth=me)
    r = requests.get(sb.url + "/2/users/by", params={"usernames": "follows_one,no_such_user,follows_1000"}, auth=me)
    assert len(r.json()["data"]) == 2
    nobody = oauth1(demo, "1000000000000000002-sandboxaccesstoken", "sandbox-nobody-token-secret")
    requests.get(sb.url + "/1.1/account/verify_credentials.json", auth=nobody)
    assert charged(sb) == [("user_read", 1, 0.01)] * 3 + [("user_read", 2, 0.02), ("user_read", 1, 0.01)]


def test_following_pages_cost_per_account_and_owned_reads_are_cheaper(sb, demo):
    me, jack = oauth1(demo), oauth1(demo, *JACK)
    assert len(following(sb, me, DEMO_ID, max_results=1000).json()["data"]) == 1000
    following(sb, me, "1000000000000000012", max_results=500)
    following(sb, jack, "12", max_results=10)     # jack's own list, but jack does not own the app
    requests.get(sb.url + "/2/users/1000000000000000011/following",   # app-only: nobody's own list
                 headers={"Authorization": "Bearer sandbox-bearer-token"})
    requests.get(sb.url + "/2/users/me/following", auth=me)
    r = requests.get(sb.url + "/1.1/friends/ids.json", params={"count": 7}, auth=me)   # own list, v1.1
    assert len(r.json()["ids"]) == 7
    assert charged(sb) == [("owned_read", 1000, 1.0), ("following_read", 500, 5.0), ("following_read", 10, 0.1),
                           ("following_read", 1, 0.01), ("following_read", 7, 0.07)]
    charges = sb.ledger()["charges"]
    assert charges[0]["path"] == "/2/users/%s/following" % DEMO_ID and charges[0]["each"] == 0.001
    assert charges[3]["user"] is None


def test_reads_of_the_same_resources_in_one_utc_day_are_charged_once_per_app(sb, demo):
    me = oauth1(demo)
    first = following(sb, me, "1000000000000000013", max_results=600).json()["meta"]["next_token"]
    following(sb, me, "1000000000000000013", max_results=300)                       # positions 0-299 again
    following(sb, me, "1000000000000000013", max_results=400, pagination_token=first)   # 600-999
    following(sb, me, "1000000000000000013", max_results=1000)                      # all charged already
    r = requests.get(sb.url + "/1.1/friends/ids.json", params={"screen_name": "follows_1000", "count": 5000},
                     auth=me)
    assert len(r.json()["ids"]) == 1000                                             # the same accounts
    for _ in range(2):
        requests.get(sb.url + "/2/users/by/username/jack", auth=me)
    requests.get(sb.url + "/2/users/by", params={"usernames": "jack,follows_one"}, auth=me)
    following(sb, oauth1(demo, **READONLY), "1000000000000000013", max_results=10)    # another app pays again
    assert charged(sb) == [("following_read", 600, 6.0), ("following_read", 400, 4.0), ("user_read", 1, 0.01),
                           ("user_read", 1, 0.01), ("following_read", 10, 0.1)]
    sb.clear_ledger()
    assert sb.ledger()["charges"] == [] and sb.ledger()["total"] == 0
    requests.get(sb.url + "/2/users/by/username/jack", auth=me)
    assert charged(sb) == [("user_read", 1, 0.01)]
    assert sb.ledger()["balance"] == pytest.approx(1000000 - 10.13)


def test_no_credits_answers_402_before_anything_is_done(sb, demo):
    me = oauth1(demo)
    sb.control(credits={"balance": 0.02})
    assert post(sb, me, "first").status_code == 201
    assert post(sb, me, "second").status_code == 201        # 0.005 left: served, the balance goes below zero
    assert sb.ledger()["balance"] == pytest.approx(-0.01)
    r = post(sb, me, "third")
    assert (r.status_code, r.json()) == (402, CREDITS_DEPLETED)
    assert "x-rate-limit-remaining" in r.headers and r.headers["x-access-level"] == "read-write"
    assert sb.log()[-1]["billing"] == "credits"
    for r in (requests.get(sb.url + "/2/users/me", auth=me),
              requests.post(sb.url + "/1.1/statuses/update.json", data={"status": "v1"}, auth=me),
              requests.post(sb.url + "/2/media/upload/initialize", auth=me,
                            json={"media_type": "image/png", "total_bytes": 20}),
              requests.get(sb.url + "/2/users/by/username/jack",
                           headers={"Authorization": "Bearer sandbox-oauth2-user-token"})):
        assert (r.status_code, r.json()) == (402, CREDITS_DEPLETED)
    assert sb.posts()["counts"] == {"first": 1, "second": 1} and len(sb.ledger()["charges"]) == 2
    assert requests.post(sb.url + "/oauth2/token", data={"grant_type": "client_credentials"},
                         auth=(demo["consumer_key"], demo["consumer_secret"])).status_code == 200
    sb.control(credits={"balance": 1})
    assert post(sb, me, "third").status_code == 201


def test_a_page_is_served_whole_while_the_balance_is_above_zero(sb, demo):
    sb.control(credits={"balance": 0.5})
    r = following(sb, oauth1(demo), "1000000000000000014", max_results=1000)      # follows_1001
    assert len(r.json()["data"]) == 1000
    assert sb.ledger()["balance"] == pytest.approx(-9.5)
    r = following(sb, oauth1(demo), "1000000000000000014", pagination_token=r.json()["meta"]["next_token"])
    assert (r.status_code, r.json()) == (402, CREDITS_DEPLETED)


def test_the_spending_limit_answers_403(sb, demo):
    me = oauth1(demo)
    sb.control(credits={"spending_limit": 0.03})
    assert [post(sb, me, t).status_code for t in ("one", "two")] == [201, 201]
    r = post(sb, me, "three")
    assert (r.status_code, r.json()) == (403, SPEND_CAP)
    assert sb.log()[-1]["billing"] == "spending_limit"
    assert sb.ledger()["spending_limit"] == 0.03 and sb.ledger()["total"] == pytest.approx(0.03)
    sb.control(credits={"spending_limit": None})
    assert post(sb, me, "three").status_code == 201
    sb.control(credits={"spending_limit": 0, "balance": 0})
    assert post(sb, me, "four").status_code == 402         # no credits comes first


def test_prices_are_settable_and_reset_restores_everything(sb, demo):
    sb.control(credits={"prices": {"post_create": 0.02, "owned_read": 0}}, self_serve=False)
    post(sb, oauth1(demo), "costs more now")
    following(sb, oauth1(demo), DEMO_ID, max_results=5)
    assert charged(sb) == [("post_create", 1, 0.02), ("owned_read", 5, 0.0)]
    assert sb.ledger()["prices"] == dict(PRICES, post_create=0.02, owned_read=0.0)
    sb.clear()
    assert sb.ledger() == {"balance": 1000000.0, "total": 0.0, "spending_limit": None, "prices": PRICES,
                           "charges": []}
    assert sb.state()["self_serve"] is True


@pytest.mark.parametrize("body, error", [
    ({"credits": {"balance": "1"}}, "credits.balance: must be a number of dollars"),
    ({"credits": {"prices": {"post_create": -1}}}, "credits.prices.post_create: must be a number of dollars >= 0"),
    ({"credits": {"prices": {"post": 1}}}, "credits.prices: unknown key 'post'"),
    ({"credits": {"spending_limit": -2}}, "credits.spending_limit: must be a number of dollars >= 0"),
    ({"credits": {"limit": 2}}, "credits: unknown key 'limit'"),
    ({"credits": []}, "credits: must be an object"),
    ({"self_serve": "no"}, "self_serve must be true or false"),
])
def test_bad_control_bodies_are_refused(sb, body, error):
    with pytest.raises(harness.SandboxError) as info:
        sb.control(**body)
    assert error in str(info.value)
    assert sb.ledger()["balance"] == 1000000.0


def test_the_configuration_sets_credits_plan_and_account():
    cfg = harness.merged_config(x={"self_serve": False, "billing": {
        "account_id": "42", "balance": 0, "prices": {"user_read": 0.5}}})
    with harness.Sandbox.start(config=cfg) as sb:
        assert sb.state()["self_serve"] is False
        assert sb.ledger()["prices"] == dict(PRICES, user_read=0.5)
        r = requests.get(sb.url + "/2/users/by/username/jack", headers={"Authorization": "Bearer sandbox-bearer-token"})
        assert r.status_code == 402 and r.json()["account_id"] == 42 and "[42]" in r.json()["detail"]
    for bad, error in (({"billing": {"balance": None}}, "x.billing.balance: must be a number"),
                       ({"billing": {"account_id": 7}}, "x.billing.account_id must be 1-19 digits"),
                       ({"self_serve": "yes"}, "x.self_serve must be true or false")):
        with pytest.raises(harness.SandboxError) as info:
            harness.Sandbox.start(config=harness.merged_config(x=bad))
        assert error in str(info.value)
