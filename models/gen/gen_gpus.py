#!/usr/bin/env python3
"""gen_gpus.py - fit models/gpus.yaml to published single-GPU training times.

MAINTAINER TOOL.  Not needed to build, test or run arsim: its output is
committed.  Running it again reproduces it byte for byte:

    python3 models/gen/gen_gpus.py            # rewrite models/gpus.yaml
    python3 models/gen/gen_gpus.py --check    # exit 1 if the committed file differs
    python3 models/gen/gen_gpus.py --table    # print the table of docs/explanation/compute-model.md (markdown)

Inputs: the datasheet peaks below (docs/dev/references.md section 5), the model
files models/*.yaml and the published figures of
validate/torch/published.yaml (docs/dev/references.md section 8).  Needs PyYAML.

arsim's compute model (sim/train/gpu.h), replicated here for the fit: a
layer's forward at batch b takes
    max(F * b / (peak * eff[kind]), mem_bytes * b * bytes(prec) / 4 / mem) + launch
backward twice both terms, an update params * 12 / mem + launch, where F is
the layer's FLOPs, divided by the GPU's `winograd` factor for a 3x3
stride-1 convolution on the CUDA cores; on tensor cores (tf32, fp16) peak
and eff are the tensor ones and F is the direct count.

What is fitted (least squares of log(predicted / published)):
  * winograd: one factor for cuDNN's fast 3x3 algorithms, from the V100's
    fp32 figures (VGG-16, all of whose convolutions are 3x3 stride 1, and
    ResNet-50, where only 13 of 53 convolutions are; BERT has none), shared
    by every GPU;
  * per GPU and path (CUDA cores; tensor cores), two scales of the kind
    shape SHAPE: efficiency[kind] = min(1, s * SHAPE[kind]) with s the
    convolution kinds' scale (conv, norm, pool, act) or the GEMM kinds'
    (fc, attention, embedding, default), fitted together to that GPU's
    figures on that path; without BERT figures the GEMM scale is the conv
    one.  A path without figures takes the V100's scales.
BERT's published runs are SQuAD fine-tuning at sequence 384: they are
predicted with models/bert-base-384.yaml (the QA head, 2 x 768 weights, left
out).  TensorFlow's figures are shown by --table but not fitted.
"""

import argparse
import math
import os
import sys

import yaml

KINDS = ("conv", "fc", "norm", "embedding", "attention", "pool", "act", "default")
# efficiency of each kind relative to conv (GEMMs near conv; the memory-bound
# kinds are limited by the roofline's memory term, their FLOP rate matters little)
SHAPE = {"conv": 1.0, "fc": 1.0, "norm": 0.5, "embedding": 0.5, "attention": 0.9,
         "pool": 0.5, "act": 0.5, "default": 0.9}
UPDATE_BYTES = 12   # arsim's compute.update_bytes_per_param default
BWD_RATIO = 2.0

# memory capacity per GPU, GiB (datasheets: the 1080 Ti's 11 GB GDDR5X, the
# V100's 32 GB, the A100's and the H100's 80 GB of HBM are GiB)
MEMORY_GIB = {"gtx1080ti": 11, "v100": 32, "a100": 80, "h100": 80}

GPUS = [
    # key, name, fp32, tf32 (dense tensor, 0 none), fp16 (dense tensor, 0 none), mem GB/s, launch us
    ("gtx1080ti", "NVIDIA GeForce GTX 1080 Ti", 11.3, 0, 0, 484, 6),
    ("v100", "NVIDIA V100 SXM2 32GB", 15.7, 0, 125, 900, 5),
    ("a100", "NVIDIA A100 SXM4 80GB", 19.5, 156, 312, 2039, 4),
    ("h100", "NVIDIA H100 SXM5 80GB", 67, 494.7, 989, 3350, 4),
]
PREC_BYTES = {"fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2}
# streaming multiprocessors (NVIDIA's architecture white papers: GP102 in the
# GTX 1080 Ti 28, GV100 in the V100 80, GA100 in the A100 108, GH100 in the
# H100 SXM5 132)
SMS = {"gtx1080ti": 28, "v100": 80, "a100": 108, "h100": 132}
OVERLAP_RUNS = ("run1", "run2")   # validate/h100/overlap/: the kept runs the overlap fit reads
# GPUs derived from a fitted one (not fitted themselves): key, base, name, mem
# GB/s, memory GiB, the share of the base's compute peaks. h100gt is
# torchtitan's benchmark GPU (benchmarks/llama3_h100_202412_torchtitan.md: 96 GB
# HBM2e at 2.4 TB/s, 500 W power limit); its peaks are the H100 SXM's scaled by
# gen_llama3_titan.POWER (assumed: docs/explanation/sharding.md, "The torchtitan
# check"); 96 GB = 89.4 GiB.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_llama3_titan  # noqa: E402
#
# h200 is the H200 SXM (NVIDIA's H200 product page and datasheet, docs/dev/references.md section 5):
# the H100 SXM's GH100 die, 132 SMs and 700 W, so its dense peaks are the H100 SXM's (share 1);
# 141 GB of HBM3e at 4.8 TB/s.  The board reports 143,771 MiB (validate/h200/env.txt), 140.4 GiB:
# 140.  The H100's fitted efficiencies, overlap fractions and DDP costs carry over unchanged (same
# SMs and clocks, the same host side); the overlap's channel rates scale with memory bandwidth as
# for every GPU (overlap_params).
DERIVED = [("h100gt", "h100", "NVIDIA H100 96GB HBM2e 500W", 2400, 89, gen_llama3_titan.POWER),
           ("h200", "h100", "NVIDIA H200 SXM 141GB", 4800, 140, 1.0)]


def titan_copy_efficiency():
    """The share of the H100's HBM bandwidth its 1 GiB copy reached (validate/h100/overlap), the rate
    gen_llama3_titan.py gives the titan file's memory-bound kernels: h100gt's update and FSDP2's
    copies run at the same rate."""
    return gen_llama3_titan.load_rates()["copy"] / gen_llama3_titan.H100_BPS


def root_dir():
    return os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def load_model(root, name):
    with open(os.path.join(root, "models", name + ".yaml"), encoding="utf-8") as fh:
        return yaml.safe_load(fh)["layers"]


def tensor_peak(gpu, prec):
    _, _, f32, tf32, f16, _, _ = gpu
    return tf32 if prec == "tf32" else 0 if prec == "fp32" else f16


def predict_s(gpu, layers, prec, batch, eff, wino, step):
    """Seconds of forward + backward (+ update when step) on one GPU."""
    _, _, f32, _, _, mem, launch = gpu
    tensor = tensor_peak(gpu, prec)
    peak = (tensor if tensor > 0 else f32) * 1e12
    membw = mem * 1e9
    pb = PREC_BYTES[prec] / 4.0
    total = 0.0
    for l in layers:
        flops = l["flops"]
        if l.get("winograd") and tensor <= 0:
            flops /= wino
        e = eff[l["kind"]]
        for mult in (1.0, BWD_RATIO):
            tf = mult * flops * batch / (peak * e)
            tm = mult * l["mem_bytes"] * batch * pb / membw
            total += max(tf, tm) + launch * 1e-6
        if step and l["params"] > 0:
            total += l["params"] * UPDATE_BYTES / membw + launch * 1e-6
    return total


CONV_KINDS = ("conv", "norm", "pool", "act")


def effs(scales):
    """scales = (conv kinds' scale, GEMM kinds' scale)."""
    return {k: min(1.0, scales[0 if k in CONV_KINDS else 1] * SHAPE[k]) for k in KINDS}


def entry_ms(e):
    return e["ms_per_iteration"] if "ms_per_iteration" in e else e["derived_ms_per_iteration"]


def is_step(e):
    return not e["what"].startswith("forward + backward")


def model_of(e):
    """The model file of an entry: BERT's published runs are at sequence 384."""
    return e["model"] + "-384" if "matches" in e else e["model"]


def sq_err(gpu, models, entries, scales, wino):
    s = 0.0
    for e in entries:
        p = predict_s(gpu, models[model_of(e)], e["precision"], e["batch"], effs(scales), wino, is_step(e)) * 1e3
        s += math.log(p / entry_ms(e)) ** 2
    return s


def argmin_log(f, lo, hi, iters=60):
    """Ternary search of a unimodal f over [lo, hi] in log space."""
    lo, hi = math.log(lo), math.log(hi)
    for _ in range(iters):
        a, b = lo + (hi - lo) / 3, hi - (hi - lo) / 3
        if f(math.exp(a)) < f(math.exp(b)):
            hi = b
        else:
            lo = a
    return math.exp((lo + hi) / 2)


def fit_scales(gpu, models, entries, wino):
    """(conv scale, GEMM scale): one scale for both, then, where BERT figures
    are among the entries, alternately each with the other held."""
    err = lambda sc: sq_err(gpu, models, entries, sc, wino)
    s = argmin_log(lambda x: err((x, x)), 0.01, 2.0)
    if not any(model_of(e).startswith("bert") for e in entries):
        return (s, s)
    sc, sg = s, s
    for _ in range(6):
        sc = argmin_log(lambda x: err((x, sg)), 0.01, 2.0)
        sg = argmin_log(lambda x: err((sc, x)), 0.01, 2.0)
    return (sc, sg)


def on_tensor(gpu, prec):
    return tensor_peak(gpu, prec) > 0


def fit(root):
    with open(os.path.join(root, "validate", "torch", "published.yaml"), encoding="utf-8") as fh:
        pub = yaml.safe_load(fh)["entries"]
    pub = [e for e in pub if not e["framework"].startswith("TensorFlow")]   # arsim models PyTorch
    models = {m: load_model(root, m) for m in sorted({model_of(e) for e in pub})}
    gpus = {g[0]: g for g in GPUS}
    v100 = gpus["v100"]
    v100_cuda = [e for e in pub if e["gpu"] == "v100" and not on_tensor(v100, e["precision"])]
    # the Winograd factor: ternary search over [1, 4], the V100's scales fitted at each; 2 decimals
    werr = lambda w: sq_err(v100, models, v100_cuda, fit_scales(v100, models, v100_cuda, w), w)
    lo, hi = 1.0, 4.0
    for _ in range(30):
        a, b = lo + (hi - lo) / 3, hi - (hi - lo) / 3
        if werr(a) < werr(b):
            hi = b
        else:
            lo = a
    wino = round((lo + hi) / 2, 2)
    fitted = {}
    for key, gpu in gpus.items():
        row = {}
        for tensor in (False, True):
            ents = [e for e in pub if e["gpu"] == key and on_tensor(gpu, e["precision"]) == tensor]
            nb = sum(1 for e in ents if model_of(e).startswith("bert"))
            row[tensor] = (fit_scales(gpu, models, ents, wino), len(ents) - nb, nb) if ents else None
        fitted[key] = row
    for key in fitted:
        for tensor in (False, True):
            if fitted[key][tensor] is None:
                fitted[key][tensor] = (fitted["v100"][tensor][0], 0, 0)
    return pub, models, gpus, wino, fitted


def overlap_params(root, gpus, fitted):
    """The overlap mechanism's and DDP's parameters per GPU: fitted to the
    H100 runs (validate/h100/overlap_fit.py); the other GPUs take the
    dimensionless ones as they are and the channel rates scaled by memory
    bandwidth per SM (one channel) and by memory bandwidth (all): assumed,
    not measured."""
    sys.path.insert(0, os.path.join(root, "validate", "h100"))
    import overlap_fit
    import overlap_table
    runs = [os.path.join(root, "validate", "h100", "overlap", r) for r in OVERLAP_RUNS]
    h = gpus["h100"]
    entry = {"tf32_tflops": h[3], "fp16_tflops": h[4], "mem_GBps": h[5],
             "tensor_efficiency": {k: float("%.3f" % v) for k, v in effs(fitted["h100"][True][0]).items()}}
    p, _ = overlap_fit.fit_interference(runs, overlap_table.load, entry)
    terms, _ = overlap_fit.ddp_terms(runs, overlap_table.load, h[5])
    out = {}
    rows = [(key, g[5], SMS[key]) for key, g in gpus.items()] + [(d[0], d[3], SMS[d[1]]) for d in DERIVED]
    for key, mem, sms in rows:
        scale = (mem / sms) / (h[5] / SMS["h100"])
        out[key] = {
            "overlap": [("floor", "%.3f" % p["phi"]), ("comm_compute", "%.3f" % p["sigma_c"]),
                        ("comm_memory", "%.2f" % p["sigma_m"]), ("comm_relief", "%.2f" % p["lambda"]),
                        ("channel_GBps", "%.1f" % (p["c"] * scale)),
                        ("channels_GBps", "%d" % round(p["C"] * mem / h[5], -1))],
            "ddp": [("hook_us", "%.1f" % (terms["hook"] * 1e6)), ("sync_us", "%.1f" % (terms["sync"] * 1e6)),
                    ("copy_us", "%.1f" % (terms["copy"] * 1e6)), ("bucket_us", "%.1f" % (terms["bucket"] * 1e6)),
                    ("rebuild_ms", "%.2f" % (terms["rebuild"] * 1e3))]}
    return out


def fmt_num(x):
    return ("%d" % x) if float(x).is_integer() else repr(x)


def emit(pub, gpus, wino, fitted, ovl):
    out = [
        "# models/gpus.yaml - GPU specifications for arsim's per-layer compute model.",
        "# Generated by models/gen/gen_gpus.py (maintainer tool) - do not edit by hand.",
        "# Peaks are vendor datasheet figures (dense, no sparsity), docs/dev/references.md",
        "# section 5: GTX 1080 Ti (Pascal GP102: 11.3 TFLOP/s FP32, 484 GB/s GDDR5X),",
        "# V100 SXM2 (15.7 FP32, 125 FP16 tensor core, 900 GB/s HBM2), A100 SXM4 80GB",
        "# (19.5 FP32, 156 TF32 and 312 FP16/BF16 tensor core, 2039 GB/s HBM2e), H100",
        "# SXM5 (67 FP32, 494.7 TF32 and 989 FP16/BF16 tensor core, 3350 GB/s HBM3), H200",
        "# SXM (the H100 SXM's peaks, 4800 GB/s HBM3e).",
        "#   fp32_tflops  peak FP32 (CUDA-core) rate, TFLOP/s",
        "#   tf32_tflops  peak dense TF32 tensor-core rate; 0 = none (tf32 runs as fp32)",
        "#   fp16_tflops  peak dense FP16/BF16 tensor-core rate; 0 = none (fp16 runs on",
        "#                the CUDA cores at the fp32 rate)",
        "#   mem_GBps     peak memory bandwidth, 10^9 bytes/s",
        "#   memory_GiB   memory capacity, 2^30 bytes (what a run's memory_peak_bytes must fit)",
        "#   launch_us    per-kernel launch/dispatch overhead, added per layer per pass",
        "#                (an estimate)",
        "#   winograd     the factor by which a 3x3 stride-1 convolution (a layer with",
        "#                winograd: true) does fewer FLOPs on the CUDA cores: cuDNN's",
        "#                Winograd algorithms (Lavin & Gray 2016: 2.25x fewer multiplies",
        "#                for F(2x2,3x3), 4x for F(4x4,3x3)); 1 = direct convolution",
        "#   interference a fixed fraction by which compute slows while a sync is in",
        "#                flight (comm.interference's default): 0, none; `overlap` below",
        "#                gives the slow-down from the task and the sync instead",
        "#   comm_slowdown a fixed fraction by which a sync slows while compute runs",
        "#                (comm.slowdown's default): 0, likewise",
        "#   sms          streaming multiprocessors (NVIDIA's architecture white papers)",
        "#   overlap      the overlap mechanism (sim/train/interfere.h,",
        "#                docs/explanation/gpu-overlap.md): floor, the compute-bound",
        "#                slow-down beyond the SM share once a channel is resident;",
        "#                comm_compute and comm_memory, a sync's slow-down beside",
        "#                compute- and memory-bound work, divided by 1 + comm_relief k/S;",
        "#                channel_GBps and channels_GBps, k channels alone move",
        "#                k c / (1 + k c / C). Fitted to the H100 runs of",
        "#                validate/h100/overlap (overlap_fit.py); the other GPUs take",
        "#                the fractions as they are and the rates scaled by memory",
        "#                bandwidth per SM (c) and memory bandwidth (C): assumed",
        "#   ddp          DDP's own costs (sim/train/ddpcost.h): per gradient tensor",
        "#                hook_us (hooks), sync_us (the reducer's work when it syncs),",
        "#                copy_us (each bucket copy's kernel), per bucket bucket_us,",
        "#                once rebuild_ms; fitted to the H100 world-size-1 runs, the",
        "#                same on every GPU (host-side costs, not measured elsewhere)",
        "#   efficiency   fraction of the CUDA-core peak a layer of that kind achieves",
        "#   tensor_efficiency  fraction of the tensor-core peak (tf32, fp16, bf16)",
        "# Fitted (least squares of log predicted/published) to the PyTorch figures of",
        "# validate/torch/published.yaml (docs/dev/references.md section 8): winograd",
        "# %.2f from the V100's fp32 figures, shared by every GPU; per GPU and path" % wino,
        "# (CUDA cores, tensor cores) two scales of a kind shape (capped at 1): the",
        "# convolution kinds (conv 1, norm/pool/act 0.5) and the GEMM kinds (fc 1,",
        "# attention 0.9, embedding 0.5, default 0.9); the GEMM scale is BERT's where",
        "# the path has BERT figures, else the conv scale. Figures (CNN + BERT):",
    ]
    for key, _ in ((g[0], g) for g in GPUS):
        parts = []
        for tensor, what in ((False, "CUDA cores"), (True, "tensor cores")):
            n, nb = fitted[key][tensor][1], fitted[key][tensor][2]
            if tensor and not (gpus[key][3] or gpus[key][4]):
                continue   # no tensor cores
            parts.append("%s %s" % (what, ("%d + %d" % (n, nb)) if n + nb else "none (V100's scales)"))
        out.append("#   %-10s %s" % (key, "; ".join(parts)))
    out.append("gpus:")
    out.append("# h100gt: torchtitan's H100 (96 GB HBM2e, 2.4 TB/s, 500 W), derived from h100: peaks")
    out.append("# x %.4f (assumed, docs/explanation/sharding.md \"The torchtitan check\"), h100's fits" % DERIVED[0][5])
    out.append("# h200: the H200 SXM (141 GB HBM3e, 4.8 TB/s, 700 W), derived from h100: the same GH100 die,")
    out.append("# SMs and peaks, h100's fits; only memory bandwidth and capacity differ")
    rows = [g + (MEMORY_GIB[g[0]], g[0]) for g in GPUS]
    for key, base, name, mem, gib, share in DERIVED:
        b = gpus[base]
        rows.append((key, name, round(b[2] * share, 1), round(b[3] * share, 1), round(b[4] * share, 1), mem, b[6],
                     gib, base))
    for key, name, f32, tf32, f16, mem, launch, gib, fit in rows:
        out.append("  %s:" % key)
        out.append('    name: "%s"' % name)
        out.append("    fp32_tflops: %s" % fmt_num(f32))
        out.append("    tf32_tflops: %s" % fmt_num(tf32))
        out.append("    fp16_tflops: %s" % fmt_num(f16))
        out.append("    mem_GBps: %s" % fmt_num(mem))
        out.append("    memory_GiB: %d" % gib)
        if key == "h100gt":   # the copy rate gen_llama3_titan times the file's memory kernels at
            out.append("    mem_efficiency: %.3f" % titan_copy_efficiency())
        out.append("    launch_us: %s" % fmt_num(launch))
        out.append("    winograd: %.2f" % wino)
        out.append("    interference: 0")
        out.append("    comm_slowdown: 0")
        out.append("    sms: %d" % SMS[fit])
        for field in ("overlap", "ddp"):
            out.append("    %s: {%s}" % (field, ", ".join("%s: %s" % kv for kv in ovl[key][field])))
        for tensor, field in ((False, "efficiency"), (True, "tensor_efficiency")):
            if tensor and not (tf32 or f16):
                continue   # no tensor cores
            e = effs(fitted[fit][tensor][0])
            out.append("    %s: {%s}" % (field, ", ".join("%s: %.3f" % (k, e[k]) for k in KINDS)))
    return "\n".join(out) + "\n"


def table(pub_all, models, gpus, wino, fitted, root):
    """The table of docs/explanation/compute-model.md, from the rounded values of the emitted file."""
    with open(os.path.join(root, "models", "gpus.yaml"), encoding="utf-8") as fh:
        g = yaml.safe_load(fh)["gpus"]
    rows = ["| model | GPU | precision | batch | covers | framework | published (ms) | arsim (ms) | error |",
            "|---|---|---|---:|---|---|---:|---:|---:|"]
    for e in pub_all:
        name = model_of(e)
        if name not in models:
            models[name] = load_model(root, name)
        gpu = gpus[e["gpu"]]
        tensor = on_tensor(gpu, e["precision"])
        eff = g[e["gpu"]]["tensor_efficiency" if tensor else "efficiency"]
        p = predict_s(gpu, models[name], e["precision"], e["batch"], eff, g[e["gpu"]]["winograd"],
                      is_step(e)) * 1e3
        m = entry_ms(e)
        fw = "TensorFlow" if e["framework"].startswith("TensorFlow") else "PyTorch"
        rows.append("| %s | %s | %s | %d | %s | %s | %.1f | %.1f | %+.0f %% |" % (
            name, e["gpu"], e["precision"], e["batch"], "step" if is_step(e) else "fwd+bwd",
            fw, m, p, 100 * (p / m - 1)))
    return "\n".join(rows) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="compare with models/gpus.yaml; write nothing")
    ap.add_argument("--table", action="store_true", help="print docs/explanation/compute-model.md's published-vs-arsim table")
    args = ap.parse_args()
    root = root_dir()
    pub, models, gpus, wino, fitted = fit(root)
    text = emit(pub, gpus, wino, fitted, overlap_params(root, gpus, fitted))
    path = os.path.join(root, "models", "gpus.yaml")
    if args.table:
        with open(os.path.join(root, "validate", "torch", "published.yaml"), encoding="utf-8") as fh:
            sys.stdout.write(table(yaml.safe_load(fh)["entries"], models, gpus, wino, fitted, root))
        return 0
    if args.check:
        with open(path, encoding="utf-8") as fh:
            same = fh.read() == text
        if not same:
            print("DIFFERS: models/gpus.yaml")
        return 0 if same else 1
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)
    print("winograd %.2f" % wino)
    for key in fitted:
        c, t = fitted[key][False], fitted[key][True]
        print("%-10s cuda conv %.4f gemm %.4f (%d+%d figures)  tensor conv %.4f gemm %.4f (%d+%d figures)" % (
            key, c[0][0], c[0][1], c[1], c[2], t[0][0], t[0][1], t[1], t[2]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
