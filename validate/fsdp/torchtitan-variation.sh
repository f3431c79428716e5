#!/bin/bash
# torchtitan-variation — the torchtitan check (validate/fsdp/torchtitan.sh)
# with GPU-to-GPU speed differences that last the whole run: each GPU's
# compute is scaled by its own normal draw of mean 1 and the cv given
# (`variation: {per: gpu}`), the same in every iteration. One seed is one
# cluster's GPUs, so each cv runs SEEDS clusters (seeds 1..SEEDS) and
# prints the mean tokens/s per GPU on 8 and 128 GPUs, the ratio of the
# means and the smallest and largest ratio of one seed's pair (published:
# 5,762 and 5,605 tokens/s, ratio 0.973). A sensitivity, not a check: no
# measured cv exists for torchtitan's GPUs (docs/explanation/torchtitan.md,
# "What is left").
# Usage: validate/fsdp/torchtitan-variation.sh [ARSIM [SEEDS [CV...]]]
# (from the repository root; defaults ./arsim, 20, 0 0.005 0.01 0.015
# 0.02 0.025 0.03).
set -u
A=${1:-./arsim}
N=${2:-20}
shift $(($# < 2 ? $# : 2))
CVS=${*:-0 0.005 0.01 0.015 0.02 0.025 0.03}
. "$(dirname "$0")/titanlib.sh"
printf "%-6s %14s %14s %8s %8s %8s\n" cv "8 GPUs" "128 GPUs" ratio min max
for cv in $CVS; do
    for s in $(seq 1 "$N"); do
        v="variation={dist: normal, cv: $cv, per: gpu, seed: $s}"
        a=$(tok configs/llama3-8b-fsdp-h100-8.yaml --set "$v" --set iterations.measured=8) || exit 2
        b=$(tok configs/llama3-8b-fsdp-h100-128.yaml --set "$v" --set iterations.measured=8) || exit 2
        echo "$a $b"
    done | awk -v cv="$cv" '{ a += $1; b += $2; r = $2 / $1
            if (NR == 1 || r < lo) lo = r; if (NR == 1 || r > hi) hi = r }
        END { printf "%-6s %14.0f %14.0f %8.3f %8.3f %8.3f\n", cv, a / NR, b / NR, b / a, lo, hi }'
done
