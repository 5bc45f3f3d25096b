"""What the end-to-end tests set up around a run of a built tool: its
environment, and a port where nothing listens. Tests/conftest.py puts this
directory on sys.path, so test modules import it."""
import os
import socket


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


def closed_port():
    """A loopback port nothing listens on (connections are refused)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port
