"""End-to-end tests of `tw-post` (spec: the tw-post issue; contract: docs/contract.md
§1-§5; X API: docs/reference/x-api.md §4.1, §5, §6, §11).

Every test runs the built binary (`$SOCIALPIPE_BIN/tw-post`) as a subprocess in a
scrubbed environment (temporary HOME and XDG_CONFIG_HOME, no other TW_*/FB_*/
SOCIALPIPE_* variables, no proxies) against the local API sandbox (sandbox/),
started once for this module and reset before every test. Every run also checks
that no secret ever appears on stdout or stderr and that every stdout line is a
well-formed envelope (contract §2: keys in order, one kind from the list).

Sections:
  1. success: shorthand, objects, -R, arguments, reply/quote/media, bearer, v1.1
  2. refused before sending: validation (weighted length, empty, quote+media), input
  3. API errors: auth, permission, duplicate, rate_limit, http, network
  4. fault matrix on POST /2/tweets (never re-sent, one envelope per record)
  5. --thread
  6. streaming, SIGINT/SIGTERM, closed stdout, ordered/unordered
  7. --dry-run, bounded memory, usage errors
  8. differential length test against Tests/tw-post/tweet_length_cases.py
  9. attacks (issue 7): SIGHUP mid-post, stdout closed mid-run and at start, stdin read
     error, usage before configuration errors, --api-base/TW_API_BASE and --cacert
     checked at start, credentials file ownership/symlinks/JSON errors/profile messages
"""
import importlib.util
import json
import os
import pathlib
import re
import signal
import subprocess
import threading
import time

import pytest
import trustme
import twitter_text

import harness  # Tests/conftest.py puts sandbox/ and Tests/ on sys.path
from toolenv import (X_DEMO_CREDENTIALS, X_OAUTH2_USER_TOKEN as OAUTH2_USER_TOKEN, LineReader, Run, Running,
                     assert_no_secrets, assert_usage_error, check_fault_row, clean_env, closed_port, credentials_path, jl,
                     parse_envelope, read_line, reap, run_with_stdin_pipe, settled, start, through_head,
                     twitter_section, vm_hwm_kib, wait_for_fault_hit, write_private, x_credentials as creds)

TOOL = "tw-post"
HERE = pathlib.Path(__file__).resolve().parent

CONSUMER_KEY = X_DEMO_CREDENTIALS["TW_CONSUMER_KEY"]
ACCESS_TOKEN = X_DEMO_CREDENTIALS["TW_ACCESS_TOKEN"]
DEMO_ID = "1000000000000000001"
READONLY = {"TW_CONSUMER_KEY": "sandbox-readonly-consumer-key",
            "TW_CONSUMER_SECRET": "sandbox-readonly-consumer-secret",
            "TW_ACCESS_TOKEN": "1000000000000000001-sandboxreadonlytoken",
            "TW_ACCESS_TOKEN_SECRET": "sandbox-readonly-token-secret"}
UNENROLLED = {"TW_CONSUMER_KEY": "sandbox-unenrolled-consumer-key",
              "TW_CONSUMER_SECRET": "sandbox-unenrolled-consumer-secret",
              "TW_ACCESS_TOKEN": "1000000000000000001-sandboxunenrolledtoken",
              "TW_ACCESS_TOKEN_SECRET": "sandbox-unenrolled-token-secret"}
MEDIA = ["1000000000000000501", "1000000000000000502", "1000000000000000503",
         "1000000000000000504", "1000000000000000505"]
EXISTING_POST = "20"

POST_PATH = "/2/tweets"
V11_PATH = "/1.1/statuses/update.json"


# --------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------

def posts_of(sb):
    """sb.posts(), after checking that no text was ever posted twice."""
    p = sb.posts("x")
    assert p["duplicates"] == [], ("a text was posted twice", p["duplicates"])
    return p


def post_requests(sb, text=None, path=POST_PATH):
    """Log entries of post requests (optionally only those whose body holds this text)."""
    entries = [e for e in sb.log(path=path) if e["method"] == "POST"]
    if text is None:
        return entries
    needle = json.dumps(text, ensure_ascii=False)[1:-1]
    out = []
    for e in entries:
        body = e["body"]
        if isinstance(body, dict):  # v1.1 form body
            if text in body.get("status", []):
                out.append(e)
        elif isinstance(body, str) and (needle in body or text in body):
            out.append(e)
    return out


def body_match(text):
    """A sandbox fault `match` for the v2 post request carrying exactly this text."""
    return {"method": "POST", "path": POST_PATH, "body_contains": json.dumps(text, ensure_ascii=False)}


def settled_posts(sb):
    """sb.posts() once no post has landed for a moment (toolenv.settled)."""
    return settled(lambda: posts_of(sb), lambda p: p["total"])


# --------------------------------------------------------------------------------------
# 1. success
# --------------------------------------------------------------------------------------

def test_posts_shorthand_objects_blank_and_crlf_lines(run, sb):
    r = run([], b'"hello shorthand"\n{"text":"hello object"}\n\n  \t\n"hello crlf"\r\n"no newline"')
    assert r.returncode == 0, r
    got = r.by_line()
    assert sorted(got) == [1, 2, 5, 6], r
    assert [e["line"] for e in r.envelopes] == [1, 2, 5, 6], "outcomes in input order"
    texts = {1: "hello shorthand", 2: "hello object", 5: "hello crlf", 6: "no newline"}
    posts = {p["text"]: p for p in posts_of(sb)["posts"]}
    for line, text in texts.items():
        e = got[line]
        assert e["ok"] is True, e
        assert e["input"] == {"text": text}, e
        assert list(e["result"]) == ["id", "text"], e
        assert re.fullmatch(r"[0-9]{19}", e["result"]["id"]), e
        assert e["result"]["text"] == text
        assert posts[text]["id"] == e["result"]["id"]
        assert posts[text]["author_id"] == DEMO_ID
    assert posts_of(sb)["total"] == 4
    # The request itself: JSON body with exactly the text, OAuth 1.0a accepted by the sandbox.
    for entry in post_requests(sb):
        assert entry["headers"]["content-type"].startswith("application/json"), entry
        assert entry["auth"]["scheme"] == "oauth1" and entry["auth"]["outcome"] == "ok", entry
        assert set(json.loads(entry["body"])) == {"text"}, entry
    assert r.stderr == b""


def test_raw_input_lines_are_texts(run, sb):
    r = run(["-R"], b'{"text":"not parsed"}\nplain words "quoted"\n')
    assert r.returncode == 0, r
    assert [e["input"] for e in r.envelopes] == [{"text": '{"text":"not parsed"}'},
                                                 {"text": 'plain words "quoted"'}]
    assert set(posts_of(sb)["counts"]) == {'{"text":"not parsed"}', 'plain words "quoted"'}


def test_positional_arguments_are_texts(run, sb):
    r = run(["first argument", "second argument"], b'"stdin is not read"\n')
    assert r.returncode == 0, r
    assert [(e["line"], e["input"], e["ok"]) for e in r.envelopes] == [
        (1, {"text": "first argument"}, True), (2, {"text": "second argument"}, True)]
    assert posts_of(sb)["counts"] == {"first argument": 1, "second argument": 1}


def test_reply_quote_and_media_fields_reach_the_api(run, sb):
    recs = [{"text": "a reply", "reply_to": EXISTING_POST},
            {"text": "a quote", "quote": EXISTING_POST},
            {"text": "with media", "media_ids": MEDIA[:2]},
            {"media_ids": [MEDIA[2]]}]                       # media only: no text needed
    # Quotes, and replies to a post whose author did not engage, are an Enterprise app's (contract §7).
    sb.control(self_serve=False)
    r = run(["--plan", "enterprise"], jl(*recs))
    assert r.returncode == 0, r
    assert all(e["ok"] for e in r.envelopes), r
    posts = posts_of(sb)["posts"]
    assert len(posts) == 4
    by_text = {p["text"]: p for p in posts}
    assert by_text["a reply"]["in_reply_to_tweet_id"] == EXISTING_POST
    assert by_text["a quote"]["quote_tweet_id"] == EXISTING_POST
    assert by_text["with media"]["media_ids"] == MEDIA[:2]
    assert by_text[""]["media_ids"] == [MEDIA[2]]
    bodies = [json.loads(e["body"]) for e in post_requests(sb)]
    assert bodies[0]["reply"] == {"in_reply_to_tweet_id": EXISTING_POST}
    assert bodies[1]["quote_tweet_id"] == EXISTING_POST
    assert bodies[2]["media"] == {"media_ids": MEDIA[:2]}


def test_oauth2_bearer_token_posts(run, sb):
    r = run([], jl("posted with a bearer"), credentials={"TW_BEARER_TOKEN": OAUTH2_USER_TOKEN})
    assert r.returncode == 0, r
    assert r.envelopes[0]["ok"] is True, r
    [entry] = post_requests(sb)
    assert entry["auth"]["scheme"] == "oauth2_user" and entry["auth"]["outcome"] == "ok", entry
    assert posts_of(sb)["counts"] == {"posted with a bearer": 1}


def test_v11_posts_a_signed_form_body(run, sb):
    text = "v1.1 & friends: 100% + \u2603 = ok"
    # A reply to a post whose author did not mention us is an Enterprise app's (contract §7).
    sb.control(self_serve=False)
    r = run(["--api", "1.1"], jl(text, {"text": "v1.1 reply", "reply_to": EXISTING_POST}))
    assert r.returncode == 0, r
    e1, e2 = r.envelopes
    assert e1["ok"] and list(e1["result"]) == ["id", "text"], r
    assert e1["result"]["text"] == text
    assert re.fullmatch(r"[0-9]{1,19}", e1["result"]["id"])
    entries = post_requests(sb, path=V11_PATH)
    assert len(entries) == 2
    for entry in entries:
        assert entry["headers"]["content-type"].startswith("application/x-www-form-urlencoded"), entry
        # The sandbox verified the OAuth 1.0a signature over the form body.
        assert entry["auth"]["scheme"] == "oauth1" and entry["auth"]["outcome"] == "ok", entry
        assert entry["status"] == 200
    assert entries[0]["body"]["status"] == [text]
    posts = {p["text"]: p for p in posts_of(sb)["posts"]}
    assert posts[text]["api"] == "1.1" and posts[text]["id"] == e1["result"]["id"]
    assert posts["v1.1 reply"]["in_reply_to_tweet_id"] == EXISTING_POST
    assert post_requests(sb) == [], "--api 1.1 must not touch /2/tweets"


# --------------------------------------------------------------------------------------
# 2. refused before sending
# --------------------------------------------------------------------------------------

def test_validation_over_280_empty_and_quote_with_media(run, sb):
    recs = ["a" * 281,                                          # 1: over by one
            "b" * 280,                                          # 2: exactly the limit: sent
            "",                                                 # 3: empty, no media
            {"text": "   "},                                    # 4: not empty: sent
            {"text": "quote and media", "quote": EXISTING_POST, "media_ids": [MEDIA[0]]},  # 5
            {"text": "quote only", "quote": EXISTING_POST}]     # 6: sent
    sb.control(self_serve=False)
    r = run(["--plan", "enterprise"], jl(*recs))
    assert r.returncode == 1, r
    got = r.by_line()
    assert sorted(got) == [1, 2, 3, 4, 5, 6]
    for line in (1, 3, 5):
        err = got[line]["error"]
        assert err["kind"] == "validation", got[line]
        assert err["attempts"] == 0 and "status" not in err, got[line]
    assert re.search(r"\b281\b", got[1]["error"]["message"]), got[1]
    assert re.search(r"\b280\b", got[1]["error"]["message"]), got[1]
    for line in (2, 4, 6):
        assert got[line]["ok"] is True, got[line]
    assert set(posts_of(sb)["counts"]) == {"b" * 280, "   ", "quote only"}
    assert len(post_requests(sb)) == 3, "validation failures are never sent"


# (text, weighted length per twitter-text config v3 as computed by twitter-text-parser)
WEIGHTED = [
    ("cjk-140", "\u4f60" * 140, 280),
    ("cjk-141", "\u4f60" * 141, 282),
    ("emoji-140", "\U0001F600" * 140, 280),
    ("emoji-141", "\U0001F600" * 141, 282),
    ("zwj-family-140", "\U0001F468\u200d\U0001F469\u200d\U0001F467\u200d\U0001F466" * 140, 280),
    ("url-counts-23", "https://example.com/" + "p" * 300 + " " + "a" * 256, 280),
    ("url-counts-23-over", "https://example.com/" + "p" * 300 + " " + "a" * 257, 281),
    ("bare-domain", "example.com " + "a" * 268, 292),
    ("nfc-150", "e\u0301" * 150, 150),
    ("nfc-281", "e\u0301" * 281, 281),
    ("em-dash-weight-1", "\u2014" * 280, 280),
    ("mixed-281", "a" * 201 + "\u4f60" * 40, 281),
    ("hangul-jamo-weight-2", "\u1100" * 141, 282),
    ("crlf-as-lf", "b" + "\r\n" * 200, 201),
]


def test_weighted_length_table_agrees_with_twitter_text():
    """Guards the table above (twitter-text-parser is in Tests/requirements.txt)."""
    for name, text, weighted in WEIGHTED:
        assert twitter_text.parse_tweet(text).weightedLength == weighted, name


@pytest.mark.parametrize("name,text,weighted", WEIGHTED, ids=[w[0] for w in WEIGHTED])
def test_length_check_uses_x_weighted_count(run, name, text, weighted):
    r = run(["--dry-run"], jl(text))
    [e] = r.envelopes
    if weighted <= 280:
        assert e["ok"] is True, "weighted length %d must pass: %r" % (weighted, e.get("error"))
        assert r.returncode == 0
    else:
        assert e["ok"] is False and e["error"]["kind"] == "validation", e
        assert re.search(r"\b%d\b" % weighted, e["error"]["message"]), \
            "message must name weighted length %d: %r" % (weighted, e["error"]["message"])
        assert r.returncode == 1


def test_max_length_and_no_length_check(run, sb):
    r = run(["--max-length", "10", "--dry-run"], jl("a" * 10, "a" * 11, "\u4f60" * 6))
    got = r.by_line()
    assert got[1]["ok"] is True, got[1]
    assert got[2]["error"]["kind"] == "validation" and re.search(r"\b11\b", got[2]["error"]["message"]), got[2]
    assert re.search(r"\b10\b", got[2]["error"]["message"]), got[2]
    assert got[3]["ok"] is False and re.search(r"\b12\b", got[3]["error"]["message"]), got[3]
    # --no-length-check: sent as is; the API's own 400 comes back as `http`.
    r = run(["--no-length-check"], jl("c" * 281))
    [e] = r.envelopes
    assert r.returncode == 1
    err = e["error"]
    assert (err["kind"], err["status"], err.get("code"), err["attempts"]) == ("http", 400, "invalid-request", 1), e
    assert "281" in err["message"], e
    assert len(post_requests(sb, "c" * 281)) == 1
    assert posts_of(sb)["total"] == 0


def test_characters_x_refuses_are_validation_errors(run, sb):
    r = run([], jl("bom \ufeff inside", "noncharacter \uffff", "noncharacter \ufffe", "fine after"))
    got = r.by_line()
    for line in (1, 2, 3):
        assert got[line]["ok"] is False and got[line]["error"]["kind"] == "validation", got[line]
    assert got[4]["ok"] is True
    assert len(post_requests(sb)) == 1, "refused texts must not be sent"


def test_input_errors_are_per_line_and_never_sent(run, sb):
    lines = [b"not json",                                                  # 1
             b"[1,2]",                                                     # 2
             b"5",                                                         # 3
             b'"\xff\xfe bad utf-8"',                                      # 4
             jl({"text": 5})[:-1],                                         # 5
             jl({"text": "r1", "reply_to": "abc"})[:-1],                   # 6
             jl({"text": "r2", "reply_to": "12a"})[:-1],                   # 7
             jl({"text": "r3", "reply_to": "1" * 20})[:-1],                # 8
             jl({"text": "r4", "reply_to": ""})[:-1],                      # 9
             jl({"text": "r5", "reply_to": True})[:-1],                    # 10
             jl({"text": "q1", "quote": "x20"})[:-1],                      # 11
             jl({"text": "m1", "media_ids": MEDIA[0]})[:-1],               # 12: not an array
             jl({"text": "m2", "media_ids": []})[:-1],                     # 13: empty
             jl({"text": "m3", "media_ids": MEDIA})[:-1],                  # 14: five
             jl({"text": "m4", "media_ids": ["abc"]})[:-1],                # 15
             jl({"text": "m5", "media_ids": [{"id": MEDIA[0]}]})[:-1],     # 16
             jl("still going")[:-1]]                                       # 17
    r = run([], b"\n".join(lines) + b"\n")
    assert r.returncode == 1, r
    got = r.by_line()
    assert sorted(got) == list(range(1, 18)), r
    for line in range(1, 17):
        assert got[line]["ok"] is False and got[line]["error"]["kind"] == "input", (line, got[line])
    for line in (1, 2, 3, 4):
        assert got[line]["input"] is None and "raw" in got[line], got[line]
    assert got[1]["raw"] == "not json"
    assert "\ufffd" in got[4]["raw"], got[4]
    assert got[17]["ok"] is True
    assert [json.loads(e["body"])["text"] for e in post_requests(sb)] == ["still going"]


def test_unparsable_lines_report_zero_attempts(run, sb):
    """contract §2: every error carries error.attempts (requests made for this record)."""
    r = run([], b"not json\n[1]\n")
    for e in r.envelopes:
        assert e["error"].get("attempts") == 0, e


def test_secret_keys_in_records_are_redacted(run, sb):
    r = run([], jl({"text": "redaction", "token_secret": "zz-record-secret", "nested": {"access_token": "zz-tok"}}))
    assert b"zz-record-secret" not in r.stdout and b"zz-tok" not in r.stdout, r
    [e] = r.envelopes
    assert e["input"]["token_secret"] == "[redacted]", e
    assert e["input"]["nested"]["access_token"] == "[redacted]", e


# --------------------------------------------------------------------------------------
# 3. API errors
# --------------------------------------------------------------------------------------

def test_wrong_secret_is_auth_and_not_retried(run, sb):
    r = run([], jl("bad signature"), credentials=creds(TW_ACCESS_TOKEN_SECRET="wrong-token-secret"))
    assert r.returncode == 1, r
    err = r.envelopes[0]["error"]
    assert (err["kind"], err["status"], err["attempts"]) == ("auth", 401, 1), r
    [entry] = post_requests(sb)
    assert entry["auth"]["outcome"] == "bad_signature"
    assert posts_of(sb)["total"] == 0


def test_no_credentials_anywhere_is_a_configuration_error_before_reading(run, sb):
    # Contract §3: exit 3 when it is known before the first record that no
    # record can have credentials (no environment, no credentials file).
    r = run([], jl("no credentials anywhere", "second"), credentials={})
    assert r.returncode == 3, r
    assert r.stdout == b"", r
    assert b"TW_CONSUMER_KEY" in r.stderr and b"tw-auth pin" in r.stderr, r
    # A dry run too (contract §3's exit table, issue 20 item 11).
    r = run(["--dry-run"], jl("no credentials anywhere"), credentials={})
    assert r.returncode == 3 and r.stdout == b"" and b"no X credentials" in r.stderr, r
    assert sb.log() == []


def test_a_record_profile_without_x_credentials_is_auth_and_the_run_goes_on(run, sb, home):
    x = {"consumer_key": "k", "consumer_secret": "s", "access_token": "t", "access_token_secret": "u"}
    write_private(credentials_path(home), {"profiles": {"fb-only": {"facebook": {"access_token": "t"}},
                                                        "x": {"twitter": x}}})
    r = run([], jl({"text": "profile without x", "profile": "fb-only"}), credentials={})
    [env] = r.envelopes
    assert env["error"]["kind"] == "auth" and env["error"]["attempts"] == 0, r
    assert env["error"]["message"] == 'profile "fb-only" has no twitter credentials: tw-auth pin --profile fb-only', r
    assert r.returncode == 1
    assert sb.log() == []


def test_credentials_file_profiles(run, sb, home):
    f = write_private(credentials_path(home), {"default": "main",
                                               "profiles": {"main": {"twitter": twitter_section(creds())},
                                                            "ro": {"twitter": twitter_section(READONLY)}}})
    r = run([], jl("from the default profile", {"text": "from ro", "profile": "ro"},
                   {"text": "from nowhere", "profile": "missing"}, "after the missing one"), credentials={})
    got = r.by_line()
    assert got[1]["ok"] is True, got[1]
    assert got[2]["error"]["kind"] == "permission" and got[2]["error"]["status"] == 403, got[2]
    # Issue 20: the message ends with the command that fixes it, for the profile in use.
    assert got[2]["error"]["message"].endswith("; authorize again with: tw-auth pin --access write --profile ro"), got[2]
    assert got[3]["error"]["kind"] == "auth" and got[3]["error"]["attempts"] == 0, got[3]
    assert got[3]["error"]["message"] == 'no profile "missing" in %s (its profiles: main, ro)' % f, got[3]
    assert got[4]["ok"] is True, got[4]
    assert set(posts_of(sb)["counts"]) == {"from the default profile", "after the missing one"}
    # A file others can read is refused before anything is read (contract §4, exit 3).
    sb.clear()
    os.chmod(f, 0o644)
    r = run([], jl("unsafe file"), credentials={})
    assert r.returncode == 3, r
    assert r.stdout == b"" and b"chmod 600" in r.stderr, r
    assert sb.log() == []


@pytest.mark.parametrize("credentials,code", [(READONLY, "oauth1-permissions"), (UNENROLLED, "client-forbidden")],
                         ids=["read-only-app", "unenrolled-app"])
def test_permission_errors(run, sb, credentials, code):
    r = run([], jl("not allowed"), credentials=credentials)
    assert r.returncode == 1, r
    err = r.envelopes[0]["error"]
    assert (err["kind"], err["status"], err.get("code"), err["attempts"]) == ("permission", 403, code, 1), r
    assert posts_of(sb)["total"] == 0


def test_duplicate_v2(run, sb):
    r = run([], jl("said twice", "said twice"))
    assert r.returncode == 1, r
    first, second = r.envelopes
    assert first["ok"] is True
    err = second["error"]
    assert (err["kind"], err["status"], err["attempts"]) == ("duplicate", 403, 1), second
    # A later run meets the same refusal.
    r = run([], jl("said twice"))
    assert r.envelopes[0]["error"]["kind"] == "duplicate", r
    assert posts_of(sb)["counts"] == {"said twice": 1}
    assert len(post_requests(sb, "said twice")) == 3


def test_duplicate_v11_code_187(run, sb):
    r = run(["--api", "1.1"], jl("v1.1 twice", "v1.1 twice"))
    assert r.returncode == 1, r
    assert r.envelopes[0]["ok"] is True
    err = r.envelopes[1]["error"]
    assert (err["kind"], err["status"], err.get("code"), err["attempts"]) == ("duplicate", 403, "187", 1), r
    assert posts_of(sb)["counts"] == {"v1.1 twice": 1}


def test_rate_limit_reset_beyond_max_wait(run, sb):
    sb.control(rate_limits={"POST /2/tweets": {"limit": 1, "window": 900}})
    r = run(["--max-wait", "5"], jl("rl first", "rl second"), timeout=8)
    assert r.elapsed < 5, "a reset beyond --max-wait must not be waited for: %r" % r
    first, second = r.envelopes
    assert first["ok"] is True, r
    assert second["error"]["kind"] == "rate_limit", r
    # A fresh process learns of the exhausted window from the 429 itself.
    r = run(["--max-wait", "5"], jl("rl third"), timeout=8)
    err = r.envelopes[0]["error"]
    assert (err["kind"], err["status"], err["attempts"]) == ("rate_limit", 429, 1), r
    assert r.elapsed < 5, r
    assert posts_of(sb)["counts"] == {"rl first": 1}
    assert len(post_requests(sb, "rl third")) == 1


def test_rate_limit_short_window_is_waited_for(run, sb):
    sb.control(rate_limits={"POST /2/tweets": {"limit": 1, "window": 2}})
    r = run([], jl("window one", "window two"), timeout=8)
    assert r.returncode == 0, r
    assert [e["ok"] for e in r.envelopes] == [True, True], r
    assert r.elapsed < 10, r
    assert posts_of(sb)["counts"] == {"window one": 1, "window two": 1}


def test_rate_limited_post_is_resent_with_a_fresh_signature(run, sb):
    """A 429 proves nothing was applied, so the post may go again once the window
    resets (2 s, within --max-wait) -- but as a new request: new nonce and timestamp."""
    sb.control(rate_limits={"POST /2/tweets": {"limit": 1, "window": 2}})
    assert run([], jl("exhausts the window")).envelopes[0]["ok"]
    r = run([], jl("after the reset"), timeout=8)       # a new process: learns of the window from the 429
    replays = [e for e in post_requests(sb) if e["auth"] and e["auth"]["outcome"] == "nonce_replayed"]
    assert replays == [], "the retry re-sent the same OAuth nonce: %r" % [(e["seq"], e["status"]) for e in replays]
    assert r.envelopes[0]["ok"] is True, r
    refused, accepted = post_requests(sb, "after the reset")
    assert (refused["status"], accepted["status"]) == (429, 201)
    assert posts_of(sb)["counts"] == {"exhausts the window": 1, "after the reset": 1}


def test_rate_limit_usage_cap_is_not_retried(run, sb):
    sb.control(usage_cap={})
    r = run([], jl("capped"), timeout=8)
    err = r.envelopes[0]["error"]
    assert (err["kind"], err["status"], err.get("code"), err["attempts"]) == ("rate_limit", 429, "usage-capped", 1), r
    assert r.elapsed < 5, r
    assert len(post_requests(sb)) == 1


def test_rate_limit_repeated_429_exhausts_retries(run, sb):
    sb.fault("status", match=body_match("always 429"), status=429, retry_after=0, count=None)
    r = run(["--retries", "2"], jl("always 429"), timeout=8)
    err = r.envelopes[0]["error"]
    assert (err["kind"], err["status"], err["attempts"]) == ("rate_limit", 429, 3), r
    assert len(post_requests(sb, "always 429")) == 3
    assert posts_of(sb)["total"] == 0


def test_rate_limit_24_hour_cap(bin_path, home):
    cfg = harness.merged_config(x={"post_caps": {"user": {"limit": 1, "window": 86400},
                                                 "app": {"limit": 10000, "window": 86400}}})
    with harness.Sandbox.start(config=cfg) as capped:
        env = clean_env(home, dict(creds(), TW_API_BASE=capped.url))
        p = subprocess.run([bin_path], input=jl("daily one", "daily two"), capture_output=True, env=env, timeout=8)
        r = Run(p, 0)
        assert r.envelopes[0]["ok"] is True, r
        assert r.envelopes[1]["error"]["kind"] == "rate_limit", r
        # A new process sends, gets the 24-hour 429, and does not wait a day or retry.
        t0 = time.monotonic()
        p = subprocess.run([bin_path], input=jl("daily three"), capture_output=True, env=env, timeout=8)
        r = Run(p, time.monotonic() - t0)
        err = r.envelopes[0]["error"]
        assert (err["kind"], err["status"], err["attempts"]) == ("rate_limit", 429, 1), r
        assert r.elapsed < 5, r
        counts = capped.posts()["counts"]
        assert counts == {"daily one": 1}, counts


def test_other_http_error_is_http(run, sb):
    sb.fault("status", match=body_match("teapot"), status=418)
    r = run([], jl("teapot"))
    err = r.envelopes[0]["error"]
    assert (err["kind"], err["status"], err["attempts"]) == ("http", 418, 1), r


def test_connection_refused_is_network(run, sb):
    port = closed_port()
    r = run(["--retries", "0", "--api-base", "http://127.0.0.1:%d" % port], jl("nowhere"), timeout=10)
    assert r.returncode == 1, r
    err = r.envelopes[0]["error"]
    assert err["kind"] == "network" and "status" not in err and err["attempts"] == 1, r
    assert err["message"].endswith(" (API base http://127.0.0.1:%d, from --api-base)" % port), err


def test_connection_refused_retries_with_backoff_and_ends_promptly(bin_path, make_env):
    """--retries 2: three connection attempts (nothing was sent, so retrying is safe),
    jittered backoff of at most 0.5 s and 1 s (+ slack): each run ends well under 10 s.
    Four runs in parallel to catch a stall that depends on the random backoff."""
    env = make_env(api_base=False)
    port = closed_port()
    procs = [start(bin_path, env, ["--retries", "2", "--api-base", "http://127.0.0.1:%d" % port])
             for _ in range(4)]
    t0 = time.monotonic()
    for p in procs:
        p.stdin.write(jl("refused %d" % p.pid))
        p.stdin.close()
    results = []
    for p in procs:
        try:
            p.wait(timeout=max(0.1, 10 - (time.monotonic() - t0)))
            results.append((p.returncode, round(time.monotonic() - t0, 1), p.stdout.read()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            results.append(("still running after 10 s", None, None))
    assert all(isinstance(rc, int) for rc, _, _ in results), results
    for rc, _, out in results:
        [e] = [parse_envelope(l) for l in out.splitlines()]
        assert rc == 1 and e["error"]["kind"] == "network" and e["error"]["attempts"] == 3, e


# --------------------------------------------------------------------------------------
# 4. fault matrix on POST /2/tweets
# --------------------------------------------------------------------------------------

# name -> (fault kind, fault fields, extra args, expected outcome of record 2, posts of record 2,
#          requests for record 2, expected error status or None)
FAULTS = {
    "500": ("status", {"status": 500}, [], "ambiguous", 0, 1, 500),
    "503": ("status", {"status": 503, "retry_after": 1}, [], "ambiguous", 0, 1, 503),
    "429-short-reset": ("status", {"status": 429, "retry_after": 1}, [], "ok", 1, 2, None),
    "reset-before": ("reset_before", {}, [], "ambiguous", 0, 1, None),
    "reset-after": ("reset_after", {}, [], "ambiguous", 1, 1, None),
    "hang": ("hang", {}, ["--timeout", "2"], "ambiguous", 0, 1, None),
    "hang-processed": ("hang", {"process": True}, ["--timeout", "2"], "ambiguous", 1, 1, None),
    "truncate": ("truncate", {"bytes": 10}, [], "ambiguous", 1, 1, None),
    "malformed-201": ("malformed", {}, [], "ambiguous", 1, 1, 201),
    "delay": ("delay", {"ms": 1200}, ["--timeout", "5"], "ok", 1, 1, None),
}


@pytest.mark.parametrize("name", list(FAULTS))
def test_fault_matrix(run, sb, name):
    kind, fields, args, outcome, posted, requests, status = FAULTS[name]
    texts = ["fault %s one" % name, "fault %s two" % name, "fault %s three" % name]
    sb.fault(kind, match=body_match(texts[1]), **fields)
    r = run(args, jl(*texts), timeout=10)
    check_fault_row(r, texts, posts_of(sb)["counts"], post_requests(sb, texts[1]), outcome, posted, requests, status,
                    hangs=name.startswith("hang"))
    if name == "429-short-reset":
        refused, retried = post_requests(sb, texts[1])
        assert refused["status"] == 429 and retried["status"] == 201
        assert retried["time"] - refused["time"] >= 0.95, \
            "Retry-After: 1 not honoured: retried %.2f s after the 429" % (retried["time"] - refused["time"])


def test_reset_after_on_a_fresh_connection_is_ambiguous(run, sb):
    """The same fault on the run's first request (no reused connection): never re-sent."""
    sb.fault("reset_after", match=body_match("fresh reset"))
    r = run([], jl("fresh reset", "fresh after"))
    e1, e2 = r.envelopes
    assert e1["ok"] is False and e1["error"]["kind"] == "ambiguous" and e1["error"]["attempts"] == 1, r
    assert e2["ok"] is True
    assert len(post_requests(sb, "fresh reset")) == 1
    assert posts_of(sb)["counts"] == {"fresh reset": 1, "fresh after": 1}


# --------------------------------------------------------------------------------------
# 5. --thread
# --------------------------------------------------------------------------------------

def test_thread_posts_reply_to_each_other(run, sb):
    r = run(["--thread"], jl("thread 1/3", "thread 2/3", "thread 3/3"))
    assert r.returncode == 0, r
    ids = [e["result"]["id"] for e in r.envelopes]
    posts = {p["text"]: p for p in posts_of(sb)["posts"]}
    assert posts["thread 1/3"]["in_reply_to_tweet_id"] is None
    assert posts["thread 2/3"]["in_reply_to_tweet_id"] == ids[0]
    assert posts["thread 3/3"]["in_reply_to_tweet_id"] == ids[1]


@pytest.mark.parametrize("failure", ["503", "duplicate"])
def test_thread_failure_cancels_the_rest(run, sb, failure):
    texts = ["broken thread 1", "broken thread 2", "broken thread 3"]
    if failure == "503":
        sb.fault("status", match=body_match(texts[1]), status=503)
        expected = "ambiguous"
    else:
        assert run([], jl(texts[1])).envelopes[0]["ok"]
        expected = "duplicate"
    r = run(["--thread"], jl(*texts))
    assert r.returncode == 1, r
    first, second, third = r.envelopes
    assert first["ok"] is True
    assert second["error"]["kind"] == expected, second
    assert third["error"]["kind"] == "cancelled" and third["error"]["attempts"] == 0, third
    assert post_requests(sb, texts[2]) == [], "the rest of a broken thread is never sent"
    assert texts[2] not in posts_of(sb)["counts"]


# --------------------------------------------------------------------------------------
# 6. streaming, signals, closed stdout, ordering
# --------------------------------------------------------------------------------------

def test_streaming_each_line_is_acted_on_when_it_arrives(bin_path, make_env, sb):
    p = start(bin_path, make_env())
    out = LineReader(p.stdout)
    try:
        p.stdin.write(jl("streamed one"))
        p.stdin.flush()
        first = out.get(timeout=5)
        assert first is not None, p.stderr.read()
        e = parse_envelope(first)
        assert e["ok"] and e["input"] == {"text": "streamed one"}, e
        assert posts_of(sb)["counts"] == {"streamed one": 1}
        p.stdin.write(jl("streamed two"))
        p.stdin.flush()
        assert parse_envelope(out.get(timeout=5))["line"] == 2
    finally:
        p.stdin.close()
    assert out.rest(timeout=5) == []
    assert p.wait(timeout=5) == 0


@pytest.mark.parametrize("signum,status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"])
def test_interrupt_mid_run(bin_path, make_env, sb, signum, status):
    sb.control(latency_ms=300)
    n = 20
    texts = ["interrupted %02d" % i for i in range(1, n + 1)]
    with Running(bin_path, make_env()) as tool:
        tool.write(jl(*texts))              # all 20 written; stdin stays open
        first = tool.out.get(timeout=10)
        assert first is not None
        lines, rc = tool.interrupt(signum)
        lines.insert(0, first)
    err = tool.stderr
    assert rc == status, (rc, err)
    assert_no_secrets(b"".join(lines), err)
    envs = [parse_envelope(l) for l in lines]
    seen = [e["line"] for e in envs]
    assert seen == list(range(1, len(seen) + 1)), ("one envelope per record read, none skipped", seen)
    assert len(seen) <= n
    kinds = ["ok" if e["ok"] else e["error"]["kind"] for e in envs]
    assert kinds[0] == "ok"
    assert "cancelled" in kinds, kinds
    tail = kinds[kinds.index("cancelled"):]
    assert set(tail) == {"cancelled"}, ("after the first cancelled record, all are cancelled", kinds)
    assert set(kinds) <= {"ok", "ambiguous", "cancelled"}, kinds
    counts = posts_of(sb)["counts"]
    sent = {json.loads(e["body"])["text"] for e in post_requests(sb)}
    for e, kind in zip(envs, kinds):
        text = e["input"]["text"]
        if kind == "ok":
            assert counts.get(text) == 1, (text, counts)
        elif kind == "cancelled":
            assert text not in sent, ("a cancelled record was sent", text)
            assert e["error"]["attempts"] == 0, e
    assert set(counts) <= {e["input"]["text"] for e, k in zip(envs, kinds) if k in ("ok", "ambiguous")}


def test_closed_stdout_ends_the_run_promptly_and_quietly(bin_path, make_env, sb):
    sb.control(latency_ms=20)
    n = 300
    first, rc, err, elapsed = through_head([bin_path], make_env(), jl(*["head %03d" % i for i in range(n)]))
    assert parse_envelope(first.splitlines()[0])["ok"] is True
    assert rc in (141, -signal.SIGPIPE, 0), rc
    assert err == b"", err
    assert elapsed < 3, elapsed
    total = settled_posts(sb)["total"]
    assert total <= 5, "no new requests after stdout closed; %d posts made" % total


def test_ordered_output_with_parallel_requests(run, sb):
    for text in ("slow one", "slow two"):
        sb.fault("delay", match=body_match(text), ms=1500)
    r = run(["-j", "4"], jl("slow one", "slow two", "fast three", "fast four"), timeout=30)
    assert r.returncode == 0, r
    assert [e["line"] for e in r.envelopes] == [1, 2, 3, 4]
    assert r.elapsed < 2.8, ("the two slow posts should be in flight together", r.elapsed)


def test_unordered_lets_fast_posts_overtake(run, sb):
    sb.fault("delay", match=body_match("slow second"), ms=1500)
    recs = ["fast first", "slow second", "fast third", "fast fourth"]
    r = run(["-j", "4", "--unordered"], jl(*recs), timeout=30)
    assert r.returncode == 0, r
    lines = [e["line"] for e in r.envelopes]
    assert sorted(lines) == [1, 2, 3, 4]
    assert lines[-1] == 2, lines
    # Same input without --unordered: input order (posts forgotten, so no duplicates).
    sb.clear()
    sb.fault("delay", match=body_match("slow second"), ms=1500)
    r = run(["-j", "4"], jl(*recs), timeout=30)
    assert [e["line"] for e in r.envelopes] == [1, 2, 3, 4], r


def test_default_parallelism_is_one(run, sb):
    for text in ("serial one", "serial two"):
        sb.fault("delay", match=body_match(text), ms=700)
    r = run([], jl("serial one", "serial two"), timeout=30)
    assert r.returncode == 0, r
    first, second = post_requests(sb)
    # The second post is not sent before the first one is answered.
    assert second["time"] >= first["time"] + 0.65, (first["time"], second["time"])


# --------------------------------------------------------------------------------------
# 7. --dry-run, memory, usage
# --------------------------------------------------------------------------------------

def test_dry_run_oauth1_shows_the_request_and_sends_nothing(run, sb):
    r = run(["--dry-run"], jl({"text": "dry \u2603", "reply_to": EXISTING_POST, "media_ids": [MEDIA[0]]}))
    assert r.returncode == 0, r
    [e] = r.envelopes
    req = e["result"]["request"]
    assert list(e["result"]) == ["request"]
    assert set(req) == {"method", "url", "headers", "body"}, req
    assert req["method"] == "POST" and req["url"] == sb.url + POST_PATH, req
    headers = {h.split(":", 1)[0].lower(): h.split(":", 1)[1].strip() for h in req["headers"]}
    assert headers["content-type"].startswith("application/json")
    auth = headers["authorization"]
    assert auth.startswith("OAuth ") and 'oauth_consumer_key="%s"' % CONSUMER_KEY in auth, auth
    assert 'oauth_token="%s"' % ACCESS_TOKEN in auth, auth
    assert json.loads(req["body"]) == {"text": "dry \u2603", "reply": {"in_reply_to_tweet_id": EXISTING_POST},
                                       "media": {"media_ids": [MEDIA[0]]}}
    assert sb.log() == []


def test_dry_run_redacts_a_bearer_token(run, sb):
    r = run(["--dry-run", "--api-base", sb.url + "/"], jl("dry bearer"),
            credentials={"TW_BEARER_TOKEN": OAUTH2_USER_TOKEN}, api_base=False)
    assert r.returncode == 0, r
    req = r.envelopes[0]["result"]["request"]
    auth = [h for h in req["headers"] if h.lower().startswith("authorization:")]
    assert auth and all(OAUTH2_USER_TOKEN not in h for h in auth), auth
    assert "redacted" in auth[0].lower(), auth
    assert req["url"] in (sb.url + POST_PATH,), req["url"]
    assert sb.log() == []


def test_dry_run_v11_form_body(run, sb):
    r = run(["--dry-run", "--api", "1.1"], jl("form & body"))
    req = r.envelopes[0]["result"]["request"]
    assert req["url"] == sb.url + V11_PATH
    assert "status=form%20%26%20body" in req["body"], req
    assert sb.log() == []


def test_memory_is_bounded_over_100k_records(bin_path, make_env, sb):
    """100,000 records through --dry-run: 100,000 envelopes, peak RSS under 40 MiB.
    stdin stays open until every envelope is read, so the peak (VmHWM of the
    process itself, unaffected by the fork from this big Python process) is read
    while tw-post is still alive; then stdin closes and it must exit 0."""
    if not os.path.exists("/proc/self/status"):
        pytest.skip("needs /proc for VmHWM")
    n = 100_000
    p = start(bin_path, make_env(), ["--dry-run"])

    def feed():
        try:
            for base in range(0, n, 1000):
                p.stdin.write("".join('{"text":"memory record %d"}\n' % i
                                      for i in range(base, base + 1000)).encode())
            p.stdin.flush()
        except BrokenPipeError:
            pass

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    t0 = time.monotonic()
    count, last, peak = 0, None, 0
    try:
        for raw in p.stdout:
            count += 1
            last = raw
            if count % 10_000 == 0:
                peak = max(peak, vm_hwm_kib(p.pid))
            if count == n:
                break
        peak = max(peak, vm_hwm_kib(p.pid))
        elapsed = time.monotonic() - t0
        writer.join(timeout=10)
        p.stdin.close()
        rest = p.stdout.read()
        rc = p.wait(timeout=10)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert count == n and rest == b"", (count, rest[:200])
    assert rc == 0, p.stderr.read()
    assert peak / 1024 < 40, "peak RSS %.1f MiB over %d records" % (peak / 1024, n)
    e = parse_envelope(last)
    assert e["ok"] and e["line"] == n and e["input"] == {"text": "memory record %d" % (n - 1)}
    assert "request" in e["result"]
    assert elapsed < 30, elapsed
    assert sb.log() == []


@pytest.mark.parametrize("args", [["--bogus"], ["--api", "3"], ["--parallel", "0"], ["-j", "x"],
                                  ["--max-length", "abc"], ["--retries", "-1"], ["--timeout", "soon"]],
                         ids=lambda a: " ".join(a))
def test_usage_errors_exit_2_and_send_nothing(run, sb, args):
    r = run(args, jl("never read"))
    assert_usage_error(r, TOOL)
    assert sb.log() == []


def test_a_typo_suggests_the_option_and_a_bad_variable_is_named(run, sb):
    r = run(["--trhead"], jl("never read"))
    assert_usage_error(r, TOOL)
    assert r.stderr.startswith(b"tw-post: unknown option '--trhead': did you mean --thread?\n"), r
    # A bad TW_API_BASE is no misuse of the command line: the variable is named, --help is not offered.
    r = run([], jl("never read"), api_base=False, extra={"TW_API_BASE": "ftp://api.example"})
    assert r.returncode == 2 and r.stdout == b"", r
    assert r.stderr == b"tw-post: TW_API_BASE: url scheme must be http or https: ftp://api.example\n", r
    assert sb.log() == []


def test_revoked_and_missing_scope_tokens_end_with_the_command_that_fixes_them(run, sb, home):
    """Issue 20: an `auth` or `permission` error ends with the tw-auth command for the
    profile in use, by its method; a missing OAuth 2.0 scope is named."""
    write_private(credentials_path(home), {"default": "main", "profiles": {
        "main": {"twitter": twitter_section(creds())},
        "reader": {"twitter": {"oauth2": {"access_token": "sandbox-oauth2-read-token", "client_id": "sandbox-oauth2-client-id",
                                          "scopes": "tweet.read users.read follows.read"}}}}})
    sb.control(revoke_token=ACCESS_TOKEN)
    r = run([], jl("revoked", {"text": "no scope", "profile": "reader"}), credentials={})
    assert r.returncode == 1, r
    revoked, unscoped = r.envelopes
    assert (revoked["error"]["kind"], revoked["error"]["status"]) == ("auth", 401), revoked
    assert revoked["error"]["message"] == "Unauthorized; authorize again with: tw-auth pin --profile main", revoked
    assert (unscoped["error"]["kind"], unscoped["error"]["status"]) == ("permission", 403), unscoped
    assert unscoped["error"]["message"] == ('Forbidden; the OAuth 2.0 token of profile "reader" lacks the scope tweet.write; '
                                            "authorize again with: tw-auth oauth2 --profile reader "
                                            "--scopes 'tweet.read users.read follows.read tweet.write'"), unscoped
    assert posts_of(sb)["total"] == 0


def test_help_and_version(bin_path, make_env):
    p = subprocess.run([bin_path, "--help"], capture_output=True, env=make_env(), timeout=10)
    assert p.returncode == 0 and b"--thread" in p.stdout and b"--max-length" in p.stdout, p
    p = subprocess.run([bin_path, "--version"], capture_output=True, env=make_env(), timeout=10)
    assert p.returncode == 0 and re.fullmatch(rb"tw-post \S+\n", p.stdout), p


# --------------------------------------------------------------------------------------
# 8. differential length test (cases owned by another module)
# --------------------------------------------------------------------------------------

def _load_length_cases():
    spec = importlib.util.spec_from_file_location("tweet_length_cases", HERE / "tweet_length_cases.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_weighted_length_differential(run, sb):
    """Every text of tweet_length_cases.CASES through one --dry-run process at the default
    limit: accepted iff X's weighted length (expected(), or EXCLUDED_EXPECTED where the
    oracle is knowingly wrong) is at most 280; refused as `validation` naming that length
    otherwise. Empty texts and texts with U+FFFE/U+FEFF/U+FFFF must be `validation` too."""
    module = _load_length_cases()
    overrides = module.EXCLUDED_EXPECTED
    texts = module.CASES
    assert len(texts) > 1500 and all(isinstance(t, str) for t in texts), "CASES is not the texts the module promises"
    assert set(module.ORACLE_EXCLUDED) <= set(texts) and set(overrides) == set(module.ORACLE_EXCLUDED)
    r = run(["--dry-run"], jl(*[{"text": t} for t in texts]), timeout=60)
    got = r.by_line()
    assert sorted(got) == list(range(1, len(texts) + 1))
    wrong = []
    for i, text in enumerate(texts, 1):
        e = got[i]
        outcome = "accepted" if e["ok"] else "%s: %s" % (e["error"]["kind"], e["error"]["message"])
        if text == "" or any(c in text for c in "\ufffe\ufeff\uffff"):
            if e["ok"] or e["error"]["kind"] != "validation":
                wrong.append((text[:60], "validation", outcome))
            continue
        weighted = overrides[text] if text in overrides else module.expected(text)
        if weighted <= 280:
            if not e["ok"]:
                wrong.append((text[:60], weighted, outcome))
        elif e["ok"] or e["error"]["kind"] != "validation" \
                or not re.search(r"\b%d\b" % weighted, e["error"]["message"]):
            wrong.append((text[:60], weighted, outcome))
    assert not wrong, "%d of %d cases disagree; first ones (text[:60], expected weighted length, outcome): %r" % (
        len(wrong), len(texts), wrong[:8])


# --------------------------------------------------------------------------------------
# 9. attacks (issue 7)
# --------------------------------------------------------------------------------------

NOBODY = 65534
needs_root = pytest.mark.skipif(os.geteuid() != 0,
                                reason="needs root to give a file to another owner (chown %d)" % NOBODY)


def test_sighup_mid_post_writes_its_envelope_then_exits_129(bin_path, make_env, sb):
    """SIGHUP is handled like SIGTERM (issue 7 item 5): the post in flight is
    answered on stdout before the exit, records not yet sent end `cancelled`,
    exit status 129 -- never a post made without its envelope."""
    texts = ["hangup one", "hangup two", "hangup three"]
    fault = sb.fault("delay", match=body_match(texts[0]), ms=1500)
    p = start(bin_path, make_env())
    out = LineReader(p.stdout)
    try:
        p.stdin.write(jl(*texts))            # stdin stays open, like a terminal's
        p.stdin.flush()
        # 10 s only bounds a run that never sends; normally this takes milliseconds.
        assert wait_for_fault_hit(sb, fault, timeout=10), "the first post never reached the sandbox"
        p.send_signal(signal.SIGHUP)         # mid-post: the sandbox holds it for 1.5 s
        lines = out.rest(timeout=10)
        rc = p.wait(timeout=5)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        p.stdin.close()
        err = p.stderr.read()
        # The delayed request completes even when tw-post is gone; let it land
        # before the next test resets the sandbox.
        deadline = time.monotonic() + 5
        while not sb.log() and time.monotonic() < deadline:
            time.sleep(0.05)
    assert_no_secrets(b"".join(lines), err)
    posts = posts_of(sb)
    assert posts["counts"] == {texts[0]: 1}, posts["counts"]
    envs = [parse_envelope(l) for l in lines]
    seen = [e["line"] for e in envs]
    assert seen, ("the post in flight was made but has no envelope", rc, err)
    assert seen == list(range(1, len(seen) + 1)), ("one envelope per record read", seen)
    first = envs[0]
    assert first["ok"] is True, ("the post in flight is answered before the exit", first)
    assert first["result"]["id"] == posts["posts"][0]["id"], (first, posts["posts"])
    for e in envs[1:]:
        assert e["error"]["kind"] == "cancelled" and e["error"]["attempts"] == 0, e
    assert rc == 129, ("SIGHUP ends the run as SIGTERM does, with status 129", rc, err)


def test_closed_stdout_stops_new_requests_at_once(bin_path, make_env, sb):
    """Issue 7 item 6: when the reader of stdout goes away (`| head -1`), a record
    that arrives afterwards is not posted -- tw-post notices the closed pipe
    itself instead of at its next write -- and it exits 141 quietly (contract §3)."""
    p = start(bin_path, make_env())
    try:
        p.stdin.write(jl("reader present"))
        p.stdin.flush()
        first = read_line(p.stdout.fileno(), timeout=10)
        assert first is not None, "no envelope for the first record"
        assert parse_envelope(first)["ok"] is True, first
        p.stdout.close()                      # the reader is gone
        time.sleep(0.5)                       # lets tw-post see it; not a timing assertion
        try:
            p.stdin.write(jl("reader gone"))
            p.stdin.flush()
        except BrokenPipeError:
            pass                              # tw-post already ended: fine
        try:
            p.stdin.close()
        except BrokenPipeError:
            pass
        rc = p.wait(timeout=10)
    finally:
        err = reap(p)
    assert post_requests(sb, "reader gone") == [], "a record that came after stdout closed was sent"
    assert posts_of(sb)["counts"] == {"reader present": 1}
    # 141 as the contract says; death by SIGPIPE is the same status to a shell.
    assert rc in (141, -signal.SIGPIPE), (rc, err)
    assert err == b"", err


def test_stdout_closed_at_start_is_a_configuration_error(bin_path, make_env, sb):
    """`tw-post >&-` (issue 7 item 6): exit 3 before reading, with a message,
    instead of posting with nowhere to report the outcome."""
    data = jl("into the void")
    r, left = run_with_stdin_pipe(["sh", "-c", 'exec "$0" "$@" >&-', bin_path], make_env(), data)
    assert r.returncode == 3, r
    assert "standard output" in r.stderr.decode("utf-8", "replace").lower(), r
    assert sb.log() == [], "nothing may be posted"
    assert left == data, "stdin must not be read"


def test_stdin_read_error_is_a_failure(bin_path, make_env, sb, tmp_path):
    """`tw-post < DIR` (issue 7 item 7): the read error is reported and the run fails."""
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        proc = subprocess.run([bin_path], stdin=fd, capture_output=True, env=make_env(), timeout=10)
    finally:
        os.close(fd)
    r = Run(proc, 0)
    assert_no_secrets(r.stdout, r.stderr)
    assert r.returncode == 1, r
    assert "standard input" in r.stderr.decode("utf-8", "replace").lower(), r
    assert sb.log() == []


@pytest.mark.parametrize("args", [["-j", "0"], ["--timeout", "0"], ["--api-base", "ftp://x"]],
                         ids=lambda a: " ".join(a))
def test_usage_errors_win_over_missing_credentials(run, sb, args):
    """Issue 7 item 8: a bad invocation is exit 2 even when no credentials exist
    anywhere (which alone would be exit 3)."""
    r = run(args, jl("never read"), credentials={}, api_base=False)
    assert r.returncode == 2, r
    assert r.stdout == b"" and r.stderr.startswith(b"tw-post: "), r
    assert sb.log() == []


def bad_api_bases(sb):
    """(name, base) pairs that must be refused; where they have a host, it is the
    sandbox, so a request sent anyway shows in its log."""
    hostport = "127.0.0.1:%d" % sb.port
    return [("ftp scheme", "ftp://" + hostport),
            ("no host", "http://"),
            ("no scheme", hostport),
            ("userinfo", "http://u:p@" + hostport),
            ("query", sb.url + "/p?q=1"),
            ("fragment", sb.url + "/#f"),
            ("space", sb.url + "/a b"),
            ("tab", sb.url + "/a\tb"),
            ("control character", sb.url + "/\x01"),
            ("port out of range", "http://127.0.0.1:99999")]


@pytest.mark.parametrize("how", ["option", "env"])
def test_api_base_must_be_an_absolute_http_url(run, sb, how):
    """Issue 7 item 9: --api-base / TW_API_BASE is an absolute http(s)://host[:port][/path]
    URL without whitespace, control characters, userinfo, query or fragment; anything
    else is a usage error (exit 2) before anything is read or sent."""
    def invoke(base, text):
        if how == "option":
            return run(["--api-base", base], jl(text), api_base=False)
        return run([], jl(text), api_base=False, extra={"TW_API_BASE": base})

    wrong = []
    for name, base in bad_api_bases(sb):
        r = invoke(base, "api base: " + name)
        if r.returncode != 2 or r.stdout != b"" or not r.stderr.startswith(b"tw-post: "):
            wrong.append((name, base, r.returncode, r.stdout[:160], r.stderr[:160]))
    assert not wrong, "bases not refused with exit 2: %r" % wrong
    assert sb.log() == [], "a request was sent to a refused base"
    # The same way of passing a valid base with a path prefix still works.
    r = invoke(sb.url + "/", "api base with a slash, by %s" % how)
    assert r.returncode == 0 and r.envelopes[0]["ok"] is True, r


@pytest.fixture(scope="module")
def tls_sandbox_proc():
    with harness.Sandbox.start(tls=True) as s:
        yield s


@pytest.fixture
def tls_sb(tls_sandbox_proc):
    tls_sandbox_proc.clear()
    yield tls_sandbox_proc


def test_cacert_that_is_not_a_pem_bundle_is_a_configuration_error(bin_path, home, tls_sb, tmp_path):
    """Issue 7 item 9: --cacert FILE must be a readable PEM bundle with a certificate;
    otherwise exit 3 at start naming the file, stdin unread, nothing sent (not a
    `network` error on every record). A real CA bundle is accepted."""
    empty = tmp_path / "empty.pem"
    empty.write_bytes(b"")
    garbage = tmp_path / "garbage.pem"
    garbage.write_bytes(bytes(range(256)) * 8)
    key_only = tmp_path / "key-only.pem"
    trustme.CA().private_key_pem.write_to_path(str(key_only))
    cases = [("missing file", tmp_path / "absent.pem"), ("directory", tmp_path), ("empty file", empty),
             ("garbage bytes", garbage), ("private key, no certificate", key_only)]
    env = clean_env(home, dict(creds(), TW_API_BASE=tls_sb.url))
    data = jl("never read")
    wrong = []
    for name, path in cases:
        r, left = run_with_stdin_pipe([bin_path, "--cacert", str(path)], env, data)
        if r.returncode != 3 or r.stdout != b"" or str(path).encode() not in r.stderr or left != data:
            wrong.append((name, r.returncode, r.stdout[:160], r.stderr[:200], "stdin read" if left != data else ""))
    assert not wrong, "CA files not refused at start (exit 3, naming the file, stdin unread): %r" % wrong
    assert tls_sb.log() == []
    r, _ = run_with_stdin_pipe([bin_path, "--cacert", tls_sb.ca_file], env, jl("trusted through --cacert"))
    assert r.returncode == 0 and r.envelopes[0]["ok"] is True, r


@needs_root
def test_credentials_file_owned_by_another_user_is_refused(run, sb, home):
    f = write_private(credentials_path(home),
                      {"default": "kestrel", "profiles": {"kestrel": {"twitter": twitter_section(creds())}}})
    os.chown(f, NOBODY, NOBODY)
    r = run([], jl("through a file someone else owns"), credentials={})
    assert r.returncode == 3, r
    assert r.stdout == b"", r
    msg = r.stderr.decode("utf-8", "replace")
    assert str(f) in msg and re.search(r"owner|owned", msg, re.I), r
    assert sb.log() == []


@needs_root
def test_credentials_symlink_to_another_users_file_is_refused(run, sb, home):
    target = home / "elsewhere" / "real-credentials.json"
    target.parent.mkdir()
    write_private(target, {"default": "kestrel", "profiles": {"kestrel": {"twitter": twitter_section(creds())}}})
    link = credentials_path(home)
    link.symlink_to(target)
    # A symlink to the user's own 0600 file is fine.
    r = run([], jl("through my own symlink"), credentials={})
    assert r.returncode == 0 and r.envelopes[0]["ok"] is True, r
    sb.clear()
    os.chown(target, NOBODY, NOBODY)
    assert os.lstat(link).st_uid == os.geteuid()      # the link itself is still the user's
    r = run([], jl("through a symlink to someone else's file"), credentials={})
    assert r.returncode == 3, r
    assert r.stdout == b"", r
    msg = r.stderr.decode("utf-8", "replace")
    assert (str(link) in msg or str(target) in msg) and re.search(r"owner|owned", msg, re.I), r
    assert sb.log() == []


def test_credentials_file_that_is_not_json_says_where(run, sb, home):
    lines = ['{"default": "kestrel",',
             ' "profiles": {"kestrel": {"twitter": @}},',
             ' "other": 1}']
    column = lines[1].index("@") + 1          # 1-based column of the offending character (jansson's)
    write_private(credentials_path(home), "\n".join(lines) + "\n")
    r = run([], jl("never read"), credentials={})
    assert r.returncode == 3, r
    assert r.stdout == b"", r
    assert re.search(r"invalid JSON at line 2, column %d\b" % column,
                     r.stderr.decode("utf-8", "replace"), re.I), r
    assert sb.log() == []


def test_profile_missing_a_field_names_the_profile_and_the_field(run, sb, home):
    section = twitter_section(creds())
    del section["consumer_secret"]
    write_private(credentials_path(home), {"default": "kestrel", "profiles": {"kestrel": {"twitter": section}}})
    r = run([], jl("incomplete one", "incomplete two"), credentials={})
    assert r.returncode == 1, r
    assert [e["line"] for e in r.envelopes] == [1, 2], r
    for e in r.envelopes:
        err = e["error"]
        assert err["kind"] == "auth" and err["attempts"] == 0, e
        assert "kestrel" in err["message"] and "consumer_secret" in err["message"], e
    assert sb.log() == []


def test_unknown_profile_option_lists_the_profiles_that_exist(run, sb, home):
    tw = twitter_section(creds())
    write_private(credentials_path(home),
                  {"default": "zebra", "profiles": {"zebra": {"twitter": tw}, "quokka": {"twitter": tw}}})
    r = run(["--profile", "nope"], jl("never read"), credentials={})
    assert r.returncode == 3, r
    assert r.stdout == b"", r
    msg = r.stderr.decode("utf-8", "replace")
    assert "nope" in msg and "zebra" in msg and "quokka" in msg, r
    assert sb.log() == []


def test_unknown_record_profile_lists_the_profiles_that_exist(run, sb, home):
    tw = twitter_section(creds())
    write_private(credentials_path(home), {"profiles": {"zebra": {"twitter": tw}, "quokka": {"twitter": tw}}})
    r = run([], jl({"text": "from an unknown profile", "profile": "nope"}, "from the environment"))
    assert r.returncode == 1, r
    first, second = r.envelopes
    err = first["error"]
    assert err["kind"] == "auth" and err["attempts"] == 0, first
    assert "zebra" in err["message"] and "quokka" in err["message"], first
    assert second["ok"] is True, second
    assert posts_of(sb)["counts"] == {"from the environment": 1}
