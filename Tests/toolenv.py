"""What the end-to-end tests share around a run of a built tool: its
environment and the sandbox's X demo credentials, a port where nothing
listens, the credentials file, and reading what a run wrote (each stdout line
checked against the envelope of contract §2). Tests/conftest.py puts this
directory on sys.path, so test modules import it."""
import json
import os
import queue
import select
import socket
import subprocess
import threading
import time

import pytest

# The sandbox's published demo credentials (sandbox/README.md §2): socialpipe_demo
# through the app socialpipe-sandbox.
X_DEMO_CREDENTIALS = {
    "TW_CONSUMER_KEY": "sandbox-consumer-key",
    "TW_CONSUMER_SECRET": "sandbox-consumer-secret",
    "TW_ACCESS_TOKEN": "1000000000000000001-sandboxaccesstoken",
    "TW_ACCESS_TOKEN_SECRET": "sandbox-access-token-secret",
}
X_APP_BEARER_TOKEN = "sandbox-bearer-token"
X_OAUTH2_USER_TOKEN = "sandbox-oauth2-user-token"

# Strings that must never appear in any output of any run.
SANDBOX_SECRETS = ("sandbox-consumer-secret", "sandbox-access-token-secret", "sandbox-readonly-consumer-secret",
                   "sandbox-readonly-token-secret", "sandbox-unenrolled-consumer-secret",
                   "sandbox-unenrolled-token-secret", "sandbox-jack-token-secret", "sandbox-nobody-token-secret",
                   X_OAUTH2_USER_TOKEN, X_APP_BEARER_TOKEN, "wrong-token-secret")

# Contract §2.
ERROR_KINDS = {"input", "validation", "auth", "permission", "not_found", "duplicate", "rate_limit", "http",
               "network", "ambiguous", "cancelled"}
ERROR_KEY_ORDER = ["kind", "status", "code", "message", "attempts"]


def clean_env(home, extra=None):
    """PATH, the temporary HOME and XDG_CONFIG_HOME of `home`, a UTF-8 locale,
    NO_PROXY/no_proxy for loopback, plus `extra` (keys whose value is None are
    left out). Nothing else of the caller's environment gets through: no
    TW_*/FB_*/SOCIALPIPE_* variables, no proxies, so the real user's
    credentials and network setup never matter."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }
    env.update({k: v for k, v in (extra or {}).items() if v is not None})
    return env


def x_credentials(**override):
    """The demo credentials as environment variables, with some replaced."""
    c = dict(X_DEMO_CREDENTIALS)
    c.update(override)
    return c


def closed_port():
    """A loopback port nothing listens on (connections are refused)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


# --------------------------------------------------------------------------------------
# records in, envelopes out
# --------------------------------------------------------------------------------------

def jl(*records):
    """Records (dicts/str values as JSON; bytes as raw lines) as JSON-lines bytes."""
    out = []
    for r in records:
        if isinstance(r, bytes):
            out.append(r)
        else:
            out.append(json.dumps(r, ensure_ascii=False).encode("utf-8"))
    return b"".join(x + b"\n" for x in out)


def parse_envelope(raw):
    """One stdout line -> envelope dict, after checking the shape of contract §2."""
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8")
    pairs = json.loads(raw, object_pairs_hook=lambda kv: kv)
    top = [k for k, _ in pairs]
    env = json.loads(raw)
    assert "\n" not in raw.strip("\n"), raw
    assert isinstance(env.get("ok"), bool), raw
    assert top[:3] == ["ok", "line", "input"], raw
    assert isinstance(env["line"], int) and env["line"] >= 1, raw
    if env["ok"]:
        assert top == ["ok", "line", "input", "result"], raw
        assert isinstance(env["input"], dict), raw
    else:
        if env["input"] is None:
            assert top == ["ok", "line", "input", "raw", "error"], raw
            assert isinstance(env["raw"], str), raw
        else:
            assert top == ["ok", "line", "input", "error"], raw
        err = env["error"]
        assert err["kind"] in ERROR_KINDS, raw
        assert isinstance(err.get("message"), str) and err["message"], raw
        keys = list(err)
        known = [k for k in keys if k in ERROR_KEY_ORDER]
        assert known == [k for k in ERROR_KEY_ORDER if k in err], ("error keys out of order", raw)
        assert keys[:len(known)] == known, ("tool extras must follow the contract's keys", raw)
        if "status" in err:
            assert isinstance(err["status"], int), raw
        if "code" in err:
            assert isinstance(err["code"], str), raw
        if env["input"] is not None:
            # Records that parsed: attempts = requests made for this record (contract §2).
            assert isinstance(err.get("attempts"), int) and err["attempts"] >= 0, raw
    return env


class Run:
    """A finished run: exit status, stdout, stderr, seconds, and the envelopes."""

    def __init__(self, proc, elapsed):
        self.returncode = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.elapsed = elapsed
        self.envelopes = [parse_envelope(l) for l in proc.stdout.decode("utf-8").splitlines()]

    def by_line(self):
        out = {}
        for e in self.envelopes:
            assert e["line"] not in out, ("two envelopes for one line", e, out[e["line"]])
            out[e["line"]] = e
        return out

    def __repr__(self):
        return "Run(rc=%r, %.2fs, stdout=%r, stderr=%r)" % (self.returncode, self.elapsed,
                                                             self.stdout[:3000], self.stderr[:2000])


def assert_no_secrets(*blobs, secrets=SANDBOX_SECRETS):
    for blob in blobs:
        if isinstance(blob, bytes):
            blob = blob.decode("utf-8", "replace")
        for s in secrets:
            assert s not in blob, "secret %r leaked: %r" % (s, blob[:2000])


# --------------------------------------------------------------------------------------
# a tool that keeps running while the test talks to it
# --------------------------------------------------------------------------------------

def start(bin_path, env, args=(), **kw):
    return subprocess.Popen([bin_path, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, **kw)


class LineReader:
    """Reads a pipe's lines on a thread so a test can wait for them with a timeout."""

    def __init__(self, pipe):
        self.q = queue.Queue()
        self.t = threading.Thread(target=self._pump, args=(pipe,), daemon=True)
        self.t.start()

    def _pump(self, pipe):
        for line in iter(pipe.readline, b""):
            self.q.put(line)
        self.q.put(None)

    def get(self, timeout):
        return self.q.get(timeout=timeout)

    def rest(self, timeout):
        """All remaining lines until EOF (fails if EOF does not come in time)."""
        out = []
        deadline = time.monotonic() + timeout
        while True:
            line = self.q.get(timeout=max(0.01, deadline - time.monotonic()))
            if line is None:
                return out
            out.append(line)


class Running:
    """A tool started with its stdin, stdout and stderr piped and its stdout read
    on a thread (`out`), for `with`: on leaving the block it is killed if still
    running, its stdin is closed and its stderr read into `stderr`."""

    def __init__(self, bin_path, env, args=()):
        self.p = start(bin_path, env, args)
        self.out = LineReader(self.p.stdout)
        self.stderr = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()
        try:
            self.p.stdin.close()
        except BrokenPipeError:
            pass
        self.stderr = self.p.stderr.read()
        return False

    def write(self, data):
        """Writes to the tool's stdin, which stays open."""
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def interrupt(self, signum, timeout=10):
        """Sends signum; returns (the lines written until EOF, the exit status)."""
        self.p.send_signal(signum)
        lines = self.out.rest(timeout=timeout)
        return lines, self.p.wait(timeout=5)


def through_head(argv, env, stdin=None, timeout=5):
    """Runs `argv | head -1`. stdin: bytes written to argv's stdin (then closed),
    or None for /dev/null. Returns (what head wrote, argv's exit status, its
    stderr, seconds from start until it ended)."""
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    head = subprocess.Popen(["head", "-1"], stdin=p.stdout, stdout=subprocess.PIPE)
    p.stdout.close()
    t0 = time.monotonic()
    if stdin is not None:
        try:
            p.stdin.write(stdin)
            p.stdin.close()
        except BrokenPipeError:
            pass
    first = head.stdout.read()
    head.wait(timeout=timeout)
    try:
        rc = p.wait(timeout=timeout)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    elapsed = time.monotonic() - t0
    err = p.stderr.read()
    assert_no_secrets(first, err)
    return first, rc, err, elapsed


def read_line(fd, timeout):
    """One line from a raw pipe, byte by byte, so nothing is read ahead and the
    pipe can be closed right after; None at EOF or after `timeout` seconds."""
    buf = b""
    deadline = time.monotonic() + timeout
    while not buf.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return None
        chunk = os.read(fd, 1)
        if not chunk:
            return None
        buf += chunk
    return buf


def run_with_stdin_pipe(argv, env, data, timeout=10):
    """Runs argv with `data` waiting in a pipe on its stdin (write end closed).
    Returns (Run, the bytes of `data` left unread): a tool that stops before
    reading leaves all of them in the pipe."""
    rfd, wfd = os.pipe()
    try:
        os.write(wfd, data)
        os.close(wfd)
        t0 = time.monotonic()
        try:
            proc = subprocess.run(argv, stdin=rfd, capture_output=True, env=env, timeout=timeout)
        except subprocess.TimeoutExpired as e:
            pytest.fail("%r did not finish within %s s; stderr %r" % (argv, timeout, (e.stderr or b"")[:1000]))
        r = Run(proc, time.monotonic() - t0)
        os.set_blocking(rfd, False)
        try:
            left = os.read(rfd, len(data) + 1)
        except BlockingIOError:
            left = b""
    finally:
        os.close(rfd)
    assert_no_secrets(r.stdout, r.stderr)
    return r, left


def vm_hwm_kib(pid):
    """Peak RSS of a live process (VmHWM of /proc/PID/status), in KiB: its own,
    not inflated by the fork from this big Python process as ru_maxrss is."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise AssertionError("no VmHWM for %d" % pid)


def settled(fetch, size, quiet=0.3, bound=5):
    """fetch() once size(fetch()) has not changed for `quiet` seconds (at most
    `bound` seconds): a request a run abandoned (stdout closed, a signal) may
    still reach the sandbox, and must land in this test, not in the next one's
    clean state."""
    last = fetch()
    deadline = time.monotonic() + bound
    stable_since = time.monotonic()
    while time.monotonic() < deadline and time.monotonic() - stable_since < quiet:
        time.sleep(0.05)
        now = fetch()
        if size(now) != size(last):
            last, stable_since = now, time.monotonic()
    return last


def assert_usage_error(r, tool):
    """Contract §3 and §5: exit 2, nothing on stdout, `TOOL: message` on stderr."""
    assert r.returncode == 2, r
    assert r.stdout == b"", r
    assert r.stderr.startswith(tool.encode() + b": "), r


def wait_until(condition, timeout, interval=0.02):
    """Polls condition() until it is true (True) or `timeout` seconds pass (False)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(interval)
    return False


def wait_for_fault_hit(sb, fault_id, timeout):
    """Waits until the sandbox has matched this fault to a request. A `delay` fault
    is hit when the request arrives; its log entry only appears once answered."""
    return wait_until(lambda: any(f["id"] == fault_id and f["hits"] for f in sb.state()["faults"]), timeout)


# --------------------------------------------------------------------------------------
# the credentials file (contract §4)
# --------------------------------------------------------------------------------------

def twitter_section(c):
    """A credentials-file `twitter` object from TW_* environment variables."""
    return {"consumer_key": c["TW_CONSUMER_KEY"], "consumer_secret": c["TW_CONSUMER_SECRET"],
            "access_token": c["TW_ACCESS_TOKEN"], "access_token_secret": c["TW_ACCESS_TOKEN_SECRET"]}


def credentials_path(home):
    """The default credentials file (contract §4), its directory created."""
    d = home / ".config" / "socialpipe"
    d.mkdir(parents=True, exist_ok=True)
    return d / "credentials.json"


def write_private(path, content):
    """Writes a credentials file as tw-auth would: mode 0600 from the start."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(content if isinstance(content, str) else json.dumps(content))
    os.chmod(path, 0o600)
    return path
