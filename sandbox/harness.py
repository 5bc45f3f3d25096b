"""Start and drive the sandbox from Python tests and scripts.

    import harness
    with harness.Sandbox.start() as sb:                 # default-config.json
        sb.fault("status", match={"method": "POST", "path": "/2/tweets"}, status=503, retry_after=1)
        sb.control(x_page_shape="ragged")               # following pages of 0, 1, ceil(n/2), n, ...
        ... run something against sb.url ...
        assert sb.posts()["counts"] == {"hello": 1}

Only the standard library is needed, except for tls=True (PyPI trustme).
"""
import copy
import json
import os
import pathlib
import select
import signal
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

HERE = pathlib.Path(__file__).resolve().parent
SERVER = HERE / "sandbox.py"
DEFAULT_CONFIG = HERE / "default-config.json"

# TLS certificates made by tls=True cover these names, so a client can be
# pointed at the sandbox under the real API host names.
TLS_NAMES = ("127.0.0.1", "localhost", "api.twitter.com", "api.x.com", "graph.facebook.com",
             "upload.twitter.com")


def default_config():
    """A fresh, modifiable copy of default-config.json."""
    with open(DEFAULT_CONFIG, encoding="utf-8") as f:
        return json.load(f)


def merged_config(**sections):
    """default_config() with keys of its 'x' and 'facebook' sections replaced:
    merged_config(x={"rate_limits": {...}}) keeps everything else."""
    cfg = default_config()
    for name, values in sections.items():
        cfg.setdefault(name, {}).update(copy.deepcopy(values))
    return cfg


class SandboxError(RuntimeError):
    pass


class TLSFiles:
    """Certificate, key and CA bundle paths for an HTTPS sandbox."""

    def __init__(self, cert, key, ca=None):
        self.cert = str(cert)
        self.key = str(key)
        self.ca = str(ca) if ca else None

    @classmethod
    def generate(cls, directory, names=TLS_NAMES):
        import trustme
        ca = trustme.CA()
        leaf = ca.issue_cert(*names)
        d = pathlib.Path(directory)
        cert, key, ca_path = d / "sandbox-cert.pem", d / "sandbox-key.pem", d / "sandbox-ca.pem"
        leaf.private_key_and_cert_chain_pem.write_to_path(str(cert))
        leaf.private_key_pem.write_to_path(str(key))
        ca.cert_pem.write_to_path(str(ca_path))
        return cls(cert, key, ca_path)


class Sandbox:
    """A running sandbox process. Use Sandbox.start(); stop() (or leaving the
    with-block) ends it."""

    def __init__(self, process, port, scheme, workdir, tls, stderr_path):
        self.process = process
        self.port = port
        self.host = "127.0.0.1"
        self.scheme = scheme
        self.url = "%s://127.0.0.1:%d" % (scheme, port)
        self.tls = tls
        self.ca_file = tls.ca if tls else None
        self._workdir = workdir
        self._stderr_path = stderr_path
        self._ssl = None
        if tls:
            self._ssl = ssl.create_default_context(cafile=tls.ca) if tls.ca else ssl._create_unverified_context()

    @classmethod
    def start(cls, config=None, tls=None, extra_args=(), timeout=15.0, env=None):
        """Starts sandbox.py on a free port and waits for its `listening` line.

        config: None (default-config.json), a dict (written to a temporary
        file), or a path. tls: None, True (trustme certificates for 127.0.0.1
        and the real API host names), a TLSFiles, or a (cert, key[, ca]) tuple.
        """
        workdir = tempfile.TemporaryDirectory(prefix="sandbox-")
        args = [sys.executable, str(SERVER), "--port", "0"]
        if isinstance(config, dict):
            path = os.path.join(workdir.name, "config.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(config, f)
            args += ["--config", path]
        elif config is not None:
            args += ["--config", str(config)]
        if tls is True:
            tls = TLSFiles.generate(workdir.name)
        elif isinstance(tls, (tuple, list)):
            tls = TLSFiles(*tls)
        if tls:
            args += ["--tls-cert", tls.cert, "--tls-key", tls.key]
        args += list(extra_args)
        stderr_path = os.path.join(workdir.name, "stderr.txt")
        stderr = open(stderr_path, "wb")
        process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=stderr, stdin=subprocess.DEVNULL,
                                   env=env)
        stderr.close()
        line = b""
        deadline = time.time() + timeout
        while time.time() < deadline and not line.endswith(b"\n"):
            ready, _, _ = select.select([process.stdout], [], [], 0.1)
            if ready:
                chunk = os.read(process.stdout.fileno(), 1)
                if not chunk:
                    break
                line += chunk
        text = line.decode("utf-8", "replace").strip()
        if not text.startswith("listening 127.0.0.1:"):
            process.kill()
            process.wait()
            with open(stderr_path, encoding="utf-8", errors="replace") as f:
                err = f.read()
            workdir.cleanup()
            raise SandboxError("sandbox did not start (stdout %r): %s" % (text, err.strip()))
        port = int(text.rsplit(":", 1)[1])
        return cls(process, port, "https" if tls else "http", workdir, tls, stderr_path)

    # -- control API ---------------------------------------------------------
    def _call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode("utf-8")
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=30, context=self._ssl) as resp:
                return json.loads(resp.read().decode("utf-8"))
        except urllib.error.HTTPError as e:
            raise SandboxError("%s %s: %s %s" % (method, path, e.code, e.read().decode("utf-8", "replace")))

    def control(self, **body):
        """POST /__control with these keys (README section 6), e.g.
        control(latency_ms=20), control(fault={...}), control(x_page_shape="ragged"),
        control(post_caps={"user": {"limit": 1, "window": 86400}}). Returns the
        reply ({"ok": true, "fault_ids": [...]}); a refused body raises SandboxError."""
        return self._call("POST", "/__control", body)

    def fault(self, kind, match=None, **fields):
        """Adds one fault and returns its id: fault("reset_after", match={"path": "/2/tweets"})."""
        spec = dict(fields, kind=kind)
        if match is not None:
            spec["match"] = match
        return self.control(fault=spec)["fault_ids"][0]

    def state(self):
        """GET /__control: faults (with remaining counts), latency, revocations, limits."""
        return self._call("GET", "/__control")

    def clear(self):
        """Back to the state right after start: no faults, latency, revocations,
        log, posts, rate-limit windows or nonces; configured limits and caps;
        page shape "full"."""
        return self.control(reset=True)

    reset = clear

    def log(self, **filters):
        """GET /__log: the request log (list of dicts, oldest first). Filters:
        since=SEQ, path=PATH, service=x|facebook, limit=N."""
        query = "&".join("%s=%s" % (k, urllib.request.quote(str(v))) for k, v in filters.items())
        return self._call("GET", "/__log" + ("?" + query if query else ""))

    def posts(self, service=None):
        """GET /__posts: {"posts": [...], "counts": {text: n}, "duplicates": [...], "total": n}."""
        return self._call("GET", "/__posts" + ("?service=" + service if service else ""))

    def media(self):
        """GET /__media: the media store, a list of {"id", "user_id", "media_type",
        "media_category", "total_bytes", "received_bytes", "segments", "finalized",
        "state", "sha256", "alt_text", "expires_at", ...} in initialization order."""
        return self._call("GET", "/__media")["media"]

    def clear_media(self):
        """DELETE /__media: forget every uploaded media."""
        return self._call("DELETE", "/__media")

    def ledger(self):
        """GET /__ledger: what X's billing charged, {"balance", "total",
        "spending_limit", "prices", "charges": [{"key", "units", "each", "amount",
        "method", "path", "user", "app", "time", "post_id"?}, ...]} (dollars)."""
        return self._call("GET", "/__ledger")

    def clear_ledger(self):
        """DELETE /__ledger: forget the charges, the cycle's total and the day's
        deduplication (the balance stays as it is)."""
        return self._call("DELETE", "/__ledger")

    def stderr_text(self):
        with open(self._stderr_path, encoding="utf-8", errors="replace") as f:
            return f.read()

    # -- lifetime ------------------------------------------------------------
    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stdout:
            self.process.stdout.close()
        if self._workdir is not None:
            self._workdir.cleanup()
            self._workdir = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
