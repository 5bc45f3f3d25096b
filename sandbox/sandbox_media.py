"""Media upload as the sandbox serves it: X v2 one-shot and chunked upload
(initialize, append, finalize, STATUS, metadata) and the v1.1
upload.twitter.com endpoint that tweepy's API.media_upload uses, over one
media store (World.media).

Segments are kept in memory (as views of the request bodies that carried
them) until finalize, which hashes them in order and lets them go: a
finalized media keeps its segment sizes, its SHA-256 and its first bytes.
"""
import base64
import binascii
import hashlib
import json
import re
import struct

import sandbox_world as W
import sandbox_x_errors as XE
from sandbox_http import Response, json_response

MEDIA_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp", "video/mp4", "video/quicktime")
# media_category -> largest total_bytes (README section 3, "Media upload")
CATEGORY_LIMITS = {"tweet_image": 5242880, "tweet_gif": 15728640,
                   "tweet_video": 536870912, "amplify_video": 536870912}
CATEGORIES = tuple(CATEGORY_LIMITS)
# media_type -> the categories it may be uploaded as (the first is the default)
FITTING = {"image/jpeg": ("tweet_image",), "image/png": ("tweet_image",), "image/webp": ("tweet_image",),
           "image/gif": ("tweet_gif", "tweet_image"),
           "video/mp4": ("tweet_video", "amplify_video"), "video/quicktime": ("tweet_video", "amplify_video")}
PROCESSED = frozenset(("tweet_gif", "tweet_video", "amplify_video"))
KEY_PREFIX = {"tweet_image": "3_", "tweet_gif": "16_", "tweet_video": "7_", "amplify_video": "7_"}
MAX_SEGMENT = 5 * 1024 * 1024
MAX_SEGMENT_INDEX = 999
MAX_ALT_TEXT = 1000
MAX_ADDITIONAL_OWNERS = 100
HEAD_BYTES = 32

DEFAULT_ERROR = {"code": 1, "name": "InvalidMedia", "message": "Unsupported video format"}
DEFAULT_PROCESSING = W.MEDIA_PROCESSING_DEFAULTS

# The one-shot POST /2/media/upload (https://docs.x.com/x-api/media/image-or-subtitle-media-upload;
# SPEC MediaUploadRequestOneShot): its categories and media types. Of them the
# store holds tweet_image in JPEG, PNG and WEBP; the others are refused (README).
ONE_SHOT_KEYS = ("media", "media_category", "media_type", "additional_owners", "shared")
ONE_SHOT_CATEGORIES = ("tweet_image", "dm_image", "subtitles")
ONE_SHOT_TYPES = ("text/srt", "text/vtt", "image/jpeg", "image/bmp", "image/png", "image/webp", "image/pjpeg",
                  "image/tiff")
ONE_SHOT_STORED_TYPES = ("image/jpeg", "image/png", "image/webp")

INIT_KEYS = ("media_type", "total_bytes", "media_category", "additional_owners", "shared")
METADATA_KEYS = ("alt_text", "allow_download_status", "audience_policy", "content_expiration",
                 "domain_restrictions", "found_media_origin", "geo_restrictions", "management_info",
                 "preview_image", "sensitive_media_warning", "shared_info", "sticker_info", "upload_source")


def sniff(head):
    """The media type the first bytes of a file show (tw-post's rule), else None."""
    if head[:3] == b"\xff\xd8\xff":
        return "image/jpeg"
    if head[:8] == b"\x89PNG\r\n\x1a\n":
        return "image/png"
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    if head[4:8] == b"ftyp":
        return "video/quicktime" if head[8:12] == b"qt  " else "video/mp4"
    return None


def image_size(head):
    """(width, height) of a PNG or GIF from its first bytes, else None."""
    if head[:8] == b"\x89PNG\r\n\x1a\n" and len(head) >= 24:
        return struct.unpack(">II", head[16:24])
    if head[:6] in (b"GIF87a", b"GIF89a") and len(head) >= 10:
        return struct.unpack("<HH", head[6:10])
    return None


# ---------------------------------------------------------------------------
# multipart/form-data

class Part:
    __slots__ = ("name", "filename", "content_type", "data")

    def __init__(self, name, filename, content_type, data):
        self.name = name
        self.filename = filename
        self.content_type = content_type
        self.data = data        # a memoryview into the request body


_PARAM = re.compile(r';\s*([A-Za-z0-9_.*-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^;]*)')


def header_params(value):
    """The parameters of a header value such as `form-data; name="media"; filename="blob"`."""
    out = {}
    for m in _PARAM.finditer(value):
        v = m.group(2).strip()
        if len(v) >= 2 and v[0] == '"' and v[-1] == '"':
            v = re.sub(r"\\(.)", r"\1", v[1:-1])
        out[m.group(1).lower()] = v
    return out


class MultipartError(ValueError):
    pass


def parse_multipart(body, content_type_header):
    """The parts of a multipart/form-data body (RFC 7578), in order. Each
    part's data is a memoryview into `body`: nothing is copied, and finding the
    delimiters is one pass of bytes.find over the body."""
    boundary = header_params(content_type_header or "").get("boundary")
    if not boundary:
        raise MultipartError("the multipart Content-Type has no boundary")
    delim = b"--" + boundary.encode("latin-1")
    view = memoryview(body)
    pos = body.find(delim)
    if pos < 0:
        raise MultipartError("the body does not contain the boundary")
    parts = []
    pos += len(delim)
    while True:
        if body.startswith(b"--", pos):
            return parts
        if not body.startswith(b"\r\n", pos):
            raise MultipartError("a boundary line is not followed by CRLF")
        head_end = body.find(b"\r\n\r\n", pos + 2)
        if head_end < 0:
            raise MultipartError("a part's headers do not end")
        headers = {}
        if head_end > pos + 2:
            for line in body[pos + 2:head_end].decode("utf-8", "replace").split("\r\n"):
                name, sep, value = line.partition(":")
                if not sep:
                    raise MultipartError("a part header line has no colon: %r" % line[:80])
                headers[name.strip().lower()] = value.strip()
        start = head_end + 4
        end = body.find(b"\r\n" + delim, start)
        if end < 0:
            raise MultipartError("a part is not closed by the boundary")
        disposition = headers.get("content-disposition", "")
        if not disposition.lower().startswith("form-data"):
            raise MultipartError("a part has no Content-Disposition: form-data")
        params = header_params(disposition)
        if "name" not in params:
            raise MultipartError("a part's Content-Disposition has no name")
        parts.append(Part(params["name"], params.get("filename"), headers.get("content-type"), view[start:end]))
        pos = end + 2 + len(delim)


def multipart(req):
    """The request's multipart parts (parsed once per request), or raises MultipartError."""
    cached = getattr(req, "_multipart", None)
    if cached is None:
        try:
            cached = parse_multipart(req.body, req.header("content-type"))
        except MultipartError as e:
            cached = e
        req._multipart = cached
    if isinstance(cached, MultipartError):
        raise cached
    return cached


def is_file(part):
    return part.filename is not None or (part.content_type or "").lower() == "application/octet-stream"


def log_summary(req):
    """What the request log keeps of a multipart body: the text fields, and
    for each file part its filename, type and size, never its bytes."""
    try:
        parts = multipart(req)
    except MultipartError:
        return "<%d bytes of multipart/form-data that does not parse>" % len(req.body)
    out = {}
    for p in parts:
        if is_file(p):
            value = {"filename": p.filename, "content_type": p.content_type, "bytes": len(p.data)}
        else:
            value = bytes(p.data[:4096]).decode("utf-8", "replace")
        out.setdefault(p.name, []).append(value)
    return out


# ---------------------------------------------------------------------------
# The store

class Media:
    __slots__ = ("id", "media_key", "user_id", "owners", "media_type", "category", "total_bytes",
                 "segments", "sizes", "finalized", "state", "sha256", "head", "alt_text", "created",
                 "expires_at", "processing", "polls_done", "progress", "version", "api")

    def __init__(self, media_id, user_id, owners, media_type, category, total_bytes, now, expires_after, api):
        self.id = media_id
        self.media_key = KEY_PREFIX[category] + media_id
        self.user_id = user_id
        self.owners = owners
        self.media_type = media_type
        self.category = category
        self.total_bytes = total_bytes
        self.segments = []          # buffers of segments 0..n-1 until finalize
        self.sizes = []
        self.finalized = False
        self.state = None
        self.sha256 = None
        self.head = b""
        self.alt_text = None
        self.created = now
        self.expires_at = now + expires_after
        self.processing = None
        self.polls_done = 0
        self.progress = 0
        self.version = 0
        self.api = api

    def describe(self):
        return {"id": self.id, "media_key": self.media_key, "user_id": self.user_id,
                "additional_owners": sorted(self.owners - {self.user_id}), "api": self.api,
                "media_type": self.media_type, "media_category": self.category, "total_bytes": self.total_bytes,
                "received_bytes": sum(self.sizes), "segments": list(self.sizes), "finalized": self.finalized,
                "state": self.state, "sha256": self.sha256, "alt_text": self.alt_text,
                "status_polls": self.polls_done, "created_at": self.created,
                "expires_at": int(self.expires_at)}

    def expires_after(self, now):
        return max(0, int(self.expires_at - now))

    def processing_info(self):
        if self.category not in PROCESSED or self.state is None:
            return None
        if self.state == "pending":
            return {"state": "pending", "check_after_secs": self.processing["check_after_secs"]}
        if self.state == "in_progress":
            return {"state": "in_progress", "check_after_secs": self.processing["check_after_secs"],
                    "progress_percent": self.progress}
        if self.state == "succeeded":
            return {"state": "succeeded", "progress_percent": 100}
        return {"state": "failed", "progress_percent": self.progress,
                "error": dict(self.processing["error"] or DEFAULT_ERROR)}

    def poll(self):
        """A STATUS request moves processing on by one step."""
        if self.state not in ("pending", "in_progress"):
            return
        self.polls_done += 1
        polls = self.processing["polls"]
        if self.polls_done <= polls:
            self.state = "in_progress"
            self.progress = self.polls_done * 100 // (polls + 1)
        else:
            self.state = self.processing["outcome"]
            if self.state == "succeeded":
                self.progress = 100


def new_media(world, user_id, owners, media_type, category, total_bytes, now, api):
    """A media record, stored (caller holds the lock)."""
    sweep(world, now)
    media_id = world.snowflake(now)
    m = Media(media_id, user_id, owners, media_type, category, total_bytes, now,
              world.media_expires_after_secs, api)
    world.media[media_id] = m
    return m


def new_whole_media(world, user_id, owners, media_type, category, data, digest, now, api):
    """A media uploaded whole in one request, stored finalized and processed
    (caller holds the lock; `digest`, data's SHA-256, is computed outside it)."""
    m = new_media(world, user_id, owners, media_type, category, len(data), now, api)
    m.sizes = [len(data)]
    m.finalized = True
    m.sha256 = digest
    m.head = bytes(data[:HEAD_BYTES])
    m.state = "succeeded"
    return m


def sweep(world, now):
    """Expired media let go of their segments (their records stay for /__media)."""
    if now - world.media_swept < 10:
        return
    world.media_swept = now
    for m in world.media.values():
        if m.segments and now >= m.expires_at:
            m.segments = []


def lookup(world, media_id, user_id, now):
    """(media, None) when the caller's user may use it, else (None, why)."""
    m = world.media.get(media_id)
    if m is None or m.user_id != user_id:
        return None, "Media id [%s] does not exist or does not belong to you." % media_id
    if now >= m.expires_at:
        return None, "Media id [%s] has expired." % media_id
    return m, None


def usable_in_post(world, media_id, user_id, now):
    """Whether a post by this user may carry the media id (caller holds the
    lock): a media of the store must be finalized, processed successfully,
    unexpired and owned by the user; any other id must be a configured one
    (any numeric id when none are configured)."""
    m = world.media.get(media_id)
    if m is not None:
        return m.finalized and m.state == "succeeded" and now < m.expires_at and user_id in m.owners
    ids = world.config.x_media_ids
    return not ids or media_id in ids


def init_errors(media_type, total_bytes, category):
    """(parameter, message) pairs for the values of an initialize / INIT
    (media_type and category strings or None, total_bytes an int or None)."""
    errs = []
    if media_type is None:
        errs.append(("media_type", "$.media_type: is missing but it is required"))
    elif media_type not in MEDIA_TYPES:
        errs.append(("media_type", "$.media_type: does not have a value in the enumeration [%s]"
                     % ", ".join(MEDIA_TYPES)))
    if category is not None and category not in CATEGORY_LIMITS:
        errs.append(("media_category", "$.media_category: does not have a value in the enumeration [%s]"
                     % ", ".join(CATEGORIES)))
    elif category is not None and media_type in FITTING and category not in FITTING[media_type]:
        errs.append(("media_category", "$.media_category: %s does not fit media_type %s (use %s)"
                     % (category, media_type, " or ".join(FITTING[media_type]))))
    if total_bytes is None:
        errs.append(("total_bytes", "$.total_bytes: is missing but it is required"))
    elif total_bytes < 1:
        errs.append(("total_bytes", "$.total_bytes: must be at least 1"))
    elif not errs:
        cat = category or FITTING[media_type][0]
        if total_bytes > CATEGORY_LIMITS[cat]:
            errs.append(("total_bytes", "$.total_bytes: %d is over the limit of %d bytes for media_category %s"
                         % (total_bytes, CATEGORY_LIMITS[cat], cat)))
    return errs


def finalize_problem(m):
    """Why a media cannot be finalized (caller holds the lock), else None."""
    if not m.sizes:
        return "Media id [%s]: no segments were appended." % m.id
    received = sum(m.sizes)
    if received != m.total_bytes:
        return ("Media id [%s]: the %d segments hold %d bytes, but total_bytes was %d."
                % (m.id, len(m.sizes), received, m.total_bytes))
    head = b""
    for seg in m.segments:
        head += bytes(seg[:HEAD_BYTES - len(head)])
        if len(head) >= HEAD_BYTES:
            break
    found = sniff(head)
    if found != m.media_type:
        return ("Media id [%s]: the content is %s, not the media_type %s given at initialize."
                % (m.id, found or "of no supported type", m.media_type))
    return None


def finalize(world, m, now):
    """Hashes and finalizes a media that finalize_problem passed; returns
    None, or why not. The hashing runs outside the lock."""
    for _ in range(5):
        with world.lock:
            if m.finalized:
                return None
            why = finalize_problem(m)
            if why:
                return why
            segments, version = list(m.segments), m.version
        digest = hashlib.sha256()
        for seg in segments:
            digest.update(seg)
        head = b""
        for seg in segments:
            head += bytes(seg[:HEAD_BYTES - len(head)])
            if len(head) >= HEAD_BYTES:
                break
        with world.lock:
            if m.finalized:
                return None
            if m.version != version:
                continue        # a segment was re-sent meanwhile: hash again
            m.finalized = True
            m.sha256 = digest.hexdigest()
            m.head = head
            m.segments = []
            if m.category in PROCESSED:
                m.processing = dict(world.media_processing)
                m.state = "pending"
            else:
                m.state = "succeeded"
            return None
    return "Media id [%s] keeps changing while it is finalized." % m.id


def polled(world, media_id, user_id, now):
    """A STATUS request (caller holds the lock): (media, None) after moving
    its processing on by one poll, or (None, why not)."""
    m, why = lookup(world, media_id, user_id, now)
    if m is not None and not m.finalized:
        return None, "Media id [%s] is not finalized: there is no status to report yet." % media_id
    if m is not None and m.category in PROCESSED:
        m.poll()
    return m, why


def store_segment(m, index, data):
    """Adds or replaces segment `index` (caller holds the lock); returns why
    not, or None."""
    n = len(m.sizes)
    if index > n:
        return ("segment_index %d leaves a gap: media id [%s] has segments 0..%d, so the next is %d."
                % (index, m.id, n - 1, n) if n else
                "segment_index %d leaves a gap: media id [%s] has no segments yet, so the first is 0."
                % (index, m.id))
    if index == n:
        m.segments.append(data)
        m.sizes.append(len(data))
    else:
        m.segments[index] = data
        m.sizes[index] = len(data)
    m.version += 1
    return None


# ---------------------------------------------------------------------------
# X v2

def v2_error(world, meta, message, parameter=None, value=None):
    if parameter is None:
        return XE.invalid_request(world, [{"message": message}], meta=meta)
    return XE.invalid_request(world, [XE.param_error(parameter, [value], message)], meta=meta)


def json_body(world, req, meta):
    """(body, None) or (None, error response) for a JSON request body."""
    if req.content_type != "application/json":
        return None, v2_error(world, meta, "Requests with bodies must have content-type of application/json.")
    try:
        return json.loads(req.body.decode("utf-8")), None
    except (UnicodeDecodeError, ValueError):
        return None, v2_error(world, meta, "Request body is not valid JSON.")


def json_object(world, req, meta, keys):
    """(body, messages about keys other than `keys`, None) for a JSON object
    body, else (None, None, error response)."""
    body, err = json_body(world, req, meta)
    if err:
        return None, None, err
    if not isinstance(body, dict):
        return None, None, v2_error(world, meta, "$: %s found, object expected" % XE.type_name(body))
    return body, ["$.%s: is not defined in the schema and the schema does not allow additional properties" % k
                  for k in body if k not in keys], None


def owners_of(user_id, extra):
    return frozenset([user_id] + list(extra or ()))


def v2_initialize(world, req, auth, arg, now, meta):
    body, msgs, err = json_object(world, req, meta, INIT_KEYS)
    if err:
        return err
    media_type, total_bytes, category = body.get("media_type"), body.get("total_bytes"), body.get("media_category")
    for key, value, kind in (("media_type", media_type, str), ("media_category", category, str)):
        if value is not None and not isinstance(value, kind):
            msgs.append("$.%s: %s found, string expected" % (key, XE.type_name(value)))
    if total_bytes is not None and (not isinstance(total_bytes, int) or isinstance(total_bytes, bool)):
        msgs.append("$.total_bytes: %s found, integer expected" % XE.type_name(total_bytes))
    owners = body.get("additional_owners")
    if owners is not None:
        if not isinstance(owners, list) or len(owners) > MAX_ADDITIONAL_OWNERS or not all(
                isinstance(o, str) and XE.NUMERIC_ID.fullmatch(o) for o in owners):
            msgs.append("$.additional_owners: must be an array of at most %d user ids matching ^[0-9]{1,19}$"
                        % MAX_ADDITIONAL_OWNERS)
    if "shared" in body and not isinstance(body["shared"], bool):
        msgs.append("$.shared: %s found, boolean expected" % XE.type_name(body["shared"]))
    if not msgs:
        msgs = [m for _, m in init_errors(media_type, total_bytes, category)]
    if msgs:
        return XE.invalid_request(world, [{"message": m} for m in msgs], meta=meta)
    with world.lock:
        m = new_media(world, auth.user["id"], owners_of(auth.user["id"], owners), media_type,
                      category or FITTING[media_type][0], total_bytes, now, "2")
        answer = {"id": m.id, "media_key": m.media_key, "expires_after_secs": m.expires_after(now)}
    meta["media_id"] = m.id
    return json_response(200, {"data": answer}, meta=meta)


def one_shot_fields(world, req, meta):
    """(fields, media bytes or view, None) of a one-shot upload body, multipart
    (`media` raw) or JSON (`media` base64), else (None, None, error response)."""
    if req.content_type == "multipart/form-data":
        try:
            parts = multipart(req)
        except MultipartError as e:
            return None, None, v2_error(world, meta, "The multipart body does not parse: %s." % e)
        fields, media, msgs = {}, None, []
        for p in parts:
            if p.name not in ONE_SHOT_KEYS:
                msgs.append("$.%s: is not defined in the schema and the schema does not allow additional properties"
                            % p.name)
            elif p.name == "media":
                media = media if media is not None else p.data
            elif p.name == "additional_owners":
                fields.setdefault(p.name, []).extend(
                    o.strip() for o in bytes(p.data[:4096]).decode("utf-8", "replace").split(","))
            else:
                fields.setdefault(p.name, bytes(p.data[:4096]).decode("utf-8", "replace").strip())
        if "shared" in fields:
            if fields["shared"] not in ("true", "false"):
                msgs.append("$.shared: [%s] is not a boolean" % fields["shared"])
            fields["shared"] = fields["shared"] == "true"
        if msgs:
            return None, None, XE.invalid_request(world, [{"message": m} for m in msgs], meta=meta)
        return fields, media, None
    if req.content_type == "application/json":
        body, msgs, err = json_object(world, req, meta, ONE_SHOT_KEYS)
        if err:
            return None, None, err
        media = body.pop("media", None)
        if media is not None:
            try:
                media = base64.b64decode(media, validate=True) if isinstance(media, str) else None
            except (binascii.Error, ValueError):
                media = None
            if media is None:
                msgs.append("$.media: is not a base64-encoded string")
        for key in ("media_category", "media_type"):
            if key in body and not isinstance(body[key], str):
                msgs.append("$.%s: %s found, string expected" % (key, XE.type_name(body[key])))
        owners = body.get("additional_owners")
        if owners is not None and not (isinstance(owners, list) and all(isinstance(o, str) for o in owners)):
            msgs.append("$.additional_owners: must be an array of user ids")
        if "shared" in body and not isinstance(body["shared"], bool):
            msgs.append("$.shared: %s found, boolean expected" % XE.type_name(body["shared"]))
        if msgs:
            return None, None, XE.invalid_request(world, [{"message": m} for m in msgs], meta=meta)
        return body, media, None
    return None, None, v2_error(world, meta, "An upload must be sent as multipart/form-data (the file raw in the "
                                             "part media) or as application/json (media base64-encoded).")


def v2_upload(world, req, auth, arg, now, meta):
    """The one-shot POST /2/media/upload: a whole image in one request,
    checked as initialize, append and finalize together check a chunked one."""
    fields, media, err = one_shot_fields(world, req, meta)
    if err:
        return err
    category, media_type = fields.get("media_category"), fields.get("media_type")
    msgs = []
    if media is None:
        msgs.append("$.media: is missing but it is required")
    elif len(media) == 0:
        msgs.append("$.media: the file is empty")
    if category is None:
        msgs.append("$.media_category: is missing but it is required")
    elif category not in ONE_SHOT_CATEGORIES:
        msgs.append("$.media_category: does not have a value in the enumeration [%s]" % ", ".join(ONE_SHOT_CATEGORIES))
    elif category != "tweet_image":
        msgs.append("$.media_category: %s is not served by the sandbox (it keeps only tweet_image from the "
                    "one-shot upload)" % category)
    if media_type is not None and media_type not in ONE_SHOT_TYPES:
        msgs.append("$.media_type: does not have a value in the enumeration [%s]" % ", ".join(ONE_SHOT_TYPES))
    owners = fields.get("additional_owners") or []
    if len(owners) > MAX_ADDITIONAL_OWNERS or not all(XE.NUMERIC_ID.fullmatch(o) for o in owners):
        msgs.append("$.additional_owners: must be an array of at most %d user ids matching ^[0-9]{1,19}$"
                    % MAX_ADDITIONAL_OWNERS)
    if not msgs:
        found = sniff(bytes(media[:HEAD_BYTES]))
        if media_type is not None and found != media_type:
            msgs.append("$.media: the content is %s, not the media_type %s given"
                        % (found or "of no supported type", media_type))
        elif found not in ONE_SHOT_STORED_TYPES:
            msgs.append("$.media: the content is %s, which the one-shot upload does not take as tweet_image "
                        "(send it with initialize, append and finalize)" % (found or "of no supported type"))
        elif len(media) > CATEGORY_LIMITS[category]:
            msgs.append("$.media: %d bytes is over the limit of %d bytes for media_category %s"
                        % (len(media), CATEGORY_LIMITS[category], category))
        media_type = found
    if msgs:
        return XE.invalid_request(world, [{"message": m} for m in msgs], meta=meta)
    digest = hashlib.sha256(media).hexdigest()
    with world.lock:
        m = new_whole_media(world, auth.user["id"], owners_of(auth.user["id"], owners), media_type, category,
                            media, digest, now, "2")
        answer = v2_media_answer(m, now)
    meta["media_id"] = m.id
    return json_response(200, {"data": answer}, meta=meta)


def path_id(world, meta, media_id):
    if XE.NUMERIC_ID.fullmatch(media_id or ""):
        return None
    return v2_error(world, meta, "The `id` path parameter value [%s] does not match ^[0-9]{1,19}$" % media_id,
                    "id", media_id)


def segment_fields(parts):
    """(segment_index text, media part, error message) of an append body."""
    index = media = None
    for p in parts:
        if p.name == "segment_index" and index is None:
            index = bytes(p.data[:32]).decode("utf-8", "replace").strip()
        elif p.name == "media" and media is None:
            media = p
    if index is None:
        return None, None, "segment_index: is missing but it is required"
    if not index.isdigit() or len(index) > 4 or int(index) > MAX_SEGMENT_INDEX:
        return None, None, "segment_index: [%s] is not an integer from 0 to %d" % (index, MAX_SEGMENT_INDEX)
    if media is None:
        return None, None, "media: is missing but it is required"
    if len(media.data) == 0:
        return None, None, "media: the segment is empty"
    if len(media.data) > MAX_SEGMENT:
        return None, None, "media: the segment is %d bytes, more than the %d allowed" % (len(media.data),
                                                                                         MAX_SEGMENT)
    return int(index), media, None


def v2_append(world, req, auth, media_id, now, meta):
    err = path_id(world, meta, media_id)
    if err:
        return err
    if req.content_type != "multipart/form-data":
        return v2_error(world, meta, "An append must be sent as multipart/form-data with the parts "
                                     "segment_index and media.")
    try:
        parts = multipart(req)
    except MultipartError as e:
        return v2_error(world, meta, "The multipart body does not parse: %s." % e)
    index, media, why = segment_fields(parts)
    if why:
        return v2_error(world, meta, why)
    meta["media_id"] = media_id
    with world.lock:
        m, why = lookup(world, media_id, auth.user["id"], now)
        if m is not None and m.finalized:
            why = "Media id [%s] is already finalized; it takes no more segments." % media_id
        if m is not None and not why:
            why = store_segment(m, index, media.data)
        if why:
            return v2_error(world, meta, why, "id", media_id)
        expires = int(m.expires_at)
    return json_response(200, {"data": {"expires_at": expires}}, meta=meta)


def v2_media_answer(m, now, with_size=True):
    data = {"id": m.id, "media_key": m.media_key}
    if with_size:
        data["size"] = m.total_bytes
    data["expires_after_secs"] = m.expires_after(now)
    info = m.processing_info()
    if info is not None:
        data["processing_info"] = info
    return data


def v2_finalize(world, req, auth, media_id, now, meta):
    err = path_id(world, meta, media_id)
    if err:
        return err
    meta["media_id"] = media_id
    with world.lock:
        m, why = lookup(world, media_id, auth.user["id"], now)
    if m is not None:
        why = finalize(world, m, now)
    if why:
        return v2_error(world, meta, why, "id", media_id)
    with world.lock:
        return json_response(200, {"data": v2_media_answer(m, now)}, meta=meta)


def v2_status(world, req, auth, arg, now, meta):
    err = XE.check_params(world, req, ("command", "media_id"), meta)
    if err:
        return err
    q = dict(req.query)
    command, media_id = q.get("command"), q.get("media_id")
    if not command:
        return v2_error(world, meta, "The `command` query parameter can not be empty", "command", "")
    if command != "STATUS":
        return v2_error(world, meta, "The `command` query parameter value [%s] is not one of [STATUS]" % command,
                        "command", command)
    if not media_id or not XE.NUMERIC_ID.fullmatch(media_id):
        return v2_error(world, meta, "The `media_id` query parameter value [%s] does not match ^[0-9]{1,19}$"
                        % (media_id or ""), "media_id", media_id or "")
    meta["media_id"] = media_id
    with world.lock:
        m, why = polled(world, media_id, auth.user["id"], now)
        if why:
            return v2_error(world, meta, why, "media_id", media_id)
        data = v2_media_answer(m, now)
        if "processing_info" not in data:
            data["processing_info"] = {"state": "succeeded", "progress_percent": 100}
    return json_response(200, {"data": data}, meta=meta)


def v2_metadata(world, req, auth, arg, now, meta):
    body, msgs, err = json_object(world, req, meta, ("id", "metadata"))
    if err:
        return err
    media_id = body.get("id")
    if media_id is None:
        msgs.append("$.id: is missing but it is required")
    elif not isinstance(media_id, str) or not XE.NUMERIC_ID.fullmatch(media_id):
        msgs.append("$.id: does not match the regex pattern ^[0-9]{1,19}$")
    md = body.get("metadata")
    alt = None
    if md is None:
        msgs.append("$.metadata: is missing but it is required")
    elif not isinstance(md, dict):
        msgs.append("$.metadata: %s found, object expected" % XE.type_name(md))
    else:
        msgs += ["$.metadata.%s: is not defined in the schema and the schema does not allow additional "
                 "properties" % k for k in md if k not in METADATA_KEYS]
        if "alt_text" in md:
            a = md["alt_text"]
            if not isinstance(a, dict) or not isinstance(a.get("text"), str):
                msgs.append("$.metadata.alt_text.text: is missing or not a string")
            elif len(a["text"]) > MAX_ALT_TEXT:
                msgs.append("$.metadata.alt_text.text: is %d characters long, more than the %d allowed"
                            % (len(a["text"]), MAX_ALT_TEXT))
            else:
                alt = a["text"]
    if msgs:
        return XE.invalid_request(world, [{"message": m} for m in msgs], meta=meta)
    meta["media_id"] = media_id
    with world.lock:
        m, why = lookup(world, media_id, auth.user["id"], now)
        if why:
            return v2_error(world, meta, why, "id", media_id)
        if alt is not None:
            m.alt_text = alt
        associated = {"alt_text": {"text": m.alt_text}} if m.alt_text is not None else {}
    meta["priced"] = {"key": "media_metadata", "units": 1}
    return json_response(200, {"data": {"id": media_id, "associated_metadata": associated}}, meta=meta)


# ---------------------------------------------------------------------------
# v1.1 (upload.twitter.com/1.1/media/upload.json)

def v1_error(req, message, meta, status=400):
    """The upload endpoint's own error shape, {"request","error"}."""
    return json_response(status, {"request": req.path, "error": message}, meta=meta)


def v1_answer(m, now):
    d = {"media_id": int(m.id), "media_id_string": m.id, "media_key": m.media_key}
    if m.finalized:
        d["size"] = m.total_bytes
    d["expires_after_secs"] = m.expires_after(now)
    if m.finalized:
        if m.media_type.startswith("video/"):
            d["video"] = {"video_type": m.media_type}
        else:
            d["image"] = {"image_type": m.media_type}
            wh = image_size(m.head)
            if wh:
                d["image"]["w"], d["image"]["h"] = wh
    info = m.processing_info()
    if info is not None:
        d["processing_info"] = info
    return d


def v1_fields(req):
    """(text fields, media part or None) of a v1.1 upload request: query,
    form body or multipart body."""
    fields = dict(req.query)
    media = None
    if req.content_type == "multipart/form-data":
        for p in multipart(req):
            if p.name == "media":
                media = media or p
            else:
                fields.setdefault(p.name, bytes(p.data[:4096]).decode("utf-8", "replace"))
    else:
        for k, v in req.form:
            fields.setdefault(k, v)
    return fields, media


def v1_upload(world, req, auth, arg, now, meta):
    try:
        fields, media = v1_fields(req)
    except MultipartError as e:
        return v1_error(req, "The multipart body does not parse: %s." % e, meta)
    command = fields.get("command")
    user_id = auth.user["id"]
    if command is None:
        return v1_simple(world, req, fields, media, user_id, now, meta)
    if command == "INIT":
        return v1_init(world, req, fields, user_id, now, meta)
    media_id = fields.get("media_id", "")
    if not XE.NUMERIC_ID.fullmatch(media_id):
        return v1_error(req, "media_id parameter is missing or not a number.", meta)
    meta["media_id"] = media_id
    if command == "APPEND":
        index = fields.get("segment_index", "")
        if not index.isdigit() or len(index) > 4 or int(index) > MAX_SEGMENT_INDEX:
            return v1_error(req, "segment_index must be an integer from 0 to %d." % MAX_SEGMENT_INDEX, meta)
        if media is None or len(media.data) == 0:
            return v1_error(req, "media parameter is missing.", meta)
        if len(media.data) > MAX_SEGMENT:
            return v1_error(req, "Segment size exceeds %d bytes." % MAX_SEGMENT, meta)
        with world.lock:
            m, why = lookup(world, media_id, user_id, now)
            if m is not None and m.finalized:
                why = "Media id [%s] is already finalized; it takes no more segments." % media_id
            if m is not None and not why:
                why = store_segment(m, int(index), media.data)
        if why:
            return v1_error(req, why, meta)
        return Response(204, b"", [], meta)
    if command == "FINALIZE":
        with world.lock:
            m, why = lookup(world, media_id, user_id, now)
        if m is not None:
            why = finalize(world, m, now)
        if why:
            return v1_error(req, why, meta)
        with world.lock:
            return json_response(200, v1_answer(m, now), meta=meta)
    return v1_error(req, "command must be INIT, APPEND or FINALIZE (STATUS with GET).", meta)


def v1_init(world, req, fields, user_id, now, meta):
    total = fields.get("total_bytes")
    if total is not None and not total.isdigit():
        return v1_error(req, "total_bytes must be a whole number of bytes.", meta)
    errs = init_errors(fields.get("media_type"), int(total) if total is not None else None,
                       fields.get("media_category"))
    if errs:
        return v1_error(req, errs[0][1].replace("$.", "", 1), meta)
    owners = [o for o in fields.get("additional_owners", "").split(",") if o]
    if len(owners) > MAX_ADDITIONAL_OWNERS or not all(XE.NUMERIC_ID.fullmatch(o) for o in owners):
        return v1_error(req, "additional_owners must be at most %d comma-separated user ids."
                        % MAX_ADDITIONAL_OWNERS, meta)
    media_type = fields["media_type"]
    with world.lock:
        m = new_media(world, user_id, owners_of(user_id, owners), media_type,
                      fields.get("media_category") or FITTING[media_type][0], int(total), now, "1.1")
        answer = v1_answer(m, now)
    meta["media_id"] = m.id
    return json_response(200, answer, meta=meta)


def v1_simple(world, req, fields, media, user_id, now, meta):
    """A one-request upload of a whole image (multipart `media`)."""
    if media is None or len(media.data) == 0:
        return v1_error(req, "media parameter is missing.", meta)
    data = media.data
    media_type = sniff(bytes(data[:HEAD_BYTES]))
    if media_type is None or not media_type.startswith("image/"):
        return v1_error(req, "media type unrecognized.", meta)
    category = fields.get("media_category") or "tweet_image"
    errs = init_errors(media_type, len(data), category)
    if errs:
        param, message = errs[0]
        if param == "total_bytes":
            message = "File size exceeds %d bytes." % CATEGORY_LIMITS[category]
        return v1_error(req, message, meta)
    digest = hashlib.sha256(data).hexdigest()
    with world.lock:
        m = new_whole_media(world, user_id, owners_of(user_id, [o for o in fields.get("additional_owners", "")
                                                                .split(",") if XE.NUMERIC_ID.fullmatch(o)]),
                            media_type, category, data, digest, now, "1.1")
        answer = v1_answer(m, now)
        answer.pop("processing_info", None)
    meta["media_id"] = m.id
    return json_response(200, answer, meta=meta)


def v1_status(world, req, auth, arg, now, meta):
    q = dict(req.query)
    if q.get("command") != "STATUS":
        return v1_error(req, "command must be STATUS.", meta)
    media_id = q.get("media_id", "")
    if not XE.NUMERIC_ID.fullmatch(media_id):
        return v1_error(req, "media_id parameter is missing or not a number.", meta)
    meta["media_id"] = media_id
    with world.lock:
        m, why = polled(world, media_id, auth.user["id"], now)
        if why:
            return v1_error(req, why, meta)
        answer = v1_answer(m, now)
        answer.setdefault("processing_info", {"state": "succeeded", "progress_percent": 100})
    return json_response(200, answer, meta=meta)


# ---------------------------------------------------------------------------
# Control

def processing_setting(value):
    """A validated media_processing control value (None: the defaults)."""
    if value is None:
        return dict(DEFAULT_PROCESSING)
    if not isinstance(value, dict):
        raise ValueError("media_processing must be an object or null")
    unknown = sorted(k for k in value if k not in DEFAULT_PROCESSING)
    if unknown:
        raise ValueError("media_processing: unknown key %s (known: %s)" % (", ".join(unknown),
                                                                           ", ".join(DEFAULT_PROCESSING)))
    out = dict(DEFAULT_PROCESSING)
    for key in ("check_after_secs", "polls"):
        if key in value:
            v = value[key]
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise ValueError("media_processing.%s must be an integer >= 0" % key)
            out[key] = v
    if "outcome" in value:
        if value["outcome"] not in ("succeeded", "failed"):
            raise ValueError("media_processing.outcome must be \"succeeded\" or \"failed\"")
        out["outcome"] = value["outcome"]
    if value.get("error") is not None:
        e = value["error"]
        if not isinstance(e, dict) or set(e) - {"code", "name", "message"}:
            raise ValueError("media_processing.error must be an object with code, name, message")
        if "code" in e and (not isinstance(e["code"], int) or isinstance(e["code"], bool)):
            raise ValueError("media_processing.error.code must be an integer")
        if any(k in e and not isinstance(e[k], str) for k in ("name", "message")):
            raise ValueError("media_processing.error.name and .message must be strings")
        out["error"] = dict(DEFAULT_ERROR, **e)
    return out


def expires_setting(value):
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError("media_expires_after_secs must be an integer >= 1")
    return value


def describe(world):
    """GET /__media (caller holds the lock)."""
    return {"media": [m.describe() for m in world.media.values()]}

