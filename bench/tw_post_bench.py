#!/usr/bin/env python3
"""tw-post benchmark (the tw-post part of `make bench`): posts to the local
sandbox with injected latency, side by side with a tweepy create_tweet loop and
a trivial HTTP client that measures the sandbox's own ceiling.

    python bench/tw_post_bench.py [--bin DIR] [--posts N] [--latency-ms MS]
                                  [--parallel N] [--sandbox-threads N] [--runs N]

A report, not a test: exits 0 whether or not the goals are met (the closing
banner says which were missed), 1 only when the benchmark cannot run (no
sandbox, no tweepy). See bench/README.md.
"""
import functools
import json
import os
import random
import sys
import time

from benchlib import (Record, Verdicts, arg_parser, clean_env, count_envelopes, fail, fastest, fmt,
                      keepalive_pool, latency_timeout, log_figures, longest_idle, measure, median_gap_ms,
                      memory_growth, note, parse_args, posting_cells, posting_problems, print_header,
                      print_problems, reuse_row, rss_mib, runs_line, setup, start_sandbox, tool_run,
                      unchecked_oauth_header)

HERE = os.path.dirname(os.path.abspath(__file__))

# Goals (issue): tw-post -j 1 >= 1.2x tweepy's loop; tw-post -j 8 >= 6x tweepy's
# loop or >= 90 % of the sandbox ceiling at 8; peak RSS <= 20 MiB.
GOAL_SEQ = 1.2
GOAL_PAR = 6.0
GOAL_CEILING_SHARE = 90.0
GOAL_RSS_MIB = 20.0
GOAL_COLUMNS = (18, 34, 26)

# Words for the seeded post texts: ASCII, accented Latin, CJK, emoji with a
# ZWJ sequence, mentions, hashtags and a link, so the sandbox's length check
# (twitter-text) does comparable work for every contender.
WORDS = ("the quick brown fox jumps over lazy dog release notes benchmark pipeline "
         "café naïve crème brûlée façade jalapeño Zürich São Paulo "
         "東京 天気 今日は 晴れ 서울 날씨 "
         "🎉 🚀 👩‍💻 ✨ @socialpipe_demo @jack #swift #unix https://example.com/post").split()


die = functools.partial(fail, "tw-post")


def base_texts(n, seed=20260101):
    """n seeded texts of 4-16 words; each contender prefixes its own tag."""
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 16))) for _ in range(n)]


def write_input(path, tag, texts):
    with open(path, "w", encoding="utf-8") as f:
        for i, text in enumerate(texts):
            f.write(json.dumps({"text": "%s %04d %s" % (tag, i, text)}, ensure_ascii=False) + "\n")


class Phase(Record):
    """One contender's run: figures and what the sandbox saw."""

    def __init__(self, name, parallel):
        super().__init__(name)
        self.parallel = parallel
        self.ok = 0
        self.posts = 0
        self.gap_ms = None
        self.idle_s = 0.0          # longest time with no request in flight
        self.idle_before = None    # which request (1-based, by arrival) ended it
        self.duplicates = 0

    def complete(self, n):
        return self.seconds is not None and self.ok == n and self.posts == n


def collect_sandbox(sb, phase, tag):
    """Fills in what the sandbox logged for phase (posts carrying tag), then
    forgets its log and posts so the next phase starts from the same state."""
    log = [e for e in sb.log(path="/2/tweets") if e["method"] == "POST"]
    log_figures(phase, log)
    phase.gap_ms = median_gap_ms(log)
    phase.idle_s, phase.idle_before = longest_idle(log)
    posts = sb.posts(service="x")
    mine = [p for p in posts["posts"] if p["text"].startswith(tag + " ")]
    phase.posts = len(mine)
    phase.duplicates = sum(1 for e in log if e.get("duplicate"))
    sb.control(clear_log=True, clear_posts=True, reset_rate_limits=True)


# ------------------------------------------------------------------ contenders

def trivial_client(sb, tag, texts, threads):
    """The sandbox's ceiling: `threads` threads, each with one keep-alive
    http.client connection, POSTing minimal JSON with a fixed OAuth header
    (signatures are not checked) until every text has been posted. Returns
    (seconds, ok, failure Counter)."""
    auth = unchecked_oauth_header()
    bodies = [json.dumps({"text": "%s %04d %s" % (tag, i, t)}).encode() for i, t in enumerate(texts)]

    def send(conn, i, posted, failures):
        conn.request("POST", "/2/tweets", body=bodies[i],
                     headers={"Content-Type": "application/json", "Authorization": auth})
        resp = conn.getresponse()
        resp.read()
        if resp.status == 201:
            posted[i] = True
        else:
            failures["HTTP %d" % resp.status] += 1

    seconds, posted, failures = keepalive_pool(sb, range(len(bodies)), threads, send)
    return seconds, len(posted), failures


def run_ceiling(sb, args, texts, run_id, threads):
    tag = "ceiling-%d-%s" % (threads, run_id)

    def once(r):
        rtag = "%s.%d" % (tag, r)
        seconds, ok, kinds = trivial_client(sb, rtag, texts, threads)
        phase = Phase("sandbox ceiling (trivial)", threads)
        phase.seconds, phase.ok, phase.kinds = seconds, ok, kinds
        phase.failed = sum(kinds.values())
        collect_sandbox(sb, phase, rtag)
        return phase

    return fastest([once(r) for r in range(args.runs)], len(texts))


def run_tw_post(sb, args, texts, run_id, parallel, env, label=None):
    tag = "tw-post-j%d-%s" % (parallel, run_id)
    name = label or "tw-post -j %d" % parallel
    stem = os.path.join(args.out, "tw-post-j%d%s" % (parallel, "-" + label.split()[-1] if label else ""))

    def once(r):
        rtag = "%s.%d" % (tag, r)
        write_input(stem + ".in.jsonl", rtag, texts)
        phase = Phase(name, parallel)
        measure(phase, [args.tw_post, "-q", "-j", str(parallel)], stem + ".in.jsonl", stem, env,
                latency_timeout(args.latency_ms, len(texts)))
        phase.ok, phase.failed, phase.kinds = count_envelopes(stem + ".out.jsonl")
        collect_sandbox(sb, phase, rtag)
        return phase

    return tool_run([once(r) for r in range(args.runs)], len(texts), every=True, stalls=True)


def run_tweepy(sb, args, texts, run_id, env):
    tag = "tweepy-%s" % run_id
    stem = os.path.join(args.out, "tweepy")
    argv = [sys.executable, os.path.join(HERE, "tweepy_post.py"), "--api-base", sb.url,
            "--stats", stem + ".stats.json"]

    def once(r):
        rtag = "%s.%d" % (tag, r)
        write_input(stem + ".in.jsonl", rtag, texts)
        phase = Phase("tweepy create_tweet loop", 1)
        # The loop alone (--stats): tweepy's rate is not charged for
        # interpreter start-up and imports (tw-post's includes its start-up).
        measure(phase, argv, stem + ".in.jsonl", stem, env, latency_timeout(args.latency_ms, len(texts)), stats=True)
        phase.ok, phase.failed, phase.kinds = count_envelopes(stem + ".out.jsonl")
        collect_sandbox(sb, phase, rtag)
        return phase

    return fastest([once(r) for r in range(args.runs)], len(texts))


# ---------------------------------------------------------------------- report

def main(argv=None):
    p = arg_parser("tw-post")
    p.add_argument("--posts", type=int, default=int(os.environ.get("BENCH_TW_POSTS", 1000)))
    p.add_argument("--parallel", type=int, default=8)
    args = parse_args(p, "tw-post", "TW", argv)
    if args.parallel < 2 or args.posts < 1 or args.runs < 1:
        die("--parallel must be >= 2, --posts and --runs >= 1")
    args.tw_post, have_tw_post, xdg = setup(args, "tw-post", {"tweepy": "tweepy"})
    n = args.posts
    par = args.parallel
    texts = base_texts(n)
    run_id = "%s-%d" % (time.strftime("%Y%m%dT%H%M%S"), os.getpid())

    sb = start_sandbox("tw-post", extra_args=["--no-verify-signatures", "--no-rate-limits",
                                              "--threads", str(args.sandbox_threads)])
    phases = {}
    small = None
    try:
        sb.control(latency_ms=args.latency_ms)
        state = sb.state()
        post_limit = state["x_rate_limits"].get("POST /2/tweets", {}).get("limit", 0)
        if state["verify_signatures"] or state["latency_ms"] != args.latency_ms or post_limit < 10 * n:
            die("sandbox not configured as asked: %r" % {k: state[k] for k in ("verify_signatures", "latency_ms")})
        env = clean_env(sb.url, xdg)

        note("tw-post: sandbox %s (%d threads, signatures off, limits off, %g ms latency)"
             % (sb.url, args.sandbox_threads, args.latency_ms))
        # Warm the sandbox up (imports, caches) with posts nobody counts.
        trivial_client(sb, "warm-up-" + run_id, texts[:100], par)
        sb.control(clear_log=True, clear_posts=True, reset_rate_limits=True)

        for threads in (1, par):
            note("tw-post: sandbox ceiling, trivial client, %d connection(s), %d posts" % (threads, n))
            phases["ceiling-%d" % threads] = run_ceiling(sb, args, texts, run_id, threads)
        if have_tw_post:
            # A short run first: its peak RSS, set against the full run's, shows growth.
            small_n = max(1, n // 10)
            note("tw-post: -j %d, %d posts (memory growth probe)" % (par, small_n))
            small = run_tw_post(sb, args, texts[:small_n], run_id + "-small", par, env, label="tw-post small")
            for j in (1, par):
                note("tw-post: tw-post -j %d, %d posts" % (j, n))
                phases["tw-post-%d" % j] = run_tw_post(sb, args, texts, run_id, j, env)
        note("tw-post: tweepy create_tweet loop, %d posts" % n)
        phases["tweepy"] = run_tweepy(sb, args, texts, run_id, env)
        sandbox_stderr = sb.stderr_text()
    finally:
        sb.stop()

    # ---------------------------------------------------------------- report
    verdicts = Verdicts("tw-post", GOAL_COLUMNS, 96)

    ceil1, ceilp = phases["ceiling-1"], phases["ceiling-%d" % par]
    tw1, twp = phases.get("tw-post-1"), phases.get("tw-post-%d" % par)
    tweepy_phase = phases["tweepy"]

    def usable(ph):
        return ph is not None and ph.complete(n)

    def why_not(ph, other=None):
        if ph is None:
            return "not measured"
        if not usable(ph):
            return "%s incomplete, see problems" % ph.name
        return "%s incomplete, see problems" % other.name if other is not None else "not measured"

    print_header([" tw-post benchmark: %d posts per contender to the sandbox (POST /2/tweets), %g ms injected "
                  "latency;" % (n, args.latency_ms),
                  " sandbox: --threads %d, signatures not checked, rate limits off, same for every client;"
                  % args.sandbox_threads,
                  runs_line(args.runs)], 96)
    head = "  %-26s %3s %8s %8s %9s %8s %5s %6s %9s"
    print(head % ("contender", "-j", "seconds", "posts/s", "peak RSS", "gap ms", "ok", "posted", "conns"))
    rows = [ceil1, ceilp, tw1, twp, tweepy_phase]
    for ph in rows:
        if ph is None:
            continue
        print(head % ((ph.name, ph.parallel) + posting_cells(ph, n)))
    if not have_tw_post:
        print("  %-28s not measured: %s missing" % ("tw-post", args.tw_post))
    print("  (seconds: tw-post's whole process, start-up included; tweepy's posting loop only, without")
    print("   interpreter start-up and imports (process: %s s, peak RSS of the Python process);"
          % fmt(tweepy_phase.process_seconds, "%.2f"))
    print("   gap ms: median, per connection, from an answer being ready to the next request arriving,")
    print("   i.e. the client's own time per post, latency excluded (sandbox log);")
    print("   posted: posts the sandbox created with the contender's texts; conns: distinct client")
    print("   connections / POST requests in the sandbox log)")

    problems = []
    for ph in rows + [small]:
        if ph is None:
            continue
        if not ph.complete(n if ph is not small else max(1, n // 10)):
            problems.append("%s: %d ok, %d failed, %d posted; failures %s; sandbox statuses %s%s"
                            % (ph.name, ph.ok, ph.failed, ph.posts, dict(ph.kinds) or "-",
                               dict(ph.statuses), "; " + ph.error if ph.error else ""))
        problems += posting_problems(ph)

    print()
    print(" goals")
    r_tweepy = tweepy_phase.rate(n) if usable(tweepy_phase) else None

    # tw-post -j 1 against tweepy's loop.
    goal = "goal >= %gx" % GOAL_SEQ
    if usable(tw1) and r_tweepy:
        x = tw1.rate(n) / r_tweepy
        verdicts.goal("tw-post -j 1", "%.2fx tweepy" % x, goal, x >= GOAL_SEQ,
                      "tw-post -j 1: %.2fx tweepy (goal >= %gx)" % (x, GOAL_SEQ))
    else:
        why = why_not(tw1, tweepy_phase)
        verdicts.unmet("tw-post -j 1", why, goal, "tw-post -j 1 vs tweepy (%s)" % why)
    if usable(ceil1) and r_tweepy:
        verdicts.aside("(sandbox ceiling at 1: %.2fx tweepy, the most any client reaches here)"
                       % (ceil1.rate(n) / r_tweepy))

    # tw-post -j 8: against tweepy's sequential loop, or share of the ceiling at 8.
    goal = "goal >= %gx or >= %g %%" % (GOAL_PAR, GOAL_CEILING_SHARE)
    if usable(twp) and (r_tweepy or usable(ceilp)):
        x = twp.rate(n) / r_tweepy if r_tweepy else None
        share = 100.0 * twp.rate(n) / ceilp.rate(n) if usable(ceilp) else None
        ok = (x is not None and x >= GOAL_PAR) or (share is not None and share >= GOAL_CEILING_SHARE)
        line = "%sx tweepy, %s %% of ceiling" % (fmt(x, "%.2f"), fmt(share, "%.0f"))
        verdicts.goal("tw-post -j %d" % par, line, goal, ok,
                      "tw-post -j %d: %sx tweepy, %s %% of the sandbox ceiling (%s)"
                      % (par, fmt(x, "%.2f"), fmt(share, "%.0f"), goal))
    else:
        why = why_not(twp, tweepy_phase if not usable(ceilp) else None)
        verdicts.unmet("tw-post -j %d" % par, why, goal, "tw-post -j %d vs tweepy / ceiling (%s)" % (par, why))
    if usable(ceilp) and r_tweepy:
        verdicts.aside("(sandbox ceiling at %d: %.1f posts/s, %.2fx tweepy)"
                       % (par, ceilp.rate(n), ceilp.rate(n) / r_tweepy))

    # Peak RSS over the tw-post runs.
    tw_runs = [ph for ph in (tw1, twp, small) if ph is not None and ph.rss_kib is not None]
    goal = "goal <= %g MiB" % GOAL_RSS_MIB
    if tw_runs:
        peak = max(rss_mib(ph) for ph in tw_runs)
        verdicts.goal("tw-post peak RSS", "%.1f MiB" % peak, goal, peak <= GOAL_RSS_MIB,
                      "tw-post peak RSS: %.1f MiB (%s)" % (peak, goal))
    else:
        verdicts.unmet("tw-post peak RSS", "not measured", goal, "tw-post peak RSS (not measured)")

    print()
    print(" connection reuse (sandbox log: distinct client ports per POST)")
    for ph in (tw1, twp, tweepy_phase, ceil1, ceilp):
        if ph is not None:
            problems += reuse_row(ph, "tw-post", 30)
    problems += memory_growth(small, twp, max(1, n // 10), n, "tw-post")
    print_problems(problems, sandbox_stderr)

    with open(os.path.join(args.out, "results.json"), "w", encoding="utf-8") as f:
        json.dump({"posts": n, "latency_ms": args.latency_ms, "sandbox_threads": args.sandbox_threads,
                   "runs": args.runs, "phases": {k: v.as_dict() for k, v in phases.items() if v is not None},
                   "small": small.as_dict() if small else None,
                   "verdicts": verdicts.as_list(), "problems": problems}, f, indent=1)

    verdicts.banner(problems)
    return 0


if __name__ == "__main__":
    sys.exit(main())
