#!/usr/bin/env python3
"""step.py - one GPU trains an MPT-style GPT (the blocks of block.py, fused
SDPA with the FlashAttention-2 backend, learned positions, a head tied to the
token embedding) as llm-foundry's benchmarks do apart from the world size:
FSDP2 with bf16 parameters and fp32 reductions, AdamW, gradient clipping, at
a reduced depth of L blocks, so that a whole training step can be set
against the blocks' and kernels' times (validate/kernels/table.py --only step).

Maintainer tool: needs a CUDA GPU and PyTorch >= 2.6; not needed to build or
test arsim. The step itself is validate/fsdp/llama_step.py's run_case (its
phases, timing and memory records), with this model.

    python3 validate/kernels/step.py OUT.jsonl [--layers 2,4] [--only mpt-1b,...]

One JSON line per (model, layers): llama_step's row plus "model", "d",
"heads", "vocab".
"""
import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "fsdp"))

# (name, d_model, heads, micro-batch): llm-foundry's A100 rows of validate/llm/mpt.yaml; sequence 2048
CASES = [("mpt-1b", 2048, 16, 14), ("mpt-3b", 2560, 20, 10), ("mpt-7b", 4096, 32, 6),
         ("mpt-13b", 5120, 40, 2), ("mpt-30b", 7168, 56, 3)]
VOCAB, SEQ = 50368, 2048


def mpt_class(torch, d, heads, kind="fused"):
    """The model's nn.Module class: MPT(layers, seq)."""
    import block
    nn, F = torch.nn, torch.nn.functional
    Block = block.block_class(torch, d, heads, kind)

    class MPT(nn.Module):
        def __init__(self, layers, seq):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(VOCAB, d), nn.Embedding(seq, d)
            self.blocks = nn.ModuleDict({str(i): Block() for i in range(layers)})
            self.ln_f = nn.LayerNorm(d)

        def forward(self, tokens):
            pos = torch.arange(tokens.shape[1], device=tokens.device)
            h = self.wte(tokens) + self.wpe(pos)
            for b in self.blocks.values():
                h = b(h)
            return F.linear(self.ln_f(h), self.wte.weight)   # the tied head

    return MPT


def mpt_builder(torch, d, heads):
    """build_fn for llama_step.run_case: the model at `layers` blocks under FSDP2, one unit a block."""
    MPT = mpt_class(torch, d, heads)

    def build(layers, seq, ac, mesh):
        from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
        if ac != "none":
            raise ValueError("step.py runs without checkpointing")
        with torch.device("cuda"):
            model = MPT(layers, seq)
        mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
        for i, b in enumerate(model.blocks.values()):
            fully_shard(b, mesh=mesh, mp_policy=mp, reshard_after_forward=i < layers - 1)
        fully_shard(model, mesh=mesh, mp_policy=mp, reshard_after_forward=True)
        return model

    return build


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--layers", default="2,4")
    ap.add_argument("--only", default=",".join(c[0] for c in CASES))
    ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--warm", type=int, default=3)
    a = ap.parse_args()
    import torch
    import torch.distributed as dist
    import llama_step
    mesh = llama_step.one_rank_mesh(29613)
    with open(a.out, "a") as f:
        f.write(json.dumps({"kind": "env", "gpu": torch.cuda.get_device_name(0), "torch": torch.__version__},
                           sort_keys=True) + "\n")
    want = a.only.split(",")
    for name, d, heads, batch in CASES:
        if name not in want:
            continue
        for layers in (int(x) for x in a.layers.split(",")):
            t0 = time.time()
            try:
                row = llama_step.run_case(layers, SEQ, batch, "none", a.iters, a.warm, mesh,
                                          build_fn=mpt_builder(torch, d, heads), vocab=VOCAB)
            except Exception as e:  # recorded; the other cases still run
                row = {"layers": layers, "error": "%s: %s" % (type(e).__name__, str(e)[:300])}
                torch.cuda.empty_cache()
            row.update({"kind": "case", "model": name, "d": d, "heads": heads, "vocab": VOCAB,
                        "wall_s": round(time.time() - t0, 1)})
            with open(a.out, "a") as f:
                f.write(json.dumps(row, sort_keys=True) + "\n")
            print("step:", name, layers, row.get("median_iter_ms"), row.get("error", ""), flush=True)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
