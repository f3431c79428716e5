#!/bin/bash
# tests/bench/baselines-table.sh — the tables of docs/explanation/thesis-result.md of the default
# scenario's policies against both baselines, at 10 Gbit/s
# (configs/default.yaml) and 1 Gbit/s (configs/default-1gbps.yaml):
#   baselines  iteration times of no-overlap (all-reduce after backward),
#              pytorch-ddp and thesis (layer + hybrid), and thesis's
#              change against each (negative: faster)
#   ablation   the thesis's two ideas apart: overlap-only (layer + ring),
#              algorithm-only (none + hybrid), thesis, priority with ring
#              and with auto: iteration, exposed communication and the
#              speed-up over pytorch-ddp and over no-overlap
# Prints two Markdown tables.
#
#   tests/bench/baselines-table.sh [ARSIM]     (from the repository root)
set -eu
A=${1:-./arsim}
export LC_ALL=C
POL='[{name: pytorch-ddp, overlap: ddp, algorithm: ring}, {name: no-overlap, overlap: none, algorithm: ring},
 {name: overlap-only, overlap: layer, algorithm: ring}, {name: algorithm-only, overlap: none, algorithm: hybrid},
 {name: thesis, overlap: layer, algorithm: hybrid}, {name: priority-ring, overlap: priority, algorithm: ring},
 {name: priority-auto, overlap: priority, algorithm: auto}]'
T=$(mktemp -d "${TMPDIR:-/tmp}/arsim-baselines.XXXXXX")
trap 'rm -rf "$T"' EXIT
# one line per result: batch policy iteration_ms exposed_ms
rows() {
    "$A" run "$1" --set "policies=$POL" --csv "$T/r.csv" >/dev/null
    awk -F, 'NR > 1 { printf "%s %s %.3f %.3f\n", $9, $10, $13 * 1e3, $16 * 1e3 }' "$T/r.csv"
}
rows configs/default.yaml >"$T/10"
rows configs/default-1gbps.yaml >"$T/1"
get() { awk -v b="$2" -v p="$3" -v c="$4" '$1 == b && $2 == p { print $c }' "$T/$1"; }
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.1f %%", (a - b) / b * 100 }'; }
sp() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b / a }'; }
echo "| network | batch | no-overlap | pytorch-ddp | thesis | thesis vs no-overlap | thesis vs pytorch-ddp |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for net in 10 1; do
    for b in 16 32 64 128; do
        n=$(get $net $b no-overlap 3); d=$(get $net $b pytorch-ddp 3); t=$(get $net $b thesis 3)
        printf '| %s Gbit/s | %s | %.1f | %.1f | %.1f | %s | %s |\n' $net $b "$n" "$d" "$t" "$(pct "$t" "$n")" "$(pct "$t" "$d")"
    done
done
echo
echo "| batch | policy | 10G iter | 10G exposed | 10G vs ddp | 10G vs none | 1G iter | 1G exposed | 1G vs ddp | 1G vs none |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
for b in 16 32 64 128; do
    for p in pytorch-ddp no-overlap overlap-only algorithm-only thesis priority-ring priority-auto; do
        line="| $b | $p"
        for net in 10 1; do
            i=$(get $net $b $p 3); e=$(get $net $b $p 4)
            line="$line | $(printf %.1f "$i") | $(printf %.1f "$e") | $(sp "$i" "$(get $net $b pytorch-ddp 3)") | $(sp "$i" "$(get $net $b no-overlap 3)")"
        done
        echo "$line |"
    done
done
