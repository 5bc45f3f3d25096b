#!/bin/sh
# `make bench`: oauth-sign's throughput against oauthlib, a liboauth program and
# a jansson-only floor, on records without credentials and (without oauthlib)
# on records that carry their own, then every tool's start-up against curl; then tw-post (text,
# then media), tw-friends, fb-feed and fb-perm-check against the sandbox
# (tw_post_bench.py, tw_post_media_bench.py, tw_friends_bench.py,
# fb_feed_bench.py, fb_perm_check_bench.py), then the tools' peak memory on
# large inputs (memory_bench.py). A report, not a test: exits 0 when a goal
# is missed, non-zero only when the bench cannot run.
#
# Environment: SOCIALPIPE_BIN (directory holding oauth-sign; required),
# PYTHON (a python with oauthlib; default python3), BENCH_RECORDS (default
# 100000), BENCH_RUNS (timed runs per contender, best is kept; default 3),
# CC (default cc).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
out="$here/out"
bin=${SOCIALPIPE_BIN:?SOCIALPIPE_BIN must name the directory holding oauth-sign}
python=${PYTHON:-python3}
records=${BENCH_RECORDS:-100000}
runs=${BENCH_RUNS:-3}
cc=${CC:-cc}
oauth_sign="$bin/oauth-sign"
input="$out/records.jsonl"
input_secrets="$out/records-secrets.jsonl"
log="$out/hyperfine.log"

# Goals (issues 15 and 21): on both data sets oauth-sign >= 3x liboauth and
# >= 100 % of the floor's throughput; >= 8x oauthlib; oauth-sign's start-up
# <= 0.5x curl's.
goal_liboauth=3
goal_oauthlib=8
goal_floor=100
goal_startup=0.5

mkdir -p "$out"
: >"$log"

# Every contender takes the same (made-up) credentials from the environment,
# as a user of oauth-sign would give them; the second data set's records carry
# their own, which override them.
TW_CONSUMER_KEY=xvz1evFS4wEEPTGEFPHBog
TW_CONSUMER_SECRET=kAcSOqF21Fu85e7zjz7ZN2U4ZRhfV3WpwPAoE3Z7kBw
TW_ACCESS_TOKEN=370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb
TW_ACCESS_TOKEN_SECRET=LswwdoUaIvS8ltyTt5jkRh4J50vUPVVHtR2YPi5kE
export TW_CONSUMER_KEY TW_CONSUMER_SECRET TW_ACCESS_TOKEN TW_ACCESS_TOKEN_SECRET
# Keep the user's own credentials file and profile out of the measurement.
XDG_CONFIG_HOME="$out/xdg-config"
export XDG_CONFIG_HOME
unset SOCIALPIPE_CREDENTIALS SOCIALPIPE_PROFILE TW_BEARER_TOKEN || true

die() {
    echo "bench: $*" >&2
    exit 1
}

command -v hyperfine >/dev/null 2>&1 || die "hyperfine not found (make deps)"
pkg-config --exists jansson oauth || die "jansson/liboauth development files not found (make deps)"
"$python" -c 'import oauthlib' 2>/dev/null || die "$python cannot import oauthlib (make venv)"

echo "bench: compiling the C contenders into bench/out"
# The pkg-config flags are several words on purpose.
# shellcheck disable=SC2046
"$cc" -O2 -o "$out/liboauth_sign" "$here/liboauth_sign.c" $(pkg-config --cflags --libs jansson oauth)
# shellcheck disable=SC2046
"$cc" -O2 -o "$out/floor" "$here/floor.c" $(pkg-config --cflags --libs jansson)

echo "bench: generating $records records (seeded), without and with their own secrets"
"$python" "$here/gen_oauth_records.py" -n "$records" -o "$input"
"$python" "$here/gen_oauth_records.py" -n "$records" --secrets -o "$input_secrets"

# Seconds of the fastest of the runs in a hyperfine JSON export.
best_seconds() {
    "$python" -c 'import json, sys; print("%.4f" % min(json.load(open(sys.argv[1]))["results"][0]["times"]))' "$1"
}

# measure NAME COMMAND: time COMMAND (reads a data set, writes $out/NAME.out) and
# check it wrote one successful envelope per record. Prints the best seconds,
# or nothing when the contender failed. Each run starts after sync(1), so that
# the writeback of the previous run's output (hundreds of MB) is not timed in it.
measure() {
    name=$1
    command=$2
    echo "bench: timing $name ($runs runs)" >&2
    if ! hyperfine --style none --runs "$runs" --prepare sync --export-json "$out/$name.json" \
        --command-name "$name" "$command" >>"$log" 2>&1; then
        echo "bench: $name failed; see bench/out/hyperfine.log" >&2
        return 0
    fi
    lines=$(wc -l <"$out/$name.out" | tr -d ' ')
    ok=$(grep -c '^{"ok":true' "$out/$name.out" || true)
    if [ "$lines" != "$records" ] || [ "$ok" != "$records" ]; then
        echo "bench: $name wrote $lines lines, $ok successful, for $records records" >&2
    fi
    best_seconds "$out/$name.json"
}

bytes_of() {
    if [ -f "$1" ]; then wc -c <"$1" | tr -d ' '; else echo 0; fi
}

# throughput SUFFIX INPUT [oauthlib]: times oauth-sign, liboauth (and
# oauthlib), then the floor on INPUT; outputs and exports are named
# CONTENDER$SUFFIX. Sets t_sign, t_liboauth, t_oauthlib, t_floor (empty:
# not measured), pad_ratio and ratio_source.
throughput() {
    suffix=$1
    file=$2
    input_bytes=$(wc -c <"$file" | tr -d ' ')
    t_sign=""
    t_oauthlib=""
    if [ -x "$oauth_sign" ]; then
        t_sign=$(measure "oauth-sign$suffix" "'$oauth_sign' <'$file' >'$out/oauth-sign$suffix.out'")
    else
        echo "bench: $oauth_sign not found; build it first (make build)" >&2
    fi
    t_liboauth=$(measure "liboauth$suffix" "'$out/liboauth_sign' <'$file' >'$out/liboauth$suffix.out'")
    if [ "${3:-}" = oauthlib ]; then
        t_oauthlib=$(measure "oauthlib$suffix" "'$python' '$here/oauthlib_sign.py' <'$file' >'$out/oauthlib$suffix.out'")
    fi
    # The floor writes as many bytes per input byte as oauth-sign did.
    rm -f "$out/floor$suffix.out"
    ratio_source=oauth-sign
    [ -n "$t_sign" ] || ratio_source=liboauth
    pad_ratio=$(awk -v o="$(bytes_of "$out/$ratio_source$suffix.out")" -v i="$input_bytes" 'BEGIN { printf "%.4f", o / i }')
    t_floor=$(measure "floor$suffix" "'$out/floor' $pad_ratio <'$file' >'$out/floor$suffix.out'")
}

throughput -secrets "$input_secrets"
s_sign=$t_sign s_liboauth=$t_liboauth s_floor=$t_floor s_pad=$pad_ratio s_source=$ratio_source
throughput "" "$input" oauthlib

# Every tool's start-up, as a user's `tool </dev/null` (hyperfine gives each
# command an empty stdin) with the credentials above, beside curl, in one
# hyperfine run. fb-feed and fb-perm-check get a made-up FB_ACCESS_TOKEN
# (without one they stop at once with a configuration error); tw-auth and
# fb-auth, interactive, run --version (on empty stdin they stop with a usage
# error). Prints "NAME MEDIAN MEAN SD" (ms) per command, curl last.
startup_tools="oauth-sign tw-post tw-friends fb-feed fb-perm-check tw-auth fb-auth"
measure_startup() {
    set --
    for tool in $startup_tools; do
        [ -x "$bin/$tool" ] || { echo "bench: $bin/$tool not found; its start-up is not measured" >&2; continue; }
        case $tool in
        tw-auth | fb-auth) set -- "$@" --command-name "$tool --version" "'$bin/$tool' --version" ;;
        *) set -- "$@" --command-name "$tool" "'$bin/$tool'" ;;
        esac
    done
    FB_ACCESS_TOKEN=EAAB0startup0bench0token hyperfine -N --style none --warmup 20 --runs 200 \
        --export-json "$out/startup.json" "$@" --command-name curl "curl -s file:///dev/null" >>"$log" 2>&1 || return 0
    "$python" -c '
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    print("%s %.3f %.3f %.3f" % (r["command"].replace(" ", "_"), r["median"] * 1e3, r["mean"] * 1e3, r["stddev"] * 1e3))' "$out/startup.json"
}
echo "bench: timing start-up (200 runs each)" >&2
startup=$(measure_startup)
t_start_curl=$(echo "$startup" | awk '$1 == "curl" { print $2 }')
t_start_sign=$(echo "$startup" | awk '$1 == "oauth-sign" { print $2 }')

# ---------------------------------------------------------------- report
verdicts="$out/verdicts"
: >"$verdicts"

# verdict LABEL OK: record PASS/MISS for the summary, print it.
verdict() {
    if [ "$2" = 1 ]; then
        echo "PASS $1" >>"$verdicts"
        printf 'PASS'
    else
        echo "MISS $1" >>"$verdicts"
        printf 'MISS'
    fi
}

rate() {
    awk -v n="$records" -v t="$1" 'BEGIN { printf "%.0f", n / t }'
}

row() { # name seconds bytes comparison
    if [ -n "$2" ]; then
        printf '  %-22s %9s %11s %9s   %s\n' "$1" "$2" "$(rate "$2")" \
            "$(awk -v b="$3" 'BEGIN { printf "%.1f", b / 1e6 }')" "$4"
    else
        printf '  %-22s %9s %11s %9s   %s\n' "$1" "n/a" "-" "-" "$4"
    fi
}

# compare SECONDS GOAL LABEL: oauth-sign's speed-up over a contender, with its goal.
# Reads t_sign.
compare() {
    if [ -z "$t_sign" ] || [ -z "$1" ]; then
        echo "n/a (not measured)"
        echo "MISS $3 (not measured)" >>"$verdicts"
        return
    fi
    x=$(awk -v a="$1" -v b="$t_sign" 'BEGIN { printf "%.2f", a / b }')
    pass=$(awk -v x="$x" -v g="$2" 'BEGIN { print (x >= g) ? 1 : 0 }')
    printf '%-24s %-14s %s\n' "${x}x faster" "goal >= ${2}x" "$(verdict "$3: ${x}x (goal >= $2x)" "$pass")"
}

floor_share() {
    if [ -z "$t_sign" ] || [ -z "$t_floor" ]; then
        echo "n/a (not measured)"
        echo "MISS floor share$1 (not measured)" >>"$verdicts"
        return
    fi
    share=$(awk -v f="$t_floor" -v s="$t_sign" 'BEGIN { printf "%.0f", 100 * f / s }')
    pass=$(awk -v x="$share" -v g="$goal_floor" 'BEGIN { print (x >= g) ? 1 : 0 }')
    printf '%-24s %-14s %s\n' "runs at $share % of it" "goal >= $goal_floor %" \
        "$(verdict "floor share$1: $share % (goal >= $goal_floor %)" "$pass")"
}

# table TITLE SUFFIX FILE: the throughput rows of one data set, from t_sign,
# t_liboauth, t_oauthlib (none when empty), t_floor, pad_ratio, ratio_source.
table() {
    tag=${2:+ (own secrets)}
    echo
    echo " $1 ($(awk -v b="$(wc -c <"$3")" 'BEGIN { printf "%.1f", b / 1e6 }') MB)"
    printf '  %-22s %9s %11s %9s   %s\n' contender seconds lines/s "out MB" "oauth-sign vs it"
    row "oauth-sign (Swift)" "$t_sign" "$(bytes_of "$out/oauth-sign$2.out")" ""
    row "liboauth + jansson (C)" "$t_liboauth" "$(bytes_of "$out/liboauth$2.out")" \
        "$(compare "$t_liboauth" "$goal_liboauth" "vs liboauth$tag")"
    if [ -z "$2" ]; then
        row "oauthlib (Python)" "$t_oauthlib" "$(bytes_of "$out/oauthlib.out")" "$(compare "$t_oauthlib" "$goal_oauthlib" "vs oauthlib")"
    fi
    row "floor: jansson I/O" "$t_floor" "$(bytes_of "$out/floor$2.out")" "$(floor_share "$tag")"
    echo "  (floor padded to $pad_ratio output bytes per input byte, measured from $ratio_source)"
}

echo
echo "================================================================================"
echo " oauth-sign benchmark: $records X requests in JSON lines, best of $runs runs,"
echo " output to files in bench/out; $(nproc 2>/dev/null || echo '?') CPUs; $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "================================================================================"
table "records without credentials (TW_* in the environment)" "" "$input"
t_sign=$s_sign t_liboauth=$s_liboauth t_floor=$s_floor pad_ratio=$s_pad ratio_source=$s_source
table "records that carry their own (consumer_key, consumer_secret, token, token_secret; echoed redacted)" \
    -secrets "$input_secrets"
echo
echo " start-up: each tool </dev/null (tw-auth, fb-auth: --version) and curl, one hyperfine -N run,"
echo " 20 warm-up, 200 runs each; median, mean ± sd in ms, ratio of medians to curl's"
if [ -n "$t_start_curl" ]; then
    echo "$startup" | while read -r name median mean sd; do
        label=$(echo "$name" | tr _ ' ')
        [ "$name" = curl ] && label="curl -s file:///dev/null"
        x=$(awk -v a="$median" -v b="$t_start_curl" 'BEGIN { printf "%.2f", a / b }')
        printf '  %-30s %8s ms   (mean %s ± %s)   %5sx curl\n' "$label" "$median" "$mean" "$sd" "$x"
    done
fi
if [ -n "$t_start_sign" ] && [ -n "$t_start_curl" ]; then
    x=$(awk -v a="$t_start_sign" -v b="$t_start_curl" 'BEGIN { printf "%.2f", a / b }')
    pass=$(awk -v x="$x" -v g="$goal_startup" 'BEGIN { print (x <= g) ? 1 : 0 }')
    printf '  %-30s %8sx   goal <= %sx   %s\n' "oauth-sign / curl (median)" "$x" "$goal_startup" \
        "$(verdict "start-up: ${x}x curl (goal <= ${goal_startup}x)" "$pass")"
else
    echo "  not measured (oauth-sign missing or failed; see bench/out/hyperfine.log)"
    echo "MISS start-up (not measured)" >>"$verdicts"
fi

# Make the verdict unmissable.
missed=$(grep -c '^MISS' "$verdicts" || true)
total=$(wc -l <"$verdicts" | tr -d ' ')
echo
if [ "$missed" = 0 ]; then
    echo "################################################################################"
    echo "##  ALL $total GOALS MET"
    echo "################################################################################"
else
    echo "################################################################################"
    echo "##  $missed OF $total GOALS MISSED:"
    grep '^MISS' "$verdicts" | sed 's/^MISS /##    - /'
    echo "################################################################################"
fi

# ---------------------------------------------------------------- the sandbox benchmarks
# Each prints its own report and banner after the one above and exits 0 whether
# or not its goals are met, non-zero only when it cannot run (no sandbox, or a
# Python peer's library missing from $python); a tool not yet built is skipped
# with a line saying so, and its goals are MISS. Each sets its own (sandbox)
# credentials. All of them run; then run.sh exits with the first non-zero
# status among them.
sandbox_status=0

# sandbox_bench TOOL SCRIPT: runs bench/SCRIPT against the tools in $bin.
sandbox_bench() {
    echo
    echo "bench: $1 benchmark against the sandbox" >&2
    bench_status=0
    "$python" "$here/$2" --bin "$bin" || bench_status=$?
    [ "$sandbox_status" != 0 ] || sandbox_status=$bench_status
}

# ---------------------------------------------------------------- tw-post
# tw-post against the sandbox beside a tweepy create_tweet loop and a trivial
# client that measures the sandbox's own ceiling (bench/tw_post_bench.py, about
# a minute and a half). Environment: BENCH_TW_POSTS (default 1000),
# BENCH_TW_RUNS (default 1), BENCH_TW_LATENCY_MS (default 20),
# BENCH_TW_SANDBOX_THREADS (default 16).
sandbox_bench tw-post tw_post_bench.py

# ---------------------------------------------------------------- tw-post media
# tw-post making 100 posts with one generated 1 MiB image each (the one-shot
# upload, then the post) at --parallel 1 and 8, beside a tweepy
# media_upload + create_tweet loop and the sandbox's own ceiling for the same
# requests, with peak RSS (bench/tw_post_media_bench.py, about a minute and a half).
# Environment: BENCH_TWM_POSTS (default 100), BENCH_TWM_SIZE (bytes per image,
# default 1048576), BENCH_TWM_RUNS (default 3), BENCH_TWM_LATENCY_MS (default
# 20), BENCH_TWM_SANDBOX_THREADS (default 16).
sandbox_bench "tw-post media" tw_post_media_bench.py

# ---------------------------------------------------------------- tw-friends
# tw-friends walking the sandbox's 1,000,000-account user beside tweepy's
# Paginator, twarc2's following and the sandbox's own ceiling, for API v2 and
# v1.1 (bench/tw_friends_bench.py, about a minute). Environment:
# BENCH_TWF_ACCOUNTS (default 1000000), BENCH_TWF_SMALL (default 10000),
# BENCH_TWF_RUNS (rounds of the ceiling and tw-friends in turns, default 3),
# BENCH_TWF_PEER_RUNS (default 1).
sandbox_bench tw-friends tw_friends_bench.py

# ---------------------------------------------------------------- fb-feed
# fb-feed posting 1,000 messages to the sandbox's demo Page, sequentially,
# with --parallel 8 and with --batch 50, beside a facebook-sdk put_object loop
# and the sandbox's own ceiling, with peak RSS (bench/fb_feed_bench.py, about a
# minute and a half). Environment: BENCH_FB_POSTS (default 1000), BENCH_FB_RUNS
# (default 1), BENCH_FB_LATENCY_MS (default 20), BENCH_FB_SANDBOX_THREADS
# (default 16).
sandbox_bench fb-feed fb_feed_bench.py

# ---------------------------------------------------------------- fb-perm-check
# fb-perm-check answering 10,000 permission checks over 100 users (one shared
# GET /{user}/permissions per user) with its default --parallel 4 and with
# --parallel 8, beside a facebook-sdk get_permissions loop (one request per
# check) and the sandbox's own ceiling, with peak RSS
# (bench/fb_perm_check_bench.py, about four minutes, nearly all of it the sdk).
# Environment: BENCH_FBP_CHECKS (default 10000), BENCH_FBP_USERS (default 100),
# BENCH_FBP_SMALL (default 1000), BENCH_FBP_RUNS (default 1),
# BENCH_FBP_LATENCY_MS (default 20), BENCH_FBP_SANDBOX_THREADS (default 16).
sandbox_bench fb-perm-check fb_perm_check_bench.py

# ---------------------------------------------------------------- memory
# The peak RSS of the tools on large inputs (issue 17 §4): tw-friends -j 4
# with records of 1 MB, fb-perm-check given a 60 MB /permissions answer (past
# the cap) for one user and four, and a 13 MB one, and a 200 MiB line through
# oauth-sign, tw-post, fb-feed, fb-perm-check and tw-friends
# (bench/memory_bench.py, about a minute, up to 2 GB of memory). Environment:
# BENCH_MEM_RECORD (default 1000000), BENCH_MEM_ANSWER (default 60000000),
# BENCH_MEM_SMALL_ANSWER (default 13000000), BENCH_MEM_LINE (default
# 209715200), BENCH_MEM_RUNS (default 1).
sandbox_bench memory memory_bench.py
exit "$sandbox_status"
