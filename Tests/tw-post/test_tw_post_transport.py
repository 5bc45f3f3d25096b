"""tw-post's transport failures (issue 7, items 12 and 14).

12. A proxy that refuses CONNECT (502) is a `network` error, retried like one:
    the post never left the machine, so `ambiguous` would be wrong. `ambiguous`
    only once the request's bytes may have reached the origin server.
14. A TLS failure says which: unknown issuer, host name mismatch, expired
    certificate; each is `network`, not retried, and nothing but the handshake
    reaches the server.

Each test starts its own small Python server on 127.0.0.1 (a proxy that refuses
CONNECT, or a TLS server that would answer 201 with a post if a request ever got
through) and runs the built tw-post in a scrubbed environment (Tests/conftest.py
`scrubbed_env`) with the sandbox's credentials; the sandbox itself is not needed.
"""
import datetime
import json
import socket
import ssl
import subprocess
import threading

import pytest
import trustme

TOOL = "tw-post"

# The sandbox's demo credentials (sandbox/default-config.json); no request here
# reaches the sandbox, but they are the credentials a real run would use.
CREDS = {"TW_CONSUMER_KEY": "sandbox-consumer-key", "TW_CONSUMER_SECRET": "sandbox-consumer-secret",
         "TW_ACCESS_TOKEN": "1000000000000000001-sandboxaccesstoken",
         "TW_ACCESS_TOKEN_SECRET": "sandbox-access-token-secret"}

# A host name that never resolves (RFC 2606 .test): only a proxy can get anywhere with it.
UNRESOLVABLE_BASE = "https://api.example.test"

POST_BODY = json.dumps({"data": {"id": "1999999999999999999", "text": "through"}}).encode()


# --------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------

class LoopbackServer:
    """A threaded TCP server on 127.0.0.1 (free port); subclasses implement serve(conn)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.1)
        self.port = self.sock.getsockname()[1]
        self.stopping = threading.Event()
        self.threads = []
        self.acceptor = threading.Thread(target=self._accept_loop, daemon=True)
        self.acceptor.start()

    def _accept_loop(self):
        while not self.stopping.is_set():
            try:
                conn, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            conn.settimeout(5)
            t = threading.Thread(target=self._serve_and_close, args=(conn,), daemon=True)
            self.threads.append(t)
            t.start()

    def _serve_and_close(self, conn):
        try:
            self.serve(conn)
        except (OSError, ssl.SSLError):
            pass
        finally:
            try:
                conn.close()
            except OSError:
                pass

    def serve(self, conn):
        raise NotImplementedError

    def stop(self):
        if self.stopping.is_set():
            return
        self.stopping.set()
        self.acceptor.join(timeout=5)
        self.sock.close()
        for t in self.threads:
            t.join(timeout=5)


def read_head(conn, limit=65536):
    """Bytes up to and including the blank line ending an HTTP request head (or what came before EOF)."""
    data = b""
    while b"\r\n\r\n" not in data and len(data) < limit:
        chunk = conn.recv(4096)
        if not chunk:
            break
        data += chunk
    return data


class RefusingProxy(LoopbackServer):
    """An HTTP proxy that answers every request, CONNECT included, with 502 Bad Gateway
    and keeps the request lines it was sent."""

    def __init__(self):
        self.request_lines = []
        super().__init__()

    def serve(self, conn):
        head = read_head(conn)
        if not head:
            return
        with self.lock:
            self.request_lines.append(head.split(b"\r\n", 1)[0].decode("latin-1"))
        conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nContent-Length: 11\r\n"
                     b"Connection: close\r\n\r\nBad Gateway")

    def connects(self):
        with self.lock:
            return [line for line in self.request_lines if line.startswith("CONNECT ")]


class TLSPostServer(LoopbackServer):
    """A TLS server that would answer any request with 201 and a created post. It records
    each connection: whether its handshake completed and which bytes came after it."""

    def __init__(self, context):
        self.context = context
        self.connections = []  # per connection: {"handshake": bool, "received": bytes}
        super().__init__()

    def serve(self, conn):
        seen = {"handshake": False, "received": b""}
        with self.lock:
            self.connections.append(seen)
        tls = self.context.wrap_socket(conn, server_side=True)   # raises when the client refuses us
        seen["handshake"] = True
        try:
            head = read_head(tls)
        except (OSError, ssl.SSLError):
            head = b""
        seen["received"] = head
        if head:
            tls.sendall(b"HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
                        b"Connection: close\r\n\r\n" % len(POST_BODY) + POST_BODY)
        tls.close()

    def snapshot(self):
        with self.lock:
            return [dict(c) for c in self.connections]


@pytest.fixture
def refusing_proxy():
    p = RefusingProxy()
    yield p
    p.stop()


@pytest.fixture
def tls_server():
    """tls_server(leaf_cert) -> a started TLSPostServer presenting that trustme leaf."""
    servers = []

    def _start(leaf):
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        leaf.configure_cert(ctx)
        s = TLSPostServer(ctx)
        servers.append(s)
        return s
    yield _start
    for s in servers:
        s.stop()


def run_tw_post(bin_path, env, args, stdin, timeout=30):
    try:
        p = subprocess.run([bin_path, *args], input=stdin, capture_output=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        pytest.fail("tw-post %r did not finish within %s s; stdout %r, stderr %r"
                    % (args, timeout, (e.stdout or b"")[:1000], (e.stderr or b"")[:1000]))
    envelopes = [json.loads(line) for line in p.stdout.decode("utf-8").splitlines()]
    return p, envelopes


def one_error(p, envelopes):
    assert len(envelopes) == 1, ("one envelope for the one record", p.returncode, p.stdout, p.stderr)
    [e] = envelopes
    assert e["ok"] is False, ("the post cannot have succeeded", e)
    assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)
    return e["error"]


# --------------------------------------------------------------------------------------
# item 12: a proxy that refuses CONNECT
# --------------------------------------------------------------------------------------

def test_proxy_refusing_connect_is_a_network_error_and_is_retried(bin_path, scrubbed_env, refusing_proxy):
    """The proxy answers CONNECT with 502: no byte of the post reached the origin (its name
    does not even resolve), so the record is `network`, retried (--retries 1: two CONNECTs,
    attempts 2) -- not `ambiguous`, which today ends it after one attempt."""
    proxy = "http://127.0.0.1:%d" % refusing_proxy.port
    env = scrubbed_env(dict(CREDS, TW_API_BASE=UNRESOLVABLE_BASE, https_proxy=proxy, HTTPS_PROXY=proxy))
    assert "example.test" not in env["NO_PROXY"] and "example.test" not in env["no_proxy"]
    p, envelopes = run_tw_post(bin_path, env, ["--retries", "1"], b'"never left the machine"\n')
    err = one_error(p, envelopes)
    assert err["kind"] == "network", ("a refused CONNECT is a network error, not %r" % err["kind"], err)
    assert err["attempts"] == 2, ("retried once, like any network error", err)
    lines = list(refusing_proxy.request_lines)
    assert refusing_proxy.connects() == ["CONNECT api.example.test:443 HTTP/1.1"] * 2, lines
    assert lines == refusing_proxy.connects(), ("the proxy saw only the two CONNECTs", lines)


# --------------------------------------------------------------------------------------
# item 14: TLS failures say which
# --------------------------------------------------------------------------------------

def _unknown_issuer(trustme, ca):
    # Signed by a CA tw-post is not told about; names fit, dates fit.
    return trustme.CA().issue_cert("127.0.0.1", "localhost"), False


def _name_mismatch(trustme, ca):
    # Trusted CA, valid dates, but the certificate is for another host.
    return ca.issue_cert("api.example.test"), True


def _expired(trustme, ca):
    # Trusted CA, right names, validity ended long ago.
    return ca.issue_cert("127.0.0.1", "localhost", not_before=datetime.datetime(2000, 1, 1),
                         not_after=datetime.datetime(2001, 1, 1)), True


# case -> (certificate builder, message must contain one of each group, message must not contain)
TLS_CASES = {
    "unknown-issuer": (_unknown_issuer, [("issuer",)], ("expired",)),
    "hostname-mismatch": (_name_mismatch, [("name",), ("match", "mismatch")], ("expired", "issuer")),
    "expired": (_expired, [("expired",)], ("issuer",)),
}


@pytest.mark.parametrize("case", list(TLS_CASES))
def test_tls_failure_is_a_network_error_whose_message_says_which(bin_path, scrubbed_env, tls_server, tmp_path,
                                                                 case):
    """unknown issuer / host name mismatch / expired certificate: `network`, one attempt
    (a lasting failure is not retried), nothing but the handshake reaches the server, and
    the message names the cause (today: the generic "SSL peer certificate or SSH remote key
    was not OK" for all three)."""
    build, must, must_not = TLS_CASES[case]
    ca = trustme.CA()
    ca_file = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    leaf, trust_ca = build(trustme, ca)
    server = tls_server(leaf)
    env = scrubbed_env(dict(CREDS, TW_API_BASE="https://127.0.0.1:%d" % server.port))
    args = ["--retries", "2", "--timeout", "10"] + (["--cacert", str(ca_file)] if trust_ca else [])
    p, envelopes = run_tw_post(bin_path, env, args, b'"must not be posted"\n')
    err = one_error(p, envelopes)
    assert err["kind"] == "network", err
    assert err["attempts"] == 1, ("a lasting TLS failure is not retried", err)
    server.stop()                       # every connection's thread has finished recording
    conns = server.snapshot()
    assert len(conns) == 1, ("one connection, no retry", conns)
    assert all(c["received"] == b"" for c in conns), ("no request bytes after the handshake", conns)
    message = err["message"].lower()
    for group in must:
        assert any(word in message for word in group), ("%s: the message must say %s" % (case, " or ".join(group)),
                                                        err["message"])
    for word in must_not:
        assert word not in message, ("%s: the message names the wrong cause (%r)" % (case, word), err["message"])
