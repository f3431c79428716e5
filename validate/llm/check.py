#!/usr/bin/env python3
"""check.py - models/gpus-llm.yaml against published end-to-end LLM training
throughput (docs/explanation/compute-model.md, "Large language models").

Usage: python3 validate/llm/check.py [ARSIM]

Runs each row's scenario (fa2-a100.yaml or mpt.yaml, with the row's --set
arguments) once with its gpus_file (gpus-llm) and once with
--set gpus_file=gpus (models/gpus.yaml), and prints one Markdown row per
published figure: the source, the setup, the published figure, arsim's
with each GPU file and its error (arsim - published) / published.

The figures are TFLOP/s per GPU, except the rows of the FlashAttention
repository's table, which are thousands of tokens per second on the node
(the setup says so). arsim's TFLOP/s are counted the way the sources count
theirs: model FLOPs per sequence 6 S N + 12 L d S^2 (N the parameters, the
attention's score products counted in full, causal or not, and no
recompute), times the sequences a GPU finishes per second (samples_per_s /
world); its tokens per second are samples_per_s x S. The error is computed
from the printed, rounded figure, so that it can be checked from the table
alone (tests/tools/llmval.sh). Standard library only.
"""
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FA2 = "FlashAttention-2 paper, Table 1"
FAR = "FlashAttention repository, training/README.md"
MPT = "llm-foundry MPT benchmarks"
KTOK = "thousand tokens/s on the node"

# (source, setup, scenario, --set arguments, published TFLOP/s per GPU or, where the setup names
# KTOK, thousands of tokens per second on the node)
ROWS = [
    (FA2, "GPT3-1.3B, seq 2k, 8 A100, batch 8, no FlashAttention", "fa2-a100.yaml",
     ["model=../anchors/models/gpt3-xl.yaml", "batch=8"], 142),
    (FA2, "GPT3-2.7B, seq 2k, 8 A100, batch 4, no FlashAttention", "fa2-a100.yaml",
     ["model=../anchors/models/gpt3-2.7b.yaml", "batch=4"], 149),
    (FA2, "GPT3-1.3B, seq 2k, 8 A100, batch 8, FlashAttention-2", "fa2-a100.yaml",
     ["model=models/gpt3-1.3b-2k-flash.yaml", "batch=8"], 196),
    (FA2, "GPT3-1.3B, seq 8k, 8 A100, batch 4, FlashAttention-2", "fa2-a100.yaml",
     ["model=models/gpt3-1.3b-8k-flash.yaml", "batch=4"], 220),
    (FA2, "GPT3-2.7B, seq 2k, 8 A100, batch 4, FlashAttention-2", "fa2-a100.yaml",
     ["model=models/gpt3-2.7b-2k-flash.yaml", "batch=4"], 205),
    (FA2, "GPT3-2.7B, seq 8k, 8 A100, batch 4, FlashAttention-2", "fa2-a100.yaml",
     ["model=models/gpt3-2.7b-8k-flash.yaml", "batch=4"], 225),
    (FAR, "GPT3-125M, seq 2k, 8 A100, batch 32, FlashAttention, " + KTOK, "fa2-a100.yaml",
     ["model=models/gpt3-125m-2k-flash.yaml", "batch=32"], 1310),
    (FAR, "GPT3-355M, seq 2k, 8 A100, batch 16, FlashAttention, " + KTOK, "fa2-a100.yaml",
     ["model=models/gpt3-355m-2k-flash.yaml", "batch=16"], 503),
    (FAR, "GPT3-760M, seq 2k, 8 A100, batch 16, FlashAttention, " + KTOK, "fa2-a100.yaml",
     ["model=models/gpt3-760m-2k-flash.yaml", "batch=16"], 245),
    (FAR, "GPT3-1.3B, seq 2k, 8 A100, batch 8, FlashAttention, " + KTOK, "fa2-a100.yaml",
     ["model=models/gpt3-1.3b-2k-flash.yaml", "batch=8"], 169),
    (FAR, "GPT3-2.7B, seq 2k, 8 A100, batch 4, FlashAttention, " + KTOK, "fa2-a100.yaml",
     ["model=models/gpt3-2.7b-2k-flash.yaml", "batch=4"], 85),
    (MPT, "MPT-1B, seq 2k, 8 A100, micro-batch 14", "mpt.yaml",
     ["model=models/mpt-1b-2k.yaml", "batch=14"], 186.8),
    (MPT, "MPT-3B, seq 2k, 8 A100, micro-batch 10", "mpt.yaml",
     ["model=models/mpt-3b-2k.yaml", "batch=10"], 193.8),
    (MPT, "MPT-7B, seq 2k, 8 A100, micro-batch 6", "mpt.yaml",
     ["model=models/mpt-7b-2k.yaml", "batch=6"], 200.4),
    (MPT, "MPT-13B, seq 2k, 8 A100, micro-batch 2", "mpt.yaml",
     ["model=models/mpt-13b-2k.yaml", "batch=2"], 185.9),
    (MPT, "MPT-7B, seq 8k, 8 A100, micro-batch 8, checkpointing", "mpt.yaml",
     ["model=models/mpt-7b-8k.yaml", "batch=8", "policies.0.checkpoint=full"], 169.9),
    (MPT, "MPT-30B, seq 2k, 8 A100, micro-batch 3, checkpointing", "mpt.yaml",
     ["model=models/mpt-30b-2k.yaml", "batch=3", "policies.0.checkpoint=full"], 172.5),
    (MPT, "MPT-1B, seq 2k, 8 H100, micro-batch 14", "mpt.yaml",
     ["model=models/mpt-1b-2k.yaml", "batch=14", "cluster.node=dgx-h100"], 413.8),
    (MPT, "MPT-3B, seq 8k, 8 H100, micro-batch 3", "mpt.yaml",
     ["model=models/mpt-3b-8k.yaml", "batch=3", "cluster.node=dgx-h100"], 398.8),
    (MPT, "MPT-7B, seq 2k, 8 H100, micro-batch 6", "mpt.yaml",
     ["model=models/mpt-7b-2k.yaml", "batch=6", "cluster.node=dgx-h100"], 459.5),
    (MPT, "MPT-13B, seq 2k, 8 H100, micro-batch 2", "mpt.yaml",
     ["model=models/mpt-13b-2k.yaml", "batch=2", "cluster.node=dgx-h100"], 393.7),
    (MPT, "MPT-30B, seq 2k, 8 H100, micro-batch 3, checkpointing", "mpt.yaml",
     ["model=models/mpt-30b-2k.yaml", "batch=3", "policies.0.checkpoint=full", "cluster.node=dgx-h100"], 377.1),
]


def shape(path):
    """(N, L, d, S) of a model file: N its params, L its blocks (one ln_1 each), d and S from its first block
    (wpe holds S x d parameters, ln_1's first tensor d)."""
    text = open(path).read()
    n = int(re.search(r"^params: (\d+)$", text, re.M).group(1))
    layers = len(re.findall(r"name: h\.\d+\.ln_1,", text))
    d = int(re.search(r"name: h\.0\.ln_1, kind: norm, params: \d+, tensors: \[(\d+),", text).group(1))
    s = int(re.search(r"name: wpe, kind: embedding, params: (\d+),", text).group(1)) // d
    return n, layers, d, s


def model_flops(path):
    """6 S N + 12 L d S^2, the model FLOPs of a sequence as both sources count them."""
    n, layers, d, s = shape(path)
    return 6 * s * n + 12 * layers * d * s * s


def run(arsim, scenario, sets):
    cmd = [arsim, "run", os.path.join(HERE, scenario), "--json", "-"]
    for s in sets:
        cmd += ["--set", s]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    (r,) = json.loads(out)["results"]
    return r


def figure(arsim, scenario, sets, model, setup):
    """arsim's figure for a row, in the row's unit, rounded as printed."""
    r = run(arsim, scenario, sets)
    if not r["memory_fits"]:
        print("note: %s %s: %.1f GiB a GPU in arsim's count, over the GPU's memory"
              % (scenario, " ".join(sets), r["memory_peak_bytes"] / 2**30), file=sys.stderr)
    if setup.endswith(KTOK):
        return round(r["samples_per_s"] * shape(model)[3] / 1e3, 1)
    return round(model_flops(model) * r["samples_per_s"] / r["world"] / 1e12, 1)


def error(a, p):
    return "%+.1f %%" % ((a - p) / p * 100)


def main():
    arsim = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "./arsim")
    print("| source | setup | published | arsim (gpus-llm) | error | arsim (gpus.yaml) | error |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for source, setup, scenario, sets, published in ROWS:
        model = os.path.join(HERE, [s for s in sets if s.startswith("model=")][0][6:])
        llm = figure(arsim, scenario, sets, model, setup)
        base = figure(arsim, scenario, sets + ["gpus_file=gpus"], model, setup)
        print("| %s | %s | %.1f | %.1f | %s | %.1f | %s |"
              % (source, setup, published, llm, error(llm, published), base, error(base, published)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
