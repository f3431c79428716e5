#!/bin/bash
# onegpu — Llama 3 8B at a reduced depth on one GPU (validate/fsdp/llama-1gpu*.yaml,
# docs/explanation/sharding.md "Against one GPU's measured memory"), from the
# repository root: the table script's per-block
# slopes (validate/fsdp/llama_table.py), `make check-tools` (Python; skipped
# with a line without python3). Prints "ok <test>" or "FAIL <test>: why"
# per test.
set -u
A=${ARSIM:?set ARSIM to the arsim binary}
D=validate/fsdp
T=$(mktemp -d "${TMPDIR:-/tmp}/arsim-onegpu.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
export LC_ALL=C
# shellcheck source=../clilib.bash
. tests/clilib.bash

# arsim's per-block slope under op-level SAC and full checkpointing is the measured one to the GiB's
# thousandth (12 bytes a parameter and the saved activations of a block)
table_slopes() {
    python3 "$D/llama_table.py" --arsim "$A" >"$T/table" || return 1
    grep -Eq '^selective +3\.408 +[0-9.]+ +3\.408 ' "$T/table" || { grep '^selective' "$T/table"; return 1; }
    grep -Eq '^full +2\.563 +[0-9.]+ +2\.563 ' "$T/table" || { grep '^full' "$T/table"; return 1; }
    local sum icpt
    sum=$(awk '/^sum / { print $(NF - 1), $NF }' "$T/table") icpt=$(awk '/^intercept \(selective\)/ { print $(NF - 1), $NF }' "$T/table")
    [ -n "$sum" ] && [ "$sum" = "$icpt" ] || { echo "terms sum to $sum, intercept $icpt"; return 1; }
    python3 "$D/llama_table.py" --arsim "$A" | cmp -s - "$T/table" || { echo "not deterministic"; return 1; }
}

if python3_or_skip onegpu-table-slopes "the table script"; then
    t onegpu-table-slopes table_slopes
fi
