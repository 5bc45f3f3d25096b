"""What the plan lets a post do (2026): on the self-serve plan (the default) no
quote posts, replies only where the replied-to author summoned the replier,
at most one cashtag; on every plan the media mix (4 images, or 1 GIF, or 1
video); and the x-access-level header of OAuth 1.0a answers."""
import urllib.parse

import requests
from requests_oauthlib import OAuth1

from media_samples import MEDIA_TYPES, sample
from toolenv import oauth1  # Tests/conftest.py puts Tests/ on sys.path

PROBLEMS = "https://api.twitter.com/2/problems/"
JACK = ("12-sandboxjackaccesstoken", "sandbox-jack-token-secret")
READONLY = dict(token="1000000000000000001-sandboxreadonlytoken", secret="sandbox-readonly-token-secret",
                consumer=("sandbox-readonly-consumer-key", "sandbox-readonly-consumer-secret"))
SUMMON = {"detail": "You can only reply to or quote posts where you are mentioned or are the author.",
          "status": 403, "title": "Authorization Error", "type": PROBLEMS + "not-authorized-for-resource"}
CASHTAGS = dict(SUMMON, detail="Posts are limited to a maximum of one cashtag ($SYMBOL)")
MIX = "Your media IDs are invalid."


def post(sb, auth, body):
    return requests.post(sb.url + "/2/tweets", json=body, auth=auth)


def created(sb, auth, body):
    r = post(sb, auth, body)
    assert r.status_code == 201, r.text
    return r.json()["data"]["id"]


def update(sb, auth, **form):
    return requests.post(sb.url + "/1.1/statuses/update.json", data=form, auth=auth)


def refused_with(r, body):
    assert (r.status_code, r.json()) == (403, body)
    assert r.headers["Content-Type"].startswith("application/problem+json")


def texts(sb):
    return [p["text"] for p in sb.posts()["posts"]]


# -- quotes -----------------------------------------------------------------------

def test_self_serve_refuses_every_quote_and_enterprise_takes_them(sb, demo):
    own = created(sb, oauth1(demo), {"text": "mine"})
    for quoted in (own, "20", "21"):
        refused_with(post(sb, oauth1(demo), {"text": "quoting " + quoted, "quote_tweet_id": quoted}), SUMMON)
    entry = sb.log()[-1]
    assert entry["plan"] == "self-serve" and entry["status"] == 403
    assert texts(sb) == ["mine"]
    sb.control(self_serve=False)
    assert post(sb, oauth1(demo), {"text": "quoting jack", "quote_tweet_id": "20"}).status_code == 201


# -- replies --------------------------------------------------------------------

def test_reply_to_a_post_that_did_not_summon_the_replier_is_refused(sb, demo):
    refused_with(post(sb, oauth1(demo), {"text": "hi jack", "reply": {"in_reply_to_tweet_id": "20"}}), SUMMON)
    assert texts(sb) == []
    sb.control(self_serve=False)
    assert post(sb, oauth1(demo), {"text": "hi jack", "reply": {"in_reply_to_tweet_id": "20"}}).status_code == 201


def test_replies_allowed_on_self_serve(sb, demo):
    me, jack = oauth1(demo), oauth1(demo, *JACK)
    # the replier's own post (a thread)
    first = created(sb, me, {"text": "thread 1/2"})
    created(sb, me, {"text": "thread 2/2", "reply": {"in_reply_to_tweet_id": first}})
    # post 21 of the default world, where jack @mentions the demo user
    created(sb, me, {"text": "thanks jack", "reply": {"in_reply_to_tweet_id": "21"}})
    # a mention in any case, with punctuation after it
    mention = created(sb, jack, {"text": "ping @SocialPipe_Demo."})
    created(sb, me, {"text": "pong", "reply": {"in_reply_to_tweet_id": mention}})
    # jack (on an Enterprise app) quotes a post of the demo user, and replies to one
    quote_me = created(sb, me, {"text": "quote me"})
    sb.control(self_serve=False)
    quoting = created(sb, jack, {"text": "look at this", "quote_tweet_id": quote_me})
    answer = created(sb, jack, {"text": "nice thread", "reply": {"in_reply_to_tweet_id": first}})
    sb.control(self_serve=True)
    created(sb, me, {"text": "you quoted me", "reply": {"in_reply_to_tweet_id": quoting}})
    created(sb, me, {"text": "thank you", "reply": {"in_reply_to_tweet_id": answer}})
    assert len(texts(sb)) == 10


def test_what_is_not_a_mention_does_not_summon(sb, demo):
    me, jack = oauth1(demo), oauth1(demo, *JACK)
    for text in ("mail me: jack@socialpipe_demo", "see @socialpipe_demo/friends", "@socialpipe_demox",
                 "@nobody_follows only", "@socialpipe_demo@x"):
        target = created(sb, jack, {"text": text})
        refused_with(post(sb, me, {"text": "re " + text, "reply": {"in_reply_to_tweet_id": target}}), SUMMON)
    # a reply by jack to someone else's post does not summon the demo user
    other = created(sb, jack, {"text": "a reply to my own", "reply": {"in_reply_to_tweet_id": "20"}})
    refused_with(post(sb, me, {"text": "butting in", "reply": {"in_reply_to_tweet_id": other}}), SUMMON)


def test_v11_reply_rule(sb, demo):
    r = update(sb, oauth1(demo), status="@jack hello", in_reply_to_status_id="20")
    assert (r.status_code, r.json()) == (403, {"errors": [{"code": 433, "message": SUMMON["detail"]}]})
    r = update(sb, oauth1(demo), status="@jack thanks", in_reply_to_status_id="21")
    assert r.status_code == 200 and r.json()["in_reply_to_status_id_str"] == "21"
    # an ignored in_reply_to_status_id (no mention, no auto-populate) is no reply at all
    assert update(sb, oauth1(demo), status="plain", in_reply_to_status_id="20").status_code == 200


# -- cashtags -----------------------------------------------------------------------

def test_more_than_one_cashtag_is_refused_on_self_serve(sb, demo):
    me = oauth1(demo)
    for text in ("$AAPL and $MSFT", "$aapl twice: $AAPL", "$BRK.B, $TSLA!", "RT $X\n$Y"):
        refused_with(post(sb, me, {"text": text}), CASHTAGS)
    # twitter-text's cashtags only: a letter first, at most 6, after a space or the start
    for text in ("only $AAPL at $12.50", "US$5 and $6", "a$AAPL b$MSFT", "$TOOLONGX and $AAPL", "$$AAPL $MSFT",
                 "($ABC) $DEF"):
        assert post(sb, me, {"text": text}).status_code == 201, text
    r = update(sb, me, status="$AAPL $MSFT")
    assert (r.status_code, r.json()) == (403, {"errors": [{"code": 200, "message": CASHTAGS["detail"]}]})
    sb.control(self_serve=False)
    assert post(sb, me, {"text": "$AAPL and $MSFT"}).status_code == 201
    assert update(sb, me, status="$GOOG and $AMZN").status_code == 200


# -- media mix (every plan) -------------------------------------------------------

def upload(sb, auth, kind, category, seed):
    """A finalized media of the store, processed (one STATUS poll) when it needs processing."""
    data = sample(kind, 2000, seed)
    r = requests.post(sb.url + "/2/media/upload/initialize", auth=auth,
                      json={"media_type": MEDIA_TYPES[kind], "total_bytes": len(data), "media_category": category})
    media_id = r.json()["data"]["id"]
    files = {"segment_index": (None, "0"), "media": ("blob", data, "application/octet-stream")}
    assert requests.post(sb.url + "/2/media/upload/%s/append" % media_id, files=files, auth=auth).status_code == 200
    assert requests.post(sb.url + "/2/media/upload/%s/finalize" % media_id, auth=auth).status_code == 200
    if category != "tweet_image":
        r = requests.get(sb.url + "/2/media/upload", params={"command": "STATUS", "media_id": media_id}, auth=auth)
        assert r.json()["data"]["processing_info"]["state"] == "succeeded"
    return media_id


def test_media_kinds_do_not_mix_on_any_plan(sb, demo):
    me = oauth1(demo)
    sb.control(media_processing={"polls": 0})
    images = [upload(sb, me, "png", "tweet_image", i) for i in range(4)]
    still_gif = upload(sb, me, "gif", "tweet_image", 9)
    gifs = [upload(sb, me, "gif", "tweet_gif", i) for i in range(2)]
    video = upload(sb, me, "mp4", "tweet_video", 0)
    amplify = upload(sb, me, "mp4", "amplify_video", 1)
    mixes = ([images[0], gifs[0]], [gifs[0], images[0]], gifs, [video, images[0]], [video, amplify],
             [gifs[0], video], [still_gif, gifs[1]])
    for self_serve in (True, False):
        sb.control(self_serve=self_serve)
        for ids in mixes:
            r = post(sb, me, {"text": "mix %s" % ids, "media": {"media_ids": ids}})
            assert r.status_code == 400, ids
            assert r.json()["errors"] == [{"parameters": {"media.media_ids": ids}, "message": MIX}]
            r = update(sb, me, status="mix %s" % ids, media_ids=",".join(ids))
            assert (r.status_code, r.json()["errors"][0]["code"]) == (400, 324)
    assert texts(sb) == []
    allowed = (images, images[:3] + [still_gif], [gifs[0]], [video], [amplify], ["1000000000000000501", images[1]])
    for n, ids in enumerate(allowed):
        assert post(sb, me, {"text": "ok %d" % n, "media": {"media_ids": ids}}).status_code == 201, ids
    assert update(sb, me, status="one gif", media_ids=gifs[1]).status_code == 200


# -- x-access-level ---------------------------------------------------------------

def test_access_level_header_follows_the_oauth1_token(sb, demo):
    r = requests.get(sb.url + "/2/users/me", auth=oauth1(demo))
    assert r.headers["x-access-level"] == "read-write"
    created(sb, oauth1(demo), {"text": "once"})
    r = post(sb, oauth1(demo), {"text": "once"})
    assert r.status_code == 403 and r.headers["x-access-level"] == "read-write"
    r = requests.get(sb.url + "/1.1/account/verify_credentials.json", auth=oauth1(demo))
    assert r.headers["x-access-level"] == "read-write"
    readonly = oauth1(demo, **READONLY)
    r = requests.get(sb.url + "/2/users/me", auth=readonly)
    assert (r.status_code, r.headers["x-access-level"]) == (200, "read")
    r = post(sb, oauth1(demo, **READONLY), {"text": "cannot"})
    assert (r.status_code, r.json()["type"], r.headers["x-access-level"]) == \
        (403, PROBLEMS + "oauth1-permissions", "read")


def test_no_access_level_for_bearer_tokens_or_refused_credentials(sb, demo):
    for token in ("sandbox-bearer-token", "sandbox-oauth2-user-token"):
        r = requests.get(sb.url + "/2/users/by/username/jack", headers={"Authorization": "Bearer " + token})
        assert r.status_code == 200 and "x-access-level" not in r.headers
    r = requests.get(sb.url + "/2/users/me", auth=oauth1(demo, secret="wrong-token-secret"))
    assert r.status_code == 401 and "x-access-level" not in r.headers


def test_a_read_token_of_a_read_write_app_reports_read(sb, demo):
    consumer = (demo["consumer_key"], demo["consumer_secret"])
    r = requests.post(sb.url + "/oauth/request_token", params={"x_auth_access_type": "read"},
                      auth=OAuth1(*consumer, callback_uri="oob"))
    rt = dict(urllib.parse.parse_qsl(r.text))
    pin = sb.control(authorize_request_token={"oauth_token": rt["oauth_token"], "user": "socialpipe_demo"})["pin"]
    r = requests.post(sb.url + "/oauth/access_token",
                      auth=OAuth1(*consumer, rt["oauth_token"], rt["oauth_token_secret"], verifier=pin))
    access = dict(urllib.parse.parse_qsl(r.text))
    r = requests.get(sb.url + "/2/users/me", auth=OAuth1(*consumer, access["oauth_token"], access["oauth_token_secret"]))
    assert (r.status_code, r.headers["x-access-level"]) == (200, "read")
