"""The Facebook Graph API (the parts socialpipe uses) as the sandbox serves it,
under /vNN.0/ on the same port as the X API."""
import base64
import datetime
import hashlib
import hmac
import json
import math
import os
import re
import secrets
import time
import urllib.parse

import sandbox_world as W
from sandbox_http import dumps, json_response

JSON_TYPE = "application/json; charset=UTF-8"
VERSION_RE = re.compile(r"/v([0-9]+)\.([0-9]+)(/.*)?$")
MAX_BATCH = 50

# code -> (HTTP status, type, message, is_transient)
ERRORS = {
    1: (500, "OAuthException", "An unknown error occurred", True),
    2: (503, "OAuthException", "An unexpected error has occurred. Please retry your request later.", True),
    3: (400, "OAuthException", "(#3) Application does not have the capability to make this API call.", False),
    4: (403, "OAuthException", "(#4) Application request limit reached", True),
    10: (403, "OAuthException", "(#10) Application does not have permission for this action", False),
    17: (403, "OAuthException", "(#17) User request limit reached", True),
    31: (400, "OAuthException", "This request requires the user to take a pending action", False),
    32: (403, "OAuthException", "(#32) Page request limit reached", True),
    100: (400, "OAuthException", "(#100) Invalid parameter", False),
    102: (400, "OAuthException", "Session key invalid or no longer valid", False),
    104: (400, "OAuthException", "An access token is required to request this resource.", False),
    190: (400, "OAuthException", "Invalid OAuth access token - Cannot parse access token", False),
    200: (403, "OAuthException", "(#200) Permissions error", False),
    341: (400, "OAuthException", "(#341) Application limit reached", True),
    368: (400, "OAuthException", "It looks like you were misusing this feature by going too fast. "
                                 "You\u2019ve been temporarily blocked from using it.", False),
    463: (400, "OAuthException", "The session has expired", False),
    506: (400, "OAuthException", "(#506) Duplicate status message", False),
    613: (400, "OAuthException", "(#613) Calls to this api have exceeded the rate limit.", True),
    2500: (400, "OAuthException", "An active access token must be used to query information about the "
                                  "current user.", False),
    2635: (400, "OAuthException", "(#2635) You are calling a deprecated version of the Graph API. Please "
                                  "update to the latest version.", False),
    80001: (400, "OAuthException", "(#80001) There have been too many calls to this Page account. Wait a "
                                   "bit and try again. For more info, please refer to "
                                   "https://developers.facebook.com/docs/graph-api/overview/rate-limiting.",
            True),
}

SUBCODE_MESSAGES = {
    458: "Error validating access token: User {user} has not authorized application {app}.",
    459: "Error validating access token: You cannot access the app till you log in to www.facebook.com "
         "and follow the instructions given.",
    460: "Error validating access token: The session has been invalidated because the user changed their "
         "password or Facebook has changed the session for security reasons.",
    463: "Error validating access token: Session has expired on {expired}. The current time is {now}.",
    464: "Error validating access token: Sessions for the user  are not allowed because the user is not a "
         "confirmed user.",
    467: "Error validating access token: The session is invalid because the user logged out.",
    492: "Error validating access token: The session is invalid.",
    # The sandbox's wording: Meta's public error table stops at 492 (README section 8).
    493: "Error validating access token: The user's data access for this app has expired. The user must "
         "log in to the app again.",
}
DATA_ACCESS_EXPIRED = 493

PUBLISH_ACTIONS_MESSAGE = ("(#200) This endpoint is deprecated since the required permission "
                           "publish_actions is deprecated")
PAGE_POST_MESSAGE = ("(#200) If posting to a page, requires both pages_read_engagement and "
                     "pages_manage_posts as an admin with sufficient administrative permission")
READ_FEED_MESSAGE = ("(#10) This endpoint requires the 'pages_read_engagement' permission or the 'Page "
                     "Public Content Access' feature. Refer to "
                     "https://developers.facebook.com/docs/apps/review/login-permissions#manage-pages and "
                     "https://developers.facebook.com/docs/apps/review/feature#reference-PAGES_ACCESS for "
                     "details.")
UNSUPPORTED = ("Unsupported {verb} request. Object with ID '{id}' does not exist, cannot be loaded due to "
               "missing permissions, or does not support this operation. Please read the Graph API "
               "documentation at https://developers.facebook.com/docs/graph-api")

USER_FIELDS = ("id", "name", "first_name", "last_name", "email", "short_name")
PAGE_FIELDS = ("id", "name", "category", "access_token", "link", "fan_count", "about", "tasks")
POST_FIELDS = ("id", "message", "created_time", "permalink_url", "is_published", "scheduled_publish_time",
               "link", "from")
DEPRECATED_LINK_FIELDS = ("picture", "name", "caption", "description")


class GraphError(Exception):
    def __init__(self, code, message=None, subcode=None, status=None, type_=None, extra=None, headers=None):
        self.code = code
        self.message = message
        self.subcode = subcode
        self.status = status
        self.type = type_
        self.extra = extra
        self.headers = headers or []
        # The configured token the refused call carried, when one was recognised:
        # its usage headers go on the error answer too.
        self.rec = None


def trace_id():
    return base64.b64encode(os.urandom(9)).decode("ascii").replace("+", "A").replace("/", "B")[:11]


def error_body(code, message=None, subcode=None, type_=None, extra=None):
    status, default_type, default_message, transient = ERRORS.get(code, (400, "OAuthException",
                                                                          "An unknown error occurred", False))
    err = {"message": message or default_message, "type": type_ or default_type, "code": code}
    if subcode is not None:
        err["error_subcode"] = subcode
    err["is_transient"] = transient
    if extra:
        err.update(extra)
    err["fbtrace_id"] = trace_id()
    return status, {"error": err}


def base_headers(version, trace):
    """Graph's own headers; Content-Type comes from json_response (JSON_TYPE)."""
    return [("facebook-api-version", "v%d.0" % version), ("x-fb-trace-id", trace), ("x-fb-rev", "1000000")]


class Call:
    """A Graph request reduced to what the handlers need (a top-level request
    or one item of a batch). `token_place` says where the token travelled:
    "body", "query" or "header" (an item's own body or relative_url, or its
    batch's place when it inherits the batch's token)."""

    def __init__(self, method, version, segments, params, token, scheme, host, batch_item=False,
                 token_place=None):
        self.method = method
        self.version = version
        self.segments = segments
        self.params = params
        self.token = token
        self.scheme = scheme
        self.host = host
        self.batch_item = batch_item
        self.token_place = token_place


# ---------------------------------------------------------------------------
# Routing

def split_version(path):
    """(version, minor, rest segments) of a Graph path, else None."""
    m = VERSION_RE.match(path)
    if not m:
        return None
    rest = (m.group(3) or "/").strip("/")
    segments = [urllib.parse.unquote(s) for s in rest.split("/")] if rest else []
    return int(m.group(1)), int(m.group(2)), segments


def endpoint_key(method, segments):
    n = len(segments)
    if n == 0:
        return "%s /" % method
    first = segments[0]
    if n == 1:
        if first == "debug_token":
            return "%s /debug_token" % method
        return "%s /{id}" % method
    if n == 2 and segments == ["oauth", "access_token"]:
        return "%s /oauth/access_token" % method
    if n == 2 and first == "device" and segments[1] in ("login", "login_status"):
        return "%s /device/%s" % (method, segments[1])
    if n == 2 and segments[1] in ("feed", "posts", "published_posts"):
        return "%s /{id}/%s" % (method, segments[1])
    if n == 2 and segments[1] in ("permissions", "accounts"):
        return "%s /{id}/%s" % (method, segments[1])
    if n == 3 and segments[1] == "permissions":
        return "%s /{id}/permissions/{permission}" % method
    return None


def endpoint_for(method, path):
    split = split_version(path)
    if split is None:
        return "POST /" if method == "POST" and path == "/" else None
    return endpoint_key(method, split[2])


# ---------------------------------------------------------------------------
# Entry point for a top-level HTTP request

def body_params(req):
    """The parameters of a form or JSON body."""
    params = {}
    if req.content_type == "application/json" and req.body:
        try:
            body = json.loads(req.body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            body = None
        if isinstance(body, dict):
            for k, v in body.items():
                params[k] = v if isinstance(v, str) else json.dumps(v)
    else:
        for k, v in req.form:
            params[k] = v
    return params


def request_params(req):
    """Query and body parameters; the body's win."""
    params = dict(req.query)
    params.update(body_params(req))
    return params


def header_token(req):
    header = req.header("authorization")
    if header:
        scheme, _, rest = header.strip().partition(" ")
        if scheme.lower() in ("oauth", "bearer") and rest.strip():
            return rest.strip()
    return None


def request_token(req):
    """(token, where it travelled): the body's, else the query's, else the
    Authorization header's; (None, None) without one."""
    for place, params in (("body", body_params(req)), ("query", dict(req.query))):
        if params.get("access_token"):
            return params["access_token"], place
    header = header_token(req)
    return (header, "header") if header else (None, None)


def handle(world, req):
    cfg = world.config
    meta = {"service": "facebook"}
    trace = trace_id()
    split = split_version(req.path)
    if req.path == "/" and req.method == "POST":
        version, minor, segments = cfg.fb_latest, 0, []
    elif split is None:
        # Unversioned (or malformed-version) paths are refused in Graph's shape,
        # before the token is looked at (README sections 5 and 8).
        meta["endpoint"] = None
        return error_response(GraphError(100, "Unknown path components: %s" % req.path), cfg.fb_latest,
                              trace, meta)
    else:
        version, minor, segments = split
    meta["endpoint"] = endpoint_key(req.method, segments)
    params = request_params(req)
    token, place = request_token(req)
    if version < cfg.fb_oldest:
        msg = ("(#2635) You are calling a deprecated version of the Graph API. Please update to the latest "
               "version: v%d.0." % cfg.fb_latest)
        return error_response(GraphError(2635, msg), cfg.fb_latest, trace, meta)
    if minor != 0 or version > cfg.fb_latest:
        return error_response(GraphError(100, "Unknown path components: /v%d.%d" % (version, minor)),
                              cfg.fb_latest, trace, meta)
    call = Call(req.method, version, segments, params, token, req.scheme, req.host, token_place=place)
    status, body, headers, info = execute(world, call, time.time())
    info.pop("rec", None)
    meta.update(info)
    h = base_headers(version, trace) + headers
    if isinstance(body, dict) and "error" in body:
        body["error"]["fbtrace_id"] = trace
    return json_response(status, body, h, JSON_TYPE, meta)


def error_response(err, version, trace, meta):
    status, body = error_body(err.code, err.message, err.subcode, err.type, err.extra)
    body["error"]["fbtrace_id"] = trace
    headers = base_headers(version, trace) + err.headers
    if err.code == 190:
        headers.append(("WWW-Authenticate", 'OAuth "Facebook Platform" "invalid_token" "%s"'
                        % body["error"]["message"].replace('"', "'")))
    return json_response(err.status or status, body, headers, JSON_TYPE, meta)


def execute(world, call, now):
    """Runs one Graph call: (status, body object, extra headers, log info).
    info["rec"] is the token record whose budget the call counted against
    (not logged; batch() reads it for its own usage headers)."""
    info = {"endpoint": endpoint_key(call.method, call.segments)}
    usage = []
    try:
        if call.segments == [] and call.method == "POST":
            if call.batch_item:
                raise GraphError(100, "(#100) Batch requests cannot be nested")
            return batch(world, call, now, info)
        if call.segments == ["oauth", "access_token"]:
            return 200, oauth_access_token(world, call, now), [], info
        if call.segments in (["device", "login"], ["device", "login_status"]):
            return 200, device_call(world, call, now, info), [], info
        rec = authenticate(world, call, now, info)
        info["rec"] = rec
        usage = count_call(world, rec, now)
        result = dispatch(world, call, rec, now, info)
        if isinstance(result, tuple):
            status, body = result
        else:
            status, body = 200, result
        return status, body, usage, info
    except GraphError as err:
        status, body = error_body(err.code, err.message, err.subcode, err.type, err.extra)
        headers = list(err.headers)
        if not headers:
            # A refused call still reports its token's usage, as it stands
            # (counted when the call got past authentication).
            headers = usage or (usage_now(world, err.rec, now) if err.rec else [])
        if err.code == 190:
            headers.append(("WWW-Authenticate", 'OAuth "Facebook Platform" "invalid_token" "%s"'
                            % body["error"]["message"].replace('"', "'")))
        return err.status or status, body, headers, info


# ---------------------------------------------------------------------------
# Tokens

def _fmt(epoch):
    return time.strftime("%A, %d-%b-%y %H:%M:%S UTC", time.gmtime(epoch))


def token_record(world, value):
    rec = world.config.fb_tokens.get(value)
    if rec is None:
        rec = world.fb_extra_tokens.get(value)
    return rec


def token_state(world, rec, now):
    """'ok', 'revoked', 'expired', or 'data_access_expired' for a token whose
    data access has lapsed and that is refused for it (data_access_lapse
    "refuse", README section 5)."""
    state = world.token_state(rec["token"], rec.get("expires"), now)
    if state == "ok" and rec.get("data_access_lapse") == "refuse" and data_access_lapsed(rec, now):
        return "data_access_expired"
    return state


def token_error(world, rec, state, now):
    """The 190 error for a revoked or expired token, or one whose data access expired."""
    if state == "data_access_expired":
        return GraphError(190, SUBCODE_MESSAGES[DATA_ACCESS_EXPIRED], DATA_ACCESS_EXPIRED)
    if state == "expired":
        expired_at = rec["expires"] if rec.get("expires") is not None and rec["expires"] <= now else now
        msg = SUBCODE_MESSAGES[463].format(expired=_fmt(expired_at), now=_fmt(now))
        return GraphError(190, msg, 463)
    subcode = world.revoked.get(rec["token"], 460)
    if not isinstance(subcode, int):
        subcode = 460
    template = SUBCODE_MESSAGES.get(subcode, SUBCODE_MESSAGES[460])
    return GraphError(190, template.format(user=rec.get("user_id", ""), app=rec["app_id"]), subcode)


def authenticate(world, call, now, info):
    value = call.token
    if not value:
        info["auth"] = {"scheme": "facebook", "outcome": "missing"}
        if call.segments[:1] == ["me"]:
            # /me names "the current user", which only a token can say.
            raise GraphError(2500)
        raise GraphError(104)
    rec = token_record(world, value)
    if rec is None:
        info["auth"] = {"scheme": "facebook", "outcome": "invalid"}
        if "|" in value:
            raise GraphError(190, "Invalid OAuth access token signature.")
        raise GraphError(190)
    auth = {"scheme": "facebook", "outcome": "ok", "credential": rec["label"], "token_type": rec["type"]}
    if rec.get("user_id"):
        auth["user_id"] = rec["user_id"]
    if rec.get("page_id"):
        auth["page_id"] = rec["page_id"]
    info["auth"] = auth
    state = token_state(world, rec, now)
    try:
        if state != "ok":
            auth["outcome"] = state
            raise token_error(world, rec, state, now)
        check_proof(world, call, rec, now, auth)
    except GraphError as err:
        err.rec = rec
        raise
    if data_access_lapsed(rec, now):
        auth["data_access"] = "expired"
    return rec


def data_access_lapsed(rec, now):
    """Whether the token's data access has run out (README section 8): the
    token still authenticates, but every permission reads as expired."""
    until = rec.get("data_access_expires")
    return rec["type"] != "APP" and until is not None and now >= until


def check_proof(world, call, rec, now, auth):
    if rec["type"] == "APP":
        return
    app = world.config.fb_apps[rec["app_id"]]
    proof = call.params.get("appsecret_proof")
    if proof is None:
        if app.get("require_appsecret_proof"):
            auth["outcome"] = "appsecret_proof_missing"
            raise GraphError(100, "API calls from the server require an appsecret_proof argument",
                             type_="GraphMethodException")
        return
    stamp = call.params.get("appsecret_time")
    message = rec["token"]
    fresh = True
    if stamp is not None:
        fresh = stamp.isdigit() and abs(now - int(stamp)) <= world.config.fb_proof_max_age
        message = rec["token"] + "|" + stamp
    expected = hmac.new(app["secret"].encode(), message.encode(), hashlib.sha256).hexdigest()
    if not fresh or not hmac.compare_digest(expected, proof):
        auth["outcome"] = "appsecret_proof_invalid" if fresh else "appsecret_time_expired"
        raise GraphError(100, "Invalid appsecret_proof provided in the API argument",
                         type_="GraphMethodException")


def effective_scopes(world, rec):
    """A token's scopes, less any the user has since declined or let expire
    (all of them once the token's data access has lapsed)."""
    scopes = rec.get("scopes", [])
    uid = rec.get("user_id")
    if not uid:
        return list(scopes)
    if data_access_lapsed(rec, time.time()):
        return []
    perms = world.fb_permissions.get(uid, {})
    return [s for s in scopes if perms.get(s, "granted") == "granted"]


def pct(count, limit):
    if limit <= 0:
        return 100
    return min(100, int(math.ceil(count * 100.0 / limit)))


def _compact(obj):
    return json.dumps(obj, separators=(",", ":"))


def regain_minutes(reset, now):
    return max(1, int(math.ceil((reset - now) / 60.0)))


def page_usage_entry(count, limit, blocked_until, now):
    """One X-Business-Use-Case-Usage entry. While the Page is refused calls,
    estimated_time_to_regain_access is the minutes until its window closes
    (graph-api.md section 8); otherwise 0."""
    p = pct(count, limit)
    wait = regain_minutes(blocked_until, now) if blocked_until is not None else 0
    return [{"type": "pages", "call_count": p, "total_cputime": p // 2, "total_time": p // 2,
             "estimated_time_to_regain_access": wait}]


def app_usage_header(p):
    return ("X-App-Usage", _compact({"call_count": p, "total_cputime": p // 2, "total_time": p // 2}))


def count_call(world, rec, now):
    """Counts the call against the app/user or Page budget; returns the usage
    headers or raises the throttling error (carrying them)."""
    limits = world.fb_limits
    with world.lock:
        if rec["type"] == "PAGE":
            spec = limits.get("page")
            if not spec:
                return []
            allowed, limit, remaining, reset = world.windows.take(("fb:page", rec["page_id"]),
                                                                  spec["limit"], spec["window"], now)
            count = limit - remaining if allowed else limit
            usage = {rec["page_id"]: page_usage_entry(count, limit, None if allowed else reset, now)}
            headers = [("X-Business-Use-Case-Usage", _compact(usage))]
            if not allowed:
                raise GraphError(32, headers=headers)
            return headers
        app_spec = limits.get("app")
        user_spec = limits.get("user") if rec["type"] == "USER" else None
        app_ok, user_ok, p = True, True, 0
        if user_spec:
            user_ok, limit, remaining, _ = world.windows.take(("fb:user", rec["user_id"]),
                                                              user_spec["limit"], user_spec["window"], now)
        if app_spec and user_ok:
            app_ok, limit, remaining, _ = world.windows.take(("fb:app", rec["app_id"]),
                                                             app_spec["limit"], app_spec["window"], now)
        if app_spec:
            w = world.windows.peek(("fb:app", rec["app_id"]), app_spec["window"], now)
            p = pct(w.count if app_ok else app_spec["limit"], app_spec["limit"])
        headers = [app_usage_header(p)] if app_spec else []
        if not user_ok:
            raise GraphError(17, headers=headers)
        if not app_ok:
            raise GraphError(4, headers=headers)
        return headers


def page_usage_now(world, page_id, now):
    """The X-Business-Use-Case-Usage entry of a Page as it stands (no call counted), or None."""
    spec = world.fb_limits.get("page")
    if not spec:
        return None
    w = world.windows.current(("fb:page", page_id), now)
    if w is None:
        return page_usage_entry(0, spec["limit"], None, now)
    return page_usage_entry(w.count, spec["limit"], w.reset if w.refused else None, now)


def app_usage_now(world, app_id, now):
    spec = world.fb_limits.get("app")
    if not spec:
        return None
    w = world.windows.current(("fb:app", app_id), now)
    return app_usage_header(pct(w.count if w else 0, spec["limit"]))


def usage_now(world, rec, now):
    """The usage headers of a token's budget as it stands, without counting a call."""
    with world.lock:
        if rec["type"] == "PAGE":
            entry = page_usage_now(world, rec["page_id"], now)
            return [("X-Business-Use-Case-Usage", _compact({rec["page_id"]: entry}))] if entry else []
        header = app_usage_now(world, rec["app_id"], now)
        return [header] if header else []


def batch_usage(world, recs, now):
    """The batch's own usage headers: every Page budget its calls used, and the
    app budget of the first user or app token among them (the top-level token
    comes first)."""
    pages = {}
    app_rec = next((r for r in recs if r["type"] != "PAGE"), None)
    headers = []
    with world.lock:
        if app_rec is not None:
            header = app_usage_now(world, app_rec["app_id"], now)
            if header:
                headers.append(header)
        for rec in recs:
            if rec["type"] == "PAGE" and rec["page_id"] not in pages:
                entry = page_usage_now(world, rec["page_id"], now)
                if entry:
                    pages[rec["page_id"]] = entry
    if pages:
        headers.append(("X-Business-Use-Case-Usage", _compact(pages)))
    return headers


# ---------------------------------------------------------------------------
# Handlers

def dispatch(world, call, rec, now, info):
    seg = call.segments
    method = call.method
    if seg == ["debug_token"] and method == "GET":
        return debug_token(world, call, rec, now)
    if not seg:
        raise GraphError(100, "Unsupported get request. Please read the Graph API documentation at "
                              "https://developers.facebook.com/docs/graph-api", type_="GraphMethodException")
    node_id = seg[0]
    kind, node = resolve_node(world, rec, node_id)
    if len(seg) == 1:
        if method != "GET":
            raise unsupported(method, node_id)
        return read_node(world, call, rec, kind, node, node_id)
    edge = seg[1]
    if edge in ("feed", "posts", "published_posts"):
        if method == "POST" and edge == "feed":
            return post_feed(world, call, rec, kind, node, node_id, now, info)
        if method == "GET":
            return read_feed(world, call, rec, kind, node, node_id, edge)
        raise unsupported(method, node_id)
    if edge == "permissions" and len(seg) <= 3:
        name = seg[2] if len(seg) == 3 else None
        if method == "GET":
            return read_permissions(world, rec, kind, node, node_id, name, call.params)
        if method == "DELETE":
            return revoke_permissions(world, rec, kind, node, node_id, name)
        raise unsupported(method, node_id)
    if edge == "accounts" and len(seg) == 2 and method == "GET":
        return accounts(world, rec, kind, node, node_id)
    if kind is None:
        raise unsupported(method, node_id)
    raise GraphError(100, "Unknown path components: /%s" % "/".join(seg[1:]))


def unsupported(method, node_id):
    return GraphError(100, UNSUPPORTED.format(verb=method.lower(), id=node_id), 33,
                      type_="GraphMethodException")


def resolve_node(world, rec, node_id):
    """('user'|'page'|'post'|None, object) for an id; 'me' follows the token."""
    cfg = world.config
    if node_id == "me":
        if rec["type"] == "USER":
            return "user", cfg.fb_users[rec["user_id"]]
        if rec["type"] == "PAGE":
            return "page", cfg.fb_pages[rec["page_id"]]
        raise GraphError(2500)
    if node_id in cfg.fb_users:
        return "user", cfg.fb_users[node_id]
    if node_id in cfg.fb_pages:
        return "page", cfg.fb_pages[node_id]
    post = world.fb_posts.get(node_id)
    if post is not None:
        return "post", post
    return None, None


def requested_fields(call, allowed, node_type):
    raw = call.params.get("fields")
    if not raw:
        return None
    fields = [f.strip() for f in raw.split(",") if f.strip()]
    for f in fields:
        if f not in allowed:
            raise GraphError(100, "(#100) Tried accessing nonexisting field (%s) on node type (%s)"
                             % (f, node_type))
    return fields


def page_token_for(world, page_id, rec):
    """The Page token a user token is given for a Page its user has a role on.
    A configured long-lived user token gets the configured Page token (if any);
    any other user token gets one minted for it, which never expires when the
    user token is long-lived and expires with it otherwise (graph-api.md 5.2)."""
    if rec["token"] in world.config.fb_tokens and rec.get("long_lived", True):
        for value, t in world.config.fb_tokens.items():
            if t["type"] == "PAGE" and t["page_id"] == page_id and t["user_id"] == rec["user_id"] \
                    and t["app_id"] == rec["app_id"] and "pages_manage_posts" in t.get("scopes", []):
                return value
        return None
    key = (rec["token"], page_id)
    with world.lock:
        value = world.fb_minted_page_tokens.get(key)
        if value is None:
            value = new_graph_token()
            long_lived = rec.get("long_lived", True)
            world.fb_extra_tokens[value] = {
                "token": value, "type": "PAGE", "app_id": rec["app_id"], "user_id": rec["user_id"],
                "page_id": page_id, "scopes": list(rec.get("scopes", [])),
                "expires": None if long_lived else rec.get("expires"), "issued_at": int(time.time()),
                "data_access_expires": rec["data_access_expires"], "long_lived": long_lived,
                "label": "%s:page:%s" % (rec["label"], page_id)}
            world.fb_minted_page_tokens[key] = value
    return value


def new_graph_token():
    return "EAA" + base64.urlsafe_b64encode(os.urandom(30)).decode().rstrip("=")


def read_node(world, call, rec, kind, node, node_id):
    if kind is None:
        raise unsupported("GET", node_id)
    if kind == "user":
        fields = requested_fields(call, USER_FIELDS, "User") or ["id", "name"]
        out = {}
        for f in fields:
            if f == "id":
                out["id"] = node["id"]
            elif f == "name":
                out["name"] = node["name"]
            elif f in ("first_name", "short_name"):
                out[f] = node["name"].split(" ")[0]
            elif f == "last_name":
                out[f] = node["name"].split(" ")[-1]
            elif f == "email" and world.fb_permissions.get(node["id"], {}).get("email") == "granted" \
                    and not data_access_lapsed(rec, time.time()):
                out[f] = node.get("email", "user%s@example.com" % node["id"])
        return out
    if kind == "page":
        fields = requested_fields(call, PAGE_FIELDS, "Page") or ["id", "name"]
        out = {}
        for f in fields:
            if f in ("id", "name", "category", "about"):
                out[f] = node.get(f, "")
            elif f == "link":
                out[f] = "https://www.facebook.com/%s" % node["id"]
            elif f == "fan_count":
                out[f] = node.get("fan_count", 0)
            elif f in ("access_token", "tasks"):
                uid = rec.get("user_id")
                tasks = node["roles"].get(uid, []) if uid else []
                if rec["type"] == "USER" and tasks:
                    value = page_token_for(world, node["id"], rec)
                    if f == "tasks":
                        out[f] = tasks
                    elif value:
                        out[f] = value
        out.setdefault("id", node["id"])
        return out
    fields = requested_fields(call, POST_FIELDS, "Post") or ["id", "message", "created_time"]
    return post_fields(world, node, fields)


def post_fields(world, post, fields):
    out = {}
    for f in fields:
        if f == "id":
            out["id"] = post["id"]
        elif f == "message":
            if post.get("message") is not None:
                out["message"] = post["message"]
        elif f == "created_time":
            out[f] = post["created_time"]
        elif f == "permalink_url":
            out[f] = post["permalink_url"]
        elif f == "is_published":
            out[f] = post["published"]
        elif f == "scheduled_publish_time" and post.get("scheduled_publish_time"):
            out[f] = post["scheduled_publish_time"]
        elif f == "link" and post.get("link"):
            out[f] = post["link"]
        elif f == "from":
            page = world.config.fb_pages[post["page_id"]]
            out[f] = {"name": page["name"], "id": page["id"]}
    return out


def truthy(value, name):
    if isinstance(value, bool):
        return value
    v = str(value).strip().lower()
    if v in ("true", "1"):
        return True
    if v in ("false", "0"):
        return False
    raise GraphError(100, "(#100) Param %s must be a boolean" % name)


def parse_schedule(value):
    v = str(value).strip()
    if re.fullmatch(r"[0-9]+", v):
        return int(v)
    try:
        dt = datetime.datetime.fromisoformat(v.replace("Z", "+00:00"))
    except ValueError:
        raise GraphError(100, "(#100) Param scheduled_publish_time must be a valid unix timestamp or ISO "
                              "8601 string")
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=datetime.timezone.utc)
    return int(dt.timestamp())


def post_feed(world, call, rec, kind, node, node_id, now, info):
    cfg = world.config
    if kind is None:
        raise unsupported("POST", node_id)
    if kind == "user" or rec["type"] != "PAGE":
        # A user token, or any post to a user timeline: the message says the
        # endpoint is gone; the real fix is a Page token.
        raise GraphError(200, PUBLISH_ACTIONS_MESSAGE)
    if kind != "page":
        raise unsupported("POST", node_id)
    page = node
    scopes = effective_scopes(world, rec)
    tasks = page["roles"].get(rec["user_id"], [])
    if (rec["page_id"] != page["id"] or "pages_manage_posts" not in scopes
            or "pages_read_engagement" not in scopes or "CREATE_CONTENT" not in tasks):
        raise GraphError(200, PAGE_POST_MESSAGE)
    if page.get("blocked"):
        raise GraphError(368, subcode=1390008, extra={
            "error_user_title": "You Can't Use This Feature Right Now",
            "error_user_msg": "It looks like you were misusing this feature by going too fast. You\u2019ve "
                              "been temporarily blocked from using it."})
    p = call.params
    message = p.get("message")
    link = p.get("link")
    if not message and not link:
        raise GraphError(100, "(#100) Missing message or attachment")
    if link is not None:
        parsed = urllib.parse.urlparse(link)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise GraphError(100, "(#100) Param link must be a valid URL")
    published = truthy(p["published"], "published") if "published" in p else True
    scheduled = None
    if "scheduled_publish_time" in p:
        if published:
            raise GraphError(100, "(#100) Cannot specify a scheduled publish time on a published post")
        scheduled = parse_schedule(p["scheduled_publish_time"])
        if not cfg.fb_scheduled_min <= scheduled - now <= cfg.fb_scheduled_max:
            raise GraphError(100, "(#100) The specified scheduled publish time is invalid.")
    fields = requested_fields(call, POST_FIELDS, "Post")
    ignored = [f for f in DEPRECATED_LINK_FIELDS if f in p]
    with world.lock:
        feed_spec = world.fb_limits.get("feed_post")
        if feed_spec:
            w = world.windows.peek(("fb:feed", page["id"]), feed_spec["window"], now)
            if w.count >= feed_spec["limit"]:
                # The Page's usage as it stands, with the minutes until the
                # posting window closes as the time to regain access.
                entry = page_usage_now(world, page["id"], now) or page_usage_entry(0, 1, None, now)
                entry[0]["estimated_time_to_regain_access"] = regain_minutes(w.reset, now)
                raise GraphError(613, headers=[("X-Business-Use-Case-Usage", _compact({page["id"]: entry}))])
        key = (message or "", link or "")
        seen = world.fb_texts.setdefault(page["id"], {})
        if key in seen and (cfg.fb_duplicate_window is None or now - seen[key] <= cfg.fb_duplicate_window):
            info["duplicate"] = True
            raise GraphError(506)
        if feed_spec:
            w.count += 1
        seen[key] = now
        number = world.snowflake(now)
        post_id = "%s_%s" % (page["id"], number)
        post = {"service": "facebook", "id": post_id, "page_id": page["id"], "text": message or "",
                "message": message, "link": link, "published": published,
                "scheduled_publish_time": scheduled, "created_time": W.graph_time(now), "time": now,
                "permalink_url": "https://www.facebook.com/%s/posts/%s" % (page["id"], number),
                "credential": rec["label"], "ignored_fields": ignored, "batch_item": call.batch_item}
        world.fb_posts[post_id] = post
        world.fb_page_posts[page["id"]].append(post)
        world.record_post(post)
    info.setdefault("post_ids", []).append(post_id)
    out = {"id": post_id}
    if fields:
        out.update(post_fields(world, post, fields))
    return out


def read_feed(world, call, rec, kind, node, node_id, edge):
    if kind != "page":
        if kind is None:
            raise unsupported("GET", node_id)
        raise GraphError(100, "(#100) Tried accessing nonexisting field (%s) on node type (%s)"
                         % (edge, kind.capitalize()))
    if rec["type"] != "PAGE" or rec["page_id"] != node["id"] or \
            "pages_read_engagement" not in effective_scopes(world, rec):
        raise GraphError(10, READ_FEED_MESSAGE)
    fields = requested_fields(call, POST_FIELDS, "Post") or ["id", "message", "created_time"]
    try:
        limit = int(call.params.get("limit", 25))
    except ValueError:
        raise GraphError(100, "(#100) Param limit must be an integer")
    limit = max(1, min(100, limit))
    with world.lock:
        posts = [p for p in reversed(world.fb_page_posts.get(node["id"], [])) if p["published"]]
    start = 0
    after = call.params.get("after")
    if after:
        try:
            start = int(base64.urlsafe_b64decode(after + "==").decode())
        except (ValueError, UnicodeDecodeError):
            raise GraphError(100, "(#100) The after cursor is invalid")
    page = posts[start:start + limit]
    body = {"data": [post_fields(world, p, fields) for p in page]}
    if page:
        enc = lambda i: base64.urlsafe_b64encode(str(i).encode()).decode().rstrip("=")
        paging = {"cursors": {"before": enc(start), "after": enc(start + len(page))}}
        if start + len(page) < len(posts):
            q = {"access_token": call.token, "limit": str(limit), "after": enc(start + len(page))}
            if call.params.get("fields"):
                q["fields"] = call.params["fields"]
            paging["next"] = "%s://%s/v%d.0/%s/%s?%s" % (call.scheme, call.host, call.version, node_id, edge,
                                                        urllib.parse.urlencode(q))
        body["paging"] = paging
    return body


def permission_subject(world, rec, kind, node, node_id):
    if kind == "page":
        raise GraphError(100, "(#100) Tried accessing nonexisting field (permissions) on node type (Page)")
    if kind != "user":
        raise unsupported("GET", node_id)
    if rec["type"] == "USER" and rec["user_id"] != node["id"]:
        raise unsupported("GET", node_id)
    if rec["type"] == "PAGE":
        raise unsupported("GET", node_id)
    return node["id"]


def read_permissions(world, rec, kind, node, node_id, name, params):
    uid = permission_subject(world, rec, kind, node, node_id)
    perms = world.fb_permissions.get(uid, {})
    lapsed = data_access_lapsed(rec, time.time())
    data = [{"permission": p, "status": "expired" if lapsed and s == "granted" else s}
            for p, s in perms.items()]
    if name is not None:
        data = [d for d in data if d["permission"] == name]
    if params.get("permission"):
        data = [d for d in data if d["permission"] == params["permission"]]
    if params.get("status"):
        data = [d for d in data if d["status"] == params["status"]]
    return {"data": data}


def revoke_permissions(world, rec, kind, node, node_id, name):
    uid = permission_subject(world, rec, kind, node, node_id)
    with world.lock:
        perms = world.fb_permissions.setdefault(uid, {})
        if name is not None:
            if name in perms:
                perms[name] = "declined"
        else:
            for value, t in list(world.config.fb_tokens.items()) + list(world.fb_extra_tokens.items()):
                if t.get("user_id") == uid and t["app_id"] == rec["app_id"]:
                    world.revoked[value] = 458
    return {"success": True}


def accounts(world, rec, kind, node, node_id):
    if kind != "user" or rec["type"] != "USER" or rec["user_id"] != node["id"]:
        if kind is None:
            raise unsupported("GET", node_id)
        raise GraphError(100, "(#100) Tried accessing nonexisting field (accounts) on node type (%s)"
                         % (kind or "Object").capitalize())
    data = []
    if "pages_show_list" in effective_scopes(world, rec):
        for page in world.config.fb_pages.values():
            tasks = page["roles"].get(node["id"])
            if not tasks:
                continue
            entry = {"id": page["id"], "name": page["name"], "category": page.get("category", ""),
                     "category_list": [], "tasks": tasks}
            value = page_token_for(world, page["id"], rec)
            if value:
                entry["access_token"] = value
            data.append(entry)
    return {"data": data, "paging": {"cursors": {"before": "QVFIUmJlZA", "after": "QVFIUmFmdGVy"}}}


def debug_token(world, call, rec, now):
    if not call.params.get("input_token"):
        raise GraphError(100, "(#100) The parameter input_token is required")
    value = call.params["input_token"]
    target = token_record(world, value)
    if target is None:
        return {"data": {"error": {"code": 190, "message": "Invalid OAuth access token."},
                         "is_valid": False, "scopes": []}}
    if target["app_id"] != rec["app_id"]:
        raise GraphError(100, "(#100) The App_id in the input_token did not match the Viewing App")
    app = world.config.fb_apps[target["app_id"]]
    expires = target.get("expires")
    data = {"app_id": target["app_id"], "type": target["type"], "application": app["name"],
            "data_access_expires_at": int(target["data_access_expires"]),
            "expires_at": int(expires) if expires is not None else 0, "is_valid": True,
            "issued_at": target["issued_at"]}
    state = token_state(world, target, now)
    if state != "ok":
        err = token_error(world, target, state, now)
        data["is_valid"] = False
        data["error"] = {"code": 190, "message": err.message, "subcode": err.subcode}
    scopes = effective_scopes(world, target)
    data["scopes"] = scopes
    if target["type"] in ("USER", "PAGE"):
        if target["type"] == "PAGE":
            targets = [target["page_id"]]
        else:
            targets = [p["id"] for p in world.config.fb_pages.values() if target["user_id"] in p["roles"]]
        data["granular_scopes"] = [{"scope": s, "target_ids": targets} if s.startswith("pages_") else
                                   {"scope": s} for s in scopes]
        data["user_id"] = target["user_id"]
    if target["type"] == "PAGE":
        data["profile_id"] = target["page_id"]
    return {"data": data}


def oauth_access_token(world, call, now):
    p = call.params
    app = world.config.fb_apps.get(p.get("client_id", ""))
    if app is None:
        raise GraphError(101, "Error validating application. Invalid application ID.")
    if p.get("client_secret") != app["secret"]:
        raise GraphError(1, "Error validating client secret.", status=400)
    grant = p.get("grant_type")
    if grant == "client_credentials":
        return {"access_token": "%s|%s" % (app["id"], app["secret"]), "token_type": "bearer"}
    if grant == "fb_exchange_token":
        old = p.get("fb_exchange_token", "")
        rec = token_record(world, old)
        if rec is None or rec["app_id"] != app["id"] or rec["type"] != "USER":
            raise GraphError(190)
        state = token_state(world, rec, now)
        if state != "ok":
            raise token_error(world, rec, state, now)
        value = new_graph_token()
        lifetime = W.LONG_LIVED_SECONDS
        new = dict(rec, token=value, label=rec["label"] + "-long-lived", expires=now + lifetime,
                   issued_at=int(now), long_lived=True)
        with world.lock:
            world.fb_extra_tokens[value] = new
        return {"access_token": value, "token_type": "bearer", "expires_in": lifetime}
    raise GraphError(100, "(#100) Missing or unsupported grant_type")


# ---------------------------------------------------------------------------
# Login for Devices (graph-api.md section 5.3)

DEVICE_VERIFICATION_URI = "https://www.facebook.com/device"
USER_CODE_LETTERS = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"   # no 0/O, 1/I
USER_CODE_LENGTH = 8


def device_error(code, subcode, message, title, user_message):
    """The errors of login_status, as Meta's Login for Devices guide shows them."""
    return GraphError(code, message, subcode, status=400,
                      extra={"error_user_title": title, "error_user_msg": user_message})


def device_pending():
    return device_error(31, 1349174, "This request requires the user to take a pending action",
                        "Device Login Authorization Pending",
                        "User has not yet authorized your application. Continue polling.")


def device_slow_down(interval):
    return device_error(17, 1349172, "User request limit reached", "OAuth Device Excessive Polling",
                        "Your device is polling too frequently. Space your requests with a minimum interval "
                        "of %d seconds." % interval)


def device_expired():
    return device_error(463, 1349152, "The session has expired", "Activation Code Expired",
                        "The code you entered has expired. Please go back to your device for a new code and "
                        "try again.")


def device_app(world, call, info):
    """The app whose client token (APP_ID|CLIENT_TOKEN) the call carries as
    access_token in its body, the one place Login for Devices documents: a
    token in the query string or the Authorization header is not looked at
    (README section 8)."""
    value = call.token if call.token_place == "body" else None
    if not value:
        info["auth"] = {"scheme": "facebook", "outcome": "missing"}
        if call.token:
            info["auth"]["token_in"] = call.token_place
        raise GraphError(104)
    app_id, sep, client_token = value.partition("|")
    app = world.config.fb_apps.get(app_id) if sep else None
    if app is None or not app.get("client_token") or not hmac.compare_digest(client_token, app["client_token"]):
        info["auth"] = {"scheme": "facebook", "outcome": "invalid"}
        raise GraphError(190, "Invalid OAuth access token signature." if sep else None)
    info["auth"] = {"scheme": "facebook", "outcome": "ok", "credential": "client:%s" % app_id,
                    "token_type": "CLIENT"}
    if not app.get("login_from_devices", True):
        raise GraphError(3)
    return app


def device_call(world, call, now, info):
    if call.method != "POST":
        raise GraphError(100, "(#100) Unsupported %s request. Use POST." % call.method.lower(),
                         type_="GraphMethodException")
    app = device_app(world, call, info)
    if call.segments[1] == "login":
        return device_login(world, call, app, now)
    return device_login_status(world, call, app, now)


def device_login(world, call, app, now):
    """POST /device/login: a code for the device, a user code for the person."""
    raw = call.params.get("scope", "")
    scopes = list(dict.fromkeys(s.strip() for s in raw.split(",") if s.strip()))
    with world.lock:
        taken = set(d["user_code"] for d in world.fb_device_logins.values())
        user_code = None
        while user_code is None or user_code in taken:
            user_code = "".join(secrets.choice(USER_CODE_LETTERS) for _ in range(USER_CODE_LENGTH))
        code = secrets.token_hex(16)
        world.fb_device_logins[code] = {
            "code": code, "user_code": user_code, "app_id": app["id"], "scopes": scopes,
            "expires": now + world.device_expires_in, "interval": world.device_interval, "state": "pending",
            "last_poll": None, "user_id": None, "granted": None}
        return {"code": code, "user_code": user_code, "verification_uri": DEVICE_VERIFICATION_URI,
                "expires_in": world.device_expires_in, "interval": world.device_interval}


def device_login_status(world, call, app, now):
    """POST /device/login_status: pending, slow down, expired, or the user token."""
    code = call.params.get("code")
    if not code:
        raise GraphError(100, "(#100) The parameter code is required")
    lifetime = world.config.fb_device_token_lifetime
    with world.lock:
        login = world.fb_device_logins.get(code)
        if login is None or login["app_id"] != app["id"]:
            raise GraphError(100, "(#100) Invalid device login code")
        # Denied, already answered with a token, or past expires_in: start again.
        if now >= login["expires"] or login["state"] in ("denied", "delivered"):
            raise device_expired()
        last, login["last_poll"] = login["last_poll"], now
        if last is not None and now - last < login["interval"]:
            raise device_slow_down(login["interval"])
        if login["state"] == "pending":
            raise device_pending()
        login["state"] = "delivered"
        value = new_graph_token()
        world.fb_extra_tokens[value] = {
            "token": value, "type": "USER", "app_id": app["id"], "user_id": login["user_id"],
            "scopes": list(login["granted"]), "expires": now + lifetime, "issued_at": int(now),
            "data_access_expires": int(now) + W.DATA_ACCESS_DAYS * 86400, "long_lived": True,
            "label": W.token_label(value)}
    return {"access_token": value, "expires_in": lifetime}


def approve_device(world, spec, now):
    """Control: the person enters the user code and approves (returns the
    permissions the token will carry) or cancels (None). Caller holds the lock.

    public_profile and the permissions asked become granted, except those the
    user declined before (Login does not ask again without auth_type=rerequest)
    or declines now (`decline`)."""
    if not isinstance(spec, dict):
        raise ValueError("approve_device must be an object")
    unknown = sorted(k for k in spec if k not in ("user_code", "user", "deny", "decline"))
    if unknown:
        raise ValueError("approve_device: unknown keys %s (known: user_code, user, deny, decline)"
                         % ", ".join(unknown))
    pending = [d for d in world.fb_device_logins.values() if d["state"] == "pending" and now < d["expires"]]
    user_code = spec.get("user_code")
    if user_code is None:
        if len(pending) != 1:
            raise ValueError("approve_device: give user_code (%d pending)" % len(pending))
        login = pending[0]
    else:
        login = next((d for d in pending if isinstance(user_code, str)
                      and d["user_code"] == user_code.strip().upper()), None)
        if login is None:
            raise ValueError("approve_device: no pending device login with user_code %r" % (user_code,))
    if spec.get("deny"):
        login["state"] = "denied"
        return None
    user_id = spec.get("user")
    if not isinstance(user_id, str) or user_id not in world.config.fb_users:
        raise ValueError("approve_device: user must be a configured Facebook user id")
    decline = spec.get("decline", [])
    if not isinstance(decline, list) or not all(isinstance(p, str) for p in decline):
        raise ValueError("approve_device: decline must be a list of permission names")
    perms = world.fb_permissions.setdefault(user_id, {})
    asked = list(dict.fromkeys(["public_profile"] + login["scopes"]))
    for name in asked:
        if name in decline:
            perms[name] = "declined"
        elif perms.get(name) != "declined":
            perms[name] = "granted"
    granted = [name for name in asked if perms.get(name) == "granted"]
    login.update(state="approved", user_id=user_id, granted=granted)
    return granted


# ---------------------------------------------------------------------------
# Batch

RESULT_REF = re.compile(r"\{result=([A-Za-z0-9_\-]+):(\$[^}]*)\}")


def json_path(value, path):
    """The values a simple JSONPath ($.a.b, $.data.*.id) selects."""
    nodes = [value]
    for part in path.split(".")[1:]:
        nxt = []
        for n in nodes:
            if part == "*":
                if isinstance(n, list):
                    nxt.extend(n)
                elif isinstance(n, dict):
                    nxt.extend(n.values())
            elif isinstance(n, dict) and part in n:
                nxt.append(n[part])
            elif isinstance(n, list) and part.isdigit() and int(part) < len(n):
                nxt.append(n[int(part)])
        nodes = nxt
    return [str(n) for n in nodes if not isinstance(n, (dict, list))]


def batch(world, call, now, info):
    raw = call.params.get("batch")
    rec_top = None
    if call.token:
        # An unusable top-level token fails the whole batch, as Graph does.
        rec_top = authenticate(world, call, now, info)
    try:
        if raw is None:
            raise GraphError(100, "(#100) The parameter batch is required")
        try:
            items = json.loads(raw)
        except ValueError:
            raise GraphError(100, "(#100) The parameter batch must be a JSON array")
        if not isinstance(items, list) or not items:
            raise GraphError(100, "(#100) The parameter batch must be a non-empty JSON array")
        if len(items) > MAX_BATCH:
            raise GraphError(100, "(#100) Too many requests in batch message. Maximum batch size is %d"
                             % MAX_BATCH)
    except GraphError as err:
        err.rec = rec_top
        raise
    include_headers = str(call.params.get("include_headers", "true")).lower() != "false"
    results = []
    named = {}
    log_items = []
    recs = [rec_top] if rec_top else []
    for index, item in enumerate(items):
        slot, entry, rec = run_item(world, call, item, index, named, now, include_headers)
        results.append(slot)
        log_items.append(entry)
        if rec is not None and all(rec is not r for r in recs):
            recs.append(rec)
    info["batch"] = log_items
    info["post_ids"] = [p for e in log_items for p in e.get("post_ids", [])]
    if rec_top is None:
        info.setdefault("auth", {"scheme": "facebook", "outcome": "per-item"})
    # The batch itself is not counted; its answer shows the budgets its calls used.
    return 200, results, batch_usage(world, recs, now), info


def merge_headers(headers, extra):
    """headers with each of extra's (name, value) replacing same-named ones
    (names compared without case), so no header is ever doubled."""
    names = set(k.lower() for k, _ in extra)
    return [(k, v) for k, v in headers if k.lower() not in names] + list(extra)


def fault_headers(spec):
    """The (name, value) headers a fault adds: Retry-After, then its headers object."""
    out = []
    if spec.get("retry_after") is not None:
        out.append(("Retry-After", str(spec["retry_after"])))
    out += [(k, str(v)) for k, v in (spec.get("headers") or {}).items()]
    return out


def run_item(world, call, item, index, named, now, include_headers):
    """One batch item: (slot, log entry, the token record it counted against or None)."""
    entry = {"index": index}
    if not isinstance(item, dict) or not isinstance(item.get("relative_url"), str):
        status, body = error_body(100, "(#100) Each batch item needs a relative_url")
        entry["status"] = status
        return item_slot(status, body, [], call.version, include_headers), entry, None
    method = str(item.get("method", "GET")).upper()
    rel = item["relative_url"]
    body_text = item.get("body", "") or ""
    if not isinstance(body_text, str):
        body_text = urllib.parse.urlencode(body_text) if isinstance(body_text, dict) else str(body_text)
    depends = item.get("depends_on")
    name = item.get("name")

    def substitute(text):
        def repl(m):
            parent = named.get(m.group(1))
            if parent is None:
                return ""
            return ",".join(json_path(parent, m.group(2)))
        return RESULT_REF.sub(repl, text)

    if depends is not None and (depends not in named or named[depends] is None):
        status, body = error_body(100, "(#100) This request depends on request %s, which failed" % depends)
        entry.update(method=method, relative_url=W.mask_text(rel), status=status)
        return item_slot(status, body, [], call.version, include_headers), entry, None
    rel = substitute(rel)
    body_text = substitute(body_text)
    path, _, query = rel.lstrip("/").partition("?")
    split = split_version("/" + path)
    if split is not None:
        version, _, segments = split
    else:
        version = call.version
        segments = [urllib.parse.unquote(s) for s in path.strip("/").split("/")] if path.strip("/") else []
    query_params = dict(urllib.parse.parse_qsl(query, keep_blank_values=True))
    item_body = dict(urllib.parse.parse_qsl(body_text, keep_blank_values=True))
    params = dict(query_params, **item_body)
    token = params.get("access_token")
    place = "body" if "access_token" in item_body else "query"
    if token is None and call.token:
        token, place = call.token, call.token_place
        # The top-level proof covers the top-level token only.
        for k in ("appsecret_proof", "appsecret_time"):
            if k in call.params and k not in params:
                params[k] = call.params[k]
    sub = Call(method, version, segments, params, token, call.scheme, call.host, batch_item=True,
               token_place=place)
    item_path = "/v%d.0/%s" % (version, "/".join(segments))
    entry.update(method=method, path=item_path, relative_url=W.mask_text(item["relative_url"]))
    fault_info = {"method": method, "path": item_path, "batch_item": True, "service": "facebook",
                  "endpoint": endpoint_key(method, segments), "body_text": body_text,
                  "credential": (token_record(world, token) or {}).get("label") if token else None}
    with world.lock:
        fault = world.take_fault(fault_info)
    extra_headers = []
    if fault is not None:
        entry["fault"] = {"id": fault.id, "kind": fault.kind}
        spec = fault.spec
        if fault.kind == "null":
            # Not run at all: no call counted, no post created.
            entry["status"] = None
            if name:
                named[name] = None
            return None, entry, None
        if fault.kind == "delay":
            time.sleep(spec.get("ms", 1000) / 1000.0)
        elif fault.kind in ("status", "error"):
            status, body = fault_body(spec)
            entry["status"] = status
            if name:
                named[name] = None
            return item_slot(status, body, fault_headers(spec), version, include_headers), entry, None
        elif fault.kind == "headers":
            extra_headers = fault_headers(spec)
    status, body, headers, info = execute(world, sub, now)
    headers = merge_headers(headers, extra_headers)
    entry["status"] = status
    if info.get("auth"):
        entry["auth"] = info["auth"]
    if info.get("post_ids"):
        entry["post_ids"] = info["post_ids"]
    rec = info.get("rec")
    ok = 200 <= status < 300
    if name:
        named[name] = body if ok else None
        omit = item.get("omit_response_on_success", True)
        if ok and omit not in (False, "false", 0):
            return None, entry, rec
    return item_slot(status, body, headers, version, include_headers), entry, rec


def fault_body(spec):
    """(status, body) of an injected status/error fault on a Graph request."""
    if spec["kind"] == "error":
        status, body = error_body(spec["code"], spec.get("message"), spec.get("subcode"))
        return spec.get("status", status), body
    status = spec.get("status", 503)
    if "body" in spec:
        return status, spec["body"]
    code = 2 if status >= 500 else (4 if status == 429 else 1)
    return status, error_body(code)[1]


def item_slot(status, body, headers, version, include_headers):
    slot = {"code": status}
    if include_headers:
        h = merge_headers([("Content-Type", JSON_TYPE), ("facebook-api-version", "v%d.0" % version)], headers)
        slot["headers"] = [{"name": k, "value": v} for k, v in h]
    slot["body"] = dumps(body).decode("utf-8") if not isinstance(body, str) else body
    return slot
