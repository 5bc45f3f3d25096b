"""What the sandbox benchmarks (tw_post_bench.py, tw_friends_bench.py,
fb_feed_bench.py, fb_perm_check_bench.py) share: their common options and
start-up checks, the clients' environment, the trivial ceiling clients' thread
pool, a measured run of a contender and the choice of the run that counts, the
envelopes it wrote, what the sandbox log says about it, and the report's
header, goal rows and verdicts with their closing banner."""
import argparse
import collections
import datetime
import http.client
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "sandbox"))
import harness  # noqa: E402  (sandbox/harness.py: starts and drives the sandbox)

# The sandbox's published demo credentials (sandbox/default-config.json).
CREDENTIALS = {
    "TW_CONSUMER_KEY": "sandbox-consumer-key",
    "TW_CONSUMER_SECRET": "sandbox-consumer-secret",
    "TW_ACCESS_TOKEN": "1000000000000000001-sandboxaccesstoken",
    "TW_ACCESS_TOKEN_SECRET": "sandbox-access-token-secret",
}

# The sandbox's demo Page and its Page access token (sandbox/README.md §2):
# the token's app does not require appsecret_proof.
FB_CREDENTIALS = {
    "FB_ACCESS_TOKEN": "sandbox-fb-page-token",
}
FB_PAGE_ID = "200000000000001"

TIME = "/usr/bin/time"
STALL_S = 0.5          # an idle stretch this long in a run is reported as a stall
RSS_GROWTH_MIB = 2.0   # more between a probe and the full run is reported as a problem


def note(message):
    sys.stderr.write("bench: %s\n" % message)
    sys.stderr.flush()


def fail(bench, message):
    """Ends a benchmark that cannot run (exit 1), saying why."""
    sys.stderr.write("%s bench: %s\n" % (bench, message))
    sys.exit(1)


# ------------------------------------------------------------ options, start-up

def arg_parser(tool):
    """The benchmark's parser, with the --bin every one takes; the caller adds
    its own options, then calls parse_args."""
    p = argparse.ArgumentParser(description="%s benchmark against the sandbox" % tool)
    p.add_argument("--bin", default=os.environ.get("SOCIALPIPE_BIN"),
                   help="directory holding %s (default $SOCIALPIPE_BIN)" % tool)
    return p


def parse_args(p, tool, env, argv, latency=True, out=None, runs=1):
    """Adds the options the benchmarks share and parses argv: --latency-ms
    (default 20) and --sandbox-threads (16) when latency is injected, --runs
    (default `runs`) and --out (bench/out/OUT, by default bench/out/TOOL),
    with defaults from BENCH_{env}_LATENCY_MS, _SANDBOX_THREADS and _RUNS.
    Ends the benchmark when --bin is missing."""
    def default(knob, value):
        return os.environ.get("BENCH_%s_%s" % (env, knob), value)

    if latency:
        p.add_argument("--latency-ms", type=float, default=float(default("LATENCY_MS", 20)))
        p.add_argument("--sandbox-threads", type=int, default=int(default("SANDBOX_THREADS", 16)),
                       help="the sandbox's --threads (connections served at once)")
    p.add_argument("--runs", type=int, default=int(default("RUNS", runs)),
                   help="runs per contender, the fastest complete one counts")
    p.add_argument("--out", default=os.path.join(HERE, "out", out or tool))
    args = p.parse_args(argv)
    if not args.bin:
        fail(tool, "SOCIALPIPE_BIN (or --bin) must name the directory holding %s" % tool)
    return args


def setup(args, tool, modules):
    """The checks before a benchmark runs: the tool in --bin (its rows are
    skipped when it is missing), GNU time, the Python libraries of its peers
    ({module: PyPI name}); ends the benchmark when one cannot be imported.
    Returns (the tool's path, whether it is there, an empty XDG_CONFIG_HOME in
    --out)."""
    sys.stdout.reconfigure(line_buffering=True)
    path = os.path.join(os.path.abspath(args.bin), tool)
    have = os.access(path, os.X_OK)
    if not have:
        note("%s: %s not found; its rows are skipped (build it first: make build)" % (tool, path))
    if not os.access(TIME, os.X_OK):
        note("%s not found (Debian package time): peak RSS is not measured" % TIME)
    for module, package in modules.items():
        try:
            __import__(module)
        except ImportError:
            fail(tool, "%s cannot import %s (PyPI %s; make venv)" % (sys.executable, module, package))
    return path, have, prepare_out(args.out)


def start_sandbox(tool, **kwargs):
    """harness.Sandbox.start(**kwargs), or the end of the benchmark."""
    try:
        return harness.Sandbox.start(**kwargs)
    except harness.SandboxError as e:
        fail(tool, str(e))


def fmt(value, spec, missing="n/a"):
    return missing if value is None else spec % value


def clean_env(api_base, xdg):
    """The environment every contender runs in: the sandbox's demo credentials,
    no credentials file or profile of the user's, no proxy."""
    env = {k: v for k, v in os.environ.items()
           if k.lower() not in ("http_proxy", "https_proxy", "all_proxy", "no_proxy")
           and k not in ("SOCIALPIPE_CREDENTIALS", "SOCIALPIPE_PROFILE", "TW_BEARER_TOKEN",
                         "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE")}
    env.update(CREDENTIALS)
    env["TW_API_BASE"] = api_base
    env["XDG_CONFIG_HOME"] = xdg
    return env


def facebook_env(api_base, xdg, token=FB_CREDENTIALS["FB_ACCESS_TOKEN"]):
    """clean_env() for the Graph clients: the token (by default the demo
    Page's) and FB_API_BASE in the environment, and no app secret, app id or
    version of the user's, so no client computes appsecret_proof and each uses
    its default version."""
    env = clean_env(api_base, xdg)
    for k in ("FB_ACCESS_TOKEN", "FB_APP_SECRET", "FB_APP_ID", "FB_GRAPH_VERSION", "FB_API_BASE"):
        env.pop(k, None)
    env["FB_ACCESS_TOKEN"] = token
    env["FB_API_BASE"] = api_base
    return env


def unchecked_oauth_header():
    """An OAuth 1.0a header with the demo keys for a sandbox started with
    --no-verify-signatures: what the trivial ceiling clients send, so they do
    no signing work at all."""
    return ('OAuth oauth_consumer_key="%s", oauth_nonce="benchmark", oauth_signature="unchecked", '
            'oauth_signature_method="HMAC-SHA1", oauth_timestamp="%d", oauth_token="%s", oauth_version="1.0"'
            % (CREDENTIALS["TW_CONSUMER_KEY"], int(time.time()), CREDENTIALS["TW_ACCESS_TOKEN"]))


def latency_timeout(latency_ms, requests):
    """Seconds a contender may take before it counts as hung: several times a
    slow sequential client's time for that many requests."""
    return 60 + 3 * requests * (latency_ms + 30) / 1000.0


def settle():
    """Writes out to disk what earlier runs left dirty in the page cache
    (sync(2)), outside any timed span. A tw-friends walk writes 140 MB, which
    the kernel flushes seconds later, during whichever run comes next: that
    run, contender or ceiling, then shares the machine with the writeback."""
    os.sync()


def run_measured(argv, stdin_path, stdout_path, stderr_path, env, timeout):
    """Runs argv; returns (exit status (or a string when it had to be killed),
    wall seconds, peak RSS in KiB or None, CPU seconds (user + system) or None,
    the wall-clock time.time() it started and ended at).

    The peak RSS comes from GNU time (`/usr/bin/time -f %M`), whose child is
    forked from that small C program. wait4 on a child forked from this Python
    process would not do: Linux carries the pre-exec high-water mark (this
    interpreter's ~30 MiB) over exec into the child's ru_maxrss."""
    rss_path = stdout_path + ".rss"
    settle()
    timed = os.access(TIME, os.X_OK)
    if timed:
        argv = [TIME, "-f", "%U %S %M", "-o", rss_path] + list(argv)
    with open(stdin_path, "rb") as fin, open(stdout_path, "wb") as fout, open(stderr_path, "wb") as ferr:
        started = time.perf_counter()
        wall_started = time.time()
        proc = subprocess.Popen(argv, stdin=fin, stdout=fout, stderr=ferr, env=env, start_new_session=True)
        # A contender that hangs is stopped (its own process group) by a timer:
        # Popen.wait(timeout) would poll with sleeps of up to 50 ms and add
        # as much, at random, to the time of a run that lasts a second.
        hung = []

        def stop():
            hung.append(True)
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:   # it ended just now
                pass

        timer = threading.Timer(timeout, stop)
        timer.start()
        status = proc.wait()
        timer.cancel()
        if hung:
            status = "timed out after %.0f s" % timeout
        seconds = time.perf_counter() - started
        wall = (wall_started, time.time())
    rss = cpu = None
    if timed:
        try:
            with open(rss_path, encoding="utf-8") as f:
                figures = f.read().split()
            rss = int(figures[-1])
            cpu = float(figures[-3]) + float(figures[-2])
        except (OSError, ValueError, IndexError):
            pass
    return status, seconds, rss, cpu, wall


def measure(phase, argv, stdin_path, stem, env, timeout, stats=False, expected=0):
    """Runs a contender (run_measured) from stdin_path to STEM.out.jsonl and
    STEM.err, and fills in phase: exit_status, process_seconds, rss_kib,
    cpu_s, wall (the time.time() it started and ended at), seconds, and the
    tail of its stderr as error when it did not exit
    `expected`. seconds is the process's time or, with stats, the "seconds" the
    contender wrote to STEM.stats.json: a Python peer's loop alone, not charged
    for interpreter start-up and imports (the tool's time includes its
    start-up). Returns the exit status."""
    stats_path = stem + ".stats.json"
    if stats and os.path.exists(stats_path):
        os.unlink(stats_path)
    status, seconds, rss, cpu, wall = run_measured(argv, stdin_path, stem + ".out.jsonl", stem + ".err", env, timeout)
    phase.exit_status, phase.process_seconds, phase.rss_kib, phase.cpu_s, phase.wall = status, seconds, rss, cpu, wall
    phase.seconds = seconds
    if stats:
        try:
            with open(stats_path, encoding="utf-8") as f:
                phase.seconds = json.load(f)["seconds"]
        except (OSError, ValueError, KeyError):
            phase.seconds = None
    if status != expected:
        with open(stem + ".err", encoding="utf-8", errors="replace") as f:
            phase.error = "exit %s: %s" % (status, f.read().strip()[-300:])
    return status


def fastest(runs, n):
    """The run that counts among a contender's runs: the fastest complete one
    (complete for n items), else the fastest; the first of equals."""
    return max(runs, key=lambda ph: (ph.complete(n), -(ph.seconds or 1e9)))


def tool_run(runs, n, every=False, stalls=False):
    """The tool's run that counts (fastest), carrying figures over all its
    runs, not only its own: the peak RSS (peak_rss) and, with stalls, the
    longest stall."""
    best = fastest(runs, n)
    best.rss_kib = peak_rss(runs, every)
    if stalls:
        top = max(runs, key=lambda ph: ph.idle_s)
        best.idle_s, best.idle_before = top.idle_s, top.idle_before
    return best


def peak_rss(runs, every=False):
    """The largest peak RSS (KiB) over runs, of those measured; with every,
    None unless every run's was."""
    measured = [ph.rss_kib for ph in runs if ph.rss_kib is not None]
    if not measured or (every and len(measured) < len(runs)):
        return None
    return max(measured)


def rss_mib(ph):
    return None if ph is None or ph.rss_kib is None else ph.rss_kib / 1024.0


def keepalive_pool(sb, jobs, threads, send, catch=(OSError, http.client.HTTPException)):
    """The trivial ceiling clients' engine: `threads` threads, each with one
    keep-alive http.client connection to the sandbox, take the jobs one at a
    time and call send(conn, job, got, failures): got is a dict for what the
    answers gave, failures a Counter of failure kinds. An exception of `catch`
    ends that thread's work and counts as a failure (its type's name). Returns
    (seconds for all the threads, got, failures)."""
    next_job = iter(jobs)
    lock = threading.Lock()
    got = {}
    failures = collections.Counter()

    def worker():
        conn = http.client.HTTPConnection(sb.host, sb.port, timeout=60)
        mine = {}
        local = collections.Counter()
        try:
            while True:
                with lock:
                    job = next(next_job, None)
                if job is None:
                    break
                send(conn, job, mine, local)
        except catch as e:
            local[type(e).__name__] += 1
        finally:
            conn.close()
            with lock:
                failures.update(local)
                got.update(mine)

    workers = [threading.Thread(target=worker) for _ in range(threads)]
    started = time.perf_counter()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return time.perf_counter() - started, got, failures


# ------------------------------------------------------------ the sandbox's log

def log_figures(phase, log):
    """Requests, distinct client connections and statuses of a run's log entries."""
    phase.requests = len(log)
    phase.connections = len({e["client_port"] for e in log})
    phase.statuses = collections.Counter(str(e["status"]) for e in log)


def median_gap_ms(log, by_connection=True):
    """Per connection, the time from one answer being ready to the next request
    arriving: the client's own time per request (plus loopback and the
    sandbox's parsing of the request head), free of the injected latency. The
    median over all connections, or None. Without by_connection, the log is
    taken as one sequence: for a sequential client that opens connections of
    its own on the way."""
    by_conn = collections.defaultdict(list)
    for e in log:
        by_conn[e["client_port"] if by_connection else None].append(e)
    gaps = []
    for entries in by_conn.values():
        entries.sort(key=lambda e: e["seq"])
        gaps += [1000 * (b["time"] - a["time"]) - a["duration_ms"] for a, b in zip(entries, entries[1:])]
    return statistics.median(gaps) if gaps else None


def longest_idle(log):
    """(seconds, the request (1-based, by arrival) that ended it) of the longest
    stretch with no request of the run in the sandbox at all: a client that
    stops sending with work left (a stall) shows up here. (0.0, None) without one."""
    idle_s, idle_before = 0.0, None
    busy_until = None
    for i, e in enumerate(sorted(log, key=lambda e: e["time"]), 1):
        if busy_until is not None and e["time"] - busy_until > idle_s:
            idle_s, idle_before = e["time"] - busy_until, i
        end = e["time"] + e["duration_ms"] / 1000.0
        busy_until = end if busy_until is None else max(busy_until, end)
    return idle_s, idle_before


def posting_problems(ph):
    """A posting run's stall and duplicate refusals, as problem lines."""
    problems = []
    if ph.idle_s > STALL_S:
        problems.append("%s: stalled: no request in flight for %.1f s (before request %d of %d) while "
                        "posts were left" % (ph.name, ph.idle_s, ph.idle_before, ph.requests))
    if ph.duplicates:
        problems.append("%s: %d duplicate refusals" % (ph.name, ph.duplicates))
    return problems


def posting_cells(ph, n):
    """A posting run's figures in its table row: seconds, posts/s, peak RSS,
    gap ms, ok, posted, connections/requests."""
    return (fmt(ph.seconds, "%.2f"), fmt(ph.rate(n), "%.1f"), fmt(rss_mib(ph), "%.1f MiB", "-"),
            fmt(ph.gap_ms, "%.2f", "-"), ph.ok, ph.posts, "%d/%d" % (ph.connections, ph.requests))


def reuse_row(ph, tool, width, with_j=True, extra=""):
    """Prints a run's row of the connection-reuse list: its requests over its
    connections, "reused" when there were at most its parallelism (the name
    gets " -j N" unless it is the tool's or not with_j). Returns the problem
    line of a tool run that opened more, in a list."""
    reused = ph.connections <= ph.parallel and ph.requests > 0
    name = ph.name if ph.name.startswith(tool) or not with_j else "%s -j %d" % (ph.name, ph.parallel)
    print(("  %%-%ds %%5d requests over %%4d connection(s)   %%s%%s" % width)
          % (name, ph.requests, ph.connections, "reused" if reused else "NOT REUSED (more connections than -j)",
             extra))
    if ph.name.startswith(tool) and not reused:
        return ["%s opened %d connections for %d requests at -j %d"
                % (ph.name, ph.connections, ph.requests, ph.parallel)]
    return []


def memory_growth(small, full, small_n, n, who):
    """Prints a probe's peak RSS (small_n posts) against the full run's (n);
    returns the problem line, in a list, when it grew by more than
    RSS_GROWTH_MIB. who: the tool, in that line."""
    if small is None or full is None or not small.rss_kib or not full.rss_kib:
        return []
    growth = (full.rss_kib - small.rss_kib) / 1024.0
    print("  memory: %s peak RSS %.1f MiB for %d posts, %.1f MiB for %d (%+.1f MiB)"
          % (full.name, rss_mib(small), small_n, rss_mib(full), n, growth))
    if growth > RSS_GROWTH_MIB:
        return ["%s's peak RSS grows with the input: %+.1f MiB from %d to %d posts" % (who, growth, small_n, n)]
    return []


def output_lines(path):
    """The JSON value of each line of an output, None for a line that does not parse."""
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            try:
                yield json.loads(line)
            except ValueError:
                yield None


def failure_kind(env, missing="None"):
    """What an envelope that does not count says went wrong, in a few words:
    its error's kind, code or message (`missing` when it has none)."""
    if env is None:
        return "unparsable output line"
    err = env.get("error") if isinstance(env, dict) else None
    if isinstance(err, dict):
        err = err.get("kind") or err.get("code") or err.get("message")
    return str(err if err is not None else missing)[:80]


def read_envelopes(path, value=lambda result: result["id"]):
    """(ok, failed, failure kinds, {line: value(result)} of the ok envelopes,
    lines in the order written) of an output of JSON lines. An envelope is ok
    when it says so and its result has a string id."""
    ok = failed = 0
    kinds = collections.Counter()
    got = {}
    lines = []
    for env in output_lines(path):
        if not isinstance(env, dict):
            failed += 1
            kinds[failure_kind(env)] += 1
            continue
        lines.append(env.get("line"))
        result = env.get("result")
        if env.get("ok") is True and isinstance(result, dict) and isinstance(result.get("id"), str):
            ok += 1
            got[env.get("line")] = value(result)
        else:
            failed += 1
            kinds[failure_kind(env, "ok without a string result.id")] += 1
    return ok, failed, kinds, got, lines


def in_input_order(lines):
    """Whether envelopes' line numbers, in the order written, rise."""
    return all(isinstance(a, int) and isinstance(b, int) and a < b for a, b in zip(lines, lines[1:]))


def why_unusable(runs, n, missing):
    """Why a goal over these runs (phases with complete() and shortfall())
    cannot be judged: `missing` for the first that was not measured, or the
    first incomplete one's shortfall for n items."""
    for ph in runs:
        if ph is None:
            return missing
        if not ph.complete(n):
            return "%s incomplete: %s" % (ph.name, ph.shortfall(n))
    return "not measured"


def count_envelopes(path):
    """(ok, failed, Counter of failure kinds) of an output of JSON lines."""
    ok = failed = 0
    kinds = collections.Counter()
    for env in output_lines(path):
        if env is not None and env.get("ok") is True:
            ok += 1
        else:
            failed += 1
            kinds[failure_kind(env)] += 1
    return ok, failed, kinds


def prepare_out(out):
    """Creates the output directory; returns an empty XDG_CONFIG_HOME inside it."""
    os.makedirs(out, exist_ok=True)
    xdg = os.path.join(out, "xdg-config")
    shutil.rmtree(xdg, ignore_errors=True)
    os.makedirs(xdg)
    return xdg


def runs_line(runs, how=None):
    """The report's line on how it was measured: runs (or `how`), CPUs, when."""
    return (" %s; %s CPUs; %s"
            % (how or "%s run(s) each, fastest kept" % runs, os.cpu_count() or "?",
               datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")))


def print_header(lines, width):
    """The report's head: its lines between two rules."""
    rule = "=" * width
    print()
    print(rule)
    for line in lines:
        print(line)
    print(rule)


def print_problems(problems, sandbox_stderr):
    """Adds a traceback the sandbox wrote to the problems, and prints them."""
    if "Traceback" in sandbox_stderr:
        problems.append("the sandbox wrote a traceback on stderr (a sandbox bug): %s" % sandbox_stderr.strip()[-300:])
    if problems:
        print()
        print(" problems")
        for line in problems:
            print("  - " + line)


class Record:
    """A contender's run: the figures every benchmark takes, and what the
    sandbox saw; as_dict() for results.json (Counters as objects)."""

    def __init__(self, name):
        self.name = name
        self.seconds = None          # the time the rate is computed from
        self.process_seconds = None
        self.rss_kib = None
        self.cpu_s = None            # the process's user + system CPU seconds
        self.wall = None             # (time.time() at its start, at its end)
        self.failed = 0
        self.kinds = collections.Counter()
        self.requests = 0
        self.connections = 0
        self.statuses = collections.Counter()
        self.exit_status = None
        self.error = None

    def rate(self, n):
        return n / self.seconds if self.seconds else None

    def as_dict(self):
        return {k: dict(v) if isinstance(v, collections.Counter) else v for k, v in self.__dict__.items()}


class PostingRun(Record):
    """A posting contender's run, checked against what the sandbox created:
    complete when it exited 0 and wrote one ok envelope per record, in input
    order, each matching the post of its own line, and the sandbox holds one
    post per record and none of another run. A benchmark adds its own
    conditions by extending shortfalls()."""

    def __init__(self, name, parallel):
        super().__init__(name)
        self.parallel = parallel
        self.ok = 0
        self.envelopes = 0         # output lines
        self.out_of_order = False  # envelopes not written in input order
        self.posts = 0             # posts the sandbox created with this run's texts
        self.distinct = 0          # distinct texts among them
        self.mismatched = 0        # ok envelopes that do not match the post of their line
        self.strangers = 0         # posts in the sandbox that are not this run's
        self.gap_ms = None
        self.idle_s = 0.0          # longest time with no request in flight
        self.idle_before = None    # which request (1-based, by arrival) ended it
        self.duplicates = 0

    def shortfalls(self, n):
        """What keeps the run from counting for n records, in a few words each."""
        bits = []
        if self.seconds is None:
            bits.append("no time")
        if self.exit_status != 0:
            bits.append("exit %s" % self.exit_status)
        if self.ok != n or self.envelopes != n:
            bits.append("%d envelopes, %d ok, for %d records" % (self.envelopes, self.ok, n))
        if self.out_of_order:
            bits.append("envelopes out of input order")
        if self.posts != n or self.distinct != n:
            bits.append("%d posted (%d distinct) of %d" % (self.posts, self.distinct, n))
        if self.mismatched:
            bits.append("%d envelopes that do not match the post of their line" % self.mismatched)
        if self.strangers:
            bits.append("%d posts of another run" % self.strangers)
        return bits

    def complete(self, n):
        return not self.shortfalls(n)

    def shortfall(self, n):
        """Why the run does not count, in a few words."""
        return ", ".join(self.shortfalls(n)) or "complete"


class Verdicts:
    """The PASS/MISS of each goal, in the order checked, and the report's goal
    rows: label, figure and goal in columns of `columns` characters, then the
    verdict; `width` is the closing banner's."""

    def __init__(self, name, columns, width):
        self.name = name
        self.items = []
        self.row = "  %%-%ds %%-%ds %%-%ds %%s" % columns
        self.aside_row = "  %%-%ds %%s" % columns[0]
        self.width = width

    def add(self, ok, label):
        """Records a goal's outcome; returns the word to print beside it."""
        self.items.append(("PASS" if ok else "MISS", label))
        return "PASS" if ok else "MISS"

    def goal(self, label, figure, goal, ok, summary):
        """Prints a goal's row and records its outcome; summary is the banner's line."""
        print(self.row % (label, figure, goal, self.add(ok, summary)))

    def unmet(self, label, why, goal, summary):
        """A goal that could not be judged (why): n/a, a MISS."""
        self.goal(label, "n/a (%s)" % why, goal, False, summary)

    def ceiling_share(self, label, run, ceiling, n, goal_share, missing):
        """The goal that `run` posts at >= goal_share % of the rate of the
        sandbox ceiling at its parallelism, over n posts: its row, or an unmet
        one saying why (why_unusable; `missing` for a run not measured)."""
        goal = "goal >= %g %%" % goal_share
        if run is not None and run.complete(n) and ceiling is not None and ceiling.complete(n):
            share = 100.0 * run.rate(n) / ceiling.rate(n)
            self.goal(label, "%.0f %% of ceiling (%.1f of %.1f posts/s)" % (share, run.rate(n), ceiling.rate(n)),
                      goal, share >= goal_share,
                      "%s: %.0f %% of the sandbox ceiling at %d (%s)" % (label, share, ceiling.parallel, goal))
        else:
            why = why_unusable((run, ceiling), n, missing)
            self.unmet(label, why, goal, "%s vs the sandbox ceiling (%s)" % (label, why))

    def aside(self, text, label=""):
        """A line under the goal rows, text in the figures' column."""
        print(self.aside_row % (label, text))

    def as_list(self):
        return ["%s %s" % v for v in self.items]

    def banner(self, problems):
        """The closing banner: which goals were missed, and whether problems were noted."""
        width = self.width
        missed = [label for state, label in self.items if state == "MISS"]
        print()
        print("#" * width)
        if not missed:
            print("##  %s: ALL %d GOALS MET" % (self.name, len(self.items)))
        else:
            print("##  %s: %d OF %d GOALS MISSED:" % (self.name, len(missed), len(self.items)))
            for label in missed:
                print("##    - " + label)
        if problems:
            print("##  %s: %d PROBLEM(S) NOTED ABOVE" % (self.name, len(problems)))
        print("#" * width)
