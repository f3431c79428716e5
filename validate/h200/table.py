#!/usr/bin/env python3
"""table.py - docs/explanation/h100-measured.md's "Measured on an H200" table: arsim with gpu h200 against the plain
training steps measured on an H200, beside the H100's.

Maintainer tool (Python 3, standard library; run from anywhere after `make`):

    python3 validate/h200/table.py [--arsim ./arsim] [--refit]

Reads validate/h200/timings-plain.jsonl (models/gen/profile_gpu.sh's plain steps on an H200, PyTorch 2.11,
validate/h200/env.txt) and validate/h100/timings-plain-run{1,2}.jsonl (the same on H100s; their mean), asks
`arsim run` for the compute of one iteration on one GPU under its FLOP model (models/gpus.yaml: h200, h100) and
prints markdown: per case the measured step and arsim's on each GPU with the error (arsim - measured) / measured,
and the H200 / H100 ratio measured and arsim's (with --refit also under the H100's trial refit, the
H200 differing only in memory bandwidth; it prints the refit's line first).  Then the per-block slope of the one-H200 Llama 3 8B measurement
(validate/h200/fsdp/llama_step.jsonl, op-level SAC): (L4 - L2) / 2 against the per-kernel model of
models/gen/gen_llama3_titan.py with the H200's memory bandwidth (see block_ms).  Output is deterministic.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
H200_BPS = 4.8e12   # models/gpus.yaml h200 mem_GBps


def load(path):
    """{(model, precision, batch): step_ms} of a timings file, in file order ({} if absent)."""
    out = {}
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            out[(r["model"], r["precision"], r["batch"])] = r["step_ms"]
    return out


def compute_ms(arsim, gpu, model, precision, batch):
    """arsim's compute of one iteration on one GPU of kind gpu, ms (the JSON's compute_s)."""
    scn = ("name: one\nmodel: %s\ngpu: %s\nprecision: %s\nbatch: [%d]\n"
           "cluster: {topology: star, nodes: 1, gpus_per_node: 1, link: {bandwidth: 100Gbps, latency: 1us}}\n"
           "policies:\n  - {name: none, overlap: none, algorithm: ring}\n"
           "iterations: {warmup: 1, measured: 2}\n" % (model, gpu, precision, batch))
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(scn)
    try:
        env = dict(os.environ, ARSIM_DATA=ROOT)
        out = subprocess.run([arsim, "run", f.name, "--json", "-"], capture_output=True, text=True, env=env,
                             check=True).stdout
    finally:
        os.unlink(f.name)
    return json.loads(out)["results"][0]["compute_s"] * 1e3


def h100_table():
    """validate/h100/table.py as a module (its trial refit and the FLOP model's terms; needs PyYAML)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("h100_table", os.path.join(ROOT, "validate", "h100", "table.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def refit_ratios(cases):
    """{case: H200 / H100 step} under the H100's trial refit (one memory efficiency, conv and GEMM tensor
    scales fitted to the H100's measured steps), the H200 differing only in memory bandwidth; tensor-core
    cases only (the refit leaves fp32 alone)."""
    t = h100_table()
    memeff, conv, gemm = t.refit(t.refit_cases())
    g = t.gen_gpus()
    h100 = [x for x in g.GPUS if x[0] == "h100"][0]
    h200 = h100[:5] + (H200_BPS / 1e9,) + h100[6:]
    eff = {k: min(1.0, (conv if k in g.CONV_KINDS else gemm) * g.SHAPE[k]) for k in g.KINDS}

    def step(gpu, model, prec, batch):
        layers = g.load_model(ROOT, model)
        s = sum(t.layer_ms(g, gpu, l, prec, batch, eff, memeff, 1.0) for l in layers)
        return s + sum(l["params"] * g.UPDATE_BYTES / (gpu[5] * 1e9 * memeff) * 1e3 + gpu[6] * 1e-3
                       for l in layers if l["params"] > 0)
    return {k: step(h200, *k) / step(h100, *k) for k in cases if k[1] != "fp32"}


def err(pred, meas):
    return "%+.0f %%" % (100.0 * (pred / meas - 1.0))


def steps(arsim, with_refit):
    h200 = load(os.path.join(HERE, "timings-plain.jsonl"))
    runs = [load(os.path.join(ROOT, "validate", "h100", "timings-plain-run%d.jsonl" % i)) for i in (1, 2)]
    refit = refit_ratios(h200) if with_refit else None
    print("| model | precision | batch | H200 measured (ms) | arsim h200 (ms) | error | H100 measured (ms) | "
          "arsim h100 (ms) | error | H200 / H100 measured | arsim |" + (" refit |" if refit else ""))
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|" + ("---:|" if refit else ""))
    errs, both = [], []
    for key, m200 in h200.items():
        model, prec, batch = key
        a200 = compute_ms(arsim, "h200", model, prec, batch)
        a100 = compute_ms(arsim, "h100", model, prec, batch)
        errs.append(a200 / m200 - 1.0)
        ref = [r[key] for r in runs if key in r]
        if ref:
            m100 = sum(ref) / len(ref)
            both.append((a200 / m200 - 1.0, a100 / m100 - 1.0, m200 / m100, a200 / a100,
                         refit.get(key) if refit else None))
            rest = "%.1f | %.1f | %s | %.2f | %.2f" % (m100, a100, err(a100, m100), m200 / m100, a200 / a100)
        else:
            rest = "– | %.1f | – | – | %.2f" % (a100, a200 / a100)
        if refit:
            rest += " | %s" % ("%.2f" % refit[key] if key in refit else "–")
        print("| %s | %s | %d | %.1f | %.1f | %s | %s |" % (model, prec, batch, m200, a200, err(a200, m200), rest))
    print()
    mean = lambda xs: sum(xs) / len(xs)
    print("h200: %d cases, error %+.0f %% .. %+.0f %%, mean |error| %.0f %%"
          % (len(errs), 100 * min(errs), 100 * max(errs), 100 * mean([abs(e) for e in errs])))
    print("measured on both GPUs, %d cases: mean |error| h200 %.0f %%, h100 %.0f %%; H200 / H100 mean: measured "
          "%.3f, arsim %.3f" % (len(both), 100 * mean([abs(b[0]) for b in both]), 100 * mean([abs(b[1]) for b in both]),
                                mean([b[2] for b in both]), mean([b[3] for b in both]))
          + (", refit %.3f (tensor cores: measured %.3f)" % (mean([b[4] for b in both if b[4]]),
                                                             mean([b[2] for b in both if b[4]])) if refit else ""))


def block_ms():
    """One Llama 3 8B block at batch 2 x 8192 as llama_step.py trains it on one GPU (op-level SAC, FSDP2 world
    1), under gen_llama3_titan's per-kernel model: GEMMs at the rate measured on the 700 W H100 80GB (the same
    GH100 at the same power), cuDNN's attention (the measuring torch 2.11's choice on Hopper) as calibrated
    there, element-wise kernels at bandwidth x the copy efficiency measured there; forward, backward,
    SAC's recompute, two all-gather copy-outs, one reduce-scatter copy-in, and AdamW + clipping at 92 bytes a
    parameter.  {gpu: ms} at the H100's and the H200's bandwidth."""
    sys.path.insert(0, os.path.join(ROOT, "models", "gen"))
    import gen_llama3_titan as g
    rates, eff, _, h100, _ = g.gpus()
    blk = g.block_terms("llama3-8b", g.BATCH, "titan")
    d, _, kv, f = g.SHAPES["llama3-8b"]
    params = 2 * d * d + 2 * d * kv * (d // g.SHAPES["llama3-8b"][1]) + 3 * d * f + 2 * d
    out = {}
    for name, bps in (("h100", g.H100_BPS), ("h200", H200_BPS)):
        gpu = g.Gpu(rates["gemm"], bps * eff, h100.af, h100.ab)
        s = sum(gpu.secs(blk[l]["fwd"]) + gpu.secs(blk[l]["bwd"], True)
                for l in ("attention_norm", "attention", "ffn_norm", "feed_forward"))
        s += gpu.secs(blk["recompute"]) + 2 * gpu.secs(blk["copy_out"]) + gpu.secs(blk["copy_in"])
        out[name] = (s + params * 92 / bps) * 1e3
    return out


def llama():
    rows = {}
    with open(os.path.join(HERE, "fsdp", "llama_step.jsonl")) as f:
        for line in f:
            r = json.loads(line)
            if r.get("kind") == "case" and "error" not in r and r["alloc_conf"] == "expandable_segments:True":
                rows[(r["layers"], r["ac"])] = r["median_iter_ms"]
    slope = (rows[(4, "selective")] - rows[(2, "selective")]) / 2
    model = block_ms()
    print()
    print("| Llama 3 8B, one block (op-level SAC, batch 2 x 8192) | ms | error |")
    print("|---|---:|---:|")
    print("| measured on the H200: (L4 - L2) / 2 of the median iteration | %.1f | |" % slope)
    print("| per-kernel model, H200 (4.8 TB/s) | %.1f | %s |" % (model["h200"], err(model["h200"], slope)))
    print("| per-kernel model, H100 80GB (3.35 TB/s) | %.1f | %s |" % (model["h100"], err(model["h100"], slope)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arsim", default=os.path.join(ROOT, "arsim"), help="the arsim binary")
    ap.add_argument("--refit", action="store_true",
                    help="add the H200 / H100 ratio under validate/h100/table.py --refit (needs PyYAML; ~20 s)")
    a = ap.parse_args()
    steps(os.path.abspath(a.arsim), a.refit)
    llama()
    return 0


if __name__ == "__main__":
    sys.exit(main())
