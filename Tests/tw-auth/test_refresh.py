"""The X tools' use of a profile's OAuth 2.0 user token (issue 11, "OAuth 2.0 user
tokens in the other X tools" and "The credentials file, written safely"): tw-post and
tw-friends refresh `twitter.oauth2` before use when it expires within 60 s and once
after a 401; refresh tokens rotate (single use), so the new pair is written to the
file, under the lock `<file>.lock`, before it is used, and a process that finds the
file already refreshed by another uses that pair; a token that cannot be refreshed
ends the record as `auth`, naming `tw-auth oauth2 --profile NAME`; a crash between
the temporary file's write and its rename leaves the old file whole.

The profiles start from the sandbox's refreshable demo pair (sandbox/README.md §2:
`sandbox-oauth2-refreshable-token` / `sandbox-oauth2-refresh-token` of the public
client `sandbox-oauth2-client-id`); `reset` before every test makes it unused again.
Refreshes are counted in the sandbox's log (endpoint
`POST /2/oauth2/token grant_type=refresh_token`); a refresh token used twice shows as
`token_reuse: true` there and revokes its whole family.
"""
import calendar
import fcntl
import json
import os
import signal
import stat
import subprocess
import time

import pytest
import requests

from toolenv import SANDBOX_SECRETS, assert_no_secrets, clean_env, credentials_path, jl, run_tool, write_private

PUBLIC = "sandbox-oauth2-client-id"
REFRESHABLE, REFRESH = "sandbox-oauth2-refreshable-token", "sandbox-oauth2-refresh-token"
SCOPES = "tweet.read tweet.write users.read follows.read offline.access"
DEMO_ID = "1000000000000000001"
PROFILE = "kestrel"
REFRESH_ENDPOINT = "POST /2/oauth2/token grant_type=refresh_token"
REAUTHORIZE = "tw-auth oauth2 --profile " + PROFILE
SECRETS = SANDBOX_SECRETS + (REFRESHABLE, REFRESH, "sandbox-oauth2-client-secret")
# Another profile and keys no tool knows: every write keeps them as they were.
BYSTANDER = {"twitter": {"bearer_token": "sandbox-bearer-token", "x-note": "kept"}, "facebook": {"page_id": "1"}}


# --------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------

def iso_in(seconds):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + seconds))


def epoch(iso):
    return calendar.timegm(time.strptime(iso, "%Y-%m-%dT%H:%M:%SZ"))


def write_profile(path, expires_in, access=REFRESHABLE, refresh=REFRESH):
    """The credentials file: profile kestrel (the default) with only an OAuth 2.0 user token."""
    section = {"client_id": PUBLIC, "access_token": access, "refresh_token": refresh,
               "expires_at": iso_in(expires_in), "scopes": SCOPES}
    write_private(path, {"default": PROFILE, "x-top": [1, 2],
                         "profiles": {PROFILE: {"twitter": {"oauth2": section}}, "bystander": BYSTANDER}})
    return path.read_bytes()


def oauth2_of(path):
    doc = json.loads(path.read_text())
    assert doc["profiles"]["bystander"] == BYSTANDER and doc["x-top"] == [1, 2], ("the rest is kept", doc)
    return doc["profiles"][PROFILE]["twitter"]["oauth2"]


def mode(path):
    return stat.S_IMODE(os.lstat(path).st_mode)


def refreshes(sb):
    """Successful refreshes in the log; no refresh token was ever used twice."""
    log = sb.log()
    assert not [e for e in log if e.get("token_reuse")], ("a refresh token was used twice", log)
    return [e for e in log if e["endpoint"] == REFRESH_ENDPOINT and e["status"] == 200]


def post_requests(sb):
    return [e for e in sb.log(path="/2/tweets") if e["method"] == "POST"]


def me(sb, token):
    return requests.get(sb.url + "/2/users/me", headers={"Authorization": "Bearer " + token}, timeout=10)


def refresh_with(sb, token):
    return requests.post(sb.url + "/2/oauth2/token", timeout=10,
                         data={"grant_type": "refresh_token", "refresh_token": token, "client_id": PUBLIC})


def check_new_pair(sb, path, old_access=REFRESHABLE, old_refresh=REFRESH):
    """The file holds a new pair, 0600, whose access token works and expires in about two hours."""
    o2 = oauth2_of(path)
    assert o2["access_token"] != old_access and o2["refresh_token"] != old_refresh, o2
    assert o2["client_id"] == PUBLIC and o2["scopes"] == SCOPES, o2
    assert abs(epoch(o2["expires_at"]) - (time.time() + 7200)) < 60, o2
    assert mode(path) == 0o600
    assert me(sb, o2["access_token"]).status_code == 200
    return o2


@pytest.fixture
def cred(home):
    return credentials_path(home)


@pytest.fixture
def x_env(home, sb):
    """The scrubbed environment: TW_API_BASE at the sandbox and no TW_* credentials, so the
    default profile of the credentials file is what signs."""
    return clean_env(home, {"TW_API_BASE": sb.url})


@pytest.fixture
def x_run(tool, x_env, cred):
    """x_run(name, args, stdin) -> toolenv.Run, checked for the demo secrets and for every
    token the credentials file holds afterwards."""
    def _run(name, args=(), stdin=b"", timeout=30):
        r = run_tool(tool(name), x_env, args, stdin, timeout, secrets=SECRETS)
        o2 = oauth2_of(cred)
        assert_no_secrets(r.stdout, r.stderr, secrets=(o2["access_token"], o2["refresh_token"]))
        return r
    return _run


# --------------------------------------------------------------------------------------
# tw-post
# --------------------------------------------------------------------------------------

def test_an_expiring_token_is_refreshed_once_before_the_post(x_run, sb, cred):
    write_profile(cred, 30)                  # within the 60 s margin
    r = x_run("tw-post", ("-v",), jl("posted after a refresh"))     # -v: requests on stderr, secrets redacted
    assert r.returncode == 0, r
    [env] = r.envelopes
    assert env["ok"] is True, env
    [refresh] = refreshes(sb)
    [post] = post_requests(sb)
    assert refresh["seq"] < post["seq"], "refreshed before the post"
    assert refresh["body"]["client_id"] == [PUBLIC], refresh
    assert post["status"] == 201 and post["auth"]["scheme"] == "oauth2_user" and post["auth"]["outcome"] == "ok", post
    check_new_pair(sb, cred)
    # The refresh ran under the lock beside the file, created private.
    assert mode(str(cred) + ".lock") == 0o600
    assert sorted(os.listdir(cred.parent)) == ["credentials.json", "credentials.json.lock"], "no temporary left"
    # The old refresh token is spent (this also revokes the family: checked last).
    gone = refresh_with(sb, REFRESH)
    assert gone.status_code == 400 and gone.json()["error"] == "invalid_request", gone.text


def test_a_token_that_does_not_expire_soon_is_not_refreshed(x_run, sb, cred):
    before = write_profile(cred, 600)
    r = x_run("tw-post", (), jl("no refresh needed"))
    assert r.returncode == 0, r
    assert refreshes(sb) == []
    assert cred.read_bytes() == before, "nothing written"


def test_a_401_refreshes_once_and_the_post_goes_through(x_run, sb, cred):
    write_profile(cred, 3600)                # the file says: good for an hour
    sb.control(expire_token=REFRESHABLE)     # X says: expired early
    r = x_run("tw-post", (), jl("posted after a 401"))
    assert r.returncode == 0, r
    assert r.envelopes[0]["ok"] is True, r
    posts = post_requests(sb)
    assert [e["status"] for e in posts] == [401, 201], posts
    [refresh] = refreshes(sb)
    assert posts[0]["seq"] < refresh["seq"] < posts[1]["seq"], (posts, refresh)
    assert sb.posts("x")["counts"] == {"posted after a 401": 1}, "exactly one post"
    check_new_pair(sb, cred)


def test_a_second_401_after_the_refresh_is_not_retried_again(x_run, sb, cred):
    write_profile(cred, 3600)
    sb.fault("status", match={"method": "POST", "path": "/2/tweets"}, status=401, count=2)
    r = x_run("tw-post", (), jl("refused twice"))
    assert r.returncode == 1, r
    [env] = r.envelopes
    assert env["ok"] is False and env["error"]["kind"] == "auth" and env["error"]["status"] == 401, env
    assert len(post_requests(sb)) == 2, "one refresh, one more try, no loop"
    assert len(refreshes(sb)) == 1
    assert sb.posts("x")["total"] == 0


def test_two_runs_refreshing_at_the_same_moment_both_succeed(tool, x_env, sb, cred):
    write_profile(cred, 30)
    # Slow refreshes widen the window in which the second run finds the first one's lock.
    sb.fault("delay", match={"endpoint": REFRESH_ENDPOINT}, ms=400, count=2)
    procs = [subprocess.Popen([tool("tw-post")], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=x_env) for _ in range(2)]
    for i, p in enumerate(procs):
        p.stdin.write(jl("concurrent run %d" % i))
    for p in procs:
        p.stdin.close()
    outs = [(p.wait(timeout=30), p.stdout.read(), p.stderr.read()) for p in procs]
    for p in procs:
        p.stdout.close()
        p.stderr.close()
    for rc, out, err in outs:
        assert rc == 0, (rc, out, err)
        assert json.loads(out)["ok"] is True, out
        assert_no_secrets(out, err, secrets=SECRETS)
    assert sb.posts("x")["counts"] == {"concurrent run 0": 1, "concurrent run 1": 1}
    done = refreshes(sb)                     # asserts: no token_reuse
    assert len(done) in (1, 2), done
    assert len(done) == 1 or done[0]["time"] + 0.3 <= done[1]["time"], ("two refreshes only one after the other", done)
    assert all(e["status"] in (201,) for e in post_requests(sb)), post_requests(sb)
    # The file holds the last pair, and it is valid: its refresh token was never used.
    o2 = check_new_pair(sb, cred)
    for _, out, err in outs:
        assert_no_secrets(out, err, secrets=(o2["access_token"], o2["refresh_token"]))
    assert refresh_with(sb, o2["refresh_token"]).status_code == 200


def test_a_pair_another_process_wrote_meanwhile_is_used(tool, x_env, sb, cred):
    # Another process holds the lock and refreshes; tw-post waits for the lock, finds
    # the new pair in the file, and uses it instead of spending the old refresh token.
    write_profile(cred, 30)
    lock = os.open(str(cred) + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        p = subprocess.Popen([tool("tw-post")], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=x_env)
        p.stdin.write(jl("after another's refresh"))
        p.stdin.close()
        time.sleep(0.5)
        assert p.poll() is None and refreshes(sb) == [], "tw-post waits for the lock before refreshing"
        answer = refresh_with(sb, REFRESH)
        assert answer.status_code == 200, answer.text
        fresh = answer.json()
        doc = json.loads(cred.read_text())
        doc["profiles"][PROFILE]["twitter"]["oauth2"].update(
            access_token=fresh["access_token"], refresh_token=fresh["refresh_token"], expires_at=iso_in(7200))
        write_private(str(cred) + ".new", doc)
        os.rename(str(cred) + ".new", cred)
    finally:
        fcntl.flock(lock, fcntl.LOCK_UN)
        os.close(lock)
    rc, out, err = p.wait(timeout=30), p.stdout.read(), p.stderr.read()
    p.stdout.close()
    p.stderr.close()
    assert rc == 0 and json.loads(out)["ok"] is True, (rc, out, err)
    assert_no_secrets(out, err, secrets=SECRETS + (fresh["access_token"], fresh["refresh_token"]))
    assert len(refreshes(sb)) == 1, "only the other process refreshed"
    [post] = post_requests(sb)
    assert post["status"] == 201, post
    o2 = oauth2_of(cred)
    assert (o2["access_token"], o2["refresh_token"]) == (fresh["access_token"], fresh["refresh_token"]), o2
    assert refresh_with(sb, o2["refresh_token"]).status_code == 200, "the pair in the file is still unused"


def test_a_refresh_that_fails_ends_the_record_as_auth(x_run, sb, cred):
    before = write_profile(cred, 30)
    sb.control(revoke_token=REFRESH)
    r = x_run("tw-post", (), jl("never posted"))
    assert r.returncode == 1, r
    [env] = r.envelopes
    assert env["ok"] is False and env["error"]["kind"] == "auth", env
    assert REAUTHORIZE in env["error"]["message"], env
    assert post_requests(sb) == [] and sb.posts("x")["total"] == 0
    assert cred.read_bytes() == before, "a failed refresh writes nothing"


def test_records_waiting_together_share_one_refresh_and_count_it(x_run, sb, cred):
    # Three posts at once wait for one refresh; each counts it among its attempts.
    write_profile(cred, 30)
    sb.fault("status", match={"method": "POST", "path": "/2/tweets", "body_contains": "third"}, status=403)
    r = x_run("tw-post", ("-j", "3"), jl("first shared", "second shared", "third shared"))
    assert r.returncode == 1, r
    assert [e["ok"] for e in r.envelopes] == [True, True, False], r
    error = r.envelopes[2]["error"]
    assert (error["kind"], error["status"], error["attempts"]) == ("permission", 403, 2), error
    [refresh] = refreshes(sb)
    posts = post_requests(sb)
    assert len(posts) == 3 and all(refresh["seq"] < e["seq"] for e in posts), (refresh, posts)
    check_new_pair(sb, cred)


def test_a_refresh_that_fails_ends_every_record_waiting_for_it(x_run, sb, cred):
    write_profile(cred, 30)
    sb.control(revoke_token=REFRESH)
    r = x_run("tw-post", ("-j", "3"), jl("one", "two", "three"))
    assert r.returncode == 1, r
    message = ('the OAuth 2.0 token of profile "kestrel" could not be refreshed: invalid_request: Value passed for '
               'the token was invalid.; authorize again with: ' + REAUTHORIZE)
    assert [e["error"] for e in r.envelopes] == [{"kind": "auth", "status": 400, "code": "invalid_request",
                                                 "message": message, "attempts": 1}] * 3, r
    assert [e["status"] for e in sb.log() if e["endpoint"] == REFRESH_ENDPOINT] == [400], "one refresh for all"
    assert post_requests(sb) == []


def test_records_refused_together_share_one_refresh(x_run, sb, cred):
    # However the 401s and the refresh's answer interleave, the refresh token is spent
    # once: a record refused while the answer is on its way takes that answer too.
    write_profile(cred, 3600)
    sb.control(expire_token=REFRESHABLE)
    r = x_run("tw-post", ("-j", "3"), jl("one", "two", "three"))
    assert r.returncode == 0 and all(e["ok"] for e in r.envelopes), r
    [refresh] = refreshes(sb)                # asserts: no token_reuse
    assert [e["status"] for e in sb.log() if e["endpoint"] == REFRESH_ENDPOINT] == [200], "one refresh in all"
    posts = post_requests(sb)
    assert sorted(e["status"] for e in posts) == [201] * 3 + [401] * 3, posts
    assert all(refresh["seq"] < e["seq"] for e in posts if e["status"] == 201), (refresh, posts)
    check_new_pair(sb, cred)


@pytest.mark.parametrize("signals", [1, 2])
def test_a_signal_while_the_refresh_is_in_flight(tool, x_env, sb, cred, signals):
    # The refresh changes the credentials file, so the first signal waits for it (nothing
    # is posted after it); a second stops the waiting, and the records end as if it failed.
    write_profile(cred, 30)
    sb.fault("delay", match={"endpoint": REFRESH_ENDPOINT}, ms=3000)
    p = subprocess.Popen([tool("tw-post")], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=x_env)
    p.stdin.write(jl("one", "two"))
    p.stdin.flush()
    time.sleep(0.7)
    for _ in range(signals):
        p.send_signal(signal.SIGINT)
        time.sleep(0.3)
    out, err = p.communicate(timeout=30)
    assert p.returncode == 130, (out, err)
    errors = [json.loads(line)["error"] for line in out.splitlines()]
    if signals == 1:
        assert errors == [{"kind": "cancelled", "message": "interrupted before its next request was sent",
                           "attempts": 1}] * 2, errors
    else:
        message = ('the OAuth 2.0 token of profile "kestrel" could not be refreshed: interrupted while the request '
                   'was in flight; authorize again with: ' + REAUTHORIZE)
        assert errors == [{"kind": "auth", "message": message, "attempts": 1}] * 2, errors
    assert post_requests(sb) == []


# --------------------------------------------------------------------------------------
# tw-friends
# --------------------------------------------------------------------------------------

def test_tw_friends_refreshes_too(x_run, sb, cred):
    write_profile(cred, 30)
    r = x_run("tw-friends", ("follows_one",))
    assert r.returncode == 0, r
    assert len(r.envelopes) == 1 and r.envelopes[0]["ok"] is True, r
    [refresh] = refreshes(sb)
    reads = [e for e in sb.log() if e["method"] == "GET"]
    assert reads and all(refresh["seq"] < e["seq"] for e in reads), "refreshed before the first read"
    assert all(e["auth"]["scheme"] == "oauth2_user" and e["auth"]["outcome"] == "ok" for e in reads), reads
    check_new_pair(sb, cred)


@pytest.mark.parametrize("args,stdin", [(("follows_one",), b""), ((), b'{"user_id":"1000000000000000011"}\n'),
                                        (("--me",), b"")], ids=["username", "user_id", "me"])
def test_tw_friends_refreshes_after_a_401_and_asks_again(x_run, sb, cred, args, stdin):
    # Whatever the first request is (a username lookup, /2/users/me, or a page of a
    # user id), a 401 brings one refresh and that request once more.
    write_profile(cred, 3600)
    sb.control(expire_token=REFRESHABLE)
    r = x_run("tw-friends", args, stdin)
    assert r.returncode == 0, r
    assert r.envelopes and all(e["ok"] for e in r.envelopes), r
    log = sb.log()
    [refresh] = refreshes(sb)
    first = log[0]
    assert first["status"] == 401 and first["seq"] < refresh["seq"], log
    again = [e for e in log if e["seq"] > refresh["seq"] and e["endpoint"] == first["endpoint"]]
    assert again and again[0]["status"] == 200, ("the refused request is made again with the new token", log)
    check_new_pair(sb, cred)


def test_tw_friends_records_sharing_a_lookup_share_its_refresh(x_run, sb, cred):
    # Both records wait on one lookup; its 401 brings one refresh, then one lookup again.
    write_profile(cred, 3600)
    sb.control(expire_token=REFRESHABLE)
    r = x_run("tw-friends", ("-j", "2", "follows_one", "follows_one"))
    assert r.returncode == 0 and [e["ok"] for e in r.envelopes] == [True, True], r
    lookup = "GET /2/users/by/username/:username"
    assert [(e["endpoint"], e["status"]) for e in sb.log()] == [(lookup, 401), (REFRESH_ENDPOINT, 200), (lookup, 200)] \
        + [("GET /2/users/:id/following", 200)] * 2
    check_new_pair(sb, cred)


def test_tw_friends_records_whose_refresh_fails_keep_their_resume(x_run, sb, cred):
    write_profile(cred, 30)
    sb.fault("status", match={"endpoint": REFRESH_ENDPOINT}, status=400)
    r = x_run("tw-friends", ("-j", "3"), b'{"username":"follows_one"}\n{}\n')
    assert r.returncode == 1, r
    message = 'the OAuth 2.0 token of profile "kestrel" could not be refreshed: Bad Request; authorize again with: ' + REAUTHORIZE
    assert [e["error"] for e in r.envelopes] == [
        {"kind": "auth", "status": 400, "message": message, "attempts": 1, "resume": {"username": "follows_one"}},
        {"kind": "auth", "status": 400, "message": message, "attempts": 1, "resume": {}}], r


# --------------------------------------------------------------------------------------
# the credentials file
# --------------------------------------------------------------------------------------

def ptrace_permitted():
    try:
        p = subprocess.run(["strace", "-qq", "-e", "trace=none", "true"], capture_output=True, timeout=10)
    except FileNotFoundError:
        return "strace is not installed"
    except subprocess.TimeoutExpired:
        return "strace hangs"
    if p.returncode != 0:
        return "ptrace is not permitted here: %s" % p.stderr.decode("utf-8", "replace").strip()
    return None


def test_a_crash_between_the_write_and_the_rename_leaves_the_old_file(tool, x_env, sb, cred, tmp_path):
    why = ptrace_permitted()
    if why:
        pytest.skip(why)
    before = write_profile(cred, 30)
    trace = tmp_path / "strace.txt"
    p = subprocess.run(["strace", "-f", "-qq", "-o", str(trace), "-e", "trace=rename,renameat,renameat2",
                        "-e", "inject=rename,renameat,renameat2:signal=KILL", tool("tw-post")],
                       input=jl("killed at the rename"), capture_output=True, env=x_env, timeout=30)
    assert p.returncode in (-9, 137), p       # the tool was killed at its rename
    renames = trace.read_text()
    assert ".credentials-" in renames and "credentials.json" in renames, ("it died renaming the temporary", renames)
    assert len(refreshes(sb)) == 1, "the refresh was made; its answer was being saved"
    assert post_requests(sb) == [], "nothing posted with a pair that is not on disk"
    # The old file is whole, byte for byte, still 0600, and still a regular file.
    assert cred.read_bytes() == before
    assert stat.S_ISREG(os.lstat(cred).st_mode) and mode(cred) == 0o600
    # A temporary may be left behind, but hidden, private, and never as credentials.json.
    for name in os.listdir(cred.parent):
        if name not in ("credentials.json", "credentials.json.lock"):
            assert name.startswith(".credentials-"), name
            assert mode(cred.parent / name) == 0o600, name
    assert_no_secrets(p.stdout, p.stderr, secrets=SECRETS)


def test_a_refresh_through_a_symlink_keeps_the_link(x_run, sb, cred, tmp_path):
    real = tmp_path / "vault" / "creds.json"
    real.parent.mkdir(mode=0o700)
    write_profile(real, 30)
    cred.symlink_to(real)
    r = x_run("tw-post", (), jl("through a link"))
    assert r.returncode == 0, r
    assert os.path.islink(cred) and os.readlink(cred) == str(real), "the link is kept"
    check_new_pair(sb, real)
    assert mode(str(real) + ".lock") == 0o600
