#!/bin/bash
# onegpu — Llama 3 8B at a reduced depth on one GPU (validate/fsdp/llama-1gpu*.yaml,
# docs/explanation/sharding.md "Against one GPU's measured memory"), from the
# repository root: the model files' exact parameter counts (the measured
# runs' too) and memory_peak_bytes of each checkpoint mode at 2 and 4 blocks
# against its closed form from the model files' act_bytes (the table
# script's slopes, Python: tests/tools/onegpu.sh). Prints "ok <test>" or
# "FAIL <test>: why" per test.
set -u
A=${ARSIM:?set ARSIM to the arsim binary}
D=validate/fsdp
T=$(mktemp -d "${TMPDIR:-/tmp}/arsim-onegpu.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
export LC_ALL=C
# shellcheck source=../clilib.bash
. tests/clilib.bash

# embedding and output 128256 x 4096 each, the final norm 4096; a block 2 d^2 + 2 d dkv + 3 d f + 2 d
ROOT=$((2 * 128256 * 4096 + 4096)) BLOCK=$((2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336 + 2 * 4096))
S=8192 H=4096 V=128256 b=2

params() {
    [ "$BLOCK" -eq 218112000 ] || { echo "block $BLOCK"; return 1; }
    local n f want
    for n in 2 4; do
        want=$((ROOT + n * BLOCK))
        for f in "$D/models/llama3-8b-titan-${n}blocks.yaml" "$D/models/llama3-8b-${n}blocks.yaml"; do
            grep -qx "params: $want" "$f" || { echo "$f: not $want"; return 1; }
            [ "$(grep -c '^  - {name: layers\.' "$f")" -eq $((4 * n)) ] || { echo "$f: blocks"; return 1; }
        done
        grep -q "\"layers\": $n, .*\"params\": $want," validate/h200/fsdp/llama_step.jsonl ||
            { echo "measured params at $n blocks differ from $want"; return 1; }
    done
}

# sum of act_bytes over the layers of FILE whose name matches the awk regex RE
acts() { awk -v re="$2" '$0 ~ "name: " re "," { sub(/.*act_bytes: /, ""); sub(/,.*/, ""); s += $0 } END { printf "%.0f", s }' "$1"; }

peak() {   # SCENARIO MODEL RESULT -> that result's memory_peak_bytes
    "$A" run "$D/$1" --set "model=models/$2.yaml" --json "$T/o.json" >/dev/null 2>"$T/err" || { cat "$T/err"; return 1; }
    flat "$T/o.json" | awk -F'\t' -v p=".results[$3].memory_peak_bytes" '$1 == p { print $2 }'
}

# The peak is at the start of backward (the loss's backward, in the output layer's backward task):
# 12 bytes a parameter (fp32 shards and Adam's two states, no gradient shard yet), the root
# and the last block gathered (bf16; reshard_last_unit: false keeps it from its forward), every activation the mode keeps and the loss head's 12 S V; no gradient yet:
# the output layer's is written after the loss's backward has freed its buffers.
closed_forms() {
    local n psi fixed got want tf bf
    for n in 2 4; do
        psi=$((ROOT + n * BLOCK))
        fixed=$((12 * psi + 2 * ROOT + 2 * BLOCK + b * 12 * S * V))
        tf=$D/models/llama3-8b-titan-${n}blocks.yaml bf=$D/models/llama3-8b-${n}blocks.yaml
        # op-level SAC: what the titan file's layers save
        want=$((fixed + b * $(acts "$tf" '[a-z_.0-9]+')))
        got=$(peak llama-1gpu.yaml "llama3-8b-titan-${n}blocks" 0)
        [ "$got" = "$want" ] || { echo "selective $n: $got, expected $want"; return 1; }
        # none: every layer's; full: each block's first layer's (its input)
        want=$((fixed + b * $(acts "$bf" '[a-z_.0-9]+')))
        got=$(peak llama-1gpu-base.yaml "llama3-8b-${n}blocks" 0)
        [ "$got" = "$want" ] || { echo "none $n: $got, expected $want"; return 1; }
        want=$((fixed + b * $(acts "$bf" '(tok_embeddings|norm|output|layers\.[0-9]+\.attention_norm)')))
        got=$(peak llama-1gpu-base.yaml "llama3-8b-${n}blocks" 1)
        [ "$got" = "$want" ] || { echo "full $n: $got, expected $want"; return 1; }
    done
}

t onegpu-params params
t onegpu-closed-forms closed_forms
