#!/usr/bin/env python3
"""table.py - the tables of docs/explanation/compute-model.md's "Kernels measured
on an H200", rebuilt from the raw runs in validate/kernels/h200/ (rates.py twice,
block.py once) and, for the block check, from arsim itself.

    python3 validate/kernels/table.py [--arsim ./arsim] [--before GPUS_FILE] [--only gemm,attn,mem,block]

Prints Markdown:
  gemm   per shipped model and batch, the Linear products' rate (total FLOPs over
         total time, forward + dgrad + wgrad, dimensions multiples of 8) in each
         run, and the output head where the vocabulary is odd (50257)
  attn   per fused shape, SDPA's forward + backward rate per backend, FLOPs as
         arsim counts them (models/gen/gen_gpus_llm.py's fused_flops); per eager
         shape, the six score products as batched matmuls
  mem    per memory-bound kernel, the median over widths of bytes moved over time
         (bytes a call moves per element, models/gen/memfactor.py's MEASURED_BYTES) and
         its share of the H200's 4.8 TB/s, the mean of the two runs
  block  each measured block (block.py) beside arsim's: one GPU (gpu h200), the
         block's model file, its batch, the compute events of block h.1 in
         arsim's trace, with models/gpus-llm.yaml and, with --before, another
         GPU file (the error is (arsim - measured) / measured)
  llama  the Llama 3 8B and 70B blocks measured on the H100 (validate/h100/
         overlap) beside arsim's models/llama3-8b.yaml and llama3-70b.yaml
         (block layers.1) on one H100 with gpus-llm-cudnn.yaml and gpus-llm.yaml
  step   step.py's whole training steps (FSDP2 on one H200, depth 2 and 4)
         beside arsim's one-GPU fsdp2 run of the same model and depth
Needs arsim (built) for the block table only.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "models", "gen"))
import gen_gpus_llm as g  # noqa: E402
import memfactor  # noqa: E402  (the memory-bound kernels' bytes and shares)
sys.path.insert(0, HERE)
import rates  # noqa: E402  (MODELS: the shipped shapes, in order)

# block.py's cases: (model, kind) -> the model file whose blocks run the same kernels
BLOCK_FILES = {("mpt-1b", "fused"): "validate/llm/models/mpt-1b-2k.yaml",
               ("mpt-3b", "fused"): "validate/llm/models/mpt-3b-2k.yaml",
               ("mpt-3b-8k", "fused"): "validate/llm/models/mpt-3b-8k.yaml",
               ("mpt-7b", "fused"): "validate/llm/models/mpt-7b-2k.yaml",
               ("mpt-7b-8k", "fused"): "validate/llm/models/mpt-7b-8k.yaml",
               ("mpt-13b", "fused"): "validate/llm/models/mpt-13b-2k.yaml",
               ("mpt-30b", "fused"): "validate/llm/models/mpt-30b-2k.yaml",
               ("gpt3-xl", "eager"): "validate/anchors/models/gpt3-xl.yaml",
               ("gpt3-2.7b", "eager"): "validate/anchors/models/gpt3-2.7b.yaml"}


def pct(a, b):
    return "%+.1f %%" % (100.0 * (a - b) / b)


def gemm(runs):
    print("| model | batch | run 1 (TFLOP/s) | run 2 | of the bf16 peak | head, vocabulary 50257 (TFLOP/s) |")
    print("|---|---:|---:|---:|---:|---:|")
    keys = []
    for r in runs[0]:
        if r["section"] == "gemm" and r["pass"] == 1 and r["model"] not in keys:
            keys.append(r["model"])
    order = [m[0] for m in rates.MODELS]
    for key in sorted(keys, key=lambda k: (order.index(k.split("/b")[0]), int(k.split("/b")[1]))):
        rate, head = [], []
        for run in runs:
            rows = [r for r in run if r["section"] == "gemm" and r["model"] == key]
            ok = [r for r in rows if g.aligned(r)]
            rate.append(sum(2.0 * r["m"] * r["n"] * r["k"] for r in ok) / sum(r["s"] for r in ok))
            odd = [r for r in rows if not g.aligned(r)]
            if odd:
                head.append(sum(2.0 * r["m"] * r["n"] * r["k"] for r in odd) / sum(r["s"] for r in odd))
        name, batch = key.split("/b")
        print("| %s | %s | %.0f | %.0f | %.3f | %s |" % (name, batch, rate[0] / 1e12, rate[1] / 1e12,
                                                      sum(rate) / 2 / 989e12,
                                                      "%.0f" % (sum(head) / len(head) / 1e12) if head else ""))
    print()
    print("All shipped aligned shapes: %.1f TFLOP/s (the mean of the runs); the best square product %.1f; "
          "8192^3 %.1f." % (g.mean(g.gemm_rate, runs) / 1e12, g.mean(g.best_square, runs) / 1e12,
                            g.mean(g.square_8192, runs) / 1e12))
    print()


def attn(runs):
    print("| shape (model/batch) | sequence | head dim | FlashAttention-2 (TFLOP/s) | cuDNN | memory-efficient |")
    print("|---|---:|---:|---:|---:|---:|")
    rows = {}
    for run in runs:
        for r in run:
            if r["section"] == "attn" and "error" not in r:
                rows.setdefault((r["model"], r["seq"], r["head_dim"]), {}).setdefault(r["backend"], []).append(
                    g.fused_flops(r) / r["fwdbwd_s"])
    for (model, s, hd), be in rows.items():
        cell = lambda b: "%.0f" % (statistics.mean(be[b]) / 1e12) if b in be else "–"
        print("| %s | %d | %d | %s | %s | %s |" % (model, s, hd, cell("FLASH_ATTENTION"), cell("CUDNN_ATTENTION"),
                                                   cell("EFFICIENT_ATTENTION")))
    print()
    print("| eager shape (model/batch) | sequence | head dim | six score products (TFLOP/s) |")
    print("|---|---:|---:|---:|")
    shapes = {}
    for run in runs:
        for r in run:
            if r["section"] == "bmm":
                f, t = shapes.setdefault((r["model"], r["seq"], r["head_dim"]), [0.0, 0.0])
                shapes[(r["model"], r["seq"], r["head_dim"])] = [f + 2.0 * r["batch"] * r["seq"] ** 2 * r["head_dim"],
                                                                 t + r["s"]]
    for (model, s, hd), (f, t) in shapes.items():
        print("| %s | %d | %d | %.0f |" % (model, s, hd, f / t / 1e12))
    print()


def mem(runs):
    """memfactor.py's shares: bytes a call moves per element (its MEASURED_BYTES) over time, the median over
    widths in each run, the mean of the two runs."""
    print("| kernel | bytes an element (fwd / bwd) | forward (GB/s) | share of 4.8 TB/s | backward (GB/s) | share |")
    print("|---|---:|---:|---:|---:|---:|")
    for k, (sf, sb) in memfactor.shares(ROOT).items():
        f, b = memfactor.MEASURED_BYTES[k]
        cells = ["%d / %s" % (f, b if b else "–"), "%.0f" % (sf * g.HBM["h200"] / 1e9), "%.2f" % sf]
        cells += ["%.0f" % (sb * g.HBM["h200"] / 1e9), "%.2f" % sb] if b else ["–", "–"]
        print("| %s | %s |" % (k, " | ".join(cells)))
    print()


def run_one_gpu(arsim, model, gpu, gpus_file, batch, policy, output, extra=""):
    """arsim run's standard output (`output`: "--json" or "--trace") for `model` on one GPU of kind `gpu` from
    `gpus_file` at `batch`, bf16, one policy (a YAML flow map), `extra` scenario lines."""
    scn = ("name: one\nmodel: %s\ngpu: %s\ngpus_file: %s\nprecision: bf16\nbatch: [%d]\n"
           "cluster: {topology: star, nodes: 1, gpus_per_node: 1, link: {bandwidth: 100Gbps, latency: 1us}}\n"
           "%spolicies:\n  - %s\niterations: {warmup: 1, measured: 2}\n"
           % (os.path.join(ROOT, model), gpu, gpus_file, batch, extra, policy))
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "one.yaml")
        with open(path, "w") as f:
            f.write(scn)
        return subprocess.run([arsim, "run", path, output, "-"], capture_output=True, text=True, check=True,
                              env=dict(os.environ, ARSIM_DATA=ROOT)).stdout


def arsim_block_ms(arsim, model, batch, gpus_file, gpu="h200", block="h.1."):
    """arsim's forward + backward of one block (the layers named `block`...) of `model` on one GPU of kind
    `gpu` at `batch`, no checkpointing, ms."""
    out = run_one_gpu(arsim, model, gpu, gpus_file, batch, "{name: none, overlap: none, algorithm: ring}", "--trace")
    ev = json.loads(out)
    ev = ev["traceEvents"] if isinstance(ev, dict) else ev
    return sum(e["dur"] for e in ev if e.get("cat") == "compute" and e["name"].split(" ", 1)[-1].startswith(block)
               and e["name"].split(" ", 1)[0] in ("fwd", "bwd")) / 1e3


def block(arsim, before):
    meas = [json.loads(l) for l in open(os.path.join(HERE, "h200", "block.jsonl"))]
    # FlashAttention-2 and eager blocks that a shipped file runs kernel for kernel (the GPT widths' fused
    # blocks do not: the flash files fuse dropout, add and LayerNorm, as the FlashAttention repository does)
    meas = [r for r in meas if r.get("section") == "block" and r.get("backend") in ("FLASH_ATTENTION", "eager")
            and (r["model"], r["kind"]) in BLOCK_FILES]
    llm = os.path.join(ROOT, "models", "gpus-llm.yaml")
    head = "| block | batch | sequence | measured fwd+bwd (ms) | arsim (ms) | error |"
    if before:
        head += " before (ms) | error |"
    print(head)
    print("|---|---:|---:|---:|---:|---:|" + ("---:|---:|" if before else ""))
    errs = []
    for r in meas:
        model = BLOCK_FILES[(r["model"], r["kind"])]
        m = r["fwdbwd_s"] * 1e3
        a = arsim_block_ms(arsim, model, r["batch"], llm)
        errs.append(abs(a - m) / m)
        row = "| %s (%s) | %d | %d | %.2f | %.2f | %s |" % (r["model"], r["kind"], r["batch"], r["seq"], m, a, pct(a, m))
        if before:
            b = arsim_block_ms(arsim, model, r["batch"], os.path.abspath(before))
            row += " %.2f | %s |" % (b, pct(b, m))
        print(row)
    print()
    print("Mean absolute error %.1f %% over %d blocks." % (100 * statistics.mean(errs), len(errs)))
    print()


def llama(arsim):
    """The Llama 3 blocks measured on the H100 (validate/h100/overlap, default SDPA: cuDNN's fused attention
    under torch 2.11 on Hopper) against arsim's per-kernel files' block layers.1 on one H100."""
    meas = {}
    for line in open(os.path.join(ROOT, "validate", "h100", "overlap", "run1", "llama.jsonl")):   # run 1 only
        r = json.loads(line)
        if r.get("part") == "block":
            meas.setdefault((r["model"], r["batch"]), []).append(r["fwdbwd_ms"])
    files = [os.path.join(ROOT, "models", f) for f in ("gpus-llm-cudnn.yaml", "gpus-llm.yaml")]
    print("| Llama 3 block, sequence 8192 | batch | measured on the H100 (ms) | arsim, gpus-llm-cudnn (ms) "
          "| error | arsim, gpus-llm (ms) | error |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for (model, batch), ms in sorted(meas.items()):
        m = statistics.mean(ms)
        a = [arsim_block_ms(arsim, "models/%s.yaml" % model, batch, f, "h100", "layers.1.") for f in files]
        print("| %s | %d | %.1f | %.1f | %s | %.1f | %s |" % (model, batch, m, a[0], pct(a[0], m), a[1], pct(a[1], m)))
    print()


def step_model(path, layers, d, heads, vocab):
    """Writes an MPT-variant file of `layers` blocks (models/gen/gen_gpt3.py) with the loss as step.py
    runs it: eager, fp32 (gen_gpt3's LOSS bytes, not its fused cross-entropy's)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("gen_gpt3_step", os.path.join(ROOT, "models", "gen", "gen_gpt3.py"))
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    gen.L, gen.D, gen.HEADS, gen.V, gen.S, gen.VARIANT = layers, d, heads, vocab, 2048, "mpt"
    gen.FUSED_LOSS = gen.LOSS
    text, _ = gen.model_text(path, "validate/kernels/table.py", "step", "MPT-style, %d blocks" % layers)
    with open(path, "w") as f:
        f.write(text)


def step(arsim):
    """step.py's whole steps on the H200 (FSDP2, world 1, no checkpointing) beside arsim's one-GPU fsdp2 run
    of the same model at the same depth (gpus-llm, fp32 reduce-scatters, AdamW + clipping at 92 bytes a
    parameter as the torchtitan check counts them), and the per-block slope (depth 4 - depth 2) / 2."""
    rows = {}
    for line in open(os.path.join(HERE, "h200", "step.jsonl")):
        r = json.loads(line)
        if r.get("kind") == "case" and "error" not in r:
            rows[(r["model"], r["layers"])] = r
    print("| model | micro-batch | measured step, 2 / 4 blocks (ms) | arsim (ms) | error | measured a block "
          "| arsim a block | error | block.py's block (fwd+bwd) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    blocks = {r["model"]: r["fwdbwd_s"] * 1e3 for r in (json.loads(l) for l in open(os.path.join(HERE, "h200",
              "block.jsonl"))) if r.get("backend") == "FLASH_ATTENTION"}
    with tempfile.TemporaryDirectory() as tmp:
        for name in [m for m, l in rows if l == 2]:
            r2, r4 = rows[(name, 2)], rows[(name, 4)]
            got = {}
            for layers, r in ((2, r2), (4, r4)):
                model = os.path.join(tmp, "%s-%d.yaml" % (name, layers))
                step_model(model, layers, r["d"], r["heads"], r["vocab"])
                out = run_one_gpu(arsim, model, "h200", os.path.join(ROOT, "models", "gpus-llm.yaml"), r["batch"],
                                  # step.py's last block stays gathered (reshard_after_forward=False)
                                  "{name: fsdp2, overlap: fsdp2, reduce_precision: fp32, reshard_last_unit: false}",
                                  "--json", "compute: {update_bytes_per_param: 92}\n")
                got[layers] = json.loads(out)["results"][0]["iteration_s"] * 1e3
            m2, m4 = r2["median_iter_ms"], r4["median_iter_ms"]
            ms, as_ = (m4 - m2) / 2, (got[4] - got[2]) / 2
            print("| %s | %d | %.1f / %.1f | %.1f / %.1f | %s / %s | %.1f | %.1f | %s | %s |" % (
                name, r2["batch"], m2, m4, got[2], got[4], pct(got[2], m2), pct(got[4], m4), ms, as_, pct(as_, ms),
                "%.1f" % blocks[name] if name in blocks else "–"))
    print()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arsim", default=os.path.join(ROOT, "arsim"))
    ap.add_argument("--before", help="a second GPU file for the block table's before columns")
    ap.add_argument("--only", default="gemm,attn,mem,block,llama,step")
    a = ap.parse_args()
    runs = g.load_runs(ROOT)
    for s in a.only.split(","):
        {"gemm": lambda: gemm(runs), "attn": lambda: attn(runs), "mem": lambda: mem(runs),
         "block": lambda: block(os.path.abspath(a.arsim), a.before),
         "llama": lambda: llama(os.path.abspath(a.arsim)),
         "step": lambda: step(os.path.abspath(a.arsim))}[s]()


if __name__ == "__main__":
    sys.exit(main())
