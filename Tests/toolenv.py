"""What the end-to-end tests share around a run of a built tool: its
environment and the sandbox's X and Facebook demo credentials (and an OAuth
1.0a signer for requests made in Python), a port where
nothing listens, the credentials file, reading what a run wrote (each stdout
line checked against the envelope of contract §2), and for the Facebook tools
reading the sandbox's Graph log and building its throttling faults.
Tests/conftest.py puts this directory on sys.path, so test modules import it."""
import datetime
import json
import os
import queue
import re
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

# The sandbox's demo Facebook world (sandbox/README.md §2): two apps, three users, a Page.
FB_APP_ID = "100000000000001"
FB_APP_SECRET = "sandbox-app-secret"
FB_APP_TOKEN = FB_APP_ID + "|" + FB_APP_SECRET         # reads the permissions of all three users
FB_SECURE_APP_ID = "100000000000002"                    # requires appsecret_proof on every call
FB_SECURE_APP_SECRET = "sandbox-secure-app-secret"
FB_PAGE = "200000000000001"
FB_BLOCKED_PAGE = "200000000000002"                     # posting gives code 368
FB_USER1, FB_USER2, FB_USER3 = "300000000000001", "300000000000002", "300000000000003"
FB_USER_TOKEN = "sandbox-fb-user-token"                 # fb-user: FB_USER1
FB_USER2_TOKEN = "sandbox-fb-user2-token"               # fb-user2: FB_USER2
FB_USER3_TOKEN = "sandbox-fb-user3-token"               # fb-user3: FB_USER3
FB_PAGE_TOKEN = "sandbox-fb-page-token"                 # fb-page: FB_PAGE
FB_READONLY_PAGE_TOKEN = "sandbox-fb-page-readonly-token"
FB_BLOCKED_PAGE_TOKEN = "sandbox-fb-blocked-page-token"
FB_EXPIRED_USER_TOKEN = "sandbox-fb-expired-user-token"
FB_SECURE_PAGE_TOKEN = "sandbox-fb-secure-page-token"  # of the proof-requiring app
FB_DATA_LAPSED_TOKEN = "sandbox-fb-data-lapsed-token"  # valid; every permission reads expired
FB_DATA_EXPIRED_TOKEN = "sandbox-fb-data-expired-token"  # data access lapsed: every call answers 190/493
FB_DATA_EXPIRED_PAGE_TOKEN = "sandbox-fb-data-expired-page-token"  # the same for a Page token of FB_PAGE
FB_TOKENS = (FB_USER_TOKEN, FB_USER2_TOKEN, FB_USER3_TOKEN, FB_PAGE_TOKEN, FB_READONLY_PAGE_TOKEN,
             FB_BLOCKED_PAGE_TOKEN, FB_EXPIRED_USER_TOKEN, FB_SECURE_PAGE_TOKEN, FB_DATA_LAPSED_TOKEN,
             FB_DATA_EXPIRED_TOKEN, FB_DATA_EXPIRED_PAGE_TOKEN)
FB_APP_SECRETS = (FB_APP_SECRET, FB_SECURE_APP_SECRET)  # FB_APP_TOKEN holds the first

# Strings that must never appear in any output of any run (contract §4): the
# sandbox's X secrets and tokens, every Facebook token and app secret.
SANDBOX_SECRETS = ("sandbox-consumer-secret", "sandbox-access-token-secret", "sandbox-readonly-consumer-secret",
                   "sandbox-readonly-token-secret", "sandbox-unenrolled-consumer-secret",
                   "sandbox-unenrolled-token-secret", "sandbox-jack-token-secret", "sandbox-nobody-token-secret",
                   X_OAUTH2_USER_TOKEN, X_APP_BEARER_TOKEN, "wrong-token-secret") + FB_TOKENS + FB_APP_SECRETS

# Contract §2.
ERROR_KINDS = {"input", "validation", "auth", "permission", "not_found", "duplicate", "rate_limit", "http",
               "network", "ambiguous", "budget", "billing", "cancelled"}
ERROR_KEY_ORDER = ["kind", "status", "code", "message", "attempts"]


SANITIZER_OPTIONS = ("ASAN_OPTIONS", "LSAN_OPTIONS", "TSAN_OPTIONS", "UBSAN_OPTIONS")


def clean_env(home, extra=None):
    """PATH, the temporary HOME and XDG_CONFIG_HOME of `home`, a UTF-8 locale,
    NO_PROXY/no_proxy for loopback, plus `extra` (keys whose value is None are
    left out). Nothing else of the caller's environment gets through: no
    TW_*/FB_*/SOCIALPIPE_* variables, no proxies, so the real user's
    credentials and network setup never matter. The sanitizers' options
    (`make sanitize`) pass, so that a sanitized tool reports where asked."""
    env = {name: os.environ[name] for name in SANITIZER_OPTIONS if name in os.environ}
    env.update({
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    })
    env.update({k: v for k, v in (extra or {}).items() if v is not None})
    return env


def x_credentials(**override):
    """The demo credentials as environment variables, with some replaced."""
    c = dict(X_DEMO_CREDENTIALS)
    c.update(override)
    return c


def fb_credentials(token=FB_USER_TOKEN, secret=None, app_id=None):
    """Facebook credentials as environment variables (clean_env leaves out the None
    ones): by default the demo user's token alone."""
    return {"FB_ACCESS_TOKEN": token, "FB_APP_SECRET": secret, "FB_APP_ID": app_id}


def oauth1(demo, token=None, secret=None, consumer=None, **kw):
    """requests-oauthlib's OAuth 1.0a signer for a request to the sandbox, as
    the app and account of `demo` (Tests/sandbox/conftest.py's DEMO) or with
    the token, secret and consumer (key, secret) given; `kw` goes to OAuth1
    (nonce, timestamp, signature_method...)."""
    from requests_oauthlib import OAuth1  # only the sandbox's own tests sign requests in Python
    consumer_key, consumer_secret = consumer or (demo["consumer_key"], demo["consumer_secret"])
    return OAuth1(consumer_key, consumer_secret, token or demo["access_token"], secret or demo["access_token_secret"],
                  **kw)


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
    # Contract §7: with --cost, what the record was charged is the last key.
    if top and top[-1] == "cost":
        assert isinstance(env["cost"], (int, float)) and env["cost"] >= 0, raw
        top = top[:-1]
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


def run_tool(bin_path, env, args=(), stdin=b"", timeout=30, secrets=SANDBOX_SECRETS):
    """Runs a built tool to its end (failing the test after `timeout` seconds) and
    returns its Run, after checking that none of `secrets` reached stdout or stderr."""
    t0 = time.monotonic()
    try:
        proc = subprocess.run([bin_path, *args], input=stdin, capture_output=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        pytest.fail("%s %r did not finish within %s s; stdout so far %r, stderr %r"
                    % (os.path.basename(bin_path), list(args), timeout, (e.stdout or b"")[:1000],
                       (e.stderr or b"")[:1000]))
    r = Run(proc, time.monotonic() - t0)
    assert_no_secrets(r.stdout, r.stderr, secrets=secrets)
    return r


# --------------------------------------------------------------------------------------
# a tool that keeps running while the test talks to it
# --------------------------------------------------------------------------------------

def start(bin_path, env, args=(), **kw):
    return subprocess.Popen([bin_path, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, **kw)


def reap(p):
    """Ends `p` if it is still running (an assertion failed while it was) and returns its stderr."""
    if p.poll() is None:
        p.kill()
        p.wait()
    return p.stderr.read()


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


def peak_rss_while_answering(argv, env, data, lines=1, timeout=30):
    """Runs argv with `data` on a stdin it keeps open, so that the process lives
    to be measured once it has written `lines` lines; then closes stdin. Returns
    (those lines, its peak RSS in KiB (vm_hwm_kib), its exit status, its stderr)."""
    p = start(argv[0], env, argv[1:])
    try:
        p.stdin.write(data)
        p.stdin.flush()
        out = [p.stdout.readline() for _ in range(lines)]
        peak = vm_hwm_kib(p.pid)
        p.stdin.close()
        rc = p.wait(timeout=timeout)
    finally:
        err = reap(p)
    return out, peak, rc, err


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


def check_fault_row(r, texts, counts, middle_requests, outcome, posted, requests, status, hangs):
    """One row of a posting tool's fault matrix: three posts, a fault on the
    second. The first and third are made once; the second ends `outcome`
    (`ok` or an error kind) after `requests` requests with `posted` posts, and
    a post is never re-sent. `counts` are the sandbox's posts by text,
    `middle_requests` the logged requests of the second post."""
    got = r.by_line()
    assert sorted(got) == [1, 2, 3], ("exactly one envelope per record", r)
    assert got[1]["ok"] is True and got[3]["ok"] is True, r
    e = got[2]
    if outcome == "ok":
        assert e["ok"] is True, e
        assert r.returncode == 0
    else:
        assert e["ok"] is False and e["error"]["kind"] == outcome, e
        assert e["error"]["attempts"] == 1, ("a post is never re-sent", e)
        if status is not None:
            assert e["error"].get("status") == status, e
        assert r.returncode == 1
    assert counts.get(texts[0]) == 1 and counts.get(texts[2]) == 1, counts
    assert counts.get(texts[1], 0) == posted, counts
    assert len(middle_requests) == requests, middle_requests
    if hangs:
        assert 1.5 < r.elapsed < 10, r


def assert_usage_error(r, tool):
    """Contract §3 and §5: exit 2, nothing on stdout, `TOOL: message` on stderr."""
    assert r.returncode == 2, r
    assert r.stdout == b"", r
    assert r.stderr.startswith(tool.encode() + b": "), r


# Contract §7: options of the X tools that price a run; the Facebook tools have none.
COST_OPTIONS = (["--cost"], ["--max-cost", "1"], ["--prices", "prices.json"], ["--plan", "enterprise"])


def assert_no_cost_option(r, sb, tool, args):
    """A cost option given to a tool that prices nothing: a usage error naming it, nothing sent."""
    assert_usage_error(r, tool)
    assert args[0].encode() in r.stderr, r.stderr
    assert sb.log() == []


def assert_no_cost_shown(run_with_env, tool, tmp_path):
    """A run of one good and one failed record (`run_with_env(extra_env)`) carries no
    `cost` member and no estimate on the summary line, and does not read a prices file
    that would stop an X tool (exit 3)."""
    bad = tmp_path / "prices.json"
    bad.write_text("not json")
    r = run_with_env({"SOCIALPIPE_PRICES": str(bad)})
    assert r.returncode == 1 and len(r.envelopes) == 2, r
    assert not any("cost" in json.dumps(e) for e in r.envelopes), r.envelopes
    assert r.stderr.startswith(tool.encode() + b": 1 of 2 failed (") and b"cost" not in r.stderr, r.stderr


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


# --------------------------------------------------------------------------------------
# Facebook: the Graph API as the sandbox logged it, its error envelopes, throttling
# --------------------------------------------------------------------------------------

GRAPH_BATCH = "POST /"             # the sandbox log's endpoint key of a batch request
# Error keys of a Graph error envelope, in order: contract §2 first, then the spec's extras.
GRAPH_ERROR_KEY_ORDER = ERROR_KEY_ORDER + ["error_subcode", "type", "fbtrace_id", "reset"]
# The spec's meanings of the code-190 subcodes, appended to the API's message as " (subcode N: MEANING)".
FB_SUBCODE_MEANINGS = {458: "the app is not installed or was removed",
                       459: "the user is checkpointed: log in on facebook.com",
                       460: "the password changed", 463: "the token has expired", 464: "the user is not confirmed",
                       467: "the token is invalid: the user logged out", 492: "the session is invalid",
                       493: "the app's access to the user's data expired after 90 days without use: "
                            "log in again with fb-auth device"}
ISO_UTC = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z")


def batch_requests(sb):
    """Log entries of Graph batch requests (POST /vNN.0/)."""
    return [e for e in sb.log(service="facebook") if e["method"] == "POST" and e["endpoint"] == GRAPH_BATCH]


def batch_items(entry):
    """The `batch` array a logged batch request carried (secrets in it masked by the sandbox)."""
    assert isinstance(entry["body"], dict), entry
    [raw] = entry["body"]["batch"]
    items = json.loads(raw)
    assert isinstance(items, list), raw
    return items


def assert_no_token_in_urls(sb):
    """Every logged Graph request: no access_token or input_token in the query string,
    no token, app token or app secret in the path or the query, the token in
    Authorization: Bearer (masked by the sandbox), and no access_token in a batch
    item's relative_url or body. Returns the entries."""
    entries = sb.log(service="facebook")
    for e in entries:
        for key in ("access_token", "input_token"):
            assert key not in e["query"], ("token in a URL", e["seq"], e["path"], e["query"])
        for t in FB_TOKENS + (FB_APP_TOKEN,) + FB_APP_SECRETS:
            assert t not in e["path"], ("token in a path", e["path"])
            assert t not in json.dumps(e["query"]), ("token in a query", e["query"])
        auth = e["headers"].get("authorization", "")
        assert auth.lower().startswith("bearer "), ("the token belongs in Authorization: Bearer", e["headers"])
        if e["endpoint"] == GRAPH_BATCH:
            for item in batch_items(e):
                assert "access_token" not in item["relative_url"], item
                assert "access_token" not in item.get("body", ""), item
    return entries


def assert_fresh_accepted_proofs(entries):
    """Each of these logged Graph requests carries appsecret_proof (masked by the sandbox)
    and a fresh appsecret_time in its query string, and the sandbox, which checked
    HMAC-SHA256(secret, token|time), accepted them (a wrong or stale proof is not `ok`)."""
    for e in entries:
        q = e["query"]
        assert q.get("appsecret_proof") == ["[masked]"], ("proof in the query string", q)
        [stamp] = q.get("appsecret_time", [None])
        assert stamp is not None and re.fullmatch(r"[0-9]+", stamp), q
        assert abs(int(stamp) - e["time"]) <= 5, ("appsecret_time is fresh", stamp, e["time"])
        assert e["auth"]["outcome"] == "ok", e["auth"]


def check_graph_error(env, kind, code=None, status=None, attempts=None):
    """The error envelope of a Graph error answer: kind, code as a string, the spec's
    extras (error_subcode an int, type, fbtrace_id, reset) in order after the contract's
    keys. Returns the error object."""
    assert env["ok"] is False, env
    err = env["error"]
    assert err["kind"] == kind, env
    keys = [k for k in err if k in GRAPH_ERROR_KEY_ORDER]
    assert keys == [k for k in GRAPH_ERROR_KEY_ORDER if k in err], ("error keys out of order", list(err))
    if code is not None:
        assert err.get("code") == code, env
    if status is not None:
        assert err.get("status") == status, env
    if attempts is not None:
        assert err["attempts"] == attempts, env
    if "error_subcode" in err:
        assert isinstance(err["error_subcode"], int) and not isinstance(err["error_subcode"], bool), env
    return err


def check_api_error_extras(err):
    """Every error answer of the sandbox carries type and fbtrace_id: the envelope keeps them."""
    assert err.get("type") in ("OAuthException", "GraphMethodException"), err
    assert isinstance(err.get("fbtrace_id"), str) and err["fbtrace_id"], err


def iso_to_epoch(text):
    """An envelope's UTC time (e.g. an error's `reset`) as epoch seconds."""
    assert isinstance(text, str) and ISO_UTC.fullmatch(text), text
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def usage_header(regain, name="X-App-Usage", call_count=100):
    """A Graph usage header as Graph sends it, at `call_count` percent, with
    estimated_time_to_regain_access `regain` (minutes; fractions allowed):
    X-App-Usage or X-Page-Usage as one object, X-Business-Use-Case-Usage as the
    demo Page's list of one `pages` entry."""
    usage = {"call_count": call_count, "total_cputime": call_count // 2, "total_time": call_count // 2,
             "estimated_time_to_regain_access": regain}
    value = {FB_PAGE: [dict(usage, type="pages")]} if name == "X-Business-Use-Case-Usage" else usage
    return {name: json.dumps(value, separators=(",", ":"))}


def check_throttled_without_waiting(r, t0, code, regain, records, status=None):
    """A run of `records` records on one token whose first request got Graph's throttling
    `code` with `regain` minutes to wait, beyond --max-wait (the run started at epoch
    `t0`): it did not wait and exits 1; the first record is rate_limit after one attempt,
    with the API's extras and reset = then + regain minutes (to 15 s); each later one is
    rate_limit with a reset too, not sent (attempts 0). Returns the first record's error."""
    assert r.elapsed < 5, ("a regain time beyond --max-wait is not waited for", r)
    assert r.returncode == 1, r
    assert len(r.envelopes) == records, r
    first, *later = r.envelopes
    err = check_graph_error(first, "rate_limit", code=code, status=status, attempts=1)
    check_api_error_extras(err)
    reset = iso_to_epoch(err["reset"])
    assert t0 + regain * 60 - 15 <= reset <= time.time() + regain * 60 + 15, \
        ("reset = now + %s minutes" % regain, err["reset"])
    for e in later:
        err2 = check_graph_error(e, "rate_limit", attempts=0)
        assert "reset" in err2, ("the reset time is known", e)
    return err


def throttle_fault(sb, match, code, regain=None, header="X-App-Usage", count=1):
    """A sandbox fault answering the requests `match` picks with Graph's throttling error
    `code` (4, 17, 32, 613, 80001): with `regain` minutes in the usage header `header`,
    or with no usage header at all (then the client backs off). Returns the fault id."""
    headers = usage_header(regain, header) if regain is not None else {}
    return sb.fault("error", match=match, code=code, count=count, headers=headers)
