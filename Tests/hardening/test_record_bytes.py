"""Issue 17, item 2: an output line that is not JSON. A record is accepted only
when its whole line is exactly one RFC 8259 value (jansson alone reads
`280<NUL>` as 280 and drops the rest, and the echo copied the NUL out), with
strings that are whole characters (no lone surrogate) and nesting jq can read;
everything else is an `input` error whose `raw` is escaped. Every line the five
filters write is read back by Python's strict parser and by jq."""
import json
import subprocess

import pytest

from toolenv import assert_no_secrets, clean_env, fb_credentials, x_credentials

# One small record per filter, run with --dry-run (nothing is sent).
FILTERS = {
    "oauth-sign": (b'{"method":"GET","url":"https://a.example/x"}', []),
    "tw-post": (b'{"text":"n","max_length":280}', ["--dry-run"]),
    "tw-friends": (b'{"username":"jack","max":5}', ["--dry-run"]),
    "fb-feed": (b'{"message":"n","published":true}', ["--dry-run"]),
    "fb-perm-check": (b'{"permission":"pages_show_list"}', ["--dry-run"]),
}
CONTROL_BYTES = list(range(0x20)) + [0x7F]


def env_for(name, home):
    creds = fb_credentials() if name.startswith("fb-") else x_credentials()
    return clean_env(home, creds)


def physical_lines(data):
    """The lines as contract §1 counts them: split at LF, one CR dropped, blank ones skipped."""
    out = []
    for number, line in enumerate(data.split(b"\n")[:-1], start=1):
        if line.endswith(b"\r"):
            line = line[:-1]
        if line.strip(b" \t"):
            out.append((number, line))
    return out


def strict_json(line):
    """The line as Python's strict parser reads it, or None when it is not one JSON value."""
    try:
        return json.loads(line.decode("utf-8"), parse_constant=lambda name: 1 / 0)
    except (ValueError, ZeroDivisionError):
        return None


def run(tool, home, name, args, data):
    """Runs a filter over `data`: (exit status, stdout, its envelopes by line),
    each line read by Python's strict parser (oauth-sign's envelopes carry no
    `attempts`, so toolenv's envelope check does not apply to all five)."""
    proc = subprocess.run([tool(name), *args], input=data, capture_output=True, env=env_for(name, home), timeout=120)
    assert_no_secrets(proc.stdout, proc.stderr)
    assert proc.returncode in (0, 1), proc
    by_line = {}
    for text in proc.stdout.decode("utf-8").splitlines():
        envelope = json.loads(text)
        assert list(envelope)[:3] == ["ok", "line", "input"], text
        assert envelope["line"] not in by_line, ("two envelopes for one line", text)
        by_line[envelope["line"]] = envelope
    return proc.stdout, by_line


def assert_jq_reads(stdout):
    jq = subprocess.run(["jq", "-c", "."], input=stdout, capture_output=True)
    assert jq.returncode == 0, (jq.stderr, stdout[:2000])


@pytest.mark.parametrize("name", sorted(FILTERS))
def test_every_control_byte_at_every_position_yields_json_lines(tool, home, name):
    record, args = FILTERS[name]
    variants = [record[:p] + bytes([b]) + record[p:] for b in CONTROL_BYTES for p in range(len(record) + 1)]
    data = b"".join(v + b"\n" for v in variants)
    stdout, got = run(tool, home, name, args, data)
    assert not any(c < 0x20 and c != 0x0A for c in stdout), "a raw control byte reached stdout"
    assert_jq_reads(stdout)
    expected = physical_lines(data)
    assert sorted(got) == [n for n, _ in expected], "one envelope per record line"
    for number, line in expected:
        envelope = got[number]
        value = strict_json(line)
        refused_as_json = (not envelope["ok"] and envelope["error"]["kind"] == "input"
                           and envelope["error"]["message"].startswith("invalid JSON"))
        if value is None:
            assert refused_as_json and envelope["input"] is None and isinstance(envelope["raw"], str), (line, envelope)
            assert envelope["raw"].encode("utf-8") == line[:256], (line, envelope)
        else:
            assert not refused_as_json, (line, envelope)


@pytest.mark.parametrize("name", sorted(FILTERS))
def test_a_nul_after_a_number_is_refused_and_nothing_is_echoed(tool, home, name):
    record, args = FILTERS[name]
    line = record[:-1] + b"\x00" + record[-1:]
    stdout, got = run(tool, home, name, args, line + b"\n")
    e = got[1]
    assert e["error"]["kind"] == "input" and e["input"] is None, stdout
    assert e["raw"] == line.decode(), stdout
    assert b"\x00" not in stdout, stdout


LONE_SURROGATES = [rb'"\ud800"', rb'"\udc00"', rb'"a\ud800b"', rb'"\ud800\u0041"', rb'"\udbff\udbff"']


@pytest.mark.parametrize("name", sorted(FILTERS))
def test_lone_surrogates_are_refused_and_pairs_accepted(tool, home, name):
    record, args = FILTERS[name]
    # A member added to the record, so that every filter reads it (and echoes it when accepted).
    lines = [record[:-1] + b',"extra":' + s + b"}" for s in LONE_SURROGATES]
    pair = record[:-1] + rb',"extra":"\ud83d\ude00"}'
    stdout, by_line = run(tool, home, name, args, b"\n".join(lines + [pair]) + b"\n")
    assert_jq_reads(stdout)
    for number in range(1, len(lines) + 1):
        e = by_line[number]
        assert e["error"]["kind"] == "input" and "surrogate" in e["error"]["message"], (lines[number - 1], e)
    last = by_line[len(lines) + 1]
    assert not (not last["ok"] and last["error"]["message"].startswith("invalid JSON")), last


@pytest.mark.parametrize("name", sorted(FILTERS))
def test_nesting_jq_cannot_read_is_refused(tool, home, name):
    record, args = FILTERS[name]

    def nested(depth, opener=b'{"a":', closer=b"}"):
        # The record is one level; `extra` holds depth - 1 more.
        inner = opener * (depth - 2) + b"1" + closer * (depth - 2)
        return record[:-1] + b',"extra":' + opener + inner + closer + b"}"

    deepest, too_deep = nested(64), nested(65)
    arrays = nested(65, b"[", b"]")
    stdout, by_line = run(tool, home, name, args, b"\n".join([deepest, too_deep, arrays]) + b"\n")
    assert_jq_reads(stdout)
    first, second, third = (by_line[n] for n in (1, 2, 3))
    assert not (not first["ok"] and first["error"]["message"].startswith("invalid JSON")), first
    for e in (second, third):
        assert e["error"]["kind"] == "input" and "nested deeper than 64" in e["error"]["message"], e
