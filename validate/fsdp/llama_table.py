#!/usr/bin/env python3
"""llama_table.py - the one-GPU Llama 3 8B measurement (validate/h200/fsdp/
llama_step.jsonl, written by validate/fsdp/llama_step.py through
validate/gpu_round.sh) against arsim's prediction of the same setups.

MAINTAINER TOOL.  Standard library only; run from the repository root after
`make` (it runs ./arsim):

    python3 validate/fsdp/llama_table.py [--data FILE] [--arsim BIN]

Per depth (2 and 4 blocks) and checkpoint mode: the caching allocator's
peak allocated and reserved bytes (the largest over the measured iterations
and their three phases, and the phase that held it), arsim's
memory_peak_bytes (no GPU node in the scenarios, so no NCCL buffers: the
allocator holds none either) and its error against each; then the per-block
slope (L4 - L2) / 2 and the intercept (L = 0) of each; the reserved /
allocated ratio; the median iteration time against arsim's.  Op-level SAC
is validate/fsdp/llama-1gpu.yaml (models llama3-8b-titan-Nblocks), none
and full are llama-1gpu-base.yaml (llama3-8b-Nblocks, arsim's checkpoint
modes; its layer-level selective shown for contrast).  Output is
deterministic.  docs/explanation/sharding.md, "Against one GPU's measured
memory".
"""

import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "validate", "h200", "fsdp", "llama_step.jsonl")
GIB = 2.0 ** 30
DEPTHS = (2, 4)
EXPANDABLE = "expandable_segments:True"
# (measured ac, arsim scenario, its policy, model file stem)
S, H, F, V, B = 8192, 4096, 14336, 128256, 2
ROOT_PARAMS = 2 * V * H + H          # tok_embeddings, output, the final norm
BLOCK_PARAMS = 2 * H * H + 2 * H * 1024 + 3 * H * F + 2 * H
CASES = (("selective", "llama-1gpu.yaml", "selective", "llama3-8b-titan"),
         ("none", "llama-1gpu-base.yaml", "none", "llama3-8b"),
         ("full", "llama-1gpu-base.yaml", "full", "llama3-8b"))


def load(path):
    """{(alloc_conf, layers, ac): case row} of the measurement."""
    rows = {}
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            if r.get("kind") == "case" and "error" not in r:
                rows[(r["alloc_conf"], r["layers"], r["ac"])] = r
    return rows


def peak_phase(row):
    """The phase whose max allocated is the case's peak (the first such, in iteration order)."""
    for it in row["iterations"]:
        for ph in ("forward", "backward", "optimizer"):
            if it["phase"][ph]["max_alloc_gib"] == row["peak_alloc_gib"]:
                return ph
    return "?"


def run_arsim(binary, scenario, stem, depth):
    """{policy: (memory_peak_bytes, iteration_s)} of scenario at depth."""
    cmd = [binary, "run", os.path.join(ROOT, "validate", "fsdp", scenario),
           "--set", "model=models/%s-%dblocks.yaml" % (stem, depth), "--json", "-"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return {r["policy"]: (r["memory_peak_bytes"], r["iteration_s"]) for r in json.loads(out)["results"]}


def intercept_terms(rows):
    """The measured intercept's terms and arsim's (op-level SAC file), bytes: (name, measured side, arsim)."""
    r = rows[(EXPANDABLE, DEPTHS[0], "selective")]
    extra = (r["iterations"][-1]["phase"]["optimizer"]["alloc_after_gib"] - r["states_gib"]) * GIB
    norm_saves = B * (6 * S * H + 4 * S) + B * 2 * S * H + B * 8 * S   # eager norm; output's input; tokens
    return (("fp32 parameters and Adam's two states, 12 B a parameter", 12 * ROOT_PARAMS, 12 * ROOT_PARAMS),
            ("the loss head, 12 S V b", B * 12 * S * V, B * 12 * S * V),
            ("the final norm's, the output's and the embedding's saves", norm_saves, norm_saves),
            ("the last block kept gathered (bf16; torchtitan's reshard_after_forward False)", 2 * BLOCK_PARAMS,
             2 * BLOCK_PARAMS),
            ("the root gathered (bf16; re-sharded after forward by torch 2.11)", 0, 2 * ROOT_PARAMS),
            ("what else stays allocated (measured: after the step, less 16 B a parameter)", extra, 0))


def err(pred, meas):
    return "%+.1f %%" % (100.0 * (pred / meas - 1.0))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=DATA, help="llama_step.py's JSON lines")
    ap.add_argument("--arsim", default=os.path.join(ROOT, "arsim"), help="the arsim binary")
    a = ap.parse_args()
    rows = load(a.data)
    sim = {}
    for ac, scen, pol, stem in CASES:
        for n in DEPTHS:
            sim[(n, ac)] = run_arsim(a.arsim, scen, stem, n)[pol]
    layer_sel = {n: run_arsim(a.arsim, "llama-1gpu-base.yaml", "llama3-8b", n)["layer-selective"][0] / GIB
                 for n in DEPTHS}

    print("One GPU (%s), Llama 3 8B at L blocks, batch 2 x 8192, FSDP2 world 1, allocator %s; GiB"
          % ("NVIDIA H200", EXPANDABLE))
    print("%-2s %-9s %-9s %9s %9s %9s %9s %10s" % ("L", "ac", "phase", "alloc", "reserved", "arsim",
                                                 "vs alloc", "vs reserv"))
    meas = {}
    for ac, _, _, _ in CASES:
        for n in DEPTHS:
            r = rows[(EXPANDABLE, n, ac)]
            m = sim[(n, ac)][0] / GIB
            meas[(n, ac)] = (r["peak_alloc_gib"], r["peak_reserved_gib"], m)
            print("%-2d %-9s %-9s %9.2f %9.2f %9.2f %9s %10s" % (n, ac, peak_phase(r), r["peak_alloc_gib"],
                                                               r["peak_reserved_gib"], m,
                                                               err(m, r["peak_alloc_gib"]),
                                                               err(m, r["peak_reserved_gib"])))
    print()
    print("Per block (L4 - L2) / 2 and intercept (L = 0); GiB")
    print("%-9s %9s %9s %9s %9s %11s %11s %11s %9s" % ("ac", "alloc/blk", "resv/blk", "arsim/blk", "error",
                                                      "alloc at 0", "resv at 0", "arsim at 0", "error"))
    for ac, _, _, _ in CASES:
        lo, hi = meas[(DEPTHS[0], ac)], meas[(DEPTHS[1], ac)]
        d = DEPTHS[1] - DEPTHS[0]
        slope = [(hi[i] - lo[i]) / d for i in range(3)]
        icpt = [lo[i] - DEPTHS[0] * slope[i] for i in range(3)]
        print("%-9s %9.3f %9.3f %9.3f %9s %11.2f %11.2f %11.2f %9s" % (ac, slope[0], slope[1], slope[2],
                                                                    err(slope[2], slope[0]), icpt[0], icpt[1],
                                                                    icpt[2], err(icpt[2], icpt[0])))
    print("(arsim's layer-level selective, for contrast: %s GiB)"
          % ", ".join("L%d %.2f" % (n, layer_sel[n]) for n in DEPTHS))
    print()
    print("The intercept at the peak (the loss's backward), term by term; GiB")
    print("%-80s %9s %9s" % ("term", "measured", "arsim"))
    terms = intercept_terms(rows)
    for name, m, a_ in terms:
        print("%-80s %9.3f %9.3f" % (name, m / GIB, a_ / GIB))
    lo, hi = meas[(DEPTHS[0], "selective")], meas[(DEPTHS[1], "selective")]
    icpt = [lo[i] - DEPTHS[0] * (hi[i] - lo[i]) / (DEPTHS[1] - DEPTHS[0]) for i in (0, 2)]
    print("%-80s %9.3f %9.3f" % ("sum", sum(t[1] for t in terms) / GIB, sum(t[2] for t in terms) / GIB))
    print("%-80s %9.3f %9.3f" % ("intercept (selective)", icpt[0], icpt[1]))
    print()
    print("Reserved / allocated at the peak")
    print("%-2s %-9s %12s %12s" % ("L", "ac", EXPANDABLE, "default"))
    for ac, _, _, _ in CASES:
        for n in DEPTHS:
            cells = []
            for conf in (EXPANDABLE, ""):
                r = rows.get((conf, n, ac))
                cells.append("%.3f" % (r["peak_reserved_gib"] / r["peak_alloc_gib"]) if r else "-")
            print("%-2d %-9s %12s %12s" % (n, ac, cells[0], cells[1]))
    print()
    print("Iteration (median, CUDA events) against arsim (selective: gpu h100gt, the model file's 500 W H100 96GB;"
          " none, full: gpu h100, arsim's compute model); ms")
    print("%-2s %-9s %9s %9s %9s" % ("L", "ac", "measured", "arsim", "error"))
    for ac, _, _, _ in CASES:
        for n in DEPTHS:
            r = rows[(EXPANDABLE, n, ac)]
            t = sim[(n, ac)][1] * 1e3
            print("%-2d %-9s %9.1f %9.1f %9s" % (n, ac, r["median_iter_ms"], t, err(t, r["median_iter_ms"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
