#!/bin/bash
# llmval (`make check-tools`: Python; the scenarios' `arsim check` is
# tests/cli/llmval.sh) — models/gpus-llm.yaml against published end-to-end LLM training
# throughput (validate/llm/, docs/explanation/compute-model.md): the model files are what
# gen_llm_models.py writes; check.sh prints the table (a header and 22
# rows of 7 columns, finite figures); each error column is
# (arsim - published) / published of the printed numbers; arsim's TFLOP/s
# is the source's model-FLOPs count (6 S N + 12 L d S^2 a sequence) over
# the sequences a GPU finishes per second, and its tokens per second the
# node's sequences a second times S, each recomputed here for one row from
# `arsim run --json` and the model file.
A=${ARSIM:-./arsim}
# shellcheck source=../clilib.bash
. tests/clilib.bash
T=$(mktemp -d "${TMPDIR:-/tmp}/arsim-llmval.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT

models_generated() {
    command -v python3 >/dev/null || { echo "no python3"; return 1; }
    python3 validate/llm/gen_llm_models.py --check
}

table() {
    command -v python3 >/dev/null || { echo "no python3"; return 1; }
    bash validate/llm/check.sh "$A" >"$T/rows" 2>"$T/err" || { echo "exit $?: $(cat "$T/err")"; return 1; }
    awk -F' *\\| *' '
        NR == 1 { if ($0 != "| source | setup | published | arsim (gpus-llm) | error | arsim (gpus.yaml) | error |") { print "header: " $0; bad = 1 } next }
        NR == 2 { if ($0 != "|---|---|---:|---:|---:|---:|---:|") { print "separator: " $0; bad = 1 } next }
        {
            n++
            if (NF != 9 || $1 != "" || $9 != "") { print "row " n ": " NF - 2 " columns"; bad = 1; next }
            for (k = 4; k <= 8; k += (k == 4 ? 1 : 2))
                if ($k !~ /^[0-9]+\.[0-9]$/ || $k + 0 <= 0) { print "row " n ": column " k - 1 " is " $k; bad = 1 }
            for (k = 5; k <= 7; k += 2) {
                want = sprintf("%+.1f %%", ($k - $4) / $4 * 100)
                if ($(k + 1) != want) { print "row " n ": error " $(k + 1) ", want " want; bad = 1 }
            }
        }
        END { if (n != 22) { print n " rows, expected 22"; bad = 1 } exit bad }' "$T/rows"
}

# The MPT-7B row on 8 A100 (micro-batch 6): 6 S N + 12 L d S^2 FLOPs a
# sequence, N, L, d and S read from the model file, times samples_per_s /
# world of arsim's own run, against the row's gpus-llm column.
flops_count() {
    local m=validate/llm/models/mpt-7b-2k.yaml sps world f got want
    [ -s "$T/rows" ] || bash validate/llm/check.sh "$A" >"$T/rows" 2>/dev/null || return 1
    read -r sps world < <("$A" run validate/llm/mpt.yaml --set model=models/mpt-7b-2k.yaml --set batch=6 --json - |
        awk -F'[:,]' '/"samples_per_s":/ { gsub(/[ \t]/, "", $2); s = $2 } /"world":/ && !w { gsub(/[ \t]/, "", $2); w = $2 }
            END { print s, w }') || return 1
    f=$(awk '/^params:/ { n = $2 } /name: h\.[0-9]+\.ln_1,/ { l++ } /name: h\.0\.ln_1,/ { match($0, /tensors: \[[0-9]+/); d = substr($0, RSTART + 10, RLENGTH - 10) }
        /name: wpe,/ { match($0, /params: [0-9]+/); p = substr($0, RSTART + 8, RLENGTH - 8) }
        END { s = p / d; printf "%.17g", 6 * s * n + 12 * l * d * s * s }' "$m")
    want=$(awk -v f="$f" -v s="$sps" -v w="$world" 'BEGIN { printf "%.1f", f * s / w / 1e12 }')
    got=$(awk -F' *\\| *' '$3 == "MPT-7B, seq 2k, 8 A100, micro-batch 6" { print $5 }' "$T/rows")
    [ "$world" = 8 ] || { echo "world $world"; return 1; }
    [ -n "$got" ] && [ "$got" = "$want" ] || { echo "the table has $got, the count gives $want"; return 1; }
}

# The GPT3-125M row (the FlashAttention repository's table, batch 32):
# samples_per_s x 2048 / 1000 of arsim's own run.
tokens_count() {
    local sps got want
    [ -s "$T/rows" ] || bash validate/llm/check.sh "$A" >"$T/rows" 2>/dev/null || return 1
    sps=$("$A" run validate/llm/fa2-a100.yaml --set model=models/gpt3-125m-2k-flash.yaml --set batch=32 --json - |
        awk -F'[:,]' '/"samples_per_s":/ { gsub(/[ \t]/, "", $2); print $2 }') || return 1
    want=$(awk -v s="$sps" 'BEGIN { printf "%.1f", s * 2048 / 1e3 }')
    got=$(awk -F' *\\| *' '$3 ~ /^GPT3-125M, seq 2k, 8 A100, batch 32, FlashAttention, thousand tokens/ { print $5 }' "$T/rows")
    [ -n "$got" ] && [ "$got" = "$want" ] || { echo "the table has $got, the run gives $want"; return 1; }
}

if python3_or_skip "llmval: generator and table" validate/llm/; then
    t "llmval: the model files are what gen_llm_models.py writes" models_generated
    t "llmval: check.sh prints 22 rows whose errors are (arsim - published) / published" table
    t "llmval: arsim's TFLOP/s is the sources' model-FLOPs count over arsim's time" flops_count
    t "llmval: arsim's tokens per second are its sequences a second times the sequence" tokens_count
fi
