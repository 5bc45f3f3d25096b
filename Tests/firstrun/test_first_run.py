"""The first run, fixed (issue 11, "The first run, fixed"): what a newcomer meets
before anything works, end to end against the sandbox.

  1. a failed run says why on stderr, in one summary line, when stdout is not a
     terminal (a Makefile shows it); not on a terminal, not when nothing failed,
     not where failures are on stderr already (oauth-sign's header format);
     fb-perm-check -q still says when a record failed, not when a permission is
     only not granted
  2. -v shows the API's error message beside the status, escaped and cut
  3. the progress line never shares a line with a -v line
  4. --timeout takes fractions of a second; 0, negatives, nan, inf are usage errors
  5. a line that is not JSON suggests -R, where a tool has a primary field
  6. `make` and `make install` need only the build packages; `make install`
     builds nothing, and says so when the tools are not built
  7. a filter left waiting on a terminal that types nothing says once how
     records are given and that Ctrl-D ends them; -q keeps it quiet
"""
import os
import pathlib
import pty
import re
import shutil
import subprocess
import time

import pytest

from toolenv import (FB_PAGE_TOKEN, FB_USER_TOKEN, assert_usage_error, clean_env, fb_credentials, jl,
                     read_line, run_tool, x_credentials)

ROOT = pathlib.Path(__file__).resolve().parents[2]
X_TOOLS = ("tw-post", "tw-friends")
# Tools, with the Facebook token they run with (None: X credentials) and a record that succeeds.
GOOD_RECORD = {
    "oauth-sign": (None, {"method": "GET", "url": "https://api.x.com/2/users/me"}),
    "tw-post": (None, "a post that goes through"),
    "tw-friends": (None, {"username": "follows_1001", "max": 1}),
    "fb-feed": (FB_PAGE_TOKEN, "a Page post that goes through"),
    "fb-perm-check": (FB_USER_TOKEN, "pages_show_list"),
}
TOOLS = tuple(GOOD_RECORD)
# Tools with a primary field, and a plain text line that is one (and no JSON).
PLAIN_LINES = {"tw-post": b"just some words", "tw-friends": b"jack", "fb-feed": b"just some words",
               "fb-perm-check": b"email"}


@pytest.fixture
def env_for(home, sb):
    """env_for(tool, fb_token=None, extra=None): the scrubbed environment with the
    sandbox's X credentials (or, given a token, Facebook ones) and API bases."""
    def _env(tool, fb_token=None, extra=None):
        if fb_token is None and tool.startswith("fb-"):
            fb_token = GOOD_RECORD[tool][0]
        e = dict(x_credentials(), TW_API_BASE=sb.url) if fb_token is None \
            else dict(fb_credentials(fb_token), FB_API_BASE=sb.url)
        e.update(extra or {})
        return clean_env(home, e)
    return _env


@pytest.fixture
def go(tool, env_for):
    """go(name, args, stdin, fb_token=None, timeout=30) -> toolenv.Run."""
    def _go(name, args=(), stdin=b"", fb_token=None, timeout=30):
        return run_tool(tool(name), env_for(name, fb_token), args, stdin, timeout)
    return _go


def stderr_lines(r):
    return r.stderr.decode("utf-8").splitlines()


def summary_lines(r, name):
    # An X tool's line ends with what the run cost (contract §7).
    return [l for l in stderr_lines(r)
            if re.fullmatch(re.escape(name) + r": \d+ of \d+ failed \(.*\)(; estimated cost \$\d+\.\d{3})?", l)]


# --------------------------------------------------------------------------------------
# 1. the summary line
# --------------------------------------------------------------------------------------

def test_summary_names_the_failures_by_kind(go):
    r = go("tw-post", (), jl("a first post", "a first post", {"text": "elsewhere", "profile": "nosuch"},
                             "another post", "a last post"))
    assert r.returncode == 1, r
    kinds = [e["error"]["kind"] for e in r.envelopes if not e["ok"]]
    assert kinds == ["duplicate", "auth"], r
    # Counts alike: by name. The three posts made cost $0.015 each (contract §7).
    assert stderr_lines(r)[-1] == "tw-post: 2 of 5 failed (auth 1, duplicate 1); estimated cost $0.045", r
    assert len(summary_lines(r, "tw-post")) == 1, r


def test_summary_puts_the_largest_count_first(go):
    # No request is needed for any of these: a profile that is not there, three
    # lines that are not records, an empty post; a blank line is no record.
    stdin = jl({"text": "one", "profile": "nosuch"}, b"not json", b"[1, 2]", {"text": ""},
               b"", {"text": "two", "profile": "nosuch"}, b"{", "fine")
    r = go("tw-post", ("--dry-run",), stdin)
    assert r.returncode == 1, r
    assert len(r.envelopes) == 7, r
    # The dry run's one post would cost $0.015 (contract §7).
    assert stderr_lines(r)[-1] == "tw-post: 6 of 7 failed (input 3, auth 2, validation 1); estimated cost $0.015", r


def test_no_summary_when_nothing_failed(go):
    r = go("tw-post", (), jl("all", "is", "well"))
    assert r.returncode == 0, r
    assert r.stderr == b"", r


@pytest.mark.parametrize("name", TOOLS)
def test_every_tool_sums_up_its_failures(go, name):
    token, good = GOOD_RECORD[name]
    r = go(name, (), jl(good) + b"not json\n")
    assert [e["ok"] for e in r.envelopes][-1] is False, r
    # The X tools' requests are priced (contract §7): a post, a lookup and one account.
    cost = {"tw-post": "; estimated cost $0.015", "tw-friends": "; estimated cost $0.020"}.get(name, "")
    assert stderr_lines(r)[-1] == "%s: 1 of 2 failed (input 1)%s" % (name, cost), r
    assert r.returncode == 1, r


@pytest.mark.parametrize("form", ["header", "curl"])
def test_no_summary_when_failures_are_on_stderr_already(tool, env_for, form):
    # oauth-sign's header and curl formats write each failure to stderr.
    good = GOOD_RECORD["oauth-sign"][1]
    p = subprocess.run([tool("oauth-sign"), "--format", form], input=jl(good) + b"not json\n",
                       capture_output=True, env=env_for("oauth-sign"), timeout=30)
    assert p.returncode == 1, p
    [line] = p.stderr.decode("utf-8").splitlines()
    assert line.startswith("oauth-sign: line 2: input: "), p


def run_on_a_terminal(argv, env, stdin):
    """Runs argv with stdout on a pseudo-terminal, stdin and stderr piped.
    Returns (exit status, what the terminal got, stderr)."""
    master, slave = pty.openpty()
    try:
        p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=slave, stderr=subprocess.PIPE, env=env)
        os.close(slave)
        slave = None
        p.stdin.write(stdin)
        p.stdin.close()
        screen = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:                      # EIO: every writer has closed the terminal
                break
            if not chunk:
                break
            screen += chunk
        err = p.stderr.read()
        return p.wait(timeout=30), screen, err
    finally:
        if slave is not None:
            os.close(slave)
        os.close(master)


INPUT_REMINDER = b"reading records from standard input, one JSON object per line; Ctrl-D ends the input\n"


def test_a_filter_idle_on_a_terminal_says_once_how_input_is_given(tool, env_for):
    # Every filter at once, each with stdin on a terminal of its own that types
    # nothing: each says once where records come from; the -q ones stay quiet.
    # Ctrl-D then ends each run with no record and nothing more said.
    runs = [(name, ()) for name in TOOLS] + [("tw-post", ("-q",)), ("fb-perm-check", ("-q",))]
    started = []
    try:
        for name, args in runs:
            master, slave = pty.openpty()
            p = subprocess.Popen([tool(name), *args], stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 env=env_for(name))
            os.close(slave)
            started.append((name, args, master, p))
        told = {}
        give_up = time.monotonic() + 30
        for name, args, master, p in started:
            if not args:
                told[name] = read_line(p.stderr.fileno(), timeout=max(0, give_up - time.monotonic())) or b""
        for name, args, master, p in started:
            os.write(master, b"\x04")              # Ctrl-D: the end of input on a terminal
            out, err = p.communicate(timeout=30)
            if args:
                assert (p.returncode, out, err) == (0, b"", b""), (name, args, p.returncode, out, err)
            else:
                assert (p.returncode, out, told[name] + err) == (0, b"", name.encode() + b": " + INPUT_REMINDER), (
                    name, p.returncode, out, told[name] + err)
    finally:
        for _, _, master, p in started:
            if p.poll() is None:
                p.kill()
                p.wait()
            os.close(master)


def test_no_summary_when_stdout_is_a_terminal(tool, env_for):
    rc, screen, err = run_on_a_terminal([tool("tw-post")], env_for("tw-post"), jl("shown", "shown"))
    assert rc == 1
    assert b'"kind":"duplicate"' in screen, screen
    assert err == b"", ("the envelopes on the terminal say it already", err)


def test_quiet_permission_check_says_only_when_a_record_failed(go):
    # -q: the exit status is the answer. A permission not granted is that answer...
    r = go("fb-perm-check", ("-q",), jl("pages_show_list", "email"))
    assert r.returncode == 1 and r.stdout == b"", r
    assert r.stderr == b"", r
    # ...but a record that failed is not: stdout is gone, so stderr says why.
    r = go("fb-perm-check", ("-q",), jl("pages_show_list", {"permission": "email", "profile": "nosuch"}))
    assert r.returncode == 1 and r.stdout == b"", r
    assert stderr_lines(r) == ["fb-perm-check: 1 of 2 failed (auth 1)"], r


# --------------------------------------------------------------------------------------
# 2. -v: the API's message beside the status
# --------------------------------------------------------------------------------------

RESPONSE_LINE = re.compile(r"(?P<tool>[a-z-]+): (?P<status>\d{3}) (?P<method>[A-Z]+) (?P<url>\S+) \((?P<ms>\d+) ms\)(?P<rest>.*)")


def response_lines(r):
    return [m for m in map(RESPONSE_LINE.fullmatch, stderr_lines(r)) if m]


def test_verbose_shows_the_graph_error_message(go):
    r = go("fb-feed", ("-v",), jl("said twice", "said twice"))
    assert r.returncode == 1, r
    ok, duplicate = response_lines(r)               # one line per response, no more
    assert ok["status"] == "200" and "(#" not in ok["rest"], r
    assert duplicate["status"] == "400", r
    assert duplicate["rest"].endswith(" (#506) Duplicate status message"), r


def test_verbose_shows_the_x_error_message(go):
    r = go("tw-post", ("-v",), jl("twice over", "twice over"))
    assert r.returncode == 1, r
    ok, duplicate = response_lines(r)
    assert ok["status"] == "201" and ok["rest"] == "", r
    message = r.envelopes[1]["error"]["message"]
    assert duplicate["status"] == "403" and duplicate["rest"] == " " + message, r


def test_verbose_message_is_escaped_and_cut(go, sb):
    message = "Bad\nthing\x1b[31m happened " + "x" * 2000
    sb.fault("error", match={"method": "POST", "path_regex": "/feed$"}, code=100, message=message)
    r = go("fb-feed", ("-v",), jl("escaped"))
    assert r.returncode == 1, r
    assert r.envelopes[0]["error"]["message"].startswith("Bad\nthing"), r
    assert b"\x1b" not in r.stderr, r
    [line] = response_lines(r)
    assert line["status"] == "400", r
    assert " Bad\\nthing\\u{1b}[31m happened xxx" in line["rest"], r
    assert line["rest"].endswith("…") and len(line["rest"]) < 300, r


def test_verbose_adds_nothing_when_the_api_gave_no_message(go, sb):
    sb.fault("status", match={"method": "GET"}, status=404, body="not json")
    r = go("tw-friends", ("-v", "--retries", "0"), jl("jack"))
    assert r.returncode == 1, r
    [line] = response_lines(r)
    assert line["status"] == "404" and line["rest"] == "", r


# --------------------------------------------------------------------------------------
# 3. the progress line and -v
# --------------------------------------------------------------------------------------

def screen_lines(data):
    """The lines a terminal would show for `data`: \\r returns to the line's
    start, ESC [ K erases to its end, other characters overwrite."""
    lines, line, col = [], [], 0
    i = 0
    while i < len(data):
        if data.startswith("\x1b[K", i):
            del line[col:]
            i += 3
            continue
        c = data[i]
        i += 1
        if c == "\n":
            lines.append("".join(line))
            line, col = [], 0
        elif c == "\r":
            col = 0
        else:
            if col < len(line):
                line[col] = c
            else:
                line.append(c)
            col += 1
    if line:
        lines.append("".join(line))
    return lines


def test_progress_line_never_shares_a_line_with_verbose_lines(go, sb):
    sb.control(latency_ms=400)
    r = go("tw-post", ("-v", "--progress", "-j", "2"), jl("slow one", "slow two", "slow three"))
    assert r.returncode == 0, r
    text = r.stderr.decode("utf-8")
    assert "in flight" in text, ("the progress line was drawn", r)
    shown = screen_lines(text)
    verbose = [l for l in shown if "/2/tweets" in l]
    assert len(verbose) == 6, shown
    for l in verbose:
        assert re.fullmatch(r"tw-post: (\d{3} )?POST \S+/2/tweets( \(\d+ ms\))?", l), shown
    assert all(l == "" or l in verbose for l in shown), shown


# --------------------------------------------------------------------------------------
# 4. --timeout in fractions of a second
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("form", [["--timeout", "0.5"], ["--timeout=0.5"]], ids=["separate", "joined"])
def test_timeout_takes_fractions(go, sb, form):
    sb.control(latency_ms=3000)
    r = go("tw-friends", form + ["--retries", "0"], jl("jack"))
    assert r.returncode == 1, r
    [e] = r.envelopes
    assert e["error"]["kind"] == "network", r
    assert re.search(r"time", e["error"]["message"], re.I), r
    assert 0.4 < r.elapsed < 2.5, ("half a second, not one or three", r)


def test_fractional_timeout_long_enough_lets_requests_through(go, sb):
    sb.control(latency_ms=300)
    r = go("tw-post", ["--timeout=2.25"], jl("in time"))
    assert r.returncode == 0, r


@pytest.mark.parametrize("value", ["0", "0.0", "-1", "-0.5", "abc", "nan", "inf", "1e3", "0x10", "", ".", "0.0001"])
def test_timeout_refuses_what_is_not_a_positive_number(go, value):
    r = go("tw-post", ["--timeout", value], jl("never sent"))
    assert_usage_error(r, "tw-post")
    assert b"--timeout" in r.stderr, r


# --------------------------------------------------------------------------------------
# 5. a plain text line suggests -R
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(PLAIN_LINES))
def test_plain_text_line_suggests_raw_input(go, name):
    r = go(name, ["--dry-run"], PLAIN_LINES[name] + b"\n")
    [e] = r.envelopes
    assert e["error"]["kind"] == "input", r
    assert e["error"]["message"].startswith("invalid JSON"), r
    assert e["error"]["message"].endswith("; for plain text lines use -R"), r
    r = go(name, ["--dry-run", "-R"], PLAIN_LINES[name] + b"\n")
    assert r.envelopes[0]["ok"] is True, r


@pytest.mark.parametrize("name", ["tw-post", "tw-friends"])
def test_no_x_credentials_says_how_to_get_them(tool, home, name):
    """A newcomer without credentials is told the command that gets them."""
    r = run_tool(tool(name), clean_env(home), [], b'"hello"\n')
    assert r.returncode == 3, r
    assert "tw-auth pin" in r.stderr.decode(), r


def test_oauth_sign_has_no_raw_input_to_suggest(go):
    r = go("oauth-sign", (), b"just some words\n")
    [e] = r.envelopes
    assert e["error"]["kind"] == "input" and e["error"]["message"].startswith("invalid JSON"), r
    assert "-R" not in e["error"]["message"], r


# --------------------------------------------------------------------------------------
# 6. make and make install
# --------------------------------------------------------------------------------------

BUILD_PACKAGES = {"pkg-config", "libcurl4-openssl-dev", "libssl-dev", "libjansson-dev"}
TEST_PACKAGES = {"curl", "jq", "valgrind", "mandoc", "shellcheck", "bash-completion", "zsh", "fish",
                 "liboauth-dev", "hyperfine", "time", "strace", "parallel"}


def make_tools():
    """The Makefile's TOOLS: what `make install` installs."""
    m = re.search(r"(?m)^TOOLS\s*=\s*(.*)$", (ROOT / "Makefile").read_text(encoding="utf-8"))
    assert m, "no TOOLS = line in the Makefile"
    return m.group(1).split()


def make(*args, check=False):
    if not shutil.which("make"):
        pytest.skip("make is not installed")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE")}
    p = subprocess.run(["make", "--no-print-directory", "-C", str(ROOT), *args], capture_output=True, text=True,
                       env=env, timeout=120)
    if check:
        assert p.returncode == 0, p
    return p


def packages_checked(output):
    """The Debian packages a dry run of make would check for."""
    found = set()
    for group in re.findall(r"for p in ([^;]*);", output):
        found |= set(group.split())
    return found


def test_make_needs_only_the_build_packages():
    for target in ("build", "all"):
        checked = packages_checked(make("-n", target, check=True).stdout)
        assert checked == BUILD_PACKAGES, (target, checked)


@pytest.mark.parametrize("target", ["test", "demo", "bench"])
def test_make_test_demo_bench_install_the_test_packages(target):
    checked = packages_checked(make("-n", target, check=True).stdout)
    assert checked == BUILD_PACKAGES | TEST_PACKAGES, (target, checked)


def test_make_install_installs_what_is_built_and_builds_nothing(tmp_path):
    built = tmp_path / "release"
    built.mkdir()
    tools = make_tools()
    for name in tools:
        (built / name).write_text("#!/bin/sh\necho %s\n" % name)
        (built / name).chmod(0o755)
    stage = tmp_path / "stage"
    dry = make("-n", "install", "RELEASE=" + str(built), "DESTDIR=" + str(stage), "PREFIX=/usr", check=True)
    assert "swift" not in dry.stdout and "dpkg-query" not in dry.stdout and "apt-get" not in dry.stdout, dry.stdout
    # SWIFT=false: any build step would fail the install.
    make("install", "RELEASE=" + str(built), "DESTDIR=" + str(stage), "PREFIX=/usr", "SWIFT=false", check=True)
    for name in tools:
        assert (stage / "usr" / "bin" / name).read_text() == "#!/bin/sh\necho %s\n" % name
    assert (stage / "usr" / "share" / "man" / "man1" / "tw-post.1").is_file()


def test_make_install_without_a_build_says_to_build_first(tmp_path):
    empty = tmp_path / "release"
    empty.mkdir()
    stage = tmp_path / "stage"
    p = make("install", "RELEASE=" + str(empty), "DESTDIR=" + str(stage), "PREFIX=/usr", "SWIFT=false")
    assert p.returncode != 0, p
    assert re.search(r"not built: run 'make' first", p.stderr), p.stderr
    assert not (stage / "usr" / "bin").exists(), "nothing is installed"


def test_ci_records_a_failing_step_and_ends_with_its_summary(tmp_path):
    """.ci/run with a `make` whose fuzz step fails: the run stops there, exits non-zero, and its
    summary gives that step's status (a failing step once left no status, and the summary
    broke with "Illegal number")."""
    (tmp_path / ".ci").mkdir()
    shutil.copy(ROOT / ".ci" / "run", tmp_path / ".ci" / "run")
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "make").write_text('#!/bin/sh\necho "make $1"\n[ "$1" = test ] && echo "3 passed in 0.01s"\n'
                               '[ "$1" = fuzz ] && exit 3\nexit 0\n')
    (fake / "make").chmod(0o755)
    env = dict(os.environ, PATH="%s:%s" % (fake, os.environ["PATH"]))
    p = subprocess.run(["sh", str(tmp_path / ".ci" / "run")], capture_output=True, text=True, env=env, timeout=60)
    assert p.returncode != 0, p
    assert "Illegal number" not in p.stderr and "No such file" not in p.stderr, p.stderr
    summary = p.stdout[p.stdout.index("==> summary"):]
    assert re.search(r"^test \(\d+ s, status 0\):\n  3 passed in 0.01s$", summary, re.M), summary
    assert re.search(r"^fuzz \(\d+ s, status 3\):", summary, re.M), summary
    assert "make sanitize" not in p.stdout, p.stdout
