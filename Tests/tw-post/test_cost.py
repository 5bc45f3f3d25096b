"""What a tw-post run costs and what the plan allows (contract §7, issue 19),
against the sandbox's 2026 mode: a credit balance that priced requests draw
from, a ledger of what it charged, self-serve rules and X's refusals.

  1. estimates: `cost` on every envelope and the summary's figure equal the
     sandbox ledger's charges, to the cent (posts with and without URLs, alt texts)
  2. --max-cost: never exceeded across 1,000 posts; 0 sends nothing priced;
     a record's alt texts and post are reserved together
  3. billing: a 402 mid-run is one request, never retried, and later records
     end `billing` unsent; the spending-limit 403 likewise
  4. the plan: quote and cashtags on self-serve, the media mix on any plan,
     each refused with no request at all; --plan and twitter.plan
  5. prices files: one key overridden; a bad file is exit 3
  6. X's own refusals explained: a reply the original author did not allow, a
     read-only token
"""
import json
import re

import pytest

from media_samples import write_sample
from toolenv import credentials_path, jl, write_private

TOOL = "tw-post"
EXISTING_POST = "20"          # jack's "just setting up my twttr"


def estimate(r):
    """The summary line's `; estimated cost $D.DDD`, in dollars."""
    found = re.findall(rb"; estimated cost \$(\d+\.\d{3})\n", r.stderr)
    assert len(found) == 1, r
    return float(found[0])


def charged(sb):
    """What the sandbox charged, in dollars, rounded to the millionth."""
    ledger = sb.ledger()
    return round(sum(c["amount"] for c in ledger["charges"]), 6)


def x_requests(sb):
    return [e for e in sb.log() if e.get("service", "x") == "x" and not e["path"].startswith("/__")]


@pytest.fixture
def media_dir(tmp_path):
    d = tmp_path / "media"
    d.mkdir()
    for name, kind in (("a.png", "png"), ("b.png", "png"), ("c.png", "png"), ("d.gif", "gif"), ("e.mp4", "mp4")):
        write_sample(d / name, kind, 4096, seed=len(name) + ord(name[0]))
    return d


# 1. estimates ------------------------------------------------------------------------------

def test_every_envelope_carries_its_cost_and_they_add_up_to_the_ledger(run, sb, media_dir):
    records = ["plain words", "see https://example.com/a",
               {"text": "one alt", "media": [{"path": "a.png", "alt": "a square"}]},
               {"text": "two alts https://example.org", "media": [{"path": "b.png", "alt": "b"}, {"path": "c.png", "alt": "c"}]},
               {"text": "no alt", "media": ["a.png"]}]
    r = run(["--cost", "--media-dir", str(media_dir)], jl(*records))
    assert r.returncode == 0, r
    assert [e["cost"] for e in r.envelopes] == [0.015, 0.2, 0.02, 0.21, 0.015], r
    assert charged(sb) == pytest.approx(0.46), sb.ledger()
    assert estimate(r) == pytest.approx(0.46)
    assert [c["key"] for c in sb.ledger()["charges"]].count("media_metadata") == 3


def test_a_run_that_did_not_ask_stays_quiet_on_success_and_tells_the_cost_on_failure(run, sb):
    r = run([], jl("counted once"))
    assert r.returncode == 0, r
    assert "cost" not in r.envelopes[0], r
    assert r.stderr == b"", r
    r = run([], jl("counted twice", ""))
    assert r.stderr == b"tw-post: 1 of 2 failed (validation 1); estimated cost $0.015\n", r
    r = run(["--max-cost", "1"], jl("asked"))
    assert r.stderr == b"tw-post: 1 done; estimated cost $0.015\n", r


def test_a_dry_run_estimates_what_would_be_sent(run, sb, media_dir):
    r = run(["--dry-run", "--cost", "--media-dir", str(media_dir)],
            jl("a", "b https://example.com", {"text": "c", "media": [{"path": "a.png", "alt": "x"}]}))
    assert r.returncode == 0, r
    assert [e["cost"] for e in r.envelopes] == [0.015, 0.2, 0.02], r
    assert estimate(r) == pytest.approx(0.235)
    assert x_requests(sb) == [] and sb.ledger()["charges"] == []


# 2. --max-cost -----------------------------------------------------------------------------

def test_a_thousand_posts_never_spend_more_than_the_budget(run, sb):
    texts = ["budgeted post %04d" % i for i in range(1000)]
    # 1.5 pays for 100 posts, as many as the sandbox's 15-minute window takes.
    r = run(["--max-cost", "1.5", "--cost", "-j", "8"], jl(*texts), timeout=120)
    assert r.returncode == 1, r
    ok = [e for e in r.envelopes if e["ok"]]
    refused = [e for e in r.envelopes if not e["ok"]]
    assert len(ok) == 100 and len(refused) == 900, r.stderr
    assert all(e["error"]["kind"] == "budget" and e["error"]["attempts"] == 0 and e["cost"] == 0 for e in refused)
    assert charged(sb) == pytest.approx(1.5)
    assert sb.posts("x")["total"] == 100
    assert estimate(r) == pytest.approx(1.5)
    assert b"tw-post: 900 of 1000 failed (budget 900); estimated cost $1.500\n" in r.stderr


def test_max_cost_zero_sends_nothing_priced(run, sb, media_dir):
    r = run(["--max-cost", "0", "--media-dir", str(media_dir)],
            jl("nothing", {"text": "nor this", "media": [{"path": "a.png", "alt": "x"}]}))
    assert r.returncode == 1, r
    assert [e["error"]["kind"] for e in r.envelopes] == ["budget", "budget"], r
    # The second record's upload would be free, but its post cannot be paid: nothing at all goes.
    assert x_requests(sb) == [], sb.log()
    assert sb.ledger()["charges"] == []


def test_a_record_is_not_half_sent_when_the_budget_ends(run, sb, media_dir):
    # 0.03 pays the first post (0.015) but not the second record's alt text and post (0.02).
    r = run(["--max-cost", "0.03", "--media-dir", str(media_dir)],
            jl("first", {"text": "second", "media": [{"path": "a.png", "alt": "x"}]}))
    assert [e["ok"] for e in r.envelopes] == [True, False], r
    assert r.envelopes[1]["error"]["kind"] == "budget"
    assert "0.02" in r.envelopes[1]["error"]["message"], r
    assert [e for e in x_requests(sb) if "/2/media" in e["path"]] == []


def test_once_the_budget_ends_a_later_cheaper_record_is_not_sent_either(run, sb):
    r = run(["--max-cost", "0.1"], jl("first", "dear https://example.com", "cheap after it"))
    assert [e.get("error", {}).get("kind") for e in r.envelopes] == [None, "budget", "budget"], r
    assert "ran out earlier" in r.envelopes[2]["error"]["message"]
    assert sb.posts("x")["total"] == 1
    assert b"tw-post: 2 of 3 failed (budget 2); estimated cost $0.015\n" == r.stderr, r
    # Nothing priced sent at all: no estimate to give.
    r = run(["--max-cost", "0"], jl("none"))
    assert r.stderr == b"tw-post: 1 of 1 failed (budget 1)\n", r


@pytest.mark.parametrize("value", ["-1", "abc", "1e3", ""])
def test_a_bad_max_cost_is_a_usage_error(run, sb, value):
    r = run(["--max-cost", value], jl("x"))
    assert r.returncode == 2 and r.stdout == b"", r


# 3. billing --------------------------------------------------------------------------------

def test_credits_running_out_mid_run_stop_the_run_without_retrying(run, sb):
    # X serves a request while the balance is above zero and refuses the next (402).
    sb.control(credits={"balance": 0.03})
    r = run(["--cost"], jl("paid one", "paid two", "refused", "never sent", "nor this"))
    assert r.returncode == 1, r
    kinds = [e.get("error", {}).get("kind") for e in r.envelopes]
    assert kinds == [None, None, "billing", "billing", "billing"], r
    third = r.envelopes[2]["error"]
    assert third["status"] == 402 and third["attempts"] == 1, third
    assert "CreditsDepleted" in third["message"] or "credits" in third["message"].lower(), third
    assert [e["error"]["attempts"] for e in r.envelopes[3:]] == [0, 0]
    assert len([e for e in x_requests(sb) if e["path"] == "/2/tweets"]) == 3
    assert b"(billing 3)" in r.stderr


def test_a_spending_limit_is_billing_too(run, sb):
    sb.control(credits={"spending_limit": 0.015})
    r = run([], jl("under the limit", "over it", "after"))
    assert [e.get("error", {}).get("kind") for e in r.envelopes] == [None, "billing", "billing"], r
    assert r.envelopes[1]["error"]["status"] == 403
    assert r.envelopes[2]["error"]["attempts"] == 0


# 4. the plan -------------------------------------------------------------------------------

def test_self_serve_refusals_send_nothing(run, sb, media_dir):
    records = [{"text": "quoting", "quote": EXISTING_POST},
               "two cashtags $AAPL and $TSLA",
               {"text": "a GIF and two pictures", "media": ["d.gif", "a.png", "b.png"]},
               {"text": "a video and a picture", "media": ["e.mp4", "a.png"]},
               {"text": "a GIF beside an uploaded id", "media": ["d.gif"], "media_ids": ["1000000000000000501"]}]
    r = run(["--media-dir", str(media_dir)], jl(*records))
    assert r.returncode == 1, r
    assert [e["error"]["kind"] for e in r.envelopes] == ["validation"] * 5, r
    assert "Enterprise" in r.envelopes[0]["error"]["message"]
    assert "cashtag" in r.envelopes[1]["error"]["message"]
    assert "1 GIF" in r.envelopes[2]["error"]["message"] and "2 images" in r.envelopes[2]["error"]["message"]
    assert all(e["error"]["attempts"] == 0 for e in r.envelopes)
    assert x_requests(sb) == [], sb.log()


def test_one_cashtag_and_four_pictures_are_fine(run, sb, media_dir):
    sb.control(self_serve=True)
    r = run(["--media-dir", str(media_dir)], jl("just $AAPL today", {"text": "pictures", "media": ["a.png", "b.png", "c.png", "a.png"]}))
    assert r.returncode == 0, r


def test_enterprise_plan_quotes_by_option_or_profile(run, sb, home):
    sb.control(self_serve=False)
    r = run(["--plan", "enterprise"], jl({"text": "quoted by option", "quote": EXISTING_POST}))
    assert r.returncode == 0, r
    path = credentials_path(home)
    section = {"consumer_key": "sandbox-consumer-key", "consumer_secret": "sandbox-consumer-secret",
               "access_token": "1000000000000000001-sandboxaccesstoken",
               "access_token_secret": "sandbox-access-token-secret", "plan": "enterprise"}
    write_private(path, json.dumps({"profiles": {"ent": {"twitter": section}}}))
    r = run(["--profile", "ent"], jl({"text": "quoted by profile", "quote": EXISTING_POST}), credentials={})
    assert r.returncode == 0, r
    r = run(["--profile", "ent", "--plan", "self-serve"], jl({"text": "refused again", "quote": EXISTING_POST}), credentials={})
    assert r.envelopes[0]["error"]["kind"] == "validation", r


def test_a_plan_that_is_neither_is_refused(run, sb, home):
    r = run(["--plan", "free"], jl("x"))
    assert r.returncode == 2, r
    write_private(credentials_path(home), json.dumps({"profiles": {"p": {"twitter": {"bearer_token": "t", "plan": "basic"}}}}))
    r = run(["--profile", "p"], jl("x"), credentials={})
    assert r.returncode == 3 and b"twitter.plan" in r.stderr, r


# 5. prices files ---------------------------------------------------------------------------

def test_a_prices_file_overrides_one_key(run, sb, tmp_path):
    prices = tmp_path / "prices.json"
    prices.write_text('{"x": {"post_create": 0.02}}')
    r = run(["--cost", "--prices", str(prices)], jl("dearer now", "and https://example.com"))
    assert [e["cost"] for e in r.envelopes] == [0.02, 0.2], r
    r = run(["--cost"], jl("from the environment"), extra={"SOCIALPIPE_PRICES": str(prices)})
    assert r.envelopes[0]["cost"] == 0.02, r


def test_the_default_prices_file_is_read_when_it_exists(run, sb, home):
    (home / ".config" / "socialpipe").mkdir(parents=True, exist_ok=True)
    (home / ".config" / "socialpipe" / "prices.json").write_text('{"x": {"post_create": 0.5}}')
    r = run(["--cost"], jl("from the default file"))
    assert r.envelopes[0]["cost"] == 0.5, r


@pytest.mark.parametrize("text,why", [
    ('{"x": {"post_create": 0.02, "post_creat": 1}}', b"post_creat"),
    ('{"x": {"post_create": -0.02}}', b"post_create"),
    ('{"x": {"post_create": "0.02"}}', b"post_create"),
    ('{"x": []}', b"expected"),
    ('{"y": {}}', b"expected"),
    ('{"x": {', b"invalid JSON"),
])
def test_a_bad_prices_file_is_a_configuration_error(run, sb, tmp_path, text, why):
    prices = tmp_path / "prices.json"
    prices.write_text(text)
    r = run(["--prices", str(prices)], jl("never sent"))
    assert r.returncode == 3 and r.stdout == b"" and why in r.stderr and str(prices).encode() in r.stderr, r
    assert x_requests(sb) == []


def test_a_missing_named_prices_file_is_a_configuration_error(run, sb, tmp_path):
    r = run(["--prices", str(tmp_path / "nope.json")], jl("x"))
    assert r.returncode == 3, r


# 6. X's refusals explained -----------------------------------------------------------------

def test_a_reply_the_author_did_not_allow_says_why(run, sb):
    r = run([], jl({"text": "replying to jack", "reply_to": EXISTING_POST}))
    assert r.returncode == 1, r
    error = r.envelopes[0]["error"]
    assert error["kind"] == "permission" and error["status"] == 403, error
    assert "mentioned or engaged the replying account" in error["message"], error


def test_a_reply_the_author_allowed_goes_and_is_estimated_as_a_post(run, sb):
    # Post 21 is jack's, mentioning socialpipe_demo: a self-serve app may reply.
    r = run(["--cost"], jl({"text": "replying where mentioned", "reply_to": "21"}))
    assert r.returncode == 0, r
    # X charges a summoned reply $0.010; the estimate, an upper bound, is a post's.
    assert r.envelopes[0]["cost"] == 0.015
    assert charged(sb) == pytest.approx(0.01)


def test_a_read_only_token_says_how_to_get_a_read_write_one(run, sb):
    readonly = {"TW_CONSUMER_KEY": "sandbox-readonly-consumer-key", "TW_CONSUMER_SECRET": "sandbox-readonly-consumer-secret",
                "TW_ACCESS_TOKEN": "1000000000000000001-sandboxreadonlytoken",
                "TW_ACCESS_TOKEN_SECRET": "sandbox-readonly-token-secret"}
    r = run([], jl("cannot post"), credentials=readonly)
    error = r.envelopes[0]["error"]
    assert error["kind"] == "permission" and "read-only" in error["message"] and "tw-auth pin --access write" in error["message"], error
