#!/bin/bash
# calproto — `arsim calibrate` learns the protocol: on
# tests/data/calib-protocol.json (times from the protocol layer's closed
# forms, made by tests/data/gen_calib_protocol.sh: α 100 us, β 8.4 ns/B,
# γ 0.2 ns/B, eager limit 64 KiB, rtt, o 15 us) it gives back every
# parameter, prints the protocol line, writes it into the calibration, and
# `arsim compare` then predicts every case (the held-out butterfly,
# Rabenseifner and tree included) with ~0 error; --protocol takes the
# protocol from another calibration and fits under it; --no-protocol leaves the
# protocol out; a scenario naming the calibration takes it.
# Prints "ok <test>" or "FAIL <test>: why" per test.
set -u
A=${ARSIM:?set ARSIM to the arsim binary}
SYN=tests/data/calib-protocol.json
T=$(mktemp -d "${TMPDIR:-/tmp}/arsim-calproto.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
export LC_ALL=C

# shellcheck source=../clilib.bash
. tests/clilib.bash

generator() {
    tests/data/gen_calib_protocol.sh >"$T/gen.json" || { echo "generator failed"; return 1; }
    cmp -s "$T/gen.json" "$SYN" || { echo "tests/data/gen_calib_protocol.sh does not reproduce $SYN"; return 1; }
}

fit() {
    "$A" calibrate "$SYN" --out "$T/cal.yaml" >"$T/table" 2>"$T/err" || { echo "exit $?: $(cat "$T/err")"; return 1; }
    [ ! -s "$T/err" ] || { echo "stderr: $(cat "$T/err")"; return 1; }
    grep -Eq '^inter +100\.000 +8\.40000 ' "$T/table" || { echo "no inter row 100 us, 8.4 ns/B"; return 1; }
    grep -q '^protocol inter: eager_limit 65536 B (a handshake from there on; the largest eager size measured is 61440 B), handshake rtt, ack none (a step of 2 alpha), overhead 15.000 us, progress in_mpi (not fitted: MPI without a progress thread, as mpibench runs it, handles control messages only inside MPI calls)$' \
        "$T/table" || { echo "no protocol line with 65536 B, rtt, 15 us"; return 1; }
    grep -q '^  protocol: {eager_limit: 65536, handshake: rtt, overhead: 1.5e-05s, segment: none, progress: in_mpi}}$' "$T/cal.yaml" ||
        { echo "calibration lacks the protocol: $(grep protocol "$T/cal.yaml")"; return 1; }
}

roundtrip() {
    "$A" compare "$SYN" --calibration "$T/cal.yaml" --json "$T/cmp.json" >"$T/ctable" 2>"$T/err" ||
        { echo "exit $?: $(cat "$T/err")"; return 1; }
    flat "$T/cmp.json" >"$T/cmp.flat" || return 1
    local n bad
    n=$(grep -c '^\.cases\[[0-9]*\]\.rel_error	' "$T/cmp.flat")
    [ "$n" -eq 50 ] || { echo "$n predicted cases, want 50"; return 1; }
    bad=$(awk -F'\t' '$1 ~ /\.rel_error$/ { v = $2 < 0 ? -$2 : $2; if (v > 1e-6) print $1, $2 }' "$T/cmp.flat")
    [ -z "$bad" ] || { echo "errors beyond 1e-6: $bad"; return 1; }
}

# --protocol FILE: the protocol taken from another calibration — its
# eager limit and handshake fix the fit's (α, β and o come back exactly:
# the data has the same 64 KiB rtt step), its queues, request payload and
# duplex are kept, the overhead is the one fitted here; the file says
# where the protocol came from, and compare reads it back.
given() {
    printf '%s\n' 'inter: {alpha_s: 4e-05, beta_s_per_byte: 8.4e-09,' \
        '  protocol: {eager_limit: 65536, handshake: rtt, overhead: 1e-3s, control_queue_from_higher: 131072, rts_payload: eager, duplex: half}}' \
        >"$T/given.yaml"
    "$A" calibrate "$SYN" --protocol "$T/given.yaml" --out "$T/cg.yaml" >"$T/gtable" 2>"$T/err" ||
        { echo "exit $?: $(cat "$T/err")"; return 1; }
    grep -Eq '^inter +100\.000 +8\.40000 ' "$T/gtable" || { echo "no inter row 100 us, 8.4 ns/B: $(grep ^inter "$T/gtable")"; return 1; }
    grep -q "^protocol inter: from $T/given.yaml (not fitted here; " "$T/gtable" || { echo "no 'from' protocol line"; return 1; }
    grep -q '^  protocol: {eager_limit: 65536, handshake: rtt, overhead: 1.5e-05s, segment: none, control_queue_from_lower: inf, control_queue_from_higher: 131072, duplex: half, rts_payload: eager}}$' "$T/cg.yaml" ||
        { echo "calibration's protocol: $(grep protocol: "$T/cg.yaml")"; return 1; }
    grep -q "^  inter_protocol_from: \"$T/given.yaml\"$" "$T/cg.yaml" || { echo "no inter_protocol_from"; return 1; }
    ! grep -q '^exchange cases\|^control_queue' "$T/gtable" || { echo "the exchange fit ran"; return 1; }
    "$A" compare "$SYN" --calibration "$T/cg.yaml" >/dev/null 2>"$T/err" || { echo "compare: $(cat "$T/err")"; return 1; }
    # rtt with every message eager is no handshake: o is not fitted apart from α (0, as without one)
    printf '%s\n' 'inter: {alpha_s: 4e-05, beta_s_per_byte: 8.4e-09, protocol: {eager_limit: inf, handshake: rtt, overhead: 1e-3s}}' \
        >"$T/given-inf.yaml"
    "$A" calibrate "$SYN" --protocol "$T/given-inf.yaml" --out "$T/cgi.yaml" >/dev/null 2>"$T/err" ||
        { echo "exit $?: $(cat "$T/err")"; return 1; }
    grep -q '^  protocol: {eager_limit: inf, handshake: rtt, overhead: 0s, segment: none}}$' "$T/cgi.yaml" ||
        { echo "eager_limit inf given: $(grep protocol: "$T/cgi.yaml")"; return 1; }
}

no_protocol() {
    "$A" calibrate "$SYN" --no-protocol --out "$T/np.yaml" >"$T/nptable" 2>"$T/err" || { cat "$T/err"; return 1; }
    ! grep -q "protocol: {" "$T/np.yaml" || { echo "--no-protocol wrote a protocol"; return 1; }
    grep -q '^calibration of .* fit pingpong,ring (no protocol)$' "$T/nptable" || { echo "no '(no protocol)' in the title"; return 1; }
    "$A" compare "$SYN" --calibration "$T/np.yaml" --json "$T/np.json" >/dev/null 2>"$T/err" || { cat "$T/err"; return 1; }
    local worst
    worst=$(flat "$T/np.json" | awk -F'\t' '$1 ~ /\.rel_error$/ { v = $2 < 0 ? -$2 : $2; if (v > m) m = v } END { print m + 0 }')
    awk -v w="$worst" 'BEGIN { exit !(w > 0.05) }' || { echo "without the protocol the worst error is only $worst"; return 1; }
}

scenario() {
    "$A" run tests/bad/support/ok.yaml --set "cluster.calibration=$T/cal.yaml" --json "$T/with.json" >/dev/null 2>"$T/err" ||
        { echo "exit $?: $(cat "$T/err")"; return 1; }
    "$A" run tests/bad/support/ok.yaml --set "cluster.calibration=$T/np.yaml" --json "$T/without.json" >/dev/null 2>"$T/err" ||
        { echo "exit $?: $(cat "$T/err")"; return 1; }
    local a b
    a=$(flat "$T/with.json" | awk -F'\t' '$1 == ".results[0].comm_s" { print $2 }')
    b=$(flat "$T/without.json" | awk -F'\t' '$1 == ".results[0].comm_s" { print $2 }')
    [ -n "$a" ] && [ -n "$b" ] && ! near "$a" "$b" 1e-9 || { echo "the protocol did not change comm_s ($a vs $b)"; return 1; }
}

# The 8-host measurements of a `make validate` run (Open MPI's defaults,
# 200 Mbit/s shapers; tests/data/calib-shaper-8hosts.json): without the
# bucket's peak rate and fitted free, the mid-size ping-pongs pulled the
# goodput to 33.7 MB/s; held at the large messages' slope it is the
# wire's (a 32 MiB ping-pong there: 1.4056 s, 23.87 MB/s). With the peak
# (their ~18 ns/B up to ~180 KB) β stays at the wire's even when free. By
# default β is the largest rings' slope (16 and 64 MiB; 0.2 % above the
# large messages').
slide() {
    local D=tests/data/calib-shaper-8hosts.json g
    "$A" calibrate "$D" --free-beta --no-peak >"$T/free" 2>"$T/err" || { echo "exit $?: $(cat "$T/err")"; return 1; }
    g=$(awk '$1 == "inter" && NF == 9 { print $4; exit }' "$T/free")
    awk -v g="$g" 'BEGIN { exit !(g > 30) }' || { echo "--free-beta --no-peak goodput $g MB/s; the measured slide is to 33.7"; return 1; }
    grep -q "^peak inter: none (--no-peak)" "$T/free" || { echo "no '--no-peak' line"; return 1; }
    "$A" calibrate "$D" --no-peak --no-ring-beta >"$T/held" 2>"$T/err" || { echo "exit $?: $(cat "$T/err")"; return 1; }
    g=$(awk '$1 == "inter" && NF == 9 { print $4; exit }' "$T/held")
    awk -v g="$g" 'BEGIN { exit !(g > 23.6 && g < 24.1) }' || { echo "goodput $g MB/s; expected the wire's 23.6-24.1"; return 1; }
    grep -q "^beta inter: held at the large messages' slope" "$T/held" || { echo "no 'held' line"; return 1; }
    # by default the 16 and 64 MiB rings set β: (4971.2201 - 1239.1379) ms over
    # (7/4)·48 MiB, the reduction (7/8 of n·γ, γ from the file's reduce cases) off
    "$A" calibrate "$D" --no-peak >"$T/ring" 2>"$T/err" || { echo "exit $?: $(cat "$T/err")"; return 1; }
    local gam b
    gam=$(awk '$1 == "gamma" && $3 == "ns/B" { print $2; exit }' "$T/ring")
    b=$(awk '$1 == "beta" && $2 == "inter:" { print $9; exit }' "$T/ring")
    awk -v b="$b" -v g="$gam" 'BEGIN { want = ((4971.2201 - 1239.1379) * 1e6 / (48 * 1048576) - 7 / 8 * g) * 4 / 7;
        exit !(b > want * 0.9999 && b < want * 1.0001) }' ||
        { echo "ring beta $b ns/B (gamma $gam); expected the 16-64 MiB rings' slope"; return 1; }
    grep -q "^beta inter: held at the largest rings' slope, $b ns/B" "$T/ring" || { echo "no rings' 'held' line"; return 1; }
    "$A" calibrate "$D" --free-beta >"$T/peak" 2>"$T/err" || { echo "exit $?: $(cat "$T/err")"; return 1; }
    g=$(awk '$1 == "inter" && NF == 9 { print $4; exit }' "$T/peak")
    awk -v g="$g" 'BEGIN { exit !(g > 23.6 && g < 24.4) }' || { echo "with the peak, free: goodput $g MB/s; expected 23.6-24.4"; return 1; }
    grep -q "^peak inter: the burst's credit passes at " "$T/peak" || { echo "no peak found: $(grep '^peak' "$T/peak")"; return 1; }
}

t calproto_generator generator
t calproto_fit fit
t calproto_compare_roundtrip roundtrip
t calproto_given given
t calproto_no_protocol no_protocol
t calproto_scenario scenario
t calproto_slide slide
