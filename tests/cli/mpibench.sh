#!/bin/bash
# mpibench under a plain local mpirun (no emulated cluster, so no root):
# the repetition rule, checked from what the measurements file records,
# so that the verdict holds on a fast and on a slow machine. A case stops
#   stable      after >= --min-reps repetitions that took >= --min-time
#               (measured_s) and whose median settled within --tol, or
#   not stable  at --max-reps, or once the case used --case-time.
# With --warmup 0 the case's time is its measured_s (to a microsecond), so
# the budget is visible too. A 4 KiB all-reduce on 2 ranks either settles
# (then measured_s must reach --min-time) or, on a machine fast enough to
# run --max-reps before --min-time, stops there unstable: both obey the
# rule, which is what is asserted. Every result is checked on every rank
# ("verified": true), and each case carries the TCP
# counters of its hosts (retransmissions, timeouts). Without mpirun/mpicc the suite says it is skipped.
. tests/clilib.bash
MPIBENCH=${MPIBENCH:-validate/mpibench}
ok() { echo "ok $1"; }
fail() { echo "FAIL $1${2:+: $2}"; }

if ! command -v mpirun >/dev/null || ! command -v "${MPICC:-mpicc}" >/dev/null; then
    echo "skipped mpibench: mpirun or ${MPICC:-mpicc} not found, so validate/mpibench is not built (Open MPI: make deps installs openmpi-bin and libopenmpi-dev)"
    exit 0
fi
if [ ! -x "$MPIBENCH" ]; then
    fail mpibench-local "$MPIBENCH is not built (make validate-build)"
    exit 0
fi
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
MPIFLAGS="--oversubscribe"
[ "$(id -u)" = 0 ] && MPIFLAGS="$MPIFLAGS --allow-run-as-root"
MIN_REPS=3 MAX_REPS=100000 CASE_TIME=10

# run NAME ARGS... — mpibench allreduce on 2 local ranks into $T/NAME.json;
# prints the flattened case 0 as KEY=VALUE lines, or why it failed. The
# timeout is a hang guard (mpirun can hang on a host's network setup), not
# a verdict on speed: a run lasts at most CASE_TIME plus its start.
run() {
    local name=$1
    shift
    timeout 600 mpirun $MPIFLAGS -np 2 "$MPIBENCH" allreduce --algo ring --sizes 4KiB --warmup 0 \
        --min-reps $MIN_REPS --max-reps $MAX_REPS --tol 0.99 --case-time ${CASE_TIME}s --quiet \
        --out "$T/$name.json" "$@" >"$T/$name.log" 2>&1 ||
        { echo "mpirun exited $?: $(tail -3 "$T/$name.log")"; return 1; }
    flat "$T/$name.json" | awk -F'\t' '$1 ~ /^\.cases\[0\]\.(reps|stable|verified|measured_s|start_spread_s|time_s|min_s|max_s|reps_s\[[0-9]+\]|tcp\.[a-z_]+)$/ {
        sub(/^\.cases\[0\]\./, "", $1); print $1 "=" $2 }'
}

# rule MIN_TIME KEY=VALUE... — prints which way the case stopped if that
# obeys the rule; fails, saying why, otherwise (MIN_TIME in seconds).
rule() {
    awk -v min_time="$1" -v min_reps=$MIN_REPS -v max_reps=$MAX_REPS -v case_time=$CASE_TIME '
        { split($0, kv, "="); v[kv[1]] = kv[2] }
        END {
            if (v["verified"] != "true") { print "a result was wrong or not checked"; exit 1 }
            r = v["reps"] + 0; m = v["measured_s"] + 0
            if (v["reps"] == "" || v["measured_s"] == "" || r < 1 || r > max_reps) { print "reps " v["reps"] " or measured_s " v["measured_s"] " missing or out of range"; exit 1 }
            if (v["stable"] == "true") {
                if (r < min_reps) { print "stable after " r " < --min-reps " min_reps " repetitions"; exit 1 }
                if (m < min_time) { print "stable after " m " s < --min-time " min_time " s"; exit 1 }
                printf "stable after %d reps in %.3g s\n", r, m
            } else if (v["stable"] == "false") {
                if (r == max_reps) printf "capped at --max-reps %d in %.3g s\n", r, m
                else if (m >= case_time - 0.001) printf "budget of %g s used (%d reps)\n", case_time, r
                else { print "not stable after " r " reps in " m " s: neither --max-reps nor --case-time reached"; exit 1 }
            } else { print "no stable field"; exit 1 }
        }' <<<"$2"
}

plain=$(run plain) || { fail mpibench-local "$plain"; exit 0; }
if why=$(rule 0 "$plain"); then ok "without --min-time a case obeys the rule: $why"
else fail "without --min-time a case obeys the rule" "$why"; fi

timed=$(run timed --min-time 0.3s) || { fail mpibench-min-time "$timed"; exit 0; }
if why=$(rule 0.3 "$timed"); then ok "with --min-time 0.3s a case is stable only after 0.3 s: $why"
else fail "with --min-time 0.3s a case is stable only after 0.3 s" "$why"; fi

# The case records the host's TCP trouble (mbtcp.h): retransmitted
# segments, retransmission timeouts, tail-loss probes, its slow
# repetitions (fewer than all) and of those the ones after a timeout.
tcp_ok=$(awk -F= '$1 ~ /^tcp\.(retrans|timeouts|loss_probes|slow_reps|slow_timeout_reps)$/ && $2 ~ /^[0-9]+$/ { n++ }
    $1 == "tcp.slow_reps" { s = $2 } $1 == "tcp.slow_timeout_reps" { st = $2 } $1 == "reps" { reps = $2 }
    END { print (n == 5 && s < reps && st <= s) ? "yes" : "no" }' <<<"$timed")
[ "$tcp_ok" = yes ] && ok "each case records its TCP retransmissions and timeouts" ||
    fail "each case records its TCP retransmissions and timeouts" "$timed"

# An all-reduce case records how far apart the ranks left the barrier: a
# median of (latest - earliest start), so present and >= 0.
spread=$(awk -F= '$1 == "start_spread_s" { v = $2 } END { print (v != "" && v + 0 >= 0) ? "yes" : "no" }' <<<"$timed")
[ "$spread" = yes ] && ok "an all-reduce case records its ranks' start spread (>= 0)" ||
    fail "an all-reduce case records its ranks' start spread (>= 0)" "$timed"

# Every measured repetition's time is listed (reps_s): `reps` of them,
# within [min_s, max_s], their median time_s (to the 6 digits written).
reps_ok=$(awk -F= '$1 ~ /^reps_s\[/ { t[n++] = $2 + 0 } $1 == "reps" { r = $2 } $1 == "time_s" { m = $2 }
    $1 == "min_s" { lo = $2 } $1 == "max_s" { hi = $2 }
    END { if (n != r || n == 0) { print "no: " n " times for " r " reps"; exit }
          for (i = 0; i < n; i++) { if (t[i] < lo * (1 - 1e-5) || t[i] > hi * (1 + 1e-5)) { print "no: " t[i] " outside"; exit }
                                    for (j = i + 1; j < n; j++) if (t[j] < t[i]) { x = t[i]; t[i] = t[j]; t[j] = x } }
          med = n % 2 ? t[int(n / 2)] : (t[n / 2 - 1] + t[n / 2]) / 2
          d = med - m; if (d < 0) d = -d
          print d <= 1e-5 * m ? "yes" : "no: median " med " vs time_s " m }' <<<"$timed")
[ "$reps_ok" = yes ] && ok "a case lists every repetition's time, its median time_s" ||
    fail "a case lists every repetition's time, its median time_s" "$reps_ok"

# --mpi-call iallreduce: the library's own all-reduce (algo mpi) as
# MPI_Iallreduce, waited for under --poll like the schedules, says so in
# its case ("call") and is checked like every case; without the flag the
# case says MPI_Allreduce; schedules carry no "call".
calls() { flat "$T/$1.json" | awk -F'\t' '$1 ~ /^\.cases\[[0-9]+\]\.(algo|call|verified)$/ { printf "%s ", $2 }'; }
if nb=$(run nb --algo mpi --mpi-call iallreduce --poll 20us) && blk=$(run blk --algo mpi); then
    got="$(calls nb)| $(calls blk)"
    want="mpi MPI_Iallreduce true ring true | mpi MPI_Allreduce true ring true "
    [ "$got" = "$want" ] && ok "--mpi-call iallreduce measures MPI_Iallreduce and says so" ||
        fail "--mpi-call iallreduce measures MPI_Iallreduce and says so" "got '$got', want '$want'"
else
    fail "--mpi-call iallreduce measures MPI_Iallreduce and says so" "$nb $blk"
fi

# --help anywhere prints the usage, the exchange mode's --delays in it.
help=$("$MPIBENCH" exchange --delays 1ms --help 2>&1); rc=$?
[ $rc = 0 ] && grep -q -- "--delays LIST" <<<"$help" && ok "mpibench MODE ... --help prints the usage" ||
    fail "mpibench MODE ... --help prints the usage" "rc $rc: $help"

# exchange --late both: each rank renamed as a host of its own (a UTS
# namespace per rank: root, or user namespaces), so the inter exchange
# runs on one machine; every late case is measured twice, the pair's
# higher rank late ("peers": [0, 1], early first) and then its lower
# ([1, 0]), the simultaneous case (delay 0) once. Without namespaces the
# check says it is skipped.
cat >"$T/as-host.sh" <<'SH'
#!/bin/sh
hostname "h${OMPI_COMM_WORLD_RANK:-$PMI_RANK}" && exec "$@"
SH
chmod +x "$T/as-host.sh"
if unshare -u true 2>/dev/null; then
    timeout 600 mpirun $MPIFLAGS -np 2 unshare -u "$T/as-host.sh" "$MPIBENCH" exchange --late both --delays 0,1ms \
        --sizes 1KiB,4KiB --warmup 0 --min-reps 3 --max-reps 3 --min-time 0 --case-time 10s --tol 0.5 --quiet \
        --out "$T/late.json" >"$T/late.log" 2>&1
    rc=$?
    order=$(flat "$T/late.json" | awk -F'\t' '$1 ~ /^\.cases\[[0-9]+\]\.(bytes|delay_s|peers\[[01]\])$/ { printf "%s ", $2 }')
    want="1024 0 1 0 4096 0 1 0 1024 0 1 0.001 1024 1 0 0.001 4096 0 1 0.001 4096 1 0 0.001 "
    [ $rc = 0 ] && [ "$order" = "$want" ] && ok "exchange --late both: each late case both ways" ||
        fail "exchange --late both: each late case both ways" "rc $rc; got '$order', want '$want'; $(tail -2 "$T/late.log")"
else
    echo "skipped exchange --late both: no UTS namespace here (unshare -u needs root or user namespaces)"
fi
