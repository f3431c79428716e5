#!/bin/bash
# nccl — arsim collective on GPU nodes with --algo nccl: the published
# plateaus it was checked against stay within 10 % (docs/explanation/nccl.md),
# the JSON row carries NCCL's choice, forced choices are NCCL's spellings in
# any case, nccl-tests' busbw factor per collective, the same output twice,
# a scenario's node cluster as arsim check describes it, and the cluster's
# line in words (one leaf, no NVLink rate on a PCIe node), and the progress
# line of a long collective; the point-to-point algorithms on --node's cluster;
# run's header on a node cluster; every size's refusal before any size runs.
A=${ARSIM:-./arsim}
source tests/clilib.bash
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT

# busbw ARGS... — the simulated busbw (GB/s) of the last table row
busbw() { "$A" collective --algo nccl "$@" | tail -1 | awk '{ print $10 }'; }
anchor() {   # anchor PUBLISHED ARGS...
    local pub=$1 got
    shift
    got=$(busbw "$@" --size 8GiB) || return 1
    near "$got" "$pub" 0.10 || { echo "busbw $got, published $pub"; return 1; }
}
t "8xH100 ring 370" anchor 370 --node dgx-h100 --nccl-algo ring
t "8xH100 NVLS 480" anchor 480 --node dgx-h100 --nccl-algo nvls
t "5xH100 NVLS 420" anchor 420 --node dgx-h100 --ranks 5 --nccl-algo nvls
t "8xA100 231" anchor 231 --node dgx-a100
t "2xDGX A100 192" anchor 192 --node dgx-a100 --nodes 2
t "NDR NIC 47" anchor 47 --node dgx-h100 --nodes 2 --ranks 2 --nccl-algo ring

json_row() {
    "$A" collective --node dgx-h100 --algo nccl --nccl-algo RING --nccl-proto simple --nccl-channels 4 \
        --size 64MiB --json - >"$T/a.json" || return 1
    flat "$T/a.json" >"$T/a.flat" || return 1
    for kv in "nccl_algo	Ring" "nccl_proto	Simple" "channels	4" "op	allreduce" "ranks	8"; do
        grep -qx "\[0\]\.$kv" "$T/a.flat" || { echo "no $kv"; return 1; }
    done
    grep -q '^\[0\]\.tuner_time_s	' "$T/a.flat" || { echo "no tuner_time_s"; return 1; }
}
t "JSON row carries the choice" json_row

same_twice() {
    "$A" collective --node dgx-a100 --nodes 2 --algo nccl --size 1MiB,64MiB --json - >"$T/1.json" &&
        "$A" collective --node dgx-a100 --nodes 2 --algo nccl --size 1MiB,64MiB --json - >"$T/2.json" &&
        cmp -s "$T/1.json" "$T/2.json"
}
t "same output twice" same_twice

factor() {   # allgather: busbw = algbw x 7/8 on 8 GPUs
    "$A" collective --node dgx-h100 --algo nccl --op allgather --size 64MiB --json - >"$T/g.json" || return 1
    flat "$T/g.json" >"$T/g.flat"
    local a b
    a=$(awk -F'\t' '$1 == "[0].algbw_Bps" { print $2 }' "$T/g.flat")
    b=$(awk -F'\t' '$1 == "[0].busbw_Bps" { print $2 }' "$T/g.flat")
    near "$b" "$(awk -v a="$a" 'BEGIN { printf "%.17g", a * 7 / 8 }')" 1e-12 || { echo "algbw $a busbw $b"; return 1; }
}
t "allgather busbw factor" factor

names() { [ "$("$A" list nodes --names | tr '\n' ' ')" = "dgx-1 dgx-a100 dgx-h100 dgx-h200 grand-teton pcie-a100 " ]; }
t "list nodes" names

check_cluster() {
    printf 'model: gpt2\nprecision: fp16\nbatch: [8]\ncluster: {node: dgx-h100, nodes: 64}\npolicies: [{name: p, overlap: ddp, algorithm: ring}]\n' >"$T/s.yaml"
    "$A" check "$T/s.yaml" | grep -q "cluster: 64 x dgx-h100 .*8 rails x 2 leaves of radix 64, 32 spines, oversubscription 1"
}
t "check describes the cluster" check_cluster

# One of each: no "1 leaves" or "1 NICs", and no NVLink rate on a node without NVLink.
describe_one() {
    local l
    l=$("$A" collective --node pcie-a100 --algo nccl --size 1MiB | head -1) || return 1
    [ "$l" = "# 1 x pcie-a100 (8 a100 on PCIe only; 4 NICs of 200 Gb/s): rail-optimized fat-tree, 4 rails x 1 leaf of radix 64, 0 spines, oversubscription 1" ] ||
        { echo "got: $l"; return 1; }
    l=$("$A" collective --node dgx-h100 --nodes 2 --leaf-radix 2 --algo nccl --size 1MiB | head -1) || return 1
    [[ $l == *"8 rails x 2 leaves of radix 2, 1 spine, oversubscription 1" ]] || { echo "got: $l"; return 1; }
}
t "the cluster's line: singular and plural, PCIe without NVLink" describe_one

# collective's progress line (a size of many GiB runs for minutes): forced
# (ARSIM_PROGRESS=1) one line per size as it starts, for NCCL and for a
# point-to-point algorithm; nothing on a stderr that is not a terminal; the
# results the same either way.
coll_progress() {
    local c
    for c in "--node dgx-h100 --algo nccl" "--algo ring"; do
        # shellcheck disable=SC2086 # c is two words on purpose
        "$A" collective $c --size 1KB,1MiB >"$T/c.out" 2>"$T/c.err" || return 1
        [ ! -s "$T/c.err" ] || { echo "$c: stderr not empty"; return 1; }
        # shellcheck disable=SC2086
        ARSIM_PROGRESS=1 "$A" collective $c --size 1KB,1MiB >"$T/c.out1" 2>"$T/c.err1" || return 1
        cmp -s "$T/c.out" "$T/c.out1" || { echo "$c: stdout differs with progress"; return 1; }
        printf 'arsim collective: %s runs done, now size %s B\n' 0/2 1000 1/2 1048576 >"$T/c.want"
        sed 's/; [0-9]* s$//' "$T/c.err1" | cmp -s - "$T/c.want" || { echo "$c: lines: $(cat "$T/c.err1")"; return 1; }
    done
}
t "collective: progress on stderr only when asked or a terminal" coll_progress

# --node without --algo nccl: hierarchical takes the node's GPUs as a node
# (as a scenario's units do): the same time as --gpus-per-node 8 given,
# not the flat ring's (one GPU a node, what it fell back to).
hier_node() {
    local c=("$A" collective --node dgx-h100 --nodes 2 --size 1MiB --json -) a b r
    a=$("${c[@]}" --algo hierarchical | awk -F'[\t,]+' '/"time_s"/ { print $3 }') || return 1
    b=$("${c[@]}" --algo hierarchical --gpus-per-node 8 | awk -F'[\t,]+' '/"time_s"/ { print $3 }') || return 1
    r=$("${c[@]}" --algo ring | awk -F'[\t,]+' '/"time_s"/ { print $3 }') || return 1
    [ -n "$a" ] && [ "$a" = "$b" ] && [ "$a" != "$r" ] || { echo "default $a, 8 a node $b, ring $r"; return 1; }
}
t "collective --node --algo hierarchical: the node's GPUs a node" hier_node

# run's table on a node cluster names the node and its rails, not the graph
# built of them and a NIC's data rate ("graph 381.6 Gb/s").
run_header() {
    printf 'model: resnet50\nprecision: fp16\nbatch: [8]\niterations: {warmup: 0, measured: 1}\ncluster: {node: dgx-a100, nodes: 2}\npolicies: [{name: p, overlap: ddp}]\n' >"$T/h.yaml"
    local l
    l=$("$A" run "$T/h.yaml" | head -1) || return 1
    [ "$l" = "# resnet50: resnet50 on 2 x 8 a100 (dgx-a100 nodes, 8 x 200 Gb/s rails), fp16; baseline p" ] ||
        { echo "got: $l"; return 1; }
}
t "run's header on a node cluster: the node and its rails" run_header

# every size's refusal comes before any size runs: a size above --max-memory
# after one that fits is refused with nothing simulated (the forced progress
# line, one a size that starts, stays empty).
refuse_first() {
    ARSIM_PROGRESS=1 "$A" collective --node dgx-h100 --nodes 64 --algo nccl --size 1KB,1GiB --max-memory 12MB \
        >"$T/r.out" 2>"$T/r.err"
    local rc=$?
    [ $rc = 2 ] && [ ! -s "$T/r.out" ] && [ "$(wc -l <"$T/r.err")" = 1 ] && grep -q '^--max-memory: ' "$T/r.err" ||
        { echo "rc $rc: $(cat "$T/r.err")"; return 1; }
}
t "collective --algo nccl: refusals before the first size runs" refuse_first
