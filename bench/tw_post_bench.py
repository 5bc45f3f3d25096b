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
import argparse
import collections
import http.client
import json
import os
import random
import statistics
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "sandbox"))

import harness  # noqa: E402
from benchlib import (TIME, Record, Verdicts, clean_env, count_envelopes, fmt, note,  # noqa: E402
                      prepare_out, print_problems, run_measured, runs_line, unchecked_oauth_header)

# Goals (issue): tw-post -j 1 >= 1.2x tweepy's loop; tw-post -j 8 >= 6x tweepy's
# loop or >= 90 % of the sandbox ceiling at 8; peak RSS <= 20 MiB.
GOAL_SEQ = 1.2
GOAL_PAR = 6.0
GOAL_CEILING_SHARE = 90.0
GOAL_RSS_MIB = 20.0
STALL_S = 0.5  # an idle stretch this long in a run is reported as a stall
GOAL_ROW = "  %-18s %-34s %-26s %s"

# Words for the seeded post texts: ASCII, accented Latin, CJK, emoji with a
# ZWJ sequence, mentions, hashtags and a link, so the sandbox's length check
# (twitter-text) does comparable work for every contender.
WORDS = ("the quick brown fox jumps over lazy dog release notes benchmark pipeline "
         "café naïve crème brûlée façade jalapeño Zürich São Paulo "
         "東京 天気 今日は 晴れ 서울 날씨 "
         "🎉 🚀 👩‍💻 ✨ @socialpipe_demo @jack #swift #unix https://example.com/post").split()


def die(message):
    sys.stderr.write("tw-post bench: %s\n" % message)
    sys.exit(1)


def base_texts(n, seed=20260101):
    """n seeded texts of 4-16 words; each contender prefixes its own tag."""
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 16))) for _ in range(n)]


def write_input(path, tag, texts):
    with open(path, "w", encoding="utf-8") as f:
        for i, text in enumerate(texts):
            f.write(json.dumps({"text": "%s %04d %s" % (tag, i, text)}, ensure_ascii=False) + "\n")


def contender_timeout(args, n):
    """Seconds a contender may take before it counts as hung: several times
    a slow sequential client's time."""
    return 60 + 3 * n * (args.latency_ms + 30) / 1000.0


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

    def rate(self, n):
        return n / self.seconds if self.seconds else None

    def complete(self, n):
        return self.seconds is not None and self.ok == n and self.posts == n


def collect_sandbox(sb, phase, tag):
    """Fills in what the sandbox logged for phase (posts carrying tag), then
    forgets its log and posts so the next phase starts from the same state."""
    log = [e for e in sb.log(path="/2/tweets") if e["method"] == "POST"]
    phase.requests = len(log)
    phase.connections = len({e["client_port"] for e in log})
    phase.statuses = collections.Counter(str(e["status"]) for e in log)
    # Per connection, the time from one answer being ready to the next request
    # arriving: the client's own time per post (plus loopback and the sandbox's
    # parsing of the request head), free of the injected latency.
    by_conn = collections.defaultdict(list)
    for e in log:
        by_conn[e["client_port"]].append(e)
    gaps = []
    for entries in by_conn.values():
        entries.sort(key=lambda e: e["seq"])
        gaps += [1000 * (b["time"] - a["time"]) - a["duration_ms"] for a, b in zip(entries, entries[1:])]
    phase.gap_ms = statistics.median(gaps) if gaps else None
    # The longest stretch with no request of this client in the sandbox at all:
    # a client that stops sending with work left (a stall) shows up here.
    busy_until = None
    for i, e in enumerate(sorted(log, key=lambda e: e["time"]), 1):
        if busy_until is not None and e["time"] - busy_until > phase.idle_s:
            phase.idle_s, phase.idle_before = e["time"] - busy_until, i
        end = e["time"] + e["duration_ms"] / 1000.0
        busy_until = end if busy_until is None else max(busy_until, end)
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
    next_index = iter(range(len(bodies)))
    lock = threading.Lock()
    results = collections.Counter()

    def worker():
        conn = http.client.HTTPConnection(sb.host, sb.port, timeout=60)
        local = collections.Counter()
        try:
            while True:
                with lock:
                    i = next(next_index, None)
                if i is None:
                    break
                conn.request("POST", "/2/tweets", body=bodies[i],
                             headers={"Content-Type": "application/json", "Authorization": auth})
                resp = conn.getresponse()
                resp.read()
                local["ok" if resp.status == 201 else "HTTP %d" % resp.status] += 1
        except (OSError, http.client.HTTPException) as e:
            local["%s" % type(e).__name__] += 1
        finally:
            conn.close()
            with lock:
                results.update(local)

    workers = [threading.Thread(target=worker) for _ in range(threads)]
    started = time.perf_counter()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    seconds = time.perf_counter() - started
    ok = results.pop("ok", 0)
    return seconds, ok, results


def run_ceiling(sb, args, texts, run_id, threads):
    tag = "ceiling-%d-%s" % (threads, run_id)
    phase = Phase("sandbox ceiling (trivial)", threads)
    best = None
    for r in range(args.runs):
        rtag = "%s.%d" % (tag, r)
        seconds, ok, kinds = trivial_client(sb, rtag, texts, threads)
        probe = Phase(phase.name, threads)
        probe.seconds, probe.ok, probe.kinds = seconds, ok, kinds
        probe.failed = sum(kinds.values())
        collect_sandbox(sb, probe, rtag)
        if best is None or (probe.complete(len(texts)), -probe.seconds) > (best.complete(len(texts)), -best.seconds):
            best = probe
    return best


def run_tw_post(sb, args, texts, run_id, parallel, env, label=None):
    tag = "tw-post-j%d-%s" % (parallel, run_id)
    name = label or "tw-post -j %d" % parallel
    best = None
    peak = 0
    stall = None
    for r in range(args.runs):
        rtag = "%s.%d" % (tag, r)
        stem = os.path.join(args.out, "tw-post-j%d%s" % (parallel, "-" + label.split()[-1] if label else ""))
        write_input(stem + ".in.jsonl", rtag, texts)
        phase = Phase(name, parallel)
        argv = [args.tw_post, "-q", "-j", str(parallel)]
        status, seconds, rss = run_measured(argv, stem + ".in.jsonl", stem + ".out.jsonl", stem + ".err", env,
                                           contender_timeout(args, len(texts)))
        phase.exit_status, phase.seconds, phase.process_seconds, phase.rss_kib = status, seconds, seconds, rss
        phase.ok, phase.failed, phase.kinds = count_envelopes(stem + ".out.jsonl")
        collect_sandbox(sb, phase, rtag)
        if status != 0:
            with open(stem + ".err", encoding="utf-8", errors="replace") as f:
                phase.error = "exit %s: %s" % (status, f.read().strip()[-300:])
        peak = max(peak, rss) if rss is not None and peak is not None else None
        if stall is None or phase.idle_s > stall[0]:
            stall = (phase.idle_s, phase.idle_before)
        if best is None or (phase.complete(len(texts)), -phase.seconds) > (best.complete(len(texts)), -best.seconds):
            best = phase
    # The peak and the longest stall over all runs, not only the fastest's.
    best.rss_kib = peak
    best.idle_s, best.idle_before = stall
    return best


def run_tweepy(sb, args, texts, run_id, env):
    tag = "tweepy-%s" % run_id
    best = None
    for r in range(args.runs):
        rtag = "%s.%d" % (tag, r)
        stem = os.path.join(args.out, "tweepy")
        write_input(stem + ".in.jsonl", rtag, texts)
        phase = Phase("tweepy create_tweet loop", 1)
        argv = [sys.executable, os.path.join(HERE, "tweepy_post.py"), "--api-base", sb.url,
                "--stats", stem + ".stats.json"]
        if os.path.exists(stem + ".stats.json"):
            os.unlink(stem + ".stats.json")
        status, seconds, rss = run_measured(argv, stem + ".in.jsonl", stem + ".out.jsonl", stem + ".err", env,
                                           contender_timeout(args, len(texts)))
        phase.exit_status, phase.process_seconds, phase.rss_kib = status, seconds, rss
        phase.ok, phase.failed, phase.kinds = count_envelopes(stem + ".out.jsonl")
        try:
            with open(stem + ".stats.json", encoding="utf-8") as f:
                # The loop alone: tweepy's rate is not charged for interpreter
                # start-up and imports (tw-post's includes its start-up).
                phase.seconds = json.load(f)["seconds"]
        except (OSError, ValueError, KeyError):
            phase.seconds = None
        collect_sandbox(sb, phase, rtag)
        if status != 0:
            with open(stem + ".err", encoding="utf-8", errors="replace") as f:
                phase.error = "exit %s: %s" % (status, f.read().strip()[-300:])
        if best is None or (phase.complete(len(texts)), -(phase.seconds or 1e9)) > \
                (best.complete(len(texts)), -(best.seconds or 1e9)):
            best = phase
    return best


# ---------------------------------------------------------------------- report

def main(argv=None):
    p = argparse.ArgumentParser(description="tw-post benchmark against the sandbox")
    p.add_argument("--bin", default=os.environ.get("SOCIALPIPE_BIN"),
                   help="directory holding tw-post (default $SOCIALPIPE_BIN)")
    p.add_argument("--posts", type=int, default=int(os.environ.get("BENCH_TW_POSTS", 1000)))
    p.add_argument("--latency-ms", type=float, default=float(os.environ.get("BENCH_TW_LATENCY_MS", 20)))
    p.add_argument("--parallel", type=int, default=8)
    p.add_argument("--sandbox-threads", type=int, default=int(os.environ.get("BENCH_TW_SANDBOX_THREADS", 16)),
                   help="the sandbox's --threads (connections served at once)")
    p.add_argument("--runs", type=int, default=int(os.environ.get("BENCH_TW_RUNS", 1)),
                   help="runs per contender, the fastest complete one counts")
    p.add_argument("--out", default=os.path.join(HERE, "out", "tw-post"))
    args = p.parse_args(argv)
    if not args.bin:
        die("SOCIALPIPE_BIN (or --bin) must name the directory holding tw-post")
    if args.parallel < 2 or args.posts < 1 or args.runs < 1:
        die("--parallel must be >= 2, --posts and --runs >= 1")
    sys.stdout.reconfigure(line_buffering=True)
    args.tw_post = os.path.join(os.path.abspath(args.bin), "tw-post")
    have_tw_post = os.access(args.tw_post, os.X_OK)
    if not have_tw_post:
        note("%s not found; build it first (make build)" % args.tw_post)
    if not os.access(TIME, os.X_OK):
        note("%s not found (Debian package time): peak RSS is not measured" % TIME)
    try:
        import tweepy  # noqa: F401
    except ImportError:
        die("%s cannot import tweepy (make venv)" % sys.executable)

    xdg = prepare_out(args.out)
    n = args.posts
    par = args.parallel
    texts = base_texts(n)
    run_id = "%s-%d" % (time.strftime("%Y%m%dT%H%M%S"), os.getpid())

    extra = ["--no-verify-signatures", "--no-rate-limits", "--threads", str(args.sandbox_threads)]
    try:
        sb = harness.Sandbox.start(extra_args=extra)
    except harness.SandboxError as e:
        die(str(e))
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
    verdicts = Verdicts("tw-post")
    verdict = verdicts.add

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

    def rss_mib(ph):
        return None if ph is None or ph.rss_kib is None else ph.rss_kib / 1024.0

    rule = "=" * 96
    print()
    print(rule)
    print(" tw-post benchmark: %d posts per contender to the sandbox (POST /2/tweets), %g ms injected latency;"
          % (n, args.latency_ms))
    print(" sandbox: --threads %d, signatures not checked, rate limits off, same for every client;"
          % args.sandbox_threads)
    print(runs_line(args.runs))
    print(rule)
    head = "  %-26s %3s %8s %8s %9s %8s %5s %6s %9s"
    print(head % ("contender", "-j", "seconds", "posts/s", "peak RSS", "gap ms", "ok", "posted", "conns"))
    rows = [ceil1, ceilp, tw1, twp, tweepy_phase]
    for ph in rows:
        if ph is None:
            continue
        rss = "-" if ph.rss_kib is None else "%.1f MiB" % rss_mib(ph)
        print(head % (ph.name, ph.parallel, fmt(ph.seconds, "%.2f"), fmt(ph.rate(n), "%.1f"), rss,
                      fmt(ph.gap_ms, "%.2f", "-"), ph.ok, ph.posts, "%d/%d" % (ph.connections, ph.requests)))
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
        if ph.idle_s > STALL_S:
            problems.append("%s: stalled: no request in flight for %.1f s (before request %d of %d) while "
                            "posts were left" % (ph.name, ph.idle_s, ph.idle_before, ph.requests))
        if ph.duplicates:
            problems.append("%s: %d duplicate refusals" % (ph.name, ph.duplicates))

    print()
    print(" goals")
    r_tweepy = tweepy_phase.rate(n) if usable(tweepy_phase) else None

    # tw-post -j 1 against tweepy's loop.
    if usable(tw1) and r_tweepy:
        x = tw1.rate(n) / r_tweepy
        line = "%.2fx tweepy" % x
        print(GOAL_ROW % ("tw-post -j 1", line, "goal >= %gx" % GOAL_SEQ,
                                          verdict(x >= GOAL_SEQ, "tw-post -j 1: %.2fx tweepy (goal >= %gx)" % (x, GOAL_SEQ))))
    else:
        why = why_not(tw1, tweepy_phase)
        print(GOAL_ROW % ("tw-post -j 1", "n/a (%s)" % why, "goal >= %gx" % GOAL_SEQ,
                          verdict(False, "tw-post -j 1 vs tweepy (%s)" % why)))
    if usable(ceil1) and r_tweepy:
        print("  %-18s %s" % ("", "(sandbox ceiling at 1: %.2fx tweepy, the most any client reaches here)"
                                   % (ceil1.rate(n) / r_tweepy)))

    # tw-post -j 8: against tweepy's sequential loop, or share of the ceiling at 8.
    if usable(twp) and (r_tweepy or usable(ceilp)):
        x = twp.rate(n) / r_tweepy if r_tweepy else None
        share = 100.0 * twp.rate(n) / ceilp.rate(n) if usable(ceilp) else None
        ok = (x is not None and x >= GOAL_PAR) or (share is not None and share >= GOAL_CEILING_SHARE)
        line = "%sx tweepy, %s %% of ceiling" % (fmt(x, "%.2f"), fmt(share, "%.0f"))
        print(GOAL_ROW % ("tw-post -j %d" % par, line, "goal >= %gx or >= %g %%" % (GOAL_PAR, GOAL_CEILING_SHARE),
                                          verdict(ok, "tw-post -j %d: %sx tweepy, %s %% of the sandbox ceiling "
                                                      "(goal >= %gx or >= %g %%)"
                                                      % (par, fmt(x, "%.2f"), fmt(share, "%.0f"), GOAL_PAR, GOAL_CEILING_SHARE))))
    else:
        why = why_not(twp, tweepy_phase if not usable(ceilp) else None)
        print(GOAL_ROW % ("tw-post -j %d" % par, "n/a (%s)" % why,
                          "goal >= %gx or >= %g %%" % (GOAL_PAR, GOAL_CEILING_SHARE),
                          verdict(False, "tw-post -j %d vs tweepy / ceiling (%s)" % (par, why))))
    if usable(ceilp) and r_tweepy:
        print("  %-18s %s" % ("", "(sandbox ceiling at %d: %.1f posts/s, %.2fx tweepy)"
                                   % (par, ceilp.rate(n), ceilp.rate(n) / r_tweepy)))

    # Peak RSS over the tw-post runs.
    tw_runs = [ph for ph in (tw1, twp, small) if ph is not None and ph.rss_kib is not None]
    if tw_runs:
        peak = max(rss_mib(ph) for ph in tw_runs)
        print(GOAL_ROW % ("tw-post peak RSS", "%.1f MiB" % peak, "goal <= %g MiB" % GOAL_RSS_MIB,
                                          verdict(peak <= GOAL_RSS_MIB, "tw-post peak RSS: %.1f MiB (goal <= %g MiB)"
                                                  % (peak, GOAL_RSS_MIB))))
    else:
        print(GOAL_ROW % ("tw-post peak RSS", "n/a (not measured)", "goal <= %g MiB" % GOAL_RSS_MIB,
                                          verdict(False, "tw-post peak RSS (not measured)")))

    print()
    print(" connection reuse (sandbox log: distinct client ports per POST)")
    for ph in (tw1, twp, tweepy_phase, ceil1, ceilp):
        if ph is None:
            continue
        reused = ph.connections <= ph.parallel and ph.requests > 0
        print("  %-30s %5d requests over %4d connection(s)   %s"
              % ("%s%s" % (ph.name, "" if ph.name.startswith("tw-post") else " -j %d" % ph.parallel),
                 ph.requests, ph.connections, "reused" if reused else "NOT REUSED (more connections than -j)"))
        if ph.name.startswith("tw-post") and not reused:
            problems.append("%s opened %d connections for %d requests at -j %d"
                            % (ph.name, ph.connections, ph.requests, ph.parallel))
    if small is not None and twp is not None and small.rss_kib and twp.rss_kib:
        growth = (twp.rss_kib - small.rss_kib) / 1024.0
        print("  memory: tw-post -j %d peak RSS %.1f MiB for %d posts, %.1f MiB for %d (%+.1f MiB)"
              % (par, rss_mib(small), max(1, n // 10), rss_mib(twp), n, growth))
        if growth > 2.0:
            problems.append("tw-post's peak RSS grows with the input: %+.1f MiB from %d to %d posts"
                            % (growth, max(1, n // 10), n))
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
