#!/usr/bin/env python3
"""gen_llama3_titan.py - write models/llama3-8b-titan.yaml, Llama 3 8B as
torchtitan's published FSDP benchmark trains it (torchtitan 9dec370 of
2024-12-26, eager, op-level selective activation checkpointing, FSDP2 with
bf16 parameters) on its GPU (an H100 SXM with 96 GB of HBM2e at 2.4 TB/s,
run at a 500 W power limit: gpu h100gt of models/gpus.yaml).

MAINTAINER TOOL.  Not needed to build, test or run arsim: its output is
committed.  Running it again reproduces it byte for byte:

    python3 models/gen/gen_llama3_titan.py           # rewrite the file
    python3 models/gen/gen_llama3_titan.py --check   # exit 1 if it differs
    python3 models/gen/gen_llama3_titan.py --table   # calibration, 70B check, terms
    python3 models/gen/gen_llama3_titan.py --steps   # an 8-GPU iteration, step by step
    python3 models/gen/gen_llama3_titan.py --terms   # one block's work, exact integers

It also writes Llama 3 8B at reduced depths (DEPTHS: the embedding, the
first N blocks, the final norm and the output), the files the one-GPU
measurement is compared with (validate/fsdp/llama_table.py,
docs/explanation/sharding.md "Against one GPU's measured memory"):
validate/fsdp/models/llama3-8b-titan-Nblocks.yaml (this file's layers, its
times computed for N blocks) and llama3-8b-Nblocks.yaml (the block-
level layers, llama3_base.load_layers, no times); --check covers them too.

How a layer's time is made (docs/explanation/sharding.md, "The torchtitan
check"): every kernel of the block as torchtitan's code issues it, each
timed by what bounds it:
  * a matrix product: its FLOPs at the rate a bf16 8192^3 GEMM ran on the
    H100 80GB (validate/h100/overlap/run1/interference.jsonl, median),
    times POWER, the 500 W cap's share of the 700 W rate (assumed: the
    dense bf16 peak interpolated in board power between the H100 NVL's
    835 TFLOP/s at 400 W and the H100 SXM's 989 at 700 W);
  * an element-wise or reduction kernel: the bytes it reads and writes at
    HBM bandwidth times the efficiency a 1 GiB device copy reached on the
    H100 80GB (the same file);
  * flash attention: the time the measured block (validate/h100/overlap/
    run1/llama.jsonl) has left once its matrix products and element-wise
    kernels are taken out, per FLOP of the causal core, plus what
    FlashAttention-2 (torchtitan's SDPA kernel) takes over cuDNN's attention
    (the measuring torch's), both as the FlashAttention-3 paper measured
    them on an H100 80GB; that time / POWER.
The block's kernels (the recompute of op-level SAC included) are listed in
block_terms(), with FSDP2's all-gather copy-out and reduce-scatter copy-in,
which the file does not carry: arsim's fsdp2 policy adds them (sim/train/
shardcopy.h), and --steps and --terms print them; the output layer
carries the measured head and loss, its product scaled by POWER and the
loss (memory-bound) by the bandwidth ratio.  act_bytes are what op-level
SAC saves.  Standard library only.
"""

import argparse
import json
import os
import sys

from llama3_layers import TITAN_BYTES
from llama3_base import ROOT, load_layers, layer_line, write_or_check

RUN = os.path.join(ROOT, "validate", "h100", "overlap", "run1")
OUT = os.path.join(ROOT, "models", "llama3-8b-titan.yaml")
DEPTH_DIR = os.path.join(ROOT, "validate", "fsdp", "models")
DEPTHS = (2, 4)
BATCH = 2
SEQ = 8192
VOCAB = 128256
H100_BPS = 3.35e12          # H100 SXM 80GB HBM3, the measuring GPU
GT_BPS = 2.4e12             # torchtitan's H100: 96 GB HBM2e at 2.4 TB/s
PEAK_700, PEAK_NVL = 989.0, 835.0   # dense bf16 TFLOP/s: H100 SXM (700 W), H100 NVL (400 W)
POWER = (PEAK_NVL + (PEAK_700 - PEAK_NVL) * (500 - 400) / (700 - 400)) / PEAK_700
# SDPA's kernel, TFLOP/s on an H100 80GB SXM5 (FlashAttention-3 paper, Shah et al. 2024, arXiv 2407.08608,
# figures 5 and 6: bf16, head dim 128, sequence 8k, 16k tokens; FLOPs 4 S^2 hd a head forward, halved when
# causal, 2.5 x that backward).  torchtitan's torch (2024-12) puts flash first in SDPA's order: FlashAttention-2;
# the measuring torch (2.11, cuDNN 9.19) prefers cuDNN's attention on an H100.
FA2_FWD, CUDNN_FWD = 333.0, 529.0     # forward, causal
FA2_BWD, CUDNN_BWD = 318.0, 518.0     # backward
SHAPES = {"llama3-8b": (4096, 32, 8, 14336), "llama3-70b": (8192, 64, 8, 28672)}


def load_rates():
    """GEMM FLOP/s and copy bytes/s on the H100 80GB, alone (k = 0)."""
    r = {}
    with open(os.path.join(RUN, "interference.jsonl")) as f:
        for line in f:
            e = json.loads(line)
            if e.get("k") == 0 and e["workload"] == "gemm-bf16-8192":
                r["gemm"] = 2.0 * 8192 ** 3 / (e["median_ms"] * 1e-3)
            if e.get("k") == 0 and e["workload"] == "copy-1GiB":
                r["copy"] = 2.0 * 2 ** 30 / (e["median_ms"] * 1e-3)
    return r


def load_parts():
    parts = {}
    with open(os.path.join(RUN, "llama.jsonl")) as f:
        for line in f:
            e = json.loads(line)
            if e["batch"] == BATCH:
                parts[(e["model"], e["part"])] = e
    return parts


def block_terms(model, b, variant):
    """One block's work at batch b, per layer and pass: GEMM FLOPs, flash
    attention's causal-core FLOPs and element-wise bytes.  variant "titan":
    torchtitan's kernels (eager RMSNorm in fp32, rotary through complex
    fp32, repeat_kv copies, op-level SAC, FSDP2's all-gather copy-out);
    "probe": the kernels of the measuring script (validate/h100/
    overlap_cost.py: a lighter RMSNorm, rotary in bf16, GQA inside SDPA, no
    checkpointing, no FSDP).  Returns {layer: {"fwd"|"bwd": {"gemm", "attn",
    "mem"}}} with exact integers; recompute and copy-out in their own keys."""
    d, heads, kv, f = SHAPES[model]
    hd = d // heads
    dkv = kv * hd
    t = b * SEQ                                   # tokens
    nd, nr, nkv, nf = t * d, t * (d + dkv), t * dkv, t * f
    core = b * heads * (SEQ * (SEQ + 1) // 2) * (4 * hd + 5)   # as models/llama3-8b.yaml counts it
    titan = variant == "titan"
    # bytes per element, forward / backward (reads + writes of each eager kernel; the list in sharding.md):
    # torchtitan's as models/llama3-8b.yaml counts them (llama3_layers.TITAN_BYTES), the probe's lighter ones
    B = TITAN_BYTES
    norm = B["norm"] if titan else (26, 60)
    rope = B["rope"] if titan else (20, 28)
    rep = B["repeat_kv"] if titan else (0, 0)     # per K/V element: repeat_kv's copies of K and V
    silu_mul, resid = B["silu_mul"], B["resid"]
    g = {"wq": 2 * t * d * d, "wk": 2 * t * d * dkv, "wv": 2 * t * d * dkv, "wo": 2 * t * d * d,
         "w1": 2 * t * d * f, "w3": 2 * t * d * f, "w2": 2 * t * f * d}
    z = {"gemm": 0, "attn": 0, "mem": 0}

    def layer(gemm, attn, mem_f, mem_b):
        return {"fwd": dict(z, gemm=gemm, attn=attn, mem=mem_f), "bwd": dict(z, gemm=2 * gemm, attn=attn, mem=mem_b)}
    out = {
        "attention_norm": layer(0, 0, norm[0] * nd, norm[1] * nd),
        "attention": layer(g["wq"] + g["wk"] + g["wv"] + g["wo"], core,
                           rope[0] * nr + rep[0] * nkv + resid[0] * nd, rope[1] * nr + rep[1] * nkv + resid[1] * nd),
        "ffn_norm": layer(0, 0, norm[0] * nd, norm[1] * nd),
        "feed_forward": layer(g["w1"] + g["w3"] + g["w2"], 0, silu_mul[0] * nf + resid[0] * nd,
                              silu_mul[1] * nf + resid[1] * nd),
    }
    if titan:
        # op-level SAC recomputes every kernel it does not save (mm outputs 1, 3, 5, 7 and SDPA's are
        # saved), up to the last tensor backward needs (the block's second residual add is not rerun)
        out["recompute"] = dict(z, gemm=g["wk"] + g["wo"] + g["w3"],
                                mem=2 * norm[0] * nd + rope[0] * nr + rep[0] * nkv + silu_mul[0] * nf + resid[0] * nd)
        # FSDP2 copies each all-gathered block out of the gather buffer into its parameters (bf16 read + write)
        # and, before each reduce-scatter, the block's gradients into its input (chunk_cat: bf16 read, fp32
        # written), which the compute stream waits for: not in the model file (the engine's fsdp2 adds them,
        # sim/train/shardcopy.h), here for --steps and --terms
        params = 2 * d * d + 2 * d * dkv + 3 * d * f + 2 * d
        out["copy_out"] = dict(z, mem=4 * params)
        out["copy_in"] = dict(z, mem=6 * params)
    return out


def root_copy_in(d):
    """Bytes of the root's reduce-scatter copy-in: its parameters (both tables, the final norm) as bf16
    gradients read and fp32 written."""
    return 6 * (2 * VOCAB * d + d)


def saved_bytes(model):
    """Bytes op-level SAC keeps per sample per layer of a block (bf16, the lse in fp32)."""
    d, heads, kv, f = SHAPES[model]
    dkv = kv * (d // heads)
    return {"attention_norm": 2 * SEQ * d,                                       # the block's input
            "attention": 2 * SEQ * (d + dkv + d) + 4 * heads * SEQ,            # wq, wv, SDPA out + lse
            "ffn_norm": 0,
            "feed_forward": 2 * SEQ * (f + d)}                                  # w1, w2


class Gpu:
    def __init__(self, gemm, mem_bps, attn_f, attn_b, power=1.0):
        self.gemm, self.mem, self.af, self.ab, self.p = gemm, mem_bps, attn_f, attn_b, power

    def secs(self, w, bwd=False):
        return (w["gemm"] / (self.gemm * self.p) + w["attn"] * (self.ab if bwd else self.af) / self.p
                + w["mem"] / self.mem)


def calibrate():
    """Flash attention's seconds per core FLOP (forward, backward) on the H100 80GB: the measured
    llama3-8b block less its modelled GEMMs and element-wise kernels."""
    rates, parts = load_rates(), load_parts()
    eff = rates["copy"] / H100_BPS
    probe = block_terms("llama3-8b", BATCH, "probe")
    meas = parts[("llama3-8b", "block")]
    h = Gpu(rates["gemm"], H100_BPS * eff, 0, 0)
    rest = {}
    for pas, key in (("fwd", "fwd_ms"), ("bwd", "bwd_ms")):
        known = sum(h.secs(probe[l][pas]) for l in probe)
        core = sum(probe[l][pas]["attn"] for l in probe)
        rest[pas] = (meas[key] * 1e-3 - known) / core
    return rates, eff, parts, rest


def fa2_extra(model):
    """Seconds per causal-core FLOP (forward, backward) FlashAttention-2 takes over cuDNN's attention on the
    H100 80GB: the paper's FLOPs per core FLOP (2 S^2 hd against S(S+1)/2 (4 hd + 5), a head) times the
    difference of the inverse rates."""
    hd = SHAPES[model][0] // SHAPES[model][1]
    per_core = 2.0 * SEQ * SEQ * hd / (SEQ * (SEQ + 1) // 2 * (4 * hd + 5))
    return (per_core * (1 / FA2_FWD - 1 / CUDNN_FWD) * 1e-12,
            2.5 * per_core * (1 / FA2_BWD - 1 / CUDNN_BWD) * 1e-12)


def gpus():
    """The H100 80GB as measured (cuDNN's attention) and torchtitan's h100gt (FlashAttention-2)."""
    rates, eff, parts, rest = calibrate()
    ef, eb = fa2_extra("llama3-8b")
    h100 = Gpu(rates["gemm"], H100_BPS * eff, rest["fwd"], rest["bwd"])
    gt = Gpu(rates["gemm"], GT_BPS * eff, rest["fwd"] + ef, rest["bwd"] + eb, POWER)
    return rates, eff, parts, h100, gt


def layer_times(gt, parts, layers):
    """{name: (fwd_s, bwd_s)} at batch BATCH for every layer of llama3-8b."""
    blk = block_terms("llama3-8b", BATCH, "titan")
    d = SHAPES["llama3-8b"][0]
    nd = BATCH * SEQ * d
    head = parts[("llama3-8b", "head+loss")]
    hgemm = 2 * BATCH * SEQ * d * VOCAB
    out = {}
    for l in layers:
        name, leaf = l["name"], l["name"].split(".")[-1]
        if name == "tok_embeddings":   # a gather; backward zeroes the table's gradient and adds the rows
            out[name] = (gt.secs({"gemm": 0, "attn": 0, "mem": 4 * nd}),
                         gt.secs({"gemm": 0, "attn": 0, "mem": 2 * VOCAB * d + 6 * nd}))
        elif name == "norm":
            out[name] = (gt.secs(blk["attention_norm"]["fwd"]), gt.secs(blk["attention_norm"]["bwd"], True))
        elif name == "output":         # measured head + loss: the product at POWER, the loss at GT_BPS
            h100 = Gpu(gt.gemm, H100_BPS, 0, 0)
            out[name] = tuple(gt.secs({"gemm": k * hgemm, "attn": 0, "mem": 0})
                              + (head[key] * 1e-3 - h100.secs({"gemm": k * hgemm, "attn": 0, "mem": 0}))
                              * H100_BPS / GT_BPS for k, key in ((1, "fwd_ms"), (2, "bwd_ms")))
        else:
            f, b = gt.secs(blk[leaf]["fwd"]), gt.secs(blk[leaf]["bwd"], True)
            if leaf == "feed_forward":        # backward enters the block here: SAC's recompute
                b += gt.secs(blk["recompute"])
            out[name] = (f, b)
    return out


def truncate(layers, n):
    """layers with the blocks from n on taken out (the embedding, blocks 0 .. n-1, the final norm, the output)."""
    return [l for l in layers if not l["name"].startswith("layers.") or int(l["name"].split(".")[1]) < n]


def depth_header(n, titan):
    return ["# validate/fsdp/models/%s-%dblocks.yaml - %s at a reduced depth of %d blocks"
            % ("llama3-8b-titan" if titan else "llama3-8b", n,
               "models/llama3-8b-titan.yaml" if titan else "models/llama3-8b.yaml", n),
            "# (tok_embeddings, layers.0 .. layers.%d, norm, output), for the one-GPU measurement"
            " (validate/fsdp/llama_table.py)." % (n - 1),
            "# Generated by models/gen/gen_llama3_titan.py (maintainer tool) - do not edit by hand."]


def generate_base(n):
    """The block-level layers (llama3_base.load_layers) at depth n, no times."""
    layers = truncate(load_layers(), n)
    out = depth_header(n, False)
    out.append("name: llama3-8b-%dblocks" % n)
    out.append('description: "Llama 3 8B at %d blocks, sequence 8192 (models/llama3-8b.yaml truncated)"' % n)
    out.append("params: %d" % sum(l["params"] for l in layers))
    out.append("layers:")
    for l in layers:
        out.append("  - {name: %s, kind: %s, params: %d, tensors: %s, flops: %d, mem_bytes: %d, act_bytes: %d, "
                   "act_peak_bytes: %d}" % (l["name"], l["kind"], l["params"], l["tensors"], l["flops"],
                                            l["mem_bytes"], l["act_bytes"], l["act_peak_bytes"]))
    return "\n".join(out) + "\n"


def generate(depth=None):
    layers = load_layers() if depth is None else truncate(load_layers(), depth)
    rates, eff, parts, h100, gt = gpus()
    times = layer_times(gt, parts, layers)
    sb = saved_bytes("llama3-8b")
    out = depth_header(depth, True) if depth else []
    out.append("# models/llama3-8b-titan.yaml - Llama 3 8B as torchtitan's 2024-12 FSDP benchmark trains it (eager,")
    out.append("# op-level selective activation checkpointing, FSDP2 bf16) on its H100 (96 GB HBM2e 2.4 TB/s, 500 W).")
    out.append("# Generated by models/gen/gen_llama3_titan.py (maintainer tool) - do not edit by hand.")
    out.append("# Layers, parameters and FLOPs as models/llama3-8b.yaml.  fwd_ms/bwd_ms at batch 2: each kernel by")
    out.append("# what bounds it (GEMM %.1f TFLOP/s x power %.4f, element-wise at %.1f %% of 2.4 TB/s, flash attention"
               % (rates["gemm"] / 1e12, POWER, 100 * eff))
    out.append("# from the measured block, as FlashAttention-2), bwd_ms with SAC's recompute (FSDP2's copies: the")
    out.append("# engine's, under overlap: fsdp2);")
    out.append("# act_bytes what op-level SAC saves (the final norm: what the eager norm saves, its fp32 input too),")
    out.append("# act_peak_bytes with what its recompute re-creates (the block's layers up to this one).")
    out.append("# Use it with checkpoint: none.  docs/explanation/sharding.md, \"The torchtitan check\".")
    out.append("name: llama3-8b-titan" + ("-%dblocks" % depth if depth else ""))
    out.append('description: "Llama 3 8B' + (" at %d blocks" % depth if depth else "") + ', sequence 8192, torchtitan 2024-12 (eager, op-level SAC, FSDP2) on a 500 W '
               'H100 96GB HBM2e: per-kernel model"')
    out.append("params: %d" % sum(l["params"] for l in layers))
    out.append('measured: {batch: %d, gpu: "h100gt", source: "models/gen/gen_llama3_titan.py (per-kernel model '
               'from validate/h100/overlap/run1)", precision: bf16}' % BATCH)
    out.append("layers:")
    recreated = 0           # bytes SAC's recompute has re-created in the block, up to this layer
    for l in layers:
        name = l["name"]
        leaf = name.split(".")[-1]
        act, peak = l["act_bytes"], l["act_peak_bytes"]
        if name.startswith("layers."):
            recreated = 0 if leaf == "attention_norm" else recreated
            recreated += l["act_bytes"] - sb[leaf]
            act, peak = sb[leaf], peak + recreated
        elif name == "norm":     # the eager RMSNorm also saves its input's fp32 copy (not checkpointed here)
            act += 4 * SEQ * SHAPES["llama3-8b"][0]
        f, b = times[name]
        out.append(layer_line(l, act, f * 1e3, b * 1e3, peak))
    return "\n".join(out) + "\n"


def table():
    """The breakdown printed for the docs: calibration, the 70B check and each term of an iteration."""
    layers = load_layers()
    rates, eff, parts, h100, gt = gpus()
    lines = ["GEMM %.1f TFLOP/s, copy %.3f TB/s (efficiency %.3f), power %.4f"
             % (rates["gemm"] / 1e12, rates["copy"] / 1e12, eff, POWER),
             "flash attention (H100 80GB, fitted): forward %.1f, backward %.1f TFLOP/s of causal core"
             % (1e-12 / h100.af, 1e-12 / h100.ab),
             "FlashAttention-2 instead (H100 80GB): forward %.1f, backward %.1f TFLOP/s of causal core"
             % (1e-12 / gt.af, 1e-12 / gt.ab)]
    for model in ("llama3-8b", "llama3-70b"):
        probe = block_terms(model, BATCH, "probe")
        meas = parts[(model, "block")]
        pf = sum(h100.secs(probe[l]["fwd"]) for l in probe) * 1e3
        pb = sum(h100.secs(probe[l]["bwd"], True) for l in probe) * 1e3
        lines.append("%s block, probe kernels on the H100 80GB: model %.2f / %.2f ms, measured %.2f / %.2f (%+.1f / %+.1f %%)"
                     % (model, pf, pb, meas["fwd_ms"], meas["bwd_ms"], 100 * (pf / meas["fwd_ms"] - 1),
                        100 * (pb / meas["bwd_ms"] - 1)))
    blk = block_terms("llama3-8b", BATCH, "titan")
    nb = 32
    terms = {}
    for pas in ("fwd", "bwd"):
        for kind in ("gemm", "attn", "mem"):
            w = sum(blk[l][pas][kind] for l in ("attention_norm", "attention", "ffn_norm", "feed_forward"))
            one = dict({"gemm": 0, "attn": 0, "mem": 0}, **{kind: w})
            terms["block %s %s" % (pas, kind)] = nb * gt.secs(one, pas == "bwd")
    for kind in ("gemm", "mem"):
        terms["block SAC recompute %s" % kind] = nb * gt.secs(dict({"gemm": 0, "attn": 0, "mem": 0},
                                                                   **{kind: blk["recompute"][kind]}))
    # FSDP2's copies as overlap: fsdp2 adds them (not in the model file): every block's, the root's copy-out
    # in forward only (kept gathered), its copy-in at the end of the backward; at this memory rate
    root = root_copy_in(SHAPES["llama3-8b"][0]) // 6
    terms["FSDP2 copy-out"] = ((2 * nb - 1) * gt.secs(blk["copy_out"])
                               + gt.secs({"gemm": 0, "attn": 0, "mem": 4 * root}))
    terms["FSDP2 copy-in"] = nb * gt.secs(blk["copy_in"]) + gt.secs({"gemm": 0, "attn": 0, "mem": 6 * root})
    t = layer_times(gt, parts, layers)
    for name in ("tok_embeddings", "norm", "output"):
        terms[name] = sum(t[name])
    total = sum(terms.values())
    for k, v in terms.items():
        lines.append("  %-28s %9.2f ms" % (k, v * 1e3))
    lines.append("  %-28s %9.2f ms (batch %d; the optimizer and the exposed communication are the simulator's)"
                 % ("compute", total * 1e3, BATCH))
    return "\n".join(lines) + "\n"


def steps():
    """The compute of one 8-GPU iteration (32 blocks, head, optimizer on 1/8 of the parameters), ms, as each
    difference between the measured block on a 700 W H100 80GB and torchtitan's run is added in turn."""
    layers = load_layers()
    rates, eff, parts, h100, gt = gpus()
    nb, shard = 32, sum(l["params"] for l in layers) / 8
    probe, titan = block_terms("llama3-8b", BATCH, "probe"), block_terms("llama3-8b", BATCH, "titan")
    leaves = ("attention_norm", "attention", "ffn_norm", "feed_forward")
    head = parts[("llama3-8b", "head+loss")]
    hgemm = 2 * BATCH * SEQ * SHAPES["llama3-8b"][0] * VOCAB
    hrest = (head["fwd_ms"] + head["bwd_ms"]) * 1e-3 - Gpu(rates["gemm"], H100_BPS, 0, 0).secs(
        {"gemm": 3 * hgemm, "attn": 0, "mem": 0})

    def total(g, blk, sac, copy, bps, upd, copy_in=False):
        s = nb * sum(g.secs(blk[l]["fwd"]) + g.secs(blk[l]["bwd"], True) for l in leaves)
        s += g.secs({"gemm": 3 * hgemm, "attn": 0, "mem": 0}) + hrest * H100_BPS / bps
        s += g.secs(blk["attention_norm"]["fwd"]) + g.secs(blk["attention_norm"]["bwd"], True)   # final norm
        if sac == "layer":   # arsim's layer-level selective: every second block's forward again
            s += nb / 2 * sum(g.secs(blk[l]["fwd"]) for l in leaves)
        elif sac == "op":
            s += nb * g.secs(blk["recompute"])
        s += (2 * nb - 1) * g.secs(blk["copy_out"]) if copy else 0
        if copy_in:          # every block's and the root's gradients into the reduce-scatter input
            s += nb * g.secs(blk["copy_in"]) + root_copy_in(SHAPES["llama3-8b"][0]) / (bps * eff)
        return (s + shard * upd / bps) * 1e3

    h_gt_mem = Gpu(rates["gemm"], GT_BPS * eff, h100.af, h100.ab)
    gt_cudnn = Gpu(rates["gemm"], GT_BPS * eff, h100.af, h100.ab, POWER)
    rows = [("the measured block's kernels, layer-level SAC, 700 W H100 80GB", total(h100, probe, "layer", False,
                                                                                    H100_BPS, 12)),
            ("torchtitan's eager kernels instead", total(h100, titan, "layer", False, H100_BPS, 12)),
            ("op-level SAC instead of layer-level", total(h100, titan, "op", False, H100_BPS, 12)),
            ("FSDP2's all-gather copy-out", total(h100, titan, "op", True, H100_BPS, 12)),
            ("AdamW + clipping: 92 bytes a parameter, not 12", total(h100, titan, "op", True, H100_BPS, 92)),
            ("HBM2e at 2.4 TB/s", total(h_gt_mem, titan, "op", True, GT_BPS, 92)),
            ("500 W: GEMMs and attention x %.4f" % POWER, total(gt_cudnn, titan, "op", True, GT_BPS, 92)),
            ("SDPA: FlashAttention-2, not cuDNN's attention", total(gt, titan, "op", True, GT_BPS, 92)),
            ("FSDP2's reduce-scatter copy-in", total(gt, titan, "op", True, GT_BPS, 92, True))]
    return "".join("%-64s %8.1f ms\n" % r for r in rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the committed file differs")
    ap.add_argument("--table", action="store_true", help="print the calibration and the breakdown")
    ap.add_argument("--steps", action="store_true", help="print an 8-GPU iteration's compute, difference by difference")
    ap.add_argument("--terms", action="store_true", help="print one llama3-8b block's work at batch 2 (exact integers)")
    a = ap.parse_args()
    if a.table:
        sys.stdout.write(table())
        return 0
    if a.steps:
        sys.stdout.write(steps())
        return 0
    if a.terms:
        for variant in ("probe", "titan"):
            for k, v in block_terms("llama3-8b", BATCH, variant).items():
                for pas, w in (v.items() if "fwd" in v else (("all", v),)):
                    print("%s %s %s gemm %d attn %d mem %d" % (variant, k, pas, w["gemm"], w["attn"], w["mem"]))
        for k, v in saved_bytes("llama3-8b").items():
            print("saved %s %d" % (k, v))
        print("root copy_in mem %d" % root_copy_in(SHAPES["llama3-8b"][0]))
        core = block_terms("llama3-8b", BATCH, "titan")["attention"]["fwd"]["attn"]
        print("sdpa FlashAttention-2 over cuDNN, a block at 700 W: fwd %d ns bwd %d ns"
              % tuple(round(core * e * 1e9) for e in fa2_extra("llama3-8b")))
        return 0
    rc = write_or_check(OUT, generate(), a.check)
    for n in DEPTHS:
        if not a.check:
            os.makedirs(DEPTH_DIR, exist_ok=True)
        rc |= write_or_check(os.path.join(DEPTH_DIR, "llama3-8b-titan-%dblocks.yaml" % n), generate(n), a.check)
        rc |= write_or_check(os.path.join(DEPTH_DIR, "llama3-8b-%dblocks.yaml" % n), generate_base(n), a.check)
    return rc


if __name__ == "__main__":
    sys.exit(main())
