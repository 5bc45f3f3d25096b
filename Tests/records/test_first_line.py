"""Issue 21: every filter takes `--first-line N`, the number of its first input
line, so that a chunk of a larger input (GNU parallel `--pipe`) keeps the whole
input's line numbers: in each envelope's `line` (blank lines still counted),
and in oauth-sign's `line N:` messages on stderr. Without it the first line is
1; a value that is not a positive integer is a usage error (exit 2, nothing
read). Dry runs: nothing here needs a server."""
import json
import subprocess

import pytest

from toolenv import clean_env, fb_credentials, x_credentials

# (tool, arguments, a record it accepts)
CASES = [
    ("oauth-sign", [], '{"method":"GET","url":"https://api.x.com/2/users/me"}'),
    ("tw-post", ["--dry-run"], '"hello"'),
    ("tw-friends", ["--dry-run"], '"jack"'),
    ("fb-feed", ["--dry-run"], '{"message":"hello"}'),
    ("fb-perm-check", ["--dry-run"], '"pages_show_list"'),
]
# A record, a blank line, a line that is not JSON.
CHUNK = "%s\n\n{not json\n"


@pytest.mark.parametrize("name,args,record", CASES, ids=[c[0] for c in CASES])
def test_first_line_numbers_a_chunk_as_part_of_the_whole_input(tool, home, name, args, record):
    env = clean_env(home, fb_credentials() if name.startswith("fb-") else x_credentials())

    def run(*extra):
        return subprocess.run([tool(name), *args, *extra], input=(CHUNK % record).encode(), capture_output=True,
                              env=env, timeout=30)

    def lines(proc):
        assert proc.returncode == 1, (proc.returncode, proc.stderr)
        return [json.loads(l)["line"] for l in proc.stdout.decode().splitlines()]

    assert lines(run()) == [1, 3]
    assert lines(run("--first-line", "10001")) == [10001, 10003]
    assert lines(run("--first-line=9007199254740000")) == [9007199254740000, 9007199254740002]
    if name == "oauth-sign":
        proc = run("--first-line", "10001", "--format", "header")
        assert proc.stderr.decode().startswith("oauth-sign: line 10003: input: "), proc.stderr
    for bad in ("0", "-1", "1.5", "x", ""):
        proc = run("--first-line", bad)
        assert (proc.returncode, proc.stdout) == (2, b""), (bad, proc)
        assert proc.stderr.decode().startswith(name + ": --first-line: "), (bad, proc.stderr)
