#!/bin/bash
# The published overlap anchors (validate/anchors/, docs/explanation/
# gpu-overlap.md): every scenario passes `arsim check`. What anchors.py
# prints is checked by tests/tools/anchors.sh (`make check-tools`: Python).
A=${ARSIM:-./arsim}
# shellcheck source=../clilib.bash
. tests/clilib.bash
T=$(mktemp -d "${TMPDIR:-/tmp}/arsim-anchors.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT

check_scenarios() {
    local f
    for f in validate/anchors/*.yaml; do
        "$A" check "$f" >/dev/null 2>"$T/err" || { echo "$f: $(cat "$T/err")"; return 1; }
    done
}

t "anchors: scenarios check" check_scenarios
