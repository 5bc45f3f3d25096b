#!/bin/sh
# Runs fuzz targets for a bounded time each (make fuzz): FUZZ_SECONDS per
# target, over its seed corpus in Fuzz/Corpus/TARGET and what earlier runs
# found in .build/fuzz/work/corpus/TARGET. Prints one line per target, and
# for a target that fails, why and how to replay the input that failed it. Exits 1 when any target failed.
#
# usage: Fuzz/run.sh BINDIR SECONDS [TARGET...]   (run from the repository)
set -u
bin=$1
seconds=$2
shift 2
targets=${*:-$(ls Fuzz/Corpus)}
work=.build/fuzz/work
failed=""
for target in $targets; do
    mkdir -p "$work/corpus/$target" "$work/artifacts"
    log=$work/$target.log
    # -close_fd_mask=2: the tools' own stderr lines would flood the log;
    # libFuzzer, the sanitizers and the targets' reports keep a copy of it.
    SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
        "$bin/fuzz-$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -close_fd_mask=2 \
        -print_final_stats=1 -artifact_prefix="$work/artifacts/$target-" \
        "$work/corpus/$target" "Fuzz/Corpus/$target" > "$log" 2>&1
    status=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
    coverage=$(sed -n 's/^#[0-9]*[[:space:]]*DONE[[:space:]]*cov: \([0-9]*\).*corp: \([0-9]*\).*/\1 edges, corpus \2/p' "$log" | tail -n 1)
    if [ "$status" -eq 0 ]; then
        echo "fuzz-$target: ok, ${runs:-0} runs in ${seconds} s (${speed:-0}/s), ${coverage:-no coverage}"
    else
        echo "fuzz-$target: FAILED (status $status) after ${runs:-?} runs"
        grep -a -E 'INVARIANT BROKEN|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|Fatal error|SUMMARY' "$log" | head -n 5
        grep -a -A 30 'ERROR:' "$log" | grep -a -E '^ +#[0-9]+ .* in .*/(Sources|Fuzz)/' | head -n 8
        artifact=$(sed -n "s/.*Test unit written to \(.*\)$/\1/p" "$log" | tail -n 1)
        [ -n "$artifact" ] && echo "  replay: $bin/fuzz-$target $artifact   (full log: $log)"
        failed="$failed $target"
    fi
done
if [ -n "$failed" ]; then
    echo "fuzz: failed:$failed"
    exit 1
fi
