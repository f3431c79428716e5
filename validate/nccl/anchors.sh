#!/bin/bash
# validate/nccl/anchors.sh — arsim's NCCL model against published
# nccl-tests all_reduce_perf bus bandwidths (docs/explanation/nccl.md,
# sources in docs/dev/references-nccl.md). Prints the markdown table the
# docs hold: each anchor, arsim's busbw at the anchor's size (8 GiB: the
# published figures are plateaus) and at 64 MiB, and the error at 8 GiB.
# Usage: validate/nccl/anchors.sh [ARSIM]   (default ./build/arsim)
set -eu
A=${1:-./build/arsim}

# busbw ARGS...: the simulated busbw (GB/s) of the last row
busbw() { "$A" collective --algo nccl "$@" | tail -1 | awk '{ print $10 }'; }

row() {   # row LABEL SOURCE PUBLISHED ARGS...
    local label=$1 src=$2 pub=$3
    shift 3
    local big mid
    big=$(busbw "$@" --size 8GiB)
    mid=$(busbw "$@" --size 64MiB)
    awk -v l="$label" -v s="$src" -v p="$pub" -v b="$big" -v m="$mid" 'BEGIN {
        printf "| %s | %s | %s | %.1f | %.1f | %+.1f %% |\n", l, s, p, b, m, (b - p) / p * 100 }'
}

echo "| case | source | published busbw (GB/s) | arsim at 8 GiB | arsim at 64 MiB | error at 8 GiB |"
echo "|---|---|---|---|---|---|"
row "8 x H100, Ring" "A1, A2" 370 --node dgx-h100 --nccl-algo ring
row "8 x H100, NVLS" "A1, A2" 480 --node dgx-h100 --nccl-algo nvls
for n in 2 3 4 5 6 7; do
    row "$n x H100 (one node), Ring" A3 367.5 --node dgx-h100 --ranks "$n" --nccl-algo ring
done
# NVLS enabled (NCCL's default): NCCL itself picks, and runs no NVLS on 2 GPUs (nvls.cc:241)
for n in 2 3 4; do
    row "$n x H100 (one node), NVLS enabled: tuner's choice" A3 370 --node dgx-h100 --ranks "$n"
done
set -- 5 420 6 440 7 460
while [ $# -gt 0 ]; do
    row "$1 x H100 (one node), NVLS enabled: tuner's choice" A3 "$2" --node dgx-h100 --ranks "$1"
    shift 2
done
row "8 x A100 (DGX A100), tuner's choice" A4 231 --node dgx-a100
row "2 x DGX A100 (16 GPUs, 8 x HDR), tuner's choice" A5 192 --node dgx-a100 --nodes 2
row "2 x H100, one NDR NIC each, Ring" A6 47 --node dgx-h100 --nodes 2 --ranks 2 --nccl-algo ring
