#!/usr/bin/env python3
"""fb-feed benchmark (the fb-feed part of `make bench`): Page posts to the
local sandbox with injected latency, fb-feed sequential, in parallel and
batched, side by side with a facebook-sdk put_object loop and a trivial HTTP
client that measures the sandbox's own ceiling.

    python bench/fb_feed_bench.py [--bin DIR] [--posts N] [--latency-ms MS]
                                  [--parallel N] [--batch N] [--sandbox-threads N] [--runs N]

A report, not a test: exits 0 whether or not the goals are met (the closing
banner says which were missed, and that problems were found when a run did not
post every message exactly once), 1 only when the benchmark cannot run (no
sandbox, no facebook-sdk). See bench/README.md.
"""
import collections
import functools
import http.client
import json
import os
import sys
import time
import urllib.parse

from benchlib import (FB_CREDENTIALS, FB_PAGE_ID, PostingRun, Verdicts, arg_parser, facebook_env, fail, fastest, fmt,
                      in_input_order, keepalive_pool, latency_timeout, log_figures, longest_idle, measure,
                      median_gap_ms, memory_growth, note, parse_args, posting_cells, posting_problems, print_header,
                      print_problems, read_envelopes, reuse_row, rss_mib, runs_line, setup, start_sandbox, tool_run,
                      why_unusable)
from tw_post_bench import base_texts  # (the same seeded texts as tw-post's)

HERE = os.path.dirname(os.path.abspath(__file__))

# Goals (issue 9): fb-feed --batch 50 >= 20x facebook-sdk's put_object loop;
# fb-feed --parallel 8 >= 90 % of the sandbox ceiling at 8; peak RSS <= 20 MiB.
GOAL_BATCH_X = 20.0
GOAL_CEILING_SHARE = 90.0
GOAL_RSS_MIB = 20.0
GRAPH_VERSION = "v27.0"   # fb-feed's default; the sdk and the ceiling are given it
GOAL_COLUMNS = (22, 40, 16)

die = functools.partial(fail, "fb-feed")


def messages_for(tag, texts):
    """Each contender's own messages: its tag and the index make every one
    distinct (the sandbox refuses a repeated message on a Page, code 506)."""
    return ["%s %04d %s" % (tag, i, text) for i, text in enumerate(texts)]


def write_input(path, messages):
    with open(path, "w", encoding="utf-8") as f:
        for m in messages:
            f.write(json.dumps({"message": m, "page": FB_PAGE_ID}, ensure_ascii=False) + "\n")


class Phase(PostingRun):
    """One contender's run: figures and what the sandbox saw."""

    def __init__(self, name, parallel, batch=None):
        super().__init__(name, parallel)
        self.batch = batch
        self.undelivered = 0       # posts whose answer the sandbox could not deliver
        self.batch_sizes = collections.Counter()
        self.slot_statuses = collections.Counter()
        self.paths = collections.Counter()

    def shortfalls(self, n):
        bits = super().shortfalls(n)
        if self.undelivered:
            bits.append("%d answers lost" % self.undelivered)
        return bits


def collect_sandbox(sb, phase, messages, ids, lines):
    """Fills in what the sandbox logged and created for phase, checks every
    envelope against the post of its own line, then forgets the log and posts
    so the next phase starts from the same state."""
    log = [e for e in sb.log(service="facebook") if e["method"] == "POST"]
    log_figures(phase, log)
    phase.paths = collections.Counter(e["path"] for e in log)
    for e in log:
        if e.get("batch") is not None:
            phase.batch_sizes[len(e["batch"])] += 1
            phase.slot_statuses.update(str(item.get("status")) for item in e["batch"])
    phase.gap_ms = median_gap_ms(log)
    phase.idle_s, phase.idle_before = longest_idle(log)
    phase.duplicates = sum(1 for e in log if e.get("duplicate"))

    posts = sb.posts(service="facebook")["posts"]
    wanted = set(messages)
    mine = [p for p in posts if p.get("message") in wanted]
    phase.posts = len(mine)
    phase.distinct = len({p["message"] for p in mine})
    phase.strangers = len(posts) - len(mine)
    phase.undelivered = sum(1 for p in mine if not p.get("delivered", True))
    # Every line's envelope must carry the id of the post made with that line's
    # message (batch slots mapped back to the wrong record show up here).
    post_id = {}
    for p in mine:
        post_id.setdefault(p["message"], p["id"])
    phase.mismatched = sum(1 for line, pid in ids.items()
                           if not isinstance(line, int) or not 1 <= line <= len(messages)
                           or post_id.get(messages[line - 1]) != pid)
    phase.envelopes = len(lines)
    phase.out_of_order = not in_input_order(lines)
    sb.control(clear_log=True, clear_posts=True, reset_rate_limits=True)


# ------------------------------------------------------------------ contenders

def trivial_client(sb, messages, threads, batch=None):
    """The sandbox's ceiling: `threads` threads, each with one keep-alive
    http.client connection, POSTing a minimal form (`message=…`) to
    /{version}/{page}/feed with the Page token in a Bearer header, or with
    `batch` one `POST /{version}/` per `batch` messages (include_headers=false),
    until every message has been posted. It reads each answer's id (a slot's
    body is parsed only for that) and nothing else. Returns (seconds,
    {line: id}, failure Counter)."""
    headers = {"Content-Type": "application/x-www-form-urlencoded",
               "Authorization": "Bearer " + FB_CREDENTIALS["FB_ACCESS_TOKEN"]}
    feed = "/%s/%s/feed" % (GRAPH_VERSION, FB_PAGE_ID)
    jobs = []
    if batch:
        for start in range(0, len(messages), batch):
            items = [{"method": "POST", "relative_url": "%s/feed" % FB_PAGE_ID,
                      "body": urllib.parse.urlencode({"message": m})} for m in messages[start:start + batch]]
            body = urllib.parse.urlencode({"batch": json.dumps(items), "include_headers": "false"})
            jobs.append(("/%s/" % GRAPH_VERSION, body.encode(), list(range(start + 1, start + 1 + len(items)))))
    else:
        jobs = [(feed, urllib.parse.urlencode({"message": m}).encode(), [i]) for i, m in enumerate(messages, 1)]

    def send(conn, job, ids, failures):
        path, body, lines = job
        conn.request("POST", path, body=body, headers=headers)
        resp = conn.getresponse()
        data = resp.read()
        if resp.status != 200:
            failures["HTTP %d" % resp.status] += len(lines)
            return
        answer = json.loads(data)
        if batch:
            for line, slot in zip(lines, answer):
                if isinstance(slot, dict) and slot.get("code") == 200:
                    ids[line] = json.loads(slot["body"])["id"]
                else:
                    failures["slot %s" % (slot.get("code") if isinstance(slot, dict) else slot)] += 1
        else:
            ids[lines[0]] = answer["id"]

    return keepalive_pool(sb, jobs, threads, send, catch=(OSError, http.client.HTTPException, ValueError,
                                                          KeyError, TypeError))


def run_ceiling(sb, args, texts, run_id, threads, batch=None):
    key = "batch%d" % batch if batch else "j%d" % threads
    name = "sandbox ceiling (trivial)" if not batch else "sandbox ceiling, batches"

    def once(r):
        messages = messages_for("ceiling-%s-%s.%d" % (key, run_id, r), texts)
        seconds, ids, kinds = trivial_client(sb, messages, threads, batch)
        phase = Phase(name, threads, batch)
        phase.seconds, phase.exit_status, phase.kinds = seconds, 0, kinds
        phase.ok, phase.failed = len(ids), sum(kinds.values())
        # The trivial client writes nothing, so it has no order to keep.
        collect_sandbox(sb, phase, messages, ids, list(range(1, len(messages) + 1)))
        return phase

    return fastest([once(r) for r in range(args.runs)], len(texts))


def fb_feed_flags(parallel, batch):
    return ["--batch", str(batch)] if batch else ["--parallel", str(parallel)]


def fb_feed_name(parallel, batch):
    return "fb-feed --batch %d" % batch if batch else "fb-feed --parallel %d" % parallel


def run_fb_feed(sb, args, texts, run_id, parallel, env, batch=None, small=False):
    key = ("batch%d" % batch if batch else "j%d" % parallel) + ("-small" if small else "")
    name = fb_feed_name(parallel, batch) + (" (%d posts)" % len(texts) if small else "")
    stem = os.path.join(args.out, "fb-feed-" + key)

    def once(r):
        messages = messages_for("fb-feed-%s-%s.%d" % (key, run_id, r), texts)
        write_input(stem + ".in.jsonl", messages)
        phase = Phase(name, parallel, batch)
        measure(phase, [args.fb_feed, "-q"] + fb_feed_flags(parallel, batch), stem + ".in.jsonl", stem, env,
                latency_timeout(args.latency_ms, len(texts)))
        phase.ok, phase.failed, phase.kinds, ids, lines = read_envelopes(stem + ".out.jsonl")
        collect_sandbox(sb, phase, messages, ids, lines)
        return phase

    return tool_run([once(r) for r in range(args.runs)], len(texts), every=True, stalls=True)


def run_sdk(sb, args, texts, run_id, env):
    stem = os.path.join(args.out, "facebook-sdk")
    argv = [sys.executable, os.path.join(HERE, "facebook_sdk_post.py"), "--api-base", sb.url,
            "--graph-version", GRAPH_VERSION, "--stats", stem + ".stats.json"]

    def once(r):
        messages = messages_for("facebook-sdk-%s.%d" % (run_id, r), texts)
        write_input(stem + ".in.jsonl", messages)
        phase = Phase("facebook-sdk put_object loop", 1)
        # The loop alone (--stats): the sdk's rate is not charged for
        # interpreter start-up and imports (fb-feed's includes its start-up).
        measure(phase, argv, stem + ".in.jsonl", stem, env, latency_timeout(args.latency_ms, len(texts)), stats=True)
        phase.ok, phase.failed, phase.kinds, ids, lines = read_envelopes(stem + ".out.jsonl")
        collect_sandbox(sb, phase, messages, ids, lines)
        return phase

    return fastest([once(r) for r in range(args.runs)], len(texts))


# ---------------------------------------------------------------------- report

def main(argv=None):
    p = arg_parser("fb-feed")
    p.add_argument("--posts", type=int, default=int(os.environ.get("BENCH_FB_POSTS", 1000)))
    p.add_argument("--parallel", type=int, default=8)
    p.add_argument("--batch", type=int, default=50)
    args = parse_args(p, "fb-feed", "FB", argv)
    if args.parallel < 2 or not 2 <= args.batch <= 50 or args.posts < 1 or args.runs < 1:
        die("--parallel must be >= 2, --batch 2 to 50, --posts and --runs >= 1")
    args.fb_feed, have_fb_feed, xdg = setup(args, "fb-feed", {"facebook": "facebook-sdk"})
    n = args.posts
    par = args.parallel
    bat = args.batch
    texts = base_texts(n)
    run_id = "%s-%d" % (time.strftime("%Y%m%dT%H%M%S"), os.getpid())
    small_n = max(1, n // 10)

    sb = start_sandbox("fb-feed", extra_args=["--no-rate-limits", "--threads", str(args.sandbox_threads)])
    phases = {}
    smalls = {}
    try:
        sb.control(latency_ms=args.latency_ms)
        state = sb.state()
        limits = state["facebook_limits"]
        budget = min((limits.get(k) or {}).get("limit", 0) for k in ("app", "user", "page"))
        if state["latency_ms"] != args.latency_ms or budget < 10 * n or limits.get("feed_post") is not None:
            die("sandbox not configured as asked: latency %r, facebook_limits %r" % (state["latency_ms"], limits))
        env = facebook_env(sb.url, xdg)

        note("fb-feed: sandbox %s (%d threads, limits off, %g ms latency)"
             % (sb.url, args.sandbox_threads, args.latency_ms))
        # Warm the sandbox up (imports, caches) with posts nobody counts.
        trivial_client(sb, messages_for("warm-up-" + run_id, texts[:100]), par)
        trivial_client(sb, messages_for("warm-up-batch-" + run_id, texts[:100]), 1, bat)
        sb.control(clear_log=True, clear_posts=True, reset_rate_limits=True)

        for threads in (1, par):
            note("fb-feed: sandbox ceiling, trivial client, %d connection(s), %d posts" % (threads, n))
            phases["ceiling-%d" % threads] = run_ceiling(sb, args, texts, run_id, threads)
        note("fb-feed: sandbox ceiling, trivial client, batches of %d on 1 connection, %d posts" % (bat, n))
        phases["ceiling-batch"] = run_ceiling(sb, args, texts, run_id, 1, bat)
        if have_fb_feed:
            # Short runs first: their peak RSS, set against the full runs', shows growth.
            for j, b in ((par, None), (1, bat)):
                note("fb-feed: %s, %d posts (memory growth probe)" % (fb_feed_name(j, b), small_n))
                smalls[b or j] = run_fb_feed(sb, args, texts[:small_n], run_id, j, env, batch=b, small=True)
            for key, j, b in (("fb-feed-1", 1, None), ("fb-feed-%d" % par, par, None), ("fb-feed-batch", 1, bat)):
                note("fb-feed: %s, %d posts" % (fb_feed_name(j, b), n))
                phases[key] = run_fb_feed(sb, args, texts, run_id, j, env, batch=b)
        note("fb-feed: facebook-sdk put_object loop, %d posts" % n)
        phases["facebook-sdk"] = run_sdk(sb, args, texts, run_id, env)
        sandbox_stderr = sb.stderr_text()
    finally:
        sb.stop()

    # ---------------------------------------------------------------- report
    verdicts = Verdicts("fb-feed", GOAL_COLUMNS, 104)

    ceil1, ceilp, ceilb = phases["ceiling-1"], phases["ceiling-%d" % par], phases["ceiling-batch"]
    fb1, fbp, fbb = phases.get("fb-feed-1"), phases.get("fb-feed-%d" % par), phases.get("fb-feed-batch")
    sdk = phases["facebook-sdk"]

    def usable(ph):
        return ph is not None and ph.complete(n)

    def why_not(*needed):
        return why_unusable(needed, n, "fb-feed not measured")

    print_header([" fb-feed benchmark: %d Page posts per contender to the sandbox (POST /%s/%s/feed,"
                  % (n, GRAPH_VERSION, FB_PAGE_ID),
                  " batches: POST /%s/), %g ms injected latency per request; sandbox: --threads %d, rate limits off,"
                  % (GRAPH_VERSION, args.latency_ms, args.sandbox_threads),
                  " the same for every client; the demo Page token (%s);" % FB_CREDENTIALS["FB_ACCESS_TOKEN"],
                  runs_line(args.runs)], 104)
    head = "  %-30s %3s %5s %8s %8s %9s %7s %5s %6s %10s"
    print(head % ("contender", "-j", "batch", "seconds", "posts/s", "peak RSS", "gap ms", "ok", "posted",
                  "conns/reqs"))
    rows = [ceil1, ceilp, ceilb, fb1, fbp, fbb, sdk]
    for ph in rows:
        if ph is None:
            continue
        print(head % ((ph.name, ph.parallel, ph.batch or "-") + posting_cells(ph, n)))
    if not have_fb_feed:
        print("  %-30s not measured: %s missing" % ("fb-feed", args.fb_feed))
    print("  (seconds: fb-feed's whole process, start-up included; facebook-sdk's posting loop only, without")
    print("   interpreter start-up and imports (process: %s s, peak RSS of the Python process); the trivial"
          % fmt(sdk.process_seconds, "%.2f"))
    print("   client's threads. gap ms: median, per connection, from an answer being ready to the next request")
    print("   arriving, i.e. the client's own time per request, latency excluded (sandbox log). ok: envelopes")
    print("   with an id; posted: posts the sandbox created with the contender's messages; conns/reqs:")
    print("   distinct client connections / POST requests in the sandbox log)")

    problems = []
    for ph in rows + list(smalls.values()):
        if ph is None:
            continue
        expect = small_n if ph in smalls.values() else n
        if not ph.complete(expect):
            problems.append("%s INCOMPLETE: %s; failures %s; sandbox statuses %s%s%s"
                            % (ph.name, ph.shortfall(expect), dict(ph.kinds) or "-", dict(ph.statuses),
                               ", slots %s" % dict(ph.slot_statuses) if ph.slot_statuses else "",
                               "; " + ph.error if ph.error else ""))
        problems += posting_problems(ph)
        if ph.name.startswith("fb-feed"):
            wrong = {path: k for path, k in ph.paths.items()
                     if path not in ("/%s/%s/feed" % (GRAPH_VERSION, FB_PAGE_ID), "/%s/" % GRAPH_VERSION)}
            if wrong:
                problems.append("%s sent to other paths than the sdk and the ceiling: %s" % (ph.name, wrong))

    print()
    print(" goals")
    r_sdk = sdk.rate(n) if usable(sdk) else None

    # fb-feed --batch 50 against facebook-sdk's loop.
    label = fb_feed_name(1, bat)
    goal = "goal >= %gx" % GOAL_BATCH_X
    if usable(fbb) and r_sdk:
        x = fbb.rate(n) / r_sdk
        verdicts.goal(label, "%.2fx facebook-sdk" % x, goal, x >= GOAL_BATCH_X,
                      "%s: %.2fx facebook-sdk (%s)" % (label, x, goal))
    else:
        why = why_not(fbb, sdk)
        verdicts.unmet(label, why, goal, "%s vs facebook-sdk (%s)" % (label, why))
    if usable(ceilb) and r_sdk:
        verdicts.aside("(sandbox ceiling with batches of %d, one at a time: %.1f posts/s, %.2fx facebook-sdk%s)"
                       % (bat, ceilb.rate(n), ceilb.rate(n) / r_sdk,
                          ", fb-feed at %.0f %% of it" % (100.0 * fbb.rate(n) / ceilb.rate(n)) if usable(fbb) else ""))

    # fb-feed --parallel 8 against the ceiling at 8.
    label = fb_feed_name(par, None)
    verdicts.ceiling_share(label, fbp, ceilp, n, GOAL_CEILING_SHARE, "fb-feed not measured")
    if usable(fbp) and r_sdk:
        verdicts.aside("(%.2fx facebook-sdk's sequential loop)" % (fbp.rate(n) / r_sdk))

    # Peak RSS over every fb-feed run.
    fb_runs = [ph for ph in (fb1, fbp, fbb) + tuple(smalls.values()) if ph is not None and ph.rss_kib is not None]
    goal = "goal <= %g MiB" % GOAL_RSS_MIB
    if fb_runs:
        top = max(fb_runs, key=lambda ph: ph.rss_kib)
        peak = rss_mib(top)
        verdicts.goal("fb-feed peak RSS", "%.1f MiB (%s)" % (peak, top.name), goal, peak <= GOAL_RSS_MIB,
                      "fb-feed peak RSS: %.1f MiB, %s (%s)" % (peak, top.name, goal))
    else:
        verdicts.unmet("fb-feed peak RSS", "not measured", goal, "fb-feed peak RSS (not measured)")

    # Sequential fb-feed: no goal, for comparison.
    if usable(fb1) and r_sdk:
        verdicts.aside("%.2fx facebook-sdk, %s %% of the ceiling at 1 (no goal; the ceiling at 1 is %sx the sdk)"
                       % (fb1.rate(n) / r_sdk,
                          fmt(100.0 * fb1.rate(n) / ceil1.rate(n) if usable(ceil1) else None, "%.0f"),
                          fmt(ceil1.rate(n) / r_sdk if usable(ceil1) else None, "%.2f")),
                       label=fb_feed_name(1, None))

    print()
    print(" requests (sandbox log: distinct client ports per POST; batch sizes and slot statuses)")
    for ph in (fb1, fbp, fbb, sdk, ceil1, ceilp, ceilb):
        if ph is None:
            continue
        extra_info = ""
        if ph.batch:
            sizes = ", ".join("%d x %d" % (k, size) for size, k in sorted(ph.batch_sizes.items(), reverse=True))
            extra_info = "   batches: %s; slots %s" % (sizes or "none", dict(ph.slot_statuses))
        problems += reuse_row(ph, "fb-feed", 34, with_j=not ph.batch, extra=extra_info)
        if ph is fbb and ph.requests > -(-n // bat):
            problems.append("%s sent %d batch requests for %d posts (%d would do): batches %s"
                            % (ph.name, ph.requests, n, -(-n // bat), dict(ph.batch_sizes)))
    for key, full in ((par, fbp), (bat, fbb)):
        problems += memory_growth(smalls.get(key), full, small_n, n, full.name if full else None)
    print_problems(problems, sandbox_stderr)

    with open(os.path.join(args.out, "results.json"), "w", encoding="utf-8") as f:
        json.dump({"posts": n, "latency_ms": args.latency_ms, "sandbox_threads": args.sandbox_threads,
                   "runs": args.runs, "graph_version": GRAPH_VERSION,
                   "phases": {k: v.as_dict() for k, v in phases.items() if v is not None},
                   "small": {str(k): v.as_dict() for k, v in smalls.items()},
                   "verdicts": verdicts.as_list(), "problems": problems}, f, indent=1)

    verdicts.banner(problems)
    return 0


if __name__ == "__main__":
    sys.exit(main())
