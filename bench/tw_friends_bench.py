#!/usr/bin/env python3
"""tw-friends benchmark (the tw-friends part of `make bench`): the sandbox's
1,000,000-account user walked by tw-friends, side by side with tweepy's
Paginator, twarc2's following and a trivial keep-alive client that measures the
sandbox's own ceiling, for API v2 (pages of 1000) and v1.1 (pages of 5000 ids).

    python bench/tw_friends_bench.py [--bin DIR] [--accounts N] [--small N] [--runs N]

A report, not a test: exits 0 whether or not the goals are met (the closing
banner says which were missed), 1 only when the benchmark cannot run (no
sandbox, no tweepy or twarc). See bench/README.md.
"""
import collections
import functools
import hashlib
import http.client
import json
import os
import re
import statistics
import sys
import time

from benchlib import (RSS_GROWTH_MIB, Record, Verdicts, arg_parser, clean_env, count_envelopes, fail, fastest,
                      fmt, log_figures, measure, note, parse_args, print_header, print_problems, rss_mib,
                      runs_line, settle, setup, start_sandbox, tool_run, unchecked_oauth_header)

HERE = os.path.dirname(os.path.abspath(__file__))

# Goals: tw-friends >= 95 % of the sandbox ceiling, for v2 and for v1.1 (issue
# 21: the next page is asked for while the current one is written; issue 8
# asked >= 3x the fastest peer or >= 90 %); peak RSS <= 32 MiB at 10,000 and
# at 1,000,000 accounts.
GOAL_CEILING_SHARE = 95.0
GOAL_RSS_MIB = 32.0
GOAL_COLUMNS = (22, 40, 22)
USER = "jack"          # sandbox/default-config.json: id 12, follows 1,000,000 generated accounts
PAGE = {"2": 1000, "1.1": 5000}
# What the peers are (bench/friends_peers.py), per API.
PEERS = {"2": [("tweepy", "tweepy Paginator"), ("twarc2", "twarc2 following")],
         "1.1": [("tweepy-v1.1", "tweepy Cursor friend_ids")]}
FIRST_ID = re.compile(rb'"id":"([0-9]+)"')
RESULT_COUNT = re.compile(rb'"result_count":([0-9]+)')
NEXT_TOKEN = re.compile(rb'"next_token":"([^"]+)"')
NEXT_CURSOR = re.compile(rb'"next_cursor_str":"(-?[0-9]+)"')


die = functools.partial(fail, "tw-friends")


class Phase(Record):
    """One contender's run: figures and what the sandbox saw."""

    def __init__(self, name, api):
        super().__init__(name)
        self.api = api
        self.accounts = 0            # accounts written (ok envelopes for tw-friends)
        self.unique = None
        self.digest = None           # sha1 of the id sequence

    def rate(self, n=None):
        """Accounts per second (of n accounts, by default the ones written)."""
        return super().rate(self.accounts if n is None else n)

    def complete(self, n):
        return self.seconds is not None and self.accounts == n and self.failed == 0 and self.unique in (None, n)


def collect_sandbox(sb, phase):
    """What the sandbox logged for the phase (requests, keep-alive connections,
    statuses); then forgets its log so the next phase starts from the same state."""
    log_figures(phase, [e for e in sb.log() if e["service"] == "x"])
    sb.control(clear_log=True, reset_rate_limits=True)


def read_ids(path, phase):
    """Fills in the count, distinct count and digest of the ids in an output:
    the first "id" of each line (tw-friends: the result's, as `input` holds
    only the username; the peers: the user's)."""
    digest = hashlib.sha1()
    seen = set()
    n = 0
    with open(path, "rb") as f:
        for line in f:
            m = FIRST_ID.search(line)
            if m is None:
                continue
            n += 1
            seen.add(int(m.group(1)))
            digest.update(m.group(1) + b"\n")
    phase.unique = len(seen)
    phase.digest = digest.hexdigest() if n else None
    return n


# ------------------------------------------------------------------ contenders

def ceiling_walk(sb, api, limit):
    """The sandbox's ceiling: one keep-alive http.client connection, a fixed
    OAuth header (signatures are not checked), the same lookup and pages as the
    clients; the next page's token and the page's size are picked out of the
    body's tail without parsing the JSON. Returns (seconds, accounts, failures)."""
    conn = http.client.HTTPConnection(sb.host, sb.port, timeout=60)
    headers = {"Authorization": unchecked_oauth_header()}
    failures = collections.Counter()
    accounts = 0

    def get(path):
        conn.request("GET", path, headers=headers)
        resp = conn.getresponse()
        body = resp.read()
        if resp.status != 200:
            failures["HTTP %d" % resp.status] += 1
            return None
        return body

    started = time.perf_counter()
    try:
        if api == "2":
            body = get("/2/users/by/username/" + USER)
            base = "/2/users/%s/following?max_results=%d" % (json.loads(body)["data"]["id"], PAGE[api])
            token = None
            while accounts < limit:
                body = get(base + ("&pagination_token=" + token if token else ""))
                if body is None:
                    break
                tail = body[-160:]
                accounts += int(RESULT_COUNT.search(tail).group(1))
                m = NEXT_TOKEN.search(tail)
                if m is None:
                    break
                token = m.group(1).decode()
        else:
            base = "/1.1/friends/ids.json?screen_name=%s&count=%d&stringify_ids=true&cursor=" % (USER, PAGE[api])
            cursor = "-1"
            while accounts < limit:
                body = get(base + cursor)
                if body is None:
                    break
                end = body.rindex(b'],"next_cursor"')
                if end > body.index(b"[") + 1:
                    accounts += body.count(b'","', 0, end) + 1
                cursor = NEXT_CURSOR.search(body, end).group(1).decode()
                if cursor == "0":
                    break
    except (OSError, http.client.HTTPException, ValueError, AttributeError) as e:
        failures[type(e).__name__] += 1
    finally:
        conn.close()
    return time.perf_counter() - started, min(accounts, limit), failures


def ceiling_run(sb, args, api):
    """One run of the ceiling client over the whole walk."""
    phase = Phase("sandbox ceiling (trivial)", api)
    settle()
    phase.seconds, phase.accounts, phase.kinds = ceiling_walk(sb, api, args.accounts)
    phase.failed = sum(phase.kinds.values())
    collect_sandbox(sb, phase)
    return phase


def tw_friends_run(sb, args, api, accounts, env, label):
    """One run of tw-friends -q [--api 1.1] < {"username": "jack"[, "max": N]} > out."""
    stem = os.path.join(args.out, "tw-friends-v%s-%d" % (api, accounts))
    record = {"username": USER}
    if accounts < 1_000_000:
        record["max"] = accounts
    with open(stem + ".in.jsonl", "w", encoding="utf-8") as f:
        f.write(json.dumps(record) + "\n")
    argv = [args.tw_friends, "-q"] + ([] if api == "2" else ["--api", "1.1"])
    phase = Phase(label, api)
    measure(phase, argv, stem + ".in.jsonl", stem, env, contender_timeout(accounts))
    phase.accounts, phase.failed, phase.kinds = count_envelopes(stem + ".out.jsonl")
    read_ids(stem + ".out.jsonl", phase)
    collect_sandbox(sb, phase)
    return phase


def ceiling_and_tool(sb, args, api, env, have_tool):
    """The ceiling and tw-friends in turns, --runs rounds of one run each, so
    that both meet the machine in the same states (from one run to the next,
    the same client's rate here varies by a tenth). The fastest complete run
    of each counts; also returns tw-friends's rate as a share of the ceiling's
    in each round."""
    label = "tw-friends" + ("" if api == "2" else " --api 1.1")
    ceilings, tools = [], []
    for _ in range(args.runs):
        ceilings.append(ceiling_run(sb, args, api))
        if have_tool:
            tools.append(tw_friends_run(sb, args, api, args.accounts, env, label))
    shares = [100.0 * tool.rate() / ceiling.rate() for ceiling, tool in zip(ceilings, tools)
              if tool.complete(args.accounts) and ceiling.complete(args.accounts)]
    return fastest(ceilings, args.accounts), tool_run(tools, args.accounts) if tools else None, shares


def run_peer(sb, args, api, client, label, env):
    stem = os.path.join(args.out, client)
    argv = [sys.executable, os.path.join(HERE, "friends_peers.py"), client, "--api-base", sb.url,
            "--user", USER, "--stats", stem + ".stats.json"]
    if args.accounts < 1_000_000:
        argv += ["--max", str(args.accounts)]

    def once():
        phase = Phase(label, api)
        # The walk alone (--stats): a peer is not charged for interpreter
        # start-up and imports (tw-friends's time includes its start-up).
        if measure(phase, argv, os.devnull, stem, env, contender_timeout(args.accounts), stats=True) != 0:
            phase.failed = 1
        phase.accounts = read_ids(stem + ".out.jsonl", phase)
        collect_sandbox(sb, phase)
        return phase

    return fastest([once() for _ in range(args.peer_runs)], args.accounts)


def contender_timeout(accounts):
    """Seconds a contender may take before it counts as hung: many times a slow
    client's time."""
    return 120 + accounts / 1000.0


# ---------------------------------------------------------------------- report

def main(argv=None):
    p = arg_parser("tw-friends")
    p.add_argument("--accounts", type=int, default=int(os.environ.get("BENCH_TWF_ACCOUNTS", 1_000_000)),
                   help="accounts of jack's list to walk (default all 1,000,000)")
    p.add_argument("--small", type=int, default=int(os.environ.get("BENCH_TWF_SMALL", 10_000)),
                   help="accounts of the memory-growth probe (default 10,000)")
    p.add_argument("--peer-runs", type=int, default=int(os.environ.get("BENCH_TWF_PEER_RUNS", 1)),
                   help="runs of each peer library, the fastest counts (default 1)")
    args = parse_args(p, "tw-friends", "TWF", argv, latency=False, runs=3)
    if not 1 <= args.small <= args.accounts <= 1_000_000 or args.runs < 1 or args.peer_runs < 1:
        die("need 1 <= --small <= --accounts <= 1000000, --runs >= 1 and --peer-runs >= 1")
    args.tw_friends, have_tool, xdg = setup(args, "tw-friends", {"tweepy": "tweepy", "twarc": "twarc"})
    n = args.accounts

    sb = start_sandbox("tw-friends", extra_args=["--no-verify-signatures", "--no-rate-limits"])
    phases = {}
    shares = {}
    try:
        state = sb.state()
        limit = state["x_rate_limits"].get("GET /1.1/friends/ids.json", {}).get("limit", 0)
        if state["verify_signatures"] or limit < 10 * n:
            die("sandbox not configured as asked: %r" % {"verify_signatures": state["verify_signatures"],
                                                         "friends/ids limit": limit})
        env = clean_env(sb.url, xdg)
        note("tw-friends: sandbox %s (signatures off, limits off), %s's list, %d accounts" % (sb.url, USER, n))
        # Warm the sandbox up (imports, caches) with pages nobody counts.
        ceiling_walk(sb, "2", 20_000)
        sb.control(clear_log=True, reset_rate_limits=True)
        for api in ("2", "1.1"):
            note("tw-friends: API %s, the sandbox ceiling (trivial keep-alive client) and tw-friends in turns, %d rounds"
                 % (api, args.runs))
            phases["ceiling", api], tool, shares[api] = ceiling_and_tool(sb, args, api, env, have_tool)
            if tool is not None:
                phases["tw-friends", api] = tool
            for client, label in PEERS[api]:
                note("tw-friends: API %s, %s" % (api, label))
                phases[client, api] = run_peer(sb, args, api, client, label, env)
        if have_tool:
            note("tw-friends: memory probe, %d accounts" % args.small)
            phases["small", "2"] = tool_run([tw_friends_run(sb, args, "2", args.small, env, "tw-friends (probe)")
                                             for _ in range(args.runs)], args.small)
        sandbox_stderr = sb.stderr_text()
    finally:
        sb.stop()

    # ---------------------------------------------------------------- report
    verdicts = Verdicts("tw-friends", GOAL_COLUMNS, 104)
    problems = []

    def usable(ph, count=n):
        return ph is not None and ph.complete(count)

    print_header([" tw-friends benchmark: %s's list, {:,} accounts, default fields, from the sandbox".format(n) % USER,
                  " (signatures not checked, rate limits off, no added latency; the same for every client);",
                  runs_line(args.runs, "the ceiling and tw-friends in turns, %d round(s), the fastest of each kept; "
                                       "each peer %d run(s)" % (args.runs, args.peer_runs))], 104)
    head = "  %-28s %8s %11s %9s %9s %8s %9s"
    for api in ("2", "1.1"):
        print(" API %s (pages of %d)" % (api, PAGE[api]))
        print(head % ("contender", "seconds", "accounts/s", "peak RSS", "accounts", "requests", "conns"))
        rows = [phases.get(("ceiling", api)), phases.get(("tw-friends", api))] + \
            [phases.get((client, api)) for client, _ in PEERS[api]]
        for ph in rows:
            if ph is None:
                continue
            rss = "-" if ph.rss_kib is None else "%.1f MiB" % rss_mib(ph)
            print(head % (ph.name, fmt(ph.seconds, "%.2f"), fmt(ph.rate(), "%.0f"), rss, ph.accounts, ph.requests,
                          ph.connections))
        if not have_tool:
            print("  %-28s not measured: %s missing (make build)" % ("tw-friends", args.tw_friends))
        print()
    probe = phases.get(("small", "2"))
    if probe is not None:
        print("  %-28s %8s %11s %9s %9d %8d %9d" % (probe.name, fmt(probe.seconds, "%.2f"), fmt(probe.rate(), "%.0f"),
                                                   fmt(rss_mib(probe), "%.1f MiB", "-"), probe.accounts,
                                                   probe.requests, probe.connections))
    print("  (seconds: tw-friends's whole process, start-up included; the peers' walk only, without interpreter")
    print("   start-up and imports (their process time is in results.json); the ceiling's walk in this process.")
    print("   Every contender looks jack up first, then pages. peak RSS: GNU time; requests and conns: the")
    print("   sandbox log's requests and distinct client connections)")

    for (who, api), ph in sorted(phases.items()):
        expected = args.small if who == "small" else n
        if not ph.complete(expected):
            problems.append("%s (API %s): %d accounts of %d, %d distinct, %d failed; failures %s; sandbox statuses %s%s"
                            % (ph.name, api, ph.accounts, expected, ph.unique or 0, ph.failed,
                               dict(ph.kinds) or "-", dict(ph.statuses), "; " + ph.error if ph.error else ""))
        if who == "tw-friends" or who == "small":
            if ph.connections > 1:
                problems.append("%s (API %s) opened %d connections for %d requests"
                                % (ph.name, api, ph.connections, ph.requests))

    # The same accounts in the same order from every client of an API.
    for api in ("2", "1.1"):
        digests = {ph.name: ph.digest for (who, a), ph in phases.items()
                   if a == api and who not in ("ceiling", "small") and usable(ph)}
        if len(set(digests.values())) > 1:
            problems.append("API %s: the clients' account sequences differ: %s" % (api, digests))

    print()
    print(" goals")
    for api in ("2", "1.1"):
        tw = phases.get(("tw-friends", api))
        ceil = phases.get(("ceiling", api))
        peers = [phases[client, api] for client, _ in PEERS[api] if usable(phases.get((client, api)))]
        top = max(peers, key=lambda ph: ph.rate(), default=None)
        label = "tw-friends v%s" % api
        goal = "goal >= %g %% of ceiling" % GOAL_CEILING_SHARE
        if usable(tw) and usable(ceil):
            x = tw.rate() / top.rate() if top else None
            share = 100.0 * tw.rate() / ceil.rate()
            ok = share >= GOAL_CEILING_SHARE
            line = "%sx %s, %s %% of ceiling" % (fmt(x, "%.2f"), top.name if top else "peer",
                                                fmt(share, "%.0f"))
            verdicts.goal(label, line, goal, ok, "%s: %sx the fastest peer, %s %% of the sandbox ceiling (%s)"
                          % (label, fmt(x, "%.2f"), fmt(share, "%.0f"), goal))
            if shares.get(api):
                verdicts.aside("round by round: %s %% of that round's ceiling (median %.0f %%)"
                               % (", ".join("%.0f" % x for x in shares[api]), statistics.median(shares[api])))
            for ph in peers:
                verdicts.aside("%.2fx %s" % (tw.rate() / ph.rate(), ph.name))
        else:
            why = "tw-friends not measured" if tw is None else "incomplete, see problems" if not usable(tw) \
                else "no ceiling measured"
            verdicts.unmet(label, why, goal, "%s (%s)" % (label, why))
        if usable(ceil) and top is not None:
            verdicts.aside("(sandbox ceiling: %.0f accounts/s, %.2fx %s: the most any client reaches here)"
                           % (ceil.rate(), ceil.rate() / top.rate(), top.name))

    full = [ph for (who, _), ph in phases.items() if who == "tw-friends" and ph.rss_kib is not None]
    for label, runs in (("peak RSS at {:,}".format(args.small), [probe] if probe and probe.rss_kib else []),
                        ("peak RSS at {:,}".format(n), full)):
        goal = "goal <= %g MiB" % GOAL_RSS_MIB
        if runs:
            peak = max(rss_mib(ph) for ph in runs)
            verdicts.goal("tw-friends", "%s: %.1f MiB" % (label, peak), goal, peak <= GOAL_RSS_MIB,
                          "tw-friends %s: %.1f MiB (%s)" % (label, peak, goal))
        else:
            verdicts.goal("tw-friends", "%s: n/a (not measured)" % label, goal, False,
                          "tw-friends %s (not measured)" % label)
    if probe is not None and probe.rss_kib and full:
        growth = max(rss_mib(ph) for ph in full) - rss_mib(probe)
        print("  memory: tw-friends peak RSS %.1f MiB at %s accounts, %.1f MiB at %s (%+.1f MiB)"
              % (rss_mib(probe), format(args.small, ","), max(rss_mib(ph) for ph in full), format(n, ","), growth))
        if growth > RSS_GROWTH_MIB:
            problems.append("tw-friends's peak RSS grows with the list: %+.1f MiB from %d to %d accounts"
                            % (growth, args.small, n))
    print_problems(problems, sandbox_stderr)

    with open(os.path.join(args.out, "results.json"), "w", encoding="utf-8") as f:
        json.dump({"accounts": n, "small": args.small, "runs": args.runs, "peer_runs": args.peer_runs,
                   "phases": {"%s v%s" % k: v.as_dict() for k, v in phases.items()}, "round_shares": shares,
                   "verdicts": verdicts.as_list(), "problems": problems}, f, indent=1)
    verdicts.banner(problems)
    return 0


if __name__ == "__main__":
    sys.exit(main())
