#!/bin/bash
# treerel — arsim collective --nccl-release for Tree on one 8 x A100 node
# (24 channels): 2.18's tuner, whose Tree/Simple latency is 2 x 7 hops x
# 4 us = 56 us (392 from 2.19), runs a forced Tree as Simple from 64 MiB
# (NCCL's own time 56 + 67,108,864 B / (110.4 GB/s x .8) = 815.838 us),
# the other releases as LL128 until 256 MiB; 2.18 and 2.19 halve
# Tree/Simple's chunk for the tree's depth (256 MiB: 128 KiB, shorter
# than 2.20's and 2.21's 512 KiB); LL and LL128 the same in every
# release; the A100 curve (C2, NCCL 2.18.5) runs with its release.
A=${ARSIM:-./arsim}
source tests/clilib.bash
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT

# rows ARGS... — size, protocol, time and the tuner's time of forced Tree on one 8 x A100 node.
rows() { "$A" collective --algo nccl --node dgx-a100 --nccl-algo tree "$@" | awk '$1 ~ /^[0-9]+$/ { print $1, $5, $7, $8 }'; }

simple_from_64m() {
    local r got want
    for r in 2.18 2.19 2.20 2.21; do
        got=$(rows --nccl-release "$r" --size 32MiB,64MiB,256MiB | awk '{ print $2 }' | paste -sd' ' -)
        case $r in 2.18) want="LL128 Simple Simple" ;; *) want="LL128 LL128 Simple" ;; esac
        [ "$got" = "$want" ] || { echo "release $r: protocols '$got', want '$want'"; return 1; }
    done
    got=$(rows --nccl-release 2.18 --size 64MiB | awk '{ print $4 }')
    [ "$got" = 815.838 ] || { echo "2.18's tuner at 64 MiB: $got us, want 815.838"; return 1; }
}
t "2.18's tuner runs forced Tree as Simple from 64 MiB, the others from 256 MiB" simple_from_64m

depth_chunk() {
    rows --nccl-release 2.19 --size 256MiB >"$T/a" && rows --nccl-release 2.20 --size 256MiB >"$T/b" &&
        rows --nccl-release 2.21 --size 256MiB >"$T/c" || return 1
    cmp -s "$T/b" "$T/c" || { echo "2.20 and 2.21 differ: $(cat "$T/b" "$T/c")"; return 1; }
    awk 'NR == FNR { t = $3; next } { exit !($3 < t) }' "$T/c" "$T/a" ||
        { echo "2.19's 128 KiB chunks not faster than 512 KiB: $(cat "$T/a" "$T/c")"; return 1; }
}
t "Tree/Simple's chunk halved for the tree's depth in 2.19, not in 2.20" depth_chunk

ll_same() {
    local r
    rows --size 64KiB,1MiB,16MiB >"$T/d" || return 1
    for r in 2.18 2.19 2.20; do
        rows --nccl-release "$r" --size 64KiB,1MiB,16MiB | cmp -s - "$T/d" || { echo "Tree LL/LL128 moved with $r"; return 1; }
    done
}
t "Tree under LL and LL128 is the same in every release" ll_same

published() {
    grep -qx '# arsim: --node dgx-a100 --nccl-algo tree --nccl-release 2.18' validate/nccl/published/azure-nd-a100-v4.txt ||
        { echo "C2 does not run 2.18"; return 1; }
}
t "the published A100 curve runs with its release" published
