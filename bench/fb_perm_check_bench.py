#!/usr/bin/env python3
"""fb-perm-check benchmark (the fb-perm-check part of `make bench`): 10,000
permission checks over 100 users against the local sandbox with injected
latency, fb-perm-check with its default --parallel 4 and with --parallel 8,
side by side with a facebook-sdk loop calling get_permissions once per check
and a trivial HTTP client that measures the sandbox's own ceiling for the
100 requests a sharing client needs.

    python bench/fb_perm_check_bench.py [--bin DIR] [--checks N] [--users N] [--latency-ms MS]
                                        [--small N] [--sandbox-threads N] [--runs N]

A report, not a test: exits 0 whether or not the goals are met (the closing
banner says which were missed, and that problems were found when a run did not
answer every check correctly), 1 only when the benchmark cannot run (no
sandbox, no facebook-sdk). See bench/README.md.
"""
import collections
import functools
import http.client
import json
import os
import random
import sys

from benchlib import (RSS_GROWTH_MIB, Record, Verdicts, arg_parser, facebook_env, fail, fastest, fmt,
                      keepalive_pool, latency_timeout, log_figures, measure, median_gap_ms, note,
                      output_lines, parse_args, print_header, print_problems, rss_mib, runs_line, setup,
                      start_sandbox, tool_run)
import harness  # sandbox/harness.py, on sys.path through benchlib

HERE = os.path.dirname(os.path.abspath(__file__))

# Goals (issue 10): fb-perm-check (default --parallel 4) >= 50x the checks/s of
# a facebook-sdk get_permissions loop; peak RSS <= 20 MiB. The point is the
# shared request: one GET /{user}/permissions per user, checked in the log.
GOAL_SDK_X = 50.0
GOAL_RSS_MIB = 20.0
GRAPH_VERSION = "v27.0"   # fb-perm-check's default; the sdk and the ceiling are given it
# The sandbox's app token (sandbox/README.md §2): it reads GET /{user-id}/permissions
# of every user of its app and needs no appsecret_proof.
APP_TOKEN = "100000000000001|sandbox-app-secret"
PERMISSIONS_ENDPOINT = "GET /{id}/permissions"
FIRST_USER = 310000000000000   # the benchmark's users: 310000000000001, ... (no clash with the demo world)
SEED = 10                      # issue 10
# Names asked about. A user holds some of them (granted, declined or expired);
# the others are not_requested for that user. All are current permissions:
# fb-perm-check answers removed ones (publish_to_groups…) without asking.
NAMES = ["public_profile", "email", "pages_show_list", "pages_manage_posts", "pages_read_engagement",
         "pages_manage_metadata", "user_posts", "pages_manage_engagement", "instagram_basic",
         "business_management", "read_insights", "user_friends"]
GOAL_COLUMNS = (24, 44, 18)

die = functools.partial(fail, "fb-perm-check")


# ---------------------------------------------------------------- the world

def make_users(n, rng):
    """n sandbox users, each holding a seeded subset of NAMES in a seeded
    order: public_profile granted, the rest granted (60 %), declined (20 %)
    or expired (20 %)."""
    users = []
    for i in range(1, n + 1):
        held = rng.sample(NAMES[1:], rng.randint(3, 8))
        perms = {"public_profile": "granted"}
        for name in held:
            perms[name] = rng.choices(["granted", "declined", "expired"], [6, 2, 2])[0]
        users.append({"id": str(FIRST_USER + i), "name": "Bench User %d" % i, "permissions": perms})
    return users


def make_checks(users, n, rng):
    """n checks, (user id, permission name), as evenly spread over the users as
    n allows (every user gets n // len(users) or one more), shuffled so that
    every user's checks are spread over the whole input."""
    ids = [u["id"] for u in users]
    owners = [ids[i % len(ids)] for i in range(n)]
    rng.shuffle(owners)
    return [(uid, rng.choice(NAMES)) for uid in owners]


def expected_answers(users, checks):
    """What each check must answer: (status, granted) from the configuration."""
    perms = {u["id"]: u["permissions"] for u in users}
    out = []
    for uid, name in checks:
        status = perms[uid].get(name, "not_requested")
        out.append((status, status == "granted"))
    return out


def write_input(path, checks):
    with open(path, "w", encoding="utf-8") as f:
        for uid, name in checks:
            f.write(json.dumps({"permission": name, "user": uid}) + "\n")


# ---------------------------------------------------------------- one run

class Phase(Record):
    """One contender's run: figures, the answers checked against the
    configuration, and what the sandbox saw."""

    def __init__(self, name, parallel):
        super().__init__(name)
        self.parallel = parallel
        self.expected_exit = 0
        self.envelopes = 0
        self.ok = 0
        self.matched = 0            # ok envelopes whose answer is the configured one
        self.wrong = []             # a few lines whose answer is not
        self.out_of_order = False
        self.answers = {}           # line -> granted, for the comparison with the sdk
        self.perm_requests = 0      # GET /{id}/permissions in the log
        self.users_asked = 0        # distinct users among them
        self.most_per_user = 0      # the most requests for one user
        self.other_requests = collections.Counter()
        self.token_in_url = 0       # requests with access_token in the query string
        self.auth_failures = 0      # requests whose token the sandbox did not accept
        self.gap_ms = None

    def complete(self, n):
        return (self.seconds is not None and self.exit_status == self.expected_exit and self.envelopes == n
                and self.ok == n and self.matched == n and not self.out_of_order)

    def shortfall(self, n):
        """Why the run does not count, in a few words."""
        bits = []
        if self.seconds is None:
            bits.append("no time")
        if self.exit_status != self.expected_exit:
            bits.append("exit %s, expected %s" % (self.exit_status, self.expected_exit))
        if self.envelopes != n or self.ok != n:
            bits.append("%d envelopes, %d ok, for %d checks" % (self.envelopes, self.ok, n))
        if self.matched != self.ok:
            bits.append("%d answers not the configured ones (lines %s)"
                        % (self.ok - self.matched, ", ".join(map(str, self.wrong[:5]))))
        if self.out_of_order:
            bits.append("envelopes out of input order")
        return ", ".join(bits) or "complete"


def read_envelopes(path, phase, checks, expected, with_status):
    """Checks every envelope of an output against its check: ok, the same user
    and permission, the configured `granted` (and `status` for fb-perm-check),
    in input order."""
    lines = []
    for env in output_lines(path):
        phase.envelopes += 1
        if env is None:
            phase.failed += 1
            phase.kinds["unparsable output line"] += 1
            continue
        line = env.get("line")
        lines.append(line)
        if env.get("ok") is not True:
            phase.failed += 1
            err = env.get("error")
            if isinstance(err, dict):
                err = "%s %s" % (err.get("kind"), err.get("code") or err.get("message"))
            phase.kinds[str(err)[:80]] += 1
            continue
        phase.ok += 1
        result = env.get("result") or {}
        if not isinstance(line, int) or not 1 <= line <= len(checks):
            phase.wrong.append(line)
            continue
        uid, name = checks[line - 1]
        status, granted = expected[line - 1]
        good = (result.get("user") == uid and result.get("permission") == name
                and result.get("granted") is granted
                and (not with_status or result.get("status") == status))
        if good:
            phase.matched += 1
        else:
            phase.wrong.append(line)
        phase.answers[line] = result.get("granted")
    phase.out_of_order = lines != list(range(1, len(lines) + 1))


def collect_sandbox(sb, phase):
    """What the sandbox logged for the phase: the permission requests (how many,
    for how many users, the most for one user), anything else sent, tokens in
    URLs, connections, statuses, the client's own time per request; then
    forgets the log so the next phase starts from the same state."""
    log = sb.log(service="facebook")
    log_figures(phase, log)
    perm = [e for e in log if e.get("endpoint") == PERMISSIONS_ENDPOINT and e["method"] == "GET"]
    per_user = collections.Counter(e["path"] for e in perm)
    phase.perm_requests = len(perm)
    phase.users_asked = len(per_user)
    phase.most_per_user = max(per_user.values(), default=0)
    seqs = {e["seq"] for e in perm}
    phase.other_requests = collections.Counter("%s %s" % (e["method"], e["path"]) for e in log
                                               if e["seq"] not in seqs)
    phase.token_in_url = sum(1 for e in log if "access_token" in (e.get("query") or {}))
    phase.auth_failures = sum(1 for e in log if (e.get("auth") or {}).get("outcome") != "ok")
    phase.gap_ms = median_gap_ms(log)
    sb.control(clear_log=True, reset_rate_limits=True)


# ---------------------------------------------------------------- contenders

def trivial_client(sb, user_ids, threads):
    """The sandbox's ceiling for a client that shares the request: `threads`
    threads, each with one keep-alive http.client connection, one
    GET /{version}/{user}/permissions per user with the app token in a Bearer
    header, bodies parsed for their data list only. Returns (seconds,
    {user: {name: status}}, failure Counter)."""
    headers = {"Authorization": "Bearer " + APP_TOKEN}

    def send(conn, uid, tables, failures):
        conn.request("GET", "/%s/%s/permissions" % (GRAPH_VERSION, uid), headers=headers)
        resp = conn.getresponse()
        data = resp.read()
        if resp.status != 200:
            failures["HTTP %d" % resp.status] += 1
            return
        tables[uid] = {d["permission"]: d["status"] for d in json.loads(data)["data"]}

    return keepalive_pool(sb, user_ids, threads, send, catch=(OSError, http.client.HTTPException, ValueError,
                                                              KeyError, TypeError))


def run_ceiling(sb, args, users, threads):
    """The trivial client's 100 requests; it counts as complete when every
    user's table is the configured one."""
    ids = [u["id"] for u in users]

    def once():
        phase = Phase("sandbox ceiling (trivial)", threads)
        phase.seconds, tables, phase.kinds = trivial_client(sb, ids, threads)
        phase.failed = sum(phase.kinds.values())
        phase.envelopes = phase.ok = len(tables)
        phase.matched = sum(1 for u in users if tables.get(u["id"]) == u["permissions"])
        phase.exit_status = 0
        collect_sandbox(sb, phase)
        return phase

    return fastest([once() for _ in range(args.runs)], len(users))


def run_fb_perm_check(sb, args, stem, checks, expected, parallel, env, label):
    """fb-perm-check [--parallel N] < checks.jsonl > out.jsonl; parallel None
    runs it with its default (4)."""
    write_input(stem + ".in.jsonl", checks)
    argv = [args.fb_perm_check] + ([] if parallel is None else ["--parallel", str(parallel)])

    def once():
        phase = Phase(label, parallel or 4)
        # Exit 1 when some permission asked about is not granted (issue 10).
        phase.expected_exit = 0 if all(g for _, g in expected) else 1
        measure(phase, argv, stem + ".in.jsonl", stem, env, latency_timeout(args.latency_ms, len(args.users_list)),
                expected=phase.expected_exit)
        read_envelopes(stem + ".out.jsonl", phase, checks, expected, with_status=True)
        collect_sandbox(sb, phase)
        return phase

    return tool_run([once() for _ in range(args.runs)], len(checks))


def run_sdk(sb, args, stem, checks, expected, env):
    write_input(stem + ".in.jsonl", checks)
    argv = [sys.executable, os.path.join(HERE, "facebook_sdk_permissions.py"), "--api-base", sb.url,
            "--graph-version", GRAPH_VERSION, "--stats", stem + ".stats.json"]

    def once():
        phase = Phase("facebook-sdk get_permissions loop", 1)
        # The loop alone (--stats): the sdk's rate is not charged for interpreter
        # start-up and imports (fb-perm-check's includes its start-up).
        measure(phase, argv, stem + ".in.jsonl", stem, env, latency_timeout(args.latency_ms, len(checks)), stats=True)
        # get_permissions gives the granted set only: `granted` is checked, not `status`.
        read_envelopes(stem + ".out.jsonl", phase, checks, expected, with_status=False)
        collect_sandbox(sb, phase)
        return phase

    return fastest([once() for _ in range(args.runs)], len(checks))


# ---------------------------------------------------------------------- report

def main(argv=None):
    p = arg_parser("fb-perm-check")
    p.add_argument("--checks", type=int, default=int(os.environ.get("BENCH_FBP_CHECKS", 10000)))
    p.add_argument("--users", type=int, default=int(os.environ.get("BENCH_FBP_USERS", 100)))
    p.add_argument("--small", type=int, default=int(os.environ.get("BENCH_FBP_SMALL", 1000)),
                   help="checks of the memory-growth probe (default 1,000, over the same users)")
    args = parse_args(p, "fb-perm-check", "FBP", argv)
    if not (1 <= args.users <= 10000 and args.users <= args.small <= args.checks) or args.runs < 1 \
            or args.latency_ms < 0 or args.sandbox_threads < 10:
        die("need 1 <= --users <= --small <= --checks, --users <= 10000, --runs >= 1, "
            "--latency-ms >= 0, --sandbox-threads >= 10")
    args.fb_perm_check, have_tool, xdg = setup(args, "fb-perm-check", {"facebook": "facebook-sdk"})
    n = args.checks
    rng = random.Random(SEED)
    users = make_users(args.users, rng)
    args.users_list = users
    checks = make_checks(users, n, rng)
    expected = expected_answers(users, checks)
    small = make_checks(users, args.small, random.Random(SEED + 1))
    small_expected = expected_answers(users, small)
    granted_share = 100.0 * sum(1 for _, g in expected if g) / n
    stem = lambda name: os.path.join(args.out, name)  # noqa: E731

    config = harness.default_config()
    config["facebook"]["users"] = config["facebook"].get("users", []) + users
    sb = start_sandbox("fb-perm-check", config=config,
                       extra_args=["--no-rate-limits", "--threads", str(args.sandbox_threads)])
    phases = {}
    try:
        sb.control(latency_ms=args.latency_ms)
        state = sb.state()
        limits = state.get("facebook_limits") or {}
        budget = min((limits.get(k) or {}).get("limit", 0) for k in ("app", "user"))
        if state["latency_ms"] != args.latency_ms or budget < 10 * n:
            die("sandbox not configured as asked: latency %r, facebook_limits %r" % (state["latency_ms"], limits))
        env = facebook_env(sb.url, xdg, token=APP_TOKEN)
        note("fb-perm-check: sandbox %s (%d threads, limits off, %g ms latency), %d checks over %d users"
             % (sb.url, args.sandbox_threads, args.latency_ms, n, len(users)))
        # Warm the sandbox up (imports, caches) with requests nobody counts.
        trivial_client(sb, [u["id"] for u in users], 4)
        sb.control(clear_log=True, reset_rate_limits=True)
        for threads in (4, 8):
            note("fb-perm-check: sandbox ceiling, trivial client, %d connections, %d requests" % (threads, len(users)))
            phases["ceiling-%d" % threads] = run_ceiling(sb, args, users, threads)
        if have_tool:
            note("fb-perm-check: memory probe, %d checks" % args.small)
            phases["small"] = run_fb_perm_check(sb, args, stem("fb-perm-check-small"), small, small_expected, None,
                                                env, "fb-perm-check (%s checks)" % format(args.small, ","))
            note("fb-perm-check: default --parallel 4, %d checks" % n)
            phases["j4"] = run_fb_perm_check(sb, args, stem("fb-perm-check-j4"), checks, expected, None, env,
                                             "fb-perm-check (default -j 4)")
            note("fb-perm-check: --parallel 8, %d checks" % n)
            phases["j8"] = run_fb_perm_check(sb, args, stem("fb-perm-check-j8"), checks, expected, 8, env,
                                             "fb-perm-check --parallel 8")
        note("fb-perm-check: facebook-sdk get_permissions loop, %d checks (about %.0f s)"
             % (n, n * (args.latency_ms + 3) / 1000.0))
        phases["sdk"] = run_sdk(sb, args, stem("facebook-sdk"), checks, expected, env)
        sandbox_stderr = sb.stderr_text()
    finally:
        sb.stop()

    # ---------------------------------------------------------------- report
    verdicts = Verdicts("fb-perm-check", GOAL_COLUMNS, 112)
    problems = []
    u = len(users)

    def count_of(key):
        return u if key.startswith("ceiling") else args.small if key == "small" else n

    def usable(key):
        ph = phases.get(key)
        return ph is not None and ph.complete(count_of(key))

    print_header([" fb-perm-check benchmark: {:,} permission checks over {} users ({:.0f} % granted), one check per"
                  .format(n, u, granted_share),
                  " record {\"permission\",\"user\"}, app token; %g ms injected latency per request; sandbox: "
                  "--threads %d," % (args.latency_ms, args.sandbox_threads),
                  " rate limits off;" + runs_line(args.runs)], 112)
    head = "  %-34s %3s %8s %9s %9s %7s %6s %6s %9s %6s %7s"
    print(head % ("contender", "-j", "seconds", "checks/s", "peak RSS", "gap ms", "ok", "match", "requests",
                  "users", "conns"))
    for key in ("ceiling-4", "ceiling-8", "j4", "j8", "small", "sdk"):
        ph = phases.get(key)
        if ph is None:
            continue
        rate = ph.rate(count_of(key)) if not key.startswith("ceiling") else None
        print(head % (ph.name, ph.parallel, fmt(ph.seconds, "%.3f" if ph.seconds and ph.seconds < 10 else "%.2f"),
                      fmt(rate, "%.0f", "-"), fmt(rss_mib(ph), "%.1f MiB", "-"), fmt(ph.gap_ms, "%.2f", "-"),
                      ph.ok, ph.matched, ph.perm_requests, ph.users_asked, ph.connections))
    if not have_tool:
        print("  %-34s not measured: %s missing (make build)" % ("fb-perm-check", args.fb_perm_check))
    sdk = phases.get("sdk")
    if sdk is not None and sdk.process_seconds is not None:
        print("  (facebook-sdk process, start-up and imports included: %.2f s)" % sdk.process_seconds)
    print("  (seconds: fb-perm-check's whole process, start-up included; the sdk's loop only, without interpreter")
    print("   start-up and imports; the ceiling's threads, which make only the %d requests (one per user) and write"
          % u)
    print("   nothing. ok: envelopes with \"ok\":true (ceiling: users answered); match: answers equal to the")
    print("   sandbox's configuration (fb-perm-check: user, permission, status, granted; the sdk: granted, all its")
    print("   get_permissions set tells); requests: GET /{user}/permissions in the sandbox log; users: distinct users")
    print("   among them; conns: distinct client connections. gap ms: median, per connection, from an answer being")
    print("   ready to the next request arriving, i.e. the client's own time per request, latency excluded)")

    # ------------------------------------------------ what every run must show
    for key, ph in phases.items():
        expected_n = count_of(key)
        if not ph.complete(expected_n):
            problems.append("%s: %s; failures %s; sandbox statuses %s%s"
                            % (ph.name, ph.shortfall(expected_n), dict(ph.kinds) or "-", dict(ph.statuses),
                               "; " + ph.error if ph.error else ""))
        if ph.other_requests:
            problems.append("%s sent other requests than GET /{user}/permissions: %s"
                            % (ph.name, dict(ph.other_requests.most_common(5))))
        if ph.auth_failures:
            problems.append("%s: %d requests whose token the sandbox did not accept" % (ph.name, ph.auth_failures))
        if key in ("j4", "j8", "small"):
            if ph.token_in_url:
                problems.append("%s put the token in the URL of %d requests" % (ph.name, ph.token_in_url))
            if ph.connections > ph.parallel:
                problems.append("%s opened %d connections with --parallel %d"
                                % (ph.name, ph.connections, ph.parallel))
        if key == "sdk" and ph.perm_requests != n:
            problems.append("the sdk loop made %d permission requests for %d checks" % (ph.perm_requests, n))

    # fb-perm-check and the sdk must give every check the same answer.
    if sdk is not None:
        for key in ("j4", "j8"):
            ph = phases.get(key)
            if ph is None:
                continue
            differ = [line for line in range(1, n + 1) if ph.answers.get(line) is not sdk.answers.get(line)]
            print("  %s vs the sdk: %d of %s checks answered alike%s"
                  % (ph.name, n - len(differ), format(n, ","),
                     "" if not differ else " (differ at lines %s)" % ", ".join(map(str, differ[:5]))))
            if differ:
                problems.append("%s and the sdk answer %d checks differently (lines %s)"
                                % (ph.name, len(differ), ", ".join(map(str, differ[:5]))))

    # ---------------------------------------------------------------- goals
    print()
    print(" goals")
    base = phases.get("j4")
    goal = "goal >= %gx" % GOAL_SDK_X
    if usable("j4") and usable("sdk"):
        x = base.rate(n) / sdk.rate(n)
        verdicts.goal("fb-perm-check -j 4", "%.1fx facebook-sdk (%.0f vs %.1f checks/s)"
                      % (x, base.rate(n), sdk.rate(n)), goal, x >= GOAL_SDK_X,
                      "fb-perm-check (default -j 4): %.1fx facebook-sdk (%s)" % (x, goal))
    else:
        why = "fb-perm-check not measured" if base is None else "incomplete run, see problems"
        verdicts.unmet("fb-perm-check -j 4", why, goal, "fb-perm-check vs facebook-sdk (%s)" % why)
    j8 = phases.get("j8")
    if usable("j8") and usable("sdk"):
        verdicts.aside("%.1fx facebook-sdk (%.0f checks/s; no goal of its own)"
                       % (j8.rate(n) / sdk.rate(n), j8.rate(n)), label="fb-perm-check -j 8")
    for key, threads in (("j4", 4), ("j8", 8)):
        ph, ceil = phases.get(key), phases.get("ceiling-%d" % threads)
        if usable(key) and usable("ceiling-%d" % threads):
            verdicts.aside("(-j %d: %.3f s, the ceiling's %d requests over %d connections %.3f s)"
                           % (threads, ph.seconds, u, threads, ceil.seconds))

    # The point of the tool: one shared request per user, for every run.
    runs = [phases[k] for k in ("j4", "j8", "small") if k in phases]
    if runs:
        shared = all(ph.perm_requests == u and ph.users_asked == u and ph.most_per_user == 1 for ph in runs)
        short = {"j4": "-j 4", "j8": "-j 8", "small": "probe"}
        keys = [k for k in ("j4", "j8", "small") if k in phases]
        counts = "%s requests (%s)" % ("/".join(str(phases[k].perm_requests) for k in keys),
                                       ", ".join(short[k] for k in keys))
        verdicts.goal("shared requests", "%s, %d users" % (counts, u), "goal = 1 per user", shared,
                      "fb-perm-check permission requests: %s for %d users (goal: one per user)" % (counts, u))
        if sdk is not None:
            verdicts.aside("(the sdk loop: %d requests for %s checks)" % (sdk.perm_requests, format(n, ",")))
        for ph in runs:
            if ph.most_per_user > 1:
                problems.append("%s asked for one user's permissions %d times" % (ph.name, ph.most_per_user))
    else:
        verdicts.unmet("shared requests", "fb-perm-check not measured", "goal = 1 per user",
                       "fb-perm-check permission requests (not measured)")

    measured = [ph for ph in runs if ph.rss_kib is not None]
    goal = "goal <= %g MiB" % GOAL_RSS_MIB
    if measured:
        peak = max(rss_mib(ph) for ph in measured)
        verdicts.goal("fb-perm-check peak RSS", "%.1f MiB (largest over its %d runs)" % (peak, len(measured)), goal,
                      peak <= GOAL_RSS_MIB, "fb-perm-check peak RSS: %.1f MiB (%s)" % (peak, goal))
        probe = phases.get("small")
        full = [ph for ph in measured if ph is not probe]
        if probe is not None and probe.rss_kib and full:
            growth = max(rss_mib(ph) for ph in full) - rss_mib(probe)
            verdicts.aside("(%.1f MiB at %s checks, %.1f MiB at %s: %+.1f MiB)"
                           % (rss_mib(probe), format(args.small, ","), max(rss_mib(ph) for ph in full),
                              format(n, ","), growth))
            if growth > RSS_GROWTH_MIB:
                problems.append("fb-perm-check's peak RSS grows with the input: %+.1f MiB from %d to %d checks"
                                % (growth, args.small, n))
        if sdk is not None and sdk.rss_kib:
            verdicts.aside("(facebook-sdk loop: %.1f MiB)" % rss_mib(sdk))
    else:
        verdicts.unmet("fb-perm-check peak RSS", "not measured", goal, "fb-perm-check peak RSS (not measured)")
    print_problems(problems, sandbox_stderr)

    with open(os.path.join(args.out, "results.json"), "w", encoding="utf-8") as f:
        json.dump({"checks": n, "users": u, "small": args.small, "latency_ms": args.latency_ms,
                   "sandbox_threads": args.sandbox_threads, "runs": args.runs, "granted_share": granted_share,
                   "phases": {k: {kk: vv for kk, vv in v.as_dict().items() if kk != "answers"}
                              for k, v in phases.items()},
                   "verdicts": verdicts.as_list(), "problems": problems}, f, indent=1)
    verdicts.banner(problems)
    return 0


if __name__ == "__main__":
    sys.exit(main())
