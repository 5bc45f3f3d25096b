#!/usr/bin/env python3
"""Memory benchmark (the memory part of `make bench`): the peak RSS of the
tools on the inputs of issue 17 §4, each large where a record, a line or an
answer can be large, against the local sandbox:

- tw-friends -j 4 with records of 1 MB (a profile with a name that long),
  the second one's list walked while the first waits for a slow page: every
  envelope echoes its record;
- fb-perm-check given a /permissions answer of 60 MB, past the answer cap,
  for one user and for four at -j 4, and one of 13 MB, under it, read in place;
- a line of 200 MiB (--max-line raised) through oauth-sign (a JSON body),
  tw-post --dry-run, fb-feed --dry-run, and fb-perm-check and tw-friends
  (a value they refuse).

    python bench/memory_bench.py [--bin DIR] [--record-bytes N] [--answer-bytes N]
                                 [--small-answer-bytes N] [--line-bytes N] [--runs N]

A report, not a test: exits 0 whether or not the goals are met (the closing
banner says which were missed), 1 only when the benchmark cannot run (no
sandbox). See bench/README.md.
"""
import functools
import json
import os
import sys
import time

from benchlib import (Record, Verdicts, arg_parser, clean_env, facebook_env, fail, fmt, note, parse_args,
                      peak_rss, print_header, print_problems, rss_mib, run_measured, runs_line, setup, start_sandbox)
import harness  # sandbox/harness.py, on sys.path through benchlib

# Goals (issue 17 §4): what waits behind the head of ordered output is bounded
# (64 MiB in all); an answer past the cap (16 MiB) is not held, one under it
# is read in place; a long line costs a small multiple of its size.
GOAL_FRIENDS_MIB = 64.0
GOAL_OVER_CAP_MIB = {1: 48.0, 4: 96.0}
GOAL_ANSWER_MULTIPLE = 2.5
GOAL_LINE_MULTIPLE = 3.25
PROCESS_MIB = 16.0            # what a tool takes of its own, besides its input
GOAL_COLUMNS = (38, 24, 34)
WIDTH = 118

APP_TOKEN = "100000000000001|sandbox-app-secret"   # reads any user's permissions (sandbox/README.md §2)
PAGE_TOKEN = "sandbox-fb-page-token"
# The sandbox's users whose permissions are asked for, the fourth added here.
FB_USERS = ["300000000000001", "300000000000002", "300000000000003", "300000000000004"]
PERMISSIONS_ENDPOINT = "GET /{id}/permissions"
FOLLOWS_1001 = "1000000000000000014"    # follows_1001's id (sandbox/default-config.json)

die = functools.partial(fail, "memory")


class Phase(Record):
    """One run of a tool on one large input: its peak RSS and the input's size."""

    def __init__(self, name, group, input_bytes):
        super().__init__(name)
        self.group = group
        self.input_bytes = input_bytes
        self.expected_exit = 0

    def multiple(self):
        """Peak RSS over the size of the large input (not for tw-friends, whose
        records are small beside the lines they would make), or None."""
        if self.group == "friends" or not self.rss_kib or not self.input_bytes:
            return None
        return self.rss_kib * 1024.0 / self.input_bytes


def measure_runs(phase, runs, argv, stdin_path, env, timeout, out):
    """Runs argv `runs` times from stdin_path, stdout to /dev/null; keeps the
    largest peak RSS, the fastest time and the last exit status."""
    measured = []
    for _ in range(runs):
        status, seconds, rss, _, _ = run_measured(argv, stdin_path, os.devnull, out + ".err", env, timeout)
        one = Record(phase.name)
        one.rss_kib, one.seconds, one.exit_status = rss, seconds, status
        measured.append(one)
    phase.rss_kib = peak_rss(measured)
    phase.seconds = min(ph.seconds for ph in measured)
    phase.exit_status = measured[-1].exit_status
    if phase.exit_status != phase.expected_exit:
        with open(out + ".err", encoding="utf-8", errors="replace") as f:
            phase.error = "exit %s, expected %s: %s" % (phase.exit_status, phase.expected_exit, f.read().strip()[-300:])
    return phase


def write_lines(path, records):
    with open(path, "w", encoding="utf-8") as f:
        for record in records:
            f.write(json.dumps(record, separators=(",", ":")) + "\n")
    return os.path.getsize(path)


# ---------------------------------------------------------------- tw-friends

def friends_phase(sb, args, xdg):
    """Two records of --record-bytes each (the profile's name makes them that
    long): follows_1001, whose second page the sandbox holds for 3 s, then
    jack's first 3,000 accounts, walked meanwhile at -j 4."""
    profile = "p" * max(1, args.record_bytes - 80)
    credentials = os.path.join(args.out, "credentials.json")
    fd = os.open(credentials, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump({"profiles": {profile: {"twitter": {
            "consumer_key": "sandbox-consumer-key", "consumer_secret": "sandbox-consumer-secret",
            "access_token": "1000000000000000001-sandboxaccesstoken",
            "access_token_secret": "sandbox-access-token-secret"}}}}, f)
    stdin = os.path.join(args.out, "friends.in.jsonl")
    size = write_lines(stdin, [{"username": "follows_1001", "profile": profile},
                               {"username": "jack", "profile": profile, "max": 3000}])
    env = clean_env(sb.url, xdg)
    env["SOCIALPIPE_CREDENTIALS"] = credentials
    phase = Phase("tw-friends -j 4, two records of %s" % mb(size / 2), "friends", size // 2)
    measured = []
    for _ in range(args.runs):
        sb.clear()
        sb.fault("delay", match={"method": "GET", "path": "/2/users/%s/following" % FOLLOWS_1001}, skip=1, ms=3000)
        measured.append(measure_runs(Phase(phase.name, "friends", size // 2), 1, [args.tools["tw-friends"], "-j", "4"],
                                     stdin, env, 120, os.path.join(args.out, "friends")))
    return combine(phase, measured)


def combine(phase, measured):
    """One phase from several single runs: the largest peak, the fastest time."""
    phase.rss_kib = peak_rss(measured)
    phase.seconds = min(ph.seconds for ph in measured)
    phase.exit_status = measured[-1].exit_status
    phase.error = next((ph.error for ph in measured if ph.error), None)
    return phase


# ---------------------------------------------------------------- fb-perm-check

def permissions_answer(size):
    """A /permissions answer of about `size` bytes: made-up names, all granted,
    and `email` granted last."""
    entry = '{"permission":"made_up_%07d","status":"granted"}'
    count = max(1, size // (len(entry % 0) + 1))
    return ('{"data":[' + ",".join(entry % i for i in range(count))
            + ',{"permission":"email","status":"granted"}]}')


def permissions_phase(sb, args, xdg, answer, users, label):
    """fb-perm-check -j 4 asking about `email` for the first `users` users, each
    /permissions request answered 200 with `answer`."""
    stdin = os.path.join(args.out, "perm.in.jsonl")
    write_lines(stdin, [{"permission": "email", "user": u} for u in FB_USERS[:users]])
    phase = Phase("fb-perm-check -j 4, %s answer, %d user%s" % (mb(len(answer)), users, "" if users == 1 else "s"),
                  label, len(answer))
    # Past the cap each record ends `http` (exit 1); under it, `email` is granted.
    phase.expected_exit = 1 if len(answer) > 16 << 20 else 0
    sb.clear()
    sb.fault("status", match={"endpoint": PERMISSIONS_ENDPOINT}, status=200, body=answer, count=None)
    return measure_runs(phase, args.runs, [args.tools["fb-perm-check"], "-j", "4"], stdin,
                        facebook_env(sb.url, xdg, token=APP_TOKEN), 120, os.path.join(args.out, "perm"))


# ---------------------------------------------------------------- long lines

def line_cases(big):
    """(tool, arguments, record, credentials, exit status, what it shows) for a
    line holding `big`, a string of --line-bytes."""
    x = {"TW_CONSUMER_KEY": "ck", "TW_CONSUMER_SECRET": "cs", "TW_ACCESS_TOKEN": "t", "TW_ACCESS_TOKEN_SECRET": "ts"}
    fb = {"FB_ACCESS_TOKEN": PAGE_TOKEN}
    return [
        ("oauth-sign", [], {"method": "POST", "url": "https://api.x.com/2/tweets", "content_type": "application/json",
                            "body": big}, x, 0, "signed; the body is not signed"),
        ("tw-post", ["--dry-run", "--no-length-check"], {"text": big}, x, 0, "the post as it would be sent"),
        ("fb-feed", ["--dry-run"], {"message": big}, fb, 0, "the post as it would be sent"),
        ("fb-perm-check", ["--dry-run"], {"permission": big}, fb, 1, "input: not a permission name"),
        ("tw-friends", ["--dry-run"], {"username": big}, x, 1, "input: not a username"),
    ]


def line_phases(sb, args, xdg):
    big = "x" * args.line_bytes
    phases = []
    for tool, extra, record, credentials, status, shows in line_cases(big):
        stdin = os.path.join(args.out, "line.in.jsonl")
        size = write_lines(stdin, [record])
        env = clean_env(sb.url, xdg)
        for key in ("TW_CONSUMER_KEY", "TW_CONSUMER_SECRET", "TW_ACCESS_TOKEN", "TW_ACCESS_TOKEN_SECRET"):
            env.pop(key, None)
        env.update(credentials)
        env["FB_API_BASE"] = sb.url
        phase = Phase("%s %s" % (tool, " ".join(extra)) if extra else tool, "line", size)
        phase.expected_exit = status
        phase.shows = shows
        note("memory: a line of %s through %s" % (mb(size), phase.name))
        measure_runs(phase, args.runs, [args.tools[tool], "--max-line", str(size)] + extra, stdin, env, 300,
                     os.path.join(args.out, "line"))
        os.unlink(stdin)
        phases.append(phase)
    return phases


# ---------------------------------------------------------------------- report

def mb(n):
    """A size as the report gives it: kB and MB as the inputs are made, MiB for the long line."""
    if n < 1e5:
        return "%.0f kB" % (n / 1e3)
    if n < 1e7:
        return "%.1f MB" % (n / 1e6)
    return "%.0f MB" % (n / 1e6) if n < 100 << 20 else "%.0f MiB" % (n / 2 ** 20)


def main(argv=None):
    p = arg_parser("memory")
    p.add_argument("--record-bytes", type=int, default=int(os.environ.get("BENCH_MEM_RECORD", 1000000)),
                   help="bytes of each tw-friends record (default 1,000,000)")
    p.add_argument("--answer-bytes", type=int, default=int(os.environ.get("BENCH_MEM_ANSWER", 60000000)),
                   help="bytes of the large /permissions answer (default 60,000,000)")
    p.add_argument("--small-answer-bytes", type=int, default=int(os.environ.get("BENCH_MEM_SMALL_ANSWER", 13000000)),
                   help="bytes of the answer under the cap (default 13,000,000)")
    p.add_argument("--line-bytes", type=int, default=int(os.environ.get("BENCH_MEM_LINE", 200 << 20)),
                   help="bytes of the long line's string (default 200 MiB)")
    args = parse_args(p, "memory", "MEM", argv, latency=False)
    if args.runs < 1 or args.record_bytes < 1000 or args.answer_bytes < 1000 or args.small_answer_bytes < 1000 \
            or args.line_bytes < 1000:
        die("--runs must be >= 1, the sizes >= 1000 bytes")
    _, _, xdg = setup(args, "oauth-sign", {})
    args.tools = {t: os.path.join(os.path.abspath(args.bin), t)
                  for t in ("oauth-sign", "tw-post", "tw-friends", "fb-feed", "fb-perm-check")}
    missing = [t for t, path in args.tools.items() if not os.access(path, os.X_OK)]
    config = harness.default_config()
    config["facebook"]["users"] = config["facebook"].get("users", []) + [
        {"id": FB_USERS[3], "name": "Memory Bench User", "permissions": {"email": "granted"}}]
    sb = start_sandbox("memory", config=config, extra_args=["--no-rate-limits"])
    phases = []
    started = time.time()
    try:
        note("memory: sandbox %s (limits off); peak RSS of each run, %d run(s) each" % (sb.url, args.runs))
        if "tw-friends" not in missing:
            note("memory: tw-friends -j 4 with records of %d bytes" % args.record_bytes)
            phases.append(friends_phase(sb, args, xdg))
        if "fb-perm-check" not in missing:
            large = permissions_answer(args.answer_bytes)
            for users in (1, 4):
                note("memory: fb-perm-check, a %d-byte answer, %d user(s)" % (len(large), users))
                phases.append(permissions_phase(sb, args, xdg, large, users, "over-cap-%d" % users))
            del large
            small = permissions_answer(args.small_answer_bytes)
            for users in (1, 4):
                note("memory: fb-perm-check, a %d-byte answer, %d user(s)" % (len(small), users))
                phases.append(permissions_phase(sb, args, xdg, small, users, "under-cap-%d" % users))
            del small
        sb.clear()
        available = [case for case in line_cases("") if case[0] not in missing]
        if available:
            phases += [ph for ph in line_phases(sb, args, xdg) if ph is not None]
        sandbox_stderr = sb.stderr_text()
    finally:
        sb.stop()

    # ---------------------------------------------------------------- report
    verdicts = Verdicts("memory", GOAL_COLUMNS, WIDTH)
    problems = ["%s: %s" % (ph.name, ph.error) for ph in phases if ph.error]
    print_header([" memory benchmark: peak RSS (GNU time %M) of the tools on large inputs (issue 17 §4), output to",
                  " /dev/null; the sandbox without rate limits; %d run(s) each, the largest peak kept;%s"
                  % (args.runs, runs_line(args.runs).split(";", 1)[1])], WIDTH)
    head = "  %-48s %12s %10s %11s %5s %8s"
    print(head % ("run", "input", "peak RSS", "x input", "exit", "seconds"))
    for ph in phases:
        print(head % (ph.name, mb(ph.input_bytes), fmt(rss_mib(ph), "%.1f MiB"), fmt(ph.multiple(), "%.2f", "-"),
                      ph.exit_status, fmt(ph.seconds, "%.2f")))
    for tool in missing:
        print("  %-48s not measured: %s missing (make build)" % (tool, args.tools[tool]))
    print("  (input: a record of tw-friends, whose second list (3,000 accounts) waits behind the first;")
    print("   an answer of fb-perm-check, the line otherwise; x input: the peak over it. What the long line's")
    print("   runs do with it:")
    for ph in phases:
        if ph.group == "line":
            print("     %s: %s" % (ph.name, ph.shows))
    print("  )")

    print()
    print(" goals")
    by_group = {ph.group: ph for ph in phases if ph.group != "line"}

    def goal(label, ph, limit_mib, summary_goal):
        if ph is None or ph.rss_kib is None:
            verdicts.unmet(label, "not measured", summary_goal, "%s (not measured)" % label)
            return
        verdicts.goal(label, "%.1f MiB" % rss_mib(ph), summary_goal, rss_mib(ph) <= limit_mib,
                      "%s: %.1f MiB (%s)" % (label, rss_mib(ph), summary_goal))

    friends = by_group.get("friends")
    goal("tw-friends -j 4, %s records" % mb(friends.input_bytes if friends else args.record_bytes), friends,
         GOAL_FRIENDS_MIB, "goal <= %g MiB" % GOAL_FRIENDS_MIB)
    for users in (1, 4):
        goal("fb-perm-check, past the cap, %d user%s" % (users, "" if users == 1 else "s"),
             by_group.get("over-cap-%d" % users), GOAL_OVER_CAP_MIB[users], "goal <= %g MiB" % GOAL_OVER_CAP_MIB[users])
    for users in (1, 4):
        ph = by_group.get("under-cap-%d" % users)
        limit = users * GOAL_ANSWER_MULTIPLE * ph.input_bytes / 2 ** 20 + PROCESS_MIB if ph else 0
        goal("fb-perm-check, under the cap, %d user%s" % (users, "" if users == 1 else "s"), ph, limit,
             "goal <= %g x %d answer%s + %g MiB" % (GOAL_ANSWER_MULTIPLE, users, "" if users == 1 else "s", PROCESS_MIB))
    lines = [ph for ph in phases if ph.group == "line"]
    oauth = next((ph for ph in lines if ph.name == "oauth-sign"), None)
    limit = GOAL_LINE_MULTIPLE * oauth.input_bytes / 2 ** 20 + PROCESS_MIB if oauth else 0
    goal("oauth-sign, a long line", oauth, limit, "goal <= %g x line + %g MiB" % (GOAL_LINE_MULTIPLE, PROCESS_MIB))
    for ph in lines:
        if ph is not oauth and ph.rss_kib:
            verdicts.aside("%.1f MiB, %.2f x the line (no goal of its own)" % (rss_mib(ph), ph.multiple()),
                           label=ph.name.split()[0] + ", a long line")
    print_problems(problems, sandbox_stderr)

    with open(os.path.join(args.out, "results.json"), "w", encoding="utf-8") as f:
        json.dump({"record_bytes": args.record_bytes, "answer_bytes": args.answer_bytes,
                   "small_answer_bytes": args.small_answer_bytes, "line_bytes": args.line_bytes, "runs": args.runs,
                   "seconds": time.time() - started, "phases": [ph.as_dict() for ph in phases],
                   "verdicts": verdicts.as_list(), "problems": problems}, f, indent=1)
    verdicts.banner(problems)
    return 0


if __name__ == "__main__":
    sys.exit(main())
