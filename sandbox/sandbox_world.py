"""The sandbox's world: configuration, generated accounts, and the mutable state
(posts, rate-limit windows, nonces, faults, revocations, the request log).

Everything here is guarded by one lock, World.lock; nothing slow (signature
checks, length counting, sleeping, socket I/O) happens while it is held.
"""
import collections
import copy
import hashlib
import itertools
import json
import math
import re
import threading
import time

import sandbox_x_billing as B

# Accounts that configured users follow are generated from an index, never
# stored: account g has id GENERATED_ID_BASE + g and username "u<g>".
GENERATED_ID_BASE = 500_000_000_000_000_000
GENERATED_SPACE = 10 ** 12
# Coprime with GENERATED_SPACE, so positions 0..GENERATED_SPACE-1 of one
# following list map to distinct accounts.
GENERATED_STRIDE = 1_000_003

# 2006-03-21T00:00:00Z; generated accounts are created at some point after it.
GENERATED_EPOCH = 1142899200
TWITTER_EPOCH_MS = 1288834974657

SECRET_PARAM_NAMES = (
    "access_token", "input_token", "appsecret_proof", "client_secret",
    "fb_exchange_token", "refresh_token", "code_verifier", "oauth_token_secret",
    "token_secret", "consumer_secret", "password", "code", "token", "oauth_verifier",
)
_SECRET_PARAM_RE = re.compile(
    r"(?<![A-Za-z0-9_])(" + "|".join(SECRET_PARAM_NAMES) + r")=([^&\s\"'\\]*)")
_SECRET_JSON_RE = re.compile(
    r"(\"(?:" + "|".join(SECRET_PARAM_NAMES) + r"|[a-z_]*_secret|[a-z_]*_token)\"\s*:\s*\")([^\"\\]*(?:\\.[^\"\\]*)*)\"")


_OAUTH_VERIFIER_RE = re.compile(r'(oauth_verifier=")[^"]*')


class ConfigError(Exception):
    """The configuration file is unusable; the message says why."""


def mask_text(text):
    """Replaces the values of secret-bearing parameters in a query string,
    form body or JSON text by [masked]."""
    if not text:
        return text
    text = _SECRET_PARAM_RE.sub(r"\1=[masked]", text)
    return _SECRET_JSON_RE.sub(r'\1[masked]"', text)


def mask_authorization(value):
    """An Authorization header as it may appear in the log: bearer, Basic and
    Graph OAuth tokens are masked; an OAuth 1.0a header carries no secret."""
    if value is None:
        return None
    scheme, _, rest = value.strip().partition(" ")
    if scheme.lower() == "oauth" and "oauth_" in rest and "=" in rest:
        # The PIN of a PIN flow travels in the header (x-api.md section 9.5).
        return _OAUTH_VERIFIER_RE.sub(r"\1[masked]", value)
    return scheme + " [masked]"


def token_label(token):
    """A stable, non-secret name for a credential that has no configured name."""
    return "sha256:" + hashlib.sha256(token.encode()).hexdigest()[:12]


def iso_time(epoch):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(epoch)) + ".%03dZ" % int((epoch % 1) * 1000)


def graph_time(epoch):
    return time.strftime("%Y-%m-%dT%H:%M:%S+0000", time.gmtime(epoch))


def _seed(text):
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


# ---------------------------------------------------------------------------
# Generated accounts

def generated_index(user_id):
    """The index g of a generated account id, else None."""
    if not user_id.isdigit() or len(user_id) != 18:
        return None
    g = int(user_id) - GENERATED_ID_BASE
    return g if 0 <= g < GENERATED_SPACE else None


def generated_index_by_username(username):
    m = re.fullmatch(r"[uU]([0-9]{1,12})", username)
    if not m or (len(m.group(1)) > 1 and m.group(1)[0] == "0"):
        return None
    return int(m.group(1))


def generated_user(g):
    """The profile of generated account g: a configured-user-shaped dict."""
    created = GENERATED_EPOCH + (g * 7919) % (20 * 365 * 86400)
    return {
        "id": str(GENERATED_ID_BASE + g),
        "username": "u%d" % g,
        "name": "Account %d" % g,
        "created_at": iso_time(created),
        "description": "Generated sandbox account #%d" % g,
        "location": "",
        "url": "",
        "protected": False,
        "verified": False,
        "followers_count": g % 5000,
        "tweet_count": (g * 31) % 10000,
        "listed_count": g % 50,
        "following": 0,
        "follows": [],
        "generated": True,
    }


# ---------------------------------------------------------------------------
# Configuration

DEFAULT_X_RATE_LIMITS = {
    "POST /2/tweets": {"limit": 100, "window": 900},
    "GET /2/users/me": {"limit": 75, "window": 900},
    "GET /2/users/by/username/:username": {"limit": 900, "window": 900, "app_limit": 300},
    "GET /2/users/by": {"limit": 900, "window": 900, "app_limit": 300},
    "GET /2/users": {"limit": 900, "window": 900, "app_limit": 300},
    "GET /2/users/:id": {"limit": 900, "window": 900, "app_limit": 300},
    "GET /2/users/:id/following": {"limit": 300, "window": 900},
    "POST /2/media/upload": {"limit": 500, "window": 900},
    "POST /2/media/upload/initialize": {"limit": 1875, "window": 900},
    "POST /2/media/upload/:id/append": {"limit": 1875, "window": 900},
    "POST /2/media/upload/:id/finalize": {"limit": 1875, "window": 900},
    "GET /2/media/upload": {"limit": 1000, "window": 900},
    "POST /2/media/metadata": {"limit": 1875, "window": 900},
    "POST /1.1/statuses/update.json": {"limit": 300, "window": 10800},
    "POST /1.1/media/upload.json": {"limit": 10000, "window": 900},
    "GET /1.1/media/upload.json": {"limit": 10000, "window": 900},
    "GET /1.1/friends/ids.json": {"limit": 15, "window": 900},
    "GET /1.1/account/verify_credentials.json": {"limit": 75, "window": 900},
}
DEFAULT_X_POST_CAPS = {"user": {"limit": 1000, "window": 86400},
                       "app": {"limit": 10000, "window": 86400}}
DEFAULT_FB_LIMITS = {"app": {"limit": 200, "window": 3600},
                     "user": {"limit": 200, "window": 3600},
                     "page": {"limit": 4800, "window": 86400},
                     "feed_post": None}

# Page shapes of following lists (control key x_page_shape). "ragged" cycles the
# page sizes through RAGGED_CYCLE: an empty page, one account, ceil(n/2), then n
# (n = max_results or count), so clients meet short and empty pages that still
# carry a next token. The phase of the cycle travels inside the tokens.
PAGE_SHAPES = ("full", "ragged")
RAGGED_CYCLE = 4


def ragged_page_size(phase, size):
    """Accounts on a ragged page of the given phase when `size` were asked for."""
    return (0, 1, (size + 1) // 2, size)[phase]


X_APP_DEFAULTS = {"access_level": "read-write", "enrolled": True, "v1_access": True,
                  "usage_cap": None}

# X's prices in dollars (README section 3, "Billing"): contract section 7's
# table, plus X's price of a reply that the replied-to author summoned
# (X's changelog, 2026-04-16: "summoned replies remain $0.01").
DEFAULT_X_PRICES = {"post_create": 0.015, "post_create_url": 0.200, "post_create_summoned": 0.010,
                    "media_metadata": 0.005, "user_read": 0.010, "following_read": 0.010, "owned_read": 0.001}
DEFAULT_X_BALANCE = 1_000_000
BILLING_KEYS = ("balance", "spending_limit", "prices")


def _need(obj, key, kind, where):
    if key not in obj:
        raise ConfigError("%s: missing %r" % (where, key))
    value = obj[key]
    if not isinstance(value, kind):
        raise ConfigError("%s: %r must be %s" % (where, key, getattr(kind, "__name__", kind)))
    return value


def config_object(value, known, where, what="an object"):
    """`value`, a configuration object whose keys must be among `known`, so
    that a typo cannot pass silently."""
    if not isinstance(value, dict):
        raise ConfigError("%s: must be %s" % (where, what))
    unknown = sorted(k for k in value if k not in known)
    if unknown:
        raise ConfigError("%s: unknown key %s (known: %s)" % (where, ", ".join(map(repr, unknown)),
                                                              ", ".join(known)))
    return value


def _limit(spec, where, app_limit=False):
    """A validated {"limit","window"[,"app_limit"]} (None stays None: no limit)."""
    if spec is None:
        return None
    config_object(spec, ("limit", "window", "app_limit") if app_limit else ("limit", "window"), where,
                  "an object with limit and window")
    limit = spec.get("limit")
    window = spec.get("window")
    if not isinstance(limit, int) or limit < 0 or not isinstance(window, (int, float)) or window <= 0:
        raise ConfigError("%s: limit must be an integer >= 0 and window a number of seconds > 0" % where)
    out = {"limit": limit, "window": float(window)}
    if "app_limit" in spec:
        if not isinstance(spec["app_limit"], int) or spec["app_limit"] < 0:
            raise ConfigError("%s: app_limit must be an integer >= 0" % where)
        out["app_limit"] = spec["app_limit"]
    return out


def limit_table(values, defaults, where, app_limit=False):
    """Validates a table of named limits ({"NAME": spec}) whose names must be
    among `defaults`; returns {name: spec}. Unknown names are refused."""
    config_object(values, defaults, where)
    return {name: _limit(spec, "%s[%s]" % (where, name), app_limit) for name, spec in values.items()}


def micros(value, where, allow_negative=False):
    """Dollars as integer millionths."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value \
            or (value < 0 and not allow_negative) or abs(value) > 1e12:
        raise ConfigError("%s: must be a number of dollars%s" % (where, "" if allow_negative else " >= 0"))
    return round(value * B.MICROS)


def billing_settings(section, where):
    """(balance, spending limit, prices) in millionths of a dollar from a
    configuration or control object: balance None and spending limit ... when
    not given (a limit of None is no limit), prices {KEY: value} of those given."""
    config_object(section, BILLING_KEYS, where)
    balance = micros(section["balance"], where + ".balance", True) if "balance" in section else None
    limit = section.get("spending_limit", ...)
    if limit is not ... and limit is not None:
        limit = micros(limit, where + ".spending_limit")
    prices = config_object(section.get("prices", {}), DEFAULT_X_PRICES, where + ".prices")
    return balance, limit, {k: micros(v, "%s.prices.%s" % (where, k)) for k, v in prices.items()}


def _expiry(tok, started, where):
    """Absolute expiry epoch of a token (None = never)."""
    if tok.get("expires_in") is not None:
        if not isinstance(tok["expires_in"], (int, float)):
            raise ConfigError("%s: expires_in must be a number of seconds" % where)
        return started + tok["expires_in"]
    at = tok.get("expires_at")
    if at in (None, 0):
        return None
    if not isinstance(at, (int, float)):
        raise ConfigError("%s: expires_at must be a Unix time or 0/null" % where)
    return float(at)


def _count(section, key, default, where, minimum=0):
    """An integer setting of a configuration section (booleans refused)."""
    value = section.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise ConfigError("%s.%s must be an integer >= %d" % (where, key, minimum))
    return value


def _seconds(section, key, default, where):
    """A positive number of seconds."""
    value = section.get(key, default)
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
        raise ConfigError("%s.%s must be a number of seconds > 0" % (where, key))
    return float(value)


# Graph data access lasts about 90 days after the user last used the app
# (graph-api.md sections 4 and 5.2), independently of the token's own expiry.
DATA_ACCESS_DAYS = 90
# What a Graph token answers once its data access has lapsed (README section 5):
# it stays valid and the permissions read expired, or every call is refused (190/493).
DATA_ACCESS_LAPSES = ("permissions", "refuse")
# Seconds a long-lived Graph user token lasts: the exchange's and Login for Devices' expires_in.
LONG_LIVED_SECONDS = 5183944


def _data_access_expiry(tok, started, where):
    """When a Graph token's data access lapses (epoch), or None for the
    default (issued_at + 90 days). data_access_expired: true means a day
    before start."""
    expired = tok.get("data_access_expired")
    if expired not in (None, False):
        if expired is not True:
            raise ConfigError("%s: data_access_expired must be true or false" % where)
        if "data_access_expires_at" in tok or "data_access_expires_in" in tok:
            raise ConfigError("%s: give data_access_expired or a data_access_expires_* time, not both"
                              % where)
        return float(int(started) - 86400)
    if tok.get("data_access_expires_in") is not None:
        if not isinstance(tok["data_access_expires_in"], (int, float)) or isinstance(
                tok["data_access_expires_in"], bool):
            raise ConfigError("%s: data_access_expires_in must be a number of seconds" % where)
        return started + tok["data_access_expires_in"]
    at = tok.get("data_access_expires_at")
    if at is None:
        return None
    if not isinstance(at, (int, float)) or isinstance(at, bool) or at <= 0:
        raise ConfigError("%s: data_access_expires_at must be a Unix time" % where)
    return float(at)


class Config:
    """The parsed, validated configuration with its lookup tables."""

    def __init__(self, raw, started):
        if not isinstance(raw, dict):
            raise ConfigError("the configuration must be a JSON object")
        self.raw = copy.deepcopy(raw)
        x = raw.get("x", {})
        fb = raw.get("facebook", {})
        if not isinstance(x, dict) or not isinstance(fb, dict):
            raise ConfigError("'x' and 'facebook' must be objects")
        self._load_x(x, started)
        self._load_facebook(fb, started)

    # -- X -----------------------------------------------------------------
    def _load_x(self, x, started):
        self.x_apps = {}
        for i, app in enumerate(x.get("apps", [])):
            where = "x.apps[%d]" % i
            key = _need(app, "consumer_key", str, where)
            _need(app, "consumer_secret", str, where)
            merged = dict(X_APP_DEFAULTS)
            merged.update(app)
            merged.setdefault("name", key)
            if merged["access_level"] not in ("read", "read-write"):
                raise ConfigError("%s: access_level must be 'read' or 'read-write'" % where)
            self.x_apps[key] = merged

        self.x_users = {}
        self.x_usernames = {}
        for i, user in enumerate(x.get("users", [])):
            where = "x.users[%d]" % i
            uid = _need(user, "id", str, where)
            name = _need(user, "username", str, where)
            if not re.fullmatch(r"[0-9]{1,19}", uid):
                raise ConfigError("%s: id must be 1-19 digits" % where)
            if generated_index(uid) is not None:
                raise ConfigError("%s: id %s lies in the generated-account range" % (where, uid))
            if not re.fullmatch(r"[A-Za-z0-9_]{1,15}", name):
                raise ConfigError("%s: username must match ^[A-Za-z0-9_]{1,15}$" % where)
            if generated_index_by_username(name) is not None:
                raise ConfigError("%s: username %s is reserved for generated accounts" % (where, name))
            following = user.get("following", 0)
            if not isinstance(following, int) or not 0 <= following <= GENERATED_SPACE:
                raise ConfigError("%s: following must be an integer 0..%d" % (where, GENERATED_SPACE))
            u = {"name": name, "follows": [], "protected": False, "verified": False,
                 "description": "", "location": "", "url": "", "created_at": iso_time(started),
                 "followers_count": 0, "tweet_count": 0, "listed_count": 0}
            u.update(user)
            u["following"] = following
            u["seed"] = _seed("following:" + uid)
            self.x_users[uid] = u
            self.x_usernames[name.lower()] = u
        for u in self.x_users.values():
            for fid in u["follows"]:
                if fid not in self.x_users:
                    raise ConfigError("x.users %s: follows unknown user %s" % (u["id"], fid))

        self._load_x_oauth2_clients(x)
        self.x_oauth1 = {}
        self.x_bearers = {}
        self.x_refresh_tokens = {}  # configured refresh token -> its access token
        for i, tok in enumerate(x.get("tokens", [])):
            where = "x.tokens[%d]" % i
            kind = _need(tok, "type", str, where)
            value = _need(tok, "token", str, where)
            ck = tok.get("consumer_key")
            if ck is not None and ck not in self.x_apps:
                raise ConfigError("%s: unknown consumer_key %s" % (where, ck))
            t = dict(tok)
            t["label"] = tok.get("name") or token_label(value)
            t["expires"] = _expiry(tok, started, where)
            if kind == "oauth1":
                _need(tok, "secret", str, where)
                if ck is None:
                    raise ConfigError("%s: oauth1 tokens need consumer_key" % where)
                if _need(tok, "user_id", str, where) not in self.x_users:
                    raise ConfigError("%s: unknown user_id" % where)
                self.x_oauth1[value] = t
            elif kind == "bearer":
                if ck is None:
                    raise ConfigError("%s: bearer tokens need consumer_key" % where)
                self.x_bearers[value] = t
            elif kind == "oauth2_user":
                if _need(tok, "user_id", str, where) not in self.x_users:
                    raise ConfigError("%s: unknown user_id" % where)
                scopes = tok.get("scopes", [])
                if not isinstance(scopes, list):
                    raise ConfigError("%s: scopes must be a list" % where)
                t["scopes"] = set(scopes)
                t["scope_list"] = list(scopes)
                self._oauth2_token_client(tok, t, value, where)
                self.x_bearers[value] = t
            else:
                raise ConfigError("%s: type must be oauth1, bearer or oauth2_user" % where)
            if value in self.x_oauth1 and value in self.x_bearers:
                raise ConfigError("%s: token %s used twice" % (where, t["label"]))
        for refresh in self.x_refresh_tokens:
            if refresh in self.x_oauth1 or refresh in self.x_bearers:
                raise ConfigError("x.tokens: refresh token of %s is also an access token"
                                  % self.x_bearers[self.x_refresh_tokens[refresh]]["label"])

        self.x_tweets = {}
        for i, tw in enumerate(x.get("tweets", [])):
            where = "x.tweets[%d]" % i
            tid = _need(tw, "id", str, where)
            if _need(tw, "author_id", str, where) not in self.x_users:
                raise ConfigError("%s: unknown author_id" % where)
            self.x_tweets[tid] = {"id": tid, "author_id": tw["author_id"],
                                  "text": tw.get("text", ""),
                                  "created_at": tw.get("created_at", iso_time(started))}
        self.x_media_ids = set(str(m) for m in x.get("media_ids", []))

        self.x_rate_limits = limit_table(DEFAULT_X_RATE_LIMITS, DEFAULT_X_RATE_LIMITS, "x.rate_limits", True)
        self.x_rate_limits.update(limit_table(x.get("rate_limits", {}), DEFAULT_X_RATE_LIMITS,
                                              "x.rate_limits", True))
        self.x_post_caps = limit_table(DEFAULT_X_POST_CAPS, DEFAULT_X_POST_CAPS, "x.post_caps")
        self.x_post_caps.update(limit_table(x.get("post_caps", {}), DEFAULT_X_POST_CAPS, "x.post_caps"))
        self.x_timestamp_window = float(x.get("timestamp_window", 300))
        dw = x.get("duplicate_window")
        self.x_duplicate_window = None if dw is None else float(dw)
        self.x_problem_base = x.get("problem_base", "https://api.twitter.com/2/problems/")
        self.x_429_style = x.get("v2_429_style", "problem")
        if self.x_429_style not in ("problem", "legacy"):
            raise ConfigError("x.v2_429_style must be 'problem' or 'legacy'")
        self.x_max_length = int(x.get("max_weighted_length", 280))
        self.x_oauth2_token_lifetime = _count(x, "oauth2_token_lifetime", 7200, "x", minimum=1)
        self.x_oauth2_code_lifetime = _seconds(x, "oauth2_code_lifetime", 30, "x")
        reuse = x.get("oauth2_reuse_revokes_family", True)
        if not isinstance(reuse, bool):
            raise ConfigError("x.oauth2_reuse_revokes_family must be true or false")
        self.x_oauth2_reuse_revokes_family = reuse
        self._load_x_billing(x)

    def _load_x_billing(self, x):
        """x.billing (the developer account's credits, spending limit and prices)
        and x.self_serve (the plan: true for pay-per-use, false for Enterprise)."""
        billing = config_object(x.get("billing", {}), BILLING_KEYS + ("account_id",), "x.billing")
        balance, limit, prices = billing_settings({k: v for k, v in billing.items() if k != "account_id"},
                                                  "x.billing")
        self.x_billing_balance = micros(DEFAULT_X_BALANCE, "balance") if balance is None else balance
        self.x_billing_limit = None if limit is ... else limit
        self.x_billing_prices = {k: micros(v, k) for k, v in DEFAULT_X_PRICES.items()}
        self.x_billing_prices.update(prices)
        account = billing.get("account_id", next(iter(self.x_users), "1"))
        if not isinstance(account, str) or not re.fullmatch(r"[0-9]{1,19}", account):
            raise ConfigError("x.billing.account_id must be 1-19 digits")
        self.x_billing_account = account
        self_serve = x.get("self_serve", True)
        if not isinstance(self_serve, bool):
            raise ConfigError("x.self_serve must be true or false")
        self.x_self_serve = self_serve

    def _load_x_oauth2_clients(self, x):
        """x.oauth2_clients: the OAuth 2.0 clients of the apps (x-api.md section 10).
        A client with a client_secret is confidential (Basic auth at the token
        endpoint); one without is public (client_id in the body)."""
        self.x_oauth2_clients = {}
        clients = x.get("oauth2_clients", [])
        if not isinstance(clients, list):
            raise ConfigError("x.oauth2_clients must be a list")
        for i, client in enumerate(clients):
            where = "x.oauth2_clients[%d]" % i
            if not isinstance(client, dict):
                raise ConfigError("%s: must be an object" % where)
            cid = _need(client, "client_id", str, where)
            if cid in self.x_oauth2_clients:
                raise ConfigError("%s: client_id %s used twice" % (where, cid))
            if _need(client, "consumer_key", str, where) not in self.x_apps:
                raise ConfigError("%s: unknown consumer_key" % where)
            secret = client.get("client_secret")
            if secret is not None and (not isinstance(secret, str) or not secret):
                raise ConfigError("%s: client_secret must be a non-empty string" % where)
            uris = _need(client, "redirect_uris", list, where)
            if not uris or not all(isinstance(u, str) and re.match(r"https?://[^/?#]+", u) for u in uris):
                raise ConfigError("%s: redirect_uris must be a non-empty list of http(s) URLs" % where)
            loopback = client.get("loopback_any_port", False)
            if not isinstance(loopback, bool):
                raise ConfigError("%s: loopback_any_port must be true or false" % where)
            self.x_oauth2_clients[cid] = {
                "client_id": cid, "client_secret": secret, "confidential": secret is not None,
                "consumer_key": client["consumer_key"], "name": client.get("name", cid),
                "redirect_uris": list(uris), "loopback_any_port": loopback}

    def _oauth2_token_client(self, tok, t, value, where):
        """The client_id and refresh_token of a configured OAuth 2.0 user token."""
        cid = tok.get("client_id")
        if cid is not None:
            client = self.x_oauth2_clients.get(cid)
            if client is None:
                raise ConfigError("%s: unknown client_id" % where)
            if t.get("consumer_key") is None:
                t["consumer_key"] = client["consumer_key"]
            elif t["consumer_key"] != client["consumer_key"]:
                raise ConfigError("%s: client_id belongs to another app than consumer_key" % where)
        refresh = tok.get("refresh_token")
        if refresh is None:
            return
        if not isinstance(refresh, str) or not refresh:
            raise ConfigError("%s: refresh_token must be a non-empty string" % where)
        if cid is None:
            raise ConfigError("%s: a refresh_token needs the client_id it was issued to" % where)
        if refresh in self.x_refresh_tokens:
            raise ConfigError("%s: refresh_token used twice" % where)
        self.x_refresh_tokens[refresh] = value

    # -- Facebook ------------------------------------------------------------
    def _load_facebook(self, fb, started):
        versions = fb.get("versions", {})
        self.fb_oldest = _version_number(versions.get("oldest", "v21.0"), "facebook.versions.oldest")
        self.fb_latest = _version_number(versions.get("latest", "v27.0"), "facebook.versions.latest")
        self.fb_default_version = "v%d.0" % self.fb_latest

        self.fb_apps = {}
        for i, app in enumerate(fb.get("apps", [])):
            where = "facebook.apps[%d]" % i
            aid = _need(app, "id", str, where)
            _need(app, "secret", str, where)
            a = {"name": "app %s" % aid, "require_appsecret_proof": False, "client_token": None,
                 "login_from_devices": True}
            a.update(app)
            if a["client_token"] is not None and (not isinstance(a["client_token"], str) or not a["client_token"]
                                                  or a["client_token"] == a["secret"]):
                raise ConfigError("%s: client_token must be a non-empty string other than the secret" % where)
            if not isinstance(a["login_from_devices"], bool):
                raise ConfigError("%s: login_from_devices must be true or false" % where)
            self.fb_apps[aid] = a

        self.fb_users = {}
        for i, user in enumerate(fb.get("users", [])):
            where = "facebook.users[%d]" % i
            uid = _need(user, "id", str, where)
            perms = user.get("permissions", {})
            if not isinstance(perms, dict) or any(
                    s not in ("granted", "declined", "expired") for s in perms.values()):
                raise ConfigError("%s: permissions must map names to granted/declined/expired" % where)
            u = {"name": "user %s" % uid}
            u.update(user)
            u["permissions"] = dict(perms)
            self.fb_users[uid] = u

        self.fb_pages = {}
        for i, page in enumerate(fb.get("pages", [])):
            where = "facebook.pages[%d]" % i
            pid = _need(page, "id", str, where)
            p = {"name": "page %s" % pid, "category": "Software", "roles": {}, "blocked": False}
            p.update(page)
            self.fb_pages[pid] = p
        overlap = set(self.fb_pages) & set(self.fb_users)
        if overlap:
            raise ConfigError("facebook: ids used for both users and pages: %s" % sorted(overlap))

        self.fb_tokens = {}
        for i, tok in enumerate(fb.get("tokens", [])):
            where = "facebook.tokens[%d]" % i
            value = _need(tok, "token", str, where)
            kind = _need(tok, "type", str, where).upper()
            app_id = _need(tok, "app_id", str, where)
            if app_id not in self.fb_apps:
                raise ConfigError("%s: unknown app_id" % where)
            t = dict(tok)
            t["type"] = kind
            t["label"] = tok.get("name") or token_label(value)
            t["expires"] = _expiry(tok, started, where)
            t["data_access_expires"] = _data_access_expiry(tok, started, where)
            t["long_lived"] = tok.get("long_lived", True)
            if not isinstance(t["long_lived"], bool):
                raise ConfigError("%s: long_lived must be true or false" % where)
            t["data_access_lapse"] = tok.get("data_access_lapse", "permissions")
            if t["data_access_lapse"] not in DATA_ACCESS_LAPSES:
                raise ConfigError("%s: data_access_lapse must be one of %s" % (where, ", ".join(DATA_ACCESS_LAPSES)))
            if "issued_at" in tok:
                t["issued_at"] = int(tok["issued_at"])
            elif t["data_access_expires"] is not None and t["data_access_expires"] <= started:
                # Data access runs 90 days from the last login: a token whose access
                # lapsed before start was issued 90 days before that.
                t["issued_at"] = int(t["data_access_expires"]) - DATA_ACCESS_DAYS * 86400
            else:
                t["issued_at"] = int(started)
            if t["data_access_expires"] is None:
                t["data_access_expires"] = t["issued_at"] + DATA_ACCESS_DAYS * 86400
            if kind in ("USER", "PAGE"):
                uid = _need(tok, "user_id", str, where)
                if uid not in self.fb_users:
                    raise ConfigError("%s: unknown user_id" % where)
                if "scopes" in tok:
                    t["scopes"] = list(tok["scopes"])
                else:
                    t["scopes"] = [p for p, s in self.fb_users[uid]["permissions"].items() if s == "granted"]
            if kind == "PAGE":
                if _need(tok, "page_id", str, where) not in self.fb_pages:
                    raise ConfigError("%s: unknown page_id" % where)
            elif kind not in ("USER", "APP"):
                raise ConfigError("%s: type must be USER, PAGE or APP" % where)
            self.fb_tokens[value] = t
        for aid, app in self.fb_apps.items():
            value = "%s|%s" % (aid, app["secret"])
            self.fb_tokens.setdefault(value, {"token": value, "type": "APP", "app_id": aid,
                                              "label": "app:%s" % aid, "expires": None, "long_lived": True,
                                              "issued_at": int(started), "scopes": [],
                                              "data_access_expires": int(started) + DATA_ACCESS_DAYS * 86400})

        self.fb_limits = limit_table(DEFAULT_FB_LIMITS, DEFAULT_FB_LIMITS, "facebook.limits")
        self.fb_limits.update(limit_table(fb.get("limits", {}), DEFAULT_FB_LIMITS, "facebook.limits"))
        dw = fb.get("duplicate_window")
        self.fb_duplicate_window = None if dw is None else float(dw)
        self.fb_scheduled_min = float(fb.get("scheduled_min_seconds", 600))
        self.fb_scheduled_max = float(fb.get("scheduled_max_seconds", 30 * 86400))
        self.fb_proof_max_age = float(fb.get("appsecret_time_window", 300))
        self.fb_device_interval = _count(fb, "device_interval", 5, "facebook")
        self.fb_device_expires_in = _count(fb, "device_expires_in", 420, "facebook", minimum=1)
        self.fb_device_token_lifetime = _count(fb, "device_token_lifetime", LONG_LIVED_SECONDS, "facebook",
                                               minimum=1)

    def lift_limits(self):
        """--no-rate-limits: every window and cap becomes 10**9 (headers stay)."""
        self.x_rate_limits = {k: _lift(v) for k, v in self.x_rate_limits.items()}
        self.x_post_caps = {k: _lift(v) for k, v in self.x_post_caps.items()}
        self.fb_limits = {k: _lift(v) for k, v in self.fb_limits.items()}


def _lift(spec):
    if spec is None:
        return None
    out = dict(spec, limit=UNLIMITED)
    if "app_limit" in out:
        out["app_limit"] = UNLIMITED
    return out


UNLIMITED = 10 ** 9


def _version_number(text, where):
    m = re.fullmatch(r"v?([0-9]+)\.0", str(text))
    if not m:
        raise ConfigError("%s: must look like v27.0" % where)
    return int(m.group(1))


# ---------------------------------------------------------------------------
# Rate-limit windows

class Window:
    __slots__ = ("reset", "count", "refused")

    def __init__(self, reset):
        self.reset = reset
        self.count = 0
        self.refused = False    # a request was turned away in this window


class Windows:
    """Fixed windows keyed by (bucket, identity). A window opens at the first
    request and closes `window` seconds later."""

    def __init__(self):
        self.table = {}

    def peek(self, key, window, now):
        w = self.table.get(key)
        if w is None or now >= w.reset:
            w = Window(now + window)
            self.table[key] = w
        return w

    def current(self, key, now):
        """The open window of a key, or None; unlike peek, opens none."""
        w = self.table.get(key)
        return w if w is not None and now < w.reset else None

    def take(self, key, limit, window, now):
        """Counts one request if the window has room. Returns
        (allowed, limit, remaining, reset_epoch)."""
        w = self.peek(key, window, now)
        if w.count >= limit:
            w.refused = True
            return False, limit, 0, w.reset
        w.count += 1
        return True, limit, limit - w.count, w.reset

    def clear(self):
        self.table.clear()

    def drop(self, bucket):
        """Closes every open window of one bucket (an X endpoint key,
        "24h:user", "fb:page", ...): the next request opens a fresh one."""
        for key in [k for k in self.table if k[0] == bucket]:
            del self.table[key]


# The window bucket each runtime-changeable limit counts in.
POST_CAP_BUCKETS = {"user": "24h:user", "app": "24h:app"}
FB_LIMIT_BUCKETS = {"app": "fb:app", "user": "fb:user", "page": "fb:page", "feed_post": "fb:feed"}


# ---------------------------------------------------------------------------
# Faults

FAULT_KINDS = ("status", "error", "reset_before", "reset_after", "delay", "truncate",
               "malformed", "hang", "null", "headers", "patch")
MATCH_KEYS = ("method", "path", "path_prefix", "path_regex", "endpoint", "service",
              "body_contains", "credential", "batch_item")


class Fault:
    def __init__(self, spec, fault_id):
        if not isinstance(spec, dict):
            raise ValueError("a fault must be an object")
        kind = spec.get("kind")
        if kind not in FAULT_KINDS:
            raise ValueError("fault kind must be one of %s" % ", ".join(FAULT_KINDS))
        match = spec.get("match", {})
        if not isinstance(match, dict):
            raise ValueError("fault match must be an object")
        unknown = set(match) - set(MATCH_KEYS)
        if unknown:
            raise ValueError("unknown match keys: %s" % ", ".join(sorted(unknown)))
        count = spec.get("count", 1)
        if count is not None and (not isinstance(count, int) or count < 1):
            raise ValueError("count must be an integer >= 1 or null (unlimited)")
        skip = spec.get("skip", 0)
        if not isinstance(skip, int) or skip < 0:
            raise ValueError("skip must be an integer >= 0")
        if kind == "status" and not isinstance(spec.get("status", 503), int):
            raise ValueError("status must be an integer")
        if kind == "error" and not isinstance(spec.get("code"), int) and not spec.get("problem"):
            raise ValueError("an error fault needs an integer code (or, for X v2, a problem)")
        if kind == "null" and not match.get("batch_item"):
            raise ValueError("kind null applies to Graph batch items only (match.batch_item: true)")
        headers = spec.get("headers")
        if headers is not None and (not isinstance(headers, dict)
                                    or not all(isinstance(v, (str, int, float)) for v in headers.values())):
            raise ValueError("headers must be an object of header names to string or number values")
        if kind == "headers" and not headers:
            raise ValueError("kind headers needs a non-empty headers object")
        members = spec.get("members")
        if kind == "patch" and (not isinstance(members, dict) or not members
                                or not all(isinstance(v, str) for v in members.values())):
            raise ValueError("kind patch needs a non-empty members object of names to raw JSON text")
        self.id = str(spec.get("id") or fault_id)
        self.kind = kind
        self.spec = spec
        self.match = match
        self.remaining = count
        self.skip = skip
        self.hits = 0
        self.regex = re.compile(match["path_regex"]) if "path_regex" in match else None
        self.batch_item = bool(match.get("batch_item", False))

    def matches(self, info):
        m = self.match
        if self.batch_item != info.get("batch_item", False):
            return False
        if "method" in m and m["method"].upper() != info["method"]:
            return False
        if "path" in m and m["path"] != info["path"]:
            return False
        if "path_prefix" in m and not info["path"].startswith(m["path_prefix"]):
            return False
        if self.regex is not None and not self.regex.search(info["path"]):
            return False
        if "endpoint" in m and m["endpoint"] != info.get("endpoint"):
            return False
        if "service" in m and m["service"] != info.get("service"):
            return False
        if "body_contains" in m and m["body_contains"] not in info.get("body_text", ""):
            return False
        if "credential" in m and m["credential"] != info.get("credential"):
            return False
        return True

    def describe(self):
        d = dict(self.spec)
        d["id"] = self.id
        d["remaining"] = self.remaining
        d["hits"] = self.hits
        return d


# ---------------------------------------------------------------------------
# The world

# Media processing and expiry at start and after reset (control keys
# media_processing and media_expires_after_secs; sandbox_media).
MEDIA_PROCESSING_DEFAULTS = {"check_after_secs": 1, "polls": 2, "outcome": "succeeded", "error": None}
MEDIA_EXPIRES_AFTER_DEFAULT = 86400

class World:
    def __init__(self, raw_config, *, verify_signatures=True, log_limit=50000, unlimited=False):
        self.started = time.time()
        self.raw_config = raw_config
        self.config = Config(raw_config, self.started)
        if unlimited:
            self.config.lift_limits()
        self.verify_signatures = verify_signatures
        self.lock = threading.Lock()
        self.log_limit = log_limit
        self._fault_ids = itertools.count(1)
        self._snowflake_last = 0
        self._reset_state()

    def _reset_state(self):
        cfg = self.config
        self.faults = []
        self.latency_ms = 0
        self.revoked = {}          # token -> subcode (Graph) / True
        self.expired = set()       # tokens expired by the control API
        self.windows = Windows()
        self.nonces = {}           # (consumer_key, token, nonce) -> expiry time
        self._nonce_sweep = 0.0
        self.log = collections.deque(maxlen=self.log_limit)
        self.log_seq = 0
        self.posts = []
        self.post_index = {}       # post id -> post
        self.x_texts = {}          # author id -> {text: created epoch}
        self.fb_texts = {}         # page id -> {(message, link): created epoch}
        self.x_tweets = dict(cfg.x_tweets)
        self.fb_posts = {}         # post id -> post
        self.fb_page_posts = collections.defaultdict(list)
        self.x_rate_limits = dict(cfg.x_rate_limits)
        self.x_post_caps = dict(cfg.x_post_caps)
        self.x_page_shape = "full"
        self.fb_limits = dict(cfg.fb_limits)
        self.usage_caps = {k: a["usage_cap"] for k, a in cfg.x_apps.items() if a.get("usage_cap")}
        self.fb_permissions = {uid: dict(u["permissions"]) for uid, u in cfg.fb_users.items()}
        self.fb_extra_tokens = {}  # Graph tokens issued at runtime: exchanged, device login, minted Page tokens
        self.fb_minted_page_tokens = {}  # (user token, page id) -> the Page token it was given
        self.fb_device_logins = {}       # device code -> login (sandbox_graph, Login for Devices)
        self.device_interval = cfg.fb_device_interval
        self.device_expires_in = cfg.fb_device_expires_in
        # X tokens handed out at runtime (sandbox_x_auth) and the flows that lead to them.
        self.x_request_tokens = {}       # OAuth 1.0a request token -> its PIN flow
        self.x_issued_oauth1 = {}        # access tokens of PIN flows
        self.x_issued_bearers = {}       # OAuth 2.0 user tokens, and app-only bearers issued again
        self.x_refresh = {}              # refresh token -> {client_id, user_id, scope_list, family, used}
        self.x_token_families = {}       # family -> {"access": [...], "refresh": [...]}: one authorization's tokens
        self.oauth2_pending = {}         # state -> an authorization waiting for consent
        self.oauth2_codes = {}           # authorization code -> what it may be exchanged for
        self.oauth2_token_lifetime = cfg.x_oauth2_token_lifetime
        self.oauth2_code_lifetime = cfg.x_oauth2_code_lifetime
        # Media uploads (sandbox_media): id -> Media, in initialization order.
        self.media = {}
        self.media_swept = 0.0
        self.media_processing = dict(MEDIA_PROCESSING_DEFAULTS)
        self.media_expires_after_secs = MEDIA_EXPIRES_AFTER_DEFAULT
        # X billing and plan (sandbox_x_billing, sandbox_x_plan).
        self.x_credits = B.Credits.from_config(cfg)
        self.x_self_serve = cfg.x_self_serve
        for refresh, access in cfg.x_refresh_tokens.items():
            rec = cfg.x_bearers[access]
            family = "config:" + rec["label"]
            self.x_refresh[refresh] = {"token": refresh, "client_id": rec["client_id"], "user_id": rec["user_id"],
                                       "scope_list": list(rec["scope_list"]), "family": family, "used": False,
                                       "label": rec["label"] + ":refresh"}
            self.x_token_families[family] = {"access": [access], "refresh": [refresh]}

    def reset(self):
        with self.lock:
            self._reset_state()

    # -- ids -------------------------------------------------------------------
    def snowflake(self, now):
        """A 19-digit, strictly increasing id shaped like an X snowflake."""
        sid = (int(now * 1000) - TWITTER_EPOCH_MS) << 22
        if sid <= self._snowflake_last:
            sid = self._snowflake_last + 1
        self._snowflake_last = sid
        return str(sid)

    # -- tokens ------------------------------------------------------------------
    def token_state(self, token, expires, now):
        """'ok', 'revoked' or 'expired' (caller holds the lock or accepts a race)."""
        if token in self.revoked:
            return "revoked"
        if token in self.expired or (expires is not None and now >= expires):
            return "expired"
        return "ok"

    # -- faults -------------------------------------------------------------------
    def add_fault(self, spec):
        fault = Fault(spec, "f%d" % next(self._fault_ids))
        self.faults.append(fault)
        return fault.id

    def take_fault(self, info):
        """The first active fault matching the request, consuming one use."""
        if not self.faults:
            return None
        for fault in self.faults:
            if fault.remaining == 0 or not fault.matches(info):
                continue
            if fault.skip > 0:
                fault.skip -= 1
                continue
            fault.hits += 1
            if fault.remaining is not None:
                fault.remaining -= 1
            return fault
        return None

    # -- nonces -------------------------------------------------------------------
    def use_nonce(self, key, now, lifetime):
        """Records a nonce; False if it was already used within its lifetime."""
        if now - self._nonce_sweep > 30:
            self._nonce_sweep = now
            stale = [k for k, exp in self.nonces.items() if exp <= now]
            for k in stale:
                del self.nonces[k]
        exp = self.nonces.get(key)
        if exp is not None and exp > now:
            return False
        self.nonces[key] = now + lifetime
        return True

    # -- posts ----------------------------------------------------------------------
    def record_post(self, post):
        self.posts.append(post)
        self.post_index[post["id"]] = post

    def posts_view(self, service=None):
        posts = [p for p in self.posts if service is None or p["service"] == service]
        counts = collections.Counter(p["text"] for p in posts)
        return {"posts": posts, "counts": dict(counts),
                "duplicates": sorted(t for t, n in counts.items() if n > 1),
                "total": len(posts)}

    # -- log -------------------------------------------------------------------------
    def append_log(self, entry):
        self.log_seq += 1
        entry["seq"] = self.log_seq
        self.log.append(entry)
        return entry

    # -- control view -----------------------------------------------------------------
    def describe(self):
        return {
            "started": self.started,
            "faults": [f.describe() for f in self.faults],
            "latency_ms": self.latency_ms,
            "revoked": sorted(self._label(t) for t in self.revoked),
            "expired": sorted(self._label(t) for t in self.expired),
            "x_rate_limits": self.x_rate_limits,
            "x_post_caps": self.x_post_caps,
            "x_page_shape": self.x_page_shape,
            "facebook_limits": self.fb_limits,
            "usage_caps": self.usage_caps,
            "verify_signatures": self.verify_signatures,
            "log_entries": len(self.log),
            "posts": len(self.posts),
            "oauth2_token_lifetime": self.oauth2_token_lifetime,
            "oauth2_code_lifetime": self.oauth2_code_lifetime,
            "device_interval": self.device_interval,
            "device_expires_in": self.device_expires_in,
            "media_processing": self.media_processing,
            "media_expires_after_secs": self.media_expires_after_secs,
            "media": len(self.media),
            "credits": dict(self.x_credits.view(), charges=len(self.x_credits.charges)),
            "self_serve": self.x_self_serve,
            "pending": self.pending_view(time.time()),
        }

    def _label(self, token):
        rec = self.credential_record(token)
        return rec["label"] if rec is not None else token_label(token)

    def known_token(self, token):
        return self.credential_record(token) is not None

    # -- credentials ---------------------------------------------------------------
    def x_oauth1_record(self, token):
        """An OAuth 1.0a access token, configured or issued by a PIN flow."""
        rec = self.config.x_oauth1.get(token)
        return rec if rec is not None else self.x_issued_oauth1.get(token)

    def x_bearer_record(self, token):
        """An app-only bearer or OAuth 2.0 user token, configured or issued."""
        rec = self.config.x_bearers.get(token)
        return rec if rec is not None else self.x_issued_bearers.get(token)

    def credential_record(self, token):
        """Any token the sandbox knows (access, refresh, Graph), or None."""
        cfg = self.config
        for table in (cfg.x_oauth1, cfg.x_bearers, cfg.fb_tokens, self.fb_extra_tokens, self.x_issued_oauth1,
                      self.x_issued_bearers, self.x_refresh):
            rec = table.get(token)
            if rec is not None:
                return rec
        return None

    def pending_view(self, now):
        """What waits for consent through the control API (no secrets: request
        tokens, states and user codes are all public in the real flows)."""
        cfg = self.config
        return {
            "request_tokens": [{"oauth_token": t, "app": cfg.x_apps[r["consumer_key"]]["name"],
                                "access_level": r["access_level"]}
                               for t, r in self.x_request_tokens.items() if r["state"] == "pending"],
            "oauth2": [{"state": s, "client_id": p["client_id"], "redirect_uri": p["redirect_uri"],
                        "scope": " ".join(p["scope_list"])} for s, p in self.oauth2_pending.items()],
            "device": [{"user_code": d["user_code"], "app_id": d["app_id"], "scope": ",".join(d["scopes"])}
                       for d in self.fb_device_logins.values() if d["state"] == "pending" and now < d["expires"]],
        }


def load_config(path):
    with open(path, encoding="utf-8") as f:
        try:
            return json.load(f)
        except json.JSONDecodeError as e:
            raise ConfigError("%s: not valid JSON: %s" % (path, e))


def ceil_epoch(t):
    return int(math.ceil(t))
