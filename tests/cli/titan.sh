#!/bin/bash
# titan — the torchtitan scenario (docs/explanation/torchtitan.md), from the
# repository root: the block's parameter count against the measured block's,
# the scenario running on the h100gt, and reduce_precision's comm_bytes
# against their closed forms. The generator's terms and output
# (models/gen/gen_llama3_titan.py, Python) are tests/tools/titan.sh's.
# Prints "ok <test>" or "FAIL <test>: why" per test.
set -u
A=${ARSIM:?set ARSIM to the arsim binary}
T=$(mktemp -d "${TMPDIR:-/tmp}/arsim-titan.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
export LC_ALL=C
# shellcheck source=../clilib.bash
. tests/clilib.bash

# llama3-8b (torchtitan's 8B): dim 4096, K/V projections 1024 wide (8 KV heads), FFN 14336
d=4096 dkv=1024 f=14336

# the copy-out's bytes are 4 a parameter: the block's parameters as the measured block counted them
block_params() {
    grep -q '"model": "llama3-8b", "params": 218112000, "part": "block"' validate/h100/overlap/run1/llama.jsonl ||
        { echo "measured block's params differ"; return 1; }
    [ $((2 * d * d + 2 * d * dkv + 3 * d * f + 2 * d)) -eq 218112000 ] || { echo "closed form"; return 1; }
}

# the scenario runs on torchtitan's GPU, with SAC in the model (no checkpoint key) and 8 x 89 GiB
scenario() {
    "$A" run configs/llama3-8b-fsdp-h100-8.yaml >"$T/table" 2>"$T/err" || { cat "$T/err"; return 1; }
    grep -q '^# llama3-8b-fsdp-h100-8: llama3-8b-titan on 1 x 8 h100gt ' "$T/table" || { head -1 "$T/table"; return 1; }
    ! grep -q '!' "$T/table" || { echo "marked as not fitting"; return 1; }
}

# reduce_precision: the reducing units carry their bytes on the wire. llama3-8b (Ψ = 8,030,261,248,
# every unit divisible by 8) on 8 GPUs in bf16: full_shard 7/8 (3Ψ - root) x 2 bytes, plus 7/8 Ψ x 2 with
# the reduce-scatters in fp32 (Ring, as NCCL's tuner picks there); no_shard (DDP) runs NCCL's NVLS
# all-reduce, which sends S to the switch and S/8 back up (docs/explanation/nccl.md, "Bytes a rank
# sends"): 9/8 Ψ x 2, twice that in fp32; bf16 changes nothing. On 16 channels (NVLS's count) every
# unit's shard divides evenly among the channels; on the tuner's 24 for Ring the root's (262,669,312 B)
# does not, and the simulated ring rounds each channel's share of its last loop up (448 B more)
comm() {
    "$A" run configs/llama3-8b-fsdp-h100-8.yaml --set "policies=[{name: z, overlap: fsdp, $1, nccl: {channels: 16}}]" \
        --csv - |
        awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } { print $c["comm_bytes"] }'
}
reduce_precision() {
    local psi=8030261248 root=1050677248 got   # root: tok_embeddings, norm, output
    local fs=$((7 * (3 * psi - root) * 2 / 8)) rs=$((7 * psi * 2 / 8)) nv=$((9 * psi * 2 / 8))
    for case in "sharding: full_shard:$fs" "sharding: full_shard, reduce_precision: bf16:$fs" \
                "sharding: full_shard, reduce_precision: fp32:$((fs + rs))" "sharding: no_shard:$nv" \
                "sharding: no_shard, reduce_precision: fp32:$((2 * nv))"; do
        got=$(comm "${case%:*}") || return 1
        [ "$got" = "${case##*:}" ] || { echo "${case%:*}: comm_bytes $got, expected ${case##*:}"; return 1; }
    done
}

t titan-block-params block_params
t titan-scenario scenario
t titan-reduce-precision reduce_precision
