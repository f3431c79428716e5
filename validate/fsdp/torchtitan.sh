#!/bin/bash
# torchtitan — the published FSDP check (docs/explanation/torchtitan.md):
# runs configs/llama3-8b-fsdp-h100-{8,128}.yaml and
# compares tokens/s per GPU (samples/s x 8192 / world) with torchtitan's
# Llama 3.1 8B on H100 (benchmarks/llama3_h100_202412_torchtitan.md: 5,762
# on 8 GPUs, 5,605 on 128). Passes when the 128/8 ratio (published 0.973)
# is within 2 points and each absolute within 15 %; prints both either way.
# Usage: validate/fsdp/torchtitan.sh [ARSIM] (from the repository root).
set -u
A=${1:-./arsim}
. "$(dirname "$0")/titanlib.sh"
t8=$(tok configs/llama3-8b-fsdp-h100-8.yaml) || exit 2
t128=$(tok configs/llama3-8b-fsdp-h100-128.yaml) || exit 2
awk -v a="$t8" -v b="$t128" 'BEGIN {
    p8 = 5762; p128 = 5605; r = b / a; pr = p128 / p8
    e8 = a / p8 - 1; e128 = b / p128 - 1
    printf "8 GPUs:   arsim %.0f tokens/s/GPU, torchtitan %d (%+.1f %%)\n", a, p8, 100 * e8
    printf "128 GPUs: arsim %.0f tokens/s/GPU, torchtitan %d (%+.1f %%)\n", b, p128, 100 * e128
    printf "ratio 128/8: arsim %.3f, torchtitan %.3f (%+.1f points)\n", r, pr, 100 * (r - pr)
    ok = (r - pr < 0.02 && pr - r < 0.02) && (e8 < 0.15 && -e8 < 0.15) && (e128 < 0.15 && -e128 < 0.15)
    print ok ? "check: within the tolerances" : "check: OUTSIDE the tolerances (ratio 2 points, absolute 15 %)"
    exit !ok }'
