#!/usr/bin/env python3
"""block.py - one GPT block's forward and forward + backward on one GPU, as
PyTorch runs it eagerly, at the widths and batches of the shipped LLM
checks: the whole that rates.py's kernels are parts of, so the sum of a
block's kernels can be set against the block (validate/kernels/table.py).

Maintainer tool: needs a CUDA GPU and PyTorch >= 2.5; not needed to build or
test arsim.

    python3 validate/kernels/block.py OUTDIR [--dry]

Two kinds of block, bf16 weights and activations, no autocast:
  fused  pre-LayerNorm, qkv Linear, SDPA causal (FlashAttention-2 backend
         and cuDNN's), proj Linear, residual add, LayerNorm, fc Linear,
         GELU (tanh), fc2 Linear, residual add; no dropout (MPT's blocks)
  eager  the same with the scores in eager PyTorch: Q K^T, scale, causal
         masked_fill, softmax, dropout 0.1, P V; dropout 0.1 after proj and
         fc2 (minGPT's, the FlashAttention-2 paper's runs without it)
Each measurement: a stack of two blocks, median of five groups of calls,
per block. One JSON line each to OUTDIR/block.jsonl.
"""
import argparse
import json
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rates  # noqa: E402  (the Timer)

# (name, d_model, heads, sequence, batch, kind)
CASES = [
    ("mpt-1b", 2048, 16, 2048, 14, "fused"),
    ("mpt-3b", 2560, 20, 2048, 10, "fused"),
    ("mpt-3b-8k", 2560, 20, 8192, 3, "fused"),
    ("mpt-7b", 4096, 32, 2048, 6, "fused"),
    ("mpt-7b-8k", 4096, 32, 8192, 8, "fused"),
    ("mpt-13b", 5120, 40, 2048, 2, "fused"),
    ("mpt-30b", 7168, 56, 2048, 3, "fused"),
    ("gpt3-125m", 768, 12, 2048, 32, "fused"),
    ("gpt3-1.3b", 2048, 16, 2048, 8, "fused"),
    ("gpt3-2.7b", 2560, 32, 2048, 4, "fused"),
    ("gpt3-xl", 2048, 16, 2048, 8, "eager"),
    ("gpt3-2.7b", 2560, 32, 2048, 4, "eager"),
]


def block_class(torch, d, heads, kind):
    """The nn.Module class of one block of width d (heads heads), fused or eager."""
    nn, F = torch.nn, torch.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.ln_2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

        def attn(self, x):
            b, s, _ = x.shape
            q, k, v = self.qkv(x).split(d, dim=2)
            q, k, v = (t.view(b, s, heads, d // heads).transpose(1, 2) for t in (q, k, v))
            if kind == "fused":
                y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            else:
                att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d // heads))
                mask = torch.ones(s, s, device=x.device, dtype=torch.bool).tril()
                att = att.masked_fill(~mask, float("-inf"))
                att = F.dropout(F.softmax(att, dim=-1), 0.1, self.training)
                y = att @ v
            y = self.proj(y.transpose(1, 2).reshape(b, s, d))
            return F.dropout(y, 0.1, self.training) if kind == "eager" else y

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            y = self.fc2(F.gelu(self.fc(self.ln_2(x)), approximate="tanh"))
            return x + (F.dropout(y, 0.1, self.training) if kind == "eager" else y)

    return Block


def make_block(torch, d, heads, kind, dev, dt):
    Block = block_class(torch, d, heads, kind)
    return torch.nn.Sequential(Block(), Block()).to(device=dev, dtype=dt)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--dry", action="store_true", help="CPU, widths and sequences divided by 16")
    a = ap.parse_args()
    import torch
    dev, dt, scale = ("cpu", torch.float32, 16) if a.dry else ("cuda", torch.bfloat16, 1)
    os.makedirs(a.outdir, exist_ok=True)
    out = rates.Out(os.path.join(a.outdir, "block.jsonl"))
    T = rates.Timer(torch, dev, a.dry)
    rates.env(torch, out, dev)
    torch.manual_seed(0)
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
        backends = [("FLASH_ATTENTION", SDPBackend.FLASH_ATTENTION), ("CUDNN_ATTENTION", SDPBackend.CUDNN_ATTENTION)]
    except ImportError:
        backends, sdpa_kernel = [("default", None)], None
    for name, d, heads, s, b, kind in CASES:
        d, s = max(heads * 4, d // scale // heads * heads), max(16, s // scale)
        model = make_block(torch, d, heads, kind, dev, dt)
        model.train()
        x = torch.randn(b, s, d, device=dev, dtype=dt, requires_grad=True)
        g = torch.randn(b, s, d, device=dev, dtype=dt)
        params = list(model.parameters())

        def fb():
            y = model(x)
            torch.autograd.grad(y, [x] + params, g)
        for bname, be in (backends if kind == "fused" else [("eager", None)]):
            t0 = time.time()
            try:
                if be is not None:
                    with sdpa_kernel([be]):
                        fwd, both = T(lambda: model(x), 0.02), T(fb, 0.02)
                else:
                    fwd, both = T(lambda: model(x), 0.02), T(fb, 0.02)
            except Exception as e:
                out.put({"section": "block", "model": name, "kind": kind, "backend": bname, "error": str(e)[:200]})
                continue
            out.put({"section": "block", "model": name, "kind": kind, "backend": bname, "d": d, "heads": heads,
                     "seq": s, "batch": b, "fwd_s": fwd["s"] / 2, "fwdbwd_s": both["s"] / 2,
                     "spread": [fwd["s_min"] / 2, fwd["s_max"] / 2, both["s_min"] / 2, both["s_max"] / 2],
                     "calls": [fwd["calls"], both["calls"]]})
            print("%s %s %s %.2f ms fwd, %.2f ms fwd+bwd a block (%.1f s)" % (
                name, kind, bname, fwd["s"] / 2e-3, both["s"] / 2e-3, time.time() - t0), flush=True)
        del model, x, g, params
        if dev == "cuda":
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
