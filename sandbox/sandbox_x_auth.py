"""How X hands out user tokens, as the sandbox serves it: the OAuth 1.0a PIN
flow (x-api.md section 9.5) and OAuth 2.0 Authorization Code with PKCE, with
refresh-token rotation and revocation (section 10).

The consent a person gives in a browser is given through the control API
(README section 6): authorize_request_token answers with the PIN the page
would show, authorize_oauth2 with the URL the browser would be sent to.
State lives in the World (x_request_tokens, oauth2_pending, oauth2_codes,
x_refresh, x_token_families, x_issued_*); the control functions here run
with World.lock held, the request handlers take it themselves.
"""
import base64
import hashlib
import hmac
import html
import secrets
import time
import urllib.parse

import sandbox_world as W
import sandbox_x as X
from sandbox_http import Response, json_response

HTML_TYPE = "text/html; charset=utf-8"

# OAuth 2.0 scopes X knows (SPEC OAuth2UserToken.flows.authorizationCode.scopes).
SCOPES = frozenset((
    "tweet.read", "tweet.write", "tweet.moderate.write", "users.email", "users.read", "follows.read",
    "follows.write", "offline.access", "space.read", "mute.read", "mute.write", "like.read", "like.write",
    "list.read", "list.write", "block.read", "block.write", "bookmark.read", "bookmark.write", "media.write",
    "dm.read", "dm.write",
))
MAX_STATE = 500

INVALID_CODE = "Value passed for the authorization code was invalid."
INVALID_TOKEN = "Value passed for the token was invalid."
BAD_VERIFIER = "Value passed for the code verifier did not match the code challenge."
BAD_REDIRECT = "Value passed for the redirect uri did not match the uri of the authorization code."
MISSING_AUTHORIZATION = "Missing valid authorization header"
BAD_PIN = "Error processing your OAuth request: Invalid oauth_verifier parameter"


# ---------------------------------------------------------------------------
# Routing

def endpoint_of(req):
    """The log's endpoint key; the token endpoint's names its grant, so that a
    test counts refreshes (or faults only them) by endpoint."""
    if (req.method, req.path) not in HANDLERS:
        return None
    if req.path == "/2/oauth2/token":
        grant = dict(req.form).get("grant_type")
        if grant in ("authorization_code", "refresh_token"):
            return "POST /2/oauth2/token grant_type=" + grant
    return "%s %s" % (req.method, req.path)


def serves(req):
    return (req.method, req.path) in HANDLERS


def handle(world, req):
    meta = {"service": "x", "endpoint": endpoint_of(req)}
    return HANDLERS[(req.method, req.path)](world, req, time.time(), meta)


def html_page(status, title, paragraphs, meta, pin=None):
    body = ["<!DOCTYPE html>", '<html><head><meta charset="utf-8"><title>%s</title></head><body>'
            % html.escape(title), "<h1>%s</h1>" % html.escape(title)]
    body += ["<p>%s</p>" % html.escape(p) for p in paragraphs]
    if pin is not None:
        body.append('<p><kbd><code id="oauth_pin">%s</code></kbd></p>' % pin)
    body.append("</body></html>\n")
    return Response(status, "\n".join(body).encode("utf-8"), [("Content-Type", HTML_TYPE)], meta)


def form_answer(pairs, meta):
    """A form-encoded answer of the OAuth 1.0a endpoints. X labels it text/html
    (x-api.md section 9.5: "the docs say JSON; it is not")."""
    body = urllib.parse.urlencode(pairs).encode("ascii")
    return Response(200, body, [("Content-Type", HTML_TYPE)], meta)


def params_of(req):
    """Query and form parameters, the form's value winning."""
    out = {}
    for k, v in list(req.query) + list(req.form):
        out[k] = v
    return out


def new_token(nbytes=30):
    return secrets.token_urlsafe(nbytes)


def find_x_user(world, who):
    """A configured X user named by id or username (case-insensitive)."""
    if not isinstance(who, str):
        return None
    cfg = world.config
    return cfg.x_users.get(who) or cfg.x_usernames.get(who.lower())


def only_one(items, what, key):
    """The single pending item when the control body names none."""
    if len(items) != 1:
        raise ValueError("%s: give %s (%d pending)" % (what, key, len(items)))
    return items[0]


def check_keys(spec, what, allowed):
    if not isinstance(spec, dict):
        raise ValueError("%s must be an object" % what)
    unknown = sorted(k for k in spec if k not in allowed)
    if unknown:
        raise ValueError("%s: unknown keys %s (known: %s)" % (what, ", ".join(unknown), ", ".join(allowed)))
    if not isinstance(spec.get("deny", False), bool):
        raise ValueError("%s: deny must be true or false" % what)


# ---------------------------------------------------------------------------
# OAuth 1.0a PIN flow

def oauth1_request(world, req, meta):
    """(parsed oauth parameters, app) of a request to an OAuth 1.0a token
    endpoint, or (None, error response)."""
    header = req.header("authorization") or ""
    scheme = header.strip().partition(" ")[0].lower()
    if scheme != "oauth":
        meta["auth"] = {"scheme": scheme or "none", "outcome": "missing" if not header else "malformed"}
        return None, X.legacy(215, meta=meta)
    oauth = X.parse_oauth1(header)
    if oauth is None:
        meta["auth"] = {"scheme": "oauth1", "outcome": "malformed"}
        return None, X.legacy(215, meta=meta)
    app = world.config.x_apps.get(oauth["oauth_consumer_key"])
    if app is None:
        meta["auth"] = {"scheme": "oauth1", "outcome": "unknown_consumer"}
        return None, X.legacy(32, meta=meta)
    meta["auth"] = {"scheme": "oauth1", "outcome": "ok", "app": app["name"]}
    return oauth, app


def signature_refused(world, req, oauth, app, token, token_secret, now, meta):
    """The 401 for a failed signature, timestamp or nonce check, or None."""
    failure = X.oauth1_failure(world, req, req.header("authorization"), oauth, app["consumer_secret"],
                               token, token_secret, now)
    if failure is None:
        return None
    meta["auth"]["outcome"] = failure
    return X.legacy(135 if failure == "timestamp_out_of_window" else 32, meta=meta)


def request_token(world, req, now, meta):
    """POST /oauth/request_token, signed with the consumer key and secret only."""
    oauth, app = oauth1_request(world, req, meta)
    if oauth is None:
        return app
    refused = signature_refused(world, req, oauth, app, "", "", now, meta)
    if refused is not None:
        return refused
    params = params_of(req)
    callback = oauth.get("oauth_callback", params.get("oauth_callback"))
    if callback != "oob":
        # Only the PIN flow is served: no callback URL is registered for any app.
        return X.legacy(415, meta=meta)
    wanted = params.get("x_auth_access_type")
    level = "read" if app["access_level"] == "read" or wanted == "read" else "read-write"
    token, secret = new_token(20), new_token(30)
    with world.lock:
        world.x_request_tokens[token] = {"token": token, "secret": secret, "consumer_key": app["consumer_key"],
                                         "access_level": level, "state": "pending", "pin": None,
                                         "user_id": None, "created": now}
    return form_answer([("oauth_token", token), ("oauth_token_secret", secret),
                        ("oauth_callback_confirmed", "true")], meta)


def authorize_page(world, req, now, meta):
    """GET /oauth/authorize?oauth_token=T: the page a person would see."""
    token = dict(req.query).get("oauth_token", "")
    rt = world.x_request_tokens.get(token)
    if rt is None or rt["state"] in ("used", "invalid"):
        return html_page(400, "This page is no longer valid",
                         ["The request token for this page is invalid. It may have already been used. "
                          "Go back to the application that sent you here and start again."], meta)
    app = world.config.x_apps[rt["consumer_key"]]
    if rt["state"] == "denied":
        return html_page(200, "Authorization denied", ["You did not authorize %s." % app["name"]], meta)
    if rt["state"] == "authorized":
        return html_page(200, "Authorized %s" % app["name"],
                         ["Next, return to %s and enter this PIN to complete the authorization process:"
                          % app["name"]], meta, pin=rt["pin"])
    access = "read and write" if rt["access_level"] == "read-write" else "read"
    return html_page(200, "Authorize %s to access your account?" % app["name"],
                     ["%s asks for %s access to your X account." % (app["name"], access),
                      "In the sandbox a test gives the answer: POST /__control "
                      '{"authorize_request_token": {"oauth_token": "%s", "user": "USERNAME"}} '
                      "returns the PIN this page then shows." % token], meta)


def authorize_request_token(world, spec, now):
    """Control: the person approves (returns the PIN) or denies (None) a
    pending request token. Caller holds the lock."""
    check_keys(spec, "authorize_request_token", ("oauth_token", "user", "deny"))
    token = spec.get("oauth_token")
    if token is None:
        pending = [t for t, r in world.x_request_tokens.items() if r["state"] == "pending"]
        token = only_one(pending, "authorize_request_token", "oauth_token")
    rt = world.x_request_tokens.get(token) if isinstance(token, str) else None
    if rt is None or rt["state"] != "pending":
        raise ValueError("authorize_request_token: no pending request token %r" % (token,))
    if spec.get("deny"):
        rt["state"] = "denied"
        return None
    user = find_x_user(world, spec.get("user"))
    if user is None:
        raise ValueError("authorize_request_token: user must be a configured X user (id or username)")
    rt.update(state="authorized", user_id=user["id"], pin="%07d" % secrets.randbelow(10 ** 7))
    return rt["pin"]


def access_token(world, req, now, meta):
    """POST /oauth/access_token, signed with the request token and its secret,
    carrying the PIN as oauth_verifier."""
    oauth, app = oauth1_request(world, req, meta)
    if oauth is None:
        return app
    token = oauth.get("oauth_token", "")
    rt = world.x_request_tokens.get(token)
    if rt is None or rt["consumer_key"] != app["consumer_key"]:
        meta["auth"]["outcome"] = "unknown_token"
        return X.legacy(89, meta=meta)
    refused = signature_refused(world, req, oauth, app, token, rt["secret"], now, meta)
    if refused is not None:
        return refused
    verifier = oauth.get("oauth_verifier", params_of(req).get("oauth_verifier"))
    with world.lock:
        if rt["state"] in ("used", "invalid"):
            meta["auth"]["outcome"] = "revoked"
            return X.legacy(89, meta=meta)
        if rt["state"] != "authorized" or not verifier or not hmac.compare_digest(verifier, rt["pin"]):
            # A wrong PIN spends the request token (x-api.md section 9.5): start over.
            rt["state"] = "invalid"
            meta["auth"]["outcome"] = "bad_verifier"
            return Response(401, BAD_PIN.encode("utf-8"), [("Content-Type", HTML_TYPE)], meta)
        rt["state"] = "used"
        user = world.config.x_users[rt["user_id"]]
        value = "%s-%s" % (user["id"], new_token(24).replace("-", "x").replace("_", "y"))
        world.x_issued_oauth1[value] = {"type": "oauth1", "token": value, "secret": new_token(30),
                                        "consumer_key": app["consumer_key"], "user_id": user["id"],
                                        "access_level": rt["access_level"], "expires": None,
                                        "label": W.token_label(value)}
        secret = world.x_issued_oauth1[value]["secret"]
    meta["auth"]["user_id"] = user["id"]
    return form_answer([("oauth_token", value), ("oauth_token_secret", secret), ("user_id", user["id"]),
                        ("screen_name", user["username"])], meta)


# ---------------------------------------------------------------------------
# OAuth 2.0 Authorization Code with PKCE

def redirect_allowed(client, uri):
    """Whether a redirect_uri is registered for the client. Exact match; a
    client with loopback_any_port also takes any port on a registered
    http://127.0.0.1 or http://[::1] URI (RFC 8252 section 7.3)."""
    if uri in client["redirect_uris"]:
        return True
    if not client["loopback_any_port"]:
        return False
    try:
        asked = urllib.parse.urlsplit(uri)
        asked.port
    except ValueError:
        return False
    if asked.scheme != "http" or asked.hostname not in ("127.0.0.1", "::1") or asked.fragment:
        return False
    for registered in client["redirect_uris"]:
        r = urllib.parse.urlsplit(registered)
        if (r.scheme, r.hostname, r.path, r.query) == (asked.scheme, asked.hostname, asked.path, asked.query):
            return True
    return False


def authorize_oauth2_page(world, req, now, meta):
    """GET /i/oauth2/authorize: records the authorization and shows the consent page."""
    q = dict(req.query)
    client = world.config.x_oauth2_clients.get(q.get("client_id", ""))
    meta["auth"] = {"scheme": "oauth2_client", "outcome": "ok" if client else "unknown_client",
                    "client_id": q.get("client_id")}
    problem = None
    scopes = [s for s in q.get("scope", "").split(" ") if s]
    method = q.get("code_challenge_method", "")
    if client is None:
        problem = "Unknown client_id."
    elif not redirect_allowed(client, q.get("redirect_uri", "")):
        problem = "The redirect_uri is not registered for this app."
    elif q.get("response_type") != "code":
        problem = "response_type must be code."
    elif not scopes or any(s not in SCOPES for s in scopes):
        problem = "The scope is missing or names an unknown scope."
    elif not q.get("state") or len(q["state"]) > MAX_STATE:
        problem = "state is required (at most %d characters)." % MAX_STATE
    elif not q.get("code_challenge") or method.lower() not in ("s256", "plain"):
        problem = "code_challenge and code_challenge_method (S256 or plain) are required."
    if problem is not None:
        return html_page(400, "Something went wrong", [problem, "You cannot authorize this app right now."],
                         meta)
    state = q["state"]
    with world.lock:
        world.oauth2_pending[state] = {
            "state": state, "client_id": client["client_id"], "redirect_uri": q["redirect_uri"],
            "scope_list": list(dict.fromkeys(scopes)), "challenge": q["code_challenge"],
            "method": "S256" if method.lower() == "s256" else "plain", "created": now}
    app = world.config.x_apps[client["consumer_key"]]
    return html_page(200, "%s wants to access your X account" % app["name"],
                     ["It asks for: %s." % ", ".join(scopes),
                      "In the sandbox a test gives the answer: POST /__control "
                      '{"authorize_oauth2": {"state": "%s", "user": "USERNAME"}} returns the URL this '
                      "page would send the browser to." % state], meta)


def with_query(uri, pairs):
    return uri + ("&" if "?" in uri else "?") + urllib.parse.urlencode(pairs)


def authorize_oauth2(world, spec, now):
    """Control: the person approves or denies a pending authorization; returns
    the redirect the browser would follow. Caller holds the lock."""
    check_keys(spec, "authorize_oauth2", ("state", "user", "deny"))
    state = spec.get("state")
    if state is None:
        state = only_one(list(world.oauth2_pending), "authorize_oauth2", "state")
    pending = world.oauth2_pending.get(state) if isinstance(state, str) else None
    if pending is None:
        raise ValueError("authorize_oauth2: no pending authorization with state %r" % (state,))
    if spec.get("deny"):
        del world.oauth2_pending[state]
        return with_query(pending["redirect_uri"], [("error", "access_denied"), ("state", state)])
    user = find_x_user(world, spec.get("user"))
    if user is None:
        raise ValueError("authorize_oauth2: user must be a configured X user (id or username)")
    del world.oauth2_pending[state]
    code = new_token(48)
    world.oauth2_codes[code] = dict(pending, user_id=user["id"], expires=now + world.oauth2_code_lifetime,
                                    used=False, family=None)
    return with_query(pending["redirect_uri"], [("state", state), ("code", code)])


def oauth_error(status, error, description, meta):
    return json_response(status, {"error": error, "error_description": description}, meta=meta)


def oauth2_client(world, req, form, meta):
    """(client, None) or (None, error answer): confidential clients authenticate
    with Basic auth, public ones name themselves with client_id in the body."""
    clients = world.config.x_oauth2_clients
    body_id = form.get("client_id")
    scheme, _, rest = (req.header("authorization") or "").strip().partition(" ")
    meta["auth"] = {"scheme": "oauth2_client", "outcome": "ok"}
    if scheme.lower() == "basic":
        try:
            decoded = base64.b64decode(rest.strip(), validate=True).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            decoded = ""
        cid, _, secret = decoded.partition(":")
        cid, secret = urllib.parse.unquote(cid), urllib.parse.unquote(secret)
        client = clients.get(cid)
        meta["auth"]["client_id"] = cid
        if client is not None and (body_id in (None, cid)) and (
                secret == "" if not client["confidential"] else hmac.compare_digest(secret, client["client_secret"])):
            return client, None
        meta["auth"]["outcome"] = "bad_credentials"
        return None, oauth_error(401, "unauthorized_client", MISSING_AUTHORIZATION, meta)
    if not body_id:
        meta["auth"]["outcome"] = "missing"
        return None, oauth_error(400, "invalid_request", "Missing required parameter [client_id].", meta)
    meta["auth"]["client_id"] = body_id
    client = clients.get(body_id)
    if client is None:
        meta["auth"]["outcome"] = "unknown_client"
        return None, oauth_error(400, "invalid_request", "Value passed for the client id was invalid.", meta)
    if client["confidential"]:
        meta["auth"]["outcome"] = "missing"
        return None, oauth_error(401, "unauthorized_client", MISSING_AUTHORIZATION, meta)
    return client, None


def missing_parameter(form, names, meta):
    for name in names:
        if not form.get(name):
            return oauth_error(400, "invalid_request", "Missing required parameter [%s]." % name, meta)
    return None


def challenge_of(verifier, method):
    if method == "plain":
        return verifier
    digest = hashlib.sha256(verifier.encode("utf-8")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def revoke_family(world, family):
    """Every access and refresh token of one authorization stops working
    (caller holds the lock)."""
    tokens = world.x_token_families.get(family, {})
    for value in tokens.get("access", []) + tokens.get("refresh", []):
        world.revoked[value] = True


def issue_tokens(world, client, user_id, scope_list, family, now):
    """A new access token (and, with offline.access, a refresh token) in a
    family; returns the token answer. Caller holds the lock."""
    lifetime = world.oauth2_token_lifetime
    access = new_token(60)
    world.x_issued_bearers[access] = {
        "type": "oauth2_user", "token": access, "consumer_key": client["consumer_key"],
        "client_id": client["client_id"], "user_id": user_id, "scopes": set(scope_list),
        "scope_list": list(scope_list), "expires": now + lifetime, "label": W.token_label(access),
        "family": family}
    tokens = world.x_token_families.setdefault(family, {"access": [], "refresh": []})
    tokens["access"].append(access)
    answer = {"token_type": "bearer", "expires_in": lifetime, "access_token": access,
              "scope": " ".join(scope_list)}
    if "offline.access" in scope_list:
        refresh = new_token(60)
        world.x_refresh[refresh] = {"token": refresh, "client_id": client["client_id"], "user_id": user_id,
                                    "scope_list": list(scope_list), "family": family, "used": False,
                                    "label": W.token_label(refresh)}
        tokens["refresh"].append(refresh)
        answer["refresh_token"] = refresh
    return answer


def token_endpoint(world, req, now, meta):
    """POST /2/oauth2/token: grant_type authorization_code or refresh_token."""
    form = dict(req.form)
    client, refused = oauth2_client(world, req, form, meta)
    if refused is not None:
        return refused
    grant = form.get("grant_type")
    if not grant:
        return oauth_error(400, "invalid_request", "Missing required parameter [grant_type].", meta)
    if grant == "authorization_code":
        return exchange_code(world, client, form, now, meta)
    if grant == "refresh_token":
        return refresh(world, client, form, now, meta)
    return oauth_error(400, "invalid_request", "Value passed for the grant type was invalid.", meta)


def exchange_code(world, client, form, now, meta):
    missing = missing_parameter(form, ("code", "redirect_uri", "code_verifier"), meta)
    if missing is not None:
        return missing
    reuse_revokes = world.config.x_oauth2_reuse_revokes_family
    with world.lock:
        code = world.oauth2_codes.get(form["code"])
        if code is None or code["client_id"] != client["client_id"]:
            return oauth_error(400, "invalid_request", INVALID_CODE, meta)
        if code["used"]:
            # RFC 6749 section 4.1.2: a code used twice revokes what it gave.
            meta["token_reuse"] = True
            if code["family"] is not None and reuse_revokes:
                revoke_family(world, code["family"])
            return oauth_error(400, "invalid_request", INVALID_CODE, meta)
        if now >= code["expires"]:
            return oauth_error(400, "invalid_request", INVALID_CODE, meta)
        code["used"] = True      # spent by its first exchange, whether that succeeds or not
        if form["redirect_uri"] != code["redirect_uri"]:
            return oauth_error(400, "invalid_request", BAD_REDIRECT, meta)
        if not hmac.compare_digest(challenge_of(form["code_verifier"], code["method"]), code["challenge"]):
            return oauth_error(400, "invalid_request", BAD_VERIFIER, meta)
        code["family"] = "family:" + new_token(9)
        answer = issue_tokens(world, client, code["user_id"], code["scope_list"], code["family"], now)
    meta["auth"]["user_id"] = code["user_id"]
    return json_response(200, answer, meta=meta)


def refresh(world, client, form, now, meta):
    missing = missing_parameter(form, ("refresh_token",), meta)
    if missing is not None:
        return missing
    value = form["refresh_token"]
    with world.lock:
        rec = world.x_refresh.get(value)
        if rec is None or rec["client_id"] != client["client_id"] or \
                world.token_state(value, None, now) != "ok":
            return oauth_error(400, "invalid_request", INVALID_TOKEN, meta)
        if rec["used"]:
            # Refresh tokens are single-use; a second use may mean a stolen
            # token, so the whole family goes (x-api.md section 10).
            meta["token_reuse"] = True
            if world.config.x_oauth2_reuse_revokes_family:
                revoke_family(world, rec["family"])
            return oauth_error(400, "invalid_request", INVALID_TOKEN, meta)
        rec["used"] = True
        answer = issue_tokens(world, client, rec["user_id"], rec["scope_list"], rec["family"], now)
    meta["auth"]["user_id"] = rec["user_id"]
    return json_response(200, answer, meta=meta)


def revoke(world, req, now, meta):
    """POST /2/oauth2/revoke (RFC 7009): an access token alone, or a refresh
    token with its whole family. Unknown tokens answer as revoked."""
    form = dict(req.form)
    client, refused = oauth2_client(world, req, form, meta)
    if refused is not None:
        return refused
    missing = missing_parameter(form, ("token",), meta)
    if missing is not None:
        return missing
    value = form["token"]
    with world.lock:
        refresh_rec = world.x_refresh.get(value)
        access_rec = world.x_bearer_record(value)
        if refresh_rec is not None:
            if refresh_rec["client_id"] != client["client_id"]:
                return oauth_error(400, "invalid_request", INVALID_TOKEN, meta)
            revoke_family(world, refresh_rec["family"])
        elif access_rec is not None:
            if access_rec["type"] != "oauth2_user":
                return oauth_error(400, "unsupported_token_type", "Only OAuth 2.0 user tokens can be revoked "
                                   "here.", meta)
            owner = access_rec.get("client_id")
            if owner != client["client_id"] and (owner is not None
                                                 or access_rec.get("consumer_key") != client["consumer_key"]):
                return oauth_error(400, "invalid_request", INVALID_TOKEN, meta)
            world.revoked[value] = True
    return json_response(200, {"revoked": True}, meta=meta)


HANDLERS = {
    ("POST", "/oauth/request_token"): request_token,
    ("GET", "/oauth/authorize"): authorize_page,
    ("POST", "/oauth/access_token"): access_token,
    ("GET", "/i/oauth2/authorize"): authorize_oauth2_page,
    ("POST", "/2/oauth2/token"): token_endpoint,
    ("POST", "/2/oauth2/revoke"): revoke,
}
