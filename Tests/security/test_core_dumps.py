"""No core file behind a crash (issue 17 §5, contract §4: secrets never reach a
file the user did not ask for).

With `ulimit -c unlimited`, a tool that crashed left `./core`, a copy of its
memory with the consumer and token secrets in it. Every tool turns core dumps
off as it starts (prctl PR_SET_DUMPABLE 0). Each test starts one tool in an
empty working directory with RLIMIT_CORE unlimited, waits until it is past its
start (a filter has answered a first, unparsable line and waits for the next
on stdin; tw-auth and fb-auth show a question on their terminal and wait for
the answer), kills it with a signal whose default action dumps core, and finds
the directory still empty.

Where the kernel's core_pattern pipes cores to a program or writes them
elsewhere than the working directory, there is nothing to look at: skipped. A
control process (sleep) killed the same way must leave a core, or the test is
skipped as well, so a pass means the tool really declined to dump.
"""
import fcntl
import os
import pathlib
import pty
import resource
import select
import signal
import subprocess
import termios
import time

import pytest

from toolenv import X_DEMO_CREDENTIALS, clean_env

FB_ENV = {"FB_ACCESS_TOKEN": "core-test-fb-token", "FB_APP_SECRET": "core-test-app-secret", "FB_APP_ID": "100000000000001"}

# How each tool is started so that it waits: a filter on its stdin (after it has
# answered one bad line), tw-auth and fb-auth at a question on their terminal.
FILTERS = {
    "oauth-sign": X_DEMO_CREDENTIALS,
    "tw-post": X_DEMO_CREDENTIALS,
    "tw-friends": X_DEMO_CREDENTIALS,
    "fb-feed": FB_ENV,
    "fb-perm-check": FB_ENV,
}
ASKERS = {
    "tw-auth": (["oauth2", "--no-browser", "--client-id", "core-test-client"],
                {"TW_CLIENT_SECRET": "core-test-client-secret"}, b"Paste the address"),
    "fb-auth": (["exchange"], {"FB_APP_ID": "100000000000001", "FB_APP_SECRET": "core-test-app-secret"},
                b"Short-lived user token"),
}
SIGNALS = ["SIGABRT", "SIGSEGV"]


def core_pattern():
    try:
        return pathlib.Path("/proc/sys/kernel/core_pattern").read_text().strip()
    except OSError:
        return None


@pytest.fixture(scope="module", autouse=True)
def cores_land_in_the_working_directory(tmp_path_factory):
    """Skips the module unless a core would be a plain file in the working directory,
    and a process that does not refuse to dump really leaves one there."""
    pattern = core_pattern()
    if pattern is None:
        pytest.skip("no /proc/sys/kernel/core_pattern to read")
    if pattern.startswith("|") or "/" in pattern:
        pytest.skip("core_pattern %r does not write a file in the working directory" % pattern)
    if resource.getrlimit(resource.RLIMIT_CORE)[1] == 0:
        pytest.skip("the hard RLIMIT_CORE is 0: no process here can dump core")
    cwd = tmp_path_factory.mktemp("control")
    p = subprocess.Popen(["sleep", "60"], cwd=cwd, preexec_fn=unlimited_cores)
    time.sleep(0.2)
    p.send_signal(signal.SIGABRT)
    p.wait(10)
    if not any(cwd.iterdir()):
        pytest.skip("a process killed with SIGABRT leaves no core here (pattern %r)" % pattern)


def unlimited_cores():
    """In the child: RLIMIT_CORE as high as it goes (`ulimit -c unlimited`)."""
    hard = resource.getrlimit(resource.RLIMIT_CORE)[1]
    resource.setrlimit(resource.RLIMIT_CORE, (hard, hard))


def killed(p, signal_name):
    p.send_signal(getattr(signal, signal_name))
    try:
        return p.wait(10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        pytest.fail("the tool outlived %s" % signal_name)


@pytest.mark.parametrize("signal_name", SIGNALS)
@pytest.mark.parametrize("name", sorted(FILTERS))
def test_a_filter_killed_while_it_waits_leaves_no_core(tool, home, tmp_path, name, signal_name):
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    p = subprocess.Popen([tool(name)], cwd=cwd, env=clean_env(home, FILTERS[name]), stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, preexec_fn=unlimited_cores)
    try:
        p.stdin.write(b"not json\n")
        p.stdin.flush()
        ready, _, _ = select.select([p.stdout], [], [], 20)
        assert ready, "%s did not answer a line within 20 s" % name
        first = p.stdout.readline()
        assert first.startswith(b'{"ok":false,"line":1,'), first      # started, and waits for the next line
        status = killed(p, signal_name)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        p.stdin.close()
        p.stdout.close()
    assert status == -getattr(signal, signal_name), status
    assert sorted(os.listdir(cwd)) == [], "%s left a core file behind" % name


@pytest.mark.parametrize("signal_name", SIGNALS)
@pytest.mark.parametrize("name", sorted(ASKERS))
def test_an_interactive_tool_killed_at_a_question_leaves_no_core(tool, home, tmp_path, name, signal_name):
    args, extra, question = ASKERS[name]
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    master, slave = pty.openpty()

    def child():                        # a session of its own, with the pseudo-terminal as /dev/tty
        unlimited_cores()
        fcntl.ioctl(slave, termios.TIOCSCTTY, 0)

    try:
        p = subprocess.Popen([tool(name), *args], cwd=cwd, env=clean_env(home, extra), stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=slave, start_new_session=True, preexec_fn=child)
    finally:
        os.close(slave)
    try:
        screen, deadline = b"", time.monotonic() + 20
        while question not in screen:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([master], [], [], max(left, 0))
            assert ready, "%s did not ask %r; the terminal showed %r" % (name, question, screen)
            try:
                screen += os.read(master, 4096)
            except OSError:
                pytest.fail("%s ended before asking %r: %r" % (name, question, screen))
        status = killed(p, signal_name)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        os.close(master)
    assert status == -getattr(signal, signal_name), status
    assert sorted(os.listdir(cwd)) == [], "%s left a core file behind" % name
