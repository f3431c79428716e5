#!/bin/bash
# llmval — the scenarios of validate/llm/ (published end-to-end LLM training
# throughput against models/gpus-llm.yaml, docs/explanation/compute-model.md)
# pass `arsim check`. Their table and generator (Python) are checked by
# tests/tools/llmval.sh (`make check-tools`).
A=${ARSIM:-./arsim}
# shellcheck source=../clilib.bash
. tests/clilib.bash
T=$(mktemp -d "${TMPDIR:-/tmp}/arsim-llmval.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT

check_scenarios() {
    local f
    for f in validate/llm/*.yaml; do
        "$A" check "$f" >/dev/null 2>"$T/err" || { echo "$f: $(cat "$T/err")"; return 1; }
    done
}

t "llmval: scenarios check" check_scenarios
