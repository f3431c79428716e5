#!/bin/bash
# protocol — `arsim collective`'s protocol flags against closed forms
# (sim/coll/collcost.c), on a star of 8 ranks, 10 Gbit/s and 5 us per link
# (α = 10 us, β = 0.8 ns/B), 1 MiB ring (14 steps of 128 KiB): the default
# (64 KiB eager limit, no handshake) and --eager-limit inf give the α-β
# form 14(α + 131072β); --handshake rtt adds 2α per step, --ack rtt 2α
# more (--host-queue changes nothing where every rank starts together),
# --overhead 5us 2o per step; --segment 16KiB (K = 8 pieces of 16 KiB, every one eager
# with --eager-limit inf) pipelines the ring: max(14(α + sβ) + 7sβ,
# 14·8·sβ + α); the flags reach a hierarchical topology's intra class too;
# --skew (ranks issuing apart) serializes a rendezvous exchange under rtt.
# Prints "ok <test>" or "FAIL <test>: why" per test.
set -u
A=${ARSIM:?set ARSIM to the arsim binary}
export LC_ALL=C
T=$(mktemp -d "${TMPDIR:-/tmp}/arsim-protocol.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
# shellcheck source=../clilib.bash
. tests/clilib.bash

# us ARGS... — the ring's time in us (the table's time column).
us() { "$A" collective --ranks 8 --bandwidth 10Gbps --latency 5us --algo ring --size 1MiB "$@" | awk 'NR == 2 { print $4 }'; }
# is GOT WANT — equal to the table's three decimals.
is() { awk -v g="$1" -v w="$2" 'BEGIN { exit !(sprintf("%.3f", g) == sprintf("%.3f", w)) }' || { echo "got $1 us, want $2"; return 1; }; }

ring_flags() {
    local s
    s=$(awk 'BEGIN { printf "%.4f", 14 * (10 + 131072 * 0.0008) }')
    is "$(us)" "$s" || return 1
    is "$(us --eager-limit inf)" "$s" || return 1
    is "$(us --handshake rtt)" "$(awk -v s="$s" 'BEGIN { printf "%.4f", s + 14 * 20 }')" || return 1
    is "$(us --overhead 5us)" "$(awk -v s="$s" 'BEGIN { printf "%.4f", s + 14 * 10 }')" || return 1
    is "$(us --handshake rtt --overhead 5us --eager-limit 256KiB)" "$(awk -v s="$s" 'BEGIN { printf "%.4f", s + 14 * 10 }')" || return 1
    is "$(us --handshake rtt --ack rtt)" "$(awk -v s="$s" 'BEGIN { printf "%.4f", s + 14 * 40 }')" || return 1
    is "$(us --ack rtt)" "$(awk -v s="$s" 'BEGIN { printf "%.4f", s + 14 * 20 }')" || return 1
    is "$(us --ack rtt --host-queue inf --handshake rtt)" "$(awk -v s="$s" 'BEGIN { printf "%.4f", s + 14 * 40 }')" || return 1
    is "$(us --segment 16KiB --eager-limit inf)" \
        "$(awk 'BEGIN { sb = 16384 * 0.0008; a = 14 * (10 + sb) + 7 * sb; b = 14 * 8 * sb + 10; printf "%.4f", (a > b ? a : b) }')" || return 1
}

hierarchical() {
    local plain rtt
    plain=$("$A" collective --topology topologies/dgx-8x8.yaml --algo hierarchical --size 64MiB | awk 'NR == 2 { print $4 }')
    rtt=$("$A" collective --topology topologies/dgx-8x8.yaml --algo hierarchical --size 64MiB --handshake rtt --overhead 1us |
          awk 'NR == 2 { print $4 }')
    awk -v a="$plain" -v b="$rtt" 'BEGIN { exit !(b > a) }' || { echo "rtt and overhead did not slow it: $plain -> $rtt us"; return 1; }
}

t protocol_ring_flags ring_flags
t protocol_hierarchical hierarchical

# --skew: 0 prints what no --skew prints, byte for byte; a skewed 2-rank
# exchange of 1 MiB under rtt (10 Gbit/s star) runs its two messages one
# after the other (test_protocol's closed form Δ + T0 + nβ): its fastest
# trial is above T0 + nβ = 1.7077 ms, and under handshake none below it;
# the table says how it was run and adds min and max; the JSON has them.
skew() {
    local a b
    a=$("$A" collective --ranks 2 --algo butterfly --size 1MiB --handshake rtt)
    b=$("$A" collective --ranks 2 --algo butterfly --size 1MiB --handshake rtt --skew 0)
    [ "$a" = "$b" ] || { echo "--skew 0 changed the output"; return 1; }
    "$A" collective --ranks 2 --algo butterfly --size 1MiB --handshake rtt --skew 5ms --trials 20 >"$T/skew" ||
        return 1
    grep -q '^ranks issue up to 5000.000 us apart (uniform draws); time: the median of 20 trials' "$T/skew" ||
        { echo "no skew line: $(head -1 "$T/skew")"; return 1; }
    awk 'NR == 3 && $8 > 1707.7 { ok = 1 } END { exit !ok }' "$T/skew" || { echo "rtt min not serialized: $(sed -n 3p "$T/skew")"; return 1; }
    "$A" collective --ranks 2 --algo butterfly --size 1MiB --handshake none --skew 5ms --trials 20 --json - >"$T/skew.json" ||
        return 1
    flat "$T/skew.json" | awk -F'\t' '$1 == "[0].time_min_s" && $2 < 0.0017077 { ok = 1 } END { exit !ok }' ||
        { echo "none min: $(grep time_min "$T/skew.json")"; return 1; }
    grep -q '"trials":	20' "$T/skew.json" || { echo "no trials in JSON"; return 1; }
}
t protocol_skew skew

# --control-queue LOWER,HIGHER: each end of the pair its own queue. 0,0 is
# 0 and inf,inf is inf, byte for byte; with 0,inf the trials in which the
# higher rank is early serialize and the others do not, so its median lies
# strictly between 0's and inf's (the same 20 draws in each run).
ends() {
    local q
    cq() { "$A" collective --ranks 2 --algo butterfly --size 1MiB --handshake rtt --skew 5ms --trials 20 --control-queue "$1"; }
    [ "$(cq 0,0)" = "$(cq 0)" ] || { echo "0,0 is not 0"; return 1; }
    [ "$(cq inf,inf)" = "$(cq inf)" ] || { echo "inf,inf is not inf"; return 1; }
    q=$(for v in 0 0,inf inf; do cq $v | awk 'NR == 3 { print $4 }'; done | tr '\n' ' ')
    echo "$q" | awk '{ exit !($1 < $2 && $2 < $3) }' || { echo "medians 0, 0,inf, inf: $q"; return 1; }
}
t protocol_control_queue_ends ends

# --rts-payload eager: uncontended the same time, byte for byte in the
# table's time; skewed with the higher end's queue inf, a shorter median
# than an empty request (the early rank's answer waits behind E' less of
# its data: test_protocol's closed form).
rts() {
    local a b
    r() { "$A" collective --ranks 2 --algo butterfly --size 1MiB --handshake rtt "$@" | awk 'NR == 2 || NR == 3 { print $4 }' | tail -1; }
    a=$(r --rts-payload none); b=$(r --rts-payload eager)
    [ "$a" = "$b" ] || { echo "uncontended: $a vs $b us"; return 1; }
    a=$(r --skew 5ms --trials 20 --control-queue 0,inf --rts-payload none)
    b=$(r --skew 5ms --trials 20 --control-queue 0,inf --rts-payload eager)
    awk -v a="$a" -v b="$b" 'BEGIN { exit !(b < a) }' || { echo "skewed: eager $b us not below none $a us"; return 1; }
}
t protocol_rts_payload rts

# --progress in_mpi: starting together the same time, byte for byte;
# with ranks leaving a barrier apart, a 64 MiB butterfly whose second
# step follows an 11 ms reduction crosses there instead of taking turns
# (duplex half): a shorter median, by about one step's data (0.54 s).
progress() {
    local a b
    r() { "$A" collective --ranks 4 --algo butterfly --size 64MiB --bandwidth 1Gbps --latency 8us --gamma 1.7e-10 \
        --eager-limit 32KiB --handshake rtt --duplex half "$@" | awk '$1 == 67108864 { print $4 }'; }
    a=$(r --progress always); b=$(r --progress in_mpi)
    [ -n "$a" ] && [ "$a" = "$b" ] || { echo "together: $a vs $b us"; return 1; }
    a=$(r --skew 200us --trials 9 --progress always); b=$(r --skew 200us --trials 9 --progress in_mpi)
    awk -v a="$a" -v b="$b" 'BEGIN { d = a - b; exit !(d > 5.0e5 && d < 5.8e5) }' ||
        { echo "skewed: in_mpi $b us, always $a us; want about 0.54 s less"; return 1; }
}
t protocol_progress progress
