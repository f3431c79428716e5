#!/bin/bash
# docs/img/render.sh — renders the figures under docs/img/ with the shipped
# gnuplot scripts (plots/*.gp, through `arsim plot`), so the images the docs
# show are the ones arsim draws today. Run it from the repository root after
# a change to the models or the plots:
#
#   docs/img/render.sh [ARSIM]          (ARSIM defaults to ./arsim)
#
# thesis/: the thesis sweep (configs/sweep-thesis.yaml) and the timeline of
# priority + auto at batch 64; whatif/: tests/bench/whatif-figures.sh;
# fsdp/: the sharding sweeps (configs/sweep-fsdp-{scale,scale-far,models,
# knobs}.yaml, about 6 minutes on one core, most of it the 1,024-GPU point
# of the scale sweep and full_shard at 4,096 GPUs).
# scale-64k/ takes minutes and about 100 MiB, so it is left to its own
# command (docs/dev/performance.md):
#   arsim sweep configs/sweep-scale-64k.yaml --out R --jobs 1 && arsim plot R/results.jsonl --out R/plots
#   cp R/plots/scaling.png docs/img/scale-64k/scaling.png; cp R/plots/scaling.dat docs/img/scale-64k/scaling.dat
# fsdp/scale-nccl.*: the NCCL scale sweeps (configs/sweep-fsdp-scale-nccl-node,
# -nccl and -nccl-far.yaml, 8 to 65,536 GPUs) take about 16 minutes of CPU, most of
# it the far sweep's 4,096 and 8,192 nodes, so they too have their own commands:
#   for s in -node '' -far; do arsim sweep configs/sweep-fsdp-scale-nccl$s.yaml --out R$s --jobs 2; done
#   arsim plot R-node/results.jsonl R/results.jsonl R-far/results.jsonl --out R/plots
#   cp R/plots/memory-01.png docs/img/fsdp/scale-nccl.png; cp R/plots/memory-01.dat docs/img/fsdp/scale-nccl.dat
set -eu
A=$(readlink -f "${1:-./arsim}")
cd "$(dirname "$0")/../.."
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
"$A" sweep configs/sweep-thesis.yaml --out "$T/th" --jobs 2 >/dev/null 2>&1
"$A" plot "$T/th/results.jsonl" --out "$T/thp" >/dev/null
# the sweep's groups: nodes 4, 8, 16, 32 within bandwidths 1, 10, 25, 100 Gbit/s
cp "$T/thp/best_policy-02.png" docs/img/thesis/best_policy-8nodes.png
cp "$T/thp/iteration_vs_batch-06.png" docs/img/thesis/iteration_vs_batch-8x10g.png
cp "$T/thp/breakdown-06.png" docs/img/thesis/breakdown-8x10g.png
cp "$T/thp/speedup_vs_batch-06.png" docs/img/thesis/speedup_vs_batch-8x10g.png
cp "$T/thp/scaling-07.png" docs/img/thesis/scaling-10g-batch64.png
"$A" run configs/default.yaml --set batch=64 --trace "$T/tl.json" --trace-policy priority-auto >/dev/null
"$A" plot "$T/tl.json" --out "$T/tlp" >/dev/null
cp "$T/tlp/timeline.png" docs/img/thesis/timeline-priority-auto-b64.png
tests/bench/whatif-figures.sh "$A" >/dev/null 2>&1
for sw in scale scale-far models knobs; do
    "$A" sweep "configs/sweep-fsdp-$sw.yaml" --out "$T/fs-$sw" --jobs 2 >/dev/null 2>&1
    "$A" plot "$T/fs-$sw/results.jsonl" --out "$T/fs-$sw/p" >/dev/null
done
"$A" plot "$T/fs-scale/results.jsonl" "$T/fs-scale-far/results.jsonl" --out "$T/fs-scale/p" >/dev/null
# scale (+ far): one group (memory against GPUs); models: memory-03/04 are against the model at 16 and 128 GPUs
cp "$T/fs-scale/p/memory-01.png" docs/img/fsdp/scale-memory.png
cp "$T/fs-scale/p/memory-01.dat" docs/img/fsdp/scale-memory.dat
cp "$T/fs-models/p/memory-03.png" docs/img/fsdp/models-16.png
cp "$T/fs-models/p/memory-04.png" docs/img/fsdp/models-128.png
cp "$T/fs-models/p/memory-04.dat" docs/img/fsdp/models-128.dat
cp "$T/fs-knobs/p/iteration_vs_batch.png" docs/img/fsdp/knobs-iteration.png
cp "$T/fs-knobs/p/breakdown.png" docs/img/fsdp/knobs-breakdown.png
echo "rendered docs/img/thesis/, docs/img/whatif/ and docs/img/fsdp/"
