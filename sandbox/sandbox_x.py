"""The X API v2 (and v1.1 subset) as the sandbox serves it.

Authentication follows X: OAuth 1.0a user context verified with oauthlib over
the URL actually requested (query and form body signed, JSON bodies not), app-only
bearer tokens, and OAuth 2.0 user-context bearer tokens with scopes.
"""
import base64
import json
import re
import secrets
import time
import unicodedata
import urllib.parse

from oauthlib.common import Request as OAuthRequest
from oauthlib.oauth1.rfc5849 import signature as oauth_signature
from oauthlib.oauth1.rfc5849 import utils as oauth_utils
from twitter_text import parse_tweet

import sandbox_media as M
import sandbox_world as W
import sandbox_x_billing as B
import sandbox_x_plan as P
from sandbox_http import Response, dumps, json_response
from sandbox_x_errors import (NUMERIC_ID, PROBLEM_JSON, check_params, invalid_request, param_error, problem,
                              problem_type, type_name)

JSON_TYPE = "application/json; charset=utf-8"
USERNAME = re.compile(r"[A-Za-z0-9_]{1,15}")

USER_FIELDS = (
    "affiliation", "confirmed_email", "connection_status", "created_at", "description",
    "entities", "id", "is_identity_verified", "location", "most_recent_post_id",
    "most_recent_tweet_id", "name", "parody", "pinned_post_id", "pinned_tweet_id",
    "profile_banner_url", "profile_image_url", "protected", "public_metrics",
    "receives_your_dm", "subscribes_to_you", "subscription", "subscription_type", "url",
    "username", "verified", "verified_followers_count", "verified_type", "withheld",
)
USER_FIELD_SET = frozenset(USER_FIELDS)
LOOKUP_PARAMS = ("expansions", "tweet.fields", "post.fields", "user.fields")

ALL_KINDS = frozenset(("oauth1", "app", "oauth2_user"))
USER_KINDS = frozenset(("oauth1", "oauth2_user"))
READ_USERS_SCOPES = frozenset(("users.read", "tweet.read"))
MEDIA_SCOPES = frozenset(("media.write",))

# endpoint key -> (api version, accepted auth kinds, OAuth 2.0 scopes, writes?)
ENDPOINTS = {
    "POST /2/tweets": (2, USER_KINDS, frozenset(("tweet.read", "tweet.write", "users.read")), True),
    "GET /2/users/me": (2, USER_KINDS, READ_USERS_SCOPES, False),
    "GET /2/users/by/username/:username": (2, ALL_KINDS, READ_USERS_SCOPES, False),
    "GET /2/users/by": (2, ALL_KINDS, READ_USERS_SCOPES, False),
    "GET /2/users": (2, ALL_KINDS, READ_USERS_SCOPES, False),
    "GET /2/users/:id": (2, ALL_KINDS, READ_USERS_SCOPES, False),
    "GET /2/users/:id/following": (2, ALL_KINDS, frozenset(("follows.read", "tweet.read", "users.read")), False),
    "POST /2/media/upload": (2, USER_KINDS, MEDIA_SCOPES, True),
    "POST /2/media/upload/initialize": (2, USER_KINDS, MEDIA_SCOPES, True),
    "POST /2/media/upload/:id/append": (2, USER_KINDS, MEDIA_SCOPES, True),
    "POST /2/media/upload/:id/finalize": (2, USER_KINDS, MEDIA_SCOPES, True),
    "GET /2/media/upload": (2, USER_KINDS, MEDIA_SCOPES, False),
    "POST /2/media/metadata": (2, USER_KINDS, MEDIA_SCOPES, True),
    "POST /1.1/statuses/update.json": (1, frozenset(("oauth1",)), frozenset(), True),
    "POST /1.1/media/upload.json": (1, frozenset(("oauth1",)), frozenset(), True),
    "GET /1.1/media/upload.json": (1, frozenset(("oauth1",)), frozenset(), False),
    "GET /1.1/friends/ids.json": (1, frozenset(("oauth1", "app")), frozenset(), False),
    "GET /1.1/account/verify_credentials.json": (1, frozenset(("oauth1",)), frozenset(), False),
    "POST /1.1/oauth/invalidate_token": (1, frozenset(("oauth1",)), frozenset(), False),
}
# v1.1 endpoints that an app without v1.1 access may still call: X keeps its
# OAuth and media endpoints open to every tier (x-api.md section 7).
V1_OPEN_TO_ALL = frozenset(("POST /1.1/oauth/invalidate_token", "POST /1.1/media/upload.json",
                            "GET /1.1/media/upload.json"))
# Served even when the account cannot pay: revoking a token is an OAuth step.
BILLING_FREE = frozenset(("POST /1.1/oauth/invalidate_token",))

KIND_NAMES = {"oauth1": "OAuth 1.0a User Context", "app": "OAuth 2.0 Application-Only",
              "oauth2_user": "OAuth 2.0 User Context"}

# v1.1 legacy codes: code -> (HTTP status, message)
LEGACY = {
    32: (401, "Could not authenticate you."),
    34: (404, "Sorry, that page does not exist."),
    44: (400, "cursor parameter is invalid."),
    50: (404, "User not found."),
    88: (429, "Rate limit exceeded"),
    89: (401, "Invalid or expired token."),
    99: (403, "Unable to verify your credentials"),
    130: (503, "Over capacity"),
    131: (500, "Internal error"),
    135: (401, "Timestamp out of bounds."),
    170: (400, "Missing required parameter: status."),
    185: (403, "User is over daily status update limit."),
    186: (403, "Tweet needs to be a bit shorter."),
    187: (403, "Status is a duplicate."),
    215: (400, "Bad Authentication data."),
    220: (403, "Your credentials do not allow access to this resource."),
    226: (403, "This request looks like it might be automated. To protect our users from spam and "
               "other malicious activity, we can't complete this action right now. Please try again later."),
    261: (403, "Application cannot perform write actions. Contact Twitter Platform Operations through "
               "https://help.twitter.com/forms/platform."),
    324: (400, "The validation of media ids failed."),
    385: (403, "You attempted to reply to a Tweet that is deleted or not visible to you."),
    415: (403, "Callback URL not approved for this client application. Approved callback URLs can be "
               "adjusted in your application settings"),
    453: (403, "You currently have access to a subset of Twitter API v2 endpoints and limited v1.1 "
               "endpoints (e.g. media post, oauth) only. If you need access to this endpoint, you may "
               "need a different access level. You can learn more here: "
               "https://developer.twitter.com/en/portal/product"),
}

REASONS = {400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
           405: "Method Not Allowed", 429: "Too Many Requests", 500: "Internal Server Error",
           502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout"}


# ---------------------------------------------------------------------------
# Response shapes

def legacy(code, headers=None, meta=None, status=None, message=None):
    default_status, default_message = LEGACY.get(code, (400, "Error %d" % code))
    return json_response(status or default_status,
                         {"errors": [{"code": code, "message": message or default_message}]},
                         headers, meta=meta)


def unauthorized(meta=None):
    return problem(401, "Unauthorized", "Unauthorized", meta=meta)


def not_found_error(world, value, parameter, what):
    return {"value": value, "detail": "Could not find user with %s: [%s]." % (what, value),
            "title": "Not Found Error", "resource_type": "user", "parameter": parameter,
            "resource_id": value, "type": problem_type(world, "resource-not-found")}


def default_status_body(world, version, status):
    """Body of an injected `status` fault that gives none."""
    reason = REASONS.get(status, "Error")
    if version == 1:
        code = {429: 88, 500: 131, 503: 130}.get(status, 0)
        return ({"errors": [{"code": code, "message": LEGACY[code][1] if code else reason}]},
                "application/json; charset=utf-8")
    if status == 429 and world.config.x_429_style == "legacy":
        return {"errors": [{"code": 88, "message": "Rate limit exceeded"}]}, "application/json; charset=utf-8"
    return {"title": reason, "detail": reason, "type": "about:blank", "status": status}, PROBLEM_JSON


PROBLEMS = {
    "usage-capped": (429, "UsageCapExceeded", "Usage cap exceeded: Monthly product cap",
                     {"period": "Monthly", "scope": "Product"}),
    "rate-limit-exceeded": (429, "Too Many Requests", "Too Many Requests", None),
    "unsupported-authentication": (403, "Unsupported Authentication",
                                   "Authenticating with OAuth 2.0 Application-Only is forbidden for this "
                                   "endpoint.  Supported authentication types are [OAuth 1.0a User Context, "
                                   "OAuth 2.0 User Context].", None),
    "client-forbidden": (403, "Client Forbidden", "When authenticating requests to the Twitter API v2 "
                         "endpoints, you must use keys and tokens from a Twitter developer App that is "
                         "attached to a Project. You can create a project via the developer portal.",
                         {"reason": "client-not-enrolled",
                          "registration_url": "https://developer.twitter.com/en/docs/projects/overview",
                          "required_enrollment": "Appropriate Level of API Access"}),
    "oauth1-permissions": (403, "Forbidden", "Your client app is not configured with the appropriate "
                           "oauth1 app permissions for this endpoint.", None),
    "resource-unavailable": (503, "Service Unavailable", "Service Unavailable", None),
}


def error_fault_response(world, version, spec):
    """Body of an injected `error` fault on an X path."""
    if spec.get("problem") and version == 2:
        name = spec["problem"]
        status, title, detail, extra = PROBLEMS.get(name, (spec.get("status", 400), name, name, None))
        type_ = "about:blank" if name == "about:blank" else problem_type(world, name)
        return problem(spec.get("status", status), spec.get("title", title),
                       spec.get("message", detail), type_, extra)
    code = spec.get("code", 131)
    return legacy(code, status=spec.get("status"), message=spec.get("message"))


def rate_headers(limit, remaining, reset):
    return [("x-rate-limit-limit", str(limit)), ("x-rate-limit-remaining", str(remaining)),
            ("x-rate-limit-reset", str(W.ceil_epoch(reset)))]


# ---------------------------------------------------------------------------
# Routing

def route(method, path):
    """(endpoint key, handler, path parameter) for a request, else (None, None, None)."""
    parts = path.split("/")
    if len(parts) < 2:
        return None, None, None
    head = parts[1]
    if head == "2":
        if method == "POST" and path == "/2/tweets":
            return "POST /2/tweets", post_tweet, None
        if len(parts) >= 3 and parts[2] == "media":
            return media_route(method, parts[3:])
        if method != "GET" or len(parts) < 3 or parts[2] != "users":
            return None, None, None
        rest = parts[3:]
        if not rest:
            return "GET /2/users", users_by_ids, None
        if rest == ["me"]:
            return "GET /2/users/me", users_me, None
        if rest == ["by"]:
            return "GET /2/users/by", users_by_usernames, None
        if len(rest) == 3 and rest[0] == "by" and rest[1] == "username":
            return "GET /2/users/by/username/:username", user_by_username, urllib.parse.unquote(rest[2])
        if len(rest) == 1:
            return "GET /2/users/:id", user_by_id, urllib.parse.unquote(rest[0])
        if len(rest) == 2 and rest[1] == "following":
            return "GET /2/users/:id/following", following, urllib.parse.unquote(rest[0])
        return None, None, None
    if head == "1.1":
        key = "%s %s" % (method, path)
        handler = {"POST /1.1/statuses/update.json": statuses_update,
                   "GET /1.1/friends/ids.json": friends_ids,
                   "GET /1.1/account/verify_credentials.json": verify_credentials,
                   "POST /1.1/oauth/invalidate_token": invalidate_token,
                   "POST /1.1/media/upload.json": M.v1_upload,
                   "GET /1.1/media/upload.json": M.v1_status}.get(key)
        return (key, handler, None) if handler else (None, None, None)
    if head == "oauth2" and method == "POST" and path == "/oauth2/token":
        return "POST /oauth2/token", oauth2_token, None
    if head == "oauth2" and method == "POST" and path == "/oauth2/invalidate_token":
        return "POST /oauth2/invalidate_token", oauth2_invalidate_token, None
    return None, None, None


def media_route(method, rest):
    """Routes below /2/media/ (rest: the path segments after it)."""
    if method == "GET" and rest == ["upload"]:
        return "GET /2/media/upload", M.v2_status, None
    if method != "POST":
        return None, None, None
    if rest == ["upload"]:
        return "POST /2/media/upload", M.v2_upload, None
    if rest == ["upload", "initialize"]:
        return "POST /2/media/upload/initialize", M.v2_initialize, None
    if rest == ["metadata"]:
        return "POST /2/media/metadata", M.v2_metadata, None
    if len(rest) == 3 and rest[0] == "upload" and rest[2] == "append":
        return "POST /2/media/upload/:id/append", M.v2_append, urllib.parse.unquote(rest[1])
    if len(rest) == 3 and rest[0] == "upload" and rest[2] == "finalize":
        return "POST /2/media/upload/:id/finalize", M.v2_finalize, urllib.parse.unquote(rest[1])
    return None, None, None


def is_x_path(path):
    return path.startswith(("/2/", "/1.1/", "/oauth2/", "/oauth/", "/i/")) or path in ("/2", "/1.1")


def endpoint_for(method, path):
    return route(method, path)[0]


def version_of(path):
    return 1 if path.startswith(("/1.1/", "/oauth")) else 2


# ---------------------------------------------------------------------------
# Authentication

class Auth:
    __slots__ = ("kind", "failure", "app", "user", "token", "identity", "label", "scopes", "access_level")

    def __init__(self, kind=None, failure=None, app=None, user=None, token=None,
                 identity=None, label=None, scopes=None, access_level=None):
        self.kind = kind
        self.failure = failure
        self.app = app
        self.user = user
        self.token = token
        self.identity = identity
        self.label = label
        self.scopes = scopes
        # OAuth 1.0a: "read" or "read-write", the lower of the app's level and
        # the level the token was issued with (x_auth_access_type).
        self.access_level = access_level

    def log(self):
        d = {"scheme": self.kind or "none", "outcome": self.failure or "ok"}
        if self.label:
            d["credential"] = self.label
        if self.user:
            d["user_id"] = self.user["id"]
        if self.app:
            d["app"] = self.app["name"]
        return d


REQUIRED_OAUTH = ("oauth_consumer_key", "oauth_nonce", "oauth_signature",
                  "oauth_signature_method", "oauth_timestamp")


def authenticate(world, req, now):
    cfg = world.config
    header = req.header("authorization")
    if not header:
        return Auth(failure="missing")
    scheme, _, rest = header.strip().partition(" ")
    scheme = scheme.lower()
    if scheme == "bearer":
        value = rest.strip()
        rec = world.x_bearer_record(value)
        if rec is None:
            return Auth(kind="bearer", failure="unknown_token")
        kind = "app" if rec["type"] == "bearer" else "oauth2_user"
        app = cfg.x_apps.get(rec.get("consumer_key")) if rec.get("consumer_key") else None
        user = cfg.x_users.get(rec.get("user_id")) if kind == "oauth2_user" else None
        auth = Auth(kind=kind, app=app, user=user, token=value, label=rec["label"],
                    identity=("app:%s" % rec["consumer_key"]) if kind == "app" else "oauth2:" + value,
                    scopes=rec.get("scopes"))
        state = world.token_state(value, rec["expires"], now)
        if state != "ok":
            auth.failure = state
        return auth
    if scheme != "oauth":
        return Auth(failure="malformed")
    return authenticate_oauth1(world, req, header, now)


def parse_oauth1(header):
    """The parameters of an OAuth 1.0a Authorization header, or None when it
    does not parse or lacks one of REQUIRED_OAUTH."""
    try:
        pairs = oauth_utils.parse_authorization_header(header)
    except (ValueError, IndexError):
        return None
    oauth = {}
    try:
        for k, v in pairs:
            oauth[oauth_utils.unescape(k)] = oauth_utils.unescape(v)
    except ValueError:
        return None
    if any(k not in oauth for k in REQUIRED_OAUTH):
        return None
    return oauth


def oauth1_failure(world, req, header, oauth, consumer_secret, token, token_secret, now):
    """Why an OAuth 1.0a request whose consumer and token were found fails
    (version, signature method, timestamp, signature, nonce), or None.
    `token` is "" where there is none yet (request_token)."""
    if oauth.get("oauth_version", "1.0") != "1.0":
        return "bad_version"
    if oauth["oauth_signature_method"] != "HMAC-SHA1":
        return "unsupported_signature_method"
    if not world.verify_signatures:
        return None
    ts = oauth["oauth_timestamp"]
    window = world.config.x_timestamp_window
    if not ts.isdigit() or abs(now - int(ts)) > window:
        return "timestamp_out_of_window"
    if not verify_signature(req, header, oauth["oauth_signature"], consumer_secret, token_secret):
        return "bad_signature"
    with world.lock:
        fresh = world.use_nonce((oauth["oauth_consumer_key"], token, oauth["oauth_nonce"]), now, 2 * window)
    return None if fresh else "nonce_replayed"


def authenticate_oauth1(world, req, header, now):
    cfg = world.config
    oauth = parse_oauth1(header)
    if oauth is None:
        return Auth(kind="oauth1", failure="malformed")
    ck = oauth["oauth_consumer_key"]
    app = cfg.x_apps.get(ck)
    if app is None:
        return Auth(kind="oauth1", failure="unknown_consumer")
    token = oauth.get("oauth_token")
    rec = world.x_oauth1_record(token) if token else None
    if rec is None or rec["consumer_key"] != ck:
        return Auth(kind="oauth1", app=app, failure="unknown_token")
    level = "read" if "read" in (app["access_level"], rec.get("access_level")) else "read-write"
    auth = Auth(kind="oauth1", app=app, user=cfg.x_users[rec["user_id"]], token=token,
                label=rec["label"], identity="oauth1:" + token, access_level=level)
    state = world.token_state(token, rec["expires"], now)
    if state != "ok":
        auth.failure = state
        return auth
    auth.failure = oauth1_failure(world, req, header, oauth, app["consumer_secret"], token, rec["secret"], now)
    return auth


def verify_signature(req, header, signature_value, consumer_secret, token_secret):
    """RFC 5849 HMAC-SHA1 check by oauthlib over the URL as received: the
    client's Host header, the raw path, the query string, and a form body."""
    uri = "%s://%s%s" % (req.scheme, req.host, req.path)
    if req.query_string:
        uri += "?" + req.query_string
    body = None
    if req.content_type == "application/x-www-form-urlencoded" and req.body:
        body = req.body_text()
    try:
        params = oauth_signature.collect_parameters(
            uri_query=req.query_string, body=body, headers={"Authorization": header},
            exclude_oauth_signature=True)
        oreq = OAuthRequest(uri, http_method=req.method, body=body,
                            headers={"Authorization": header})
    except (ValueError, TypeError):
        return False
    oreq.params = params
    oreq.signature = signature_value
    try:
        return oauth_signature.verify_hmac_sha1(oreq, consumer_secret, token_secret)
    except (ValueError, TypeError):
        return False


def auth_failure_response(version, auth, meta):
    if version == 2:
        return unauthorized(meta)
    f = auth.failure
    if f in ("missing", "malformed"):
        return legacy(215, meta=meta)
    if f == "timestamp_out_of_window":
        return legacy(135, meta=meta)
    if f in ("unknown_token", "revoked", "expired"):
        return legacy(89, meta=meta)
    return legacy(32, meta=meta)


# ---------------------------------------------------------------------------
# Dispatch

def handle(world, req):
    now = time.time()
    endpoint, handler, arg = route(req.method, req.path)
    meta = {"service": "x", "endpoint": endpoint}
    version = version_of(req.path)
    if endpoint is None:
        if version == 2:
            return problem(404, "Not Found Error", "The requested resource could not be found.", meta=meta)
        return legacy(34, meta=meta)
    if endpoint in ("POST /oauth2/token", "POST /oauth2/invalidate_token"):
        return handler(world, req, meta)

    auth = authenticate(world, req, now)
    meta["auth"] = auth.log()
    if auth.failure:
        return auth_failure_response(ENDPOINTS[endpoint][0], auth, meta)
    resp = serve(world, req, auth, endpoint, handler, arg, now, meta)
    if auth.kind == "oauth1":
        # X reports an OAuth 1.0a token's permission on every answer to it.
        resp.headers.append(("x-access-level", auth.access_level))
    return resp


def serve(world, req, auth, endpoint, handler, arg, now, meta):
    """A request whose credentials were accepted: access checks, rate limits,
    billing, then the endpoint's handler."""
    api_version, kinds, scopes, writes = ENDPOINTS[endpoint]
    app = auth.app

    if api_version == 2:
        if app is not None and not app.get("enrolled", True):
            status, title, detail, extra = PROBLEMS["client-forbidden"]
            extra = dict(extra, client_id=app.get("client_id", app["name"]))
            return problem(status, title, detail, problem_type(world, "client-forbidden"), extra, meta=meta)
        if auth.kind not in kinds:
            allowed = ", ".join(KIND_NAMES[k] for k in ("oauth1", "app", "oauth2_user") if k in kinds)
            detail = ("Authenticating with %s is forbidden for this endpoint.  Supported authentication "
                      "types are [%s]." % (KIND_NAMES[auth.kind], allowed))
            return problem(403, "Unsupported Authentication", detail,
                           problem_type(world, "unsupported-authentication"), meta=meta)
        if auth.kind == "oauth2_user" and not scopes <= auth.scopes:
            meta["auth"]["missing_scopes"] = sorted(scopes - auth.scopes)
            return problem(403, "Forbidden", "Forbidden", meta=meta)
        if writes and auth.kind == "oauth1" and auth.access_level != "read-write":
            status, title, detail, _ = PROBLEMS["oauth1-permissions"]
            return problem(status, title, detail, problem_type(world, "oauth1-permissions"), meta=meta)
    else:
        if app is not None and not app.get("v1_access", True) and endpoint not in V1_OPEN_TO_ALL:
            return legacy(453, meta=meta)
        if auth.kind not in kinds:
            return legacy(220, meta=meta)
        if writes and auth.access_level != "read-write":
            return json_response(401, {"request": req.path, "error": "Read-only application cannot POST."},
                                 meta=meta)

    spec = world.x_rate_limits.get(endpoint)
    with world.lock:
        cap = world.usage_caps.get(app["consumer_key"]) if app is not None else None
        if spec is not None:
            limit = spec.get("app_limit", spec["limit"]) if auth.kind == "app" else spec["limit"]
            allowed, limit, remaining, reset = world.windows.take(
                (endpoint, auth.identity), limit, spec["window"], now)
            headers = rate_headers(limit, remaining, reset)
        else:
            allowed, headers = True, []
    if cap and api_version == 2:
        period = cap.get("period", "Monthly")
        scope = cap.get("scope", "Product")
        return problem(429, "UsageCapExceeded", "Usage cap exceeded: %s %s cap" % (period, scope.lower()),
                       problem_type(world, "usage-capped"), {"period": period, "scope": scope},
                       headers=headers, meta=meta)
    if not allowed:
        meta["rate_limited"] = True
        if api_version == 1 or world.config.x_429_style == "legacy":
            return legacy(88, headers=headers, meta=meta)
        return problem(429, "Too Many Requests", "Too Many Requests", headers=headers, meta=meta)
    if endpoint not in BILLING_FREE:
        with world.lock:
            refused = B.refusal(world, meta)
        if refused is not None:
            refused.headers.extend(headers)
            return refused
    resp = handler(world, req, auth, arg, now, meta)
    if 200 <= resp.status < 300 and meta.get("priced"):
        with world.lock:
            B.settle(world, auth, req, meta, now)
    resp.headers.extend(headers)
    return resp


def fault_rate_headers(world, req, endpoint):
    """Rate headers for an injected 429: the window as it stands, not consumed
    (what a client sees when X refuses while x-rate-limit-remaining > 0)."""
    spec = world.x_rate_limits.get(endpoint) if endpoint else None
    if spec is None:
        return []
    header = req.header("authorization") or ""
    scheme, _, rest = header.strip().partition(" ")
    identity = None
    limit = spec["limit"]
    if scheme.lower() == "bearer":
        rec = world.x_bearer_record(rest.strip())
        if rec is not None:
            identity = ("app:%s" % rec["consumer_key"]) if rec["type"] == "bearer" else "oauth2:" + rest.strip()
            if rec["type"] == "bearer":
                limit = spec.get("app_limit", limit)
    elif scheme.lower() == "oauth":
        try:
            token = dict(oauth_utils.parse_authorization_header(header)).get("oauth_token")
            token = oauth_utils.unescape(token) if token else None
        except (ValueError, IndexError):
            token = None
        if token:
            identity = "oauth1:" + token
    if identity is None:
        return []
    with world.lock:
        w = world.windows.peek((endpoint, identity), spec["window"], time.time())
        return rate_headers(limit, max(0, limit - w.count), w.reset)


# ---------------------------------------------------------------------------
# Users

def find_user(world, user_id):
    u = world.config.x_users.get(user_id)
    if u is not None:
        return u
    g = W.generated_index(user_id)
    return W.generated_user(g) if g is not None else None


def find_username(world, username):
    u = world.config.x_usernames.get(username.lower())
    if u is not None:
        return u
    g = W.generated_index_by_username(username)
    return W.generated_user(g) if g is not None else None


def following_total(u):
    return len(u["follows"]) + u["following"]


def user_object(u, fields):
    d = {"id": u["id"], "name": u["name"], "username": u["username"]}
    if not fields:
        return d
    for f in fields:
        if f in ("created_at", "description", "location", "url", "protected", "verified"):
            d[f] = u.get(f)
        elif f == "public_metrics":
            d[f] = {"followers_count": u.get("followers_count", 0),
                    "following_count": following_total(u),
                    "tweet_count": u.get("tweet_count", 0),
                    "listed_count": u.get("listed_count", 0),
                    "like_count": 0}
        elif f == "profile_image_url":
            d[f] = u.get("profile_image_url") or (
                "https://pbs.twimg.com/profile_images/%s/sandbox_normal.png" % u["id"])
        elif f == "verified_type":
            d[f] = u.get("verified_type", "none")
        elif f in ("pinned_tweet_id", "pinned_post_id") and u.get("pinned_tweet_id"):
            d[f] = u["pinned_tweet_id"]
    return d


def user_fields(world, req, meta):
    """The requested user.fields as a list, or an error response."""
    values = [v for k, v in req.query if k == "user.fields"]
    fields = []
    for value in values:
        for f in value.split(","):
            if f not in USER_FIELD_SET:
                return None, invalid_request(world, [param_error(
                    "user.fields", [f], "The `user.fields` query parameter value [%s] is not one of [%s]"
                    % (f, ",".join(USER_FIELDS)))], meta=meta)
            if f not in fields:
                fields.append(f)
    return fields, None


def users_me(world, req, auth, arg, now, meta):
    err = check_params(world, req, LOOKUP_PARAMS, meta)
    if err:
        return err
    fields, err = user_fields(world, req, meta)
    if err:
        return err
    meta["priced"] = {"key": "user_read", "ids": [auth.user["id"]]}
    return json_response(200, {"data": user_object(auth.user, fields)}, meta=meta)


def user_by_username(world, req, auth, username, now, meta):
    err = check_params(world, req, LOOKUP_PARAMS, meta)
    if err:
        return err
    if not USERNAME.fullmatch(username):
        return invalid_request(world, [param_error(
            "username", [username], "The `username` query parameter value [%s] does not match "
            "^[A-Za-z0-9_]{1,15}$" % username)], meta=meta)
    fields, err = user_fields(world, req, meta)
    if err:
        return err
    u = find_username(world, username)
    if u is None:
        return json_response(200, {"errors": [not_found_error(world, username, "username", "username")]},
                             meta=meta)
    meta["priced"] = {"key": "user_read", "ids": [u["id"]]}
    return json_response(200, {"data": user_object(u, fields)}, meta=meta)


def user_by_id(world, req, auth, user_id, now, meta):
    err = check_params(world, req, LOOKUP_PARAMS, meta)
    if err:
        return err
    if not NUMERIC_ID.fullmatch(user_id):
        return invalid_request(world, [param_error(
            "id", [user_id], "The `id` query parameter value [%s] does not match ^[0-9]{1,19}$" % user_id)],
            meta=meta)
    fields, err = user_fields(world, req, meta)
    if err:
        return err
    u = find_user(world, user_id)
    if u is None:
        return json_response(200, {"errors": [not_found_error(world, user_id, "id", "id")]}, meta=meta)
    meta["priced"] = {"key": "user_read", "ids": [u["id"]]}
    return json_response(200, {"data": user_object(u, fields)}, meta=meta)


def _multi_lookup(world, req, meta, param, pattern, finder, what):
    err = check_params(world, req, (param,) + LOOKUP_PARAMS, meta)
    if err:
        return err
    raw = [v for k, v in req.query if k == param]
    if not raw or not raw[0]:
        return invalid_request(world, [param_error(param, [""], "The `%s` query parameter can not be empty"
                                                   % param)], meta=meta)
    values = [v for v in raw[0].split(",")]
    if len(values) > 100:
        return invalid_request(world, [param_error(param, [raw[0]], "The number of values in the `%s` query "
                                                   "parameter list [%d] is not between 1 and 100"
                                                   % (param, len(values)))], meta=meta)
    for v in values:
        if not pattern.fullmatch(v):
            return invalid_request(world, [param_error(param, [v], "The `%s` query parameter value [%s] "
                                                       "does not match %s" % (param, v, pattern.pattern))],
                                   meta=meta)
    fields, err = user_fields(world, req, meta)
    if err:
        return err
    data, errors = [], []
    for v in values:
        u = finder(world, v)
        if u is None:
            errors.append(not_found_error(world, v, param, what))
        else:
            data.append(user_object(u, fields))
    body = {}
    if data:
        body["data"] = data
        meta["priced"] = {"key": "user_read", "ids": [d["id"] for d in data]}
    if errors:
        body["errors"] = errors
    return json_response(200, body, meta=meta)


def users_by_usernames(world, req, auth, arg, now, meta):
    return _multi_lookup(world, req, meta, "usernames", USERNAME, find_username, "usernames")


def users_by_ids(world, req, auth, arg, now, meta):
    return _multi_lookup(world, req, meta, "ids", NUMERIC_ID, find_user, "ids")


# ---------------------------------------------------------------------------
# Following lists: account i of user u is computed from the index, never stored.
# Pages are written as JSON text directly when only the default fields are
# asked for, so walking a 1,000,000-account list costs little per page.

# Positions fit in 40 bits (10**12 generated accounts plus the configured
# follows); the bits above them in a token or cursor carry the ragged phase.
POSITION_BITS = 40
POSITION_MASK = (1 << POSITION_BITS) - 1


def account_at(u, i):
    """(configured user or None, generated index or None) of position i."""
    follows = u["follows"]
    if i < len(follows):
        return follows[i], None
    return None, (u["seed"] + (i - len(follows)) * W.GENERATED_STRIDE) % W.GENERATED_SPACE


def generated_steps(u, start, end):
    """For positions start..end-1 (all past the configured follows): the values
    whose remainders mod GENERATED_SPACE are the generated indices there."""
    stride = W.GENERATED_STRIDE
    first = u["seed"] + (start - len(u["follows"])) * stride
    return range(first, first + (end - start) * stride, stride)


def list_hidden(u, auth):
    """A protected account's following list is visible to that account only."""
    return bool(u.get("protected")) and (auth.user is None or auth.user["id"] != u["id"])


def page_span(world, start, phase, size, total):
    """(end, phase of the next page) of a page that starts at `start` when
    `size` accounts were asked for, in the current page shape."""
    if world.x_page_shape == "ragged":
        n, phase = W.ragged_page_size(phase, size), (phase + 1) % W.RAGGED_CYCLE
    else:
        n, phase = size, 0
    return max(start, min(total, start + n)), phase


def _check(user_id, bits):
    return W._seed("cursor:" + user_id) & ((1 << bits) - 1)


def encode_page_token(user_id, position, phase=0):
    raw = ((phase << POSITION_BITS) | position).to_bytes(6, "big") + _check(user_id, 32).to_bytes(4, "big")
    return base64.b32hexencode(raw).decode("ascii").lower()


def decode_page_token(user_id, token):
    """(position, ragged phase) of a token of this user's list, else None."""
    if len(token) != 16:
        return None
    try:
        raw = base64.b32hexdecode(token.upper())
    except (ValueError, base64.binascii.Error):
        return None
    if int.from_bytes(raw[6:], "big") != _check(user_id, 32):
        return None
    value = int.from_bytes(raw[:6], "big")
    if value >> POSITION_BITS >= W.RAGGED_CYCLE:
        return None
    return value & POSITION_MASK, value >> POSITION_BITS


def encode_cursor(user_id, position, phase=0):
    return (1 << 60) | (phase << 56) | (position << 16) | _check(user_id, 16)


def decode_cursor(user_id, cursor):
    """(position, ragged phase) of a v1.1 cursor of this user's list, else None."""
    value = abs(cursor)
    if not value >> 60 or value & 0xFFFF != _check(user_id, 16):
        return None
    phase = (value >> 56) & 0xF
    if phase >= W.RAGGED_CYCLE:
        return None
    return (value >> 16) & POSITION_MASK, phase


def page_of_users(world, u, start, end, fields):
    """The user objects at positions start..end-1 (with `fields`)."""
    cfg_users = world.config.x_users
    out = []
    for i in range(start, end):
        configured, g = account_at(u, i)
        out.append(user_object(cfg_users[configured] if configured is not None else W.generated_user(g), fields))
    return out


def default_users_text(world, u, start, end):
    """The JSON text (without brackets) of the default-field user objects at
    positions start..end-1: what dumps(page_of_users(..., [])) would give."""
    follows = u["follows"]
    parts = []
    for i in range(start, min(end, len(follows))):
        c = world.config.x_users[follows[i]]
        parts.append(dumps({"id": c["id"], "name": c["name"], "username": c["username"]}).decode("utf-8"))
    lo = max(start, len(follows))
    if end > lo:
        base, space = W.GENERATED_ID_BASE, W.GENERATED_SPACE
        parts.extend(['{"id":"%d","name":"Account %d","username":"u%d"}' % (base + g, g, g)
                      for g in [x % space for x in generated_steps(u, lo, end)]])
    return ",".join(parts)


def ids_text(u, start, end, stringify):
    """The JSON text (without brackets) of the ids at positions start..end-1."""
    follows = u["follows"]
    ids = [f if stringify else str(int(f)) for f in follows[start:min(end, len(follows))]]
    lo = max(start, len(follows))
    if end > lo:
        base, space = W.GENERATED_ID_BASE, W.GENERATED_SPACE
        ids.extend([str(base + x % space) for x in generated_steps(u, lo, end)])
    if not ids:
        return ""
    return '"' + '","'.join(ids) + '"' if stringify else ",".join(ids)


def not_authorized_error(world, user_id):
    return {"value": user_id, "detail": "Sorry, you are not authorized to see the user with id: [%s]." % user_id,
            "title": "Authorization Error", "resource_type": "user", "parameter": "id", "resource_id": user_id,
            "type": problem_type(world, "not-authorized-for-resource")}


def following(world, req, auth, user_id, now, meta):
    allowed = ("max_results", "pagination_token") + LOOKUP_PARAMS
    err = check_params(world, req, allowed, meta)
    if err:
        return err
    if not NUMERIC_ID.fullmatch(user_id):
        return invalid_request(world, [param_error(
            "id", [user_id], "The `id` query parameter value [%s] does not match ^[0-9]{1,19}$" % user_id)],
            meta=meta)
    q = dict(req.query)
    max_results = 100
    if "max_results" in q:
        raw = q["max_results"]
        if not raw.isdigit() or not 1 <= int(raw) <= 1000:
            return invalid_request(world, [param_error(
                "max_results", [raw], "The `max_results` query parameter value [%s] is not between 1 and 1000"
                % raw)], meta=meta)
        max_results = int(raw)
    fields, err = user_fields(world, req, meta)
    if err:
        return err
    u = find_user(world, user_id)
    if u is None:
        return json_response(200, {"errors": [not_found_error(world, user_id, "id", "id")]}, meta=meta)
    if list_hidden(u, auth):
        return json_response(200, {"errors": [not_authorized_error(world, user_id)]}, meta=meta)
    start, phase = 0, 0
    if "pagination_token" in q:
        token = q["pagination_token"]
        decoded = decode_page_token(user_id, token)
        if decoded is None:
            return invalid_request(world, [param_error(
                "pagination_token", [token], "The `pagination_token` query parameter value [%s] is not valid"
                % token)], meta=meta)
        start, phase = decoded
    total = following_total(u)
    end, next_phase = page_span(world, start, phase, max_results, total)
    meta_out = {"result_count": end - start}
    if start < total and end < total:
        meta_out["next_token"] = encode_page_token(user_id, end, next_phase)
    if 0 < start < total:
        meta_out["previous_token"] = encode_page_token(user_id, max(0, start - max_results))
    if end == start:
        return json_response(200, {"meta": meta_out}, meta=meta)
    meta["priced"] = {"key": B.following_key(world, auth, user_id, 2), "span": (user_id, start, end)}
    if fields:
        return json_response(200, {"data": page_of_users(world, u, start, end, fields), "meta": meta_out},
                             meta=meta)
    text = '{"data":[%s],"meta":%s}' % (default_users_text(world, u, start, end), dumps(meta_out).decode("ascii"))
    return Response(200, text.encode("utf-8"), [("Content-Type", JSON_TYPE)], meta)


def friends_ids(world, req, auth, arg, now, meta):
    q = dict(req.query)
    if q.get("user_id"):
        u = find_user(world, q["user_id"])
    elif q.get("screen_name"):
        u = find_username(world, q["screen_name"])
    elif auth.user is not None:
        u = auth.user
    else:
        u = None
    if u is None:
        return legacy(50, meta=meta)
    if list_hidden(u, auth):
        return json_response(401, {"request": req.path, "error": "Not authorized."}, meta=meta)
    start, phase = 0, 0
    cursor = q.get("cursor", "-1")
    try:
        cursor_value = int(cursor)
    except ValueError:
        return legacy(44, meta=meta)
    if cursor_value not in (-1, 0):
        decoded = decode_cursor(u["id"], cursor_value)
        if decoded is None:
            return legacy(44, meta=meta)
        start, phase = decoded
    try:
        count = int(q.get("count", "5000"))
    except ValueError:
        count = 5000
    count = max(1, min(5000, count))
    stringify = q.get("stringify_ids", "").lower() in ("true", "1", "t")
    total = following_total(u)
    end, next_phase = page_span(world, start, phase, count, total)
    next_cursor = encode_cursor(u["id"], end, next_phase) if start < total and end < total else 0
    previous_cursor = -encode_cursor(u["id"], max(0, start - count)) if start > 0 else 0
    if end > start:
        meta["priced"] = {"key": B.following_key(world, auth, u["id"], 1), "span": (u["id"], start, end)}
    text = ('{"ids":[%s],"next_cursor":%d,"next_cursor_str":"%d","previous_cursor":%d,'
            '"previous_cursor_str":"%d","total_count":null}'
            % (ids_text(u, start, end, stringify), next_cursor, next_cursor, previous_cursor, previous_cursor))
    return Response(200, text.encode("ascii"), [("Content-Type", JSON_TYPE)], meta)


def verify_credentials(world, req, auth, arg, now, meta):
    meta["priced"] = {"key": "user_read", "ids": [auth.user["id"]]}
    return json_response(200, v1_user(auth.user), meta=meta)


def v1_user(u):
    return {"id": int(u["id"]), "id_str": u["id"], "name": u["name"], "screen_name": u["username"],
            "location": u.get("location", ""), "description": u.get("description", ""),
            "url": u.get("url") or None, "protected": u.get("protected", False),
            "followers_count": u.get("followers_count", 0), "friends_count": following_total(u),
            "listed_count": u.get("listed_count", 0), "statuses_count": u.get("tweet_count", 0),
            "verified": u.get("verified", False), "created_at": v1_time(u.get("created_at"))}


def v1_time(iso):
    """v1.1 writes times as "Wed Oct 10 20:19:24 +0000 2018"."""
    try:
        parsed = time.strptime((iso or "")[:19], "%Y-%m-%dT%H:%M:%S")
    except ValueError:
        return None
    return time.strftime("%a %b %d %H:%M:%S +0000 %Y", parsed)


# ---------------------------------------------------------------------------
# Posting

def weighted_length(text):
    """(weighted length, has invalid characters) per twitter-text config v3,
    after converting CR LF and lone CR to LF as X does."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if text.isascii() and "." not in text:
        # No URL can be extracted without a dot and every ASCII code point
        # weighs 1, so this equals parse_tweet's count.
        return len(text), False
    result = parse_tweet(text)
    invalid = any(ch in text for ch in "\ufffe\ufeff\uffff")
    return result.weightedLength, invalid


TWEET_KEYS = ("text", "reply", "quote_tweet_id", "media", "poll", "reply_settings",
              "for_super_followers_only", "geo", "direct_message_deep_link", "card_uri",
              "community_id", "share_with_followers", "nullcast", "made_with_ai",
              "paid_partnership", "edit_options")
REPLY_KEYS = ("in_reply_to_tweet_id", "exclude_reply_user_ids", "auto_populate_reply_metadata")
MEDIA_KEYS = ("media_ids", "tagged_user_ids", "description", "title", "preview_media_id",
              "embeddable", "call_to_actions")
REPLY_SETTINGS = ("following", "mentionedUsers", "subscribers", "verified")


def validate_tweet_body(body):
    """Schema errors of a CreatePostsRequest as X words them (list of messages)."""
    errs = []

    def want(path, value, kind):
        expected = {"string": str, "object": dict, "array": list, "boolean": bool, "integer": int}[kind]
        ok = isinstance(value, expected) and not (kind == "integer" and isinstance(value, bool))
        if not ok:
            errs.append("%s: %s found, %s expected" % (path, type_name(value), kind))
        return ok

    if not isinstance(body, dict):
        return ["$: %s found, object expected" % type_name(body)]
    for k in body:
        if k not in TWEET_KEYS:
            errs.append("$.%s: is not defined in the schema and the schema does not allow additional "
                        "properties" % k)
    if "text" in body:
        want("$.text", body["text"], "string")
    if "reply" in body and want("$.reply", body["reply"], "object"):
        reply = body["reply"]
        for k in reply:
            if k not in REPLY_KEYS:
                errs.append("$.reply.%s: is not defined in the schema and the schema does not allow "
                            "additional properties" % k)
        if "in_reply_to_tweet_id" not in reply:
            errs.append("$.reply.in_reply_to_tweet_id: is missing but it is required")
        elif want("$.reply.in_reply_to_tweet_id", reply["in_reply_to_tweet_id"], "string") and \
                not NUMERIC_ID.fullmatch(reply["in_reply_to_tweet_id"]):
            errs.append("$.reply.in_reply_to_tweet_id: does not match the regex pattern ^[0-9]{1,19}$")
        if "exclude_reply_user_ids" in reply and want("$.reply.exclude_reply_user_ids",
                                                      reply["exclude_reply_user_ids"], "array"):
            for i, v in enumerate(reply["exclude_reply_user_ids"]):
                want("$.reply.exclude_reply_user_ids[%d]" % i, v, "string")
        if "auto_populate_reply_metadata" in reply:
            want("$.reply.auto_populate_reply_metadata", reply["auto_populate_reply_metadata"], "boolean")
    if "quote_tweet_id" in body and want("$.quote_tweet_id", body["quote_tweet_id"], "string") and \
            not NUMERIC_ID.fullmatch(body["quote_tweet_id"]):
        errs.append("$.quote_tweet_id: does not match the regex pattern ^[0-9]{1,19}$")
    if "media" in body and want("$.media", body["media"], "object"):
        media = body["media"]
        for k in media:
            if k not in MEDIA_KEYS:
                errs.append("$.media.%s: is not defined in the schema and the schema does not allow "
                            "additional properties" % k)
        if "media_ids" not in media:
            errs.append("$.media.media_ids: is missing but it is required")
        elif want("$.media.media_ids", media["media_ids"], "array"):
            ids = media["media_ids"]
            if not 1 <= len(ids) <= 4:
                errs.append("$.media.media_ids: there must be a minimum of 1 items and a maximum of 4 "
                            "items in the array")
            for i, v in enumerate(ids):
                if want("$.media.media_ids[%d]" % i, v, "string") and not NUMERIC_ID.fullmatch(v):
                    errs.append("$.media.media_ids[%d]: does not match the regex pattern ^[0-9]{1,19}$" % i)
        if "tagged_user_ids" in media and want("$.media.tagged_user_ids", media["tagged_user_ids"], "array") \
                and len(media["tagged_user_ids"]) > 10:
            errs.append("$.media.tagged_user_ids: there must be a maximum of 10 items in the array")
    if "poll" in body and want("$.poll", body["poll"], "object"):
        poll = body["poll"]
        opts = poll.get("options")
        if opts is None:
            errs.append("$.poll.options: is missing but it is required")
        elif want("$.poll.options", opts, "array"):
            if not 2 <= len(opts) <= 4:
                errs.append("$.poll.options: there must be a minimum of 2 items and a maximum of 4 items "
                            "in the array")
            for i, o in enumerate(opts):
                if want("$.poll.options[%d]" % i, o, "string") and not 1 <= len(o) <= 25:
                    errs.append("$.poll.options[%d]: must be between 1 and 25 characters" % i)
        dm = poll.get("duration_minutes")
        if dm is None:
            errs.append("$.poll.duration_minutes: is missing but it is required")
        elif want("$.poll.duration_minutes", dm, "integer") and not 5 <= dm <= 10080:
            errs.append("$.poll.duration_minutes: must be between 5 and 10080")
    if "reply_settings" in body and want("$.reply_settings", body["reply_settings"], "string") and \
            body["reply_settings"] not in REPLY_SETTINGS:
        errs.append("$.reply_settings: does not have a value in the enumeration [%s]" % ", ".join(REPLY_SETTINGS))
    for k in ("for_super_followers_only", "nullcast", "share_with_followers", "made_with_ai",
              "paid_partnership"):
        if k in body:
            want("$." + k, body[k], "boolean")
    exclusive = [k for k in ("media", "quote_tweet_id", "poll") if k in body]
    if len(exclusive) > 1:
        errs.append("$: only one of %s may be present" % ", ".join(exclusive))
    if "card_uri" in body and any(k in body for k in ("media", "quote_tweet_id", "poll",
                                                      "direct_message_deep_link")):
        errs.append("$.card_uri: may not be combined with media, quote_tweet_id, poll or "
                    "direct_message_deep_link")
    if not errs and "text" not in body and "media" not in body:
        errs.append("$.text: is missing but it is required")
    return errs


def post_tweet(world, req, auth, arg, now, meta):
    cfg = world.config
    if req.content_type != "application/json":
        return invalid_request(world, [{"message": "Requests with bodies must have content-type of "
                                                   "application/json."}], meta=meta)
    try:
        body = json.loads(req.body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return invalid_request(world, [{"message": "Request body is not valid JSON."}], meta=meta)
    errs = validate_tweet_body(body)
    if errs:
        return invalid_request(world, [{"message": m} for m in errs], meta=meta)
    text = body.get("text", "")
    text = unicodedata.normalize("NFC", text)
    media_ids = body.get("media", {}).get("media_ids", []) if "media" in body else []
    length, invalid = weighted_length(text)
    if invalid:
        return invalid_request(world, [param_error("text", [text], "Your Post text contains characters "
                                                   "that are not allowed (U+FFFE, U+FEFF or U+FFFF).")],
                               meta=meta)
    if length > cfg.x_max_length:
        return invalid_request(world, [param_error("text", [text], "Your Post text is too long: its weighted "
                                                   "length is %d and the maximum is %d." %
                                                   (length, cfg.x_max_length))], meta=meta)
    if length == 0 and not media_ids:
        return invalid_request(world, [param_error("text", [text], "Post text must not be empty unless "
                                                   "media is attached.")], meta=meta)
    if media_ids:
        with world.lock:
            refused = not all(M.usable_in_post(world, m, auth.user["id"], now) for m in media_ids) \
                or not P.media_mix_ok(world, media_ids)
        if refused:
            return invalid_request(world, [param_error("media.media_ids", media_ids,
                                                       "Your media IDs are invalid.")], meta=meta)
    reply_to = body.get("reply", {}).get("in_reply_to_tweet_id") if "reply" in body else None
    quote = body.get("quote_tweet_id")
    with_url = P.has_url(text)
    user = auth.user
    app_key = auth.app["consumer_key"] if auth.app else "-"
    with world.lock:
        caps = post_cap_headers(world, user["id"], app_key, now)
        if reply_to is not None and reply_to not in world.x_tweets:
            return problem(403, "Forbidden", "You attempted to reply to a Tweet that is deleted or not visible "
                           "to you.", headers=caps, meta=meta)
        if quote is not None and quote not in world.x_tweets:
            return problem(403, "Forbidden", "You attempted to quote a Tweet that is deleted or not visible "
                           "to you.", headers=caps, meta=meta)
        target = world.x_tweets.get(reply_to) if reply_to is not None else None
        refused = P.v2_refusal(world, text, target, quote, user, caps, meta)
        if refused is not None:
            return refused
        if text and is_duplicate(world.x_texts.get(user["id"]), text, cfg.x_duplicate_window, now):
            meta["duplicate"] = True
            return problem(403, "Forbidden", "You are not allowed to create a Tweet with duplicate content.",
                           headers=caps, meta=meta)
        if cap_exhausted(world, user["id"], app_key, now):
            meta["rate_limited"] = "24hour"
            return problem(429, "Too Many Requests", "Too Many Requests", headers=caps, meta=meta)
        price = P.post_price_key(world, with_url, target, user)
        post = create_post(world, user, text, now, api="2", reply_to=reply_to, quote=quote,
                           media_ids=media_ids, credential=auth.label)
        caps = post_cap_headers(world, user["id"], app_key, now, consume=True)
    meta["post_ids"] = [post["id"]]
    meta["priced"] = {"key": price, "units": 1, "post_id": post["id"]}
    return json_response(201, {"data": {"id": post["id"], "text": post["text"],
                                        "edit_history_tweet_ids": [post["id"]]}},
                         caps, meta=meta)


def is_duplicate(texts, text, window, now):
    if not texts or text not in texts:
        return False
    return window is None or now - texts[text] <= window


def cap_exhausted(world, user_id, app_key, now):
    for scope, key in (("user", user_id), ("app", app_key)):
        spec = world.x_post_caps.get(scope)
        if spec and world.windows.peek(("24h:" + scope, key), spec["window"], now).count >= spec["limit"]:
            return True
    return False


def post_cap_headers(world, user_id, app_key, now, consume=False):
    headers = []
    for scope, key in (("user", user_id), ("app", app_key)):
        spec = world.x_post_caps.get(scope)
        if not spec:
            continue
        w = world.windows.peek(("24h:" + scope, key), spec["window"], now)
        if consume:
            w.count += 1
        prefix = "x-%s-limit-24hour-" % scope
        headers += [(prefix + "limit", str(spec["limit"])),
                    (prefix + "remaining", str(max(0, spec["limit"] - w.count))),
                    (prefix + "reset", str(W.ceil_epoch(w.reset)))]
    return headers


def create_post(world, user, text, now, api, reply_to=None, quote=None, media_ids=(), credential=None):
    """Stores a new post (caller holds the lock)."""
    tid = world.snowflake(now)
    tweet = {"id": tid, "author_id": user["id"], "text": text, "created_at": W.iso_time(now),
             "in_reply_to_tweet_id": reply_to, "quote_tweet_id": quote}
    world.x_tweets[tid] = tweet
    world.x_texts.setdefault(user["id"], {})[text] = now
    post = {"service": "x", "api": api, "id": tid, "text": text, "author_id": user["id"],
            "username": user["username"], "created_at": tweet["created_at"], "time": now,
            "in_reply_to_tweet_id": reply_to, "quote_tweet_id": quote, "media_ids": list(media_ids),
            "credential": credential}
    world.record_post(post)
    return post


def statuses_update(world, req, auth, arg, now, meta):
    cfg = world.config
    params = {}
    for k, v in list(req.query) + list(req.form):
        params[k] = v
    status = params.get("status")
    media_ids = [m for m in params.get("media_ids", "").split(",") if m]
    if status is None and not media_ids:
        return legacy(170, meta=meta)
    text = unicodedata.normalize("NFC", status or "")
    length, invalid = weighted_length(text)
    if invalid or length > cfg.x_max_length:
        return legacy(186, meta=meta)
    if len(media_ids) > 4:
        return legacy(324, meta=meta)
    with world.lock:
        refused = not all(M.usable_in_post(world, m, auth.user["id"], now) for m in media_ids) \
            or not P.media_mix_ok(world, media_ids)
    if refused:
        return legacy(324, meta=meta)
    user = auth.user
    app_key = auth.app["consumer_key"]
    reply_id = params.get("in_reply_to_status_id")
    auto = params.get("auto_populate_reply_metadata", "").lower() in ("true", "1", "t")
    with_url = P.has_url(text)
    with world.lock:
        reply_to = None
        if reply_id:
            target = world.x_tweets.get(reply_id)
            author = world.config.x_users.get(target["author_id"]) if target else None
            mentioned = author is not None and ("@" + author["username"]).lower() in text.lower()
            if auto or mentioned:
                if target is None:
                    return legacy(385, meta=meta)
                reply_to = reply_id
        replied = world.x_tweets.get(reply_to) if reply_to else None
        refused = P.v1_refusal(world, text, replied, user)
        if refused is not None:
            meta["plan"] = "self-serve"
            return legacy(refused[0], status=403, message=refused[1], meta=meta)
        if text and is_duplicate(world.x_texts.get(user["id"]), text, cfg.x_duplicate_window, now):
            meta["duplicate"] = True
            return legacy(187, meta=meta)
        if cap_exhausted(world, user["id"], app_key, now):
            meta["rate_limited"] = "24hour"
            return legacy(185, meta=meta)
        price = P.post_price_key(world, with_url, replied, user)
        post = create_post(world, user, text, now, api="1.1", reply_to=reply_to, media_ids=media_ids,
                           credential=auth.label)
        post_cap_headers(world, user["id"], app_key, now, consume=True)
    meta["post_ids"] = [post["id"]]
    meta["priced"] = {"key": price, "units": 1, "post_id": post["id"]}
    replied_user = world.config.x_users.get(replied["author_id"]) if replied else None
    tweet = {
        "created_at": time.strftime("%a %b %d %H:%M:%S +0000 %Y", time.gmtime(now)),
        "id": int(post["id"]), "id_str": post["id"], "text": text, "truncated": False,
        "entities": {"hashtags": [], "symbols": [], "user_mentions": [], "urls": []},
        "source": '<a href="https://github.com/socialpipe" rel="nofollow">socialpipe sandbox</a>',
        "in_reply_to_status_id": int(reply_to) if reply_to else None,
        "in_reply_to_status_id_str": reply_to,
        "in_reply_to_user_id": int(replied_user["id"]) if replied_user else None,
        "in_reply_to_user_id_str": replied_user["id"] if replied_user else None,
        "in_reply_to_screen_name": replied_user["username"] if replied_user else None,
        "user": v1_user(user), "geo": None, "coordinates": None, "place": None, "contributors": None,
        "is_quote_status": False, "retweet_count": 0, "favorite_count": 0, "favorited": False,
        "retweeted": False, "lang": "en",
    }
    return json_response(200, tweet, meta=meta)


# ---------------------------------------------------------------------------
# App-only token (x-api.md section 10)

def basic_app(world, req):
    """The app whose consumer key and secret an `Authorization: Basic` header
    carries (base64 of the percent-encoded key, a colon, the encoded secret), or None."""
    header = req.header("authorization") or ""
    scheme, _, rest = header.strip().partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(rest.strip(), validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return None
    key, _, secret = decoded.partition(":")
    app = world.config.x_apps.get(urllib.parse.unquote(key))
    if app is None or app["consumer_secret"] != urllib.parse.unquote(secret):
        return None
    return app


def unverified_credentials(meta):
    return json_response(403, {"errors": [{"code": 99, "label": "authenticity_token_error",
                                           "message": "Unable to verify your credentials"}]}, meta=meta)


def app_bearer(world, app):
    """The app's app-only bearer token: its configured one while that is valid,
    else the one issued after it was invalidated (issued now if there is none).
    Caller holds the lock."""
    tables = (world.config.x_bearers, world.x_issued_bearers)
    for table in tables:
        for value, rec in table.items():
            if rec["type"] == "bearer" and rec["consumer_key"] == app["consumer_key"] \
                    and value not in world.revoked:
                return value
    value = "AAAAAAAAAAAAAAAAAAAAA" + secrets.token_urlsafe(60)
    world.x_issued_bearers[value] = {"type": "bearer", "token": value, "consumer_key": app["consumer_key"],
                                     "label": W.token_label(value), "expires": None}
    return value


def oauth2_token(world, req, meta):
    app = basic_app(world, req)
    meta["auth"] = {"scheme": "basic", "outcome": "ok" if app else "bad_credentials"}
    if app is None:
        return unverified_credentials(meta)
    form = dict(req.form)
    if form.get("grant_type") != "client_credentials":
        return json_response(403, {"errors": [{"code": 170, "label": "forbidden_missing_parameter",
                                               "message": "Missing required parameter: grant_type"}]},
                             meta=meta)
    with world.lock:
        value = app_bearer(world, app)
    return json_response(200, {"token_type": "bearer", "access_token": value}, meta=meta)


def oauth2_invalidate_token(world, req, meta):
    """POST /oauth2/invalidate_token: the app's bearer stops working; the next
    POST /oauth2/token hands out a new one."""
    app = basic_app(world, req)
    meta["auth"] = {"scheme": "basic", "outcome": "ok" if app else "bad_credentials"}
    if app is None:
        return unverified_credentials(meta)
    params = dict(req.query + req.form)
    value = params.get("access_token")
    if not value:
        return legacy(170, meta=meta, message="Missing required parameter: access_token")
    rec = world.x_bearer_record(value)
    if rec is None or rec["type"] != "bearer" or rec["consumer_key"] != app["consumer_key"] \
            or value in world.revoked:
        return legacy(89, meta=meta)
    with world.lock:
        world.revoked[value] = True
    return json_response(200, {"access_token": value}, meta=meta)


def invalidate_token(world, req, auth, arg, now, meta):
    """POST /1.1/oauth/invalidate_token, signed with the user token to revoke
    (x-api.md section 9.5)."""
    with world.lock:
        world.revoked[auth.token] = True
    return json_response(200, {"access_token": auth.token}, meta=meta)
