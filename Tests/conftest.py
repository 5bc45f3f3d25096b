"""Shared fixtures: where the built tools are, a scrubbed environment, the sandbox,
a run of the test module's TOOL against it; and sandbox/ and Tests/ on sys.path
(for harness and toolenv)."""
import os
import pathlib
import subprocess
import sys
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "sandbox"))
sys.path.insert(0, str(ROOT / "Tests"))

import harness  # noqa: E402  (found through the path above)
import toolenv  # noqa: E402


def tool_path(name):
    """Absolute path of a built command (SOCIALPIPE_BIN, else .build/release)."""
    base = os.environ.get("SOCIALPIPE_BIN") or str(ROOT / ".build" / "release")
    return os.path.join(base, name)


@pytest.fixture
def tool():
    return tool_path


@pytest.fixture
def home(tmp_path):
    """An empty home directory, so the user's own credentials never matter."""
    h = tmp_path / "home"
    (h / ".config").mkdir(parents=True)
    return h


@pytest.fixture
def bin_path(request, tool):
    """The built command named by the test module's TOOL."""
    p = tool(request.module.TOOL)
    assert os.access(p, os.X_OK), f"{p} is not built (run `make build` or set SOCIALPIPE_BIN)"
    return p


@pytest.fixture
def scrubbed_env(home):
    """scrubbed_env(extra=None) -> toolenv.clean_env(home, extra)."""
    return lambda extra=None: toolenv.clean_env(home, extra)


@pytest.fixture(scope="module")
def sandbox_proc():
    """The local API sandbox (sandbox/), started once per test module."""
    with harness.Sandbox.start() as sb:
        yield sb


@pytest.fixture
def sb(sandbox_proc):
    """The module's sandbox, reset to its starting state for this test."""
    sandbox_proc.clear()
    yield sandbox_proc


@pytest.fixture
def make_env(home, sb):
    """make_env(credentials=None, api_base=True, extra=None): the scrubbed
    environment with X credentials (default: the sandbox's demo ones) and
    TW_API_BASE pointing at the sandbox."""
    def _env(credentials=None, api_base=True, extra=None):
        e = dict(toolenv.x_credentials() if credentials is None else credentials)
        if api_base:
            e["TW_API_BASE"] = sb.url
        e.update(extra or {})
        return toolenv.clean_env(home, e)
    return _env


@pytest.fixture
def run(request, bin_path, make_env):
    """run(args, stdin, credentials=None, api_base=True, extra=None, timeout=30) -> toolenv.Run
    of the module's TOOL, after checking that no secret reached stdout or stderr."""
    def _run(args=(), stdin=b"", credentials=None, api_base=True, extra=None, timeout=30):
        env = make_env(credentials, api_base, extra)
        t0 = time.monotonic()
        try:
            proc = subprocess.run([bin_path, *args], input=stdin, capture_output=True, env=env, timeout=timeout)
        except subprocess.TimeoutExpired as e:
            pytest.fail("%s %r did not finish within %s s; stdout so far %r, stderr %r"
                        % (request.module.TOOL, list(args), timeout, (e.stdout or b"")[:1000],
                           (e.stderr or b"")[:1000]))
        r = toolenv.Run(proc, time.monotonic() - t0)
        toolenv.assert_no_secrets(r.stdout, r.stderr)
        return r
    return _run
