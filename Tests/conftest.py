"""Shared fixtures: where the built tools are, a scrubbed environment, the sandbox;
and sandbox/ and Tests/ on sys.path (for harness and toolenv)."""
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
