#!/bin/bash
# nccllive — live NCCL calls merged by orbit, from the command line: fsdp2
# (every NCCL call live) on 2 x dgx-h100, the same with reshard_after_forward:
# 8 (groups of one node), and torchtitan's 8-GPU config under fsdp2 give the
# same JSON, per-layer rows included, as the same runs with
# ARSIM_NCCL_FULL=1 (every channel simulated), but for the event counts,
# which the merge makes fewer.
A=${ARSIM:-./arsim}
source tests/clilib.bash
export T; T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
CFG=configs/llama3-8b-fsdp-h100-8.yaml

# same NAME ARGS... — the run merged and in full: equal but for events, and fewer events merged
same() {
    local n=$1
    shift
    "$A" run "$@" --layers --json "$T/$n-m.json" >/dev/null || return 1
    ARSIM_NCCL_FULL=1 "$A" run "$@" --layers --json "$T/$n-f.json" >/dev/null || return 1
    grep -q '"nccl_algo"' "$T/$n-m.json" || { echo "no NCCL unit"; return 1; }
    diff <(grep -v '"events"' "$T/$n-m.json") <(grep -v '"events"' "$T/$n-f.json") || return 1
    local em ef
    em=$(grep -m1 '"events"' "$T/$n-m.json" | tr -dc 0-9)
    ef=$(grep -m1 '"events"' "$T/$n-f.json" | tr -dc 0-9)
    [ -n "$em" ] && [ "$em" -lt "$ef" ] || { echo "events merged $em, full $ef"; return 1; }
}
t "fsdp2 on 2 x dgx-h100: merged = full" same d2 "$CFG" --set policies.0.overlap=fsdp2 \
    --set 'cluster={node: dgx-h100, nodes: 2}'
t "fsdp2 reshard_after_forward 8 on 2 x dgx-h100: merged = full" same r8 "$CFG" --set policies.0.overlap=fsdp2 \
    --set policies.0.reshard_after_forward=8 --set policies.0.reshard_last_unit=true --set 'cluster={node: dgx-h100, nodes: 2}'
t "torchtitan 8 GPUs under fsdp2: merged = full" same t8 "$CFG" --set policies.0.overlap=fsdp2
