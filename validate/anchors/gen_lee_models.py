#!/usr/bin/env python3
"""gen_lee_models.py - writes validate/anchors/models/gpt3-{xl,2.7b,6.7b,13b}.yaml,
the GPT-3 sizes of Lee et al.'s workloads (arXiv 2507.03114), through the
layer shapes of models/gen/gen_gpt3.py (minGPT-style GPT, GPT-2's vocabulary,
learned positions, tied head) with each size's row of the GPT-3 paper's
Table 2.1: layers, d_model, heads. Two departures, both Megatron-LM's
spellings of the same sizes: XL takes 16 heads of 128 (the table's 24 heads
of 128 do not make its d_model 2048), 13B d_model 5120 (the table's 5140,
which 40 heads do not divide). Context 2048, GPT-3's. Every kernel eager
(gen_gpt3.py's "eager" variant: the full S x S scores in memory, dropout,
fp32 loss), as minGPT and Megatron-LM without fused kernels run them; the
FlashAttention-2 paper's runs without FlashAttention use the XL and 2.7B
files too (validate/llm/check.py).

Run from the repository root: python3 validate/anchors/gen_lee_models.py [--check]
"""
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# name: (layers, d_model, heads), GPT-3 paper Table 2.1 (with the two departures above)
SIZES = {"gpt3-xl": (24, 2048, 16), "gpt3-2.7b": (32, 2560, 32), "gpt3-6.7b": (32, 4096, 32),
         "gpt3-13b": (40, 5120, 40)}


def load_gen():
    spec = importlib.util.spec_from_file_location("gen_gpt3", os.path.join(ROOT, "models", "gen", "gen_gpt3.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def write(gen, name, shape, check):
    gen.L, gen.D, gen.HEADS = shape
    gen.VARIANT = "eager"
    desc = "GPT-3 %s (%d layers, d_model %d, %d heads, vocab %d, tied head), sequence length %d" % (
        name[5:].upper(), gen.L, gen.D, gen.HEADS, gen.V, gen.S)
    text, total = gen.model_text("validate/anchors/models/%s.yaml" % name, "validate/anchors/gen_lee_models.py",
                                 name, desc)
    path = os.path.join(HERE, "models", name + ".yaml")
    rc = gen.write_or_check(path, text, check)
    if not check:
        print("%s: %d parameters" % (os.path.relpath(path, ROOT), total), file=sys.stderr)
    return rc


def main():
    check = sys.argv[1:] == ["--check"]
    os.makedirs(os.path.join(HERE, "models"), exist_ok=True)
    gen = load_gen()
    return max(write(gen, name, shape, check) for name, shape in SIZES.items())


if __name__ == "__main__":
    sys.exit(main())
