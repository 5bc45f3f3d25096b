#!/usr/bin/env python3
"""tw-post media benchmark (the media part of `make bench`): posts that each
carry one generated 1 MiB image, to the local sandbox with injected latency,
tw-post sequential and in parallel, side by side with a tweepy loop
(API.media_upload + Client.create_tweet) and a trivial HTTP client that
measures the sandbox's own ceiling for the same requests. Each contender
makes a post in two requests: an upload of the whole file, then the post.

    python bench/tw_post_media_bench.py [--bin DIR] [--posts N] [--size BYTES] [--latency-ms MS]
                                        [--parallel N] [--sandbox-threads N] [--runs N]

A report, not a test: exits 0 whether or not the goal is met (the closing
banner says so, and that problems were found when a run did not make every
post with its own media exactly once), 1 only when the benchmark cannot run
(no sandbox, no tweepy). See bench/README.md.
"""
import collections
import functools
import hashlib
import http.client
import json
import os
import shutil
import statistics
import sys
import time

from benchlib import (PostingRun, Verdicts, arg_parser, clean_env, fail, fastest, fmt, in_input_order, keepalive_pool,
                      latency_timeout, log_figures, longest_idle, measure, median_gap_ms, note, parse_args,
                      posting_cells, posting_problems, print_header, print_problems, read_envelopes, reuse_row,
                      rss_mib, runs_line, setup, start_sandbox, tool_run, unchecked_oauth_header)
from tw_post_bench import base_texts  # (the same seeded texts as tw-post's)

HERE = os.path.dirname(os.path.abspath(__file__))

# Goals (issue 21): tw-post >= 90 % of the sandbox ceiling at 1 and at 8
# (--parallel), its peak RSS at most 32 MiB.
GOAL_CEILING_SHARE = 90.0
GOAL_RSS_MIB = 32.0
GOAL_COLUMNS = (22, 44, 16)
WIDTH = 108

# What every file starts with: a JPEG start-of-image marker and a JFIF APP0
# segment, so the sandbox (magic bytes FF D8 FF), tw-post and tweepy (imghdr
# looks for "JFIF") all take it for image/jpeg. Random bytes follow.
JPEG_HEAD = bytes.fromhex("ffd8ffe000104a46494600010100000100010000")
MEDIA_TYPE = "image/jpeg"
MEDIA_CATEGORY = "tweet_image"
BOUNDARY = "socialpipe-bench-boundary"

# The sandbox's endpoint keys (GET /__log "endpoint") of the requests a post
# with one image takes: X API v2's one-shot upload and post, or tweepy's v1.1
# simple upload and post. (Chunked steps would show in the report's table.)
ONE_SHOT = "POST /2/media/upload"
INITIALIZE = "POST /2/media/upload/initialize"
APPEND = "POST /2/media/upload/:id/append"
FINALIZE = "POST /2/media/upload/:id/finalize"
TWEET = "POST /2/tweets"
V1_UPLOAD = "POST /1.1/media/upload.json"
V2_STEPS = (ONE_SHOT, TWEET)

die = functools.partial(fail, "tw-post media")


def media_name(i):
    return "shot-%04d.jpg" % i


def write_media(directory, tag, n, size):
    """n files of `size` bytes in directory, each its own: the JPEG head, the
    run's tag and the file's index, then random bytes. Returns their SHA-256s."""
    os.makedirs(directory, exist_ok=True)
    sums = []
    for i in range(n):
        stamp = ("%s %04d " % (tag, i)).encode()
        data = JPEG_HEAD + stamp + os.urandom(size - len(JPEG_HEAD) - len(stamp))
        with open(os.path.join(directory, media_name(i)), "wb") as f:
            f.write(data)
        sums.append(hashlib.sha256(data).hexdigest())
    return sums


def messages_for(tag, texts):
    """Each contender's own texts: its tag and the index make every one distinct."""
    return ["%s %04d %s" % (tag, i, text) for i, text in enumerate(texts)]


def write_input(path, messages):
    with open(path, "w", encoding="utf-8") as f:
        for i, m in enumerate(messages):
            f.write(json.dumps({"text": m, "media": [media_name(i)]}, ensure_ascii=False) + "\n")


class Phase(PostingRun):
    """One contender's run: figures, and what the sandbox saw and holds."""

    def __init__(self, name, parallel):
        super().__init__(name, parallel)
        self.with_media = 0        # posts carrying exactly one media: their own line's file, whole
        self.media_reused = 0      # media ids attached to more than one post
        self.uploads = 0           # media the sandbox holds after the run (one per post is right)
        self.endpoints = collections.Counter()
        self.endpoint_ms = {}      # endpoint: median time in the sandbox (latency, body read, handling)
        self.lead_in_s = None      # from the start to the first request arriving
        self.span_s = None         # from the first request arriving to the last answer being ready
        self.tail_s = None         # from the last answer being ready to the end
        self.in_flight = None      # requests in the sandbox, on average over the span

    def shortfalls(self, n):
        bits = super().shortfalls(n)
        if self.with_media != n:
            bits.append("%d of %d posts with their own whole file" % (self.with_media, n))
        if self.media_reused:
            bits.append("%d media ids on several posts" % self.media_reused)
        return bits


def collect_sandbox(sb, phase, messages, sums, got, lines):
    """Fills in what the sandbox logged, posted and stored for phase: every
    post must carry one media, whole (its SHA-256 that of its line's file) and
    its own; every ok envelope the id and media_ids of its line's post. Then
    forgets the log, posts and media so the next phase starts from the same
    state."""
    log = sb.log(service="x")
    log_figures(phase, log)
    phase.endpoints = collections.Counter(e["endpoint"] for e in log)
    by_endpoint = collections.defaultdict(list)
    for e in log:
        by_endpoint[e["endpoint"]].append(e["duration_ms"])
    phase.endpoint_ms = {k: statistics.median(v) for k, v in by_endpoint.items()}
    phase.gap_ms = median_gap_ms(log, by_connection=phase.parallel > 1)
    if log:
        first = min(e["time"] for e in log)
        last = max(e["time"] + e["duration_ms"] / 1000.0 for e in log)
        phase.span_s = last - first
        phase.in_flight = sum(e["duration_ms"] for e in log) / 1000.0 / phase.span_s if phase.span_s > 0 else None
        if phase.wall:
            phase.lead_in_s, phase.tail_s = first - phase.wall[0], phase.wall[1] - last
    phase.idle_s, phase.idle_before = longest_idle(log)
    phase.duplicates = sum(1 for e in log if e.get("duplicate"))

    posts = sb.posts(service="x")["posts"]
    media = {m["id"]: m for m in sb.media()}
    line_of = {m: i for i, m in enumerate(messages, 1)}
    mine = [p for p in posts if p["text"] in line_of]
    phase.posts = len(mine)
    phase.distinct = len({p["text"] for p in mine})
    phase.strangers = len(posts) - len(mine)
    phase.uploads = len(media)
    attached = collections.Counter(m for p in mine for m in p.get("media_ids") or [])
    phase.media_reused = sum(1 for k in attached.values() if k > 1)
    post_of = {}
    for p in mine:
        line = line_of[p["text"]]
        ids = p.get("media_ids") or []
        post_of[line] = (p["id"], ids)
        item = media.get(ids[0]) if len(ids) == 1 else None
        if item is not None and item.get("finalized") and item.get("sha256") == sums[line - 1]:
            phase.with_media += 1
    phase.mismatched = sum(1 for line, (pid, ids) in got.items()
                           if post_of.get(line) != (pid, ids if isinstance(ids, list) else None))
    phase.envelopes = len(lines)
    phase.out_of_order = not in_input_order(lines)
    sb.control(clear_log=True, clear_posts=True, reset_rate_limits=True)
    sb.clear_media()


# ------------------------------------------------------------------ contenders

class Refused(Exception):
    """A step of the trivial client that the sandbox did not answer as it should."""


def multipart_upload(data):
    """A one-shot upload's body, as tw-post sends it: the category and type, then the whole file."""
    head = "".join("--%s\r\nContent-Disposition: form-data; name=\"%s\"\r\n\r\n%s\r\n" % (BOUNDARY, name, value)
                   for name, value in (("media_category", MEDIA_CATEGORY), ("media_type", MEDIA_TYPE)))
    head += ("--%s\r\nContent-Disposition: form-data; name=\"media\"; filename=\"blob\"\r\n"
             "Content-Type: application/octet-stream\r\n\r\n" % BOUNDARY)
    return head.encode() + data + ("\r\n--%s--\r\n" % BOUNDARY).encode()


def trivial_client(sb, messages, media_dir, threads):
    """The sandbox's ceiling: `threads` threads, each with one keep-alive
    http.client connection, making each post as tw-post does (the one-shot
    upload of the whole file, the post with its media id) with a fixed OAuth
    header (signatures are not checked). The upload bodies are built in
    memory before the clock starts; of each answer only the media or
    post id is read. Returns (seconds, {line: (post id, [media id])}, failure
    Counter, the time.time() the threads started at)."""
    auth = unchecked_oauth_header()
    json_headers = {"Content-Type": "application/json", "Authorization": auth}
    form_headers = {"Content-Type": "multipart/form-data; boundary=" + BOUNDARY, "Authorization": auth}
    jobs = []
    for i, message in enumerate(messages):
        with open(os.path.join(media_dir, media_name(i)), "rb") as f:
            jobs.append((i + 1, message, multipart_upload(f.read())))

    def call(conn, step, path, body, headers, expect=200):
        conn.request("POST", path, body=body, headers=headers)
        resp = conn.getresponse()
        answer = resp.read()
        if resp.status != expect:
            raise Refused("%s HTTP %d" % (step, resp.status))
        return answer

    def send(conn, job, got, failures):
        line, message, upload = job
        try:
            media_id = json.loads(call(conn, "upload", "/2/media/upload", upload, form_headers))["data"]["id"]
            post = json.dumps({"text": message, "media": {"media_ids": [media_id]}}).encode()
            got[line] = (json.loads(call(conn, "post", "/2/tweets", post, json_headers, 201))["data"]["id"],
                         [media_id])
        except Refused as e:
            failures[str(e)] += 1

    started = time.time()
    seconds, got, failures = keepalive_pool(sb, jobs, threads, send, catch=(OSError, http.client.HTTPException,
                                                                            ValueError, KeyError, TypeError))
    return seconds, got, failures, started


def fresh_run(args, texts, tag):
    """A run's own texts and files, the files written afresh: (texts, SHA-256s)."""
    return messages_for(tag, texts), write_media(args.media_dir, tag, len(texts), args.size)


def run_ceiling(sb, args, texts, run_id, threads):
    def once(r):
        tag = "ceiling-j%d-%s.%d" % (threads, run_id, r)
        messages, sums = fresh_run(args, texts, tag)
        seconds, got, kinds, started = trivial_client(sb, messages, args.media_dir, threads)
        phase = Phase("sandbox ceiling (trivial)", threads)
        phase.seconds, phase.exit_status, phase.kinds, phase.wall = seconds, 0, kinds, (started, started + seconds)
        phase.ok, phase.failed = len(got), sum(kinds.values())
        # The trivial client writes nothing, so it has no order to keep.
        collect_sandbox(sb, phase, messages, sums, got, list(range(1, len(messages) + 1)))
        return phase

    return fastest([once(r) for r in range(args.runs)], len(texts))


def run_client(sb, args, texts, run_id, key, name, parallel, argv, env, stats=False):
    """Runs a contender that reads records and writes envelopes (tw-post, the
    tweepy loop) args.runs times; returns its runs."""
    stem = os.path.join(args.out, key)
    def once(r):
        tag = "%s-%s.%d" % (key, run_id, r)
        messages, sums = fresh_run(args, texts, tag)
        write_input(stem + ".in.jsonl", messages)
        phase = Phase(name, parallel)
        measure(phase, argv + ["--media-dir", args.media_dir], stem + ".in.jsonl", stem, env,
                latency_timeout(args.latency_ms, 4 * len(texts)), stats=stats)
        phase.ok, phase.failed, phase.kinds, got, lines = read_envelopes(
            stem + ".out.jsonl", lambda result: (result["id"], result.get("media_ids")))
        collect_sandbox(sb, phase, messages, sums, got, lines)
        return phase

    return [once(r) for r in range(args.runs)]


def run_tw_post(sb, args, texts, run_id, parallel, env):
    runs = run_client(sb, args, texts, run_id, "tw-post-j%d" % parallel, "tw-post --parallel %d" % parallel,
                      parallel, [args.tw_post, "-q", "--parallel", str(parallel)], env)
    return tool_run(runs, len(texts), every=True, stalls=True)


def run_tweepy(sb, args, texts, run_id, env):
    stem = os.path.join(args.out, "tweepy")
    # The loop alone (--stats): tweepy's rate is not charged for interpreter
    # start-up and imports (tw-post's includes its start-up).
    argv = [sys.executable, os.path.join(HERE, "tweepy_post.py"), "--api-base", sb.url,
            "--stats", stem + ".stats.json"]
    runs = run_client(sb, args, texts, run_id, "tweepy", "tweepy media_upload loop", 1, argv, env, stats=True)
    return fastest(runs, len(texts))


# ---------------------------------------------------------------------- report

def print_time_spent(phases):
    """Where each run's time went: per endpoint, requests and the median time
    the sandbox spent on one (the injected latency, reading the body,
    handling); then the run cut into the time before its first request, the
    span of its requests and the time after its last answer, with the requests
    it kept in the sandbox on average over the span, the client's own gap
    between requests, and its CPU time."""
    print()
    print(" where the time goes (sandbox log: requests x median ms inside the sandbox, latency included)")
    head = "  %-28s %3s %11s %11s %11s %11s %11s %11s"
    print(head % ("contender", "-j", "one-shot", "initialize", "append", "finalize", "v1.1 upload", "post"))
    for ph in phases:
        cells = []
        for endpoint in (ONE_SHOT, INITIALIZE, APPEND, FINALIZE, V1_UPLOAD, TWEET):
            k = ph.endpoints.get(endpoint, 0)
            cells.append("%d x %s" % (k, fmt(ph.endpoint_ms.get(endpoint), "%.1f")) if k else "-")
        print(head % ((ph.name, ph.parallel) + tuple(cells)))
    print()
    head = "  %-28s %3s %8s %9s %7s %8s %9s %7s %6s"
    print(head % ("contender", "-j", "seconds", "before ms", "span s", "after ms", "in flight", "gap ms", "CPU s"))
    for ph in phases:
        print(head % (ph.name, ph.parallel, fmt(ph.seconds, "%.2f"), fmt(ph.lead_in_s and 1000 * ph.lead_in_s, "%.0f"),
                      fmt(ph.span_s, "%.2f"), fmt(ph.tail_s and 1000 * ph.tail_s, "%.0f"),
                      fmt(ph.in_flight, "%.2f"), fmt(ph.gap_ms, "%.2f", "-"), fmt(ph.cpu_s, "%.2f", "-")))
    print("  (before ms: from the start (of the process; of the threads for the ceiling) to the first request")
    print("   arriving, tweepy's interpreter start-up and imports included; span s: from then to the last")
    print("   answer being ready; after ms: from then to the end; in flight: the requests in the sandbox on")
    print("   average over the span (at most -j); gap ms: median, from an answer being ready to the next")
    print("   request arriving, per connection (at -j 1 over the whole run, as tweepy opens a connection per")
    print("   upload): the client's own time per request; CPU s: the process's user + system time)")


def main(argv=None):
    p = arg_parser("tw-post")
    p.add_argument("--posts", type=int, default=int(os.environ.get("BENCH_TWM_POSTS", 100)))
    p.add_argument("--size", type=int, default=int(os.environ.get("BENCH_TWM_SIZE", 1048576)),
                   help="bytes of each image (default 1048576)")
    p.add_argument("--parallel", type=int, default=8)
    # Three runs each by default: a run at 8 lasts about a second, where a
    # few tens of milliseconds of scheduling on two cores are several per cent.
    args = parse_args(p, "tw-post", "TWM", argv, out="tw-post-media", runs=3)
    if args.parallel < 2 or args.posts < 1 or args.runs < 1 or not 256 <= args.size <= 5242880:
        die("--parallel must be >= 2, --posts and --runs >= 1, --size 256 to 5242880")
    args.tw_post, have_tw_post, xdg = setup(args, "tw-post", {"tweepy": "tweepy"})
    n = args.posts
    par = args.parallel
    texts = base_texts(n)
    run_id = "%s-%d" % (time.strftime("%Y%m%dT%H%M%S"), os.getpid())
    # The files of the run under way, written afresh for each run (100 MiB at
    # the defaults) and removed at the end.
    args.media_dir = os.path.join(args.out, "media")

    sb = start_sandbox("tw-post media", extra_args=["--no-verify-signatures", "--no-rate-limits",
                                                    "--threads", str(args.sandbox_threads)])
    phases = {}
    try:
        sb.control(latency_ms=args.latency_ms)
        state = sb.state()
        if state["verify_signatures"] or state["latency_ms"] != args.latency_ms:
            die("sandbox not configured as asked: %r" % {k: state[k] for k in ("verify_signatures", "latency_ms")})
        env = clean_env(sb.url, xdg)

        note("tw-post media: sandbox %s (%d threads, signatures off, limits off, %g ms latency), %d posts "
             "with one %d-byte image each" % (sb.url, args.sandbox_threads, args.latency_ms, n, args.size))
        # Warm the sandbox up (imports, caches) with posts nobody counts.
        warm = min(n, 20)
        write_media(args.media_dir, "warm-up-" + run_id, warm, args.size)
        trivial_client(sb, messages_for("warm-up-" + run_id, texts[:warm]), args.media_dir, par)
        sb.control(clear_log=True, clear_posts=True, reset_rate_limits=True)
        sb.clear_media()

        for threads in (1, par):
            note("tw-post media: sandbox ceiling, trivial client, %d connection(s)" % threads)
            phases["ceiling-%d" % threads] = run_ceiling(sb, args, texts, run_id, threads)
        if have_tw_post:
            for j in (1, par):
                note("tw-post media: tw-post --parallel %d" % j)
                phases["tw-post-%d" % j] = run_tw_post(sb, args, texts, run_id, j, env)
        note("tw-post media: tweepy media_upload + create_tweet loop")
        phases["tweepy"] = run_tweepy(sb, args, texts, run_id, env)
        sandbox_stderr = sb.stderr_text()
    finally:
        sb.stop()
        shutil.rmtree(args.media_dir, ignore_errors=True)

    # ---------------------------------------------------------------- report
    verdicts = Verdicts("tw-post media", GOAL_COLUMNS, WIDTH)
    ceil1, ceilp = phases["ceiling-1"], phases["ceiling-%d" % par]
    tw1, twp = phases.get("tw-post-1"), phases.get("tw-post-%d" % par)
    tweepy_phase = phases["tweepy"]

    def usable(ph):
        return ph is not None and ph.complete(n)

    print_header([" tw-post media benchmark: %d posts per contender, each with its own %d-byte JPEG (random bytes"
                  % (n, args.size),
                  " behind a JFIF header), to the sandbox with %g ms injected latency per request; sandbox:"
                  % args.latency_ms,
                  " --threads %d, signatures not checked, rate limits off, the same for every client;"
                  % args.sandbox_threads,
                  runs_line(args.runs)], WIDTH)
    head = "  %-28s %3s %8s %8s %9s %7s %5s %6s %6s %10s"
    print(head % ("contender", "-j", "seconds", "posts/s", "peak RSS", "gap ms", "ok", "posted", "media",
                  "conns/reqs"))
    rows = [ceil1, ceilp, tw1, twp, tweepy_phase]
    for ph in rows:
        if ph is None:
            continue
        cells = posting_cells(ph, n)
        print(head % ((ph.name, ph.parallel) + cells[:6] + (ph.with_media,) + cells[6:]))
    if not have_tw_post:
        print("  %-28s not measured: %s missing" % ("tw-post", args.tw_post))
    print("  (seconds: tw-post's whole process, start-up included; tweepy's loop only, without interpreter")
    print("   start-up and imports (process: %s s; peak RSS of the Python process); the trivial client's threads."
          % fmt(tweepy_phase.process_seconds, "%.2f"))
    print("   ok: envelopes with a post id; posted: posts the sandbox created with the contender's texts;")
    print("   media: of them, those carrying exactly one media, finalized, whose SHA-256 is that of their own")
    print("   line's file; conns/reqs: distinct client connections / X API requests in the sandbox log)")

    problems = []
    for ph in rows:
        if ph is None:
            continue
        if not ph.complete(n):
            problems.append("%s INCOMPLETE: %s; failures %s; sandbox statuses %s%s"
                            % (ph.name, ph.shortfall(n), dict(ph.kinds) or "-", dict(ph.statuses),
                               "; " + ph.error if ph.error else ""))
        problems += posting_problems(ph)
        expected = ({V1_UPLOAD: n, TWEET: n} if ph is tweepy_phase else {k: n for k in V2_STEPS})
        if dict(ph.endpoints) != expected:
            problems.append("%s: requests %s, where one post with one image takes %s"
                            % (ph.name, dict(ph.endpoints), " + ".join(expected)))
        if ph.uploads != n:
            problems.append("%s: the sandbox holds %d media after %d posts" % (ph.name, ph.uploads, n))

    print()
    print(" goals")
    r_tweepy = tweepy_phase.rate(n) if usable(tweepy_phase) else None

    for j, run, ceiling in ((1, tw1, ceil1), (par, twp, ceilp)):
        verdicts.ceiling_share("tw-post --parallel %d" % j, run, ceiling, n, GOAL_CEILING_SHARE,
                               "tw-post not measured")
        if usable(run) and r_tweepy:
            verdicts.aside("(%.2fx tweepy's sequential loop; the ceiling: %.2fx)"
                           % (run.rate(n) / r_tweepy, ceiling.rate(n) / r_tweepy if usable(ceiling) else 0))
    tw_runs = [ph for ph in (tw1, twp) if ph is not None and ph.rss_kib is not None]
    goal = "goal <= %g MiB" % GOAL_RSS_MIB
    if tw_runs:
        peak = max(rss_mib(ph) for ph in tw_runs)
        verdicts.goal("tw-post peak RSS", "%.1f MiB, the larger of -j 1 and %d" % (peak, par), goal,
                      peak <= GOAL_RSS_MIB, "tw-post peak RSS: %.1f MiB (%s)" % (peak, goal))
        verdicts.aside("(tweepy: %s)" % fmt(rss_mib(tweepy_phase), "%.1f MiB"))
    else:
        verdicts.unmet("tw-post peak RSS", "not measured", goal, "tw-post peak RSS (not measured)")

    print_time_spent([ph for ph in rows if ph is not None])
    print()
    print(" connection reuse (sandbox log: distinct client ports per X API request)")
    for ph in (tw1, twp, tweepy_phase, ceil1, ceilp):
        if ph is not None:
            problems += reuse_row(ph, "tw-post", 30)
    print_problems(problems, sandbox_stderr)

    with open(os.path.join(args.out, "results.json"), "w", encoding="utf-8") as f:
        json.dump({"posts": n, "size": args.size, "latency_ms": args.latency_ms,
                   "sandbox_threads": args.sandbox_threads, "runs": args.runs,
                   "phases": {k: v.as_dict() for k, v in phases.items() if v is not None},
                   "verdicts": verdicts.as_list(), "problems": problems}, f, indent=1)

    verdicts.banner(problems)
    return 0


if __name__ == "__main__":
    sys.exit(main())
