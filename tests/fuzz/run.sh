#!/bin/bash
# run.sh — runs the libFuzzer harnesses of build-fuzz/fuzz/ (make fuzz,
# make fuzz-smoke; docs/dev/running-tests.md "Fuzzing"), one harness at a time, one process
# each, at nice level FUZZ_NICE, from the repository root.
#
#   tests/fuzz/run.sh smoke HARNESS...     FUZZ_SMOKE_TIME seconds each over its corpus
#   tests/fuzz/run.sh campaign HARNESS...  FUZZ_RUNS executions each (FUZZ_RUNS_SCENARIO for
#                                          scenario), FUZZ_TIME seconds at most (0: no limit),
#                                          in FUZZ_JOBS processes (1) that share the corpus
#                                          and split the executions
#   tests/fuzz/run.sh replay HARNESS...    every input of tests/fuzz/corpus/HARNESS once
#
# A harness's inputs: the shipped files of its kind and the bad-input
# corpus (seeds, copied into build-fuzz/seeds/HARNESS), the committed
# regression corpus tests/fuzz/corpus/HARNESS (inputs that once crashed,
# and seeds no shipped file provides), and the campaign's growing corpus
# build-fuzz/corpus/HARNESS (not committed). A crash, leak or hang stops the
# run with its input in build-fuzz/artifacts/: add it to the regression
# corpus with a test (tests/fuzz/README.md). Each campaign appends
# "harness executions seconds corpus-size" to build-fuzz/summary.txt.
# Exit status: 0 clean, 1 a harness failed (crash, leak, hang, contract).
set -u
B=build-fuzz
MODE=${1:?usage: run.sh smoke|campaign|replay HARNESS...}
shift
: "${FUZZ_RUNS:=1000000}" "${FUZZ_RUNS_SCENARIO:=10000000}" "${FUZZ_TIME:=0}"
: "${FUZZ_SMOKE_TIME:=3}" "${FUZZ_NICE:=10}" "${FUZZ_JOBS:=1}"
export G_SLICE=always-malloc
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# The seed files of harness $1 (globs, relative to the root).
seeds_of() {
    case $1 in
    scenario) echo configs/*.yaml tests/bad/scenario/* tests/bad/support/*.yaml ;;
    sweep) echo configs/*.yaml tests/bad/scenario/* tests/bad/support/*.yaml ;;
    topo) echo topologies/*.yaml tests/bad/topo/* tests/bench/*.yaml ;;
    calib) echo tests/bad/scenario/bad-calib-*.yaml ;;
    meas) echo tests/data/calib-*.json ;;
    prof) echo tests/data/profile-*.json ;;
    results) echo tests/data/*.json ;;
    model) echo models/*.yaml tests/bad/model/bad-* ;;
    *) echo "run.sh: unknown harness '$1'; expected one of tests/fuzz/fuzz_*.c" >&2; return 1 ;;
    esac
}

# Fills $B/seeds/$1 with copies of its seed files (flat names).
make_seeds() {
    local d=$B/seeds/$1 f
    rm -rf "$d"
    mkdir -p "$d" "tests/fuzz/corpus/$1" "$B/corpus/$1" "$B/artifacts" "$B/logs"
    for f in $(seeds_of "$1"); do
        [ -f "$f" ] && cp "$f" "$d/${f//\//_}"
    done
}

# Common libFuzzer options: a hang is 10 s on one input, 2 GB is too much.
OPTS=(-timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1)

fail=0
for h in "$@"; do
    bin=$B/fuzz/$h
    [ -x "$bin" ] || { echo "run.sh: $bin not built; expected make fuzz-build first"; exit 1; }
    make_seeds "$h" || exit 1
    log=$B/logs/$h.$MODE.log
    case $MODE in
    smoke)
        work=$(mktemp -d "${TMPDIR:-/tmp}/arsim-fuzz.XXXXXX")
        nice -n "$FUZZ_NICE" "$bin" "${OPTS[@]}" -max_total_time="$FUZZ_SMOKE_TIME" \
            -artifact_prefix="$B/artifacts/$h-" "$work" "$B/seeds/$h" "tests/fuzz/corpus/$h" >"$log" 2>&1
        rc=$?
        rm -rf "$work"
        ;;
    campaign)
        runs=$FUZZ_RUNS
        [ "$h" = scenario ] && runs=$FUZZ_RUNS_SCENARIO
        start=$(date +%s)
        if [ "$FUZZ_JOBS" -gt 1 ]; then
            # libFuzzer's jobs: FUZZ_JOBS independent runs of runs/FUZZ_JOBS
            # executions each over the shared corpus, each logging to
            # $B/logs/$h.job/fuzz-J.log, which libFuzzer copies into $log as
            # each job ends; the executions are their sum. The jobs run in
            # that folder (libFuzzer writes its logs to the working
            # directory); the harnesses resolve data names from the root
            # whatever the working directory (fuzzlib.h).
            rm -rf "$B/logs/$h.job" && mkdir -p "$B/logs/$h.job"
            (cd "$B/logs/$h.job" && nice -n "$FUZZ_NICE" "../../../$bin" "${OPTS[@]}" \
                -jobs="$FUZZ_JOBS" -workers="$FUZZ_JOBS" -runs=$((runs / FUZZ_JOBS)) \
                -max_total_time="$FUZZ_TIME" -artifact_prefix="../../artifacts/$h-" \
                "../../corpus/$h" "../../seeds/$h" "../../../tests/fuzz/corpus/$h") >"$log" 2>&1
            rc=$?
            grep -q -E '^==[0-9]+==ERROR|^SUMMARY|Test unit written' "$log" && rc=1
        else
            nice -n "$FUZZ_NICE" "$bin" "${OPTS[@]}" -runs="$runs" -max_total_time="$FUZZ_TIME" \
                -artifact_prefix="$B/artifacts/$h-" "$B/corpus/$h" "$B/seeds/$h" "tests/fuzz/corpus/$h" >"$log" 2>&1
            rc=$?
        fi
        secs=$(($(date +%s) - start))
        execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | awk '{n += $1} END {if (NR) print n}')
        size=$(find "$B/corpus/$h" -type f | wc -l)
        echo "$h ${execs:-?} $secs $size rc=$rc" >>"$B/summary.txt"
        echo "fuzz $h: ${execs:-?} executions in ${secs} s, corpus $size inputs"
        ;;
    replay)
        shopt -s nullglob
        files=("tests/fuzz/corpus/$h"/*)
        shopt -u nullglob
        rc=0
        [ ${#files[@]} -gt 0 ] && { "$bin" "${OPTS[@]}" "${files[@]}" >"$log" 2>&1; rc=$?; }
        ;;
    *) echo "run.sh: unknown mode '$MODE'; expected smoke, campaign or replay"; exit 1 ;;
    esac
    if [ "$rc" -ne 0 ]; then
        echo "FAIL fuzz $h ($MODE): exit $rc; the input is in $B/artifacts/$h-*; log $log:"
        grep -E 'ERROR|SUMMARY|contract|runtime error|Test unit written' "$log" | head -8
        fail=1
    else
        [ "$MODE" = campaign ] || echo "ok fuzz $h ($MODE)"
    fi
done
exit "$fail"
