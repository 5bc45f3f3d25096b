"""End-to-end tests of `tw-auth` (spec: issue 11, "tw-auth", "The credentials file,
written safely", "Tests"; man/tw-auth.1; X API: docs/reference/x-api.md §9.5, §10).

tw-auth is interactive: questions and pages go to stderr, answers are read from
/dev/tty. Each interactive run here gets a fresh pseudo-terminal as its controlling
terminal (a new session, TIOCSCTTY) and as its stderr; its stdin is /dev/null and its
stdout a pipe, so what it asks, shows and echoes is read from the terminal's master
side, and the one JSON line it stores is read from stdout. A question is answered
once it has appeared; a secret question once the terminal's echo is off (an answer
typed earlier would be flushed by the tool's TCSAFLUSH, as a person's would not be).
The person's side of the flows (approve, deny, read the PIN, follow the redirect) is
played through the sandbox's control API (sandbox/README.md §3 "Getting tokens", §6
"Consent") and by GETting the redirect as the browser would.

Every run is checked for secrets: none on stdout or on the terminal (stderr and echo),
the demo ones and every token the credentials file holds after the run; and while the
tool waits at a question, no process's command line carries one.

Sections:
  1. pin: questions, environment, profile; wrong PIN, denied authorization; no terminal
  2. oauth2: loopback listener, --no-browser, denied consent, state mismatch, expired
     code, confidential client with and without its secret
  3. app
  4. status: valid, revoked, expired, refreshed, --all
  5. logout
"""
import calendar
import fcntl
import json
import os
import pathlib
import pty
import re
import select
import signal
import socket
import stat
import subprocess
import termios
import threading
import time
import urllib.parse

import pytest
import requests
from requests_oauthlib import OAuth1

from toolenv import (SANDBOX_SECRETS, X_DEMO_CREDENTIALS, assert_no_secrets, clean_env, closed_port, credentials_path,
                     write_private)

TOOL = "tw-auth"

CONSUMER_KEY = X_DEMO_CREDENTIALS["TW_CONSUMER_KEY"]
CONSUMER_SECRET = X_DEMO_CREDENTIALS["TW_CONSUMER_SECRET"]
DEMO_ACCESS_TOKEN = X_DEMO_CREDENTIALS["TW_ACCESS_TOKEN"]
DEMO_TOKEN_SECRET = X_DEMO_CREDENTIALS["TW_ACCESS_TOKEN_SECRET"]
DEMO_ID, DEMO_NAME = "1000000000000000001", "socialpipe_demo"
DEMO_ACCOUNT = {"id": DEMO_ID, "username": DEMO_NAME}

PUBLIC = "sandbox-oauth2-client-id"
CONFIDENTIAL, CLIENT_SECRET = "sandbox-oauth2-confidential-id", "sandbox-oauth2-client-secret"
DEFAULT_REDIRECT = "http://127.0.0.1:8739/callback"
DEFAULT_SCOPES = "tweet.read tweet.write users.read follows.read offline.access media.write"
# The scopes of the sandbox's configured refresh token (sandbox/README.md §2).
REFRESH_TOKEN_SCOPES = "tweet.read tweet.write users.read follows.read offline.access"
REFRESHABLE, REFRESH = "sandbox-oauth2-refreshable-token", "sandbox-oauth2-refresh-token"
EXPIRED_OAUTH2 = "sandbox-oauth2-expired-token"
APP_BEARER = "sandbox-bearer-token"

EXTRA_SECRETS = (CLIENT_SECRET, REFRESHABLE, REFRESH, EXPIRED_OAUTH2, "sandbox-oauth2-confidential-token",
                 "sandbox-oauth2-confidential-refresh-token")
SECRETS = SANDBOX_SECRETS + EXTRA_SECRETS

TOKEN_ENDPOINT = "POST /2/oauth2/token grant_type=authorization_code"
REFRESH_ENDPOINT = "POST /2/oauth2/token grant_type=refresh_token"
ISO_UTC = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")
KEY_QUESTION = r"API key \(consumer key\): "
SECRET_QUESTION = r"API key secret \(consumer secret\): "
CLIENT_SECRET_QUESTION = r"Client secret \(empty for a public client\): "
PASTE_QUESTION = r"Paste the address your browser was sent to: "


# --------------------------------------------------------------------------------------
# a tool on a pseudo-terminal
# --------------------------------------------------------------------------------------

class OnTerminal:
    """A tw-auth run whose controlling terminal and stderr are a new pseudo-terminal
    (stdin /dev/null, stdout a pipe). The master side is read on a thread into
    `screen` (or, with stderr_pipe, stderr into `screen` and the master into `tty`);
    `expect` waits for a pattern in `screen` after what was already matched."""

    def __init__(self, argv, env, umask=-1, stderr_pipe=False):
        """stderr_pipe: stderr is a pipe of its own, read into `screen` (what the tool
        writes to the terminal itself, the echo of what is typed, goes to `tty`)."""
        self.master, slave = pty.openpty()
        termios.tcsetattr(slave, termios.TCSANOW, self._sane(termios.tcgetattr(slave)))

        def take_terminal():                 # in the child, after setsid: the pty becomes /dev/tty
            fcntl.ioctl(slave, termios.TIOCSCTTY, 0)

        try:
            self.p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE if stderr_pipe else slave, env=env,
                                      start_new_session=True, preexec_fn=take_terminal, umask=umask)
        finally:
            os.close(slave)
        self.screen = b""
        self.tty = b""
        self.pos = 0
        self.eof = False
        self.tty_eof = not stderr_pipe
        self.cv = threading.Condition()
        self.stdout = b""
        threading.Thread(target=self._pump, args=(self.master, "screen" if not stderr_pipe else "tty"),
                         daemon=True).start()
        if stderr_pipe:
            threading.Thread(target=self._pump, args=(self.p.stderr.fileno(), "screen"), daemon=True).start()

    @staticmethod
    def _sane(attrs):
        attrs[3] |= termios.ECHO | termios.ICANON
        return attrs

    def _pump(self, fd, into):
        while True:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                # EIO: no process holds the slave side now. With stderr on a pipe that is
                # also the case until the tool opens /dev/tty, so it ends only with the tool.
                if fd == self.master and self.p.poll() is None:
                    time.sleep(0.01)
                    continue
                chunk = b""
            with self.cv:
                if not chunk:
                    if into == "screen":
                        self.eof = True
                    else:
                        self.tty_eof = True
                    self.cv.notify_all()
                    return
                setattr(self, into, getattr(self, into) + chunk)
                self.cv.notify_all()

    def expect(self, pattern, timeout=10):
        """The match of `pattern` (str regex) in what the terminal showed since the last match."""
        rx = re.compile(pattern.encode())
        deadline = time.monotonic() + timeout
        with self.cv:
            while True:
                m = rx.search(self.screen, self.pos)
                if m:
                    self.pos = m.end()
                    return m
                left = deadline - time.monotonic()
                if self.eof or left <= 0:
                    pytest.fail("tw-auth did not show %r (exit %r); the terminal showed %r"
                                % (pattern, self.p.poll(), self.screen.decode("utf-8", "replace")))
                self.cv.wait(min(left, 0.1))

    def echo_is_on(self):
        return bool(termios.tcgetattr(self.master)[3] & termios.ECHO)

    def answer(self, text):
        """Types a line (the question has been seen)."""
        os.write(self.master, text.encode() + b"\n")

    def answer_secret(self, text, timeout=5):
        """Types a line once the tool has turned the echo off (a secret question)."""
        deadline = time.monotonic() + timeout
        while self.echo_is_on():
            assert time.monotonic() < deadline, ("a secret is asked for without echo", self.screen)
            time.sleep(0.005)
        self.answer(text)

    def finish(self, timeout=20):
        """Waits for the end; returns self with returncode, stdout and the whole screen."""
        try:
            self.returncode = self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail("tw-auth did not finish within %s s; the terminal showed %r" % (timeout, self.screen))
        self.stdout = self.p.stdout.read()
        with self.cv:
            self.cv.wait_for(lambda: self.eof and self.tty_eof, 5)
        return self

    def lines(self):
        return [json.loads(l) for l in self.stdout.decode("utf-8").splitlines()]

    def text(self):
        return self.screen.decode("utf-8", "replace")

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()

    def close(self):
        self.kill()
        self.p.stdout.close()
        if self.p.stderr:
            self.p.stderr.close()
        os.close(self.master)

    def __repr__(self):
        return "OnTerminal(rc=%r, stdout=%r, screen=%r)" % (getattr(self, "returncode", None), self.stdout[:2000],
                                                            self.screen[-3000:])


def command_lines():
    """Every readable process command line on the machine, as text."""
    out = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open("/proc/%s/cmdline" % pid, "rb") as f:
                    out.append(f.read().replace(b"\0", b" ").decode("utf-8", "replace"))
            except OSError:
                pass
    return out


def assert_no_secret_in_arguments(t, *secrets):
    """While the tool waits: its own command line is just what we gave, and no
    process's command line holds one of these secrets."""
    with open("/proc/%d/cmdline" % t.p.pid, "rb") as f:
        own = f.read().split(b"\0")[:-1]
    assert own == [a.encode() for a in t.p.args], own
    for line in command_lines():
        for s in SECRETS + secrets:
            assert s not in line, ("a secret in a process's arguments", s, line)


def stored_secrets(path):
    """The secret values the credentials file holds (tokens, token secrets, client secret)."""
    if not os.path.exists(path):
        return ()
    out = []
    doc = json.loads(pathlib.Path(path).read_text())
    for profile in doc.get("profiles", {}).values():
        tw = profile.get("twitter", {})
        out += [tw.get(k) for k in ("consumer_secret", "access_token_secret", "bearer_token")]
        o2 = tw.get("oauth2") or {}
        out += [o2.get(k) for k in ("access_token", "refresh_token", "client_secret")]
    return tuple(s for s in out if s)


def check_clean(t, path):
    """No secret on stdout or on the terminal, the file's too."""
    assert_no_secrets(t.stdout, t.screen, t.tty, secrets=SECRETS + stored_secrets(path))


def twitter_of(path, profile="default"):
    return json.loads(pathlib.Path(path).read_text())["profiles"][profile]["twitter"]


def mode(path):
    return stat.S_IMODE(os.lstat(path).st_mode)


def epoch(iso):
    assert ISO_UTC.fullmatch(iso), iso
    return calendar.timegm(time.strptime(iso, "%Y-%m-%dT%H:%M:%SZ"))


def nothing_stored(path, profile="default"):
    """No token in the profile (the file may not exist at all)."""
    if not os.path.exists(path):
        return True
    tw = json.loads(pathlib.Path(path).read_text()).get("profiles", {}).get(profile, {}).get("twitter", {})
    return not any(k in tw for k in ("access_token", "access_token_secret", "bearer_token", "oauth2"))


def check_refused(t, sb, cred_file, message=r"tw-auth: ", token_status=None):
    """A flow that ended refused: exit 1, a message matching `message` on the terminal, no
    line on stdout, nothing stored; with token_status, the one exchange at the token
    endpoint answered that status."""
    t.finish()
    assert t.returncode == 1, t
    assert t.stdout == b"", t
    assert re.search(message, t.text()), (message, t)
    check_clean(t, cred_file)
    assert nothing_stored(cred_file)
    if token_status is not None:
        [exchange] = entries(sb, TOKEN_ENDPOINT)
        assert exchange["status"] == token_status, exchange


def entries(sb, endpoint):
    return [e for e in sb.log() if e["endpoint"] == endpoint]


def me_bearer(sb, token):
    return requests.get(sb.url + "/2/users/me", headers={"Authorization": "Bearer " + token}, timeout=10)


def me_oauth1(sb, token, secret, key=CONSUMER_KEY, key_secret=CONSUMER_SECRET):
    return requests.get(sb.url + "/2/users/me", auth=OAuth1(key, key_secret, token, secret), timeout=10)


def refresh_with(sb, token, client=PUBLIC):
    return requests.post(sb.url + "/2/oauth2/token", timeout=10,
                         data={"grant_type": "refresh_token", "refresh_token": token, "client_id": client})


# --------------------------------------------------------------------------------------
# fixtures
# --------------------------------------------------------------------------------------

@pytest.fixture
def cred_file(home):
    """Where the tool keeps credentials by default (the directory is not created)."""
    return home / ".config" / "socialpipe" / "credentials.json"


@pytest.fixture
def auth_env(home, sb):
    """auth_env(extra=None): the scrubbed environment, TW_API_BASE at the sandbox, no credentials."""
    return lambda extra=None: clean_env(home, dict({"TW_API_BASE": sb.url}, **(extra or {})))


@pytest.fixture
def interactive(bin_path, auth_env):
    """interactive(args, extra=None, umask=-1, stderr_pipe=False) -> OnTerminal, closed at teardown."""
    started = []

    def _start(args, extra=None, umask=-1, stderr_pipe=False):
        t = OnTerminal([bin_path, *args], auth_env(extra), umask=umask, stderr_pipe=stderr_pipe)
        started.append(t)
        return t
    yield _start
    for t in started:
        t.close()


@pytest.fixture
def detached(bin_path, auth_env):
    """detached(args, extra_env=None) -> CompletedProcess of a run with no terminal at all
    (new session, stdin /dev/null), after the secrets check."""
    def _run(args, extra=None, stdin=None):
        p = subprocess.run([bin_path, *args], input=stdin, stdin=None if stdin is not None else subprocess.DEVNULL,
                           capture_output=True, env=auth_env(extra), timeout=30, start_new_session=True)
        assert_no_secrets(p.stdout, p.stderr, secrets=SECRETS)
        return p
    return _run


# --------------------------------------------------------------------------------------
# 1. pin
# --------------------------------------------------------------------------------------

def read_authorize_url(t, sb):
    """The PIN flow's page on the terminal: the sandbox's authorize page with the request token."""
    m = t.expect(r"(\S+/oauth/authorize\?oauth_token=(\S+))\r?\n")
    url, token = m.group(1).decode(), urllib.parse.unquote(m.group(2).decode())
    assert url.startswith(sb.url + "/oauth/authorize?"), url
    pending = sb.state()["pending"]["request_tokens"]
    assert [p["oauth_token"] for p in pending] == [token], pending
    return token


def test_pin_asks_for_the_key_and_secret_and_stores_the_four_fields(interactive, sb, cred_file):
    # umask 0: what the tool creates is private all the same.
    t = interactive(["pin", "-v"], umask=0)
    t.expect(KEY_QUESTION)
    t.answer(CONSUMER_KEY)
    t.expect(SECRET_QUESTION)
    t.answer_secret(CONSUMER_SECRET)
    token = read_authorize_url(t, sb)
    t.expect(r"PIN: ")
    assert t.echo_is_on(), "the PIN is no secret: it is echoed"
    assert_no_secret_in_arguments(t, CONSUMER_SECRET)
    pin = sb.control(authorize_request_token={"oauth_token": token, "user": DEMO_NAME})["pin"]
    t.answer(pin)
    t.finish()
    assert t.returncode == 0, t
    assert CONSUMER_SECRET not in t.text(), ("the secret answer is not echoed", t)
    check_clean(t, cred_file)

    tw = twitter_of(cred_file)
    assert sorted(tw) == ["access_token", "access_token_secret", "consumer_key", "consumer_secret"], tw
    assert tw["consumer_key"] == CONSUMER_KEY and tw["consumer_secret"] == CONSUMER_SECRET, tw
    assert tw["access_token"].startswith(DEMO_ID + "-"), tw
    assert t.lines() == [{"profile": "default", "method": "oauth1", "account": DEMO_ACCOUNT,
                          "credentials": str(cred_file)}], t
    assert json.loads(cred_file.read_text())["default"] == "default"
    # Created by the tool: the directory 0700, the file and its lock 0600.
    assert mode(cred_file.parent) == 0o700
    assert mode(cred_file) == 0o600
    assert mode(str(cred_file) + ".lock") == 0o600
    leftovers = sorted(os.listdir(cred_file.parent))
    assert leftovers == ["credentials.json", "credentials.json.lock"], leftovers
    # The stored token is the user's, and works.
    assert me_oauth1(sb, tw["access_token"], tw["access_token_secret"]).json()["data"]["id"] == DEMO_ID
    # The flow as X wants it: oob callback, then the verifier; the PIN was masked in the log.
    [rt] = entries(sb, "POST /oauth/request_token")
    assert 'oauth_callback="oob"' in rt["headers"]["authorization"], rt["headers"]
    [at] = entries(sb, "POST /oauth/access_token")
    assert at["status"] == 200 and "oauth_verifier" in at["headers"]["authorization"], at


def test_pin_takes_the_key_and_secret_from_the_environment(interactive, sb, home):
    path = credentials_path(home)
    # Another profile, and keys tw-auth does not know, are kept as they were.
    other = {"twitter": {"bearer_token": "kept-bearer"}, "facebook": {"access_token": "kept-fb"}, "x-note": [1, 2]}
    write_private(path, {"profiles": {"other": other}, "x-top": {"keep": True}})
    t = interactive(["pin", "--profile", "kestrel", "--access", "read"],
                    extra={"TW_CONSUMER_KEY": CONSUMER_KEY, "TW_CONSUMER_SECRET": CONSUMER_SECRET})
    token = read_authorize_url(t, sb)
    t.expect(r"PIN: ")
    assert_no_secret_in_arguments(t)
    pin = sb.control(authorize_request_token={"oauth_token": token, "user": DEMO_NAME})["pin"]
    t.answer(pin)
    t.finish()
    assert t.returncode == 0, t
    assert "consumer key" not in t.text() and "consumer secret" not in t.text(), ("nothing asked", t)
    check_clean(t, path)
    doc = json.loads(path.read_text())
    assert doc["profiles"]["other"] == other and doc["x-top"] == {"keep": True}, doc
    assert doc["default"] == "kestrel", "the first profile with credentials becomes the default"
    tw = doc["profiles"]["kestrel"]["twitter"]
    assert sorted(tw) == ["access_token", "access_token_secret", "consumer_key", "consumer_secret"], tw
    assert t.lines() == [{"profile": "kestrel", "method": "oauth1", "account": DEMO_ACCOUNT,
                          "credentials": str(path)}], t
    assert mode(path) == 0o600
    # --access read went into the signed request.
    [rt] = entries(sb, "POST /oauth/request_token")
    asked = (rt["body"] or {}).get("x_auth_access_type") or rt["query"].get("x_auth_access_type")
    assert asked == ["read"], rt


def test_pin_takes_the_key_and_secret_from_the_profile_and_keeps_a_symlink(interactive, sb, home, tmp_path):
    real = tmp_path / "vault" / "creds.json"
    real.parent.mkdir(mode=0o700)
    write_private(real, {"default": "kestrel",
                         "profiles": {"kestrel": {"twitter": {"consumer_key": CONSUMER_KEY,
                                                              "consumer_secret": CONSUMER_SECRET}}}})
    link = credentials_path(home)
    link.symlink_to(real)
    t = interactive(["pin"])
    token = read_authorize_url(t, sb)
    t.expect(r"PIN: ")
    t.answer(sb.control(authorize_request_token={"oauth_token": token, "user": DEMO_NAME})["pin"])
    t.finish()
    assert t.returncode == 0, t
    assert "consumer key" not in t.text(), t
    check_clean(t, real)
    assert os.path.islink(link) and os.readlink(link) == str(real), "the link is kept"
    tw = twitter_of(real, "kestrel")
    assert "access_token_secret" in tw, tw
    assert mode(real) == 0o600
    assert t.lines()[0]["profile"] == "kestrel", t


def test_questions_go_to_stderr_and_answers_come_from_the_terminal(interactive, sb, cred_file):
    # stderr apart from the terminal: every question and the page are on stderr; the
    # terminal gets nothing but the echo of what was typed (and no echo of the secret).
    t = interactive(["pin"], stderr_pipe=True)
    t.expect(KEY_QUESTION)
    t.answer(CONSUMER_KEY)
    t.expect(SECRET_QUESTION)
    t.answer_secret(CONSUMER_SECRET)
    token = read_authorize_url(t, sb)
    t.expect(r"PIN: ")
    pin = sb.control(authorize_request_token={"oauth_token": token, "user": DEMO_NAME})["pin"]
    t.answer(pin)
    t.finish()
    assert t.returncode == 0, t
    check_clean(t, cred_file)
    assert t.tty.replace(b"\r", b"") == ("%s\n%s\n" % (CONSUMER_KEY, pin)).encode(), t.tty
    assert t.lines()[0]["account"] == DEMO_ACCOUNT, t


def test_a_wrong_pin_exits_1_and_stores_nothing(interactive, sb, cred_file):
    t = interactive(["pin"], extra={"TW_CONSUMER_KEY": CONSUMER_KEY, "TW_CONSUMER_SECRET": CONSUMER_SECRET})
    token = read_authorize_url(t, sb)
    t.expect(r"PIN: ")
    real = sb.control(authorize_request_token={"oauth_token": token, "user": DEMO_NAME})["pin"]
    t.answer("0000000" if real != "0000000" else "1111111")
    t.finish()
    assert t.returncode == 1, t
    assert t.stdout == b"", t
    assert re.search(r"tw-auth: .*PIN", t.text()), ("a message that says the PIN was refused", t)
    # Contract §6: `TOOL: KIND: message`; tw-auth reads no lines, so none is named.
    assert re.search(r"(?m)^tw-auth: auth: ", t.text()) and "line 1" not in t.text(), t
    check_clean(t, cred_file)
    assert nothing_stored(cred_file), cred_file.read_text()
    [at] = entries(sb, "POST /oauth/access_token")
    assert at["status"] == 401, at


def test_a_denied_authorization_exits_1_and_stores_nothing(interactive, sb, cred_file):
    t = interactive(["pin"], extra={"TW_CONSUMER_KEY": CONSUMER_KEY, "TW_CONSUMER_SECRET": CONSUMER_SECRET})
    token = read_authorize_url(t, sb)
    t.expect(r"PIN: ")
    assert sb.control(authorize_request_token={"oauth_token": token, "deny": True})["pin"] is None
    t.answer("4821907")                      # a guess: after a denial no PIN works
    check_refused(t, sb, cred_file)


@pytest.mark.parametrize("args", [["pin"], ["oauth2"], ["app"]])
def test_a_flow_without_a_terminal_reads_nothing_from_stdin(detached, sb, cred_file, args):
    # Answers piped in are not answers: without /dev/tty a flow with a question to ask
    # cannot run, and that is exit 3 for each of them (issue 20 item 3).
    p = detached(args, stdin=("%s\n%s\n1234567\n" % (CONSUMER_KEY, CONSUMER_SECRET)).encode())
    assert p.returncode == 3, p
    assert p.stdout == b"", p
    assert p.stderr.startswith(b"tw-auth: no terminal to ask on"), p
    assert nothing_stored(cred_file)
    assert sb.log() == [], "nothing sent"


# --------------------------------------------------------------------------------------
# 2. oauth2
# --------------------------------------------------------------------------------------

def read_oauth2_page(t, sb, client=PUBLIC, redirect=DEFAULT_REDIRECT, scopes=DEFAULT_SCOPES):
    """The authorize page shown on the terminal, checked; returns its state."""
    m = t.expect(r"(\S+/i/oauth2/authorize\?\S+)\r?\n")
    url = m.group(1).decode()
    assert url.startswith(sb.url + "/i/oauth2/authorize?"), url
    q = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query, strict_parsing=True))
    assert q["response_type"] == "code" and q["client_id"] == client and q["redirect_uri"] == redirect, q
    assert q["scope"] == scopes, q
    assert q["code_challenge_method"] == "S256" and re.fullmatch(r"[A-Za-z0-9_-]{43}", q["code_challenge"]), q
    assert len(q["state"]) >= 16, ("an unguessable state", q)
    # A person opens the page: the sandbox records the authorization under its state.
    page = requests.get(url, timeout=10)
    assert page.status_code == 200, page.text
    assert [p["state"] for p in sb.state()["pending"]["oauth2"]] == [q["state"]]
    return q["state"]


def consent(sb, state, **kw):
    body = {"state": state, **kw} if kw.get("deny") else {"state": state, "user": DEMO_NAME, **kw}
    return sb.control(authorize_oauth2=body)["redirect"]


def browse(redirect):
    """The browser follows the redirect to the tool's loopback listener."""
    r = requests.get(redirect, timeout=10)
    assert r.status_code == 200 and "terminal" in r.text, (r.status_code, r.text)
    return r


def listening(port):
    s = socket.socket()
    try:
        return s.connect_ex(("127.0.0.1", port)) == 0
    finally:
        s.close()


def check_stored_oauth2(sb, path, t, client=PUBLIC, scopes=DEFAULT_SCOPES, refresh=True, secret=None):
    """The profile's twitter.oauth2 after a successful flow, and the line on stdout."""
    o2 = twitter_of(path)["oauth2"]
    expected = ["access_token", "client_id", "expires_at", "scopes"] + (["refresh_token"] if refresh else []) \
        + (["client_secret"] if secret else [])
    assert sorted(o2) == sorted(expected), o2
    assert o2["client_id"] == client and o2.get("client_secret") == secret, o2
    assert o2["scopes"] == scopes, o2
    assert abs(epoch(o2["expires_at"]) - (time.time() + 7200)) < 30, o2
    assert me_bearer(sb, o2["access_token"]).json()["data"]["id"] == DEMO_ID
    assert t.lines() == [{"profile": "default", "method": "oauth2", "account": DEMO_ACCOUNT,
                          "expires_at": o2["expires_at"], "scopes": scopes, "credentials": str(path)}], t
    assert mode(path) == 0o600
    return o2


def test_oauth2_with_the_loopback_listener(interactive, sb, cred_file):
    port = closed_port()
    redirect = "http://127.0.0.1:%d/callback" % port
    t = interactive(["oauth2", "--client-id", PUBLIC, "--redirect-uri", redirect])
    t.expect(CLIENT_SECRET_QUESTION)
    t.answer_secret("")                      # a public client has none
    state = read_oauth2_page(t, sb, redirect=redirect)
    t.expect(r"Waiting for the redirect")
    assert listening(port), "the listener is up before the page is shown"
    assert_no_secret_in_arguments(t)
    came = consent(sb, state)
    assert came.startswith(redirect + "?"), came
    browse(came)
    t.finish()
    assert t.returncode == 0, t
    check_clean(t, cred_file)
    check_stored_oauth2(sb, cred_file, t)
    [exchange] = entries(sb, TOKEN_ENDPOINT)
    assert exchange["status"] == 200 and exchange["body"]["client_id"] == [PUBLIC], exchange
    assert exchange["body"]["code_verifier"] == ["[masked]"], "the PKCE verifier was sent"
    assert "authorization" not in exchange["headers"], "a public client sends no Basic auth"
    assert not listening(port), "the listener is gone"


def test_oauth2_no_browser_takes_the_pasted_redirect(interactive, sb, cred_file):
    port = closed_port()
    redirect = "http://127.0.0.1:%d/callback" % port
    scopes = "tweet.read users.read"
    t = interactive(["oauth2", "--no-browser", "--redirect-uri", redirect, "--scopes", scopes])
    t.expect(r"OAuth 2.0 client ID: ")
    t.answer(PUBLIC)
    t.expect(CLIENT_SECRET_QUESTION)
    t.answer_secret("")
    state = read_oauth2_page(t, sb, redirect=redirect, scopes=scopes)
    t.expect(PASTE_QUESTION)
    assert not listening(port), "with --no-browser nothing listens"
    t.answer(consent(sb, state))
    t.finish()
    assert t.returncode == 0, t
    check_clean(t, cred_file)
    # Without offline.access there is no refresh token.
    check_stored_oauth2(sb, cred_file, t, scopes=scopes, refresh=False)


def test_oauth2_denied_consent_exits_1_and_stores_nothing(interactive, sb, cred_file):
    port = closed_port()
    redirect = "http://127.0.0.1:%d/callback" % port
    t = interactive(["oauth2", "--client-id", PUBLIC, "--redirect-uri", redirect], extra={"TW_CLIENT_SECRET": None})
    t.expect(CLIENT_SECRET_QUESTION)
    t.answer_secret("")
    state = read_oauth2_page(t, sb, redirect=redirect)
    t.expect(r"Waiting for the redirect")
    came = consent(sb, state, deny=True)
    assert "error=access_denied" in came, came
    browse(came)
    check_refused(t, sb, cred_file, message=r"tw-auth: .*access_denied")
    assert entries(sb, TOKEN_ENDPOINT) == [], "nothing to exchange"


def test_oauth2_refuses_a_redirect_with_another_state(interactive, sb, cred_file):
    t = interactive(["oauth2", "--no-browser", "--client-id", PUBLIC])
    t.expect(CLIENT_SECRET_QUESTION)
    t.answer_secret("")
    state = read_oauth2_page(t, sb)
    t.expect(PASTE_QUESTION)
    came = consent(sb, state)
    forged = came.replace("state=" + urllib.parse.quote(state, safe=""), "state=forged-by-someone-else")
    assert forged != came and "code=" in forged, came
    t.answer(forged)
    check_refused(t, sb, cred_file, message=r"tw-auth: .*state")
    assert entries(sb, TOKEN_ENDPOINT) == [], "the code of a redirect with another state is not used"


def test_oauth2_an_expired_code_exits_1_and_stores_nothing(interactive, sb, cred_file):
    sb.control(oauth2_code_lifetime=0.2)
    redirect = "http://127.0.0.1:%d/callback" % closed_port()
    t = interactive(["oauth2", "--client-id", PUBLIC, "--redirect-uri", redirect])
    t.expect(CLIENT_SECRET_QUESTION)
    t.answer_secret("")
    state = read_oauth2_page(t, sb, redirect=redirect)
    t.expect(r"Waiting for the redirect")
    came = consent(sb, state)
    time.sleep(0.6)                          # the browser dawdles: the code is dead when it arrives
    browse(came)
    check_refused(t, sb, cred_file, token_status=400)


def test_oauth2_confidential_client_authenticates_with_basic(interactive, sb, cred_file):
    t = interactive(["oauth2", "--no-browser", "--client-id", CONFIDENTIAL, "-v"])    # -v: secrets redacted
    t.expect(CLIENT_SECRET_QUESTION)
    t.answer_secret(CLIENT_SECRET)
    state = read_oauth2_page(t, sb, client=CONFIDENTIAL)
    t.expect(PASTE_QUESTION)
    assert_no_secret_in_arguments(t, CLIENT_SECRET)
    t.answer(consent(sb, state))
    t.finish()
    assert t.returncode == 0, t
    assert CLIENT_SECRET not in t.text(), ("the client secret is not echoed", t)
    check_clean(t, cred_file)
    check_stored_oauth2(sb, cred_file, t, client=CONFIDENTIAL, secret=CLIENT_SECRET)
    [exchange] = entries(sb, TOKEN_ENDPOINT)
    assert exchange["status"] == 200, exchange
    assert exchange["headers"]["authorization"].lower().startswith("basic "), exchange["headers"]
    assert exchange["auth"]["client_id"] == CONFIDENTIAL and exchange["auth"]["outcome"] == "ok", exchange["auth"]


def test_oauth2_confidential_client_without_its_secret_is_refused(interactive, sb, cred_file):
    t = interactive(["oauth2", "--no-browser", "--client-id", CONFIDENTIAL])
    t.expect(CLIENT_SECRET_QUESTION)
    t.answer_secret("")
    state = read_oauth2_page(t, sb, client=CONFIDENTIAL)
    t.expect(PASTE_QUESTION)
    t.answer(consent(sb, state))
    check_refused(t, sb, cred_file, token_status=401)


def raw_request(port, request, timeout=10):
    """Sends `request` (bytes) to the loopback listener as a client of its own and
    returns the status of the answer (the listener closes after answering)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(request)
        answer = b""
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            answer += chunk
    m = re.match(rb"HTTP/1\.[01] (\d{3}) ", answer)
    assert m, ("not an HTTP answer", request[:100], answer[:200])
    return int(m.group(1))


def get(path):
    return b"GET " + path.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


def idle_connections(port, count):
    """`count` connections to the listener that send nothing (a few of them half a request)."""
    out = []
    for i in range(count):
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        if i % 4 == 3:
            s.sendall(b"GET /callback?sta")
        out.append(s)
    return out


def oauth2_login_waiting(interactive, sb):
    """`tw-auth oauth2` (public client) on a free loopback port, once it waits for the
    redirect: the session, the port and the state its authorization page carries."""
    port = closed_port()
    redirect = "http://127.0.0.1:%d/callback" % port
    t = interactive(["oauth2", "--client-id", PUBLIC, "--redirect-uri", redirect])
    t.expect(CLIENT_SECRET_QUESTION)
    t.answer_secret("")
    state = read_oauth2_page(t, sb, redirect=redirect)
    t.expect(r"Waiting for the redirect")
    return t, port, state


def test_oauth2_listener_waits_past_stray_requests_and_idle_connections(interactive, sb, cred_file):
    """Issue 17 §5: the listener serves every connection at once and keeps waiting
    until the redirect with this run's state comes. Idle connections used to be read
    one at a time for 5 s each (a dozen held the redirect past the code's 30 s), and
    one stray request ended the login. Here a dozen idle connections come first,
    then requests without the state, with another, without a query, with only
    `error=`, malformed, and the real redirect's code under a forged state: each
    gets a 400 (another path a 404) and nothing is exchanged; then the real redirect
    completes the login with its 30-second code."""
    t, port, state = oauth2_login_waiting(interactive, sb)
    idle = idle_connections(port, 12)
    try:
        came = consent(sb, state)
        query = urllib.parse.urlsplit(came).query
        forged = query.replace("state=" + urllib.parse.quote(state, safe=""), "state=forged-by-someone-else")
        assert forged != query and "code=" in forged, came
        strays = {
            "another state": (get("/callback?" + forged), 400),
            "a state cut short": (get("/callback?" + query.replace(state, state[:-1])), 400),
            "no state": (get("/callback?code=stolen"), 400),
            "no query": (get("/callback"), 400),
            "only an error": (get("/callback?error=access_denied"), 400),
            "an error with another state": (get("/callback?error=access_denied&state=x"), 400),
            "two states": (get("/callback?" + query + "&state=x"), 400),
            "malformed request line": (b"GARBAGE\r\n\r\n", 400),
            "another method": (b"POST /callback?" + query.encode() + b" HTTP/1.1\r\nContent-Length: 0\r\n\r\n", 400),
            "another path": (get("/favicon.ico"), 404),
        }
        wrong = {name: status for name, (request, expected) in strays.items()
                 if (status := raw_request(port, request)) != expected}
        assert not wrong, "stray requests not refused as expected: %r" % wrong
        assert t.p.poll() is None, ("a stray request ended the login", t.text())
        assert entries(sb, TOKEN_ENDPOINT) == [], "a stray request's code was exchanged"
        browse(came)
        t.finish()
    finally:
        for s in idle:
            s.close()
    assert t.returncode == 0, t
    check_clean(t, cred_file)
    check_stored_oauth2(sb, cred_file, t)
    [exchange] = entries(sb, TOKEN_ENDPOINT)
    assert exchange["status"] == 200, exchange
    assert not listening(port), "the listener is gone"


def test_oauth2_listener_bounds_connections_and_request_size(interactive, sb, cred_file):
    """Issue 17 §5: a flood of connections (more than the listener keeps open: the
    oldest are closed) and a request head over 16 KiB (refused with 431) do not keep
    the real redirect out."""
    t, port, state = oauth2_login_waiting(interactive, sb)
    idle = idle_connections(port, 100)
    try:
        huge = b"GET /callback?state=" + b"x" * (20 * 1024) + b" HTTP/1.1\r\n\r\n"
        assert raw_request(port, huge) == 431
        assert t.p.poll() is None, ("the huge request ended the login", t.text())
        browse(consent(sb, state))
        t.finish()
    finally:
        for s in idle:
            s.close()
    assert t.returncode == 0, t
    check_clean(t, cred_file)
    check_stored_oauth2(sb, cred_file, t)


# --------------------------------------------------------------------------------------
# 3. app
# --------------------------------------------------------------------------------------

def test_app_asks_for_the_key_and_secret_and_stores_the_bearer_token(interactive, sb, cred_file):
    t = interactive(["app", "--profile", "reader", "-v"])
    t.expect(KEY_QUESTION)
    t.answer(CONSUMER_KEY)
    t.expect(SECRET_QUESTION)
    t.answer_secret(CONSUMER_SECRET)
    t.finish()
    assert t.returncode == 0, t
    assert CONSUMER_SECRET not in t.text(), t
    check_clean(t, cred_file)
    tw = twitter_of(cred_file, "reader")
    assert tw == {"consumer_key": CONSUMER_KEY, "consumer_secret": CONSUMER_SECRET, "bearer_token": APP_BEARER}, tw
    assert t.lines() == [{"profile": "reader", "method": "app", "credentials": str(cred_file)}], t
    assert mode(cred_file) == 0o600 and mode(cred_file.parent) == 0o700
    [e] = [e for e in sb.log() if e["path"] == "/oauth2/token"]
    assert e["method"] == "POST" and e["status"] == 200, e
    assert e["body"]["grant_type"] == ["client_credentials"], e
    assert e["headers"]["authorization"].lower().startswith("basic "), e["headers"]


@pytest.mark.parametrize("signal_name", ["SIGINT", "SIGTERM"])
def test_a_signal_at_a_secret_question_gives_the_echo_back(bin_path, auth_env, cred_file, signal_name):
    """Killed while echo is off (Ctrl-C at the secret), the tool leaves a terminal that echoes.
    pty.fork gives the child its controlling terminal without Python code between fork and exec."""
    env = auth_env()
    pid, master = pty.fork()
    if pid == 0:
        os.execve(bin_path, [bin_path, "app"], env)
    try:
        screen = b""
        deadline = time.monotonic() + 10
        while b"consumer secret" not in screen and time.monotonic() < deadline:
            if select.select([master], [], [], 0.1)[0]:
                chunk = os.read(master, 4096)
                screen += chunk
                if b"consumer key" in chunk:
                    os.write(master, CONSUMER_KEY.encode() + b"\n")
        assert b"consumer secret" in screen, screen
        while termios.tcgetattr(master)[3] & termios.ECHO:
            assert time.monotonic() < deadline, ("a secret is asked for without echo", screen)
            time.sleep(0.005)
        os.kill(pid, getattr(signal, signal_name))
        _, status = os.waitpid(pid, 0)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == getattr(signal, signal_name), status
        assert termios.tcgetattr(master)[3] & termios.ECHO, "the terminal echoes again"
        assert not cred_file.exists() or "bearer_token" not in twitter_of(cred_file), "nothing stored"
    finally:
        os.close(master)


def test_app_takes_the_key_and_secret_from_the_environment(interactive, sb, cred_file):
    t = interactive(["app"], extra={"TW_CONSUMER_KEY": CONSUMER_KEY, "TW_CONSUMER_SECRET": CONSUMER_SECRET})
    t.finish()
    assert t.returncode == 0, t
    assert "consumer" not in t.text(), ("nothing asked", t)
    check_clean(t, cred_file)
    assert twitter_of(cred_file)["bearer_token"] == APP_BEARER
    assert t.lines() == [{"profile": "default", "method": "app", "credentials": str(cred_file)}], t


# --------------------------------------------------------------------------------------
# 4. status
# --------------------------------------------------------------------------------------

def iso_in(seconds):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + seconds))


OAUTH1_SECTION = {"consumer_key": CONSUMER_KEY, "consumer_secret": CONSUMER_SECRET,
                  "access_token": DEMO_ACCESS_TOKEN, "access_token_secret": DEMO_TOKEN_SECRET}


def oauth2_section(expires_in, access=REFRESHABLE, refresh=REFRESH):
    s = {"client_id": PUBLIC, "access_token": access, "expires_at": iso_in(expires_in), "scopes": REFRESH_TOKEN_SCOPES}
    if refresh:
        s["refresh_token"] = refresh
    return s


def status_lines(p):
    return [json.loads(l) for l in p.stdout.decode("utf-8").splitlines()]


def test_status_of_a_valid_profile_exits_0(detached, sb, home):
    path = credentials_path(home)
    write_private(path, {"default": "kestrel", "profiles": {"kestrel": {"twitter": OAUTH1_SECTION}}})
    p = detached(["status"])
    assert p.returncode == 0, p
    # `access` is X's x-access-level header (contract §7).
    assert status_lines(p) == [{"profile": "kestrel", "method": "oauth1", "valid": True, "account": DEMO_ACCOUNT,
                                "access": "read-write"}], p
    assert p.stderr == b"", p


def test_status_of_a_read_only_token_says_so_and_what_to_do(detached, sb, home):
    section = {"consumer_key": "sandbox-readonly-consumer-key", "consumer_secret": "sandbox-readonly-consumer-secret",
               "access_token": "1000000000000000001-sandboxreadonlytoken",
               "access_token_secret": "sandbox-readonly-token-secret"}
    write_private(credentials_path(home), {"default": "ro", "profiles": {"ro": {"twitter": section}}})
    p = detached(["status"])
    assert p.returncode == 0, p
    [line] = status_lines(p)
    assert line["valid"] is True and line["access"] == "read", line
    err = p.stderr.decode("utf-8")
    assert err.startswith("tw-auth: ") and "read-only" in err and "tw-auth pin --access write --profile ro" in err, p


def test_status_of_a_revoked_token_exits_1(detached, sb, home):
    path = credentials_path(home)
    write_private(path, {"default": "kestrel", "profiles": {"kestrel": {"twitter": OAUTH1_SECTION}}})
    sb.control(revoke_token=DEMO_ACCESS_TOKEN)
    p = detached(["status", "--profile", "kestrel"])
    assert p.returncode == 1, p
    [line] = status_lines(p)
    assert line["profile"] == "kestrel" and line["method"] == "oauth1" and line["valid"] is False, line
    assert "account" not in line and line["problem"], line
    # Issue 20: the problem ends with the command that fixes it.
    assert line["problem"] == "Unauthorized; authorize again with: tw-auth pin --profile kestrel", line


@pytest.mark.parametrize("case", ["past-expiry", "refused-401", "refresh-revoked"])
def test_status_of_an_expired_oauth2_token_exits_1(detached, sb, home, case):
    # An OAuth 2.0 token that cannot be used or renewed: past its expiry with no refresh
    # token; refused by X (401) with no refresh token; expiring, its refresh token revoked.
    # Either way a line that says valid: false (man/tw-auth.1: "A token X refuses gives
    # valid: false and the API's problem"), exit 1.
    section = {"past-expiry": oauth2_section(-3600, EXPIRED_OAUTH2, None),
               "refused-401": oauth2_section(3600, EXPIRED_OAUTH2, None),
               "refresh-revoked": oauth2_section(20)}[case]
    if case == "refresh-revoked":
        sb.control(revoke_token=REFRESH)
    path = credentials_path(home)
    write_private(path, {"default": "kestrel", "profiles": {"kestrel": {"twitter": {"oauth2": section}}}})
    before = path.read_bytes()
    p = detached(["status"])
    assert p.returncode == 1, p
    assert len(status_lines(p)) == 1, ("one JSON line per profile checked, valid or not", p)
    [line] = status_lines(p)
    assert line["profile"] == "kestrel" and line["method"] == "oauth2" and line["valid"] is False, line
    assert isinstance(line.get("problem"), str) and line["problem"], line
    assert path.read_bytes() == before


def test_status_refreshes_an_expiring_oauth2_token(detached, sb, home):
    path = credentials_path(home)
    write_private(path, {"default": "kestrel", "profiles": {"kestrel": {"twitter": {"oauth2": oauth2_section(20)}}}})
    p = detached(["status"])
    assert p.returncode == 0, p
    o2 = twitter_of(path, "kestrel")["oauth2"]
    assert o2["access_token"] != REFRESHABLE and o2["refresh_token"] != REFRESH, o2
    assert_no_secrets(p.stdout, p.stderr, secrets=(o2["access_token"], o2["refresh_token"]))
    [line] = status_lines(p)
    assert line == {"profile": "kestrel", "method": "oauth2", "valid": True, "account": DEMO_ACCOUNT,
                    "expires_at": o2["expires_at"], "scopes": REFRESH_TOKEN_SCOPES}, line
    assert len([e for e in entries(sb, REFRESH_ENDPOINT) if e["status"] == 200]) == 1


def test_status_all_checks_every_profile_and_one_invalid_fails_the_run(detached, sb, home):
    path = credentials_path(home)
    write_private(path, {"default": "good", "profiles": {
        "good": {"twitter": OAUTH1_SECTION},
        "stale": {"twitter": {"oauth2": oauth2_section(3600, EXPIRED_OAUTH2, None)}},
        "reader": {"twitter": {"bearer_token": APP_BEARER}},
        "pages": {"facebook": {"access_token": "sandbox-fb-page-token"}},    # no X: not checked
    }})
    p = detached(["status", "--all"])
    assert p.returncode == 1, p
    lines = status_lines(p)
    assert sorted(l["profile"] for l in lines) == ["good", "reader", "stale"], lines
    by = {l["profile"]: l for l in lines}
    assert by["good"] == {"profile": "good", "method": "oauth1", "valid": True, "account": DEMO_ACCOUNT,
                          "access": "read-write"}, by
    assert by["reader"]["method"] == "app" and by["reader"]["valid"] is True and "account" not in by["reader"], by
    assert by["stale"]["method"] == "oauth2" and by["stale"]["valid"] is False and by["stale"]["problem"], by
    # All valid: exit 0.
    doc = json.loads(path.read_text())
    del doc["profiles"]["stale"]
    write_private(path, doc)
    p = detached(["status", "--all"])
    assert p.returncode == 0, p
    assert sorted(l["profile"] for l in status_lines(p)) == ["good", "reader"], p


@pytest.mark.parametrize("section", [None, {}, {"consumer_key": CONSUMER_KEY}, {"consumer_key": CONSUMER_KEY,
                                                                             "consumer_secret": CONSUMER_SECRET}])
def test_status_of_a_profile_without_x_credentials_says_how_to_get_them(detached, sb, home, section):
    """No X token (no twitter object, an empty one, the app's key alone or with its secret, as a
    logout leaves it): nothing to check, exit 3, no line (tw-auth(1)), and the message names the
    command that creates them; no "method": "none", no "method": "app"."""
    path = credentials_path(home)
    profile = {"facebook": {"access_token": "sandbox-fb-page-token"}}
    if section is not None:
        profile["twitter"] = section
    write_private(path, {"default": "kestrel", "profiles": {"kestrel": profile, "good": {"twitter": OAUTH1_SECTION}}})
    for args in (["status"], ["status", "--profile", "kestrel"]):
        p = detached(args)
        assert p.returncode == 3 and p.stdout == b"", p
        assert p.stderr == ('tw-auth: profile "kestrel" has no X credentials in %s: get them with tw-auth pin '
                            '--profile kestrel (or tw-auth oauth2 --profile kestrel)\n' % path).encode(), p.stderr
    assert sb.log() == []
    p = detached(["status", "--all"])
    assert p.returncode == 0 and [l["profile"] for l in status_lines(p)] == ["good"], p


def test_a_refused_connection_names_the_api_base_in_use(detached, sb):
    """As the filters do (issue 20 item 3): the flows and checks of tw-auth name the API base
    they could not reach, and where it came from."""
    for args in (["app"], ["status"]):
        p = detached(args, {"TW_API_BASE": "http://127.0.0.1:1", "TW_CONSUMER_KEY": CONSUMER_KEY,
                            "TW_CONSUMER_SECRET": CONSUMER_SECRET, "TW_BEARER_TOKEN": "AAAA"})
        assert p.returncode == 1, p
        assert b"(API base http://127.0.0.1:1, from TW_API_BASE)" in p.stderr + p.stdout, (args, p)


def test_status_with_no_credentials_anywhere_names_its_page_once(detached, sb, home):
    """No file and no TW_* variables: exit 3, the commands that get credentials, and tw-auth(1)
    named once (it said "see tw-auth(1) and tw-auth(1)")."""
    p = detached(["status"])
    assert p.returncode == 3 and p.stdout == b"", p
    assert p.stderr.startswith(b"tw-auth: no X credentials: get them into a profile with tw-auth pin"), p.stderr
    assert p.stderr.endswith(b"; see tw-auth(1)\n"), p.stderr
    assert sb.log() == []


# --------------------------------------------------------------------------------------
# 5. logout
# --------------------------------------------------------------------------------------

def test_logout_revokes_and_removes_the_tokens_but_keeps_the_key(detached, sb, home):
    path = credentials_path(home)
    other = {"twitter": {"bearer_token": APP_BEARER}}
    section = dict(OAUTH1_SECTION, oauth2=oauth2_section(3600), extra_key="kept")
    write_private(path, {"default": "kestrel", "profiles": {"kestrel": {"twitter": section}, "other": other}})
    p = detached(["logout", "--profile", "kestrel"])
    assert p.returncode == 0, p
    [line] = status_lines(p)
    assert line["profile"] == "kestrel" and line["removed"] is True and line["credentials"] == str(path), line
    assert {"oauth2 refresh_token", "oauth1"} <= set(line["revoked"]), line
    doc = json.loads(path.read_text())
    assert doc["profiles"]["kestrel"]["twitter"] == {"consumer_key": CONSUMER_KEY, "consumer_secret": CONSUMER_SECRET,
                                                     "extra_key": "kept"}, doc
    assert doc["profiles"]["other"] == other, doc
    assert mode(path) == 0o600
    # Revoked in the sandbox: the OAuth 2.0 pair and the OAuth 1.0a token.
    assert me_bearer(sb, REFRESHABLE).status_code == 401
    assert refresh_with(sb, REFRESH).status_code == 400
    assert me_oauth1(sb, DEMO_ACCESS_TOKEN, DEMO_TOKEN_SECRET).status_code == 401
    revokes = entries(sb, "POST /2/oauth2/revoke")
    assert revokes and all(e["status"] == 200 for e in revokes), revokes


def test_logout_removes_a_profile_it_empties_so_status_all_keeps_working(detached, sb, home):
    """tw-auth(1)'s cron line after an OAuth 2.0 logout: the profile held only its token, so it
    goes from the file, with the `default` that named it; a profile that keeps a facebook
    section keeps it; `status --all` then checks what is left and passes."""
    path = credentials_path(home)
    write_private(path, {"default": "o2", "profiles": {
        "o2": {"twitter": {"oauth2": oauth2_section(3600)}},
        "both": {"twitter": {"bearer_token": APP_BEARER}, "facebook": {"access_token": "sandbox-fb-page-token"}},
        "good": {"twitter": OAUTH1_SECTION}}})
    p = detached(["logout", "--profile", "o2"])
    assert p.returncode == 0, p
    assert p.stderr == ('tw-auth: profile "o2" held nothing else: removed it from %s\n' % path).encode(), p.stderr
    p = detached(["logout", "--profile", "both"])
    assert p.returncode == 0 and p.stderr == b"", p
    doc = json.loads(path.read_text())
    assert doc == {"profiles": {"both": {"facebook": {"access_token": "sandbox-fb-page-token"}},
                                "good": {"twitter": OAUTH1_SECTION}}}, doc
    assert mode(path) == 0o600
    p = detached(["status", "--all"])
    assert p.returncode == 0 and [l["profile"] for l in status_lines(p)] == ["good"], p


def test_logout_of_an_unknown_profile_is_a_configuration_error(detached, sb, home):
    path = credentials_path(home)
    write_private(path, {"profiles": {"kestrel": {"twitter": OAUTH1_SECTION}}})
    before = path.read_bytes()
    p = detached(["logout", "--profile", "nosuch"])
    assert p.returncode == 3, p
    assert p.stdout == b"" and p.stderr == b'tw-auth: no profile "nosuch" in %s (its profiles: kestrel)\n' % bytes(path), p
    assert path.read_bytes() == before
    assert sb.log() == []


@pytest.mark.parametrize("args", [["status", "--access", "read"], ["app", "--scopes", "tweet.read"],
                                  ["pin", "--no-browser"], ["logout", "--all"], ["oauth2", "--all"]])
def test_an_option_of_another_command_is_a_usage_error(detached, args):
    p = detached(args)
    assert p.returncode == 2, p
    assert b"only for" in p.stderr, p.stderr


def test_oauth2_without_a_terminal_still_shows_the_page(bin_path, auth_env, cred_file):
    """The page to open goes to stderr even when no terminal could answer questions."""
    port = closed_port()
    p = subprocess.Popen([bin_path, "oauth2", "--client-id", PUBLIC, "--redirect-uri",
                          "http://127.0.0.1:%d/callback" % port], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=auth_env(), start_new_session=True)
    try:
        line = b""
        deadline = time.monotonic() + 10
        while b"/i/oauth2/authorize?" not in line and time.monotonic() < deadline:
            if select.select([p.stderr], [], [], 0.2)[0]:
                line += os.read(p.stderr.fileno(), 4096)
        assert b"/i/oauth2/authorize?" in line, line
    finally:
        p.kill()
        p.wait()
        p.stdout.close()
        p.stderr.close()


# --------------------------------------------------------------------------------------
# A lifetime that is no date (issue 17, item 1)
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("lifetime", ["0", "-1", "1e300", "9223372036854775808", '"text"'])
def test_oauth2_token_whose_lifetime_is_no_date_is_stored_without_expiry(interactive, sb, cred_file, lifetime):
    """expires_in 1e300 crashed tw-auth after the code was spent; 2^63, which jansson
    cannot hold, lost the token. It is stored, with no expiry (used until X refuses it,
    then refreshed)."""
    sb.fault("patch", match={"method": "POST", "path": "/2/oauth2/token"}, members={"expires_in": lifetime})
    t = interactive(["oauth2", "--no-browser", "--client-id", PUBLIC])
    t.expect(CLIENT_SECRET_QUESTION)
    t.answer_secret("")
    state = read_oauth2_page(t, sb)
    t.expect(PASTE_QUESTION)
    t.answer(consent(sb, state))
    t.finish()
    assert t.returncode == 0, t
    o2 = twitter_of(cred_file)["oauth2"]
    assert "expires_at" not in o2 and me_bearer(sb, o2["access_token"]).status_code == 200, o2
    [line] = t.lines()
    assert line["expires_at"] is None, line
