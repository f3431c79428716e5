#!/bin/bash
# mpibench under a plain local mpirun (no emulated cluster, so no root):
# the repetition rule. With --tol 0.99 and --min-reps 3 a case is stable
# after 3 repetitions, so a 4 KiB all-reduce stops there; --min-time 0.3s
# must keep it going for 0.3 s, which at microseconds a repetition is
# hundreds of repetitions (20 is a bound any machine clears). Every result
# is checked on every rank ("verified": true). Each case carries the TCP
# counters of its hosts (retransmissions, timeouts).
. tests/clilib.bash
MPIBENCH=${MPIBENCH:-validate/mpibench}
ok() { echo "ok $1"; }
fail() { echo "FAIL $1${2:+: $2}"; }

if ! command -v mpirun >/dev/null; then
    fail mpibench-local "mpirun not found (Open MPI is a required package: make deps)"
    exit 0
fi
if [ ! -x "$MPIBENCH" ]; then
    fail mpibench-local "$MPIBENCH is not built (make validate-build)"
    exit 0
fi
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
MPIFLAGS="--oversubscribe"
[ "$(id -u)" = 0 ] && MPIFLAGS="$MPIFLAGS --allow-run-as-root"

# run NAME ARGS... — mpibench allreduce on 2 local ranks into $T/NAME.json;
# prints the flattened case 0 (reps, stable, verified) or why it failed.
run() {
    local name=$1
    shift
    timeout 120 mpirun $MPIFLAGS -np 2 "$MPIBENCH" allreduce --algo ring --sizes 4KiB --min-reps 3 \
        --max-reps 100000 --tol 0.99 --case-time 10s --quiet --out "$T/$name.json" "$@" >"$T/$name.log" 2>&1 ||
        { echo "mpirun exited $?: $(tail -3 "$T/$name.log")"; return 1; }
    flat "$T/$name.json" | awk -F'\t' '$1 ~ /^\.cases\[0\]\.(reps|stable|verified|tcp\.[a-z_]+)$/ { sub(/^\.cases\[0\]\./, "", $1); print $1 "=" $2 }'
}

plain=$(run plain) || { fail mpibench-local "$plain"; exit 0; }
reps=$(sed -n 's/^reps=//p' <<<"$plain")
[ -n "$reps" ] && [ "$reps" -lt 20 ] && grep -q '^verified=true$' <<<"$plain" &&
    ok "without --min-time a stable fast case stops early ($reps reps)" ||
    fail "without --min-time a stable fast case stops early" "$plain"

timed=$(run timed --min-time 0.3s) || { fail mpibench-min-time "$timed"; exit 0; }
reps=$(sed -n 's/^reps=//p' <<<"$timed")
[ -n "$reps" ] && [ "$reps" -ge 20 ] && grep -q '^stable=true$' <<<"$timed" && grep -q '^verified=true$' <<<"$timed" &&
    ok "--min-time 0.3s keeps a fast case going ($reps reps), stable and right" ||
    fail "--min-time 0.3s keeps a fast case going" "$timed"

# The case records the host's TCP trouble (mbtcp.h): retransmitted
# segments, retransmission timeouts, tail-loss probes, its slow
# repetitions (fewer than all) and of those the ones after a timeout.
tcp_ok=$(awk -F= '$1 ~ /^tcp\.(retrans|timeouts|loss_probes|slow_reps|slow_timeout_reps)$/ && $2 ~ /^[0-9]+$/ { n++ }
    $1 == "tcp.slow_reps" { s = $2 } $1 == "tcp.slow_timeout_reps" { st = $2 } $1 == "reps" { reps = $2 }
    END { print (n == 5 && s < reps && st <= s) ? "yes" : "no" }' <<<"$timed")
[ "$tcp_ok" = yes ] && ok "each case records its TCP retransmissions and timeouts" ||
    fail "each case records its TCP retransmissions and timeouts" "$timed"
