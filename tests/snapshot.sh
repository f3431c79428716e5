#!/bin/bash
# snapshot.sh — every output of the shipped configs and of a set of
# `collective` runs, written to one folder, so that a change that must not
# alter results can be proved byte for byte: snapshot before, snapshot
# after, `diff -r`.
#
#   tests/snapshot.sh ARSIM OUTDIR [--quick]
#
# ARSIM is the binary to run (run from the repository root, which holds
# models/ and topologies/). Host timings (`wall_s`, the only field that
# depends on the machine) are removed from the JSON. --quick leaves out
# the two sweeps (a few minutes on 2 cores).
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: tests/snapshot.sh ARSIM OUTDIR [--quick]" >&2; exit 2; }
bin=$(realpath "$1"); out=$2; quick=${3:-}
cd "$(dirname "$0")/.."
mkdir -p "$out"
nowall() { grep -v '"wall_s"' "$@"; }

for cfg in configs/*.yaml; do
    name=$(basename "$cfg" .yaml)
    case "$name" in sweep-* | *-64k) continue ;; esac   # *-64k: minutes each; make bench runs them
    "$bin" run "$cfg" --json "$out/run-$name.json" --csv "$out/run-$name.csv" \
        --trace "$out/run-$name.trace.json" > "$out/run-$name.txt"
    "$bin" run "$cfg" --layers > "$out/run-$name.layers.txt"
done
"$bin" run configs/default.yaml --plot "$out/plot-default" > /dev/null
rm -f "$out"/plot-default/*.png "$out"/plot-default/*.svg

i=0
coll() {
    i=$((i + 1))
    "$bin" collective "$@" --json - | nowall > "$out/coll-$i.json"
    printf '%s\n' "$*" > "$out/coll-$i.args"
}
for algo in ring butterfly rabenseifner tree hierarchical torus2d; do
    for p in 5 8 12; do
        coll --ranks $p --algo $algo --size 1KB,1MB,64MB --bandwidth 10Gbps --latency 5us
    done
done
for topo in topologies/*.yaml; do
    for algo in ring butterfly rabenseifner; do
        coll --topology "$topo" --algo $algo --size 4KiB,4MiB --links
    done
done
coll --ranks 8 --algo ring --size 64MB --packet 9000 --links
coll --ranks 6 --algo rabenseifner --size 1MiB,64MiB --bandwidth 100Gbps --latency 2.5us --gamma 1e-10

[ "$quick" = --quick ] && exit 0
for sw in configs/sweep-*.yaml; do
    name=$(basename "$sw" .yaml)
    [ "$name" = sweep-fsdp-scale-nccl-far ] && continue   # 15 minutes of CPU; docs/img/render.sh names its commands
    rm -rf "$out/$name"
    "$bin" sweep "$sw" --out "$out/$name" --jobs 2 > /dev/null 2>&1
    sort -o "$out/$name/results.jsonl" "$out/$name/results.jsonl"   # lines land in finishing order
    "$bin" plot "$out/$name/results.jsonl" --out "$out/$name/plots" > /dev/null
    rm -f "$out/$name"/plots/*.png "$out/$name"/plots/*.svg "$out/$name/progress"* 2>/dev/null || true
done
