#!/usr/bin/env python3
"""gen_llm_models.py - writes validate/llm/models/*.yaml, the models of the
end-to-end LLM throughput checks (validate/llm/check.py).

Every model is the minGPT-style GPT of models/gen/gen_gpt3.py (pre-LayerNorm
blocks with biases, learned positions, an output head tied to the token
embedding: 12 L d^2 + 13 L d + V d + S d + 2 d parameters), at a size and
sequence a published run names:
- GPT-3 1.3B (24 layers, d_model 2048, 16 heads) and 2.7B (32, 2560, 32),
  vocabulary 50257, at sequence 2048 and 8192: the FlashAttention-2 paper's
  Table 1 (arXiv 2307.08691); and 125M (12, 768, 12), 355M (24, 1024, 16)
  and 760M (24, 1536, 16) at 2048, the sizes of the training throughput
  table of its repository (Dao-AILab/flash-attention training/README.md);
- MPT 1B (24, 2048, 16), 3B (32, 2560, 20), 7B (32, 4096, 32), 13B (40,
  5120, 40) and 30B (48, 7168, 56), vocabulary 50368: llm-foundry's MPT
  benchmark tables, whose NumParams column this formula meets exactly at
  each sequence (asserted below).

Each model takes one of gen_gpt3.py's three kernel variants (its
docstring lists each kernel and its bytes): "eager" (every kernel eager,
the full S x S scores in memory; the runs without FlashAttention),
"flash" (the FlashAttention repository's GPT: fused attention, fused
dropout + add + LayerNorm, GELU and biases in the GEMM epilogues, fused
cross-entropy; the FlashAttention-2 paper's and the repository's runs
with FlashAttention) and "mpt" (llm-foundry's MPT: fused attention, no
dropout, the other kernels eager, fused cross-entropy).

Run from the repository root: python3 validate/llm/gen_llm_models.py [--check]
"""
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# name: (layers, d_model, heads, vocab, sequence, kernel variant, published parameter count or 0)
MODELS = {
    "gpt3-1.3b-8k": (24, 2048, 16, 50257, 8192, "eager", 0),
    "gpt3-2.7b-8k": (32, 2560, 32, 50257, 8192, "eager", 0),
    "gpt3-125m-2k-flash": (12, 768, 12, 50257, 2048, "flash", 0),
    "gpt3-355m-2k-flash": (24, 1024, 16, 50257, 2048, "flash", 0),
    "gpt3-760m-2k-flash": (24, 1536, 16, 50257, 2048, "flash", 0),
    "gpt3-1.3b-2k-flash": (24, 2048, 16, 50257, 2048, "flash", 0),
    "gpt3-1.3b-8k-flash": (24, 2048, 16, 50257, 8192, "flash", 0),
    "gpt3-2.7b-2k-flash": (32, 2560, 32, 50257, 2048, "flash", 0),
    "gpt3-2.7b-8k-flash": (32, 2560, 32, 50257, 8192, "flash", 0),
    # llm-foundry scripts/train/benchmarking/README.md, NumParams column
    "mpt-1b-2k": (24, 2048, 16, 50368, 2048, "mpt", 1315950592),
    "mpt-3b-2k": (32, 2560, 20, 50368, 2048, "mpt", 2651837440),
    "mpt-3b-8k": (32, 2560, 20, 50368, 8192, "mpt", 2667566080),
    "mpt-7b-2k": (32, 4096, 32, 50368, 2048, "mpt", 6658859008),
    "mpt-7b-8k": (32, 4096, 32, 50368, 8192, "mpt", 6684024832),
    "mpt-13b-2k": (40, 5120, 40, 50368, 2048, "mpt", 12853954560),
    "mpt-30b-2k": (48, 7168, 56, 50368, 2048, "mpt", 29975214080),
}


def load_gen():
    spec = importlib.util.spec_from_file_location("gen_gpt3", os.path.join(ROOT, "models", "gen", "gen_gpt3.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def render(gen, name, shape):
    gen.L, gen.D, gen.HEADS, gen.V, gen.S, gen.VARIANT, published = shape
    desc = "%s (%d layers, d_model %d, %d heads, vocab %d, tied head), sequence length %d, %s kernels" % (
        name, gen.L, gen.D, gen.HEADS, gen.V, gen.S, gen.VARIANT)
    text, total = gen.model_text("validate/llm/models/%s.yaml" % name, "validate/llm/gen_llm_models.py", name, desc)
    assert not published or total == published, (name, total, published)
    return text


def main():
    check = sys.argv[1:] == ["--check"]
    gen = load_gen()
    os.makedirs(os.path.join(HERE, "models"), exist_ok=True)
    bad = 0
    for name, shape in MODELS.items():
        text = render(gen, name, shape)
        path = os.path.join(HERE, "models", name + ".yaml")
        bad |= gen.write_or_check(path, text, check)
    return bad


if __name__ == "__main__":
    sys.exit(main())
