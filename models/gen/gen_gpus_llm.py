#!/usr/bin/env python3
"""gen_gpus_llm.py - writes models/gpus-llm.yaml and models/gpus-llm-cudnn.yaml:
models/gpus.yaml's A100, H100 and H200 with the kernels of a large language
model's step at the rates measured for them, for transformer models at long
sequences in bf16 or fp16. The two files differ in one figure, the fused
attention kernel's rate on the H100 and H200: FlashAttention-2's in
gpus-llm.yaml (the flash-attn package; SDPA's flash backend), cuDNN's fused
attention in gpus-llm-cudnn.yaml (what PyTorch's SDPA picks on Hopper with
cuDNN 9, the measuring torch 2.11 among them), 1.6 to 1.9 times faster.

models/gpus.yaml's tensor-core efficiencies are fitted to whole PyTorch steps of
ResNet-50 and BERT-base (models/gen/gen_gpus.py), so its GEMM kinds carry those
steps' eager element-wise and score traffic too. Here each kernel kind has its
own rate, from one-kernel measurements (validate/kernels/rates.py on the
project's H200, validate/kernels/h200/rates-run1.jsonl and -run2.jsonl, torch
2.11, CUDA 13.0; each figure the mean of the two runs):
  fc               bf16 Linear products (forward, dgrad, wgrad) at every shape
                   of the shipped LLM files whose dimensions are multiples of 8,
                   FLOP-weighted: total FLOPs over total time
  attention        the eager score products (Q K^T, P V and backward's four, as
                   batched matmuls): the median over the eager files' shapes
  attention_head_dim  per head dimension (80, 128) the eager score products'
                   rate at that dimension: the median over the eager shapes of
                   that dimension, as attention's over all; an attention layer
                   whose head_dim is not listed runs at attention
  fused_attention  PyTorch SDPA's FlashAttention-2 backend (cuDNN's for the
                   -cudnn file), causal, forward and backward, its FLOPs as
                   arsim counts them (3 x the fused layer's: 3.5 x the causal
                   products), at its long-sequence rate: the median over the
                   fused files' shapes of each rate over S / (S + S0)
  fused_attention_seq_half  S0, where the kernel runs at half that rate: a
                   least-squares fit of rate(S) = r S / (S + S0) to its sweep
                   from 512 to 16k tokens (attnseq.jsonl), the mean over head
                   dimension 64 and 128
  fused_attention_head_dim  per head dimension (64, 80, 96, 128) the fused
                   kernel's long-sequence rate at that dimension: the median of
                   rate / (S / (S + S0)) over the sweeps' points of that
                   dimension (attnseq.jsonl: 64 and 128; attnshape.jsonl: 80,
                   96 and 128; every head with its own key-value head); a
                   fused layer whose head_dim is not listed runs at
                   fused_attention
  mem_efficiency   a copy and an add on 256 MiB bf16 tensors: bytes read and
                   written over the vendor's HBM bandwidth
  default          0.9 of fc, embedding 0.5 of fc (gen_gpus.py's kind shape)
The H200 takes them as measured. The H100 (the same GH100 compute, 132 SMs)
takes the H200's attention kinds, its fc scaled by the ratio of the two GPUs'
measured bf16 8192^3 products (validate/h100/overlap/run1, run2 against the
H200's), and its own measured copy rate. The A100 has no measurement here:
its fc is the published maximum achievable matmul rate (MAMF, stas00/
ml-engineering compute/accelerator/README.md, commit b9e29720eebd4aa946fa9678
975385efbc90a777: 271.2 of 312 TFLOP/s) times the H200's ratio of its shipped
shapes' rate to the best of its square products; its fused_attention the
FlashAttention-2 paper's best A100 rate (230 TFLOP/s, forward + backward,
taken as at its longest sequence, 16k) over 16k / (16k + S0), times the
H200's ratio of the shipped shapes' median long-sequence rate to their best
(in both files: SDPA runs FlashAttention-2 on the A100), its S0 the H200's,
its fused_attention_head_dim its fused_attention times the H200's
FlashAttention-2 ratio of each head dimension's rate to the shipped shapes'
median;
attention the
H200's ratio of eager products to fc, its attention_head_dim its attention
times the H200's ratio of each head dimension's rate to the median over all
eager shapes; mem_efficiency the mean of the H100's and H200's. The convolution kinds and every other field as models/gpus.yaml
has them. docs/explanation/compute-model.md gives the tables behind each figure.

Usage: python3 models/gen/gen_gpus_llm.py [--check] [--print]
"""
import argparse
import json
import os
import re
import sys

PEAK = {"a100": 312e12, "h100": 989e12, "h200": 989e12}            # dense bf16 tensor FLOP/s
HBM = {"a100": 2039e9, "h100": 3350e9, "h200": 4800e9}              # gpus.yaml's mem_GBps
A100_MAMF = 271.2e12
A100_FA2_BEST = 230e12
A100_FA2_BEST_SEQ = 16384      # the sequence of that best rate (the paper's longest)
# bytes read + written per element by the streaming kernels of rates.py's mem section
STREAM_BYTES = {"copy": 4, "add": 6}


def root_dir():
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def load_runs(root):
    """rates.py's two H200 runs, each a list of records."""
    d = os.path.join(root, "validate", "kernels", "h200")
    return [[json.loads(l) for l in open(os.path.join(d, "rates-run%d.jsonl" % i))] for i in (1, 2)]


def load_seq(root):
    """rates.py --only attnseq's H200 run."""
    return [json.loads(l) for l in open(os.path.join(root, "validate", "kernels", "h200", "attnseq.jsonl"))]


def aligned(r):
    return r["m"] % 8 == 0 and r["n"] % 8 == 0 and r["k"] % 8 == 0


def gemm_rate(run):
    """FLOP/s of the shipped aligned Linear products (both passes), total FLOPs over total time."""
    rows = [r for r in run if r["section"] == "gemm" and aligned(r)]
    return sum(2.0 * r["m"] * r["n"] * r["k"] for r in rows) / sum(r["s"] for r in rows)


def best_square(run):
    return max(2.0 * r["m"] ** 3 / r["s"] for r in run if r["section"] == "grid" and r["sweep"] == "square")


def square_8192(run):
    return [2.0 * 8192 ** 3 / r["s"] for r in run if r["section"] == "grid" and r["sweep"] == "square"
            and r["m"] == 8192][0]


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return (xs[n // 2] + xs[(n - 1) // 2]) / 2


def bmm_shapes(run):
    """{eager shape: (head dimension, its six score products' rate, FLOPs over time)}."""
    shapes = {}
    for r in run:
        if r["section"] == "bmm":
            d, f, t = shapes.get(r["model"], (r["head_dim"], 0.0, 0.0))
            shapes[r["model"]] = (d, f + 2.0 * r["batch"] * r["seq"] ** 2 * r["head_dim"], t + r["s"])
    return {k: (d, f / t) for k, (d, f, t) in shapes.items()}


def bmm_rate(run):
    """The median over the eager files' shapes of their six score products' rate."""
    return median([r for _, r in bmm_shapes(run).values()])


def bmm_head_dim_rates(runs):
    """{head dimension: the score products' rate}: per dimension, the median over the eager shapes of that
    dimension, the mean of the runs."""
    out = {}
    for run in runs:
        by = {}
        for d, r in bmm_shapes(run).values():
            by.setdefault(d, []).append(r)
        for d, v in by.items():
            out[d] = out.get(d, 0.0) + median(v) / len(runs)
    return dict(sorted(out.items()))


def fused_flops(r):
    """arsim's FLOPs of a fused causal attention layer's forward + backward (models/gen/gen_gpt3.py's
    flash_flops, times 3) for one attn record: half of 4 S^2 d + 5 S^2 H a sample, 7/6-fold."""
    s, h, d = r["seq"], r["heads"], r["heads"] * r["head_dim"]
    return 3.0 * r["b"] * (4.0 * s * s * d + 5.0 * s * s * h) / 2 * 7 / 6


def fa2_rows(run, backend="FLASH_ATTENTION", section="attn"):
    return [r for r in run if r["section"] == section and r.get("backend") == backend and "error" not in r]


def seq_half(seqrun, backend):
    """S0 of rate(S) = r_max S / (S + S0), the backend's forward + backward rate against the sequence
    (attnseq.jsonl: 512 to 16k at 32k tokens a call), fitted per head dimension by least squares on
    1 / rate = 1 / r_max + (S0 / r_max) / S; the mean over the head dimensions."""
    out = []
    for hd in sorted({r["head_dim"] for r in fa2_rows(seqrun, backend, "attnseq")}):
        pts = [(1.0 / r["seq"], r["fwdbwd_s"] / fused_flops(r)) for r in fa2_rows(seqrun, backend, "attnseq")
               if r["head_dim"] == hd]
        mx, my = sum(x for x, _ in pts) / len(pts), sum(y for _, y in pts) / len(pts)
        slope = sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x, _ in pts)
        out.append(slope / (my - slope * mx))
    return sum(out) / len(out)


def asymptotes(run, backend, s0):
    """Per fused shape of the shipped files, the backend's rate over S / (S + s0): its long-sequence rate."""
    return [fused_flops(r) / r["fwdbwd_s"] * (r["seq"] + s0) / r["seq"] for r in fa2_rows(run, backend)]


def load_shape(root):
    """rates.py --only attnshape's H200 run."""
    return [json.loads(l) for l in open(os.path.join(root, "validate", "kernels", "h200", "attnshape.jsonl"))]


def head_dim_rates(seqrun, shaperun, backend, s0):
    """{head dimension: the backend's long-sequence forward + backward rate}: per dimension, the median over the
    attnseq and attnshape points with as many key-value heads as heads of rate / (S / (S + s0))."""
    rows = fa2_rows(seqrun, backend, "attnseq") + fa2_rows(shaperun, backend, "attnshape")
    by = {}
    for r in rows:
        if r.get("kv_heads", r["heads"]) == r["heads"]:
            by.setdefault(r["head_dim"], []).append(fused_flops(r) / r["fwdbwd_s"] * (r["seq"] + s0) / r["seq"])
    return {d: median(v) for d, v in sorted(by.items())}


def fa2_rate(run, s0, backend="FLASH_ATTENTION"):
    """The median over the fused files' shapes of the backend's long-sequence forward + backward rate."""
    return median(asymptotes(run, backend, s0))


def fa2_best(run, s0):
    return max(asymptotes(run, "FLASH_ATTENTION", s0))


def stream_share(run, hbm):
    """Mean over the copy and add records of bytes moved / time / hbm."""
    xs = [STREAM_BYTES[r["kernel"]] * r["elements"] / r["fwd_s"] / hbm
          for r in run if r["section"] == "mem" and r["kernel"] in STREAM_BYTES]
    return sum(xs) / len(xs)


def h100_measured(root):
    """The H100's bf16 8192^3 product (FLOP/s) and 1 GiB copy share of HBM, the mean of its two runs."""
    gemm, copy = [], []
    for run in ("run1", "run2"):
        for line in open(os.path.join(root, "validate", "h100", "overlap", run, "interference.jsonl")):
            r = json.loads(line)
            if r.get("k") != 0:
                continue
            if r["workload"] == "gemm-bf16-8192":
                gemm.append(2.0 * 8192 ** 3 / (r["median_ms"] * 1e-3))
            elif r["workload"] == "copy-1GiB":
                copy.append(2.0 * (1 << 30) / (r["median_ms"] * 1e-3) / HBM["h100"])
    return sum(gemm) / len(gemm), sum(copy) / len(copy)


def mean(f, runs):
    return sum(f(r) for r in runs) / len(runs)


def derive(root):
    """Per GPU: {fc, attention, fused_attention, mem_efficiency} and the figures behind them."""
    runs, seqrun, shaperun = load_runs(root), load_seq(root), load_shape(root)
    s0, s0c = seq_half(seqrun, "FLASH_ATTENTION"), seq_half(seqrun, "CUDNN_ATTENTION")
    fig = {"h200_gemm": mean(gemm_rate, runs), "h200_best_square": mean(best_square, runs),
           "h200_8192": mean(square_8192, runs), "h200_bmm": mean(bmm_rate, runs),
           "fa2_seq_half": s0, "cudnn_seq_half": s0c,
           "h200_fa2": mean(lambda r: fa2_rate(r, s0), runs), "h200_fa2_best": mean(lambda r: fa2_best(r, s0), runs),
           "h200_cudnn": mean(lambda r: fa2_rate(r, s0c, "CUDNN_ATTENTION"), runs),
           "h200_stream": mean(lambda r: stream_share(r, HBM["h200"]), runs)}
    fig["h100_8192"], fig["h100_copy"] = h100_measured(root)
    fa2_hd = head_dim_rates(seqrun, shaperun, "FLASH_ATTENTION", s0)
    fig["cudnn_head_dim"] = head_dim_rates(seqrun, shaperun, "CUDNN_ATTENTION", s0c)
    fig["fa2_head_dim"] = fa2_hd
    fig["bmm_head_dim"] = bmm_hd = bmm_head_dim_rates(runs)
    h200 = {"fc": fig["h200_gemm"] / PEAK["h200"], "attention": fig["h200_bmm"] / PEAK["h200"],
            "fused_attention": fig["h200_fa2"] / PEAK["h200"], "mem_efficiency": fig["h200_stream"],
            "seq_half": s0, "head_dim": {d: r / PEAK["h200"] for d, r in fa2_hd.items()},
            "attention_head_dim": {d: r / PEAK["h200"] for d, r in bmm_hd.items()}}
    h100 = dict(h200, fc=h200["fc"] * fig["h100_8192"] / fig["h200_8192"], mem_efficiency=fig["h100_copy"])
    shape = fig["h200_gemm"] / fig["h200_best_square"]
    a100_fc = A100_MAMF * shape / PEAK["a100"]
    a100 = {"fc": a100_fc, "attention": a100_fc * h200["attention"] / h200["fc"],
            "fused_attention": A100_FA2_BEST * (A100_FA2_BEST_SEQ + s0) / A100_FA2_BEST_SEQ
                               * fig["h200_fa2"] / fig["h200_fa2_best"] / PEAK["a100"],
            "mem_efficiency": (h200["mem_efficiency"] + h100["mem_efficiency"]) / 2, "seq_half": s0}
    a100["head_dim"] = {d: a100["fused_attention"] * r / fig["h200_fa2"] for d, r in fa2_hd.items()}
    a100["attention_head_dim"] = {d: a100["attention"] * r / fig["h200_bmm"] for d, r in bmm_hd.items()}
    return {"a100": a100, "h100": h100, "h200": h200}, fig


def with_cudnn(rates, fig):
    """gpus-llm-cudnn.yaml's rates: the H100's and H200's fused attention at cuDNN's rate."""
    out = {k: dict(v) for k, v in rates.items()}
    for k in ("h100", "h200"):
        out[k]["fused_attention"] = fig["h200_cudnn"] / PEAK["h200"]
        out[k]["seq_half"] = fig["cudnn_seq_half"]
        out[k]["head_dim"] = {d: r / PEAK["h200"] for d, r in fig["cudnn_head_dim"].items()}
    return out


def entries(text):
    """The GPU entries of gpus.yaml as {key: [lines]} (two-space keys under gpus:)."""
    out, cur = {}, None
    body = text.split("\ngpus:\n", 1)[1]
    for line in body.split("\n"):
        m = re.match(r"  ([a-z0-9]+):$", line)
        if m:
            cur = m.group(1)
            out[cur] = [line]
        elif cur and line.startswith("    "):
            out[cur].append(line)
        else:
            cur = None
    return out


def retune(lines, rates):
    fc = rates["fc"]
    kinds = {"fc": fc, "attention": rates["attention"], "fused_attention": rates["fused_attention"],
             "default": 0.9 * fc, "embedding": 0.5 * fc}
    res = []
    for line in lines:
        if line.startswith("    tensor_efficiency:"):
            def sub(m):
                k = m.group(1)
                return "%s: %.3f" % (k, kinds.pop(k)) if k in kinds else m.group(0)
            line = re.sub(r"(\w+): ([0-9.]+)", sub, line)
            line = line[:-1] + "".join(", %s: %.3f" % kv for kv in kinds.items()) + "}"
            res.append("    mem_efficiency: %.3f" % rates["mem_efficiency"])
            res.append("    fused_attention_seq_half: %d" % round(rates["seq_half"]))
            res.append("    fused_attention_head_dim: {%s}" % ", ".join("%d: %.3f" % kv
                                                                       for kv in rates["head_dim"].items()))
            res.append("    attention_head_dim: {%s}" % ", ".join("%d: %.3f" % kv
                                                                 for kv in rates["attention_head_dim"].items()))
        res.append(line)
    return res


def render(text, rates, name):
    ent = entries(text)
    head = __doc__.strip().split("\n")
    out = ["# models/%s - generated by models/gen/gen_gpus_llm.py; do not edit by hand." % name]
    out += ["# " + l if l else "#" for l in head[1:head.index("Usage: python3 models/gen/gen_gpus_llm.py "
                                                               "[--check] [--print]")]]
    out.append("gpus:")
    for key in ("a100", "h100", "h200"):
        out += retune(ent[key], rates[key])
    return "\n".join(l.rstrip() for l in out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="compare with models/gpus-llm.yaml; write nothing")
    ap.add_argument("--print", action="store_true", help="print the measured figures and the rates; write nothing")
    a = ap.parse_args()
    root = root_dir()
    rates, fig = derive(root)
    if a.print:
        for k, v in sorted(fig.items()):
            if k.endswith("head_dim"):
                print("%-18s %s" % (k, ", ".join("%d: %.1f TFLOP/s" % (d, r / 1e12) for d, r in v.items())))
                continue
            print("%-18s %s" % (k, "%.0f tokens" % v if k.endswith("seq_half") else
                                "%.4f" % v if v < 10 else "%.1f TFLOP/s" % (v / 1e12)))
        for g, r in rates.items():
            print(g, " ".join("%s %.3f" % kv for kv in r.items()
                              if kv[0] not in ("seq_half", "head_dim", "attention_head_dim")),
                  "seq_half %d" % r["seq_half"], "head_dim", r["head_dim"], "attention_head_dim", r["attention_head_dim"])
        print("cudnn: h100, h200 fused_attention %.3f" % with_cudnn(rates, fig)["h100"]["fused_attention"])
        return 0
    text = open(os.path.join(root, "models", "gpus.yaml")).read()
    bad = 0
    for name, r in (("gpus-llm.yaml", rates), ("gpus-llm-cudnn.yaml", with_cudnn(rates, fig))):
        new = render(text, r, name)
        path = os.path.join(root, "models", name)
        if not a.check:
            open(path, "w").write(new)
        elif (open(path).read() if os.path.exists(path) else "") != new:
            print("models/%s differs from what gen_gpus_llm.py writes" % name, file=sys.stderr)
            bad = 1
        else:
            print("models/%s is what gen_gpus_llm.py writes" % name)
    return bad


if __name__ == "__main__":
    sys.exit(main())
