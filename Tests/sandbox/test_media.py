"""Media upload as the sandbox serves it: X v2 one-shot upload, chunked upload
(initialize, append, finalize, STATUS, metadata), the v1.1 media/upload.json through
tweepy's API.media_upload, the media store's control API, faults and limits."""
import base64
import hashlib
import io
import json
import os
import time

import pytest
import requests
import tweepy
from requests_oauthlib import OAuth1

import sandbox_media
from toolenv import oauth1  # Tests/conftest.py puts Tests/ on sys.path

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

PROBLEMS = "https://api.twitter.com/2/problems/"
MIB = 1024 * 1024
SEGMENT = 4 * MIB
JACK = ("12-sandboxjackaccesstoken", "sandbox-jack-token-secret")
JACK_ID = "12"

ONE_SHOT = "POST /2/media/upload"
INIT = "POST /2/media/upload/initialize"
APPEND = "POST /2/media/upload/:id/append"
FINALIZE = "POST /2/media/upload/:id/finalize"
STATUS = "GET /2/media/upload"
METADATA = "POST /2/media/metadata"
V1_POST = "POST /1.1/media/upload.json"
V1_GET = "GET /1.1/media/upload.json"


# -- sample files (only their first bytes matter to the sandbox) ---------------

def filler(n, seed=b"media"):
    block = hashlib.sha256(seed).digest() * 2048      # 64 KiB of varied bytes
    return (block * (n // len(block) + 1))[:n]


def png(n, w=640, h=480, seed=b"png"):
    head = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\x0dIHDR" + w.to_bytes(4, "big") + h.to_bytes(4, "big")
    return head + filler(n - len(head), seed)


def jpeg(n, seed=b"jpeg"):
    return b"\xff\xd8\xff\xe0" + filler(n - 4, seed)


def gif(n, seed=b"gif"):
    head = b"GIF89a" + (320).to_bytes(2, "little") + (200).to_bytes(2, "little")
    return head + filler(n - len(head), seed)


def webp(n, seed=b"webp"):
    return b"RIFF" + (n - 8).to_bytes(4, "little") + b"WEBPVP8 " + filler(n - 16, seed)


def mp4(n, seed=b"mp4"):
    return b"\x00\x00\x00\x18ftypisom" + filler(n - 12, seed)


def mov(n, seed=b"mov"):
    return b"\x00\x00\x00\x14ftypqt  " + filler(n - 12, seed)


# -- v2 helpers ------------------------------------------------------------------

def bearer(token):
    return {"Authorization": "Bearer " + token}


class V2:
    """Raw v2 media requests with one credential."""

    def __init__(self, sb, auth=None, headers=None):
        self.sb, self.auth, self.headers = sb, auth, headers or {}

    def _kw(self, **kw):
        return dict(kw, auth=self.auth, headers=dict(self.headers, **kw.pop("headers", {})), timeout=30)

    def initialize(self, media_type="image/png", total_bytes=1000, media_category="tweet_image", **extra):
        body = {"media_type": media_type, "total_bytes": total_bytes}
        if media_category is not None:
            body["media_category"] = media_category
        body.update(extra)
        return requests.post(self.sb.url + "/2/media/upload/initialize", **self._kw(json=body))

    def new(self, data, media_type="image/png", media_category="tweet_image"):
        r = self.initialize(media_type, len(data), media_category)
        assert r.status_code == 200, r.text
        return r.json()["data"]["id"]

    def append(self, media_id, index, chunk):
        files = {"segment_index": (None, str(index)), "media": ("blob", chunk, "application/octet-stream")}
        return requests.post(self.sb.url + "/2/media/upload/%s/append" % media_id, **self._kw(files=files))

    def append_all(self, media_id, data, size=SEGMENT):
        for i in range(0, len(data), size):
            r = self.append(media_id, i // size, data[i:i + size])
            assert r.status_code == 200, r.text

    def finalize(self, media_id):
        return requests.post(self.sb.url + "/2/media/upload/%s/finalize" % media_id, **self._kw())

    def status(self, media_id, **params):
        q = dict({"command": "STATUS", "media_id": media_id}, **params)
        return requests.get(self.sb.url + "/2/media/upload", **self._kw(params=q))

    def metadata(self, body):
        return requests.post(self.sb.url + "/2/media/metadata", **self._kw(json=body))

    def post(self, text, media_ids):
        return requests.post(self.sb.url + "/2/tweets",
                             **self._kw(json={"text": text, "media": {"media_ids": media_ids}}))

    def one_shot(self, data, media_category="tweet_image", media_type=None, **fields):
        """The one-shot upload, multipart: text fields first, then the file in `media`."""
        parts = [("media_category", (None, media_category))] if media_category is not None else []
        if media_type is not None:
            parts.append(("media_type", (None, media_type)))
        parts += [(k, (None, v)) for k, v in fields.items()]
        if data is not None:
            parts.append(("media", ("blob", data, "application/octet-stream")))
        return requests.post(self.sb.url + "/2/media/upload", **self._kw(files=parts))

    def upload(self, data, media_type="image/png", media_category="tweet_image"):
        media_id = self.new(data, media_type, media_category)
        self.append_all(media_id, data)
        r = self.finalize(media_id)
        assert r.status_code == 200, r.text
        return media_id


@pytest.fixture
def v2(sb, demo):
    return V2(sb, oauth1(demo))


@pytest.fixture
def jack(sb, demo):
    return V2(sb, oauth1(demo, *JACK))


def invalid(r):
    """The messages of a 400 invalid-request."""
    assert r.status_code == 400, (r.status_code, r.text)
    body = r.json()
    assert body["type"] == PROBLEMS + "invalid-request" and body["title"] == "Invalid Request"
    assert r.headers["Content-Type"].startswith("application/problem+json")
    return [e["message"] for e in body["errors"]]


def media_of(sb, media_id):
    return next(m for m in sb.media() if m["id"] == media_id)


# -- the whole v2 flow -------------------------------------------------------------

def test_image_upload_then_post_carries_the_media(sb, v2, demo):
    data = png(SEGMENT + 123_456)
    r = v2.initialize("image/png", len(data), "tweet_image")
    assert r.status_code == 200
    init = r.json()["data"]
    media_id = init["id"]
    assert len(media_id) == 19 and media_id.isdigit()
    assert init == {"id": media_id, "media_key": "3_" + media_id, "expires_after_secs": 86400}
    first = v2.append(media_id, 0, data[:SEGMENT])
    assert first.status_code == 200
    expires = first.json()["data"]["expires_at"]
    assert abs(expires - (time.time() + 86400)) < 5
    assert v2.append(media_id, 1, data[SEGMENT:]).json() == {"data": {"expires_at": expires}}
    fin = v2.finalize(media_id)
    assert fin.status_code == 200
    assert fin.json()["data"]["size"] == len(data)
    assert "processing_info" not in fin.json()["data"]
    assert v2.status(media_id).json()["data"]["processing_info"]["state"] == "succeeded"
    r = v2.post("a picture", [media_id])
    assert r.status_code == 201
    [post] = sb.posts()["posts"]
    assert post["media_ids"] == [media_id] and post["author_id"] == demo["user_id"]
    m = media_of(sb, media_id)
    assert m["segments"] == [SEGMENT, 123_456] and m["received_bytes"] == len(data)
    assert m["finalized"] is True and m["state"] == "succeeded"
    assert m["sha256"] == hashlib.sha256(data).hexdigest()
    assert m["user_id"] == demo["user_id"] and m["media_type"] == "image/png"
    assert m["media_category"] == "tweet_image" and m["total_bytes"] == len(data)


def test_oauth2_user_token_with_media_write_uploads(sb):
    up = V2(sb, headers=bearer("sandbox-oauth2-user-token"))
    media_id = up.upload(jpeg(5000), "image/jpeg")
    assert up.post("oauth2 media", [media_id]).status_code == 201


@pytest.mark.parametrize("headers, detail", [
    (bearer("sandbox-bearer-token"), "Authenticating with OAuth 2.0 Application-Only is forbidden"),
    (bearer("sandbox-oauth2-read-token"), "Forbidden"),
])
def test_app_only_and_scopes_without_media_write_are_refused(sb, headers, detail):
    r = V2(sb, headers=headers).initialize()
    assert r.status_code == 403 and r.json()["detail"].startswith(detail)
    assert sb.media() == []


def test_read_only_app_cannot_upload(sb, demo):
    token = ("1000000000000000001-sandboxreadonlytoken", "sandbox-readonly-token-secret")
    auth = OAuth1("sandbox-readonly-consumer-key", "sandbox-readonly-consumer-secret", *token)
    r = V2(sb, auth).initialize()
    assert r.status_code == 403 and r.json()["type"] == PROBLEMS + "oauth1-permissions"


# -- the one-shot upload ----------------------------------------------------------------

@pytest.mark.parametrize("make, media_type", [(jpeg, "image/jpeg"), (png, "image/png"), (webp, "image/webp")])
def test_one_shot_upload_then_post(sb, v2, demo, make, media_type):
    data = make(5 * MIB)                # the most a tweet_image takes
    r = v2.one_shot(data, media_type=media_type)
    assert r.status_code == 200, r.text
    got = r.json()["data"]
    media_id = got["id"]
    assert got == {"id": media_id, "media_key": "3_" + media_id, "size": len(data), "expires_after_secs": 86400}
    assert v2.post("one request, then the post", [media_id]).status_code == 201
    m = media_of(sb, media_id)
    assert (m["media_type"], m["media_category"], m["segments"], m["finalized"], m["state"]) == \
        (media_type, "tweet_image", [len(data)], True, "succeeded"), m
    assert m["sha256"] == hashlib.sha256(data).hexdigest() and m["user_id"] == demo["user_id"]
    assert v2.status(media_id).json()["data"]["processing_info"]["state"] == "succeeded"
    [entry] = [e for e in sb.log() if e["endpoint"] == ONE_SHOT]
    assert entry["body"]["media"] == [{"filename": "blob", "content_type": "application/octet-stream",
                                       "bytes": len(data)}], "logged without its bytes"


def test_one_shot_takes_json_with_base64_media_and_no_media_type(sb, v2):
    data = jpeg(3000)
    r = requests.post(sb.url + "/2/media/upload", **v2._kw(json={
        "media": base64.b64encode(data).decode(), "media_category": "tweet_image"}))
    assert r.status_code == 200, r.text
    m = media_of(sb, r.json()["data"]["id"])
    assert m["media_type"] == "image/jpeg" and m["sha256"] == hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize("data, category, media_type, extra, message", [
    (None, "tweet_image", None, {}, "$.media: is missing but it is required"),
    (b"", "tweet_image", None, {}, "$.media: the file is empty"),
    (png(100), None, None, {}, "$.media_category: is missing but it is required"),
    (png(100), "tweet_video", None, {}, "$.media_category: does not have a value in the enumeration"),
    (png(100), "dm_image", None, {}, "$.media_category: dm_image is not served by the sandbox"),
    (png(100), "tweet_image", "image/gif", {}, "$.media_type: does not have a value in the enumeration"),
    (png(100), "tweet_image", "image/jpeg", {}, "$.media: the content is image/png, not the media_type image/jpeg"),
    (b"not a picture at all", "tweet_image", None, {}, "$.media: the content is of no supported type"),
    (gif(100), "tweet_image", None, {}, "$.media: the content is image/gif, which the one-shot upload does not take"),
    (mp4(100), "tweet_image", None, {}, "$.media: the content is video/mp4"),
    (png(5 * MIB + 1), "tweet_image", "image/png", {},
     "$.media: 5242881 bytes is over the limit of 5242880 bytes for media_category tweet_image"),
    (png(100), "tweet_image", None, {"total_bytes": "100"},
     "$.total_bytes: is not defined in the schema and the schema does not allow additional properties"),
    (png(100), "tweet_image", None, {"additional_owners": "12,abc"}, "$.additional_owners: must be an array"),
    (png(100), "tweet_image", None, {"shared": "yes"}, "$.shared: [yes] is not a boolean"),
], ids=["no-media", "empty", "no-category", "video-category", "dm-category", "gif-type", "type-mismatch",
        "unknown-content", "gif-content", "video-content", "over-5-MiB", "unknown-field", "bad-owner", "bad-shared"])
def test_one_shot_checks(sb, v2, data, category, media_type, extra, message):
    messages = invalid(v2.one_shot(data, category, media_type, **extra))
    assert any(m.startswith(message) for m in messages), messages
    assert sb.media() == []


def test_one_shot_needs_multipart_or_json(sb, demo):
    r = requests.post(sb.url + "/2/media/upload", data={"media_category": "tweet_image"}, auth=oauth1(demo))
    assert invalid(r)[0].startswith("An upload must be sent as multipart/form-data")


@pytest.mark.parametrize("headers, status, detail", [
    (bearer("sandbox-bearer-token"), 403, "Authenticating with OAuth 2.0 Application-Only is forbidden"),
    (bearer("sandbox-oauth2-read-token"), 403, "Forbidden"),
    (bearer("sandbox-oauth2-user-token"), 200, None),
])
def test_one_shot_needs_a_user_token_with_media_write(sb, headers, status, detail):
    r = V2(sb, headers=headers).one_shot(png(100))
    assert r.status_code == status, r.text
    if detail:
        assert r.json()["detail"].startswith(detail) and sb.media() == []


def test_one_shot_media_belongs_to_its_uploader_and_additional_owners(sb, v2, jack):
    mine = v2.one_shot(png(100)).json()["data"]["id"]
    shared = v2.one_shot(png(101), additional_owners=JACK_ID).json()["data"]["id"]
    unknown = "Media id [%s] does not exist or does not belong to you." % mine
    assert invalid(jack.status(mine)) == [unknown]
    assert invalid(jack.metadata({"id": mine, "metadata": {"alt_text": {"text": "mine"}}})) == [unknown]
    assert invalid(jack.post("not my picture", [mine])) == ["Your media IDs are invalid."]
    assert jack.post("shared picture", [shared]).status_code == 201
    assert v2.metadata({"id": mine, "metadata": {"alt_text": {"text": "mine"}}}).status_code == 200
    assert v2.post("my picture", [mine]).status_code == 201
    assert media_of(sb, mine)["alt_text"] == "mine" and media_of(sb, shared)["additional_owners"] == [JACK_ID]


def test_one_shot_rate_limit_is_500_per_15_minutes_and_faults_hit_it(sb, v2):
    r = v2.one_shot(png(100))
    assert (r.headers["x-rate-limit-limit"], r.headers["x-rate-limit-remaining"]) == ("500", "499")
    fid = sb.fault("status", match={"endpoint": ONE_SHOT}, status=503, retry_after=0)
    assert v2.one_shot(png(101)).status_code == 503
    assert v2.one_shot(png(102)).status_code == 200
    sb.control(rate_limits={ONE_SHOT: {"limit": 1, "window": 60}})
    assert v2.one_shot(png(103)).status_code == 200
    r = v2.one_shot(png(104))
    assert r.status_code == 429 and r.headers["x-rate-limit-remaining"] == "0"
    assert sorted(m["total_bytes"] for m in sb.media()) == [100, 102, 103]
    assert [e["fault"]["id"] for e in sb.log() if e.get("fault")] == [fid]


# -- initialize checks ----------------------------------------------------------------

@pytest.mark.parametrize("body, message", [
    ({"total_bytes": 10, "media_category": "tweet_image"}, "$.media_type: is missing but it is required"),
    ({"media_type": "image/bmp", "total_bytes": 10}, "$.media_type: does not have a value in the enumeration"),
    ({"media_type": 7, "total_bytes": 10}, "$.media_type: integer found, string expected"),
    ({"media_type": "image/png", "total_bytes": 10, "media_category": "dm_image"},
     "$.media_category: does not have a value in the enumeration"),
    ({"media_type": "image/png", "total_bytes": 10, "media_category": "tweet_video"},
     "$.media_category: tweet_video does not fit media_type image/png"),
    ({"media_type": "video/mp4", "total_bytes": 10, "media_category": "tweet_image"},
     "$.media_category: tweet_image does not fit media_type video/mp4"),
    ({"media_type": "image/gif", "total_bytes": 10, "media_category": "amplify_video"},
     "$.media_category: amplify_video does not fit media_type image/gif"),
    ({"media_type": "video/quicktime", "total_bytes": 10, "media_category": "tweet_gif"},
     "$.media_category: tweet_gif does not fit media_type video/quicktime"),
    ({"media_type": "image/png", "media_category": "tweet_image"}, "$.total_bytes: is missing but it is required"),
    ({"media_type": "image/png", "total_bytes": 0}, "$.total_bytes: must be at least 1"),
    ({"media_type": "image/png", "total_bytes": "10"}, "$.total_bytes: string found, integer expected"),
    ({"media_type": "image/png", "total_bytes": True}, "$.total_bytes: boolean found, integer expected"),
    ({"media_type": "image/png", "total_bytes": 1.5}, "$.total_bytes: number found, integer expected"),
    ({"media_type": "image/png", "total_bytes": 5242881, "media_category": "tweet_image"},
     "$.total_bytes: 5242881 is over the limit of 5242880 bytes for media_category tweet_image"),
    ({"media_type": "image/gif", "total_bytes": 5242881, "media_category": "tweet_image"},
     "$.total_bytes: 5242881 is over the limit of 5242880 bytes for media_category tweet_image"),
    ({"media_type": "image/gif", "total_bytes": 15728641, "media_category": "tweet_gif"},
     "$.total_bytes: 15728641 is over the limit of 15728640 bytes for media_category tweet_gif"),
    ({"media_type": "video/mp4", "total_bytes": 536870913, "media_category": "tweet_video"},
     "$.total_bytes: 536870913 is over the limit of 536870912 bytes for media_category tweet_video"),
    ({"media_type": "video/mp4", "total_bytes": 536870913, "media_category": "amplify_video"},
     "$.total_bytes: 536870913 is over the limit of 536870912 bytes for media_category amplify_video"),
    ({"media_type": "image/png", "total_bytes": 10, "name": "x.png"},
     "$.name: is not defined in the schema and the schema does not allow additional properties"),
    ({"media_type": "image/png", "total_bytes": 10, "additional_owners": ["abc"]},
     "$.additional_owners: must be an array of at most 100 user ids"),
])
def test_initialize_checks(sb, demo, body, message):
    r = requests.post(sb.url + "/2/media/upload/initialize", json=body, auth=oauth1(demo))
    messages = invalid(r)
    assert any(m.startswith(message) for m in messages), messages
    assert sb.media() == []


@pytest.mark.parametrize("media_type, category, total", [
    ("image/jpeg", "tweet_image", 5242880), ("image/png", "tweet_image", 1), ("image/webp", "tweet_image", 5242880),
    ("image/gif", "tweet_gif", 15728640), ("image/gif", "tweet_image", 5242880),
    ("video/mp4", "tweet_video", 536870912), ("video/mp4", "amplify_video", 536870912),
    ("video/quicktime", "tweet_video", 1), ("video/quicktime", "amplify_video", 1),
])
def test_initialize_accepts_every_consistent_pair_up_to_its_limit(sb, v2, media_type, category, total):
    r = v2.initialize(media_type, total, category)
    assert r.status_code == 200, r.text
    prefix = {"tweet_image": "3_", "tweet_gif": "16_"}.get(category, "7_")
    assert r.json()["data"]["media_key"] == prefix + r.json()["data"]["id"]
    [m] = sb.media()
    assert (m["media_type"], m["media_category"], m["total_bytes"]) == (media_type, category, total)
    assert m["finalized"] is False and m["state"] is None and m["sha256"] is None


@pytest.mark.parametrize("media_type, category", [
    ("image/png", "tweet_image"), ("image/gif", "tweet_gif"), ("video/mp4", "tweet_video")])
def test_initialize_without_category_takes_the_types_default(sb, v2, media_type, category):
    assert v2.initialize(media_type, 10, None).status_code == 200
    assert sb.media()[0]["media_category"] == category


def test_initialize_needs_a_json_body(sb, demo):
    r = requests.post(sb.url + "/2/media/upload/initialize", data={"media_type": "image/png", "total_bytes": "5"},
                      auth=oauth1(demo))
    assert invalid(r) == ["Requests with bodies must have content-type of application/json."]


# -- append checks ------------------------------------------------------------------------

def raw_append(sb, demo, media_id, parts, boundary="xYzBoundary", content_type=None, quoted=False):
    """An append whose multipart body is built by hand from (headers, data) parts."""
    body = b""
    for headers, data in parts:
        body += b"--" + boundary.encode() + b"\r\n" + headers.encode() + b"\r\n\r\n" + data + b"\r\n"
    body += b"--" + boundary.encode() + b"--\r\n"
    ctype = content_type or "multipart/form-data; boundary=" + ('"%s"' % boundary if quoted else boundary)
    return requests.post(sb.url + "/2/media/upload/%s/append" % media_id, data=body, auth=oauth1(demo),
                         headers={"Content-Type": ctype})


INDEX0 = ('Content-Disposition: form-data; name="segment_index"', b"0")


def media_part(data, filename="blob"):
    return ('Content-Disposition: form-data; name="media"; filename="%s"\r\n'
            'Content-Type: application/octet-stream' % filename, data)


@pytest.mark.parametrize("parts, message", [
    ([media_part(b"x" * 10)], "segment_index: is missing but it is required"),
    ([('Content-Disposition: form-data; name="segment_index"', b"1000"), media_part(b"x")],
     "segment_index: [1000] is not an integer from 0 to 999"),
    ([('Content-Disposition: form-data; name="segment_index"', b"-1"), media_part(b"x")],
     "segment_index: [-1] is not an integer from 0 to 999"),
    ([('Content-Disposition: form-data; name="segment_index"', b"one"), media_part(b"x")],
     "segment_index: [one] is not an integer from 0 to 999"),
    ([INDEX0], "media: is missing but it is required"),
    ([INDEX0, media_part(b"")], "media: the segment is empty"),
    ([INDEX0, media_part(b"x" * (5 * MIB + 1))], "media: the segment is 5242881 bytes, more than the 5242880 allowed"),
])
def test_append_checks_the_body(sb, demo, v2, parts, message):
    media_id = v2.new(png(100))
    assert invalid(raw_append(sb, demo, media_id, parts)) == [message]
    assert media_of(sb, media_id)["segments"] == []


def test_append_takes_a_5_mib_segment_and_parts_in_any_order(sb, demo, v2):
    data = png(5 * MIB)
    media_id = v2.new(data)
    r = raw_append(sb, demo, media_id, [media_part(data, "x.png"), INDEX0], boundary="quoted=boundary", quoted=True)
    assert r.status_code == 200, r.text
    assert v2.finalize(media_id).status_code == 200
    assert media_of(sb, media_id)["sha256"] == hashlib.sha256(data).hexdigest()


def test_append_needs_multipart(sb, demo, v2):
    media_id = v2.new(png(100))
    r = requests.post(sb.url + "/2/media/upload/%s/append" % media_id, json={"segment_index": 0, "media": "eA=="},
                      auth=oauth1(demo))
    assert invalid(r)[0].startswith("An append must be sent as multipart/form-data")
    r = raw_append(sb, demo, media_id, [INDEX0, media_part(b"x")], content_type="multipart/form-data")
    assert invalid(r) == ["The multipart body does not parse: the multipart Content-Type has no boundary."]


def test_append_to_a_bad_or_unknown_id(sb, v2):
    assert invalid(v2.append("abc", 0, b"x")) == ["The `id` path parameter value [abc] does not match ^[0-9]{1,19}$"]
    r = v2.append("1234567890123456789", 0, b"x")
    assert invalid(r) == ["Media id [1234567890123456789] does not exist or does not belong to you."]
    assert r.json()["errors"][0]["parameters"] == {"id": ["1234567890123456789"]}


def test_append_may_not_leave_a_gap(sb, v2):
    data = png(3000)
    media_id = v2.new(data)
    assert invalid(v2.append(media_id, 1, data[:1000])) == [
        "segment_index 1 leaves a gap: media id [%s] has no segments yet, so the first is 0." % media_id]
    assert v2.append(media_id, 0, data[:1000]).status_code == 200
    assert invalid(v2.append(media_id, 2, data[2000:])) == [
        "segment_index 2 leaves a gap: media id [%s] has segments 0..0, so the next is 1." % media_id]
    assert media_of(sb, media_id)["segments"] == [1000]


def test_a_resent_segment_replaces_the_first_copy(sb, v2):
    data = png(2500)
    media_id = v2.new(data)
    assert v2.append(media_id, 0, b"\x00" * 1200).status_code == 200     # a wrong first copy
    assert v2.append(media_id, 0, data[:1000]).status_code == 200        # re-sent: replaces it
    assert v2.append(media_id, 1, data[1000:2000]).status_code == 200
    assert v2.append(media_id, 1, data[1000:2000]).status_code == 200    # the same segment twice
    assert v2.append(media_id, 2, data[2000:]).status_code == 200
    m = media_of(sb, media_id)
    assert m["segments"] == [1000, 1000, 500] and m["received_bytes"] == 2500
    assert v2.finalize(media_id).status_code == 200
    assert media_of(sb, media_id)["sha256"] == hashlib.sha256(data).hexdigest()


def test_no_append_after_finalize(sb, v2):
    data = png(100)
    media_id = v2.upload(data)
    assert invalid(v2.append(media_id, 1, b"more")) == [
        "Media id [%s] is already finalized; it takes no more segments." % media_id]
    assert invalid(v2.append(media_id, 0, data)) == [
        "Media id [%s] is already finalized; it takes no more segments." % media_id]


# -- finalize checks --------------------------------------------------------------------------

def test_finalize_without_segments(sb, v2):
    media_id = v2.new(png(100))
    assert invalid(v2.finalize(media_id)) == ["Media id [%s]: no segments were appended." % media_id]


@pytest.mark.parametrize("sent", [999, 1001])
def test_finalize_needs_the_sizes_to_add_up(sb, v2, sent):
    data = png(1000)
    media_id = v2.new(data)
    assert v2.append(media_id, 0, png(sent)).status_code == 200
    assert invalid(v2.finalize(media_id)) == [
        "Media id [%s]: the 1 segments hold %d bytes, but total_bytes was 1000." % (media_id, sent)]
    assert media_of(sb, media_id)["finalized"] is False


@pytest.mark.parametrize("media_type, category, content, found", [
    ("image/png", "tweet_image", jpeg(500), "image/jpeg"),
    ("image/jpeg", "tweet_image", png(500), "image/png"),
    ("image/gif", "tweet_gif", webp(500), "image/webp"),
    ("image/webp", "tweet_image", b"RIFF\x00\x00\x00\x00WAVE" + filler(488), "of no supported type"),
    ("video/mp4", "tweet_video", mov(500), "video/quicktime"),
    ("video/quicktime", "tweet_video", mp4(500), "video/mp4"),
    ("image/png", "tweet_image", b"\x00" * 500, "of no supported type"),
])
def test_finalize_checks_the_magic_bytes(sb, v2, media_type, category, content, found):
    media_id = v2.new(content, media_type, category)
    assert v2.append(media_id, 0, content).status_code == 200
    assert invalid(v2.finalize(media_id)) == [
        "Media id [%s]: the content is %s, not the media_type %s given at initialize." % (media_id, found, media_type)]


def test_magic_bytes_split_over_small_segments_are_found(sb, v2):
    data = mp4(40)
    media_id = v2.new(data, "video/mp4", "tweet_video")
    v2.append_all(media_id, data, size=3)
    assert v2.finalize(media_id).status_code == 200


def test_a_refused_finalize_leaves_the_media_open(sb, v2):
    data = gif(3000)
    media_id = v2.new(data, "image/gif", "tweet_gif")
    assert v2.append(media_id, 0, data[:2000]).status_code == 200
    assert v2.finalize(media_id).status_code == 400
    assert v2.append(media_id, 1, data[2000:]).status_code == 200
    assert v2.finalize(media_id).status_code == 200


def test_a_resent_finalize_answers_again(sb, v2):
    data = mp4(5000)
    media_id = v2.new(data, "video/mp4", "tweet_video")
    v2.append_all(media_id, data)
    first = v2.finalize(media_id)
    again = v2.finalize(media_id)
    assert first.status_code == again.status_code == 200
    assert again.json()["data"]["processing_info"] == {"state": "pending", "check_after_secs": 1}
    assert v2.status(media_id).json()["data"]["processing_info"]["state"] == "in_progress"
    assert v2.finalize(media_id).json()["data"]["processing_info"]["state"] == "in_progress"
    assert media_of(sb, media_id)["status_polls"] == 1


# -- processing --------------------------------------------------------------------------------

@pytest.mark.parametrize("media_type, category", [
    ("video/mp4", "tweet_video"), ("video/quicktime", "amplify_video"), ("image/gif", "tweet_gif")])
def test_processing_runs_pending_in_progress_succeeded(sb, v2, media_type, category):
    data = {"video/mp4": mp4, "video/quicktime": mov, "image/gif": gif}[media_type](SEGMENT + 10)
    media_id = v2.upload(data, media_type, category)
    assert media_of(sb, media_id)["state"] == "pending"
    fin = v2.finalize(media_id).json()["data"]
    assert fin["processing_info"] == {"state": "pending", "check_after_secs": 1}
    assert v2.post("too early", [media_id]).status_code == 400
    infos = [v2.status(media_id).json()["data"]["processing_info"] for _ in range(4)]
    assert infos == [
        {"state": "in_progress", "check_after_secs": 1, "progress_percent": 33},
        {"state": "in_progress", "check_after_secs": 1, "progress_percent": 66},
        {"state": "succeeded", "progress_percent": 100},
        {"state": "succeeded", "progress_percent": 100},
    ]
    assert v2.status(media_id).json()["data"]["media_key"].endswith("_" + media_id)
    assert media_of(sb, media_id)["state"] == "succeeded"
    assert v2.post("a video", [media_id]).status_code == 201


def test_processing_can_fail_with_the_configured_error(sb, v2):
    sb.control(media_processing={"outcome": "failed", "polls": 1, "check_after_secs": 3,
                                 "error": {"message": "Video too short"}})
    media_id = v2.upload(mp4(2000), "video/mp4", "tweet_video")
    assert v2.finalize(media_id).json()["data"]["processing_info"] == {"state": "pending", "check_after_secs": 3}
    first = v2.status(media_id).json()["data"]["processing_info"]
    assert first == {"state": "in_progress", "check_after_secs": 3, "progress_percent": 50}
    final = v2.status(media_id).json()["data"]["processing_info"]
    assert final == {"state": "failed", "progress_percent": 50,
                     "error": {"code": 1, "name": "InvalidMedia", "message": "Video too short"}}
    assert media_of(sb, media_id)["state"] == "failed"
    assert v2.post("failed media", [media_id]).json()["errors"][0]["message"] == "Your media IDs are invalid."


def test_processing_defaults_fail_with_invalid_media_and_zero_polls_answer_at_once(sb, v2):
    sb.control(media_processing={"outcome": "failed", "polls": 0})
    media_id = v2.upload(gif(100), "image/gif", "tweet_gif")
    assert v2.status(media_id).json()["data"]["processing_info"]["error"] == {
        "code": 1, "name": "InvalidMedia", "message": "Unsupported video format"}


def test_processing_setting_applies_to_media_finalized_later_and_null_restores(sb, v2):
    before = v2.upload(mp4(100, b"a"), "video/mp4", "tweet_video")
    sb.control(media_processing={"polls": 0, "check_after_secs": 0})
    after = v2.upload(mp4(100, b"b"), "video/mp4", "tweet_video")
    assert sb.state()["media_processing"] == {"check_after_secs": 0, "polls": 0, "outcome": "succeeded",
                                              "error": None}
    sb.control(media_processing=None)
    restored = v2.upload(mp4(100, b"c"), "video/mp4", "tweet_video")
    assert v2.status(before).json()["data"]["processing_info"]["state"] == "in_progress"
    assert v2.status(after).json()["data"]["processing_info"]["state"] == "succeeded"
    assert v2.status(restored).json()["data"]["processing_info"] == {
        "state": "in_progress", "check_after_secs": 1, "progress_percent": 33}


@pytest.mark.parametrize("value", [
    {"polls": -1}, {"check_after_secs": "1"}, {"outcome": "done"}, {"speed": 1}, {"polls": True},
    {"error": {"code": "1"}}, {"error": {"reason": "x"}}, [1]])
def test_bad_media_processing_values_are_refused(sb, value):
    with pytest.raises(Exception, match="400.*media_processing"):
        sb.control(media_processing=value)
    assert sb.state()["media_processing"]["polls"] == 2


@pytest.mark.parametrize("value", [0, -5, 1.5, "60", True])
def test_bad_media_expires_after_secs_is_refused(sb, value):
    with pytest.raises(Exception, match="400.*media_expires_after_secs"):
        sb.control(media_expires_after_secs=value)


# -- STATUS checks --------------------------------------------------------------------------------

def test_status_checks(sb, v2):
    media_id = v2.new(png(100))
    assert invalid(v2.status(media_id)) == [
        "Media id [%s] is not finalized: there is no status to report yet." % media_id]
    assert invalid(v2.status(media_id, command="FINALIZE")) == [
        "The `command` query parameter value [FINALIZE] is not one of [STATUS]"]
    assert invalid(v2.status("12x")) == ["The `media_id` query parameter value [12x] does not match ^[0-9]{1,19}$"]
    assert invalid(v2.status(media_id, extra="1"))[0].startswith("The query parameter [extra] is not one of")
    r = requests.get(sb.url + "/2/media/upload", params={"media_id": media_id}, auth=v2.auth)
    assert invalid(r) == ["The `command` query parameter can not be empty"]
    assert invalid(v2.status("1234567890123456789")) == [
        "Media id [1234567890123456789] does not exist or does not belong to you."]


# -- metadata ---------------------------------------------------------------------------------------

def test_metadata_sets_alt_text(sb, v2):
    media_id = v2.upload(png(100))
    alt = "é" * 1000
    r = v2.metadata({"id": media_id, "metadata": {"alt_text": {"text": alt}}})
    assert r.status_code == 200
    assert r.json() == {"data": {"id": media_id, "associated_metadata": {"alt_text": {"text": alt}}}}
    assert media_of(sb, media_id)["alt_text"] == alt
    entry = sb.log(path="/2/media/metadata")[-1]
    assert entry["endpoint"] == METADATA
    assert entry["body"].startswith('{"id": "%s", "metadata": {"alt_text": {"text": "\\u00e9' % media_id)


@pytest.mark.parametrize("body, message", [
    ({"metadata": {"alt_text": {"text": "x"}}}, "$.id: is missing but it is required"),
    ({"id": 5, "metadata": {"alt_text": {"text": "x"}}}, "$.id: does not match the regex pattern ^[0-9]{1,19}$"),
    ({"id": "MID"}, "$.metadata: is missing but it is required"),
    ({"id": "MID", "metadata": {"alt_text": {"text": "x" * 1001}}},
     "$.metadata.alt_text.text: is 1001 characters long, more than the 1000 allowed"),
    ({"id": "MID", "metadata": {"alt_text": "x"}}, "$.metadata.alt_text.text: is missing or not a string"),
    ({"id": "MID", "metadata": {"caption": "x"}}, "$.metadata.caption: is not defined in the schema"),
    ({"id": "MID", "metadata": {}, "alt": "x"}, "$.alt: is not defined in the schema"),
])
def test_metadata_checks(sb, v2, body, message):
    media_id = v2.upload(png(100))
    if body.get("id") == "MID":
        body["id"] = media_id
    messages = invalid(v2.metadata(body))
    assert any(m.startswith(message) for m in messages), messages
    assert media_of(sb, media_id)["alt_text"] is None


# -- ownership --------------------------------------------------------------------------------------

def test_another_users_token_cannot_touch_or_post_the_media(sb, v2, jack):
    data = png(3000)
    media_id = v2.new(data)
    assert v2.append(media_id, 0, data[:1000]).status_code == 200
    unknown = "Media id [%s] does not exist or does not belong to you." % media_id
    assert invalid(jack.append(media_id, 1, data[1000:])) == [unknown]
    assert invalid(jack.finalize(media_id)) == [unknown]
    v2.append(media_id, 1, data[1000:])
    assert invalid(jack.finalize(media_id)) == [unknown]
    assert v2.finalize(media_id).status_code == 200
    assert invalid(jack.status(media_id)) == [unknown]
    assert invalid(jack.metadata({"id": media_id, "metadata": {"alt_text": {"text": "mine"}}})) == [unknown]
    r = jack.post("not my picture", [media_id])
    assert invalid(r) == ["Your media IDs are invalid."]
    assert r.json()["errors"][0]["parameters"] == {"media.media_ids": [media_id]}
    assert v2.post("my picture", [media_id]).status_code == 201
    m = media_of(sb, media_id)
    assert m["segments"] == [1000, 2000] and m["alt_text"] is None
    assert [p["text"] for p in sb.posts()["posts"]] == ["my picture"]


def test_additional_owners_may_post_but_not_upload(sb, v2, jack):
    data = png(100)
    r = v2.initialize("image/png", len(data), "tweet_image", additional_owners=[JACK_ID])
    media_id = r.json()["data"]["id"]
    assert invalid(jack.append(media_id, 0, data))[0].endswith("does not belong to you.")
    v2.append_all(media_id, data)
    assert v2.finalize(media_id).status_code == 200
    assert media_of(sb, media_id)["additional_owners"] == [JACK_ID]
    assert jack.post("shared picture", [media_id]).status_code == 201


# -- posts with media ids ---------------------------------------------------------------------------

def test_posts_refuse_media_that_is_not_ready(sb, v2):
    open_id = v2.new(png(100))
    assert invalid(v2.post("unfinalized", [open_id])) == ["Your media IDs are invalid."]
    video = v2.upload(mp4(100), "video/mp4", "tweet_video")
    ready = v2.upload(png(100))
    assert invalid(v2.post("still processing", [ready, video])) == ["Your media IDs are invalid."]
    assert invalid(v2.post("unknown", ["1234567890123456789"])) == ["Your media IDs are invalid."]
    assert v2.post("configured and uploaded", ["1000000000000000501", ready]).status_code == 201
    assert sb.posts()["posts"][0]["media_ids"] == ["1000000000000000501", ready]


def test_v11_status_update_checks_media_ids_the_same_way(sb, v2, demo):
    video = v2.upload(mp4(100), "video/mp4", "tweet_video")
    ready = v2.upload(png(100))
    url = sb.url + "/1.1/statuses/update.json"
    r = requests.post(url, data={"status": "v1 processing", "media_ids": video}, auth=oauth1(demo))
    assert r.status_code == 400 and r.json()["errors"][0]["code"] == 324
    r = requests.post(url, data={"status": "v1 ready", "media_ids": ready}, auth=oauth1(demo))
    assert r.status_code == 200
    assert sb.posts()["posts"][0]["media_ids"] == [ready]


def test_any_numeric_id_passes_when_none_are_configured_but_store_media_are_still_checked():
    import harness
    with harness.Sandbox.start(config=harness.merged_config(x={"media_ids": []})) as sb:
        demo_auth = OAuth1("sandbox-consumer-key", "sandbox-consumer-secret",
                           "1000000000000000001-sandboxaccesstoken", "sandbox-access-token-secret")
        up = V2(sb, demo_auth)
        assert up.post("any id", ["42"]).status_code == 201
        open_id = up.new(png(100))
        assert invalid(up.post("open media", [open_id])) == ["Your media IDs are invalid."]


# -- expiry -------------------------------------------------------------------------------------------

def test_media_expire_after_the_configured_seconds(sb, v2):
    ready = v2.upload(png(100, seed=b"ready"))
    sb.control(media_expires_after_secs=1)
    data = png(200)
    r = v2.initialize("image/png", len(data))
    assert r.json()["data"]["expires_after_secs"] == 1
    short = r.json()["data"]["id"]
    assert v2.append(short, 0, data[:100]).status_code == 200
    done = v2.upload(png(100, seed=b"done"))
    time.sleep(1.2)
    expired = "Media id [%s] has expired." % short
    assert invalid(v2.append(short, 1, data[100:])) == [expired]
    assert invalid(v2.finalize(short)) == [expired]
    assert invalid(v2.metadata({"id": short, "metadata": {"alt_text": {"text": "late"}}})) == [expired]
    assert invalid(v2.status(done)) == ["Media id [%s] has expired." % done]
    assert invalid(v2.post("expired media", [done])) == ["Your media IDs are invalid."]
    assert v2.post("older media, longer life", [ready]).status_code == 201
    assert media_of(sb, short)["expires_at"] <= time.time()


# -- control: /__media, reset, /__control -------------------------------------------------------------

def test_delete_media_and_reset_forget_media_and_settings(sb, v2):
    media_id = v2.upload(png(100))
    sb.control(media_processing={"polls": 5}, media_expires_after_secs=60)
    state = sb.state()
    assert state["media"] == 1 and state["media_expires_after_secs"] == 60
    assert state["media_processing"]["polls"] == 5
    sb.clear_media()
    assert sb.media() == []
    assert invalid(v2.post("forgotten", [media_id])) == ["Your media IDs are invalid."]
    v2.upload(png(100))
    sb.clear()
    assert sb.media() == []
    state = sb.state()
    assert state["media_expires_after_secs"] == 86400
    assert state["media_processing"] == {"check_after_secs": 1, "polls": 2, "outcome": "succeeded", "error": None}


def test_media_requests_are_not_logged_with_their_bytes(sb, v2):
    marker = b"SECRET-PIXELS-" * 100
    data = png(len(marker) + 100)[:100] + marker
    media_id = v2.new(data)
    assert v2.append(media_id, 0, data).status_code == 200
    v2.finalize(media_id)
    sb.media()
    log = sb.log()
    assert "SECRET-PIXELS" not in json.dumps(log)
    init, append, fin = log
    assert init["endpoint"] == INIT
    assert json.loads(init["body"]) == {"media_type": "image/png", "total_bytes": len(data),
                                        "media_category": "tweet_image"}
    assert append["endpoint"] == APPEND and append["path"] == "/2/media/upload/%s/append" % media_id
    assert append["body"] == {"segment_index": ["0"], "media": [
        {"filename": "blob", "content_type": "application/octet-stream", "bytes": len(data)}]}
    assert fin["endpoint"] == FINALIZE and fin["status"] == 200


# -- faults and rate limits ------------------------------------------------------------------------------

def steps(v2, data, media_type="video/mp4", category="tweet_video"):
    """A v2 upload of `data`, each step re-sent once if it answers 503 (as
    tw-post does). Returns [(endpoint key, response), ...] in order."""
    out = []

    def step(key, send):
        r = send()
        out.append((key, r))
        if r.status_code == 503:
            r = send()
            out.append((key, r))
        return r

    media_id = step(INIT, lambda: v2.initialize(media_type, len(data), category)).json()["data"]["id"]
    step(APPEND, lambda: v2.append(media_id, 0, data))
    step(FINALIZE, lambda: v2.finalize(media_id))
    step(STATUS, lambda: v2.status(media_id))
    step(METADATA, lambda: v2.metadata({"id": media_id, "metadata": {"alt_text": {"text": "alt"}}}))
    return out


@pytest.mark.parametrize("key", [INIT, APPEND, FINALIZE, STATUS, METADATA])
def test_a_status_fault_hits_exactly_its_step_and_the_resent_step_completes(sb, v2, key):
    fault_id = sb.fault("status", match={"endpoint": key}, status=503)
    data = mp4(1000)
    answers = [(step, r.status_code) for step, r in steps(v2, data)]
    expected = []
    for step in (INIT, APPEND, FINALIZE, STATUS, METADATA):
        expected += [(step, 503), (step, 200)] if step == key else [(step, 200)]
    assert answers == expected
    hit = [e for e in sb.log() if e["fault"]]
    assert [(e["endpoint"], e["fault"]["id"], e["status"]) for e in hit] == [(key, fault_id, 503)]
    [m] = sb.media()
    assert m["segments"] == [1000] and m["state"] == "in_progress" and m["alt_text"] == "alt"


def test_a_503_on_the_second_append_then_the_segment_resent(sb, v2):
    sb.fault("status", match={"endpoint": APPEND}, status=503, skip=1)
    data = mp4(2 * SEGMENT + 500)
    media_id = v2.new(data, "video/mp4", "tweet_video")
    assert v2.append(media_id, 0, data[:SEGMENT]).status_code == 200
    assert v2.append(media_id, 1, data[SEGMENT:2 * SEGMENT]).status_code == 503
    assert media_of(sb, media_id)["segments"] == [SEGMENT]
    assert v2.append(media_id, 1, data[SEGMENT:2 * SEGMENT]).status_code == 200
    assert v2.append(media_id, 2, data[2 * SEGMENT:]).status_code == 200
    assert v2.finalize(media_id).status_code == 200
    assert media_of(sb, media_id)["sha256"] == hashlib.sha256(data).hexdigest()


def test_a_reset_after_an_append_stores_it_and_the_retry_replaces_it(sb, v2):
    sb.fault("reset_after", match={"endpoint": APPEND})
    data = png(SEGMENT + 10)
    media_id = v2.new(data)
    with pytest.raises(requests.ConnectionError):
        v2.append(media_id, 0, data[:SEGMENT])
    assert media_of(sb, media_id)["segments"] == [SEGMENT]
    assert v2.append(media_id, 0, data[:SEGMENT]).status_code == 200
    assert v2.append(media_id, 1, data[SEGMENT:]).status_code == 200
    assert v2.finalize(media_id).status_code == 200
    m = media_of(sb, media_id)
    assert m["segments"] == [SEGMENT, 10] and m["sha256"] == hashlib.sha256(data).hexdigest()
    assert v2.post("one post", [media_id]).status_code == 201
    assert sb.posts()["total"] == 1


def test_media_endpoints_carry_their_rate_limits(sb, v2):
    data = mp4(100)
    limits = {step: (r.headers["x-rate-limit-limit"], r.headers["x-rate-limit-remaining"])
              for step, r in steps(v2, data)}
    assert limits == {INIT: ("1875", "1874"), APPEND: ("1875", "1874"), FINALIZE: ("1875", "1874"),
                      STATUS: ("1000", "999"), METADATA: ("1875", "1874")}
    sb.control(rate_limits={APPEND: {"limit": 1, "window": 60}})
    media_id = v2.new(png(100))
    assert v2.append(media_id, 0, png(50)).status_code == 200
    r = v2.append(media_id, 1, png(50))
    assert r.status_code == 429 and r.headers["x-rate-limit-remaining"] == "0"
    assert media_of(sb, media_id)["segments"] == [50]


# -- the multipart parser --------------------------------------------------------------------------------

def test_parser_hands_out_views_of_the_body_without_copying():
    payload = os.urandom(5 * MIB)
    body = (b"preamble\r\n--BB\r\nContent-Disposition: form-data; name=\"segment_index\"\r\n\r\n7\r\n"
            b"--BB\r\nContent-Disposition: form-data; name=\"media\"; filename=\"a;b.bin\"\r\n"
            b"Content-Type: application/octet-stream\r\n\r\n" + payload + b"\r\n--BB--\r\nepilogue")
    started = time.perf_counter()
    index, media = sandbox_media.parse_multipart(body, 'multipart/form-data; boundary="BB"')
    assert time.perf_counter() - started < 0.5
    assert (index.name, bytes(index.data), index.filename) == ("segment_index", b"7", None)
    assert (media.name, media.filename, media.content_type) == ("media", "a;b.bin", "application/octet-stream")
    assert isinstance(media.data, memoryview) and media.data.obj is body
    assert media.data == payload


@pytest.mark.parametrize("body, error", [
    (b"--BB\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nno end", "a part is not closed by the boundary"),
    (b"no boundary here", "the body does not contain the boundary"),
    (b"--BB\r\nContent-Type: text/plain\r\n\r\nx\r\n--BB--", "a part has no Content-Disposition: form-data"),
    (b"--BB\r\nContent-Disposition: form-data\r\n\r\nx\r\n--BB--", "a part's Content-Disposition has no name"),
    (b"--BBjunk", "a boundary line is not followed by CRLF"),
])
def test_parser_refuses_broken_bodies(body, error):
    with pytest.raises(sandbox_media.MultipartError, match=error):
        sandbox_media.parse_multipart(body, "multipart/form-data; boundary=BB")


# -- v1.1 through tweepy's API.media_upload ------------------------------------------------------------

def v11(demo, token=None):
    t, s = token or (demo["access_token"], demo["access_token_secret"])
    return tweepy.API(tweepy.OAuth1UserHandler(demo["consumer_key"], demo["consumer_secret"], t, s))


def user_client(demo):
    return tweepy.Client(consumer_key=demo["consumer_key"], consumer_secret=demo["consumer_secret"],
                         access_token=demo["access_token"], access_token_secret=demo["access_token_secret"])


def test_tweepy_simple_upload_then_create_tweet(real_hosts, demo):
    data = png(300_000, w=1200, h=675)
    media = v11(demo).media_upload("shot.png", file=io.BytesIO(data))
    assert media.media_id_string == str(media.media_id) and len(media.media_id_string) == 19
    assert media.size == len(data) and media.expires_after_secs == 86400
    assert media.image == {"image_type": "image/png", "w": 1200, "h": 675}
    assert not hasattr(media, "processing_info")
    resp = user_client(demo).create_tweet(text="tweepy media", media_ids=[media.media_id])
    [post] = real_hosts.posts()["posts"]
    assert post["id"] == resp.data["id"] and post["media_ids"] == [media.media_id_string]
    [m] = real_hosts.media()
    assert m["api"] == "1.1" and m["sha256"] == hashlib.sha256(data).hexdigest() and m["segments"] == [len(data)]
    entry = real_hosts.log(path="/1.1/media/upload.json")[0]
    assert entry["headers"]["host"] == "upload.twitter.com" and entry["auth"]["outcome"] == "ok"
    assert entry["endpoint"] == V1_POST
    assert entry["body"]["media"][0]["bytes"] == len(data)


def test_tweepy_chunked_video_upload_polls_until_succeeded(real_hosts, demo, tmp_path):
    real_hosts.control(media_processing={"check_after_secs": 0, "polls": 2})
    data = mp4(2 * MIB + 300)
    path = tmp_path / "clip.mp4"
    path.write_bytes(data)
    media = v11(demo).media_upload(str(path), media_category="tweet_video")
    assert media.processing_info == {"state": "succeeded", "progress_percent": 100}
    assert media.video == {"video_type": "video/mp4"}
    [m] = real_hosts.media()
    assert m["segments"] == [MIB, MIB, 300] and m["sha256"] == hashlib.sha256(data).hexdigest()
    assert m["media_category"] == "tweet_video" and m["status_polls"] == 3
    commands = [(e["method"], e["status"], (e["body"] or {}).get("command") if e["method"] == "POST"
                 else e["query"]["command"]) for e in real_hosts.log()]
    assert commands == [("POST", 200, ["INIT"]), ("POST", 204, ["APPEND"]), ("POST", 204, ["APPEND"]),
                        ("POST", 204, ["APPEND"]), ("POST", 200, ["FINALIZE"]), ("GET", 200, ["STATUS"]),
                        ("GET", 200, ["STATUS"]), ("GET", 200, ["STATUS"])]
    user_client(demo).create_tweet(text="tweepy video", media_ids=[media.media_id])
    assert real_hosts.posts()["posts"][0]["media_ids"] == [m["id"]]


def test_tweepy_chunked_upload_sees_processing_fail(real_hosts, demo):
    real_hosts.control(media_processing={"check_after_secs": 0, "polls": 0, "outcome": "failed"})
    media = v11(demo).media_upload("anim.gif", file=io.BytesIO(gif(5000)), chunked=True,
                                   media_category="tweet_gif")
    assert media.processing_info["state"] == "failed"
    assert media.processing_info["error"]["name"] == "InvalidMedia"
    with pytest.raises(tweepy.BadRequest):
        user_client(demo).create_tweet(text="failed gif", media_ids=[media.media_id])


def test_tweepy_chunked_image_without_processing(real_hosts, demo):
    media = v11(demo).media_upload("pic.jpg", file=io.BytesIO(jpeg(1500)), chunked=True)
    assert media.image == {"image_type": "image/jpeg"} and not hasattr(media, "processing_info")
    assert real_hosts.media()[0]["media_category"] == "tweet_image"


def test_tweepy_v11_errors_and_ownership(real_hosts, demo):
    api = v11(demo)
    with pytest.raises(tweepy.BadRequest, match="File size exceeds 5242880 bytes."):
        api.media_upload("big.png", file=io.BytesIO(png(5 * MIB + 1)))
    with pytest.raises(tweepy.BadRequest, match="media type unrecognized."):
        api.simple_upload("notes.png", file=io.BytesIO(b"just some text, no picture"))
    with pytest.raises(tweepy.BadRequest, match="segments hold 900 bytes, but total_bytes was 1000"):
        media_id = api.chunked_upload_init(1000, "image/png").media_id
        api.chunked_upload_append(media_id, ("x.png", png(900)), 0)
        api.chunked_upload_finalize(media_id)
    mine = api.chunked_upload_init(100, "image/png").media_id
    with pytest.raises(tweepy.BadRequest, match="does not exist or does not belong to you"):
        v11(demo, JACK).chunked_upload_append(mine, ("x.png", png(100)), 0)
    with pytest.raises(tweepy.BadRequest, match="leaves a gap"):
        api.chunked_upload_append(mine, ("x.png", png(100)), 3)
    with pytest.raises(tweepy.BadRequest, match="not finalized"):
        api.get_media_upload_status(mine)


@pytest.mark.parametrize("key", [V1_POST, V1_GET])
def test_v11_faults_by_endpoint_key(real_hosts, demo, key):
    real_hosts.control(media_processing={"check_after_secs": 0, "polls": 0})
    # the second POST (the first APPEND), or the first STATUS poll
    fault_id = real_hosts.fault("status", match={"endpoint": key}, status=503, skip=1 if key == V1_POST else 0)
    api = v11(demo)
    with pytest.raises(tweepy.TwitterServerError):
        api.media_upload("clip.mp4", file=io.BytesIO(mp4(3000)))
    hit = [e for e in real_hosts.log() if e["fault"]]
    assert [(e["endpoint"], e["fault"]["id"]) for e in hit] == [(key, fault_id)]
    assert hit[0]["seq"] == (2 if key == V1_POST else 4)
    assert real_hosts.log()[-1]["status"] == 503


def test_v11_raw_append_answers_204_without_a_body(sb, demo):
    auth = oauth1(demo)
    url = sb.url + "/1.1/media/upload.json"
    init = requests.post(url, data={"command": "INIT", "total_bytes": "100", "media_type": "image/png"}, auth=auth)
    assert init.status_code == 200 and set(init.json()) == {"media_id", "media_id_string", "media_key",
                                                            "expires_after_secs"}
    media_id = init.json()["media_id_string"]
    r = requests.post(url, data={"command": "APPEND", "media_id": media_id, "segment_index": "0"},
                      files={"media": ("blob", png(100))}, auth=auth)
    assert r.status_code == 204 and r.content == b"" and "Content-Length" not in r.headers
    r = requests.post(url, data={"command": "NOPE", "media_id": media_id}, auth=auth)
    assert r.status_code == 400 and r.json() == {
        "request": "/1.1/media/upload.json", "error": "command must be INIT, APPEND or FINALIZE (STATUS with GET)."}
    fin = requests.post(url, data={"command": "FINALIZE", "media_id": media_id}, auth=auth)
    assert fin.status_code == 200 and fin.json()["size"] == 100
    r = requests.get(url, params={"command": "STATUS", "media_id": media_id}, auth=auth)
    assert r.json()["processing_info"] == {"state": "succeeded", "progress_percent": 100}
