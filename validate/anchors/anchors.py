#!/usr/bin/env python3
"""anchors.py - arsim against the published training anchors of the GPU
overlap model (docs/explanation/gpu-overlap.md, "Published anchors").

Usage: python3 validate/anchors/anchors.py [ARSIM] [--set KEY=VALUE ...]

Runs each scenario of validate/anchors/ twice: "before" with comm.overlap
false (arsim before issue 35: overlap costs nothing) and "after" with the
shipped defaults (the overlap mechanism and DDP's own costs), and prints
one Markdown row per figure: the published value, arsim's before and after,
and their errors in points. Standard library only; extra --set arguments
go to every run (a sensitivity check: --set cluster.link.bandwidth=25Gbps).
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def run(arsim, scenario, sets):
    """The results of one run, keyed by policy name."""
    cmd = [arsim, "run", os.path.join(HERE, scenario), "--json", "-"]
    for s in sets:
        cmd += ["--set", s]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return {r["policy"]: r for r in json.loads(out)["results"]}


def speedup(r):
    """Overlap's speed-up, %: t(no overlap) / t(overlap) - 1."""
    return 100 * (r["no-overlap"]["iteration_s"] / r["overlap"]["iteration_s"] - 1)


def compute_slowed(r):
    """Compute's slow-down while overlapped, %: slowdown over the compute that ran beside a sync."""
    o = r["overlapped"]
    beside = o.get("overlapped_compute_s", 0)
    return 100 * o["slowdown_s"] / beside if beside > 0 else 0.0


def sequential_slower(r):
    """Sequential against overlapped, %: t(sequential) / t(overlapped) - 1."""
    return 100 * (r["sequential"]["iteration_s"] / r["overlapped"]["iteration_s"] - 1)


# (anchor, scenario, extra --set, figure, published %)
ANCHORS = [
    ("Li et al. 2020, NCCL, ResNet-50: overlap speed-up", "ddp-paper-nccl.yaml", [], speedup, 38.0),
    ("Li et al. 2020, NCCL, BERT: overlap speed-up", "ddp-paper-nccl.yaml", ["model=bert-base"], speedup, 35.2),
    ("Li et al. 2020, Gloo, ResNet-50: overlap speed-up", "ddp-paper-gloo.yaml", [], speedup, 26.8),
    ("Li et al. 2020, Gloo, BERT: overlap speed-up", "ddp-paper-gloo.yaml", ["model=bert-base"], speedup, 21.5),
    ("Lee et al. 2025: compute slowed by overlap (average)", "lee-overlap-h100.yaml", [], compute_slowed, 18.9),
    ("Lee et al. 2025: sequential slower than overlapped (average)", "lee-overlap-h100.yaml", [],
     sequential_slower, 10.2),
]


def main(argv):
    arsim = "./arsim"
    sets = []
    args = argv[1:]
    while args:
        a = args.pop(0)
        if a == "--set" and args:
            sets.append(args.pop(0))
        elif a.startswith("-"):
            sys.exit(f"anchors.py: unknown option {a}; expected [ARSIM] [--set KEY=VALUE ...]")
        else:
            arsim = a
    print("| anchor | published % | arsim before % | error | arsim after % | error |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, scen, extra, figure, published in ANCHORS:
        before = figure(run(arsim, scen, sets + extra + ["comm.overlap=false"]))
        after = figure(run(arsim, scen, sets + extra))
        print(f"| {name} | {published:.1f} | {before:.1f} | {before - published:+.1f} | {after:.1f} | "
              f"{after - published:+.1f} |")


if __name__ == "__main__":
    main(sys.argv)
