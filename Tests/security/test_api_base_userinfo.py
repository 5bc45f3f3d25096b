"""A password in an API base is never echoed (issue 17 §5; contract §4: secrets
never reach stderr; §5: an --api-base with userinfo is a usage error).

An `--api-base`, `TW_API_BASE` or `FB_API_BASE` such as `https://user:PASS@host`
is refused (exit 2), and the usage message quoted the URL whole, password
included. Every tool that takes an API base is run with bases carrying userinfo
-- a password, a token as the user name, a password with the characters that end
an authority (`/`, `?`, `#`) or that make the base unprintable (a space) -- given
by the option and by the variable; stderr must hold none of the secret's pieces,
and still say which setting was refused and which host it named.
"""
import subprocess

import pytest

from toolenv import clean_env

X_TOOLS = {"tw-post": [], "tw-friends": [], "tw-auth": ["status"]}
FB_TOOLS = {"fb-feed": [], "fb-perm-check": [], "fb-auth": ["status"]}

# (base, the pieces of its secret that must not appear)
BASES = {
    "password": ("https://someone:Pa55w0rd-s3cr3t@api.example.test", ["Pa55w0rd", "s3cr3t"]),
    "token as user": ("https://T0KEN-s3cr3t@api.example.test/", ["T0KEN", "s3cr3t"]),
    "slash in password": ("https://someone:Pa55/w0rd-s3cr3t@api.example.test", ["Pa55", "w0rd", "s3cr3t"]),
    "question mark in password": ("https://someone:Pa55?w0rd-s3cr3t@api.example.test", ["Pa55", "w0rd", "s3cr3t"]),
    "hash in password": ("http://someone:Pa55#w0rd-s3cr3t@api.example.test:8080", ["Pa55", "w0rd", "s3cr3t"]),
    "space in password": ("https://someone:Pa55 w0rd-s3cr3t@api.example.test", ["Pa55", "w0rd", "s3cr3t"]),
    "two at signs": ("https://someone:Pa55@w0rd-s3cr3t@api.example.test", ["Pa55", "w0rd", "s3cr3t"]),
}


def cases():
    for tools, variable in ((X_TOOLS, "TW_API_BASE"), (FB_TOOLS, "FB_API_BASE")):
        for name, command in tools.items():
            for how in ("option", variable):
                yield pytest.param(name, command, how, id="%s-%s" % (name, how))


@pytest.mark.parametrize("name,command,how", list(cases()))
def test_userinfo_of_a_refused_api_base_is_not_echoed(tool, home, name, command, how):
    wrong = []
    for case, (base, pieces) in BASES.items():
        if how == "option":
            args, extra = [*command, "--api-base", base], {}
        else:
            args, extra = list(command), {how: base}
        p = subprocess.run([tool(name), *args], stdin=subprocess.DEVNULL, capture_output=True,
                           env=clean_env(home, extra), timeout=30)
        err = p.stderr.decode("utf-8", "replace")
        if p.returncode != 2 or p.stdout != b"" or not err.startswith(name + ": "):
            wrong.append((case, "not a usage error", p.returncode, p.stdout[:200], err[:300]))
        elif any(piece in err for piece in pieces):
            wrong.append((case, "echoed", err[:300]))
        elif ("--api-base" if how == "option" else how) not in err or "api.example.test" not in err:
            wrong.append((case, "does not say what was refused", err[:300]))
    assert not wrong, wrong
