"""Issue 17, item 3: a 200 answer that is cut short or not JSON, to a read (a
lookup, `/permissions`, `debug_token`, a media status poll), is the server
failing: a read changes nothing, so it goes again within --retries as after a
5xx. A post's unreadable answer stays `ambiguous`: it may have been applied."""
import pytest

from media_samples import MIB, write_sample
from toolenv import (FB_APP_ID, FB_APP_SECRET, FB_USER_TOKEN, clean_env, fb_credentials, jl, run_tool,
                     x_credentials)

PERMISSIONS = "GET /{id}/permissions"
STATUS = "GET /2/media/upload"


def fb_env(home, sb, **kw):
    return clean_env(home, dict(fb_credentials(FB_USER_TOKEN, **kw), FB_API_BASE=sb.url))


def entries(sb, endpoint):
    return [e for e in sb.log() if e["endpoint"] == endpoint]


@pytest.mark.parametrize("fault", ["malformed", "truncate"])
def test_a_permissions_answer_that_cannot_be_read_is_asked_for_again(tool, home, sb, fault):
    sb.fault(fault, match={"endpoint": PERMISSIONS}, count=2)
    r = run_tool(tool("fb-perm-check"), fb_env(home, sb), [], jl("pages_show_list"))
    assert r.returncode == 0, r
    [e] = r.envelopes
    assert e["result"]["granted"] is True, e
    assert len(entries(sb, PERMISSIONS)) == 3


def test_a_permissions_answer_never_readable_is_http_after_the_retries(tool, home, sb):
    sb.fault("malformed", match={"endpoint": PERMISSIONS}, count=None)
    r = run_tool(tool("fb-perm-check"), fb_env(home, sb), ["--retries", "2"], jl("pages_show_list"))
    assert r.returncode == 1, r
    [e] = r.envelopes
    assert e["error"]["kind"] == "http" and e["error"]["status"] == 200 and e["error"]["attempts"] == 3, e
    assert "not JSON" in e["error"]["message"], e


def test_a_debug_token_batch_that_cannot_be_read_is_asked_for_again(tool, home, sb):
    sb.fault("malformed", match={"method": "POST", "path_regex": r"^/v[0-9.]+/?$"}, count=1)
    r = run_tool(tool("fb-perm-check"), fb_env(home, sb, secret=FB_APP_SECRET, app_id=FB_APP_ID), ["--token"],
                 jl("pages_show_list"))
    assert r.returncode == 0, r
    [e] = r.envelopes
    assert e["result"]["token"]["is_valid"] is True, e


def test_a_status_poll_that_cannot_be_read_is_asked_for_again(tool, home, sb, tmp_path):
    write_sample(tmp_path / "loop.gif", "gif", MIB, seed=7)
    sb.control(media_processing={"check_after_secs": 0, "polls": 1})
    sb.fault("malformed", match={"endpoint": STATUS}, count=1)
    env = clean_env(home, dict(x_credentials(), TW_API_BASE=sb.url))
    r = run_tool(tool("tw-post"), env, ["--media-dir", str(tmp_path)], jl({"text": "a gif", "media": ["loop.gif"]}))
    assert r.returncode == 0, r
    [e] = r.envelopes
    assert e["ok"], e
    polls = entries(sb, STATUS)
    assert [p["outcome"] for p in polls] == ["malformed", "answered"], "the unreadable poll is asked again"


def test_a_posts_unreadable_answer_stays_ambiguous(tool, home, sb):
    sb.fault("malformed", match={"method": "POST", "path": "/2/tweets"})
    env = clean_env(home, dict(x_credentials(), TW_API_BASE=sb.url))
    r = run_tool(tool("tw-post"), env, [], jl("maybe posted"))
    assert r.returncode == 1, r
    [e] = r.envelopes
    assert e["error"]["kind"] == "ambiguous" and e["error"]["attempts"] == 1, e
    assert sb.posts()["counts"] == {"maybe posted": 1}


@pytest.mark.parametrize("post_id", ["abc", "../1.1/statuses/update.json", "", "1" * 20])
def test_a_created_post_whose_id_is_not_digits_is_ambiguous(tool, home, sb, post_id):
    """The id goes to the output and into the next post of a thread: digits only."""
    sb.fault("status", match={"method": "POST", "path": "/2/tweets"}, status=201,
             body={"data": {"id": post_id, "text": "odd id"}})
    env = clean_env(home, dict(x_credentials(), TW_API_BASE=sb.url))
    r = run_tool(tool("tw-post"), env, ["--thread"], jl("odd id", "never sent"))
    assert r.returncode == 1, r
    first, second = r.envelopes
    assert first["error"]["kind"] == "ambiguous", first
    assert second["error"]["kind"] == "cancelled", second
    assert [e["path"] for e in sb.log()] == ["/2/tweets"]


@pytest.mark.parametrize("post_id", ["200000000000001_x", "a_b", "1_2_3", "", '../me'])
def test_a_page_post_whose_id_is_not_graphs_is_ambiguous(tool, home, sb, post_id):
    sb.fault("status", match={"method": "POST", "endpoint": "POST /{id}/feed"}, status=200, body={"id": post_id})
    env = clean_env(home, dict(fb_credentials("sandbox-fb-page-token"), FB_API_BASE=sb.url))
    r = run_tool(tool("fb-feed"), env, [], jl("odd id"))
    assert r.returncode == 1, r
    [e] = r.envelopes
    assert e["error"]["kind"] == "ambiguous", e
