"""Shared fixtures: where the built tools are, and the sandbox package on sys.path."""
import os
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "sandbox"))


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
