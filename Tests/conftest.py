"""Shared fixtures: where the built tools are, a scrubbed environment, the sandbox,
a run of the test module's TOOL against it (with X credentials: `run`; with
Facebook ones: `fb_env`, `fb_run`); and sandbox/ and Tests/ on sys.path (for
harness and toolenv).

Module attributes the fixtures read: TOOL (the command), FB_TOKEN (the
Facebook token `fb_env` and `fb_run` use unless told otherwise; default the demo
user's), EXTRA_SECRETS (strings besides toolenv.SANDBOX_SECRETS that no run may
print, e.g. made-up secrets the module's records carry)."""
import os
import pathlib
import sys

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


def _secrets(request):
    """What no run of the test module may print."""
    return toolenv.SANDBOX_SECRETS + tuple(getattr(request.module, "EXTRA_SECRETS", ()))


@pytest.fixture
def run(request, bin_path, make_env):
    """run(args, stdin, credentials=None, api_base=True, extra=None, timeout=30) -> toolenv.Run
    of the module's TOOL, after checking that no secret reached stdout or stderr."""
    def _run(args=(), stdin=b"", credentials=None, api_base=True, extra=None, timeout=30):
        return toolenv.run_tool(bin_path, make_env(credentials, api_base, extra), args, stdin, timeout,
                                secrets=_secrets(request))
    return _run


@pytest.fixture
def fb_env(request, home, sb):
    """fb_env(token=FB_TOKEN, secret=None, app_id=None, api_base=True, extra=None): the
    scrubbed environment with Facebook credentials (toolenv.fb_credentials; token None:
    no token) and FB_API_BASE pointing at the sandbox."""
    default_token = getattr(request.module, "FB_TOKEN", toolenv.FB_USER_TOKEN)

    def _env(token=default_token, secret=None, app_id=None, api_base=True, extra=None):
        e = toolenv.fb_credentials(token, secret, app_id)
        if api_base:
            e["FB_API_BASE"] = sb.url
        e.update(extra or {})
        return toolenv.clean_env(home, e)
    return _env


@pytest.fixture
def fb_run(request, bin_path, fb_env):
    """fb_run(args, stdin, token=FB_TOKEN, secret=None, app_id=None, api_base=True, extra=None,
    timeout=30) -> toolenv.Run of the module's TOOL with Facebook credentials (fb_env), after
    checking that no token or secret reached stdout or stderr."""
    default_token = getattr(request.module, "FB_TOKEN", toolenv.FB_USER_TOKEN)

    def _run(args=(), stdin=b"", token=default_token, secret=None, app_id=None, api_base=True, extra=None,
             timeout=30):
        return toolenv.run_tool(bin_path, fb_env(token, secret, app_id, api_base, extra), args, stdin, timeout,
                                secrets=_secrets(request))
    return _run
