#!/usr/bin/env python3
"""gen_models.py - generate arsim's model and GPU files from the architectures.

MAINTAINER TOOL.  It is not needed to build, test or run arsim: its outputs are
committed.  Running it again must reproduce them byte for byte:

    python3 models/gen/gen_models.py            # rewrite the files below
    python3 models/gen/gen_models.py --check    # exit 1 if any committed file differs
    python3 models/gen/gen_models.py --report F # also write a Markdown summary to F

The layer records and their counting rules are modelrec.py's, Llama 3's
layers llama3_layers.py's; this file holds the other architectures, the
model table with its asserted figures, the YAML writer and the DDP buckets.

Outputs (paths relative to the repository root):
    models/{vgg16,vgg16-cifar10,resnet50,alexnet,bert-base,gpt2}.yaml
    models/{llama3-8b,llama3-70b}.yaml
    tests/data/ddp_buckets.txt   (PyTorch DDP bucket layouts, a test oracle)

Pure Python 3, standard library only (PyYAML, when installed, is used only to
round-trip check the YAML).  Every layer is computed from the architecture;
the parameter totals, tensor counts and per-stage sums are asserted against
the published figures (torchvision, Hugging Face, docs/dev/references.md §4).

Counting conventions (also written into each YAML banner):
  * params / tensors: the trainable tensors in model.parameters() order
    (PyTorch registration order), sizes in elements.
  * flops: forward FLOPs per sample, one multiply-add = 2 FLOPs.
      conv    2 * Cin/groups * Kh * Kw * Cout * Hout * Wout   (bias adds ignored)
      linear  2 * in * out per row                            (bias adds ignored)
      maxpool Kh * Kw comparisons per output element
      avgpool one add per input element
      BN / LayerNorm  5 FLOPs per element (statistics: add, mul, add;
                      apply y = x*s + t: mul, add)
      residual add    1 FLOP per element, counted in the layer named
      attention core  Q.K^T and P.V 2*S*S*H each, scale+mask+softmax
                      5 FLOPs per score element
  * winograd: true on a 3x3 stride-1 ungrouped convolution (cuDNN can run
    it with a Winograd algorithm; models/gpus.yaml's winograd factor).
      activations (ReLU, GELU, tanh) and dropout are folded into the
      preceding layer at no cost (fused epilogue assumption).
  * mem_bytes: activation bytes read + written per sample in forward at fp32
    (input + output tensors of the layer's kernels); weights are excluded;
    token ids are int64 (8 bytes).  The Llama 3 files' memory-bound kernels
    instead carry 2 (f + b) n / 3 (forward and backward bytes, LLAMA3_BANNER).
  * act_bytes (Llama 3 files only): bytes the layer's kernels save for
    backward per sample at bf16 (fp32 where PyTorch keeps fp32: RMSNorm's
    rstd, SDPA's logsumexp), no activation checkpointing.
"""

import argparse
import os
import sys

from llama3_layers import LLAMA3_SEQ, llama3_8b, llama3_70b, llama3_blocks, llama3_params
# every layer-record helper, re-exported for validate/gen_vgg16_small.py (gen_models.conv2d, ...)
from modelrec import (FP32, INT64, adaptive_avgpool, attention_core, batchnorm, conv2d, layer,  # noqa: F401
                      layernorm, linear, maxpool)

MIB = 1024 * 1024
DDP_LIMITS = [1 * MIB, 25 * MIB]   # kDefaultFirstBucketBytes, bucket_cap_mb=25


# ---------------------------------------------------------------------------
# Models
# ---------------------------------------------------------------------------

VGG16_CFG = [64, 64, "M", 128, 128, "M", 256, 256, 256, "M",
             512, 512, 512, "M", 512, 512, 512, "M"]


def vgg16_features(size):
    layers, c, h, w = [], 3, size, size
    block, idx = 1, 1
    for v in VGG16_CFG:
        if v == "M":
            lay, h, w = maxpool("pool%d" % block, c, 2, 2, 0, h, w)
            layers.append(lay)
            block, idx = block + 1, 1
        else:
            lay, h, w = conv2d("conv%d_%d" % (block, idx), c, v, 3, 1, 1, h, w)
            layers.append(lay)
            c, idx = v, idx + 1
    return layers, c, h, w


def vgg16():
    layers, c, h, w = vgg16_features(224)
    assert (c, h, w) == (512, 7, 7)
    layers.append(adaptive_avgpool("avgpool", c, h, w, 7, 7))
    layers.append(linear("fc6", 512 * 7 * 7, 4096))
    layers.append(linear("fc7", 4096, 4096))
    layers.append(linear("fc8", 4096, 1000))
    return layers


def vgg16_cifar10():
    layers, c, h, w = vgg16_features(32)
    assert (c, h, w) == (512, 1, 1)
    layers.append(linear("fc6", 512, 4096))
    layers.append(linear("fc7", 4096, 4096))
    layers.append(linear("fc8", 4096, 10))
    return layers


def alexnet():
    L = []
    lay, h, w = conv2d("conv1", 3, 64, 11, 4, 2, 224, 224); L.append(lay)
    lay, h, w = maxpool("pool1", 64, 3, 2, 0, h, w); L.append(lay)
    lay, h, w = conv2d("conv2", 64, 192, 5, 1, 2, h, w); L.append(lay)
    lay, h, w = maxpool("pool2", 192, 3, 2, 0, h, w); L.append(lay)
    lay, h, w = conv2d("conv3", 192, 384, 3, 1, 1, h, w); L.append(lay)
    lay, h, w = conv2d("conv4", 384, 256, 3, 1, 1, h, w); L.append(lay)
    lay, h, w = conv2d("conv5", 256, 256, 3, 1, 1, h, w); L.append(lay)
    lay, h, w = maxpool("pool5", 256, 3, 2, 0, h, w); L.append(lay)
    assert (h, w) == (6, 6)
    L.append(adaptive_avgpool("avgpool", 256, h, w, 6, 6))
    L.append(linear("fc6", 256 * 6 * 6, 4096))
    L.append(linear("fc7", 4096, 4096))
    L.append(linear("fc8", 4096, 1000))
    return L


def resnet50():
    L = []
    lay, h, w = conv2d("conv1", 3, 64, 7, 2, 3, 224, 224, bias=False); L.append(lay)
    L.append(batchnorm("bn1", 64, h, w))
    lay, h, w = maxpool("maxpool", 64, 3, 2, 1, h, w); L.append(lay)
    inplanes = 64
    for stage, (planes, blocks, stride) in enumerate(
            [(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)], start=1):
        for b in range(blocks):
            s = stride if b == 0 else 1
            p = "layer%d.%d." % (stage, b)
            out = planes * 4
            lay, h1, w1 = conv2d(p + "conv1", inplanes, planes, 1, 1, 0, h, w, bias=False)
            L.append(lay)
            L.append(batchnorm(p + "bn1", planes, h1, w1))
            # torchvision v1.5: the stride sits on the 3x3 conv
            lay, h2, w2 = conv2d(p + "conv2", planes, planes, 3, s, 1, h1, w1, bias=False)
            L.append(lay)
            L.append(batchnorm(p + "bn2", planes, h2, w2))
            lay, h3, w3 = conv2d(p + "conv3", planes, out, 1, 1, 0, h2, w2, bias=False)
            L.append(lay)
            L.append(batchnorm(p + "bn3", out, h3, w3, residual=True))
            if b == 0 and (s != 1 or inplanes != out):
                lay, hd, wd = conv2d(p + "downsample.0", inplanes, out, 1, s, 0, h, w,
                                     bias=False)
                L.append(lay)
                assert (hd, wd) == (h3, w3)
                L.append(batchnorm(p + "downsample.1", out, hd, wd))
            inplanes, h, w = out, h3, w3
    assert (inplanes, h, w) == (2048, 7, 7)
    L.append(adaptive_avgpool("avgpool", 2048, h, w, 1, 1))
    L.append(linear("fc", 2048, 1000))
    return L


BERT_SEQ = 128


def bert_base(seq=BERT_SEQ):
    V, H, NL, A, I, P, T, S = 30522, 768, 12, 12, 3072, 512, 2, seq
    L = []
    ids = S * INT64
    L.append(layer("embeddings.word_embeddings", "embedding",
                   [("weight", V * H)], 0, ids + S * H * FP32))
    L.append(layer("embeddings.position_embeddings", "embedding",
                   [("weight", P * H)], 0, ids + S * H * FP32))
    L.append(layer("embeddings.token_type_embeddings", "embedding",
                   [("weight", T * H)], 0, ids + S * H * FP32))
    # the two adds word + token_type + position are counted here
    L.append(layernorm("embeddings.LayerNorm", S, H, extra_inputs=2,
                       extra_flops=2 * S * H))
    for i in range(NL):
        p = "encoder.layer.%d." % i
        core_flops, core_mem = attention_core(S, H, A)
        qkv_flops = 3 * 2 * S * H * H
        qkv_mem = 3 * 2 * S * H * FP32          # three Linear kernels
        L.append(layer(p + "attention.self", "attention",
                       [("query.weight", H * H), ("query.bias", H),
                        ("key.weight", H * H), ("key.bias", H),
                        ("value.weight", H * H), ("value.bias", H)],
                       qkv_flops + core_flops, qkv_mem + core_mem))
        L.append(linear(p + "attention.output.dense", H, H, rows=S, kind="attention"))
        L.append(layernorm(p + "attention.output.LayerNorm", S, H, residual=True))
        L.append(linear(p + "intermediate.dense", H, I, rows=S))      # GELU folded
        L.append(linear(p + "output.dense", I, H, rows=S))
        L.append(layernorm(p + "output.LayerNorm", S, H, residual=True))
    # pooler: dense + tanh on the first token only
    L.append(linear("pooler.dense", H, H, rows=1))
    return L


GPT2_SEQ = 1024


def gpt2():
    V, H, NL, A, P, S = 50257, 768, 12, 12, 1024, GPT2_SEQ
    L = []
    ids = S * INT64
    L.append(layer("wte", "embedding", [("weight", V * H)], 0, ids + S * H * FP32))
    # wpe: lookup, plus the add inputs_embeds + position_embeds
    L.append(layer("wpe", "embedding", [("weight", P * H)], S * H,
                   ids + 3 * S * H * FP32))
    for i in range(NL):
        p = "h.%d." % i
        L.append(layernorm(p + "ln_1", S, H))
        core_flops, core_mem = attention_core(S, H, A)
        L.append(linear(p + "attn.c_attn", H, 3 * H, rows=S, kind="attention",
                        extra_flops=core_flops, extra_mem=core_mem))
        # c_proj includes the residual add (reads the residual)
        L.append(linear(p + "attn.c_proj", H, H, rows=S, kind="attention",
                        extra_flops=S * H, extra_mem=S * H * FP32))
        L.append(layernorm(p + "ln_2", S, H))
        L.append(linear(p + "mlp.c_fc", H, 4 * H, rows=S))            # gelu_new folded
        L.append(linear(p + "mlp.c_proj", 4 * H, H, rows=S,
                        extra_flops=S * H, extra_mem=S * H * FP32))
    L.append(layernorm("ln_f", S, H))
    # LM head tied to wte: compute only, no parameter of its own
    L.append(linear("lm_head", H, V, rows=S, bias=False, weight_numel=0))
    return L


# ---------------------------------------------------------------------------
# Model table: file name, description, banner, builder, asserted figures
# ---------------------------------------------------------------------------

COMMON_BANNER = [
    "Generated by models/gen/gen_models.py (maintainer tool) - do not edit by hand.",
    "Layers in forward order (input side first).  params = sum of tensors; tensors",
    "are the parameter tensors in model.parameters() order, sizes in elements.",
    "flops: forward FLOPs per sample, 1 multiply-add = 2 FLOPs, bias adds ignored.",
    "mem_bytes: activation bytes read + written per sample in forward at fp32",
    "(inputs + outputs of the layer's kernels; weights excluded).",
    "winograd: true marks a 3x3 stride-1 convolution (cuDNN's Winograd algorithms",
    "apply; models/gpus.yaml divides its FLOPs by the GPU's winograd factor).",
]

LLAMA3_BANNER = [
    "Llama 3 as torchtitan builds it (torchtitan/models/llama3/model.py), trained",
    "at sequence length 8192 (torchtitan's llama3 training configs).  Every kernel",
    "torchtitan's eager step runs is a layer of its own, timed by its own bound, so",
    "that the element-wise kernels' times add to the matrix products' instead of",
    "hiding under them.  Block i is layers.i.: attention_norm, attention.wq, .wk,",
    ".wv (kind fc), attention.rope, attention.repeat_kv, attention.core (kind",
    "fused_attention, seq 8192, head_dim 128), attention.wo, attention.residual, ffn_norm,",
    "feed_forward.w1, .w3, feed_forward.silu_mul, feed_forward.w2,",
    "feed_forward.residual; then norm,",
    "output (untied) and loss.  Tensors in forward order.  FLOPs: RMSNorm 4 per",
    "element; RoPE 3 per element of q and k; the SwiGLU product 1 per element",
    "(silu folded); a residual add 1 per element; attention.core: Q.K^T and P.V",
    "2*head_dim per unmasked query-key pair, softmax 5 per pair, S(S+1)/2 pairs per",
    "head (CAUSAL: flash attention skips the masked tiles; torchtitan's MFU counts",
    "the full S*S), 7/6-fold since the fused kernel's backward recomputes the",
    "scores (five products against the forward's two) and arsim times a backward",
    "as twice its forward; the loss 0.  The memory-bound kernels (norms, rope,",
    "repeat_kv, silu_mul, residual adds, loss) carry mem_bytes = 2 (f + b) n / 3",
    "for n elements moving f bytes forward and b backward in bf16 (arsim halves",
    "fp32 bytes in a bf16 run and times backward as 2 x forward), per element:",
    "RMSNorm in fp32 36 / 84, rotary through complex fp32 20 / 20 (q and k),",
    "repeat_kv 20 / 20 (per element of k), SiLU(w1 x) * w3 x 10 / 18 (per ffn",
    "element), residual add 6 / 6, cross-entropy on fp32 logits 14 / 22 (per",
    "logit).  A matrix product's and the core's mem_bytes: input + output at fp32.",
    "act_bytes: bytes a layer saves for backward per sample with bf16 mixed",
    "precision and no activation checkpointing (norm: input + fp32 rstd per row;",
    "wq and w1: the normed input; attention.core: q, k, v repeated, its output,",
    "fp32 logsumexp per row and head; silu_mul: w1 x, silu(w1 x), w3 x; w2 their",
    "product; output: its input), a block's total as with one layer per module.",
    "act_peak_bytes: bytes a layer holds beyond act_bytes at the busiest moment",
    "of its forward or backward, per sample (embedding: its output; norm: three",
    "fp32 copies in backward; attention.core: flash attention's backward, 5 bf16",
    "and 1 fp32 tensors of S x H and fp32 row sums; silu_mul: the block's incoming",
    "and 3 bf16 S x ffn gradients; loss: 3 fp32 S x vocab tensors).",
]

MODELS = [
    {
        "file": "vgg16", "build": vgg16, "params": 138357544, "tensors": 32,
        "description": "VGG-16 (torchvision cfg D, no BN), ImageNet 224x224",
        "banner": [
            "VGG-16, configuration D without batch norm: torchvision.models.vgg16().",
            "Input 3x224x224 (ImageNet), 1000 classes.  Each conv/fc layer is",
            "weight+bias; its ReLU (and the classifier's Dropout) is folded in at no",
            "cost.  pool1..pool5: 2x2/2 max pools (4 comparisons per output element);",
            "avgpool: torchvision's AdaptiveAvgPool2d((7,7)), an identity at 224x224",
            "(1 add per element).  15.47 GMAC per image forward.",
        ],
    },
    {
        "file": "vgg16-cifar10", "build": vgg16_cifar10, "params": 33638218,
        "tensors": 32,
        "description": "VGG-16 (torchvision cfg D features, no BN) on CIFAR-10 32x32, "
                       "classifier 512-4096-4096-10",
        "banner": [
            "VGG-16 on CIFAR-10: torchvision cfg D features (13 conv, no BN) on a",
            "3x32x32 input, 1x1x512 after pool5, no avgpool, torchvision-style",
            "classifier 512->4096->4096->10.  ReLU/Dropout folded in at no cost.",
        ],
    },
    {
        "file": "resnet50", "build": resnet50, "params": 25557032, "tensors": 161,
        "description": "ResNet-50 (torchvision v1.5, stride on the 3x3 conv), "
                       "ImageNet 224x224",
        "banner": [
            "ResNet-50: torchvision.models.resnet50() (Bottleneck v1.5: stride on conv2).",
            "Input 3x224x224 (ImageNet), 1000 classes.  Layer names are torchvision",
            "module names; each conv (no bias) and each BatchNorm2d (weight, bias) is a",
            "layer, downsample.0 (conv) / downsample.1 (bn) included; running stats are",
            "buffers, not parameters.  ReLUs are folded into the preceding bn; each",
            "block's residual add and final ReLU are counted in its bn3 (1 FLOP and one",
            "extra read per element).  BN: 5 FLOPs per element.  maxpool 3x3/2 pad 1:",
            "9 comparisons per output element; avgpool 7x7 -> 1: 1 add per element.",
        ],
    },
    {
        "file": "alexnet", "build": alexnet, "params": 61100840, "tensors": 16,
        "description": "AlexNet (torchvision), ImageNet 224x224",
        "banner": [
            "AlexNet: torchvision.models.alexnet() (the one-GPU variant, 64-192-384-",
            "256-256 channels).  Input 3x224x224, 1000 classes.  ReLU/Dropout folded in",
            "at no cost.  pool1/pool2/pool5: 3x3/2 max pools (9 comparisons per output",
            "element); avgpool: AdaptiveAvgPool2d((6,6)), an identity at 224x224.",
        ],
    },
    {
        "file": "bert-base", "build": bert_base, "params": 109482240, "tensors": 199,
        "description": "BERT-base uncased (HF BertModel with pooler, no MLM head), "
                       "sequence length 128",
        "banner": [
            "BERT-base: Hugging Face BertModel('bert-base-uncased') with its pooler,",
            "no pre-training (MLM/NSP) head.  vocab 30522, hidden 768, 12 layers,",
            "12 heads, intermediate 3072, 512 positions, 2 token types.",
            "FLOPs and bytes at sequence length 128 per sample.  Layer names are HF",
            "module names.  attention.self groups query, key, value (weight, bias each)",
            "and the attention core (Q.K^T, scale+mask+softmax at 5 FLOPs per score,",
            "P.V; full 128x128 scores); attention.output.dense is kind attention too.",
            "LayerNorm: 5 FLOPs per element, + the residual add (1 FLOP, one extra",
            "read).  embeddings.LayerNorm also counts the two embedding adds.",
            "Embedding lookups: 0 FLOPs, bytes = int64 ids + output.  GELU, tanh and",
            "dropout folded in at no cost.  pooler.dense runs on the first token only.",
        ],
    },
    {
        "file": "bert-base-384", "build": lambda: bert_base(384), "params": 109482240, "tensors": 199,
        "description": "BERT-base uncased (HF BertModel with pooler, no MLM head), "
                       "sequence length 384",
        "banner": [
            "BERT-base as models/bert-base.yaml (same layers and parameters) at sequence",
            "length 384: the length of the published SQuAD fine-tuning figures",
            "(validate/torch/published.yaml), whose QA head (2 x 768 weights) is left out.",
            "FLOPs and bytes at sequence length 384 per sample; full 384x384 scores.",
        ],
    },
    {
        "file": "gpt2", "build": gpt2, "params": 124439808, "tensors": 148,
        "description": "GPT-2 small (HF GPT2Model + tied LM head), sequence length 1024",
        "banner": [
            "GPT-2 small: Hugging Face GPT2Model('gpt2') parameters (vocab 50257,",
            "1024 positions, hidden 768, 12 layers, 12 heads, MLP 3072), plus the",
            "language-model head of GPT2LMHeadModel, whose weight is tied to wte: the",
            "lm_head layer has compute but no parameters (tied embeddings counted once;",
            "model.parameters() is the same 148 tensors for both HF classes).",
            "FLOPs and bytes at sequence length 1024 per sample.  HF Conv1D weights are",
            "[in, out]; sizes are element counts.  attn.c_attn groups the QKV projection",
            "and the attention core (Q.K^T, scale+mask+softmax at 5 FLOPs per score,",
            "P.V; full 1024x1024 scores as HF computes them).  attn.c_proj and",
            "mlp.c_proj include the residual add.  wpe includes the add",
            "wte(ids) + wpe(pos).  LayerNorm 5 FLOPs per element.  gelu_new and dropout",
            "folded in at no cost.  The loss (softmax over the logits) is not counted.",
        ],
    },
    {
        "file": "llama3-8b", "build": llama3_8b, "params": 8030261248, "tensors": 291,
        "description": "Llama 3 8B (torchtitan's llama3 8B: dim 4096, 32 layers, 32 heads, "
                       "8 KV heads, FFN 14336, vocab 128256), sequence length 8192",
        "banner": LLAMA3_BANNER,
    },
    {
        "file": "llama3-70b", "build": llama3_70b, "params": 70553706496, "tensors": 723,
        "description": "Llama 3 70B (torchtitan's llama3 70B: dim 8192, 80 layers, 64 heads, "
                       "8 KV heads, FFN 28672, vocab 128256), sequence length 8192",
        "banner": LLAMA3_BANNER,
    },
]


def check_model(m, layers):
    """Assert the published totals and sub-totals."""
    total = sum(l["params"] for l in layers)
    ntensors = sum(len(l["tensors"]) for l in layers)
    assert total == m["params"], (m["file"], total, m["params"])
    assert ntensors == m["tensors"], (m["file"], ntensors, m["tensors"])
    for l in layers:
        assert l["params"] == sum(n for _, n in l["tensors"])
        assert l["flops"] >= 0 and l["mem_bytes"] > 0
    names = [l["name"] for l in layers]
    assert len(set(names)) == len(names), m["file"]
    by = {l["name"]: l for l in layers}
    f = m["file"]
    if f == "vgg16":
        # docs/dev/references.md §4.1: params and GMAC per image per layer
        ref = {"conv1_1": (1792, 0.087), "conv1_2": (36928, 1.850),
               "conv2_1": (73856, 0.925), "conv2_2": (147584, 1.850),
               "conv3_1": (295168, 0.925), "conv3_2": (590080, 1.850),
               "conv3_3": (590080, 1.850), "conv4_1": (1180160, 0.925),
               "conv4_2": (2359808, 1.850), "conv4_3": (2359808, 1.850),
               "conv5_1": (2359808, 0.462), "conv5_2": (2359808, 0.462),
               "conv5_3": (2359808, 0.462), "fc6": (102764544, 0.103),
               "fc7": (16781312, 0.017), "fc8": (4097000, 0.004)}
        for name, (p, gmac) in ref.items():
            assert by[name]["params"] == p, name
            assert round(by[name]["flops"] / 2e9, 3) == gmac, (name, by[name]["flops"])
        conv = sum(l["params"] for l in layers if l["kind"] == "conv")
        fc = sum(l["params"] for l in layers if l["kind"] == "fc")
        assert (conv, fc) == (14714688, 123642856)
        mac = sum(l["flops"] for l in layers if l["kind"] in ("conv", "fc")) / 2e9
        assert round(mac, 2) == 15.47, mac
    if f == "resnet50":
        def stage(prefix):
            return sum(l["params"] for l in layers if l["name"].startswith(prefix))
        assert by["conv1"]["params"] == 9408 and by["bn1"]["params"] == 128
        assert [stage("layer%d." % i) for i in range(1, 5)] == \
            [215808, 1219584, 7098368, 14964736]
        assert by["fc"]["params"] == 2049000
        mac = sum(l["flops"] for l in layers if l["kind"] in ("conv", "fc")) / 2e9
        assert round(mac, 2) == 4.09, mac        # torchvision: 4.09 GMAC
    if f == "alexnet":
        mac = sum(l["flops"] for l in layers if l["kind"] in ("conv", "fc")) / 2e9
        assert round(mac, 2) == 0.71, mac        # torchvision: 0.71 GMAC
    if f in ("bert-base", "bert-base-384"):
        emb = sum(l["params"] for l in layers if l["name"].startswith("embeddings."))
        enc = sum(l["params"] for l in layers if l["name"].startswith("encoder."))
        assert (emb, enc, by["pooler.dense"]["params"]) == (23837184, 85054464, 590592)
    if f == "gpt2":
        assert by["wte"]["params"] == 38597376 and by["wpe"]["params"] == 786432
        assert by["lm_head"]["params"] == 0
    if f in ("llama3-8b", "llama3-70b"):
        cfg = {"llama3-8b": (4096, 32, 32, 8, 14336, 128256),
               "llama3-70b": (8192, 80, 64, 8, 28672, 128256)}[f]
        assert total == llama3_params(*cfg), (f, total)
        assert by["output"]["params"] == by["tok_embeddings"]["params"] == cfg[5] * cfg[0]
        dim, nl, S = cfg[0], cfg[1], LLAMA3_SEQ
        # forward FLOPs: 2 per weight per token for every matrix, plus the
        # causal core, the norms, RoPE, the SwiGLU product and the residuals
        matmul = 2 * (total - by["tok_embeddings"]["params"] - (2 * nl + 1) * dim) * S
        hd, heads, kvd = dim // cfg[2], cfg[2], cfg[3] * (dim // cfg[2])
        pairs = heads * S * (S + 1) // 2
        # (the fused core 7/6-fold: flash_core_flops)
        rest = nl * ((4 * hd + 5) * pairs * 7 // 6 + 3 * S * (dim + kvd) + S * cfg[4] + 2 * S * dim
                     + 2 * 4 * S * dim) + 4 * S * dim
        assert sum(l["flops"] for l in layers) == matmul + rest, f
        assert all("act_bytes" in l and "act_peak_bytes" in l for l in layers)
        # a block's kernels carry the block-level layers' parameters, saved
        # bytes and FLOPs (the core's recompute sixth aside), by block
        coarse = llama3_blocks(*cfg, LLAMA3_SEQ)

        def per_block(ls, key):
            out = {}
            for l in ls:
                b = l["name"].split(".")[1] if l["name"].startswith("layers.") else l["name"]
                out[b] = out.get(b, 0) + l[key]
            return {b: v for b, v in out.items() if v}
        for key in ("params", "act_bytes"):
            assert per_block(layers, key) == per_block(coarse, key), (f, key)
        extra = (4 * hd + 5) * pairs * 7 // 6 - (4 * hd + 5) * pairs
        fine, old = per_block(layers, "flops"), per_block(coarse, "flops")
        assert all(fine[str(i)] == old[str(i)] + extra for i in range(nl)), f
        assert len(layers) == 15 * nl + 4 and max(l["act_peak_bytes"] for l in layers) == \
            max(l["act_peak_bytes"] for l in coarse), f
    return total, ntensors


# ---------------------------------------------------------------------------
# YAML emission (hand-written so the bytes are fixed)
# ---------------------------------------------------------------------------

def emit_model(m, layers):
    out = ["# models/%s.yaml - %s" % (m["file"], m["description"])]
    out += ["# " + s for s in m["banner"]]
    out.append("#")
    out += ["# " + s for s in COMMON_BANNER]
    out.append("name: %s" % m["file"])
    out.append('description: "%s"' % m["description"])
    out.append("params: %d" % sum(l["params"] for l in layers))
    out.append("layers:")
    for l in layers:
        out.append("  - {name: %s, kind: %s, params: %d, tensors: [%s], flops: %d, "
                   "mem_bytes: %d%s%s}" % (l["name"], l["kind"], l["params"],
                                           ", ".join(str(n) for _, n in l["tensors"]),
                                           l["flops"], l["mem_bytes"],
                                           ", winograd: true" if l.get("winograd") else "",
                                           (", act_bytes: %d" % l["act_bytes"]
                                            if "act_bytes" in l else "") +
                                           (", act_peak_bytes: %d" % l["act_peak_bytes"]
                                            if "act_peak_bytes" in l else "") +
                                           (", seq: %d" % l["seq"] if "seq" in l else "") +
                                           (", head_dim: %d" % l["head_dim"] if "head_dim" in l else "") +
                                           l.get("mem_factor", "")))
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------
# DDP buckets (torch/csrc/distributed/c10d/reducer.cpp,
# compute_bucket_assignment_by_size; docs/dev/references.md §2.1)
# ---------------------------------------------------------------------------

def ddp_buckets(sizes, order, limits=DDP_LIMITS, elem=FP32):
    """sizes: numel per tensor (global forward index).  order: the tensor
    indices in append order.  A bucket closes as soon as its byte size is >=
    its limit; limits advance and the last one repeats.  Returns a list of
    buckets, each a list of global indices in append order."""
    buckets, cur, cur_bytes, li = [], [], 0, 0
    for i in order:
        cur.append(i)
        cur_bytes += sizes[i] * elem
        if cur_bytes >= limits[li]:
            buckets.append(cur)
            cur, cur_bytes = [], 0
            li = min(li + 1, len(limits) - 1)
    if cur:
        buckets.append(cur)
    return buckets


def tensor_table(layers):
    """[(global index, 'layer.suffix', numel)] in forward order."""
    t = []
    for l in layers:
        for suffix, n in l["tensors"]:
            t.append((len(t), "%s.%s" % (l["name"], suffix), n))
    return t


def bucket_layouts(layers):
    tt = tensor_table(layers)
    sizes = [n for _, _, n in tt]
    n = len(sizes)
    initial = list(reversed(ddp_buckets(sizes, range(n))))
    rebuilt = ddp_buckets(sizes, range(n - 1, -1, -1))
    for layout in (initial, rebuilt):
        flat = sorted(i for b in layout for i in b)
        assert flat == list(range(n))
    return tt, initial, rebuilt


def emit_buckets(models_layers):
    out = [
        "# tests/data/ddp_buckets.txt - PyTorch DDP gradient bucket layouts (test oracle).",
        "# Generated by models/gen/gen_models.py (maintainer tool) from models/*.yaml.",
        "# Rule (reducer.cpp compute_bucket_assignment_by_size): tensors appended one by",
        "# one; a bucket closes as soon as its size in bytes (fp32, 4 B per element) is",
        "# >= its limit; limits 1 MiB, then 25 MiB for every later bucket.",
        "#   initial layout: append in forward order (global index 0, 1, ...), then the",
        "#     bucket list is reversed; lines `MODEL k n bytes first last`",
        "#   rebuilt layout: append in gradient-ready order (reversed: highest index",
        "#     first), list not reversed; lines `MODEL rebuilt k n bytes first last`",
        "# k: bucket index in launch order from 0; n: tensors in the bucket; bytes: its",
        "# size; first, last: global tensor indices (0 = first tensor in forward order)",
        "# of the first and last tensor appended to the bucket, so first < last in the",
        "# initial layout and first > last in the rebuilt one.",
    ]
    for name, layers in models_layers:
        tt, initial, rebuilt = bucket_layouts(layers)
        sizes = [n for _, _, n in tt]
        for tag, layout in (("", initial), (" rebuilt", rebuilt)):
            for k, b in enumerate(layout):
                out.append("%s%s %d %d %d %d %d" % (
                    name, tag, k, len(b), sum(sizes[i] for i in b) * FP32, b[0], b[-1]))
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------
# Markdown report
# ---------------------------------------------------------------------------

def emit_report(built, bucket_models):
    out = ["# Model files: summary (generated by models/gen/gen_models.py --report)", "",
           "Conventions: see the banner of each models/*.yaml and of gen_models.py. "
           "GFLOPs are forward FLOPs per sample (1 MAC = 2 FLOPs); backward is about "
           "2x forward.", "",
           "| model | params | layers | tensors | fwd GFLOPs/sample | fwd MB/sample |",
           "|---|---:|---:|---:|---:|---:|"]
    for m, layers in built:
        out.append("| %s | %s | %d | %d | %.3f | %.1f |" % (
            m["file"], "{:,}".format(sum(l["params"] for l in layers)), len(layers),
            sum(len(l["tensors"]) for l in layers),
            sum(l["flops"] for l in layers) / 1e9,
            sum(l["mem_bytes"] for l in layers) / 1e6))
    out += ["", "## Parameters and FLOPs by layer kind", ""]
    for m, layers in built:
        total = sum(l["params"] for l in layers)
        tflops = sum(l["flops"] for l in layers)
        out.append("**%s** (%s)" % (m["file"], m["description"]))
        out.append("")
        out.append("| kind | layers | params | % params | fwd GFLOPs | % FLOPs |")
        out.append("|---|---:|---:|---:|---:|---:|")
        for kind in ("conv", "fc", "norm", "embedding", "attention", "pool", "act"):
            ls = [l for l in layers if l["kind"] == kind]
            if not ls:
                continue
            p = sum(l["params"] for l in ls)
            f = sum(l["flops"] for l in ls)
            out.append("| %s | %d | %s | %.1f | %.3f | %.1f |" % (
                kind, len(ls), "{:,}".format(p), 100.0 * p / total, f / 1e9,
                100.0 * f / tflops))
        out.append("")
    out += ["## DDP buckets (fp32; limits 1 MiB then 25 MiB; also in "
            "tests/data/ddp_buckets.txt)", ""]
    for name, layers in bucket_models:
        tt, initial, rebuilt = bucket_layouts(layers)
        for title, layout in (("initial (built in forward order, list reversed)",
                               initial),
                              ("rebuilt (built in gradient-ready order)", rebuilt)):
            out.append("**%s, %s**: %d buckets" % (name, title, len(layout)))
            out.append("")
            out.append("| k | tensors | bytes | MiB | first appended | last appended |")
            out.append("|---:|---:|---:|---:|---|---|")
            for k, b in enumerate(layout):
                nbytes = sum(tt[i][2] for i in b) * FP32
                out.append("| %d | %d | %d | %.3f | %d %s | %d %s |" % (
                    k, len(b), nbytes, nbytes / MIB, b[0], tt[b[0]][1],
                    b[-1], tt[b[-1]][1]))
            out.append("")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true",
                    help="compare with the files on disk; write nothing")
    ap.add_argument("--report", metavar="FILE", help="also write a Markdown summary")
    args = ap.parse_args()
    root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                         "..", ".."))
    files, built = {}, []
    for m in MODELS:
        layers = m["build"]()
        total, ntensors = check_model(m, layers)
        flops = sum(l["flops"] for l in layers)
        print("%-14s params %11d (%s)  layers %3d  tensors %3d  fwd %.3f GFLOPs/sample"
              % (m["file"], total, "{:,}".format(total), len(layers), ntensors,
                 flops / 1e9))
        files[os.path.join("models", m["file"] + ".yaml")] = emit_model(m, layers)
        built.append((m, layers))
    bucket_models = [(m["file"], layers) for m, layers in built
                     if m["file"] in ("vgg16", "resnet50")]
    files[os.path.join("tests", "data", "ddp_buckets.txt")] = emit_buckets(bucket_models)

    try:
        import yaml  # optional round-trip check only
    except ImportError:
        yaml = None
    if yaml is not None:
        for path, text in files.items():
            if not path.endswith(".yaml"):
                continue
            doc = yaml.safe_load(text)
            if "layers" in doc:
                assert sum(l["params"] for l in doc["layers"]) == doc["params"], path
                for l in doc["layers"]:
                    assert sum(l["tensors"]) == l["params"], (path, l["name"])
                    assert isinstance(l["name"], str)

    bad = 0
    for path, text in sorted(files.items()):
        full = os.path.join(root, path)
        if args.check:
            try:
                with open(full, encoding="utf-8") as fh:
                    same = fh.read() == text
            except OSError:
                same = False
            if not same:
                print("DIFFERS: %s" % path)
                bad = 1
        else:
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
    if args.report:
        with open(args.report, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(emit_report(built, bucket_models))
    return bad


if __name__ == "__main__":
    sys.exit(main())
