#!/usr/bin/env python3
"""gen_gpt3.py - writes models/gpt3-175b.yaml, GPT-3 175B as a minGPT-style
GPT (the FSDP paper's GPT-175B), the model of configs/fsdp-gpt3-175b.yaml.

Shapes: the GPT-3 paper's 175B row (96 layers, d_model 12288, 96 heads of
128), GPT-2's vocabulary (50257) and learned positions, context 2048;
pre-LayerNorm blocks (ln_1, attention, ln_2, MLP with 4d), a final
LayerNorm and an output head tied to the token embedding (no parameters of
its own), then the loss.

Every kernel a PyTorch step runs is a layer of its own, timed by its own
bound: the matrix products (attn.qkv, attn.proj, mlp.fc, mlp.proj, lm_head
as kind fc; the score products Q.K^T and P.V as kind attention, with the
head dimension d_model / heads as head_dim; the fused attention kernel as
kind fused_attention, with its sequence S as seq and the head dimension as
head_dim) by
their FLOPs, the element-wise and reduction kernels by the bytes they read
and write, so that their times add to the products' instead of hiding under
them. FLOPs as before the split: 2 per multiply-add, 5 per score for scale,
mask and softmax, 5 per element for LayerNorm, GELU and the adds folded (0).

Bytes each memory-bound kernel reads + writes per element in a bf16 (or
fp16) run, forward / backward:
  LayerNorm, eager (ln_1, ln_2, ln_f)   4 / 10  x, y; dy, x, dx, then dy, x
                                                again for the weight grads
  dropout, eager (drop, attn.drop,      5 / 5   x, y, 1-byte mask; dy,
    mlp.drop)                                   mask, dx
  residual add (res_1, res_2)           6 / 6   a, b, y; the two gradient
                                                streams summed where they meet
  GELU (mlp.gelu, per 4d element)       4 / 6   x, y; dy, x, dx
  bias gradients (bias_grad, per        0 / 2   the bias add runs in the
    element of the four Linear outputs,         GEMM's epilogue (cuBLASLt,
    9 d a token)                                F.linear); backward sums dy
  score chain, eager (attn.softmax,    17 / 19  scale 4/4, masked_fill 4/4,
    per score)                                  softmax 4/6, dropout 5/5
  loss, eager (per logit)              14 / 22  cast to fp32 2+4, log_softmax
                                                4+4; nll grad 4, log_softmax
                                                backward 4+4+4, cast 4+2
  dropout + residual add + LayerNorm,  13 / 17  branch 2, residual 4 (fp32),
    fused (ln_*: flash variant)                 residual out 4, y 2, mask 1;
                                                dy 2, residual 4, mask 1,
                                                dresidual 4, dx 2, dresidual 4
  loss, fused cross-entropy (per logit) 2 / 4   logits; logits, dlogits
Each memory-bound layer's mem_factor (the share of the GPU's copy rate its
kernels reach) comes from the kernels measured on an H200 (memfactor.py):
LayerNorm, dropout, GELU and the loss at their own measured rates; the
residual adds and the bias gradients at an add's (1); the score chain its
parts combined: scale and masked_fill at an add's, softmax and dropout at
theirs. The fused kernels of the flash variant (dropout + add + LayerNorm,
the fused cross-entropy) have no measurement and no factor.
arsim times a layer's backward as backward_ratio (2) times its forward and
counts mem_bytes at fp32 (halved in a bf16 run), so a memory-bound layer of
n elements carries mem_bytes = 2 (f + b) n / 3, rounded: its forward and
backward together move f + b bytes an element (the split between the two
passes is lost; a recompute repeats (f + b) / 3). A matrix product's
mem_bytes is its forward's input and output at 4 bytes an element.

Three variants (VARIANT), the kernels each source's setup runs:
  eager  every kernel above eager, dropout on (minGPT, HuggingFace GPT-2;
         the FSDP paper's GPT-175B, Lee et al.'s models, the runs without
         FlashAttention): 15 layers a block;
  flash  the FlashAttention repository's GPT (use_flash_attn,
         fused_dropout_add_ln, fused_mlp, fused_bias_fc, fused cross-
         entropy): attn.core one fused causal kernel, dropout + add +
         LayerNorm one kernel (ln_1, ln_2, ln_f), the bias adds and GELU
         (forward and backward) in the GEMM epilogues: 7 layers a block;
  mpt    llm-foundry's MPT: attn.core fused, no dropout (its default p is
         0), eager LayerNorm, GELU, residual adds and bias gradients, a
         fused cross-entropy (assumed): 11 layers a block.
The fused attention kernel skips the masked half of the score products and
recomputes the scores in backward (five S^2 d products against the
forward's two): its FLOPs are half the full products' and score ops, 7/6-
fold, so that forward + 2 x forward = 3.5 x the causal products.

act_bytes: what each layer saves for backward per sample with bf16 mixed
precision and no checkpointing, the block's total as before the split
(LayerNorm: input + fp32 mean and rstd per row; attention: input, q, k, v,
the softmax output or flash's fp32 log-sum-exp per row and head, context;
MLP: input, the fc output, the GELU output; head: its input); dropout masks
and the loss' fp32 log-probabilities are not counted.

Run from the repository root: python3 models/gen/gen_gpt3.py [--check]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from memfactor import Bytes, key as mem_factor_key  # noqa: E402

S, D, L, HEADS, V = 2048, 12288, 96, 96, 50257
VARIANT = "eager"
BF16, FP32, INT64 = 2, 4, 8

# bytes read + written per element in a bf16 run, (forward, backward): the docstring's table, each part
# with the measured kernel whose memory rate it runs at (memfactor.py; None: a fused kernel, unmeasured)
LN, FUSED_LN = Bytes(("layernorm", 4, 10)), Bytes((None, 13, 17))
DROPOUT, RESID = Bytes(("dropout", 5, 5)), Bytes(("add", 6, 6))
GELU, BIAS_GRAD = Bytes(("gelu_tanh", 4, 6)), Bytes(("add", 0, 2))
SCORES = Bytes(("add", 4, 4), ("add", 4, 4), ("softmax", 4, 6), ("dropout", 5, 5))
LOSS, FUSED_LOSS = Bytes(("cross_entropy_fp32", 14, 22)), Bytes((None, 2, 4))


def layer(name, kind, tensors, flops, mem, act):
    return {"name": name, "kind": kind, "tensors": tensors, "params": sum(tensors),
            "flops": flops, "mem_bytes": mem, "act_bytes": act}


def mem(n, fb):
    """mem_bytes of a memory-bound kernel of n elements moving fb = (forward, backward) bytes each."""
    return (2 * (fb[0] + fb[1]) * n + 1) // 3


def gemm(name, kind, tensors, flops, n_in, n_out, act):
    return layer(name, kind, tensors, flops, 4 * (n_in + n_out), act)


def elementwise(name, n, fb, act=0, flops=0, kind="act"):
    return dict(layer(name, kind, [], flops, mem(n, fb), act), mem_factor=mem_factor_key(fb))


def norm(name):
    fb = FUSED_LN if VARIANT == "flash" else LN
    return dict(layer(name, "norm", [D, D], 5 * S * D, mem(S * D, fb), S * D * BF16 + 2 * S * FP32),
                mem_factor=mem_factor_key(fb))


def flash_flops():
    """The fused causal kernel's FLOPs (the docstring): half the full products and score ops, 7/6-fold."""
    return (4 * S * S * D + 5 * S * S * HEADS) // 2 * 7 // 6


def attention(h):
    scores = S * S * HEADS
    out = [gemm(h + ".attn.qkv", "fc", [3 * D * D, 3 * D], 2 * S * D * 3 * D, S * D, 3 * S * D, S * D * BF16)]
    if VARIANT == "eager":
        out += [dict(gemm(h + ".attn.qk", "attention", [], 2 * S * S * D, 2 * S * D, scores, 2 * S * D * BF16),
                     head_dim=D // HEADS),
                elementwise(h + ".attn.softmax", scores, SCORES, scores * BF16, 5 * scores),
                dict(gemm(h + ".attn.pv", "attention", [], 2 * S * S * D, scores + S * D, S * D, S * D * BF16),
                     head_dim=D // HEADS)]
    else:
        out.append(dict(gemm(h + ".attn.core", "fused_attention", [], flash_flops(), 3 * S * D, S * D,
                             3 * S * D * BF16 + S * HEADS * FP32), seq=S, head_dim=D // HEADS))
    out.append(gemm(h + ".attn.proj", "fc", [D * D, D], 2 * S * D * D, S * D, S * D, S * D * BF16))
    return out


def mlp(h):
    out = [gemm(h + ".mlp.fc", "fc", [4 * D * D, 4 * D], 2 * S * D * 4 * D, S * D, 4 * S * D, S * D * BF16)]
    if VARIANT == "flash":      # GELU in the fc's epilogue: the proj saves both the fc and the GELU output
        return out + [gemm(h + ".mlp.proj", "fc", [4 * D * D, D], 2 * S * 4 * D * D, 4 * S * D, S * D,
                           8 * S * D * BF16)]
    return out + [elementwise(h + ".mlp.gelu", 4 * S * D, GELU, 4 * S * D * BF16),
                  gemm(h + ".mlp.proj", "fc", [4 * D * D, D], 2 * S * 4 * D * D, 4 * S * D, S * D,
                       4 * S * D * BF16)]


def block(i):
    """Block i's layers in forward order; in the flash variant ln_1 and ln_2 carry the dropout and residual
    add before them (fused_dropout_add_ln)."""
    h = "h.%d" % i
    out = [norm(h + ".ln_1")] + attention(h)
    if VARIANT == "eager":
        out.append(elementwise(h + ".attn.drop", S * D, DROPOUT))
    if VARIANT != "flash":
        out.append(elementwise(h + ".res_1", S * D, RESID))
    out += [norm(h + ".ln_2")] + mlp(h)
    if VARIANT == "eager":
        out.append(elementwise(h + ".mlp.drop", S * D, DROPOUT))
    if VARIANT != "flash":
        out += [elementwise(h + ".res_2", S * D, RESID), elementwise(h + ".bias_grad", 9 * S * D, BIAS_GRAD)]
    return out


def layers():
    out = [layer("wte", "embedding", [V * D], 0, S * D * FP32, S * INT64),
           layer("wpe", "embedding", [S * D], S * D, 3 * S * D * FP32, 0)]
    if VARIANT == "eager":
        out.append(elementwise("drop", S * D, DROPOUT))
    for i in range(L):
        out += block(i)
    out.append(norm("ln_f"))
    out.append(gemm("lm_head", "fc", [], 2 * S * D * V, S * D, S * V, S * D * BF16))
    out.append(elementwise("loss", S * V, LOSS if VARIANT == "eager" else FUSED_LOSS))
    return out


def line(l):
    return ("  - {name: %s, kind: %s, params: %d, tensors: [%s], flops: %d, mem_bytes: %d, act_bytes: %d%s%s}"
            % (l["name"], l["kind"], l["params"], ", ".join(str(t) for t in l["tensors"]), l["flops"],
               l["mem_bytes"], l["act_bytes"], "".join(", %s: %d" % (k, l[k]) for k in ("seq", "head_dim") if k in l),
               l.get("mem_factor", "")))


def model_text(path, generator, name, desc):
    """The model file, at repository path `path`, of the shape and variant now set (L, D, HEADS, V, S,
    VARIANT), as `generator` writes it; and its parameter count (checked against 12Ld^2 + 13Ld + Vd + Sd + 2d)."""
    ls = layers()
    total = sum(l["params"] for l in ls)
    assert total == 12 * L * D * D + 13 * L * D + V * D + S * D + 2 * D, total
    out = ["# %s - %s" % (path, desc),
           "# Generated by %s (the layers of models/gen/gen_gpt3.py) -" % generator,
           "# do not edit by hand. flops: forward FLOPs per sample; mem_bytes: activation bytes read +",
           "# written per sample at fp32 (a memory-bound kernel: forward + backward over 3, as",
           "# gen_gpt3.py's docstring says); act_bytes: bytes saved for backward per sample; mem_factor:",
           "# the share of the GPU's copy rate a memory-bound kernel reaches (models/gen/memfactor.py).",
           "name: %s" % name, 'description: "%s"' % desc, "params: %d" % total, "layers:"]
    out += [line(l) for l in ls]
    return "\n".join(out) + "\n", total


def write_or_check(path, text, check):
    """Writes text to path, or with check returns 1 (and says so) where the file differs."""
    if check:
        old = open(path).read() if os.path.exists(path) else ""
        if old != text:
            print("%s differs from what its generator writes" % path, file=sys.stderr)
            return 1
        return 0
    with open(path, "w") as f:
        f.write(text)
    return 0


def main():
    check = sys.argv[1:] == ["--check"]
    ls = layers()
    total = sum(l["params"] for l in ls)
    # independent of the layer list: 12 L d^2 + 13 L d + V d + S d + 2 d
    assert total == 12 * L * D * D + 13 * L * D + V * D + S * D + 2 * D, total
    head = ["# models/gpt3-175b.yaml - GPT-3 175B (96 layers, d_model 12288, 96 heads, vocab 50257, tied head), "
            "sequence length 2048"]
    doc = __doc__.strip().splitlines()
    head += [("# " + s).rstrip() for s in doc if not s.startswith("Run from")]
    head += ["# Generated by models/gen/gen_gpt3.py - do not edit by hand. Layers in forward order;",
             "# flops: forward FLOPs per sample (1 multiply-add = 2 FLOPs); mem_bytes: activation bytes",
             "# read + written per sample at fp32 (a memory-bound kernel: forward + backward over 3, above);",
             "# act_bytes: bytes saved for backward per sample; mem_factor: the share of the GPU's copy rate",
             "# a memory-bound kernel reaches (models/gen/memfactor.py)."]
    out = head + ["name: gpt3-175b",
                  'description: "GPT-3 175B (96 layers, d_model 12288, 96 heads, vocab 50257, tied head), '
                  'sequence length 2048"', "params: %d" % total, "layers:"]
    out += [line(l) for l in ls]
    rc = write_or_check("models/gpt3-175b.yaml", "\n".join(out) + "\n", check)
    if not check:
        print("models/gpt3-175b.yaml: %d layers, %d parameters" % (len(ls), total), file=sys.stderr)
    return rc


if __name__ == "__main__":
    sys.exit(main())
