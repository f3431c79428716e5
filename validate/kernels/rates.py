#!/usr/bin/env python3
"""rates.py - what the kernels of a transformer step reach on one GPU, by
shape: the measurements behind a GPU file's per-shape GEMM rates, its fused
attention rate and its memory-bound kernels' share of HBM bandwidth
(docs/explanation/compute-model.md, "Kernels measured by shape").

Maintainer tool: needs a CUDA GPU and PyTorch >= 2.5; not needed to build or
test arsim. Every measurement is one JSON line, flushed as it goes, so a run
cut short keeps what it measured.

    python3 validate/kernels/rates.py OUTDIR [--only gemm,grid,attn,bmm,mem,attnseq,attnshape] [--dry]

Sections (each line carries "section"):
  gemm  bf16 matrix products at every shape the shipped LLM model files run:
        for each Linear (out N, in K) at M = batch x sequence tokens, the
        three products autograd runs, as it runs them: fwd F.linear(x, W)
        (M x N x K), dgrad dy @ W (M x K x N), wgrad dy^T @ x (N x K x M).
        Twice, in two seeded shuffled orders ("pass" 1 and 2).
  grid  bf16 products on regular sweeps: square M = N = K; N at M 8192,
        K 4096 in steps of 128 (tile and wave quantization); K at M = N =
        8192; M at N = K = 4096.
  attn  PyTorch SDPA, bf16, causal, at each model's (batch, heads, sequence,
        head dim), forward and forward + backward, with the FlashAttention-2
        backend and with cuDNN's, where each runs.
  attnseq  SDPA causal forward + backward against the sequence, 512 to
        16k at 32k tokens a call, head dimension 64 and 128, FlashAttention-2
        and cuDNN (not in the default set: --only attnseq)
  attnshape  the same for head dimension 80 and 96 and for grouped-query
        attention (32 query heads of 128, 8 key-value heads) against the
        plain 32 heads (--only attnshape)
  bmm   the eager score products (Q K^T, P V and backward's four) as
        batched matmuls at the eager models' shapes.
  mem   memory-bound kernels (LayerNorm, RMSNorm, GELU, SiLU * mul, add,
        dropout, softmax, fp32 cross-entropy, a copy) forward and backward
        on M x d bf16 tensors: time and elements, the bytes counted later.

Times: CUDA events around a group of back-to-back calls (launches queue as
in a training step), the median of five groups; a group lasts about 5 ms.
"""
import argparse
import json
import math
import os
import random
import statistics
import sys
import time
import traceback

# (name, d_model, heads, kv heads, ffn, vocab, sequence, local batches, attention: eager|fused)
# the shapes of the shipped LLM model files (models/gen/gen_gpt3.py,
# gen_models.py's llama3, validate/llm/gen_llm_models.py,
# validate/anchors/gen_lee_models.py) and the batches their scenarios run
MODELS = [
    ("gpt3-125m", 768, 12, 12, 3072, 50257, 2048, [32], "fused"),
    ("gpt3-355m", 1024, 16, 16, 4096, 50257, 2048, [16], "fused"),
    ("gpt3-760m", 1536, 16, 16, 6144, 50257, 2048, [16], "fused"),
    ("gpt3-1.3b", 2048, 16, 16, 8192, 50257, 2048, [8], "both"),
    ("gpt3-1.3b-8k", 2048, 16, 16, 8192, 50257, 8192, [4], "both"),
    ("gpt3-2.7b", 2560, 32, 32, 10240, 50257, 2048, [4, 8], "both"),
    ("gpt3-2.7b-8k", 2560, 32, 32, 10240, 50257, 8192, [4], "both"),
    ("gpt3-6.7b", 4096, 32, 32, 16384, 50257, 2048, [8], "eager"),
    ("gpt3-13b", 5120, 40, 40, 20480, 50257, 2048, [8], "eager"),
    ("gpt3-175b", 12288, 96, 96, 49152, 50257, 2048, [1, 2], "eager"),
    ("mpt-1b", 2048, 16, 16, 8192, 50368, 2048, [14], "fused"),
    ("mpt-3b", 2560, 20, 20, 10240, 50368, 2048, [10], "fused"),
    ("mpt-3b-8k", 2560, 20, 20, 10240, 50368, 8192, [3], "fused"),
    ("mpt-7b", 4096, 32, 32, 16384, 50368, 2048, [6], "fused"),
    ("mpt-7b-8k", 4096, 32, 32, 16384, 50368, 8192, [8], "fused"),
    ("mpt-13b", 5120, 40, 40, 20480, 50368, 2048, [2], "fused"),
    ("mpt-30b", 7168, 56, 56, 28672, 50368, 2048, [3], "fused"),
    ("llama3-8b", 4096, 32, 8, 14336, 128256, 8192, [1, 2], "fused"),
    ("llama3-70b", 8192, 64, 8, 28672, 128256, 8192, [1, 2], "fused"),
]


def linears(d, heads, kv, ffn, vocab):
    """(name, N out, K in) of a block's Linears and the output head."""
    hd = d // heads
    if kv != heads:   # Llama: separate q, k, v; SwiGLU
        return [("wq", d, d), ("wkv", kv * hd, d), ("wo", d, d), ("w13", ffn, d), ("w2", d, ffn),
                ("head", vocab, d)]
    return [("qkv", 3 * d, d), ("proj", d, d), ("fc", ffn, d), ("fc2", d, ffn), ("head", vocab, d)]


class Out:
    def __init__(self, path):
        self.f = open(path, "a")

    def put(self, rec):
        self.f.write(json.dumps(rec, sort_keys=True) + "\n")
        self.f.flush()


class Timer:
    """Median per-call time (s) of fn: groups of back-to-back calls of about target_s each."""

    def __init__(self, torch, dev, dry):
        self.torch, self.dev, self.dry = torch, dev, dry

    def sync(self):
        if self.dev == "cuda":
            self.torch.cuda.synchronize()

    def group(self, fn, n):
        if self.dev != "cuda":
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            return (time.perf_counter() - t0) / n
        e0 = self.torch.cuda.Event(enable_timing=True)
        e1 = self.torch.cuda.Event(enable_timing=True)
        e0.record()
        for _ in range(n):
            fn()
        e1.record()
        e1.synchronize()
        return e0.elapsed_time(e1) / 1e3 / n

    def __call__(self, fn, target_s=0.005, groups=5):
        fn()
        self.sync()
        one = self.group(fn, 1)                     # warm, and an estimate
        n = max(1, min(200, int(target_s / max(one, 1e-7))))
        if self.dry:
            n, groups = 1, 2
        self.group(fn, n)
        ts = sorted(self.group(fn, n) for _ in range(groups))
        return {"s": statistics.median(ts), "s_min": ts[0], "s_max": ts[-1], "calls": n, "groups": groups}


def gemm_shapes(scale):
    """(model, layer, op, M, N, K) for every shipped Linear, deduplicated by (op, M, N, K)."""
    seen, out = set(), []
    for name, d, heads, kv, ffn, vocab, seq, batches, _ in MODELS:
        for b in batches:
            m = b * seq
            for lname, n, k in linears(d, heads, kv, ffn, vocab):
                for op, shape in (("fwd", (m, n, k)), ("dgrad", (m, k, n)), ("wgrad", (n, k, m))):
                    shape = tuple(max(1, x // scale) for x in shape)
                    if (op, shape) not in seen:
                        seen.add((op, shape))
                        out.append(("%s/b%d" % (name, b), lname, op) + shape)
    return out


def run_gemm(torch, T, out, dev, dt, scale, passes):
    shapes = gemm_shapes(scale)
    print("gemm: %d shapes x %d passes" % (len(shapes), passes), flush=True)
    for p in range(1, passes + 1):
        order = list(shapes)
        random.Random(p).shuffle(order)
        for model, lname, op, m, n, k in order:
            # the operands as autograd holds them: x (M, K), W (N, K), dy (M, N)
            if op == "fwd":
                a = torch.randn(m, k, device=dev, dtype=dt)
                w = torch.randn(n, k, device=dev, dtype=dt)
                fn = lambda: torch.nn.functional.linear(a, w)
            elif op == "dgrad":   # dx (M, K') = dy (M, N') @ W (N', K'); here shape is (M, K, N)
                a = torch.randn(m, k, device=dev, dtype=dt)      # dy, M x N'
                w = torch.randn(k, n, device=dev, dtype=dt)      # W, N' x K'
                fn = lambda: a.mm(w)
            else:                 # dW (N', K') = dy^T @ x; shape (N', K', M)
                a = torch.randn(k, m, device=dev, dtype=dt)      # dy, M x N'
                w = torch.randn(k, n, device=dev, dtype=dt)      # x, M x K'
                fn = lambda: a.t().mm(w)
            r = T(fn)
            flops = 2.0 * m * n * k
            rec = {"section": "gemm", "pass": p, "model": model, "layer": lname, "op": op,
                   "m": m, "n": n, "k": k, "tflops": round(flops / r["s"] / 1e12, 2)}
            rec.update(r)
            out.put(rec)
            del a, w


def grid_shapes(scale):
    sq = [256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384]
    out = [("square", s, s, s) for s in sq]
    out += [("n_sweep", 8192, n, 4096) for n in range(128, 16384 + 1, 128)]
    out += [("k_sweep", 8192, 8192, k) for k in (64, 128, 256, 512, 768, 1024, 1536, 2048, 3072, 4096,
                                                 6144, 8192, 12288, 16384, 28672)]
    out += [("m_sweep", m, 4096, 4096) for m in (128, 256, 512, 1024, 2048, 3072, 4096, 6144, 8192, 12288,
                                                 16384, 24576, 32768, 49152, 65536)]
    return [(g,) + tuple(max(1, x // scale) for x in s) for g, *s in out]


def run_grid(torch, T, out, dev, dt, scale):
    for g, m, n, k in grid_shapes(scale):
        a = torch.randn(m, k, device=dev, dtype=dt)
        w = torch.randn(n, k, device=dev, dtype=dt)
        r = T(lambda: torch.nn.functional.linear(a, w))
        rec = {"section": "grid", "sweep": g, "m": m, "n": n, "k": k,
               "tflops": round(2.0 * m * n * k / r["s"] / 1e12, 2)}
        rec.update(r)
        out.put(rec)
        del a, w


def attn_shapes(scale, want):
    seen, out = set(), []
    for name, d, heads, kv, ffn, vocab, seq, batches, att in MODELS:
        if att not in (want, "both"):
            continue
        for b in batches:
            shape = (b, heads, kv, max(16, seq // scale), d // heads)
            if shape not in seen:
                seen.add(shape)
                out.append(("%s/b%d" % (name, b),) + shape)
    return out


def run_attn(torch, T, out, dev, dt, scale):
    """The fused files' shapes, keys and values repeated to every query head (repeat_kv), on three backends;
    each record names its model and the model's key-value heads."""
    try:
        import torch.nn.attention  # noqa: F401
    except ImportError:
        print("attn: no torch.nn.attention here; skipped", flush=True)
        return
    for model, b, h, kv, s, hd in attn_shapes(scale, "fused"):
        attn_case(torch, T, out, "attn", b, h, h, s, hd, dev, dt,
                  ("FLASH_ATTENTION", "CUDNN_ATTENTION", "EFFICIENT_ATTENTION"), {"model": model, "kv_heads": kv})


def attn_case(torch, T, out, section, b, h, kv, s, hd, dev, dt,
              backends=("FLASH_ATTENTION", "CUDNN_ATTENTION"), tag=None):
    """One SDPA causal shape, forward and forward + backward, on each backend (one this torch lacks is
    skipped): kv < h runs grouped-query attention (enable_gqa, keys and values of kv heads). tag: fields
    added to each record, last (they may replace its own)."""
    F = torch.nn.functional
    from torch.nn.attention import SDPBackend, sdpa_kernel
    q, g = (torch.randn(b, h, s, hd, device=dev, dtype=dt, requires_grad=i == 0) for i in range(2))
    k, v = (torch.randn(b, kv, s, hd, device=dev, dtype=dt, requires_grad=True) for _ in range(2))
    extra = {"enable_gqa": True} if kv < h else {}
    # causal: half the S^2 products; fwd 2 of them, bwd 5 (scores recomputed)
    half = 2.0 * b * h * s * s * hd
    for backend in backends:
        be = getattr(SDPBackend, backend, None)
        if be is None:
            continue
        try:
            with sdpa_kernel([be]):
                fwd = T(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True, **extra))

                def fb():
                    o = F.scaled_dot_product_attention(q, k, v, is_causal=True, **extra)
                    torch.autograd.grad(o, (q, k, v), g)
                both = T(fb)
        except Exception as e:   # a backend that cannot run this shape or GPU
            out.put(dict({"section": section, "backend": backend, "seq": s, "head_dim": hd, "kv_heads": kv,
                          "error": str(e)[:200]}, **(tag or {})))
            continue
        out.put(dict({"section": section, "backend": backend, "b": b, "heads": h, "kv_heads": kv, "seq": s,
                      "head_dim": hd, "fwd_s": fwd["s"], "fwdbwd_s": both["s"],
                      "fwd_tflops": round(half / fwd["s"] / 1e12, 2),
                      "bwd_tflops": round(2.5 * half / max(both["s"] - fwd["s"], 1e-9) / 1e12, 2),
                      "spread": [fwd["s_min"], fwd["s_max"], both["s_min"], both["s_max"]]}, **(tag or {})))


def run_attnseq(torch, T, out, dev, dt, scale):
    """SDPA causal forward + backward against the sequence (512 to 16k) at 32k tokens a call, d_model 2048,
    head dimension 64 and 128, FlashAttention-2 and cuDNN: how the fused kernel's rate rises with S."""
    try:
        import torch.nn.attention  # noqa: F401
    except ImportError:
        print("attnseq: no torch.nn.attention here; skipped", flush=True)
        return
    for hd in (64, 128):
        for s in (512, 1024, 2048, 4096, 8192, 16384):
            s = max(16, s // scale)
            attn_case(torch, T, out, "attnseq", max(1, 32768 // scale // s), 2048 // hd, 2048 // hd, s, hd, dev, dt)


def run_attnshape(torch, T, out, dev, dt, scale):
    """The same sweep for what the first leaves out: head dimension 80 and 96 (d_model 2560 and 1536), and
    Llama's grouped-query attention (32 query heads of 128, 8 key-value heads; d_model 4096)."""
    try:
        import torch.nn.attention  # noqa: F401
    except ImportError:
        print("attnshape: no torch.nn.attention here; skipped", flush=True)
        return
    for s in (1024, 2048, 4096, 8192, 16384):
        s = max(16, s // scale)
        b = max(1, 32768 // scale // s)
        attn_case(torch, T, out, "attnshape", b, 32, 32, s, 80, dev, dt)
        attn_case(torch, T, out, "attnshape", b, 16, 16, s, 96, dev, dt)
        attn_case(torch, T, out, "attnshape", b, 32, 8, s, 128, dev, dt)
        attn_case(torch, T, out, "attnshape", b, 32, 32, s, 128, dev, dt)


def run_bmm(torch, T, out, dev, dt, scale):
    for model, b, h, kv, s, hd in attn_shapes(scale, "eager"):
        bh = b * h
        q = torch.randn(bh, s, hd, device=dev, dtype=dt)
        kt = torch.randn(bh, hd, s, device=dev, dtype=dt)
        p = torch.randn(bh, s, s, device=dev, dtype=dt)
        v = torch.randn(bh, s, hd, device=dev, dtype=dt)
        cases = [("qk", lambda: torch.bmm(q, kt)),                      # S x S x hd
                 ("pv", lambda: torch.bmm(p, v)),                       # S x hd x S
                 ("dp", lambda: torch.bmm(q, kt)),                      # dO V^T: as Q K^T
                 ("dv", lambda: torch.bmm(p.transpose(1, 2), v)),       # P^T dO
                 ("dq", lambda: torch.bmm(p, v)),                       # dS K
                 ("dk", lambda: torch.bmm(p.transpose(1, 2), v))]       # dS^T Q
        for name, fn in cases:
            r = T(fn)
            rec = {"section": "bmm", "model": model, "product": name, "batch": bh, "seq": s, "head_dim": hd,
                   "tflops": round(2.0 * bh * s * s * hd / r["s"] / 1e12, 2)}
            rec.update(r)
            out.put(rec)
        del q, kt, p, v


def mem_cases(torch, F, x, d, dt):
    """(name, forward fn of x, fp32 loss path?) for the memory-bound kernels on x (M, d)."""
    w = torch.ones(d, device=x.device, dtype=dt, requires_grad=True)
    bias = torch.zeros(d, device=x.device, dtype=dt, requires_grad=True)
    y2 = torch.randn_like(x)
    out = [("layernorm", lambda t: F.layer_norm(t, (d,), w, bias)),
           ("gelu_tanh", lambda t: F.gelu(t, approximate="tanh")),
           ("add", lambda t: t + y2),
           ("dropout", lambda t: F.dropout(t, 0.1, training=True)),
           ("silu_mul", lambda t: F.silu(t) * y2),
           ("copy", lambda t: t.clone())]
    if hasattr(F, "rms_norm"):
        out.append(("rmsnorm", lambda t: F.rms_norm(t, (d,), w)))
    # torchtitan's RMSNorm before 2.4: in fp32, x * rsqrt(mean(x^2) + eps) * w
    out.append(("rmsnorm_eager", lambda t: (t.float() * torch.rsqrt(t.float().pow(2).mean(-1, keepdim=True)
                                                                     + 1e-6)).type_as(t) * w))
    return out


def run_mem(torch, T, out, dev, dt, scale):
    F = torch.nn.functional
    for d in (768, 2048, 4096, 8192, 12288):
        m = max(8, (1 << 27) // d // scale)           # 128 Mi elements: 256 MiB in bf16
        x = torch.randn(m, d, device=dev, dtype=dt, requires_grad=True)
        for name, f in mem_cases(torch, F, x, d, dt):
            fwd = T(lambda: f(x))
            y = f(x)
            g = torch.randn_like(y)
            bwd = T(lambda: torch.autograd.grad(y, x, g, retain_graph=True))
            out.put({"section": "mem", "kernel": name, "m": m, "d": d, "elements": m * d,
                     "fwd_s": fwd["s"], "bwd_s": bwd["s"],
                     "spread": [fwd["s_min"], fwd["s_max"], bwd["s_min"], bwd["s_max"]]})
            del y, g
        del x
    # softmax over scores and the fp32 cross-entropy over a vocabulary
    for name, rows, cols in (("softmax", max(8, 16 * 2048 * 16 // scale), 2048),
                             ("cross_entropy_fp32", max(8, 16384 // scale), 50304),
                             ("cross_entropy_fp32", max(8, 8192 // scale), 128256)):
        x = torch.randn(rows, cols, device=dev, dtype=dt, requires_grad=True)
        tgt = torch.randint(0, cols, (rows,), device=dev)
        f = (lambda t: torch.softmax(t, -1)) if name == "softmax" else \
            (lambda t: F.cross_entropy(t.float(), tgt))
        fwd = T(lambda: f(x))
        y = f(x)
        g = torch.ones_like(y) if y.dim() == 0 else torch.randn_like(y)
        bwd = T(lambda: torch.autograd.grad(y, x, g, retain_graph=True))
        out.put({"section": "mem", "kernel": name, "m": rows, "d": cols, "elements": rows * cols,
                 "fwd_s": fwd["s"], "bwd_s": bwd["s"],
                 "spread": [fwd["s_min"], fwd["s_max"], bwd["s_min"], bwd["s_max"]]})
        del x, y, g


def env(torch, out, dev):
    rec = {"section": "env", "torch": torch.__version__, "python": sys.version.split()[0],
           "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    if dev == "cuda":
        p = torch.cuda.get_device_properties(0)
        rec.update({"gpu": p.name, "sms": p.multi_processor_count, "memory_bytes": p.total_memory,
                    "cuda": torch.version.cuda, "cublas_workspace": os.environ.get("CUBLAS_WORKSPACE_CONFIG"),
                    "cudnn": torch.backends.cudnn.version()})
    out.put(rec)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--only", default="gemm,grid,attn,bmm,mem")
    ap.add_argument("--dry", action="store_true", help="CPU, every shape divided by 64: checks the script")
    ap.add_argument("--passes", type=int, default=2)
    a = ap.parse_args()
    import torch
    dev = "cpu" if a.dry else "cuda"
    scale = 64 if a.dry else 1
    dt = torch.float32 if a.dry else torch.bfloat16
    os.makedirs(a.outdir, exist_ok=True)
    out = Out(os.path.join(a.outdir, "rates.jsonl"))
    T = Timer(torch, dev, a.dry)
    env(torch, out, dev)
    torch.manual_seed(0)
    sections = {"gemm": lambda: run_gemm(torch, T, out, dev, dt, scale, a.passes),
                "grid": lambda: run_grid(torch, T, out, dev, dt, scale),
                "attn": lambda: run_attn(torch, T, out, dev, dt, scale),
                "bmm": lambda: run_bmm(torch, T, out, dev, dt, scale),
                "attnseq": lambda: run_attnseq(torch, T, out, dev, dt, scale),
                "attnshape": lambda: run_attnshape(torch, T, out, dev, dt, scale),
                "mem": lambda: run_mem(torch, T, out, dev, dt, scale)}
    for name in a.only.split(","):
        t0 = time.time()
        print("== %s" % name, flush=True)
        try:
            sections[name]()
        except Exception:
            traceback.print_exc()
            out.put({"section": name, "error": traceback.format_exc()[-400:]})
        if dev == "cuda":
            torch.cuda.empty_cache()
        print("== %s done in %.1f s" % (name, time.time() - t0), flush=True)


if __name__ == "__main__":
    main()
