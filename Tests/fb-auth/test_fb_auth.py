"""End-to-end tests of `fb-auth` (spec: issue 11, "fb-auth" and "The credentials file,
written safely"; contract: docs/contract.md §4 and the paragraph on tw-auth/fb-auth;
Graph API: docs/reference/graph-api.md §5; sandbox: sandbox/README.md §2, §5, §6).

Every interactive run happens as a person would do it: the tool's controlling terminal is
a pseudo-terminal this test holds the other end of (questions are answered there, secret
ones only once the tool has switched echo off), stdin is /dev/null, stdout and stderr are
pipes. The consent a person gives in a browser is given through the sandbox's control API
(`approve_device`). Every run checks that no secret (the sandbox's tokens and secrets,
the client token, every token the run stored, the wrong secrets tests type) reaches
stdout, stderr or the terminal, and the device flow checks the arguments of every
process while the tool waits.

Sections:
  1. device: questions on the terminal, the client token in the form body only, pending
     polls at the interval, approval, the long-lived token stored with the expiry it came
     with (no exchange), the file; slow down, expired, denied; wrong client token, wrong
     app secret, Login from Devices off; -v
  2. exchange: a pasted short-lived token; wrong secret; expired token; no terminal
  3. pages: one line per Page without tokens; --store; fb-feed posts with what it stored
  4. status: valid, Page, expired, revoked, another app; --all; the environment; exit codes
  5. logout: revoked and removed; the app's settings stay
  6. the file: modes, other profiles kept, an unsafe file refused
  7. fb-feed and fb-perm-check warn once when a stored user token expires within 7 days
  8. usage and configuration errors
"""
import datetime
import fcntl
import json
import os
import re
import stat
import subprocess
import termios
import threading
import time

import pytest

from toolenv import (FB_APP_ID as APP_ID, FB_APP_SECRET as APP_SECRET, FB_DATA_EXPIRED_TOKEN as DATA_EXPIRED_TOKEN,
                     FB_EXPIRED_USER_TOKEN as EXPIRED_USER_TOKEN, FB_SUBCODE_MEANINGS as SUBCODE_MEANINGS,
                     FB_PAGE as PAGE, FB_PAGE_TOKEN as PAGE_TOKEN, FB_SECURE_APP_ID as SECURE_APP_ID,
                     FB_SECURE_PAGE_TOKEN as SECURE_PAGE_TOKEN, FB_USER1 as USER1, FB_USER2 as USER2,
                     FB_USER2_TOKEN as USER2_TOKEN, FB_USER3_TOKEN as USER3_TOKEN, FB_USER_TOKEN as USER_TOKEN)
from toolenv import (ISO_UTC, SANDBOX_SECRETS, assert_no_secrets, assert_no_token_in_urls, assert_usage_error,
                     batch_items, batch_requests, clean_env, iso_to_epoch, jl, wait_until,
                     write_private)

TOOL = "fb-auth"
CLIENT_TOKEN = "sandbox-fb-client-token"              # Login for Devices of app APP_ID
SECURE_CLIENT_TOKEN = "sandbox-fb-secure-client-token"  # its app has Login from Devices off
SHORT_USER_TOKEN = "sandbox-fb-short-user-token"      # fb-user-short: USER1, expires in an hour
WRONG_SECRET = "not-the-app-secret"
WRONG_CLIENT_TOKEN = "not-the-client-token"
SECRETS = SANDBOX_SECRETS + (CLIENT_TOKEN, SECURE_CLIENT_TOKEN, SHORT_USER_TOKEN, WRONG_SECRET, WRONG_CLIENT_TOKEN)
DEFAULT_SCOPES = "pages_show_list,pages_manage_posts,pages_read_engagement"
LONG_LIVED = 5183944                                   # seconds: the sandbox's long-lived token lifetime
SECRET_KEYS = ("access_token", "user_access_token", "app_secret", "client_token")
DEVICE_ENDPOINTS = ("POST /device/login", "POST /device/login_status")


# --------------------------------------------------------------------------------------
# a run on a pseudo-terminal
# --------------------------------------------------------------------------------------

class Collected:
    """What a descriptor delivers, read on a thread; `wait_for` waits for a pattern."""

    def __init__(self, fd):
        self.fd = fd
        self.data = b""
        self.ended = False
        self.cond = threading.Condition()
        self.thread = threading.Thread(target=self._pump, daemon=True)
        self.thread.start()

    def _pump(self):
        while True:
            try:
                chunk = os.read(self.fd, 4096)
            except OSError:          # a pseudo-terminal without a slave reads EIO
                chunk = b""
            with self.cond:
                if not chunk:
                    self.ended = True
                    self.cond.notify_all()
                    return
                self.data += chunk
                self.cond.notify_all()

    def wait_for(self, pattern, timeout, start=0):
        """The match of regex `pattern` (bytes) in the data from `start`, waiting up to `timeout` s."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                m = re.compile(pattern).search(self.data, start)
                if m or self.ended:
                    return m
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self.cond.wait(left)

    def join(self, timeout=5):
        self.thread.join(timeout)
        return self.data


class Interactive:
    """fb-auth in a session of its own whose controlling terminal (/dev/tty) is a
    pseudo-terminal held here (`tty=False`: no terminal at all); stdin /dev/null."""

    def __init__(self, bin_path, args, env, tty=True):
        self.master = self.slave = None
        preexec = None
        if tty:
            # The slave stays open here until the end: a master whose slave is
            # closed by everyone (between the tool's opens of /dev/tty) reads EIO.
            self.master, self.slave = os.openpty()
            name = os.ttyname(self.slave)

            def preexec():
                # After setsid (start_new_session): opening the terminal makes it ours.
                fd = os.open(name, os.O_RDWR)
                fcntl.ioctl(fd, termios.TIOCSCTTY, 0)
                os.close(fd)
        self.p = subprocess.Popen([bin_path, *args], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, env=env, start_new_session=True, preexec_fn=preexec)
        self.out = Collected(self.p.stdout.fileno())
        self.err = Collected(self.p.stderr.fileno())
        self.tty = Collected(self.master) if tty else None
        self.asked = 0    # where in stderr the next question is looked for

    def echo_is_on(self):
        return bool(termios.tcgetattr(self.master)[3] & termios.ECHO)

    def answer(self, question, text, secret=False, timeout=10):
        """Waits for `question` (a regex) on stderr, then types `text` and Enter on the
        terminal; a secret once the tool has switched echo off."""
        m = self.err.wait_for(question.encode(), timeout, self.asked)
        assert m, ("question %r not asked" % question, self.err.data, self.out.data)
        self.asked = m.end()
        if secret:
            assert wait_until(lambda: not self.echo_is_on(), timeout), ("echo stays on for", question)
        os.write(self.master, text.encode() + b"\n")

    def finish(self, timeout=30, secrets=SECRETS):
        try:
            rc = self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            pytest.fail("fb-auth did not finish in %s s: stdout %r, stderr %r" % (timeout, self.out.data, self.err.data))
        self.returncode = rc
        self.stdout = self.out.join()
        self.stderr = self.err.join()
        self.terminal = b""
        if self.master is not None:
            assert self.echo_is_on(), "the terminal's echo is restored"
            time.sleep(0.05)
            os.close(self.slave)
            self.terminal = self.tty.join(1)
            os.close(self.master)
            self.slave = self.master = None
        assert_no_secrets(self.stdout, self.stderr, self.terminal, secrets=secrets)
        return self

    def lines(self):
        return [json.loads(line) for line in self.stdout.decode().splitlines()]

    def kill(self):
        """Ends the run if still going and lets go of the terminal."""
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()
        for fd in (self.slave, self.master):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self.slave = self.master = None


def all_arguments():
    """The arguments of every process this user can see."""
    out = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open("/proc/%s/cmdline" % pid, "rb") as f:
                    out.append(f.read().replace(b"\0", b" "))
            except OSError:
                pass
    return out


@pytest.fixture
def env(home, sb):
    """env(**variables): the scrubbed environment, FB_API_BASE at the sandbox."""
    return lambda **extra: clean_env(home, dict({"FB_API_BASE": sb.url}, **extra))


@pytest.fixture
def fb_auth(bin_path, env):
    """fb_auth(*args, tty=True, **variables) -> Interactive, started."""
    started = []

    def _start(*args, tty=True, **extra):
        run = Interactive(bin_path, args, env(**extra), tty=tty)
        started.append(run)
        return run
    yield _start
    for run in started:
        run.kill()


@pytest.fixture
def cred_file(home):
    """The default credentials file; its directory is not created here."""
    return home / ".config" / "socialpipe" / "credentials.json"


def read_file(path):
    with open(path) as f:
        return json.load(f)


def stored_secrets(path):
    """Every secret value the credentials file holds (checked against what runs print)."""
    if not os.path.exists(path):
        return ()
    found = []
    for profile in read_file(path).get("profiles", {}).values():
        for section in profile.values():
            found += [v for k, v in section.items() if k in SECRET_KEYS and isinstance(v, str)]
    return tuple(found)


def facebook(path, profile="default"):
    return read_file(path)["profiles"][profile]["facebook"]


def profile_file(path, profiles, default=None, **extra):
    """Writes a credentials file of `profiles` ({name: facebook section}; None: an X profile)."""
    doc = dict({"profiles": {name: {"facebook": section} if section is not None else {"twitter": {"bearer_token": "x"}}
                             for name, section in profiles.items()}}, **extra)
    if default:
        doc["default"] = default
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    write_private(path, doc)
    return path


def run_cmd(fb_auth, path, *args, secrets=(), **extra):
    """A non-interactive command (no questions): the finished run."""
    return fb_auth(*args, **extra).finish(secrets=SECRETS + stored_secrets(path) + tuple(secrets))


def user_code(run, timeout=10):
    m = run.err.wait_for(rb"enter this code: ([A-Z0-9]+)", timeout)
    assert m, ("no user code shown", run.err.data, run.out.data)
    return m.group(1).decode()


def graph_log(sb, endpoint=None):
    return [e for e in sb.log(service="facebook") if endpoint is None or e["endpoint"] == endpoint]


def check_no_secret_in_urls(sb):
    """No token, code or secret in the query string of any Graph request."""
    for e in graph_log(sb):
        for key in ("access_token", "input_token", "client_secret", "fb_exchange_token", "code"):
            assert key not in e["query"], ("secret in a URL", e["method"], e["path"], e["query"])
        for s in SECRETS:
            assert s not in e["path"] and s not in json.dumps(e["query"]), (e["path"], e["query"])


def approve(sb, code, user=USER1, **more):
    return sb.control(approve_device=dict({"user_code": code, "user": user}, **more))


def approve_with_lifetime(sb, code, lifetime):
    """Approves, and has the poll that brings the token answer `expires_in` as the raw
    JSON text `lifetime`: one control call, so no pending poll can take the fault."""
    patch = {"kind": "patch", "match": {"method": "POST", "endpoint": "POST /device/login_status"},
             "members": {"expires_in": lifetime}}
    sb.control(fault=patch, approve_device={"user_code": code, "user": USER1})


def polls(sb):
    return graph_log(sb, "POST /device/login_status")


# --------------------------------------------------------------------------------------
# 1. device
# --------------------------------------------------------------------------------------

def test_device_login_from_questions_to_a_long_lived_token(fb_auth, sb, cred_file, home):
    """The app id, client token and app secret asked on the terminal (the two secrets
    without echo); the code shown on stderr; polls at the interval while the person has
    not approved; the long-lived token the login ends with stored as it came; one line
    on stdout; the file 0600 in a 0700 directory; no secret in any process's arguments
    while the tool waits."""
    sb.control(device_interval=1)
    run = fb_auth("device")
    run.answer(r"App ID: ", APP_ID)
    run.answer(r"Client token[^\n]*: ", CLIENT_TOKEN, secret=True)
    run.answer(r"App secret: ", APP_SECRET, secret=True)
    code = user_code(run)
    assert b"https://www.facebook.com/device" in run.err.data
    assert wait_until(lambda: len(polls(sb)) >= 2, 10), "the tool polls while the person has not approved"
    for args in all_arguments():
        for s in SECRETS:
            assert s.encode() not in args, ("a secret in a process's arguments", args)
    assert run.p.poll() is None
    t_approved = time.time()
    assert approve(sb, code)["scopes"] == ["public_profile"] + DEFAULT_SCOPES.split(",")
    run.finish(secrets=SECRETS + stored_secrets(cred_file))
    assert run.returncode == 0, run.stderr
    [line] = run.lines()
    assert list(line) == ["profile", "method", "token_type", "account", "expires_at", "credentials"], line
    assert line["profile"] == "default" and line["method"] == "device" and line["token_type"] == "user"
    assert line["account"] == {"id": USER1, "name": "Sandbox Demo"}
    assert abs(iso_to_epoch(line["expires_at"]) - (t_approved + LONG_LIVED)) < 30, line
    assert line["credentials"] == str(cred_file)
    # The secrets typed were not echoed; the app id was.
    assert APP_ID.encode() in run.terminal
    # A person is waiting at the terminal: no progress counter between the questions.
    assert b"in flight" not in run.err.data and b"in flight" not in run.terminal, run.err.data

    fb = facebook(cred_file)
    assert set(fb) == {"access_token", "token_type", "app_id", "app_secret", "client_token", "expires_at"}, fb
    assert fb["token_type"] == "user" and fb["app_id"] == APP_ID and fb["app_secret"] == APP_SECRET
    assert fb["client_token"] == CLIENT_TOKEN and fb["expires_at"] == line["expires_at"]
    assert ISO_UTC.fullmatch(fb["expires_at"]) and fb["expires_at"].endswith("Z")
    assert fb["access_token"] not in (USER_TOKEN, SHORT_USER_TOKEN)
    assert read_file(cred_file)["default"] == "default"
    assert stat.S_IMODE(os.stat(cred_file).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(cred_file.parent).st_mode) == 0o700

    # What went over the wire: the client token as access_token in the form body of
    # every device call (never a header, never the URL), scopes comma-separated, polls
    # spaced by the interval, no exchange, nothing secret in a URL.
    [login] = graph_log(sb, "POST /device/login")
    assert login["body"]["scope"] == [DEFAULT_SCOPES]
    for e in graph_log(sb, "POST /device/login") + polls(sb):
        assert e["body"]["access_token"] == ["[masked]"] and e["query"] == {}, e
        assert "authorization" not in e["headers"], e["headers"]
        assert e["auth"]["credential"] == "client:" + APP_ID, e["auth"]
    times = [e["time"] for e in polls(sb)]
    assert len(times) >= 3
    assert all(b - a >= 0.9 for a, b in zip(times, times[1:])), times
    assert graph_log(sb, "POST /oauth/access_token") == []
    check_no_secret_in_urls(sb)

    # The token stored works.
    status = run_cmd(fb_auth, cred_file, "status")
    assert status.returncode == 0, status.stderr
    [checked] = status.lines()
    assert checked["valid"] is True and checked["type"] == "USER" and checked["user_id"] == USER1


def test_device_values_from_the_environment_and_scopes(fb_auth, sb, cred_file):
    """FB_APP_ID, FB_CLIENT_TOKEN, FB_APP_SECRET: no question; --scopes with spaces or
    commas goes out comma-separated; the profile named is created."""
    sb.control(device_interval=1)
    run = fb_auth("device", "--profile", "work", "--scopes", "pages_show_list pages_manage_posts",
                  FB_APP_ID=APP_ID, FB_CLIENT_TOKEN=CLIENT_TOKEN, FB_APP_SECRET=APP_SECRET)
    code = user_code(run)
    assert b"App ID" not in run.err.data and b"secret" not in run.err.data.lower()
    approve(sb, code)
    run.finish(secrets=SECRETS + stored_secrets(cred_file))
    assert run.returncode == 0, run.stderr
    assert run.lines()[0]["profile"] == "work"
    assert facebook(cred_file, "work")["token_type"] == "user"
    [login] = graph_log(sb, "POST /device/login")
    assert login["body"]["scope"] == ["pages_show_list,pages_manage_posts"]


def test_device_slow_down_adds_five_seconds_to_the_interval(fb_auth, sb, cred_file):
    """Pending, then "slow down" (code 17, subcode 1349172): the next poll waits the
    interval plus 5 s; code 17 here is not throttling to retry at once."""
    sb.control(device_interval=1)
    sb.fault("error", match={"endpoint": "POST /device/login_status"}, code=17, subcode=1349172, skip=1)
    run = fb_auth("device", FB_APP_ID=APP_ID, FB_CLIENT_TOKEN=CLIENT_TOKEN, FB_APP_SECRET=APP_SECRET)
    code = user_code(run)
    assert wait_until(lambda: len(polls(sb)) >= 2, 10)
    approve(sb, code)
    run.finish(timeout=30, secrets=SECRETS + stored_secrets(cred_file))
    assert run.returncode == 0, run.stderr
    times = [e["time"] for e in polls(sb)]
    statuses = [e["status"] for e in polls(sb)]
    assert len(statuses) == 3 and statuses[0] == 400 and statuses[2] == 200, statuses
    # Poll 2 was answered "slow down": poll 3 came interval + 5 s later.
    assert times[1] - times[0] >= 0.9 and times[2] - times[1] >= 5.8, times


def test_device_code_that_expires_ends_the_login(fb_auth, sb, cred_file):
    """Nobody approves within expires_in: an auth error saying to start again; no file."""
    sb.control(device_interval=1, device_expires_in=3)
    run = fb_auth("device", FB_APP_ID=APP_ID, FB_CLIENT_TOKEN=CLIENT_TOKEN, FB_APP_SECRET=APP_SECRET)
    user_code(run)
    run.finish(timeout=20)
    assert run.returncode == 1, run.stderr
    assert run.stdout == b""
    assert b"auth: the code expired: run fb-auth device again" in run.stderr, run.stderr
    assert not cred_file.exists()


def test_device_expired_answer_from_graph(fb_auth, sb, cred_file):
    """Graph's own "expired" (subcode 1349152), here after the person cancelled."""
    sb.control(device_interval=1)
    run = fb_auth("device", FB_APP_ID=APP_ID, FB_CLIENT_TOKEN=CLIENT_TOKEN, FB_APP_SECRET=APP_SECRET)
    code = user_code(run)
    assert approve(sb, code, deny=True)["scopes"] is None
    run.finish(timeout=20)
    assert run.returncode == 1
    assert b"the code expired: run fb-auth device again" in run.stderr, run.stderr
    assert polls(sb)[-1]["status"] == 400
    assert not cred_file.exists()


def test_device_wrong_client_token(fb_auth, sb, cred_file):
    run = fb_auth("device")
    run.answer(r"App ID: ", APP_ID)
    run.answer(r"Client token[^\n]*: ", WRONG_CLIENT_TOKEN, secret=True)
    run.answer(r"App secret: ", APP_SECRET, secret=True)
    run.finish()
    assert run.returncode == 1 and run.stdout == b""
    # Contract §6: `TOOL: KIND: message`; fb-auth reads no lines, so none is named.
    assert b"fb-auth: auth: " in run.stderr and b"line 1" not in run.stderr and b"client token" in run.stderr, run.stderr
    assert polls(sb) == [] and not cred_file.exists()


def test_device_login_switched_off_for_the_app(fb_auth, sb, cred_file):
    run = fb_auth("device", FB_APP_ID=SECURE_APP_ID, FB_CLIENT_TOKEN=SECURE_CLIENT_TOKEN, FB_APP_SECRET=APP_SECRET)
    run.finish()
    assert run.returncode == 1
    assert b"Login from Devices" in run.stderr, run.stderr
    assert not cred_file.exists()


def test_device_stores_the_token_with_the_expiry_it_came_with(fb_auth, sb, cred_file):
    """Login for Devices ends with a long-lived token (contract §7): it is stored as it
    came, its expires_at counted from the expires_in of device/login_status, not
    exchanged again."""
    sb.control(device_interval=1)
    run = fb_auth("device", FB_APP_ID=APP_ID, FB_CLIENT_TOKEN=CLIENT_TOKEN, FB_APP_SECRET=APP_SECRET)
    code = user_code(run)
    t_approved = time.time()
    approve_with_lifetime(sb, code, "4000000")
    run.finish(secrets=SECRETS + stored_secrets(cred_file))
    assert run.returncode == 0, run.stderr
    [line] = run.lines()
    assert abs(iso_to_epoch(line["expires_at"]) - (t_approved + 4000000)) < 30, line
    fb = facebook(cred_file)
    assert fb["expires_at"] == line["expires_at"], fb
    assert graph_log(sb, "POST /oauth/access_token") == []
    [me] = graph_log(sb, "GET /{id}")
    assert me["auth"]["token_type"] == "USER" and me["auth"]["outcome"] == "ok", me["auth"]


def test_device_token_without_a_lifetime_is_stored_without_expiry(fb_auth, sb, cred_file):
    """No expires_in: the token is stored without an expiry, and an old one is removed."""
    sb.control(device_interval=1)
    profile_file(cred_file, {"default": {"expires_at": "2020-01-01T00:00:00Z"}})
    run = fb_auth("device", FB_APP_ID=APP_ID, FB_CLIENT_TOKEN=CLIENT_TOKEN, FB_APP_SECRET=APP_SECRET)
    approve_with_lifetime(sb, user_code(run), "null")
    run.finish(secrets=SECRETS + stored_secrets(cred_file))
    assert run.returncode == 0, run.stderr
    assert run.lines()[0]["expires_at"] is None
    assert "expires_at" not in facebook(cred_file), facebook(cred_file)


def test_device_wrong_app_secret_stores_nothing(fb_auth, sb, cred_file):
    """The approval comes, the account lookup's appsecret_proof is refused: an auth
    error at once, not retried, saying nothing was stored; no file."""
    sb.control(device_interval=1)
    run = fb_auth("device", FB_APP_ID=APP_ID, FB_CLIENT_TOKEN=CLIENT_TOKEN, FB_APP_SECRET=WRONG_SECRET)
    approve(sb, user_code(run))
    run.finish()
    assert run.returncode == 1 and run.stdout == b""
    assert b"auth: Invalid appsecret_proof provided in the API argument" in run.stderr, run.stderr
    assert b"nothing was stored: check the app secret" in run.stderr, run.stderr
    assert len(graph_log(sb, "GET /{id}")) == 1
    assert graph_log(sb, "POST /oauth/access_token") == []
    assert not cred_file.exists()


def test_device_verbose_shows_no_client_token(fb_auth, sb, cred_file):
    """-v lists the device calls without the client token, which is in none of their URLs."""
    sb.control(device_interval=1)
    run = fb_auth("device", "-v", FB_APP_ID=APP_ID, FB_CLIENT_TOKEN=CLIENT_TOKEN, FB_APP_SECRET=APP_SECRET)
    approve(sb, user_code(run))
    run.finish(secrets=SECRETS + stored_secrets(cred_file))
    assert run.returncode == 0, run.stderr
    urls = re.findall(r" (\S+/device/\S*)", run.stderr.decode())
    assert len(urls) >= 4, run.stderr               # each call, and its answer
    assert {url.rsplit("/", 1)[1] for url in urls} == {"login", "login_status"}, urls


# --------------------------------------------------------------------------------------
# 2. exchange
# --------------------------------------------------------------------------------------

def test_exchange_a_pasted_token_for_a_long_lived_one(fb_auth, sb, cred_file):
    """Profile "work" of a file that has another profile and unknown keys: the app's id
    and secret and the short-lived token asked, the token without echo; the long-lived
    token stored with expires_at; everything else in the file kept."""
    profile_file(cred_file, {"other": {"access_token": PAGE_TOKEN, "x-note": "kept"}}, default="other",
                 **{"x-unknown": {"a": 1}})
    t0 = time.time()
    run = fb_auth("exchange", "--profile", "work")
    run.answer(r"App ID: ", APP_ID)
    run.answer(r"App secret: ", APP_SECRET, secret=True)
    run.answer(r"Short-lived user token[^\n]*: ", SHORT_USER_TOKEN, secret=True)
    run.finish(secrets=SECRETS + stored_secrets(cred_file))
    assert run.returncode == 0, run.stderr
    [line] = run.lines()
    assert line["profile"] == "work" and line["method"] == "exchange" and line["token_type"] == "user"
    assert line["account"] == {"id": USER1, "name": "Sandbox Demo"}
    assert abs(iso_to_epoch(line["expires_at"]) - (t0 + LONG_LIVED)) < 30
    doc = read_file(cred_file)
    assert doc["default"] == "other" and doc["x-unknown"] == {"a": 1}
    assert doc["profiles"]["other"]["facebook"] == {"access_token": PAGE_TOKEN, "x-note": "kept"}
    fb = doc["profiles"]["work"]["facebook"]
    assert fb["token_type"] == "user" and fb["app_id"] == APP_ID and fb["access_token"] != SHORT_USER_TOKEN
    [exchange] = graph_log(sb, "POST /oauth/access_token")
    assert exchange["method"] == "POST" and exchange["query"] == {}
    check_no_secret_in_urls(sb)
    assert stat.S_IMODE(os.stat(cred_file).st_mode) == 0o600


def test_exchange_wrong_secret(fb_auth, sb, cred_file):
    run = fb_auth("exchange", FB_APP_ID=APP_ID)
    run.answer(r"App secret: ", WRONG_SECRET, secret=True)
    run.answer(r"Short-lived user token[^\n]*: ", SHORT_USER_TOKEN, secret=True)
    run.finish()
    assert run.returncode == 1 and run.stdout == b""
    assert b"auth: Error validating client secret." in run.stderr, run.stderr
    assert len(graph_log(sb, "POST /oauth/access_token")) == 1
    assert not cred_file.exists()


def test_exchange_an_expired_token(fb_auth, sb, cred_file):
    run = fb_auth("exchange", FB_APP_ID=APP_ID, FB_APP_SECRET=APP_SECRET)
    run.answer(r"Short-lived user token[^\n]*: ", EXPIRED_USER_TOKEN, secret=True)
    run.finish()
    assert run.returncode == 1
    assert b"auth: " in run.stderr and b"subcode 463: the token has expired" in run.stderr, run.stderr
    assert not cred_file.exists()


@pytest.mark.parametrize("command", ["exchange", "device"])
def test_a_flow_with_a_question_needs_a_terminal(fb_auth, sb, cred_file, command):
    """No controlling terminal: a configuration error before anything is sent (device:
    the client token would have to be asked for; issue 20 item 3)."""
    run = fb_auth(command, tty=False, FB_APP_ID=APP_ID, FB_APP_SECRET=APP_SECRET).finish()
    assert run.returncode == 3, run.stderr
    assert run.stderr.startswith(b"fb-auth: no terminal to ask on")
    assert graph_log(sb) == []


def test_device_without_a_terminal_still_shows_the_code(fb_auth, sb, cred_file):
    """With every value in the environment the device flow needs no answer: the code
    still goes to stderr."""
    sb.control(device_interval=1)
    run = fb_auth("device", tty=False, FB_APP_ID=APP_ID, FB_CLIENT_TOKEN=CLIENT_TOKEN, FB_APP_SECRET=APP_SECRET)
    approve(sb, user_code(run))
    run.finish(secrets=SECRETS + stored_secrets(cred_file))
    assert run.returncode == 0, run.stderr


# --------------------------------------------------------------------------------------
# 3. pages
# --------------------------------------------------------------------------------------

def user_profile(path, token=USER_TOKEN, **more):
    return profile_file(path, {"work": dict({"access_token": token, "token_type": "user", "app_id": APP_ID,
                                             "app_secret": APP_SECRET}, **more)}, default="work")


def test_pages_lists_each_page_without_its_token(fb_auth, sb, cred_file):
    user_profile(cred_file)
    run = run_cmd(fb_auth, cred_file, "pages")
    assert run.returncode == 0, run.stderr
    lines = run.lines()
    assert [p["id"] for p in lines] == [PAGE, "200000000000002"]
    for page in lines:
        assert list(page) == ["id", "name", "category", "tasks"], page
    assert lines[0]["name"] == "socialpipe Sandbox Page" and "CREATE_CONTENT" in lines[0]["tasks"]
    [request] = graph_log(sb, "GET /{id}/accounts")
    assert "access_token" not in request["query"]["fields"][0]
    assert_no_token_in_urls(sb)
    assert facebook(cred_file, "work")["access_token"] == USER_TOKEN


def test_pages_store_keeps_the_user_token_and_fb_feed_posts_with_the_page_token(fb_auth, sb, cred_file, tool, env):
    user_profile(cred_file, expires_at="2027-02-01T00:00:00Z")
    run = run_cmd(fb_auth, cred_file, "pages", "--store", PAGE)
    assert run.returncode == 0, run.stderr
    [line] = run.lines()
    assert line["profile"] == "work" and line["id"] == PAGE and line["token_type"] == "page"
    assert "access_token" not in json.dumps(line)
    fb = facebook(cred_file, "work")
    assert fb["access_token"] == PAGE_TOKEN and fb["token_type"] == "page" and fb["user_access_token"] == USER_TOKEN
    assert "expires_at" not in fb and fb["app_secret"] == APP_SECRET
    # pages still works: it uses the user token kept.
    again = run_cmd(fb_auth, cred_file, "pages")
    assert again.returncode == 0 and len(again.lines()) == 2
    # fb-feed posts to the Page with the stored token.
    posted = subprocess.run([tool("fb-feed")], input=jl({"message": "stored by fb-auth"}), capture_output=True,
                            env=env(), timeout=30)
    assert posted.returncode == 0, posted.stderr
    assert json.loads(posted.stdout)["ok"] is True
    assert sb.posts(service="facebook")["counts"].get("stored by fb-auth") == 1
    assert_no_secrets(posted.stdout, posted.stderr, secrets=SECRETS)


def test_pages_store_of_a_page_the_user_does_not_manage(fb_auth, sb, cred_file):
    user_profile(cred_file)
    run = run_cmd(fb_auth, cred_file, "pages", "--store", "999999")
    assert run.returncode == 1 and run.stdout == b""
    assert b"not_found: Page 999999 is not among the Pages" in run.stderr, run.stderr
    assert facebook(cred_file, "work")["access_token"] == USER_TOKEN


def test_pages_of_a_profile_without_a_user_token(fb_auth, sb, cred_file):
    profile_file(cred_file, {"work": {"access_token": PAGE_TOKEN, "token_type": "page"}}, default="work")
    run = run_cmd(fb_auth, cred_file, "pages")
    assert run.returncode == 1
    assert b"has no Facebook user token: run fb-auth device --profile work" in run.stderr, run.stderr
    assert graph_log(sb) == []


# --------------------------------------------------------------------------------------
# 4. status
# --------------------------------------------------------------------------------------

def status_file(path):
    app = {"app_id": APP_ID, "app_secret": APP_SECRET}
    return profile_file(path, {
        "user": dict(app, access_token=USER_TOKEN, token_type="user"),
        "page": dict(app, access_token=PAGE_TOKEN, token_type="page"),
        "expired": dict(app, access_token=EXPIRED_USER_TOKEN, token_type="user"),
        "twitter-only": None,
    }, default="user")


def test_status_of_a_valid_user_token(fb_auth, sb, cred_file):
    status_file(cred_file)
    run = run_cmd(fb_auth, cred_file, "status")
    assert run.returncode == 0, run.stderr
    [line] = run.lines()
    assert list(line) == ["profile", "valid", "type", "app_id", "user_id", "expires_at", "data_access_expires_at",
                          "scopes"], line
    assert line["profile"] == "user" and line["valid"] is True and line["type"] == "USER"
    assert line["app_id"] == APP_ID and line["user_id"] == USER1
    assert line["expires_at"] is None                     # never
    assert ISO_UTC.fullmatch(line["data_access_expires_at"])
    assert "pages_manage_posts" in line["scopes"]
    # debug_token travelled in a one-request batch with the app token in the header.
    [batch] = batch_requests(sb)
    [item] = batch_items(batch)
    assert item["relative_url"].startswith("debug_token?input_token=")
    assert batch["auth"]["token_type"] == "APP"
    assert_no_token_in_urls(sb)


def test_status_all_profiles_exits_1_when_one_is_invalid(fb_auth, sb, cred_file):
    status_file(cred_file)
    run = run_cmd(fb_auth, cred_file, "status", "--all")
    assert run.returncode == 1, run.stderr
    by_profile = {line["profile"]: line for line in run.lines()}
    assert list(by_profile) == ["user", "page", "expired"]
    assert by_profile["user"]["valid"] is True
    page = by_profile["page"]
    assert page["valid"] is True and page["type"] == "PAGE" and page["profile_id"] == PAGE
    expired = by_profile["expired"]
    assert expired["valid"] is False and "subcode 463: the token has expired" in expired["problem"]
    assert iso_to_epoch(expired["expires_at"]) < time.time()
    one = run_cmd(fb_auth, cred_file, "status", "--profile", "expired")
    assert one.returncode == 1 and one.lines()[0]["valid"] is False


def test_status_of_a_revoked_token(fb_auth, sb, cred_file):
    status_file(cred_file)
    sb.control(revoke_token=USER_TOKEN)
    run = run_cmd(fb_auth, cred_file, "status")
    assert run.returncode == 1
    [line] = run.lines()
    assert line["valid"] is False and "subcode 460" in line["problem"]


def test_status_of_a_token_refused_for_lapsed_data_access(fb_auth, sb, cred_file):
    """Contract §7: 190/493 says to log in again with fb-auth device."""
    profile_file(cred_file, {"lapsed": {"access_token": DATA_EXPIRED_TOKEN, "token_type": "user", "app_id": APP_ID,
                                        "app_secret": APP_SECRET}}, default="lapsed")
    run = run_cmd(fb_auth, cred_file, "status")
    assert run.returncode == 1
    [line] = run.lines()
    assert line["valid"] is False, line
    assert line["problem"].endswith("(subcode 493: %s)" % SUBCODE_MEANINGS[493]), line


def test_status_of_another_apps_token(fb_auth, sb, cred_file):
    profile_file(cred_file, {"work": {"access_token": SECURE_PAGE_TOKEN, "app_id": APP_ID, "app_secret": APP_SECRET}},
                 default="work")
    run = run_cmd(fb_auth, cred_file, "status")
    assert run.returncode == 1
    [line] = run.lines()
    assert line["valid"] is False and "another app" in line["problem"], line


def test_status_with_a_wrong_app_secret(fb_auth, sb, cred_file):
    profile_file(cred_file, {"work": {"access_token": USER_TOKEN, "app_id": APP_ID, "app_secret": WRONG_SECRET}},
                 default="work")
    run = run_cmd(fb_auth, cred_file, "status")
    assert run.returncode == 1
    [line] = run.lines()
    assert line["valid"] is False and line["problem"], line


def test_status_of_the_environments_token(fb_auth, sb, cred_file):
    run = fb_auth("status", FB_ACCESS_TOKEN=USER2_TOKEN, FB_APP_ID=APP_ID, FB_APP_SECRET=APP_SECRET).finish()
    assert run.returncode == 0, run.stderr
    [line] = run.lines()
    assert line["profile"] is None and line["valid"] is True and line["user_id"] == USER2


def test_status_needs_the_app_secret(fb_auth, sb, cred_file):
    profile_file(cred_file, {"work": {"access_token": USER_TOKEN}}, default="work")
    run = run_cmd(fb_auth, cred_file, "status")
    assert run.returncode == 1 and run.stdout == b""
    assert b"needs the app's id and secret" in run.stderr
    assert graph_log(sb) == []


def test_a_refused_connection_names_the_api_base_in_use(fb_auth, sb, cred_file):
    """As the filters do (issue 20 item 3): fb-auth's flows name the API base they could not reach."""
    run = run_cmd(fb_auth, cred_file, "device", tty=False, FB_API_BASE="http://127.0.0.1:1", FB_APP_ID="123",
                  FB_CLIENT_TOKEN="made-up-client-token", FB_APP_SECRET="made-up-app-secret",
                  secrets=("made-up-client-token", "made-up-app-secret"))
    assert run.returncode == 1, run
    assert b"(API base http://127.0.0.1:1, from FB_API_BASE)" in run.stderr, run.stderr


def test_status_with_nothing_to_check(fb_auth, sb, cred_file):
    run = fb_auth("status").finish()
    assert run.returncode == 3 and run.stdout == b""
    assert run.stderr.startswith(b"fb-auth: nothing to check")


@pytest.mark.parametrize("profile", ["twitter-only", "keys-only"])
def test_status_of_a_profile_without_a_facebook_token_says_how_to_get_one(fb_auth, sb, cred_file, profile):
    """Nothing to check (fb-auth(1), contract §6: exit 3), as tw-auth does for X; the message
    names the command that creates the token. --all passes over such profiles."""
    status_file(cred_file)
    doc = read_file(cred_file)
    doc["profiles"]["keys-only"] = {"facebook": {"app_id": APP_ID, "app_secret": APP_SECRET}}
    write_private(cred_file, doc)
    run = run_cmd(fb_auth, cred_file, "status", "--profile", profile)
    assert run.returncode == 3 and run.stdout == b"", run
    assert run.stderr == ('fb-auth: profile "%s" has no Facebook token in %s: get one with fb-auth device --profile %s\n'
                          % (profile, cred_file, profile)).encode(), run.stderr
    assert graph_log(sb) == []
    every = run_cmd(fb_auth, cred_file, "status", "--all")
    assert [line["profile"] for line in every.lines()] == ["user", "page", "expired"], every.stderr


# --------------------------------------------------------------------------------------
# 5. logout
# --------------------------------------------------------------------------------------

def test_logout_revokes_and_removes_the_tokens(fb_auth, sb, cred_file):
    """After `pages --store`: DELETE /me/permissions with the user token (in the header),
    then the tokens leave the file; the app's id, secret and client token stay, and so
    does the other profile. The token no longer works."""
    profile_file(cred_file, {"work": {"access_token": PAGE_TOKEN, "token_type": "page", "user_access_token": USER_TOKEN,
                                      "app_id": APP_ID, "app_secret": APP_SECRET, "client_token": CLIENT_TOKEN},
                             "other": {"access_token": USER2_TOKEN}}, default="work")
    run = run_cmd(fb_auth, cred_file, "logout", "--profile", "work")
    assert run.returncode == 0, run.stderr
    [line] = run.lines()
    assert line == {"profile": "work", "revoked": True, "removed": True, "credentials": str(cred_file)}
    assert facebook(cred_file, "work") == {"app_id": APP_ID, "app_secret": APP_SECRET, "client_token": CLIENT_TOKEN}
    assert facebook(cred_file, "other") == {"access_token": USER2_TOKEN}
    [revoke] = graph_log(sb, "DELETE /{id}/permissions")
    assert revoke["path"].endswith("/me/permissions")
    assert_no_token_in_urls(sb)
    check = fb_auth("status", FB_ACCESS_TOKEN=USER_TOKEN, FB_APP_ID=APP_ID, FB_APP_SECRET=APP_SECRET,
                    SOCIALPIPE_CREDENTIALS="/nonexistent").finish()
    assert check.returncode == 1 and check.lines()[0]["valid"] is False


def test_logout_names_the_other_profiles_whose_tokens_it_ends_before_revoking(fb_auth, sb, cred_file):
    """Facebook revokes the app for the user: stderr names, before the DELETE, the profiles that
    hold the same user token (or a Page token beside it), and those of the same app that may be
    the same user's; not a profile of another app, nor the profile logged out of."""
    app = {"app_id": APP_ID, "app_secret": APP_SECRET}
    profile_file(cred_file, {
        "work": dict(app, access_token=USER_TOKEN, token_type="user"),
        "page": dict(app, access_token=PAGE_TOKEN, token_type="page", user_access_token=USER_TOKEN),
        "friend": dict(app, access_token=USER2_TOKEN, token_type="user"),
        "elsewhere": {"access_token": SECURE_PAGE_TOKEN, "app_id": SECURE_APP_ID},
        "x": None,
    }, default="work")
    run = run_cmd(fb_auth, cred_file, "logout", "--profile", "work")
    assert run.returncode == 0, run.stderr
    assert run.stderr.decode().splitlines() == [
        'fb-auth: Facebook revokes the app for the user of profile "work": that also ends the tokens of '
        'profile "page" (the same user\'s), and those of profile "friend" if they are the same user\'s '
        '(the same app\'s)'], run.stderr
    [revoke] = graph_log(sb, "DELETE /{id}/permissions")
    assert revoke["auth"]["user_id"] == USER1, revoke
    # Said and done: the Page token kept in the other profile no longer works.
    check = run_cmd(fb_auth, cred_file, "status", "--profile", "page")
    assert check.returncode == 1 and check.lines()[0]["valid"] is False, check.stderr
    # Alone in the file: nothing more to say.
    profile_file(cred_file, {"work": dict(app, access_token=USER2_TOKEN, token_type="user")}, default="work")
    run = run_cmd(fb_auth, cred_file, "logout")
    assert run.returncode == 0 and b"revokes the app" not in run.stderr, run.stderr


def test_logout_removes_a_profile_it_empties_and_status_all_passes_over_it(fb_auth, sb, cred_file):
    """A profile left with nothing goes from the file (and so does a `default` naming it); one
    that keeps the app's keys or an X section stays; `status --all` checks only profiles with a
    token, so a logout does not make it fail for ever after."""
    profile_file(cred_file, {"bare": {"access_token": USER2_TOKEN}, "user": {"access_token": USER3_TOKEN}},
                 default="bare")
    doc = read_file(cred_file)
    doc["profiles"]["user"]["twitter"] = {"bearer_token": "x"}
    write_private(cred_file, doc)
    run = run_cmd(fb_auth, cred_file, "logout", "--profile", "bare")
    assert run.returncode == 0, run.stderr
    assert run.lines() == [{"profile": "bare", "revoked": True, "removed": True, "credentials": str(cred_file)}]
    assert run.stderr == ('fb-auth: profile "bare" held nothing else: removed it from %s\n' % cred_file).encode()
    assert read_file(cred_file) == {"profiles": {"user": {"facebook": {"access_token": USER3_TOKEN},
                                                          "twitter": {"bearer_token": "x"}}}}
    run = run_cmd(fb_auth, cred_file, "logout", "--profile", "user")
    assert run.returncode == 0 and b"removed it" not in run.stderr, run.stderr
    assert read_file(cred_file)["profiles"] == {"user": {"twitter": {"bearer_token": "x"}}}
    user_profile(cred_file)
    doc = read_file(cred_file)
    doc["profiles"]["gone"] = {"facebook": {"app_id": APP_ID, "app_secret": APP_SECRET}}   # what a logout leaves
    write_private(cred_file, doc)
    every = run_cmd(fb_auth, cred_file, "status", "--all")
    assert every.returncode == 0 and [line["profile"] for line in every.lines()] == ["work"], every.stderr


def test_logout_of_a_token_already_dead(fb_auth, sb, cred_file):
    profile_file(cred_file, {"work": {"access_token": EXPIRED_USER_TOKEN, "token_type": "user", "app_id": APP_ID}},
                 default="work")
    run = run_cmd(fb_auth, cred_file, "logout")
    assert run.returncode == 0, run.stderr
    assert run.lines()[0]["revoked"] is False
    assert facebook(cred_file, "work") == {"app_id": APP_ID}


def test_logout_of_an_unknown_profile(fb_auth, sb, cred_file):
    user_profile(cred_file)
    run = run_cmd(fb_auth, cred_file, "logout", "--profile", "nope")
    assert run.returncode == 3
    assert run.stderr == b'fb-auth: no profile "nope" in %s (its profiles: work)\n' % bytes(cred_file), run.stderr


# --------------------------------------------------------------------------------------
# 6. the file
# --------------------------------------------------------------------------------------

def test_an_unsafe_credentials_file_is_refused(fb_auth, sb, cred_file):
    user_profile(cred_file)
    os.chmod(cred_file, 0o644)
    for args in (["status"], ["pages"], ["logout"]):
        run = fb_auth(*args).finish()
        assert run.returncode == 3, (args, run.stderr)
        assert b"chmod 600" in run.stderr, run.stderr
    assert graph_log(sb) == []


def test_a_new_file_goes_in_a_private_directory(fb_auth, sb, home, tmp_path):
    """--credentials in a directory that does not exist yet: created 0700, file 0600."""
    path = tmp_path / "new" / "dir" / "credentials.json"
    run = fb_auth("exchange", "--credentials", str(path), FB_APP_ID=APP_ID, FB_APP_SECRET=APP_SECRET)
    run.answer(r"Short-lived user token[^\n]*: ", SHORT_USER_TOKEN, secret=True)
    run.finish(secrets=SECRETS + stored_secrets(path))
    assert run.returncode == 0, run.stderr
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(path.parent.parent).st_mode) == 0o700
    assert not any(p.name.startswith(".credentials-") for p in path.parent.iterdir()), "no temporary file left"


# --------------------------------------------------------------------------------------
# 7. the warning of fb-feed and fb-perm-check
# --------------------------------------------------------------------------------------

def iso_in(days):
    return datetime.datetime.fromtimestamp(time.time() + days * 86400, datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%SZ")


@pytest.mark.parametrize("name,args,records", [
    ("fb-perm-check", [], jl("pages_show_list", "email")),
    ("fb-feed", ["--dry-run"], jl("one", "two")),
])
def test_a_user_token_expiring_within_7_days_is_warned_about_once(sb, cred_file, tool, env, name, args, records):
    soon = iso_in(3)
    user_profile(cred_file, expires_at=soon)
    r = subprocess.run([tool(name), *args], input=records, capture_output=True, env=env(), timeout=30)
    assert_no_secrets(r.stdout, r.stderr, secrets=SECRETS)
    warnings = [l for l in r.stderr.decode().splitlines() if "expires at" in l]
    assert warnings == ['%s: the Facebook user token of profile "work" expires at %s (in 3 days): get a new one with '
                        'fb-auth device --profile work (or fb-auth exchange --profile work)' % (name, soon)], r.stderr
    assert len(r.stdout.splitlines()) == 2


@pytest.mark.parametrize("section", [
    {"token_type": "user", "expires_at": iso_in(30)},
    {"token_type": "page", "expires_at": iso_in(3)},
    {"token_type": "user"},
    {},
])
def test_no_warning_for_other_tokens(sb, cred_file, tool, env, section):
    user_profile(cred_file, **section)
    if not section:
        profile_file(cred_file, {"work": {"access_token": USER_TOKEN}}, default="work")
    r = subprocess.run([tool("fb-perm-check"), "pages_show_list"], capture_output=True, env=env(), timeout=30)
    assert r.returncode == 0, r.stderr
    assert b"expire" not in r.stderr


def test_an_expired_user_token_is_warned_about(sb, cred_file, tool, env):
    user_profile(cred_file, expires_at=iso_in(-1))
    r = subprocess.run([tool("fb-perm-check"), "pages_show_list"], capture_output=True, env=env(), timeout=30)
    assert b'the Facebook user token of profile "work" expired at ' in r.stderr, r.stderr


# --------------------------------------------------------------------------------------
# 8. usage and configuration errors
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("args", [
    [], ["login"], ["device", "extra"], ["device", "--all"], ["pages", "--scopes", "email"],
    ["status", "--store", PAGE], ["pages", "--store", "abc"], ["device", "--scopes", "Email!"],
    ["status", "--all", "--profile", "x"], ["status", "--graph-version", "27"], ["device", "--api-base", "ftp://x"],
])
def test_usage_errors(fb_auth, sb, args):
    run = fb_auth(*args).finish()
    assert_usage_error(run, TOOL)
    assert graph_log(sb) == []


def test_help_names_the_commands(fb_auth):
    run = fb_auth("--help").finish()
    assert run.returncode == 0
    for command in ("device", "exchange", "pages", "status", "logout"):
        assert re.search(rb"^  %s " % command.encode(), run.stdout, re.M), command
    for option in (b"--all", b"--scopes", b"--store", b"--profile", b"--credentials", b"--api-base"):
        assert option in run.stdout


# --------------------------------------------------------------------------------------
# Lifetimes that are no date (issue 17, item 1)
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("lifetime", ["0", "-1", "1e300", "9223372036854775808", '"text"'])
def test_an_exchange_whose_lifetime_is_no_date_stores_the_token_without_expiry(fb_auth, sb, cred_file, lifetime):
    """expires_in 1e300 crashed the exchange (a time past any date); 2^63, which jansson
    cannot hold, lost the token. The token is stored, with no expiry."""
    sb.fault("patch", match={"method": "POST", "endpoint": "POST /oauth/access_token"}, members={"expires_in": lifetime})
    run = fb_auth("exchange", "--profile", "work", FB_APP_ID=APP_ID, FB_APP_SECRET=APP_SECRET)
    run.answer(r"Short-lived user token[^\n]*: ", SHORT_USER_TOKEN, secret=True)
    run.finish(secrets=SECRETS + stored_secrets(cred_file))
    assert run.returncode == 0, run.stderr
    [line] = run.lines()
    assert line["expires_at"] is None, line
    fb = facebook(cred_file, "work")
    assert "expires_at" not in fb and fb["access_token"] != SHORT_USER_TOKEN, fb


@pytest.mark.parametrize("lifetime", ["1e300", "9223372036854775807"])
def test_a_device_code_lifetime_that_is_no_date_is_bounded(fb_auth, sb, cred_file, lifetime):
    """expires_in 1e300 on device/login crashed fb-auth while it printed the minutes left."""
    sb.control(device_interval=1)
    sb.fault("patch", match={"method": "POST", "endpoint": "POST /device/login"}, members={"expires_in": lifetime})
    run = fb_auth("device", FB_APP_ID=APP_ID, FB_APP_SECRET=APP_SECRET, FB_CLIENT_TOKEN=CLIENT_TOKEN)
    code = user_code(run)
    assert b"expires in 60 min" in run.err.data, run.err.data
    approve(sb, code)
    run.finish(secrets=SECRETS + stored_secrets(cred_file))
    assert run.returncode == 0, run.stderr
