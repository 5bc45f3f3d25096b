"""Secrets sweep over every tool (issue 7, "Tests"; contract §4: secrets never appear
on stdout or on stderr, also with --verbose).

Each test id is one scenario: a way of running oauth-sign or tw-post (--verbose,
--dry-run, every kind of failure that can be provoked, unparsable, invalid UTF-8 and
over-long lines, records naming a `profile`, --format header/curl, the PLAINTEXT
attack of issue 7 item 1). After each run, stdout and stderr are searched for every
secret these tests configure -- raw, JSON-escaped, percent-encoded (%20 and + forms,
upper and lower hex, twice-encoded as in an OAuth header) -- and, for the made-up
secrets, for their marker `s3cr3t`, which every one of those encodings keeps (so a
secret cut short at raw's 256-byte limit, or escaped some other way, is caught too).
Only then is the scenario's own outcome checked (that it really was an auth error,
a dry run, ...), so a failure on today's code names the leak.

Secrets come from the environment (TW_CONSUMER_SECRET, TW_ACCESS_TOKEN_SECRET,
TW_BEARER_TOKEN, and FB_* for good measure) and from a 0600 credentials file.
Runs meant to fail use made-up secrets full of characters that change under
encoding; runs that must succeed against the sandbox use the sandbox's own secrets
(sandbox/default-config.json), whose encoded forms are checked as well.
"""
import json
import os
import re
import signal
import subprocess
import threading
import urllib.parse

import pytest

from toolenv import closed_port, credentials_path, jl, write_private  # Tests/conftest.py puts Tests/ on sys.path

# --------------------------------------------------------------------------------------
# secrets
# --------------------------------------------------------------------------------------

MARKER = "s3cr3t"
ODD = MARKER + '/+= "q\\\u00e9'          # s3cr3t/+= "q\é : '/', '+', '=', space, quote, backslash, é


def odd(prefix):
    return prefix + "-" + ODD


# made-up, from the environment
ENV_CS, ENV_TS, ENV_BEARER = odd("env-cs"), odd("env-ts"), odd("env-bearer")
ENV_FB_TOKEN, ENV_FB_APP_SECRET = odd("env-fb-token"), odd("env-fb-app")
# made-up, from the credentials file
FILE_CS, FILE_TS = odd("file-cs"), odd("file-ts")
FILE_BEARER, FILE_CLIENT_SECRET, FILE_REFRESH = odd("file-bearer"), odd("file-client"), odd("file-refresh")
FILE_OAUTH2_TOKEN, FILE_FB_TOKEN, FILE_FB_APP_SECRET = odd("file-oauth2"), odd("file-fb-token"), odd("file-fb-app")

# the sandbox's own (sandbox/default-config.json)
CONSUMER_KEY = "sandbox-consumer-key"
ACCESS_TOKEN = "1000000000000000001-sandboxaccesstoken"
REAL_CS, REAL_TS = "sandbox-consumer-secret", "sandbox-access-token-secret"
REAL_BEARER = "sandbox-oauth2-user-token"
READONLY = {"TW_CONSUMER_KEY": "sandbox-readonly-consumer-key",
            "TW_CONSUMER_SECRET": "sandbox-readonly-consumer-secret",
            "TW_ACCESS_TOKEN": "1000000000000000001-sandboxreadonlytoken",
            "TW_ACCESS_TOKEN_SECRET": "sandbox-readonly-token-secret"}

ALL_SECRETS = [ENV_CS, ENV_TS, ENV_BEARER, ENV_FB_TOKEN, ENV_FB_APP_SECRET, FILE_CS, FILE_TS, FILE_BEARER,
               FILE_CLIENT_SECRET, FILE_REFRESH, FILE_OAUTH2_TOKEN, FILE_FB_TOKEN, FILE_FB_APP_SECRET,
               REAL_CS, REAL_TS, REAL_BEARER, READONLY["TW_CONSUMER_SECRET"], READONLY["TW_ACCESS_TOKEN_SECRET"]]

FB_ENV = {"FB_ACCESS_TOKEN": ENV_FB_TOKEN, "FB_APP_SECRET": ENV_FB_APP_SECRET, "FB_APP_ID": "100000000000001"}
ENV_ODD = dict(FB_ENV, TW_CONSUMER_KEY=CONSUMER_KEY, TW_CONSUMER_SECRET=ENV_CS, TW_ACCESS_TOKEN=ACCESS_TOKEN,
               TW_ACCESS_TOKEN_SECRET=ENV_TS)
ENV_REAL = {"TW_CONSUMER_KEY": CONSUMER_KEY, "TW_CONSUMER_SECRET": REAL_CS, "TW_ACCESS_TOKEN": ACCESS_TOKEN,
            "TW_ACCESS_TOKEN_SECRET": REAL_TS}
ENV_BEARER_ODD = dict(FB_ENV, TW_BEARER_TOKEN=ENV_BEARER)
ENV_BEARER_REAL = {"TW_BEARER_TOKEN": REAL_BEARER}
ENVS = {"odd": ENV_ODD, "real": ENV_REAL, "bearer-odd": ENV_BEARER_ODD, "bearer-real": ENV_BEARER_REAL,
        "readonly": READONLY, "none": {}}


def pct(s, safe="-._~"):
    return urllib.parse.quote(s.encode("utf-8"), safe=safe)


def encoded_forms(secret):
    """{form name: text} for a secret: every spelling of it that must not be printed."""
    forms = {"raw": secret,
             "json": json.dumps(secret, ensure_ascii=False)[1:-1],
             "json-ascii": json.dumps(secret)[1:-1]}
    forms["json-escaped-slash"] = forms["json"].replace("/", "\\/")
    for safe in ("-._~", "/", ""):
        forms["percent%%20 safe=%r" % safe] = urllib.parse.quote(secret.encode("utf-8"), safe=safe)
        forms["percent+ safe=%r" % safe] = urllib.parse.quote_plus(secret.encode("utf-8"), safe=safe)
    for name in [n for n in forms if n.startswith("percent")]:
        forms[name + " lower-hex"] = re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), forms[name])
    forms["percent twice (OAuth header of a PLAINTEXT signature)"] = pct(pct(secret))
    return forms


def assert_no_secret(stdout, stderr):
    """No configured secret, in any spelling, on stdout or stderr."""
    leaks = []
    for stream, data in (("stdout", stdout), ("stderr", stderr)):
        text = data.decode("utf-8", "replace")
        for secret in ALL_SECRETS:
            for form, spelled in encoded_forms(secret).items():
                if spelled in text:
                    at = text.index(spelled)
                    leaks.append("%s: %r (%s) ...%s..." % (stream, secret, form, text[max(0, at - 80):at + 80]))
        if MARKER in text:
            at = text.index(MARKER)
            leaks.append("%s: the marker %r of a made-up secret ...%s..."
                         % (stream, MARKER, text[max(0, at - 80):at + 80]))
    assert not leaks, "secrets printed:\n  " + "\n  ".join(leaks[:12])


# --------------------------------------------------------------------------------------
# records and credentials files
# --------------------------------------------------------------------------------------

def js(value):
    """A JSON string literal for this value, as a user would type it (non-ASCII kept)."""
    return json.dumps(value, ensure_ascii=False)


def line(*parts):
    """One input line (bytes) from str and bytes pieces."""
    return b"".join(p if isinstance(p, bytes) else p.encode("utf-8") for p in parts)


def twitter_oauth1(cs, ts):
    return {"consumer_key": CONSUMER_KEY, "consumer_secret": cs, "access_token": ACCESS_TOKEN,
            "access_token_secret": ts}


PROFILES = {
    "odd": {"twitter": twitter_oauth1(FILE_CS, FILE_TS)},
    "real": {"twitter": twitter_oauth1(REAL_CS, REAL_TS)},
    # never selected: only a tool that echoes the file would print these
    "spare": {"twitter": {"oauth2": {"client_id": "c2FuZGJveC1jbGllbnQtaWQ", "client_secret": FILE_CLIENT_SECRET,
                                     "access_token": FILE_OAUTH2_TOKEN, "refresh_token": FILE_REFRESH,
                                     "expires_at": 4102444800, "scopes": ["tweet.read", "tweet.write"]},
                          "bearer_token": FILE_BEARER},
              "facebook": {"access_token": FILE_FB_TOKEN, "app_secret": FILE_FB_APP_SECRET,
                           "app_id": "100000000000001"}},
    # lacks access_token_secret
    "partial": {"twitter": {"consumer_key": CONSUMER_KEY, "consumer_secret": FILE_CS,
                            "access_token": ACCESS_TOKEN}},
}


def credentials_text(default=None):
    doc = {"profiles": PROFILES}
    if default:
        doc = {"default": default, "profiles": PROFILES}
    return json.dumps(doc, ensure_ascii=False, indent=1)


def write_credentials(home, text, mode=0o600):
    path = write_private(credentials_path(home), text)
    os.chmod(path, mode)
    return path


# credentials file setups: name -> (file text, mode) or None
FILES = {
    None: None,
    "profiles": (credentials_text(), 0o600),
    "default-odd": (credentials_text("odd"), 0o600),
    "default-real": (credentials_text("real"), 0o600),
    # not JSON: the colon between "consumer_secret" and its value is missing, so the
    # parser stops right at a secret (a message quoting the text "near" it would leak)
    "invalid-json": (credentials_text("odd").replace('"consumer_secret": ', '"consumer_secret" ', 1), 0o600),
    "readable-by-others": (credentials_text("odd"), 0o644),
}

# Unparsable lines that carry configured secrets under secret-bearing keys (issue 7 item 2, 3).
BAD_JSON_SECRETS = line('{"consumer_secret":', js(ENV_CS), ',"token_secret":', js(ENV_TS),
                        ',"access_token_secret":', js(FILE_TS), ',"bearer_token":', js(ENV_BEARER), ',}')
BAD_JSON_MISSING_COLON = line('{"text":"x","consumer_secret" ', js(ENV_CS), ',"token_secret":', js(ENV_TS), '}')
BAD_JSON_CASED_KEYS = line('{"Consumer_Secret":', js(ENV_CS), ',"TOKEN_SECRET":', js(ENV_TS),
                           ',"Bearer_Token":', js(ENV_BEARER), ' "text":"x"}')
# a record as Python prints a dict: single quotes (issue 17 §5)
PYTHON_REPR_SECRETS = line(repr({"text": "x", "access_token": ENV_BEARER, "Consumer_Secret": ENV_CS,
                                 "nested": {"token_secret": ENV_TS}}))
INVALID_UTF8_SECRETS = line('{"text":"bad \xff byte","consumer_secret":'.encode("latin-1"), js(ENV_CS),
                            ',"access_token_secret":', js(ENV_TS), '}')
# valid JSON objects that carry the configured secrets under differently-cased keys
CASED_KEYS_RECORD = {"Consumer_Secret": ENV_CS, "TOKEN_SECRET": ENV_TS, "Access_Token_Secret": FILE_TS,
                     "Bearer_Token": ENV_BEARER}


def over_long(key, pad):
    """A line of ~400 bytes whose secret sits in the first 256 (max-line 100 makes it over-long)."""
    return line('{"', key, '":', js(ENV_CS), ',"padding":"', "p" * pad, '"}')


def straddling_cut(key="consumer_secret"):
    """An unparsable line whose secret value starts before byte 256 and ends after it, so the
    first 256 bytes (raw) hold the secret's beginning, marker included, but not its end."""
    head = '{"padding":"'
    tail_before_value = '","' + key + '":"'
    before_cut = ENV_CS[:ENV_CS.index(MARKER) + len(MARKER) + 2]      # "env-cs-s3cr3t/+"
    fill = 256 - len(head) - len(tail_before_value) - len(before_cut)
    b = line(head, "q" * fill, tail_before_value, js(ENV_CS)[1:], ',}')
    at = b.index(MARKER.encode())
    assert at + len(MARKER) <= 256 < at + len(js(ENV_CS).encode("utf-8")) - 2, (at, b)
    return b


# --------------------------------------------------------------------------------------
# scenario outcome checks (after the leak check)
# --------------------------------------------------------------------------------------

def parse(stdout):
    return [json.loads(l) for l in stdout.decode("utf-8").splitlines()]


def kinds(stdout):
    return ["ok" if e["ok"] else e["error"]["kind"] for e in parse(stdout)]


def expect_kinds(*expected, rc=None):
    def check(p):
        assert kinds(p.stdout) == list(expected), (p.returncode, p.stdout[:2000], p.stderr[:2000])
        if rc is not None:
            assert p.returncode == rc, (p.returncode, p.stderr[:2000])
    return check


def expect_error(kind, rc=1, **fields):
    """Every envelope is a failure of this kind (with these error fields)."""
    def check(p):
        envs = parse(p.stdout)
        assert envs and all(not e["ok"] and e["error"]["kind"] == kind for e in envs), \
            (p.returncode, p.stdout[:2000], p.stderr[:2000])
        for k, v in fields.items():
            assert all(e["error"].get(k) == v for e in envs), (k, v, p.stdout[:2000])
        assert p.returncode == rc, (p.returncode, p.stderr[:2000])
    return check


def expect_exit(rc, stdout_empty=True):
    def check(p):
        assert p.returncode == rc, (p.returncode, p.stdout[:2000], p.stderr[:2000])
        if stdout_empty:
            assert p.stdout == b"", p.stdout[:2000]
        assert p.stderr, "a configuration error says why on stderr"
    return check


def auth_or_config_error(p):
    """Either exit 3 before reading, or an `auth` error for the record (the contract leaves
    open which one a --profile lacking a field is); never a success."""
    if p.returncode == 3:
        expect_exit(3)(p)
    else:
        expect_error("auth", attempts=0)(p)


def expect_dry_run(p):
    envs = parse(p.stdout)
    assert envs and all(e["ok"] and "request" in e["result"] for e in envs), (p.stdout[:2000], p.stderr[:2000])
    assert p.returncode == 0


# ======================================================================================
# tw-post
# ======================================================================================

POST = "/2/tweets"


def post_match(text):
    return {"method": "POST", "path": POST, "body_contains": js(text)}


# name -> dict(args, stdin, env (ENVS key), file (FILES key), faults [(kind, match, fields)],
#              api_base ("sandbox" | "closed"), check)
TW = {}


def tw(name, stdin, check, args=(), env="odd", file=None, faults=(), api_base="sandbox"):
    assert name not in TW
    TW[name] = dict(args=list(args), stdin=stdin, env=env, file=file, faults=list(faults), api_base=api_base,
                    check=check)


# --- success (the sandbox's real secrets)
tw("verbose-success-env", jl("sweep ok env"), expect_kinds("ok", rc=0), ["--verbose"], env="real")
tw("verbose-success-bearer", jl("sweep ok bearer"), expect_kinds("ok", rc=0), ["--verbose"], env="bearer-real")
tw("verbose-success-v1.1", jl("sweep ok v11 +/= &"), expect_kinds("ok", rc=0), ["--verbose", "--api", "1.1"],
   env="real")
tw("verbose-success-default-profile", jl("sweep ok file"), expect_kinds("ok", rc=0), ["--verbose"], env="none",
   file="default-real")
tw("verbose-success-record-profile-over-odd-env", jl({"text": "sweep ok profile", "profile": "real"}),
   expect_kinds("ok", rc=0), ["--verbose"], env="odd", file="profiles")
tw("verbose-success-profile-option", jl("sweep ok --profile"), expect_kinds("ok", rc=0),
   ["--verbose", "--profile", "real"], env="none", file="profiles")
tw("quiet-success-then-duplicate", jl("sweep twice", "sweep twice"), expect_kinds("ok", "duplicate", rc=1),
   [], env="real")
# --- dry runs (nothing is sent, so the made-up secrets sign)
tw("dry-run-verbose-oauth1-env", jl("sweep dry", {"text": "dry reply", "reply_to": "20"}), expect_dry_run,
   ["--dry-run", "--verbose"])
tw("dry-run-verbose-v1.1-form-body", jl("sweep dry v1.1 a+b=c d/e"), expect_dry_run,
   ["--dry-run", "--verbose", "--api", "1.1"])
tw("dry-run-verbose-bearer-env", jl("sweep dry bearer"), expect_dry_run, ["--dry-run", "--verbose"],
   env="bearer-odd")
tw("dry-run-verbose-record-profile", jl({"text": "sweep dry profile", "profile": "odd"}), expect_dry_run,
   ["--dry-run", "--verbose"], env="none", file="profiles")
tw("dry-run-verbose-default-profile", jl("sweep dry default"), expect_dry_run, ["--dry-run", "--verbose"],
   env="none", file="default-odd")
# --- refused before sending
tw("input-errors-verbose", jl(5, [1], {"text": 7}, {"text": "r", "reply_to": "x"}, {"text": "m", "media_ids": []}),
   expect_error("input", attempts=0), ["--verbose"])
tw("validation-too-long-verbose", jl("x" * 300, ""), expect_error("validation", attempts=0), ["--verbose"])
tw("record-with-secret-keys-cased-verbose", jl(dict(CASED_KEYS_RECORD, text="sweep cased keys")),
   expect_dry_run, ["--verbose", "--dry-run"])
tw("record-with-secret-keys-verbose", jl({"text": "sweep secret keys", "consumer_secret": ENV_CS,
                                          "access_token_secret": ENV_TS, "nested": {"bearer_token": ENV_BEARER}}),
   expect_dry_run, ["--verbose", "--dry-run"])
# --- unparsable and over-long lines
tw("bad-json-with-secret-keys", jl(BAD_JSON_SECRETS), expect_error("input", attempts=0), ["--verbose"])
tw("bad-json-missing-colon-before-secret", jl(BAD_JSON_MISSING_COLON), expect_error("input", attempts=0),
   ["--verbose"])
tw("bad-json-with-cased-secret-keys", jl(BAD_JSON_CASED_KEYS), expect_error("input", attempts=0), ["--verbose"])
tw("bad-json-single-quoted-secret-keys", jl(PYTHON_REPR_SECRETS), expect_error("input", attempts=0), ["--verbose"])
tw("invalid-utf8-with-secret-keys", jl(INVALID_UTF8_SECRETS), expect_error("input", attempts=0), ["--verbose"])
tw("over-long-line-with-secret-key", jl(over_long("consumer_secret", 300)), expect_error("input", attempts=0),
   ["--verbose", "--max-line", "100"])
tw("over-long-line-with-cased-secret-key", jl(over_long("Access_Token_Secret", 300)),
   expect_error("input", attempts=0), ["--verbose", "--max-line", "100"])
tw("over-long-line-secret-straddles-raw-cut", jl(straddling_cut()), expect_error("input", attempts=0),
   ["--verbose", "--max-line", "100"])
tw("bad-json-secret-straddles-raw-cut", jl(straddling_cut("token_secret")), expect_error("input", attempts=0),
   ["--verbose"])
# --- API failures (made-up secrets unless the sandbox must accept them)
tw("auth-wrong-secrets-env-verbose", jl("sweep auth env"), expect_error("auth", status=401), ["--verbose"])
tw("auth-wrong-secrets-record-profile-verbose", jl({"text": "sweep auth profile", "profile": "odd"}),
   expect_error("auth", status=401), ["--verbose"], env="none", file="profiles")
tw("auth-wrong-secrets-default-profile-verbose", jl("sweep auth default"), expect_error("auth", status=401),
   ["--verbose"], env="none", file="default-odd")
tw("auth-wrong-bearer-verbose", jl("sweep auth bearer"), lambda p: expect_error("auth")(p) if p.stdout else
   expect_exit(3)(p), ["--verbose"], env="bearer-odd")
tw("auth-record-profile-missing-a-field", jl({"text": "sweep partial", "profile": "partial"}),
   expect_error("auth", attempts=0), ["--verbose"], env="odd", file="profiles")
tw("auth-record-profile-unknown", jl({"text": "sweep unknown", "profile": "nope"}),
   expect_error("auth", attempts=0), ["--verbose"], env="odd", file="profiles")
tw("permission-readonly-app-verbose", jl("sweep permission"), expect_error("permission", status=403),
   ["--verbose"], env="readonly")
tw("rate-limit-verbose", jl("sweep 429"), expect_error("rate_limit", status=429),
   ["--verbose", "--retries", "1", "--max-wait", "5"],
   faults=[("status", post_match("sweep 429"), {"status": 429, "retry_after": 0, "count": None})])
tw("http-418-verbose", jl("sweep 418"), expect_error("http", status=418), ["--verbose"],
   faults=[("status", post_match("sweep 418"), {"status": 418})])
tw("http-503-verbose", jl("sweep 503"), expect_error("ambiguous", status=503), ["--verbose"],
   faults=[("status", post_match("sweep 503"), {"status": 503})])
tw("http-500-v1.1-verbose", jl("sweep 500 v11"), expect_error("ambiguous", status=500), ["--verbose", "--api", "1.1"],
   faults=[("status", {"method": "POST", "path": "/1.1/statuses/update.json"}, {"status": 500})])
tw("network-closed-port-verbose", jl("sweep network"), expect_error("network", attempts=2),
   ["--verbose", "--retries", "1"], api_base="closed")
tw("ambiguous-reset-after-verbose", jl("sweep reset"), expect_error("ambiguous"), ["--verbose"],
   faults=[("reset_after", post_match("sweep reset"), {})])
tw("ambiguous-truncated-verbose", jl("sweep truncate"), expect_error("ambiguous"), ["--verbose"], env="real",
   faults=[("truncate", post_match("sweep truncate"), {"bytes": 10})])
tw("ambiguous-malformed-verbose", jl("sweep malformed"), expect_error("ambiguous"), ["--verbose"], env="real",
   faults=[("malformed", post_match("sweep malformed"), {})])
tw("ambiguous-timeout-verbose", jl("sweep hang"), expect_error("ambiguous"), ["--verbose", "--timeout", "1"],
   faults=[("hang", post_match("sweep hang"), {})])
# --- what a run costs (contract §7): --cost, --max-cost, --prices, --plan
tw("cost-budget-verbose", jl("sweep cost one", "sweep cost two"), expect_kinds("ok", "budget", rc=1),
   ["--verbose", "--cost", "--max-cost", "0.02"], env="real")
tw("cost-budget-zero-record-profile", jl({"text": "sweep budget profile", "profile": "odd"}),
   expect_error("budget", attempts=0), ["--verbose", "--cost", "--max-cost", "0"], env="none", file="profiles")
tw("billing-402-verbose", jl("sweep 402", "sweep after 402"), expect_error("billing"), ["--verbose", "--cost"],
   faults=[("status", post_match("sweep 402"), {"status": 402})])
tw("plan-refusal-record-profile", jl({"text": "sweep quote", "quote": "20", "profile": "odd"}),
   expect_error("validation", attempts=0), ["--verbose", "--plan", "self-serve"], env="none", file="profiles")
tw("dry-run-cost-enterprise-default-profile", jl({"text": "sweep dry quote", "quote": "20"}), expect_dry_run,
   ["--dry-run", "--verbose", "--cost", "--plan", "enterprise"], env="none", file="default-odd")
tw("prices-file-not-prices", jl("sweep"), expect_exit(3), ["--verbose", "--prices", "CREDENTIALS_FILE"], env="none",
   file="profiles")
# --- configuration errors (exit 3)
tw("credentials-file-invalid-json", jl("sweep"), expect_exit(3), ["--verbose"], env="none", file="invalid-json")
tw("credentials-file-readable-by-others", jl("sweep"), expect_exit(3), ["--verbose"], env="none",
   file="readable-by-others")
tw("profile-option-missing-a-field", jl("sweep"), auth_or_config_error, ["--verbose", "--profile", "partial"],
   env="none", file="profiles")
tw("profile-option-unknown", jl("sweep"), expect_exit(3), ["--verbose", "--profile", "nope"], env="none",
   file="profiles")


def tw_setup(s, home, scrubbed_env, sb):
    if s["file"]:
        text, mode = FILES[s["file"]]
        write_credentials(home, text, mode)
    for kind, match, fields in s["faults"]:
        sb.fault(kind, match=match, **fields)
    extra = dict(ENVS[s["env"]])
    if s["api_base"] == "sandbox":
        extra["TW_API_BASE"] = sb.url
    elif s["api_base"] == "closed":
        extra["TW_API_BASE"] = "http://127.0.0.1:%d" % closed_port()
    return scrubbed_env(extra)


def run_tool(path, args, stdin, env, timeout=30):
    try:
        return subprocess.run([path, *args], input=stdin, capture_output=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        pytest.fail("%s %r did not finish within %s s; stdout %r, stderr %r"
                    % (os.path.basename(path), args, timeout, (e.stdout or b"")[:1000], (e.stderr or b"")[:1000]))


@pytest.mark.parametrize("scenario", list(TW))
def test_tw_post_prints_no_secret(tool, home, scrubbed_env, sb, scenario):
    s = TW[scenario]
    env = tw_setup(s, home, scrubbed_env, sb)
    # A prices file that is the credentials file by mistake: refused, and no value of it shown.
    args = [str(credentials_path(home)) if a == "CREDENTIALS_FILE" else a for a in s["args"]]
    p = run_tool(tool("tw-post"), args, s["stdin"], env)
    assert_no_secret(p.stdout, p.stderr)
    s["check"](p)


def test_tw_post_cancelled_by_sigterm_prints_no_secret(tool, home, scrubbed_env, sb):
    """SIGTERM mid-run (made-up secrets, so each post is refused 401 after 300 ms of
    latency): the envelopes written on the way out, `cancelled` ones included, and
    stderr, hold no secret."""
    sb.control(latency_ms=300)
    env = scrubbed_env(dict(ENV_ODD, TW_API_BASE=sb.url))
    p = subprocess.Popen([tool("tw-post"), "--verbose"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env)
    err_chunks = []
    t = threading.Thread(target=lambda: err_chunks.append(p.stderr.read()), daemon=True)
    t.start()
    guard = threading.Timer(20, p.kill)          # a hung tool fails the test instead of blocking it
    guard.start()
    try:
        p.stdin.write(jl(*["sweep cancelled %02d" % i for i in range(12)]))
        p.stdin.flush()
        first = p.stdout.readline()             # stdin stays open: the run is mid-stream
        p.send_signal(signal.SIGTERM)
        rest = p.stdout.read()
        rc = p.wait(timeout=10)
    finally:
        guard.cancel()
        if p.poll() is None:
            p.kill()
            p.wait()
        p.stdin.close()
        t.join(timeout=5)
    out = first + rest
    assert_no_secret(out, b"".join(err_chunks))
    assert rc == 143, (rc, out[:2000])
    got = kinds(out)
    assert got[0] == "auth" and "cancelled" in got, got


# ======================================================================================
# oauth-sign
# ======================================================================================

PLAINTEXT_ATTACK = {"method": "GET", "url": "http://attacker.example/c", "signature_method": "PLAINTEXT"}
HMAC_RECORD = {"method": "POST", "url": "https://api.example.test/1.1/statuses/update.json",
               "params": {"status": "a b+c/d=e"}}

OS = {}


def osign(name, stdin, check, args=(), env="odd", file=None):
    assert name not in OS
    OS[name] = dict(args=list(args), stdin=stdin, env=env, file=file, check=check)


FORMATS = {"json": [], "header": ["--format", "header"], "curl": ["--format", "curl"]}


def signed(fmt):
    """Every record signed: exit 0, output on stdout."""
    def check(p):
        assert p.returncode == 0 and p.stdout, (p.returncode, p.stdout[:2000], p.stderr[:2000])
        if fmt == "json":
            assert all(e["ok"] for e in parse(p.stdout)), p.stdout[:2000]
    return check


def refused(fmt, kind="input"):
    """Every record failed (json: with this kind; header/curl: a message on stderr, nothing on stdout)."""
    def check(p):
        assert p.returncode == 1, (p.returncode, p.stdout[:2000], p.stderr[:2000])
        if fmt == "json":
            got = kinds(p.stdout)
            assert got and set(got) == {kind}, (got, p.stdout[:2000])
        else:
            assert p.stdout == b"" and p.stderr, (p.stdout[:2000], p.stderr[:2000])
    return check


def anything(p):
    """Only the leak check matters (the outcome is pinned elsewhere or left to the tool)."""


for fmt, fargs in FORMATS.items():
    # success: HMAC with the configured secrets
    osign("hmac-success-env-%s" % fmt, jl(HMAC_RECORD), signed(fmt), fargs)
    osign("hmac-success-record-profile-%s" % fmt, jl(dict(HMAC_RECORD, profile="odd")), signed(fmt),
          fargs, env="none", file="profiles")
    osign("hmac-sha256-success-default-profile-%s" % fmt, jl(dict(HMAC_RECORD, signature_method="HMAC-SHA256")),
          signed(fmt), fargs, env="none", file="default-odd")
    # the PLAINTEXT attack (issue 7 item 1): the record supplies no secret, so it is refused
    osign("plaintext-attack-http-env-%s" % fmt, jl(PLAINTEXT_ATTACK), refused(fmt), fargs)
    osign("plaintext-attack-https-env-%s" % fmt, jl(dict(PLAINTEXT_ATTACK, url="https://attacker.example/c")),
          refused(fmt), fargs)
    osign("plaintext-attack-record-profile-%s" % fmt,
          jl(dict(PLAINTEXT_ATTACK, url="https://attacker.example/c", profile="odd")), refused(fmt), fargs,
          env="none", file="profiles")
    osign("plaintext-attack-default-profile-%s" % fmt, jl(dict(PLAINTEXT_ATTACK, url="https://attacker.example/c")),
          refused(fmt), fargs, env="none", file="default-odd")
    # the record brings its own consumer secret, but not the token secret configured for the token
    osign("plaintext-record-consumer-secret-env-token-secret-%s" % fmt,
          jl(dict(PLAINTEXT_ATTACK, url="https://attacker.example/c", consumer_secret="the record's own")),
          refused(fmt), fargs)
    # failures
    osign("input-errors-%s" % fmt, jl({"method": "GET"}, {"method": "BOGUS", "url": "https://h.example/"},
                                      {"method": "GET", "url": "ftp://h.example/"}, "a string line"),
          refused(fmt), fargs)
    osign("auth-record-profile-unknown-%s" % fmt, jl(dict(HMAC_RECORD, profile="nope")), refused(fmt, "auth"),
          fargs, file="profiles")
    osign("auth-record-profile-missing-a-field-%s" % fmt, jl(dict(HMAC_RECORD, profile="partial")), anything,
          fargs, env="none", file="profiles")
    osign("bad-json-with-secret-keys-%s" % fmt, jl(BAD_JSON_SECRETS), refused(fmt), fargs)
    osign("bad-json-missing-colon-before-secret-%s" % fmt, jl(BAD_JSON_MISSING_COLON), refused(fmt), fargs)
    osign("bad-json-with-cased-secret-keys-%s" % fmt, jl(BAD_JSON_CASED_KEYS), refused(fmt), fargs)
    osign("invalid-utf8-with-secret-keys-%s" % fmt, jl(INVALID_UTF8_SECRETS), refused(fmt), fargs)
    osign("over-long-line-with-secret-key-%s" % fmt, jl(over_long("token_secret", 300)), refused(fmt),
          fargs + ["--max-line", "100"])
    osign("over-long-line-secret-straddles-raw-cut-%s" % fmt, jl(straddling_cut()), refused(fmt),
          fargs + ["--max-line", "100"])
    osign("bad-json-secret-straddles-raw-cut-%s" % fmt, jl(straddling_cut("consumer_secret")), refused(fmt), fargs)
    osign("record-with-cased-secret-keys-%s" % fmt, jl(dict(HMAC_RECORD, **CASED_KEYS_RECORD)), anything, fargs)
    osign("rsa-key-file-is-the-credentials-file-%s" % fmt,
          jl(dict(HMAC_RECORD, signature_method="RSA-SHA1", private_key_file="@CREDENTIALS@")), refused(fmt),
          fargs, file="default-odd")

osign("rsa-key-option-is-the-credentials-file", jl(dict(HMAC_RECORD, signature_method="RSA-SHA1")),
      expect_exit(3), ["--rsa-key", "@CREDENTIALS@"], file="default-odd")
osign("credentials-file-invalid-json", jl(HMAC_RECORD), expect_exit(3), [], env="none", file="invalid-json")
osign("credentials-file-readable-by-others", jl(HMAC_RECORD), expect_exit(3), [], env="none",
      file="readable-by-others")
osign("profile-option-missing-a-field", jl(HMAC_RECORD), anything, ["--profile", "partial"], env="none",
      file="profiles")


@pytest.mark.parametrize("scenario", list(OS))
def test_oauth_sign_prints_no_secret(tool, home, scrubbed_env, scenario):
    s = OS[scenario]
    cred_path = None
    if s["file"]:
        text, mode = FILES[s["file"]]
        cred_path = write_credentials(home, text, mode)
    args = [str(cred_path) if a == "@CREDENTIALS@" else a for a in s["args"]]
    stdin = s["stdin"].replace(b"@CREDENTIALS@", str(cred_path).encode()) if cred_path else s["stdin"]
    p = run_tool(tool("oauth-sign"), args, stdin, scrubbed_env(ENVS[s["env"]]))
    assert_no_secret(p.stdout, p.stderr)
    s["check"](p)
