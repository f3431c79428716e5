"""modelrec.py - one layer of a generated model file as a record, and the
layer kinds' counting rules (gen_models.py's banner states them): a layer,
a convolution, pooling, a Linear, batch and layer norms, an eager
attention core.

MAINTAINER TOOL support (gen_models.py, llama3_layers.py,
validate/gen_vgg16_small.py through gen_models); not needed to build, test
or run arsim.  Standard library only.
"""

FP32 = 4          # bytes per element at fp32
INT64 = 8         # bytes per token id


def layer(name, kind, tensors, flops, mem_bytes):
    """tensors: list of (suffix, numel) in registration order."""
    assert kind in ("conv", "fc", "norm", "embedding", "attention", "fused_attention", "pool", "act")
    if kind in ("pool", "act"):
        assert not tensors
    return {"name": name, "kind": kind, "tensors": tensors,
            "params": sum(n for _, n in tensors),
            "flops": int(flops), "mem_bytes": int(mem_bytes)}


def conv2d(name, cin, cout, k, stride, pad, h, w, bias=True, groups=1):
    """Returns (layer, hout, wout).  Square kernel k, torchvision padding."""
    ho = (h + 2 * pad - k) // stride + 1
    wo = (w + 2 * pad - k) // stride + 1
    t = [("weight", cout * (cin // groups) * k * k)]
    if bias:
        t.append(("bias", cout))
    flops = 2 * (cin // groups) * k * k * cout * ho * wo
    mem = (cin * h * w + cout * ho * wo) * FP32
    lay = layer(name, "conv", t, flops, mem)
    # cuDNN's Winograd algorithms take 3x3 stride-1 (ungrouped) filters
    lay["winograd"] = k == 3 and stride == 1 and groups == 1
    return lay, ho, wo


def maxpool(name, c, k, stride, pad, h, w):
    ho = (h + 2 * pad - k) // stride + 1
    wo = (w + 2 * pad - k) // stride + 1
    flops = k * k * c * ho * wo
    mem = (c * h * w + c * ho * wo) * FP32
    return layer(name, "pool", [], flops, mem), ho, wo


def adaptive_avgpool(name, c, h, w, ho, wo):
    flops = c * h * w
    mem = (c * h * w + c * ho * wo) * FP32
    return layer(name, "pool", [], flops, mem)


def linear(name, fin, fout, rows=1, kind="fc", bias=True, extra_flops=0,
           extra_mem=0, weight_numel=None):
    """A Linear (or HF Conv1D) over `rows` positions; weight_numel=0 for a
    tied weight that is not a parameter of its own."""
    t = []
    wn = fin * fout if weight_numel is None else weight_numel
    if wn:
        t.append(("weight", wn))
    if bias:
        t.append(("bias", fout))
    flops = 2 * fin * fout * rows + extra_flops
    mem = (fin + fout) * rows * FP32 + extra_mem
    return layer(name, kind, t, flops, mem)


NORM_FLOPS_PER_ELEM = 5
SOFTMAX_FLOPS_PER_ELEM = 5


def batchnorm(name, c, h, w, residual=False):
    """BatchNorm2d (weight, bias); residual=True folds `out += identity`
    (and the ReLU after it) into this layer."""
    n = c * h * w
    flops = NORM_FLOPS_PER_ELEM * n + (n if residual else 0)
    mem = (2 * n + (n if residual else 0)) * FP32
    return layer(name, "norm", [("weight", c), ("bias", c)], flops, mem)


def layernorm(name, rows, hidden, residual=False, extra_inputs=0, extra_flops=0):
    """LayerNorm (weight, bias) over rows x hidden; residual folds an add of
    one more input; extra_inputs counts other summed inputs read."""
    n = rows * hidden
    flops = NORM_FLOPS_PER_ELEM * n + (n if residual else 0) + extra_flops
    mem = (2 + (1 if residual else 0) + extra_inputs) * n * FP32
    return layer(name, "norm", [("weight", hidden), ("bias", hidden)], flops, mem)


def attention_core(seq, hidden, heads):
    """FLOPs and bytes of scores = Q.K^T, scale+mask+softmax, context = P.V
    (full S x S scores, as HF computes them even when causal)."""
    scores = heads * seq * seq
    flops = (2 * seq * seq * hidden          # Q.K^T
             + SOFTMAX_FLOPS_PER_ELEM * scores
             + 2 * seq * seq * hidden)       # P.V
    mem = ((2 * seq * hidden + scores)       # read Q, K; write scores
           + 2 * scores                      # softmax read + write
           + (scores + seq * hidden + seq * hidden)) * FP32   # read P, V; write ctx
    return flops, mem
