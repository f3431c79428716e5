#!/usr/bin/env python3
"""llama_step.py - one GPU trains Llama 3 8B's layers as torchtitan's
2024-12 FSDP benchmark does (torchtitan 9dec370: eager, FSDP2 with bf16
parameters and fp32 reductions, op-level selective activation checkpointing,
AdamW with foreach, gradient clipping), at a reduced depth of L blocks, and
records each iteration's time and the caching allocator's peaks per phase.

MAINTAINER TOOL, run on a GPU machine (validate/gpu_round.sh); needs
PyTorch >= 2.6 with CUDA.  Not part of the build or the tests.

A world of one rank: FSDP2's all-gather and reduce-scatter are copies, so
what is measured is the compute and the memory a GPU holds apart from the
sharded states, which do not depend on the world size: activations, the
loss head, the transients of each block, the optimizer's foreach buffers,
and what the allocator reserves above what it hands out.  Two depths give
a per-block slope and an intercept (embedding, output, loss, optimizer of
both), each a checkpoint mode (none, selective = torchtitan's op-level SAC,
full).

    python3 llama_step.py --layers 2,4 --ac selective,none,full --out FILE.jsonl

One JSON line per (layers, ac): iteration times (ms, CUDA events, after
warm-up), per-phase peaks (forward with loss, backward with clipping,
optimizer step) of memory allocated and reserved, and the states' bytes.
"""

import argparse
import gc
import json
import os
import sys
import time
from collections import defaultdict

import torch
import torch.nn.functional as F
from torch import nn

DIM, HEADS, KV_HEADS, FFN, VOCAB, EPS, THETA = 4096, 32, 8, 14336, 128256, 1e-5, 500000.0


class RMSNorm(nn.Module):
    """torchtitan 9dec370's eager RMSNorm: the input upcast to fp32."""

    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        xf = x.float()
        out = (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS)).type_as(x)
        return out * self.weight


def freqs_cis_of(seq):
    hd = DIM // HEADS
    freqs = 1.0 / (THETA ** (torch.arange(0, hd, 2)[: hd // 2].float() / hd))
    t = torch.arange(seq, device=freqs.device)
    freqs = torch.outer(t, freqs).float()
    return torch.polar(torch.ones_like(freqs), freqs)


def rope(xq, xk, fc):
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    fc = fc[: xq.shape[1]].view(1, xq.shape[1], 1, xq_.shape[-1])
    return (torch.view_as_real(xq_ * fc).flatten(3).type_as(xq),
            torch.view_as_real(xk_ * fc).flatten(3).type_as(xk))


def repeat_kv(x, n):
    bs, s, h, d = x.shape
    return x if n == 1 else x[:, :, :, None, :].expand(bs, s, h, n, d).reshape(bs, s, h * n, d)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.hd = DIM // HEADS
        self.wq = nn.Linear(DIM, HEADS * self.hd, bias=False)
        self.wk = nn.Linear(DIM, KV_HEADS * self.hd, bias=False)
        self.wv = nn.Linear(DIM, KV_HEADS * self.hd, bias=False)
        self.wo = nn.Linear(HEADS * self.hd, DIM, bias=False)

    def forward(self, x, fc):
        bs, s, _ = x.shape
        q = self.wq(x).view(bs, s, -1, self.hd)
        k = self.wk(x).view(bs, s, -1, self.hd)
        v = self.wv(x).view(bs, s, -1, self.hd)
        q, k = rope(q, k, fc)
        k, v = repeat_kv(k, HEADS // KV_HEADS), repeat_kv(v, HEADS // KV_HEADS)
        o = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
        return self.wo(o.transpose(1, 2).contiguous().view(bs, s, -1))


class FeedForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.w1 = nn.Linear(DIM, FFN, bias=False)
        self.w2 = nn.Linear(FFN, DIM, bias=False)
        self.w3 = nn.Linear(DIM, FFN, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention = Attention()
        self.feed_forward = FeedForward()
        self.attention_norm = RMSNorm(DIM)
        self.ffn_norm = RMSNorm(DIM)

    def forward(self, x, fc):
        h = x + self.attention(self.attention_norm(x), fc)
        return h + self.feed_forward(self.ffn_norm(h))


class Llama(nn.Module):
    def __init__(self, layers, seq):
        super().__init__()
        self.tok_embeddings = nn.Embedding(VOCAB, DIM)
        self.register_buffer("freqs_cis", freqs_cis_of(seq), persistent=True)
        self.layers = nn.ModuleDict({str(i): Block() for i in range(layers)})
        self.norm = RMSNorm(DIM)
        self.output = nn.Linear(DIM, VOCAB, bias=False)

    def forward(self, tokens):
        h = self.tok_embeddings(tokens)
        for layer in self.layers.values():
            h = layer(h, self.freqs_cis)
        return self.output(self.norm(h))


def sac_context_fn():
    """torchtitan 9dec370's op-level SAC: save the outputs of mm, SDPA and
    max, except every second mm (counted separately in forward and in
    recompute)."""
    from torch.utils.checkpoint import CheckpointPolicy, create_selective_checkpoint_contexts
    save = {torch.ops.aten.mm.default,
            torch.ops.aten._scaled_dot_product_efficient_attention.default,
            torch.ops.aten._scaled_dot_product_flash_attention.default,
            torch.ops.aten.max.default}
    meta = defaultdict(int)

    def policy(ctx, func, *args, **kwargs):
        key = "%s_mm_count" % ("recompute" if ctx.is_recompute else "forward")
        if func == torch.ops.aten.mm.default:
            meta[key] += 1
        keep = func in save and not (func == torch.ops.aten.mm.default and meta[key] % 2 == 0)
        return CheckpointPolicy.MUST_SAVE if keep else CheckpointPolicy.PREFER_RECOMPUTE

    return create_selective_checkpoint_contexts(policy)


def build(layers, seq, ac, mesh):
    from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
    with torch.device("cuda"):
        model = Llama(layers, seq)
    for name, block in list(model.layers.named_children()):
        if ac == "full":
            block = checkpoint_wrapper(block, preserve_rng_state=False)
        elif ac == "selective":
            block = checkpoint_wrapper(block, context_fn=sac_context_fn, preserve_rng_state=False)
        model.layers.register_module(name, block)
    mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    for i, block in enumerate(model.layers.values()):
        fully_shard(block, mesh=mesh, mp_policy=mp, reshard_after_forward=i < layers - 1)
    fully_shard(model, mesh=mesh, mp_policy=mp, reshard_after_forward=True)
    return model


def gib(b):
    return round(b / 2**30, 4)


def run_case(layers, seq, batch, ac, iters, warm, mesh, build_fn=build, vocab=VOCAB):
    """One case's row; build_fn(layers, seq, ac, mesh) makes the model (validate/kernels/step.py gives
    its own, with its vocabulary)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    torch.manual_seed(0)
    base = torch.cuda.memory_allocated()
    model = build_fn(layers, seq, ac, mesh)
    params = sum(p.numel() for p in model.parameters())
    opt = torch.optim.AdamW(model.parameters(), lr=8e-4, betas=(0.9, 0.95), eps=1e-8,
                            weight_decay=0.1, foreach=True, fused=False)
    tokens = torch.randint(0, vocab, (batch, seq), device="cuda")
    labels = torch.randint(0, vocab, (batch, seq), device="cuda")
    rows = []
    clip = [True]   # torch.nn.utils.clip_grad_norm_ on FSDP2's DTensors; dropped (and said) if it fails
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(4)]
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        for it in range(warm + iters):
            phase = {}
            opt.zero_grad()
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            ev[0].record()
            pred = model(tokens)
            loss = F.cross_entropy(pred.flatten(0, 1).float(), labels.flatten(0, 1))
            ev[1].record()
            torch.cuda.synchronize()
            phase["forward"] = (torch.cuda.max_memory_allocated(), torch.cuda.max_memory_reserved(),
                                torch.cuda.memory_allocated())
            torch.cuda.reset_peak_memory_stats()
            del pred
            loss.backward()
            if clip[0]:
                try:
                    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, foreach=True)
                except Exception as e:  # recorded in the row; the step goes on unclipped
                    clip[:] = [False, "%s: %s" % (type(e).__name__, str(e)[:200])]
            ev[2].record()
            torch.cuda.synchronize()
            phase["backward"] = (torch.cuda.max_memory_allocated(), torch.cuda.max_memory_reserved(),
                                 torch.cuda.memory_allocated())
            torch.cuda.reset_peak_memory_stats()
            opt.step()
            ev[3].record()
            torch.cuda.synchronize()
            phase["optimizer"] = (torch.cuda.max_memory_allocated(), torch.cuda.max_memory_reserved(),
                                  torch.cuda.memory_allocated())
            if it >= warm:
                rows.append({"iter_ms": ev[0].elapsed_time(ev[3]), "forward_ms": ev[0].elapsed_time(ev[1]),
                             "backward_ms": ev[1].elapsed_time(ev[2]), "optimizer_ms": ev[2].elapsed_time(ev[3]),
                             "phase": {k: {"max_alloc_gib": gib(v[0]), "max_reserved_gib": gib(v[1]),
                                           "alloc_after_gib": gib(v[2])} for k, v in phase.items()},
                             "loss": round(float(loss), 4)})
    stats = torch.cuda.memory_stats()
    out = {"layers": layers, "seq": seq, "batch": batch, "ac": ac, "params": params,
           "states_gib": gib(16 * params), "base_alloc_gib": gib(base),
           "num_alloc_retries": stats.get("num_alloc_retries", 0),
           "clip": True if clip[0] else clip[1],
           "iterations": rows,
           "median_iter_ms": sorted(r["iter_ms"] for r in rows)[len(rows) // 2],
           "peak_alloc_gib": max(max(p["max_alloc_gib"] for p in r["phase"].values()) for r in rows),
           "peak_reserved_gib": max(max(p["max_reserved_gib"] for p in r["phase"].values()) for r in rows)}
    del model, opt, tokens, labels, loss
    gc.collect()
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    return out


def one_rank_mesh(port):
    """A world of one rank on GPU 0 (NCCL, MASTER_PORT port unless set) and its device mesh."""
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(port))
    dist.init_process_group("nccl", rank=0, world_size=1)
    torch.cuda.set_device(0)
    return init_device_mesh("cuda", (1,))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--layers", default="2,4", help="comma list of depths (blocks)")
    ap.add_argument("--ac", default="selective,none,full", help="comma list of none, selective, full")
    ap.add_argument("--seq", type=int, default=8192)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--iters", type=int, default=4)
    ap.add_argument("--warm", type=int, default=3)
    ap.add_argument("--out", required=True, help="JSON lines file (appended)")
    args = ap.parse_args()
    import torch.distributed as dist
    mesh = one_rank_mesh(29611)
    env = {"kind": "env", "gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
           "memory_bytes": torch.cuda.get_device_properties(0).total_memory,
           "alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")}
    with open(args.out, "a") as f:
        f.write(json.dumps(env, sort_keys=True) + "\n")
    for ac in args.ac.split(","):
        for layers in (int(x) for x in args.layers.split(",")):
            t0 = time.time()
            try:
                row = run_case(layers, args.seq, args.batch, ac, args.iters, args.warm, mesh)
            except Exception as e:  # a case that fails (out of memory) is recorded, the rest still run
                row = {"layers": layers, "ac": ac, "error": "%s: %s" % (type(e).__name__, str(e)[:300])}
                gc.collect()
                torch.cuda.empty_cache()
            row.update({"kind": "case", "alloc_conf": env["alloc_conf"], "wall_s": round(time.time() - t0, 1)})
            with open(args.out, "a") as f:
                f.write(json.dumps(row, sort_keys=True) + "\n")
            print("llama_step:", json.dumps({k: row.get(k) for k in
                  ("layers", "ac", "alloc_conf", "median_iter_ms", "peak_alloc_gib", "peak_reserved_gib", "error",
                   "wall_s")}), flush=True)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
