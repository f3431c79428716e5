#!/bin/bash
# hsdp — hybrid_shard on GPU nodes through NCCL, through two doors of the
# same simulator: `arsim run`'s units against `arsim collective`. An
# all-gather unit takes what `collective --node dgx-h100 --nodes 1 --algo
# nccl --op allgather` takes for its bytes (the node's GPUs alone); a
# reduce-scatter unit that plus an all-reduce of each GPU's eighth over
# the 2 nodes, one GPU a node (`--nodes 2 --ranks 2`); and the table's
# reason names both calls (docs/explanation/sharding.md, "hybrid_shard
# through NCCL"). comm.slowdown 0: no compute interference stretches a
# unit, so it runs exactly its calls' time.
A=${ARSIM:-./arsim}
source tests/clilib.bash
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT

cat >"$T/h.yaml" <<'YAML'
model: resnet50
precision: fp16
batch: [64]
comm: {slowdown: 0}
cluster: {node: dgx-h100, nodes: 2}
iterations: {warmup: 1, measured: 1}
policies:
  - {name: hsdp, overlap: fsdp, sharding: hybrid_shard}
YAML
"$A" run "$T/h.yaml" --layers --json "$T/h.json" >"$T/h.txt" && flat "$T/h.json" >"$T/h.flat" || exit 1

# unit NAME FIELD — FIELD of the unit named NAME
unit() {
    local i
    i=$(awk -F'\t' -v n="$1" '$1 ~ /\.layers\[[0-9]+\]\.name$/ && $2 == n { sub(/\.name$/, "", $1); print $1; exit }' \
        "$T/h.flat")
    awk -F'\t' -v k="$i.$2" '$1 == k { print $2 }' "$T/h.flat"
}
# coll ARGS... — time_s of one collective --json row
coll() { "$A" collective --algo nccl --node dgx-h100 "$@" --json - | flat /dev/stdin | awk -F'\t' '$1 == "[0].time_s" { print $2 }'; }

same_time() {   # same_time UNIT WANT_S
    local got
    got=$(awk -v a="$(unit "$1" end_s)" -v b="$(unit "$1" start_s)" 'BEGIN { printf "%.12g", a - b }')
    near "$got" "$2" 1e-6 || { echo "$1 ran $got s, collective $2 s"; return 1; }
}
ag_is_node_call() {
    local b
    b=$(unit "layer4.0 ag" bytes)
    [ -n "$b" ] || { echo "no unit 'layer4.0 ag'"; return 1; }
    same_time "layer4.0 ag" "$(coll --nodes 1 --op allgather --size "$b")"
}
rs_is_node_then_rail() {
    local b in across
    b=$(unit "layer4.0 rs" bytes)
    [ -n "$b" ] || { echo "no unit 'layer4.0 rs'"; return 1; }
    in=$(coll --nodes 1 --op reducescatter --size "$b")
    across=$(coll --nodes 2 --ranks 2 --op allreduce --size $(((b / 2 + 7) / 8 * 2)))
    same_time "layer4.0 rs" "$(awk -v a="$in" -v b="$across" 'BEGIN { printf "%.12g", a + b }')"
}
reason_names_both() {
    grep -q "layer4.0 rs .*nccl Ring/.*across nodes" "$T/h.txt" || { grep "layer4.0 rs" "$T/h.txt"; return 1; }
}
t "all-gather = collective on one node" ag_is_node_call
t "reduce-scatter = one node + one GPU a node" rs_is_node_then_rail
t "reason names both calls" reason_names_both
