"""What the sandbox benchmarks (tw_post_bench.py, tw_friends_bench.py) share:
the clients' environment, a measured run of a contender, the envelopes it
wrote, and the goals' verdicts with their closing banner."""
import collections
import datetime
import json
import os
import shutil
import signal
import subprocess
import sys
import time

# The sandbox's published demo credentials (sandbox/default-config.json).
CREDENTIALS = {
    "TW_CONSUMER_KEY": "sandbox-consumer-key",
    "TW_CONSUMER_SECRET": "sandbox-consumer-secret",
    "TW_ACCESS_TOKEN": "1000000000000000001-sandboxaccesstoken",
    "TW_ACCESS_TOKEN_SECRET": "sandbox-access-token-secret",
}

TIME = "/usr/bin/time"


def note(message):
    sys.stderr.write("bench: %s\n" % message)
    sys.stderr.flush()


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


def unchecked_oauth_header():
    """An OAuth 1.0a header with the demo keys for a sandbox started with
    --no-verify-signatures: what the trivial ceiling clients send, so they do
    no signing work at all."""
    return ('OAuth oauth_consumer_key="%s", oauth_nonce="benchmark", oauth_signature="unchecked", '
            'oauth_signature_method="HMAC-SHA1", oauth_timestamp="%d", oauth_token="%s", oauth_version="1.0"'
            % (CREDENTIALS["TW_CONSUMER_KEY"], int(time.time()), CREDENTIALS["TW_ACCESS_TOKEN"]))


def run_measured(argv, stdin_path, stdout_path, stderr_path, env, timeout):
    """Runs argv; returns (exit status (or a string when it had to be killed),
    wall seconds, peak RSS in KiB or None).

    The peak RSS comes from GNU time (`/usr/bin/time -f %M`), whose child is
    forked from that small C program. wait4 on a child forked from this Python
    process would not do: Linux carries the pre-exec high-water mark (this
    interpreter's ~30 MiB) over exec into the child's ru_maxrss."""
    rss_path = stdout_path + ".rss"
    timed = os.access(TIME, os.X_OK)
    if timed:
        argv = [TIME, "-f", "%M", "-o", rss_path] + list(argv)
    with open(stdin_path, "rb") as fin, open(stdout_path, "wb") as fout, open(stderr_path, "wb") as ferr:
        started = time.perf_counter()
        proc = subprocess.Popen(argv, stdin=fin, stdout=fout, stderr=ferr, env=env, start_new_session=True)
        try:
            status = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            # A contender that hangs: stop it (its own process group) and say so.
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            status = "timed out after %.0f s" % timeout
        seconds = time.perf_counter() - started
    rss = None
    if timed:
        try:
            with open(rss_path, encoding="utf-8") as f:
                rss = int(f.read().split()[-1])
        except (OSError, ValueError, IndexError):
            rss = None
    return status, seconds, rss


def count_envelopes(path):
    """(ok, failed, Counter of failure kinds) of an output of JSON lines."""
    ok = failed = 0
    kinds = collections.Counter()
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            try:
                env = json.loads(line)
            except ValueError:
                failed += 1
                kinds["unparsable output line"] += 1
                continue
            if env.get("ok") is True:
                ok += 1
            else:
                failed += 1
                err = env.get("error")
                if isinstance(err, dict):
                    err = err.get("kind") or err.get("code") or err.get("message")
                kinds[str(err)[:80]] += 1
    return ok, failed, kinds


def prepare_out(out):
    """Creates the output directory; returns an empty XDG_CONFIG_HOME inside it."""
    os.makedirs(out, exist_ok=True)
    xdg = os.path.join(out, "xdg-config")
    shutil.rmtree(xdg, ignore_errors=True)
    os.makedirs(xdg)
    return xdg


def runs_line(runs):
    """The report's line on how it was measured: runs, CPUs, when."""
    return (" %s run(s) each, fastest kept; %s CPUs; %s"
            % (runs, os.cpu_count() or "?",
               datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")))


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
        self.failed = 0
        self.kinds = collections.Counter()
        self.requests = 0
        self.connections = 0
        self.statuses = collections.Counter()
        self.exit_status = None
        self.error = None

    def as_dict(self):
        return {k: dict(v) if isinstance(v, collections.Counter) else v for k, v in self.__dict__.items()}


class Verdicts:
    """The PASS/MISS of each goal, in the order checked."""

    def __init__(self, name):
        self.name = name
        self.items = []

    def add(self, ok, label):
        """Records a goal's outcome; returns the word to print beside it."""
        self.items.append(("PASS" if ok else "MISS", label))
        return "PASS" if ok else "MISS"

    def as_list(self):
        return ["%s %s" % v for v in self.items]

    def banner(self, problems, width=96):
        """The closing banner: which goals were missed, and whether problems were noted."""
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
