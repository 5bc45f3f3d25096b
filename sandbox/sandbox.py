#!/usr/bin/env python3
"""socialpipe sandbox: a local stand-in for the X API and the Facebook Graph API.

    python3 sandbox/sandbox.py --port 0 [--config FILE] [--tls-cert F --tls-key F]
                               [--threads N] [--no-verify-signatures] [--no-rate-limits]

The first line on stdout is `listening 127.0.0.1:PORT`. See sandbox/README.md.
"""
import argparse
import email.utils
import http
import http.server
import json
import os
import select
import signal
import socket
import ssl
import struct
import sys
import threading
import time
import traceback
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

try:
    import sandbox_graph as G  # noqa: E402
    import sandbox_media as M  # noqa: E402
    import sandbox_world as W  # noqa: E402
    import sandbox_x as X  # noqa: E402
    import sandbox_x_auth as XA  # noqa: E402
    import sandbox_x_billing as XB  # noqa: E402
    from sandbox_http import Request, dumps, json_response  # noqa: E402
except ModuleNotFoundError as missing:
    # A plain `python3 sandbox/sandbox.py` lacks the packages `make venv` installs.
    if (missing.name or "").startswith("sandbox_"):
        raise
    sys.exit("sandbox: the Python package %s is missing; `make venv` installs it in .venv: "
             "run .venv/bin/python sandbox/sandbox.py" % missing.name)

DEFAULT_CONFIG = os.path.join(HERE, "default-config.json")
LOG_BODY_LIMIT = 4096
REASONS = {s.value: s.phrase for s in http.HTTPStatus}


# ---------------------------------------------------------------------------
# Control API: /__control, /__log, /__posts, /__media, /__ledger, /__health

CONTROL_KEYS = ("reset", "clear_faults", "clear_log", "clear_posts", "reset_rate_limits", "latency_ms",
                "fault", "faults", "revoke_token", "revoke_tokens", "expire_token", "expire_tokens",
                "restore_token", "restore_tokens", "rate_limits", "post_caps", "facebook_limits", "usage_cap",
                "permission", "permissions", "x_page_shape", "oauth2_token_lifetime", "oauth2_code_lifetime",
                "device_interval", "device_expires_in", "authorize_request_token", "authorize_oauth2",
                "approve_device", "media_processing", "media_expires_after_secs", "credits", "self_serve")


def control_error(message):
    return json_response(400, {"ok": False, "error": message})


def _list(body, one, many):
    values = []
    if one in body:
        values.append(body[one])
    if many in body:
        if not isinstance(body[many], list):
            raise ValueError("%s must be a list" % many)
        values.extend(body[many])
    return values


def _setting(body, key, integer, minimum):
    """A lifetime or interval from a control body: a number (an integer if
    `integer`) of at least `minimum` (above 0 when minimum is 0 and not integer)."""
    value = body[key]
    ok = isinstance(value, int) if integer else isinstance(value, (int, float))
    if not ok or isinstance(value, bool) or value < minimum or (not integer and value <= 0):
        raise ValueError("%s must be %s >= %s" % (key, "an integer" if integer else "a number of seconds",
                                                  minimum))
    return value


def apply_control(world, body):
    """Applies a control body; returns (fault ids, extra reply keys)."""
    if not isinstance(body, dict):
        raise ValueError("the control body must be a JSON object")
    unknown = [k for k in body if k not in CONTROL_KEYS]
    if unknown:
        raise ValueError("unknown control keys: %s (known: %s)" % (", ".join(unknown), ", ".join(CONTROL_KEYS)))
    fault_ids = []
    if body.get("reset"):
        world.reset()
    with world.lock:
        if body.get("clear_faults"):
            world.faults = []
        if body.get("clear_log"):
            world.log.clear()
        if body.get("clear_posts"):
            clear_posts(world)
        if body.get("reset_rate_limits"):
            world.windows.clear()
        if "latency_ms" in body:
            if not isinstance(body["latency_ms"], (int, float)) or body["latency_ms"] < 0:
                raise ValueError("latency_ms must be a number >= 0")
            world.latency_ms = body["latency_ms"]
        for spec in _list(body, "fault", "faults"):
            fault_ids.append(world.add_fault(spec))
        for item in _list(body, "revoke_token", "revoke_tokens"):
            token, subcode = (item.get("token"), item.get("subcode", 460)) if isinstance(item, dict) else (item, 460)
            if not isinstance(token, str) or not world.known_token(token):
                raise ValueError("revoke_token: unknown token")
            world.revoked[token] = subcode
        for token in _list(body, "expire_token", "expire_tokens"):
            if not isinstance(token, str) or not world.known_token(token):
                raise ValueError("expire_token: unknown token")
            world.expired.add(token)
        for token in _list(body, "restore_token", "restore_tokens"):
            world.revoked.pop(token, None)
            world.expired.discard(token)
        # A changed limit closes the open windows it governs: a window opened
        # under the old limit must not outlive it (a 900 s window lowered to 3 s).
        if "rate_limits" in body:
            table = W.limit_table(body["rate_limits"], W.DEFAULT_X_RATE_LIMITS, "rate_limits", True)
            for endpoint, spec in table.items():
                world.x_rate_limits[endpoint] = spec
                world.windows.drop(endpoint)
        if "post_caps" in body:
            table = W.limit_table(body["post_caps"], W.DEFAULT_X_POST_CAPS, "post_caps")
            for scope, spec in table.items():
                world.x_post_caps[scope] = spec
                world.windows.drop(W.POST_CAP_BUCKETS[scope])
        if "facebook_limits" in body:
            table = W.limit_table(body["facebook_limits"], W.DEFAULT_FB_LIMITS, "facebook_limits")
            for name, spec in table.items():
                world.fb_limits[name] = spec
                world.windows.drop(W.FB_LIMIT_BUCKETS[name])
        if "usage_cap" in body:
            cap = body["usage_cap"]
            if cap is None:
                world.usage_caps = {}
            elif isinstance(cap, dict):
                keys = [cap["consumer_key"]] if cap.get("consumer_key") else list(world.config.x_apps)
                for key in keys:
                    if key not in world.config.x_apps:
                        raise ValueError("usage_cap: unknown consumer_key")
                    if cap.get("period") is None and "period" in cap:
                        world.usage_caps.pop(key, None)
                    else:
                        world.usage_caps[key] = {"period": cap.get("period", "Monthly"),
                                                 "scope": cap.get("scope", "Product")}
            else:
                raise ValueError("usage_cap must be an object or null")
        for perm in _list(body, "permission", "permissions"):
            if not isinstance(perm, dict) or perm.get("status") not in ("granted", "declined", "expired", None):
                raise ValueError("permission: needs user_id, permission and status granted/declined/expired/null")
            perms = world.fb_permissions.setdefault(str(perm.get("user_id")), {})
            if perm.get("status") is None:
                perms.pop(perm.get("permission"), None)
            else:
                perms[perm["permission"]] = perm["status"]
        if "x_page_shape" in body:
            if body["x_page_shape"] not in W.PAGE_SHAPES:
                raise ValueError("x_page_shape must be one of %s" % ", ".join(W.PAGE_SHAPES))
            world.x_page_shape = body["x_page_shape"]
        if "oauth2_token_lifetime" in body:
            world.oauth2_token_lifetime = _setting(body, "oauth2_token_lifetime", True, 1)
        if "oauth2_code_lifetime" in body:
            world.oauth2_code_lifetime = _setting(body, "oauth2_code_lifetime", False, 0)
        if "device_interval" in body:
            world.device_interval = _setting(body, "device_interval", True, 0)
        if "device_expires_in" in body:
            world.device_expires_in = _setting(body, "device_expires_in", True, 1)
        if "media_processing" in body:
            world.media_processing = M.processing_setting(body["media_processing"])
        if "media_expires_after_secs" in body:
            world.media_expires_after_secs = M.expires_setting(body["media_expires_after_secs"])
        if "credits" in body:
            world.x_credits.apply(W.billing_settings(body["credits"], "credits"))
        if "self_serve" in body:
            if not isinstance(body["self_serve"], bool):
                raise ValueError("self_serve must be true or false")
            world.x_self_serve = body["self_serve"]
        # Consent, which a person gives in a browser (README section 6).
        now = time.time()
        extra = {}
        if "authorize_request_token" in body:
            extra["pin"] = XA.authorize_request_token(world, body["authorize_request_token"], now)
        if "authorize_oauth2" in body:
            extra["redirect"] = XA.authorize_oauth2(world, body["authorize_oauth2"], now)
        if "approve_device" in body:
            extra["scopes"] = G.approve_device(world, body["approve_device"], now)
    return fault_ids, extra


def clear_posts(world):
    world.posts = []
    world.post_index = {}
    world.x_texts = {}
    world.fb_texts = {}
    world.fb_posts = {}
    world.fb_page_posts.clear()
    world.x_tweets = dict(world.config.x_tweets)


def control(server, req):
    world = server.world
    q = dict(req.query)
    if req.path == "/__health":
        return json_response(200, {"ok": True})
    if req.path == "/__control":
        if req.method == "GET":
            with world.lock:
                return json_response(200, world.describe())
        if req.method != "POST":
            return json_response(405, {"ok": False, "error": "use GET or POST"})
        try:
            body = json.loads(req.body.decode("utf-8") or "{}")
            ids, extra = apply_control(world, body)
        except (ValueError, UnicodeDecodeError, W.ConfigError) as e:
            return control_error(str(e))
        return json_response(200, dict({"ok": True, "fault_ids": ids}, **extra))
    if req.path == "/__log":
        if req.method == "DELETE":
            with world.lock:
                world.log.clear()
            return json_response(200, {"ok": True})
        with world.lock:
            entries = list(world.log)
        since = int(q.get("since", 0) or 0)
        entries = [e for e in entries if e["seq"] > since]
        if q.get("path"):
            entries = [e for e in entries if e["path"] == q["path"]]
        if q.get("service"):
            entries = [e for e in entries if e["service"] == q["service"]]
        if q.get("limit"):
            entries = entries[-int(q["limit"]):]
        return json_response(200, entries)
    if req.path == "/__media":
        with world.lock:
            if req.method == "DELETE":
                world.media = {}
                return json_response(200, {"ok": True})
            return json_response(200, M.describe(world))
    if req.path == "/__ledger":
        if req.method == "DELETE":
            with world.lock:
                world.x_credits.clear_ledger()
            return json_response(200, {"ok": True})
        return json_response(200, XB.ledger(world))
    if req.path == "/__posts":
        if req.method == "DELETE":
            with world.lock:
                clear_posts(world)
            return json_response(200, {"ok": True})
        with world.lock:
            return json_response(200, world.posts_view(q.get("service")))
    return json_response(404, {"ok": False, "error": "unknown control path %s" % req.path})


# ---------------------------------------------------------------------------
# Request classification and fault bodies

def classify(req):
    """(service, endpoint key) of an API request. X owns /2/, /1.1/, /oauth2/,
    /oauth/ and /i/; every other path is the Graph API's, versioned or not (an
    unversioned one other than the batch `POST /` gets Graph's code 100)."""
    if X.is_x_path(req.path):
        if XA.serves(req):
            return "x", XA.endpoint_of(req)
        return "x", X.endpoint_for(req.method, req.path)
    return "facebook", G.endpoint_for(req.method, req.path)


def dispatch(world, service, req):
    if service == "x":
        return XA.handle(world, req) if XA.serves(req) else X.handle(world, req)
    return G.handle(world, req)


def graph_fault_response(world, spec, req):
    split = G.split_version(req.path)
    version = split[0] if split else world.config.fb_latest
    status, body = G.fault_body(spec)
    trace = body["error"].get("fbtrace_id") if isinstance(body, dict) and isinstance(body.get("error"), dict) \
        else G.trace_id()
    return json_response(status, body, G.base_headers(version, trace), G.JSON_TYPE)


def fault_response(world, service, endpoint, req, fault):
    spec = fault.spec
    if fault.kind == "error":
        if service == "facebook":
            resp = graph_fault_response(world, spec, req)
        else:
            resp = X.error_fault_response(world, X.version_of(req.path), spec)
    else:
        status = spec.get("status", 503)
        if service == "facebook":
            resp = graph_fault_response(world, spec, req)
        else:
            body, ctype = X.default_status_body(world, X.version_of(req.path), status)
            resp = json_response(status, body, None, ctype)
            if status == 429 and service == "x":
                resp.headers.extend(X.fault_rate_headers(world, req, endpoint))
        if "body" in spec:
            resp.body = spec["body"].encode("utf-8") if isinstance(spec["body"], str) else dumps(spec["body"])
    if spec.get("retry_after") is not None:
        resp.set_header("Retry-After", str(spec["retry_after"]))
    for k, v in (spec.get("headers") or {}).items():
        resp.set_header(k, str(v))
    resp.meta = {"service": service, "endpoint": endpoint}
    return resp


def patched_body(body, members):
    """A JSON object answer with `members` set to raw text, written as given
    (`1e300`, `Infinity`, `"x"`): numbers no JSON encoder would write. Members
    of the answer keep their order; new ones come last."""
    try:
        answer = json.loads(body.decode("utf-8"))
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        return body
    parts = []
    for key, value in answer.items():
        text = members[key] if key in members else json.dumps(value, separators=(",", ":"))
        parts.append(json.dumps(key) + ":" + text)
    parts += [json.dumps(key) + ":" + text for key, text in members.items() if key not in answer]
    return ("{" + ",".join(parts) + "}").encode("utf-8")


def log_headers(headers):
    out = {}
    for k, v in headers.items():
        if k == "authorization":
            out[k] = W.mask_authorization(v)
        elif k in ("cookie", "x-api-key"):
            out[k] = "[masked]"
        else:
            out[k] = v
    return out


def log_body(req):
    if not req.body:
        return None
    if req.content_type == "application/x-www-form-urlencoded":
        form = {}
        for k, v in req.form:
            masked = "[masked]" if k in W.SECRET_PARAM_NAMES else W.mask_text(v)
            form.setdefault(k, []).append(masked)
        return form
    if req.content_type == "multipart/form-data":
        return M.log_summary(req)
    try:
        text = req.body.decode("utf-8")
    except UnicodeDecodeError:
        return "<%d bytes>" % len(req.body)
    if len(text) > LOG_BODY_LIMIT:
        text = text[:LOG_BODY_LIMIT] + "...[%d bytes]" % len(req.body)
    return W.mask_text(text)


def log_query(req):
    out = {}
    for k, v in req.query:
        out.setdefault(k, []).append("[masked]" if k in W.SECRET_PARAM_NAMES else W.mask_text(v))
    return out


# ---------------------------------------------------------------------------
# HTTP server

class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "socialpipe-sandbox"
    sys_version = ""
    disable_nagle_algorithm = True
    timeout = 300

    def log_message(self, fmt, *args):
        if self.server.verbose:
            sys.stderr.write("sandbox: %s\n" % (fmt % args))

    def do_GET(self):
        self.serve()

    do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = do_GET

    # -- reading -------------------------------------------------------------
    def read_body(self):
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            chunks = []
            while True:
                line = self.rfile.readline(65537)
                size = int(line.split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline(65537)
        length = self.headers.get("Content-Length")
        if length:
            n = int(length)
            if n < 0:
                raise ValueError("negative Content-Length")
            return self.rfile.read(n)
        return b""

    # -- writing -------------------------------------------------------------
    def response_bytes(self, resp, declared_length=None):
        body = resp.body if self.command != "HEAD" else b""
        length = len(resp.body) if declared_length is None else declared_length
        lines = ["HTTP/1.1 %d %s" % (resp.status, REASONS.get(resp.status, "Status")),
                 "Date: " + email.utils.formatdate(usegmt=True),
                 "Server: " + self.server_version]
        for k, v in resp.headers:
            lines.append("%s: %s" % (k, v))
        if resp.status != 204:      # RFC 9110 section 8.6: never on a 204
            lines.append("Content-Length: %d" % length)
        if self.close_connection:
            lines.append("Connection: close")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace")
        return head, body

    def send(self, resp):
        head, body = self.response_bytes(resp)
        self.wfile.write(head + body)

    def reset_connection(self):
        """Aborts the connection with a TCP RST (SO_LINGER 0, then close)."""
        self.close_connection = True
        sock = self.connection
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
        try:
            self.rfile.close()
        except OSError:
            pass
        try:
            sock.close()
        except OSError:
            pass

    def hang(self):
        """Holds the connection open, answering nothing, until the client goes
        away (or --hang-max seconds pass)."""
        self.close_connection = True
        sock = self.connection
        deadline = time.time() + self.server.hang_max
        while time.time() < deadline and not self.server.stopping:
            try:
                readable, _, _ = select.select([sock], [], [], 0.25)
            except (OSError, ValueError):
                break
            if not readable:
                continue
            try:
                data = sock.recv(65536)
            except (ssl.SSLWantReadError, BlockingIOError):
                continue
            except OSError:
                break
            if not data:
                break

    def truncate(self, resp, spec):
        full = resp.body
        declared = max(len(full), 1)
        keep = spec.get("bytes")
        if not isinstance(keep, int) or keep < 0:
            keep = len(full) // 2
        keep = min(keep, declared - 1)
        self.close_connection = True
        head, body = self.response_bytes(resp, declared_length=declared)
        self.wfile.write(head + body[:keep])
        try:
            self.connection.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    # -- serving -------------------------------------------------------------
    def serve(self):
        started = time.time()
        world = self.server.world
        try:
            body = self.read_body()
        except (ValueError, OSError):
            self.close_connection = True
            self.send(json_response(400, {"errors": [{"message": "unreadable request body"}]}))
            return
        headers = {}
        for k, v in self.headers.items():
            k = k.lower()
            headers[k] = v if k not in headers else headers[k] + ", " + v
        host = headers.get("host") or "127.0.0.1:%d" % self.server.server_address[1]
        req = Request(self.command, self.path, headers, body, self.server.scheme, host)
        if req.path.startswith("/__"):
            self.send(control(self.server, req))
            return

        if world.latency_ms:
            time.sleep(world.latency_ms / 1000.0)
        service, endpoint = classify(req)
        body_text = req.body_text() if req.body and len(req.body) < 65536 else ""
        info = {"method": req.method, "path": req.path, "service": service, "endpoint": endpoint,
                "body_text": body_text, "batch_item": False}
        with world.lock:
            if world.faults:
                info["credential"] = credential_label(world, req)
            fault = world.take_fault(info)
            world.log_seq += 1
            seq = world.log_seq
        kind = fault.kind if fault else None
        spec = fault.spec if fault else {}
        entry = {"seq": seq, "time": started, "method": req.method, "path": req.path,
                 "query": log_query(req), "headers": log_headers(headers), "body": log_body(req),
                 "service": service, "endpoint": endpoint, "status": None, "outcome": "answered",
                 "auth": None, "fault": {"id": fault.id, "kind": kind} if fault else None,
                 "post_ids": [], "client_port": self.client_address[1]}

        if kind == "delay":
            time.sleep(spec.get("ms", 1000) / 1000.0)
        if kind == "reset_before":
            entry["outcome"] = "reset_before"
            self.finish_log(world, entry, started, None)
            self.reset_connection()
            return
        if kind == "hang" and not spec.get("process"):
            entry["outcome"] = "hang"
            self.finish_log(world, entry, started, None)
            self.hang()
            return

        try:
            if kind in ("status", "error"):
                resp = fault_response(world, service, endpoint, req, fault)
            else:
                resp = dispatch(world, service, req)
        except Exception:  # a sandbox bug: answer 500 and say so on stderr
            traceback.print_exc()
            ctype = G.JSON_TYPE if service == "facebook" else "application/json; charset=utf-8"
            resp = json_response(500, {"errors": [{"message": "sandbox internal error (see its stderr)"}]},
                                 None, ctype)

        if kind == "headers":
            for k, v in (spec.get("headers") or {}).items():
                resp.set_header(k, str(v))
            if spec.get("retry_after") is not None:
                resp.set_header("Retry-After", str(spec["retry_after"]))

        if kind == "patch":
            entry["outcome"] = "patched"
            resp.body = patched_body(resp.body, spec["members"])

        if kind == "reset_after":
            entry["outcome"] = "reset_after"
            self.finish_log(world, entry, started, resp)
            self.reset_connection()
            return
        if kind == "hang":
            entry["outcome"] = "hang"
            self.finish_log(world, entry, started, resp)
            self.hang()
            return
        if kind == "truncate":
            entry["outcome"] = "truncated"
            self.finish_log(world, entry, started, resp)
            self.truncate(resp, spec)
            return
        if kind == "malformed":
            entry["outcome"] = "malformed"
            default = "<!DOCTYPE html><html><body><h1>Something went wrong</h1></body></html>"
            text = spec.get("body", default)
            resp.body = text.encode("utf-8") if isinstance(text, str) else dumps(text)
        self.finish_log(world, entry, started, resp)
        self.send(resp)

    def finish_log(self, world, entry, started, resp):
        if resp is not None:
            entry["status"] = resp.status
            meta = resp.meta
            entry["auth"] = meta.get("auth")
            entry["post_ids"] = meta.get("post_ids", [])
            for key in ("duplicate", "rate_limited", "batch", "token_reuse", "plan", "billing", "charged"):
                if key in meta:
                    entry[key] = meta[key]
        entry["duration_ms"] = round((time.time() - started) * 1000, 3)
        if self.server.verbose:
            sys.stderr.write("sandbox: %s %s -> %s %s\n" % (entry["method"], entry["path"], entry["status"],
                                                             entry["outcome"]))
        with world.lock:
            for pid in entry["post_ids"]:
                post = world.post_index.get(pid)
                if post is not None:
                    post["request_seq"] = entry["seq"]
                    post["delivered"] = entry["outcome"] in ("answered", "malformed", "patched")
            world.log.append(entry)


def credential_label(world, req):
    """The configured name of the credential a request carries (for fault
    matching), without verifying it."""
    header = req.header("authorization") or ""
    scheme, _, rest = header.strip().partition(" ")
    value = None
    if scheme.lower() == "oauth" and "oauth_token" in rest:
        for part in rest.split(","):
            k, _, v = part.strip().partition("=")
            if k == "oauth_token":
                value = urllib.parse.unquote(v.strip('"'))
    elif scheme.lower() in ("bearer", "oauth"):
        value = rest.strip()
    if value is None:
        for k, v in req.query + req.form:
            if k == "access_token":
                value = v
    if value is None:
        return None
    rec = world.credential_record(value)
    return rec["label"] if rec is not None else None


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 512

    def __init__(self, port, world, ssl_context=None, threads=0, hang_max=600.0, verbose=False):
        self.world = world
        self.ssl_context = ssl_context
        self.scheme = "https" if ssl_context else "http"
        self.slots = threading.BoundedSemaphore(threads) if threads > 0 else None
        self.hang_max = hang_max
        self.verbose = verbose
        self.stopping = False
        super().__init__(("127.0.0.1", port), Handler)

    def process_request(self, request, client_address):
        if self.slots is not None:
            self.slots.acquire()
        try:
            super().process_request(request, client_address)
        except Exception:
            if self.slots is not None:
                self.slots.release()
            raise

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            if self.slots is not None:
                self.slots.release()

    def finish_request(self, request, client_address):
        if self.ssl_context is None:
            return super().finish_request(request, client_address)
        # The TLS handshake runs here, in the connection's own thread, so a slow
        # client cannot stall the accept loop.
        try:
            request.settimeout(30)
            tls = self.ssl_context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError):
            return
        try:
            self.RequestHandlerClass(tls, client_address, self)
        finally:
            try:
                tls.close()
            except OSError:
                pass

    def handle_error(self, request, client_address):
        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, ssl.SSLError, TimeoutError, BrokenPipeError)):
            return
        super().handle_error(request, client_address)


def parse_args(argv):
    p = argparse.ArgumentParser(prog="sandbox.py", description="Local stand-in for the X and Facebook Graph APIs.")
    p.add_argument("--port", type=int, default=0, help="TCP port on 127.0.0.1 (0 picks a free one)")
    p.add_argument("--config", help="JSON configuration (default: default-config.json next to this file)")
    p.add_argument("--tls-cert", help="PEM certificate chain: serve HTTPS")
    p.add_argument("--tls-key", help="PEM private key for --tls-cert")
    p.add_argument("--threads", type=int, default=0,
                   help="serve at most N connections at once (0: one thread per connection, no limit)")
    p.add_argument("--no-verify-signatures", action="store_true",
                   help="accept OAuth 1.0a requests without checking signature, timestamp and nonce")
    p.add_argument("--no-rate-limits", action="store_true",
                   help="raise every rate limit, posting cap and Graph budget to 10**9 (benchmarks)")
    p.add_argument("--log-limit", type=int, default=50000, help="request-log entries kept (oldest dropped)")
    p.add_argument("--hang-max", type=float, default=600.0, help="longest a 'hang' fault holds a connection")
    p.add_argument("--verbose", action="store_true", help="one line per request on stderr")
    args = p.parse_args(argv)
    if bool(args.tls_cert) != bool(args.tls_key):
        p.error("--tls-cert and --tls-key go together")
    return args


def main(argv=None):
    args = parse_args(argv)
    path = args.config or DEFAULT_CONFIG
    try:
        world = W.World(W.load_config(path), verify_signatures=not args.no_verify_signatures,
                        log_limit=args.log_limit, unlimited=args.no_rate_limits)
    except (OSError, W.ConfigError) as e:
        sys.stderr.write("sandbox: config %s: %s\n" % (path, e))
        return 2
    context = None
    if args.tls_cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        try:
            context.load_cert_chain(args.tls_cert, args.tls_key)
        except (OSError, ssl.SSLError) as e:
            sys.stderr.write("sandbox: TLS: %s\n" % e)
            return 2
        context.set_alpn_protocols(["http/1.1"])
    try:
        server = Server(args.port, world, context, args.threads, args.hang_max, args.verbose)
    except OSError as e:
        sys.stderr.write("sandbox: cannot listen on 127.0.0.1:%d: %s\n" % (args.port, e))
        return 2

    def stop(signum, frame):
        server.stopping = True
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    sys.stdout.write("listening 127.0.0.1:%d\n" % server.server_address[1])
    sys.stdout.flush()
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.stopping = True
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
