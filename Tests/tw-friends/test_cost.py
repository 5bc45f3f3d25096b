"""What a tw-friends run costs (contract §7, issue 19), against the sandbox's
2026 mode: a credit balance that each account read draws from, and a ledger.

  1. estimates equal the ledger to the cent: a username lookup, another
     account's list, your own list (owned reads)
  2. --max-cost: a 25,000-account list stops at the budget with `resume`, and
     the resume with a new budget lists exactly the rest; within `max`; 0 sends nothing
  3. billing: credits running out mid-list end it `billing` with `resume`,
     later records unsent
"""
import re

import pytest

from toolenv import jl

TOOL = "tw-friends"


def estimate(r):
    found = re.findall(rb"; estimated cost \$(\d+\.\d{3})\n", r.stderr)
    assert len(found) == 1, r
    return float(found[0])


def charged(sb):
    return round(sum(c["amount"] for c in sb.ledger()["charges"]), 6)


def ids(envelopes):
    return [e["result"]["id"] for e in envelopes if e["ok"]]


def x_requests(sb):
    return [e for e in sb.log() if not e["path"].startswith("/__")]


# 1. estimates ------------------------------------------------------------------------------

def test_another_accounts_list_costs_its_lookup_and_each_account(run, sb):
    r = run(["--cost"], jl("follows_999"))
    assert r.returncode == 0, r
    costs = [e["cost"] for e in r.envelopes]
    assert len(costs) == 999 and costs[0] == 0.02 and set(costs[1:]) == {0.01}, costs[:3]
    assert charged(sb) == pytest.approx(9.99 + 0.01)
    assert estimate(r) == pytest.approx(10.0)
    assert round(sum(costs), 6) == pytest.approx(10.0)
    keys = [c["key"] for c in sb.ledger()["charges"]]
    assert "user_read" in keys and "following_read" in keys and "owned_read" not in keys, keys


def test_your_own_list_is_an_owned_read(run, sb):
    r = run(["--cost", "--me"])
    assert r.returncode == 0, r
    assert len(r.envelopes) == 2500
    # /2/users/me, then 2,500 accounts at $0.001.
    assert charged(sb) == pytest.approx(0.01 + 2.5)
    assert estimate(r) == pytest.approx(2.51)
    assert round(sum(e["cost"] for e in r.envelopes), 6) == pytest.approx(2.51)


def test_your_own_list_through_v1_1_is_not_an_owned_read(run, sb):
    # X prices only v2's following endpoint as an owned read.
    r = run(["--cost", "--me", "--api", "1.1"])
    assert r.returncode == 0 and len(r.envelopes) == 2500, r
    assert charged(sb) == pytest.approx(25.0) and estimate(r) == pytest.approx(25.0)


def test_a_user_id_needs_no_lookup(run, sb):
    r = run(["--cost"], jl({"user_id": "1000000000000000013"}))
    assert r.returncode == 0 and len(r.envelopes) == 1000, r
    assert charged(sb) == pytest.approx(10.0) and estimate(r) == pytest.approx(10.0)


def test_a_dry_run_estimates_the_lookup_and_the_first_page_in_full(run, sb):
    r = run(["--dry-run", "--cost"], jl("jack", {"user_id": "12"}))
    assert r.returncode == 0, r
    assert [e["cost"] for e in r.envelopes] == [10.01, 10.0], r
    assert estimate(r) == pytest.approx(20.01)
    assert x_requests(sb) == []


# 2. --max-cost -----------------------------------------------------------------------------

def test_a_budgeted_list_stops_at_its_budget_and_resumes_exactly_where_it_stopped(run, sb):
    r = run(["--max-cost", "100"], jl("follows_25000"), timeout=120)
    assert r.returncode == 1, r
    first = ids(r.envelopes)
    # The lookup ($0.01) and 9,999 accounts ($0.01 each) spend the $100 exactly: the last page was cut to fit.
    assert len(first) == 9999, len(first)
    assert charged(sb) <= 100.0 and charged(sb) == pytest.approx(100.0)
    end = r.envelopes[-1]["error"]
    assert end["kind"] == "budget" and set(end["resume"]) == {"username", "pagination_token"}, end
    sizes = [int(e["query"]["max_results"][0]) for e in sb.log() if "/following" in e["path"]]
    assert sizes[-1] == 999 and set(sizes[:-1]) == {1000}, sizes

    r2 = run(["--max-cost", "200"], jl(end["resume"]), timeout=120)
    assert r2.returncode == 0, r2
    rest = ids(r2.envelopes)
    assert len(rest) == 25_000 - 9999 and not set(first) & set(rest)
    assert estimate(r2) <= 200


def test_a_resume_keeps_what_is_left_of_max(run, sb):
    r = run(["--max-cost", "10"], jl({"username": "follows_25000", "max": 3000}))
    end = r.envelopes[-1]["error"]
    written = len(ids(r.envelopes))
    assert written == 999 and end["resume"]["max"] == 3000 - written, end
    r2 = run([], jl(end["resume"]), timeout=60)
    assert r2.returncode == 0 and len(ids(r2.envelopes)) == 3000 - written, r2


def test_max_cost_zero_sends_nothing_priced(run, sb):
    r = run(["--max-cost", "0"], jl("jack", {"user_id": "12"}))
    assert r.returncode == 1, r
    assert [e["error"]["kind"] for e in r.envelopes] == ["budget", "budget"]
    assert [e["error"]["resume"] for e in r.envelopes] == [{"username": "jack"}, {"user_id": "12"}]
    assert x_requests(sb) == [] and sb.ledger()["charges"] == []


# 3. billing --------------------------------------------------------------------------------

def test_credits_running_out_mid_list_end_it_billing_with_resume(run, sb):
    sb.control(credits={"balance": 25.0})
    r = run(["-j", "1"], jl("follows_25000", "follows_one"), timeout=120)
    assert r.returncode == 1, r
    failed = [e for e in r.envelopes if not e["ok"]]
    assert [e["line"] for e in failed] == [1, 2], failed
    assert failed[0]["error"]["kind"] == "billing" and failed[0]["error"]["status"] == 402
    assert "pagination_token" in failed[0]["error"]["resume"]
    assert failed[1]["error"]["kind"] == "billing" and failed[1]["error"]["attempts"] == 0
    # Never retried: the refused page was asked once.
    refused = [e for e in sb.log() if e.get("status") == 402]
    assert len(refused) == 1, refused
