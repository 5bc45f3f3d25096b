"""Issue 17: no number in a record may crash a tool. Every field the filters read
a number, an id or a time from is given the extremes of a 64-bit integer, huge
and fractional reals, and numbers jansson cannot hold: each record gets one
envelope (a success or an `input`/`validation` error), never a trap.
(fb-feed's scheduled_publish_time of -2^63 overflowed `time - now` and trapped.)"""
import json
import subprocess

import pytest

from toolenv import clean_env, fb_credentials, x_credentials

VALUES = ["-9223372036854775808", "9223372036854775807", "-1", "0", "1.5", "1e300", "-1e300",
          "9223372036854775808", "-9223372036854775809", '"9223372036854775808"', '"-1"', "1e-300"]

# (tool, arguments, the record with @ where the value goes)
CASES = [
    ("oauth-sign", [], '{"method":"GET","url":"https://a.example/","timestamp":@}'),
    ("tw-post", ["--dry-run"], '{"text":"n","reply_to":@}'),
    ("tw-post", ["--dry-run"], '{"text":"n","quote":@}'),
    ("tw-post", ["--dry-run"], '{"text":"n","media_ids":[@]}'),
    ("tw-friends", ["--dry-run"], '{"username":"jack","max":@}'),
    ("tw-friends", ["--dry-run"], '{"user_id":@}'),
    ("tw-friends", ["--dry-run", "--api", "1.1"], '{"username":"jack","cursor":@}'),
    ("fb-feed", ["--dry-run"], '{"message":"n","scheduled_publish_time":@}'),
    ("fb-feed", ["--dry-run"], '{"message":"n","page":@}'),
    ("fb-perm-check", ["--dry-run"], '{"permission":"email","user":@}'),
]


@pytest.mark.parametrize("name,args,template", CASES, ids=[c[0] + ":" + c[2].split(",")[-1].split(":")[0] for c in CASES])
def test_any_number_in_a_record_gets_its_envelope(tool, home, name, args, template):
    creds = fb_credentials() if name.startswith("fb-") else x_credentials()
    lines = [template.replace("@", v) for v in VALUES]
    proc = subprocess.run([tool(name), *args], input=("\n".join(lines) + "\n").encode(), capture_output=True,
                          env=clean_env(home, creds), timeout=30)
    assert proc.returncode in (0, 1), ("a trap", proc.returncode, proc.stderr[-2000:])
    envelopes = [json.loads(l) for l in proc.stdout.decode().splitlines()]
    assert [e["line"] for e in envelopes] == list(range(1, len(lines) + 1)), proc.stdout
    for e in envelopes:
        if not e["ok"]:
            assert e["error"]["kind"] in ("input", "validation"), e


LONG_PORT = "https://api.x.com:99999999999999999999/2/users/me"


def test_a_url_with_a_twenty_digit_port_is_an_input_error(tool, home):
    """RequestURL counted the port's digits into an Int before looking at their number: a trap."""
    record = json.dumps({"method": "GET", "url": LONG_PORT})
    proc = subprocess.run([tool("oauth-sign")], input=(record + "\n").encode(), capture_output=True,
                          env=clean_env(home, x_credentials()), timeout=30)
    assert proc.returncode == 1, proc
    [e] = [json.loads(l) for l in proc.stdout.decode().splitlines()]
    assert e["error"]["kind"] == "input" and "port" in e["error"]["message"], e


@pytest.mark.parametrize("name", ["tw-post", "tw-friends", "fb-feed", "fb-perm-check"])
def test_an_api_base_with_a_twenty_digit_port_is_a_usage_error(tool, home, name):
    base = LONG_PORT.rsplit("/2/", 1)[0]
    proc = subprocess.run([tool(name), "--api-base", base, "--dry-run"], input=b'"x"\n', capture_output=True,
                          env=clean_env(home, x_credentials()), timeout=30)
    assert proc.returncode == 2, proc
    assert b"port" in proc.stderr, proc.stderr
