"""llama3_layers.py - Llama 3 as torchtitan builds it, as layer records: the
block-level layers (llama3_blocks, for the per-layer-time generators) and
the kernel-level files models/llama3-8b.yaml and llama3-70b.yaml (llama3,
with each eager kernel's bytes and its measured memory factor), the
parameter count's closed form, and the bytes of torchtitan's eager kernels
(TITAN_BYTES, which gen_llama3_titan.py times).

MAINTAINER TOOL support (gen_models.py writes the files; llama3_base.py and
gen_llama3_titan.py read the layers); not needed to build, test or run
arsim.  Standard library only.
"""

from gen_gpt3 import LOSS, mem as kernel_mem
from memfactor import Bytes, key as mem_factor_key
from modelrec import FP32, INT64, SOFTMAX_FLOPS_PER_ELEM, layer, linear


# Llama 3 as torchtitan builds it (torchtitan/models/llama3/model.py): RMSNorm
# (weight only), GQA attention with k and v repeated to every head before SDPA
# (is_causal=True), RoPE, SwiGLU feed-forward w2(silu(w1 x) * w3 x), untied
# output projection.  FLOPs count the causal attention core: the flash and
# memory-efficient SDPA kernels skip the masked tiles, so a sequence of S
# computes S(S+1)/2 query-key pairs per head, not S*S.
BF16 = 2                 # bytes per element saved for backward (bf16 mixed precision)
RMSNORM_FLOPS_PER_ELEM = 4   # square, add (statistics); two muls (x * rstd * w)
ROPE_FLOPS_PER_ELEM = 3      # complex multiply: 4 mul + 2 add per pair of elements
LLAMA3_SEQ = 8192


def rmsnorm(name, rows, hidden, fb=None):
    """RMSNorm (weight only) over rows x hidden.  Saves its input (bf16) and
    the per-row reciprocal RMS (fp32) for backward.  mem_bytes: its input and
    output at fp32, or with fb = (forward, backward) bytes per element, a
    memory-bound kernel's (kernel())."""
    n = rows * hidden
    lay = layer(name, "norm", [("weight", hidden)], RMSNORM_FLOPS_PER_ELEM * n,
                2 * n * FP32 if fb is None else kernel_mem(n, fb))
    lay["act_bytes"] = n * BF16 + rows * FP32
    # backward: the gradient upcast to fp32 and the two fp32 partial
    # gradients of x * rstd
    lay["act_peak_bytes"] = 3 * n * FP32
    if fb is not None:
        lay["mem_factor"] = mem_factor_key(fb)
    return lay


def causal_core(seq, heads, head_dim):
    """Q.K^T, scale+mask+softmax, P.V over the S(S+1)/2 unmasked pairs per
    head; flash attention reads q, k, v and writes the context (no score
    matrix in memory)."""
    pairs = heads * seq * (seq + 1) // 2
    flops = 2 * head_dim * pairs + SOFTMAX_FLOPS_PER_ELEM * pairs + 2 * head_dim * pairs
    mem = 4 * seq * heads * head_dim * FP32
    return flops, mem


def llama3_blocks(dim, n_layers, n_heads, n_kv_heads, ffn, vocab, seq):
    """The block-level layers (attention_norm, attention, ffn_norm,
    feed_forward a block), each kernel of a layer folded into it: the layers
    of the measured and per-kernel-timed files (models/llama3-8b-h100.yaml,
    llama3-8b-titan.yaml; llama3_base.load_layers)."""
    S, H, hd = seq, dim, dim // n_heads
    kvd = n_kv_heads * hd
    L = []
    emb = layer("tok_embeddings", "embedding", [("weight", vocab * H)], 0,
                S * INT64 + S * H * FP32)
    emb["act_bytes"] = S * INT64                  # the token ids
    emb["act_peak_bytes"] = S * H * BF16          # its output; backward: the incoming gradient
    L.append(emb)
    for i in range(n_layers):
        p = "layers.%d." % i
        L.append(rmsnorm(p + "attention_norm", S, H))
        core_flops, core_mem = causal_core(S, n_heads, hd)
        flops = (2 * S * H * (H + 2 * kvd)            # wq, wk, wv
                 + ROPE_FLOPS_PER_ELEM * S * (H + kvd)  # RoPE on q and k
                 + core_flops
                 + 2 * S * H * H                      # wo
                 + S * H)                             # residual add
        mem = ((S * H + S * H + 2 * S * kvd)          # read x; write q, k, v
               + 2 * (S * H + S * kvd)                # RoPE read + write q, k
               + 2 * (S * kvd + S * H)                # repeat_kv: read k, v; write them per head
               + core_mem                             # read q, k, v; write context
               + 2 * S * H                            # wo: read context, write y
               + 3 * S * H) * FP32                    # residual: read 2, write 1
        lay = layer(p + "attention", "attention",
                    [("wq.weight", H * H), ("wk.weight", H * kvd),
                     ("wv.weight", H * kvd), ("wo.weight", H * H)], flops, mem)
        # saved: the normed input of wq/wk/wv; q, k, v (repeated) and the
        # context for SDPA (the context is also wo's input); SDPA's fp32
        # logsumexp per row and head
        lay["act_bytes"] = 5 * S * H * BF16 + S * n_heads * FP32
        # backward, in flash attention's: the incoming gradient, the
        # context's, dq and dk, dv repeated to every head (bf16), dq's fp32
        # accumulator and the fp32 row sums of dO * O per head
        lay["act_peak_bytes"] = 5 * S * H * BF16 + S * H * FP32 + S * n_heads * FP32
        L.append(lay)
        L.append(rmsnorm(p + "ffn_norm", S, H))
        flops = (2 * 2 * S * H * ffn                  # w1, w3
                 + S * ffn                            # silu(x1) * x3 (silu folded)
                 + 2 * S * ffn * H                    # w2
                 + S * H)                             # residual add
        mem = ((2 * S * H + 2 * S * ffn)              # w1, w3: read x twice, write x1, x3
               + 3 * S * ffn                          # silu-mul: read 2, write 1
               + (S * ffn + S * H)                    # w2
               + 3 * S * H) * FP32                    # residual
        lay = layer(p + "feed_forward", "fc",
                    [("w1.weight", H * ffn), ("w2.weight", ffn * H),
                     ("w3.weight", H * ffn)], flops, mem)
        # saved: x (w1, w3 input), x1 (silu input), silu(x1) and x3 (mul
        # operands), their product (w2 input)
        lay["act_bytes"] = (S * H + 4 * S * ffn) * BF16
        # backward: the incoming gradient, the product's, silu(w1 x)'s and
        # w3 x's (bf16)
        lay["act_peak_bytes"] = (S * H + 3 * S * ffn) * BF16
        L.append(lay)
    L.append(rmsnorm("norm", S, H))
    out = linear("output", H, vocab, rows=S, bias=False)
    out["act_bytes"] = S * H * BF16                  # its input
    # the loss head: cross_entropy(logits.float()) keeps log_softmax's
    # fp32 output for backward; its backward holds that, nll_loss's fp32
    # gradient and log_softmax's fp32 gradient at once (forward: the bf16
    # logits, their fp32 copy and the log_softmax output, 10 bytes)
    out["act_peak_bytes"] = 3 * S * vocab * FP32
    L.append(out)
    return L


# Bytes each eager kernel of torchtitan's block reads + writes per element in
# a bf16 run, (forward, backward): RMSNorm in fp32 per element of the input,
# rotary through complex fp32 per element of q and k, repeat_kv's copies of k
# and v per element of k, SiLU(w1 x) * w3 x per element of ffn, a residual
# add per element of dim.  gen_llama3_titan.py times its kernels from them.
# Each with the measured kernel whose memory rate it runs at (memfactor.py):
# the norm torchtitan's fp32 RMSNorm, rotary an add's, repeat_kv a copy's.
TITAN_BYTES = {"norm": Bytes(("rmsnorm_eager", 36, 84)), "rope": Bytes(("add", 20, 20)),
               "repeat_kv": Bytes(("copy", 20, 20)), "silu_mul": Bytes(("silu_mul", 10, 18)),
               "resid": Bytes(("add", 6, 6))}


def flash_core_flops(seq, heads, head_dim):
    """The fused causal kernel's forward FLOPs as arsim charges them: the
    causal core (causal_core) 7/6-fold, since its backward recomputes the
    scores (five products against the forward's two) and arsim times a
    backward as twice its forward: forward + backward = 3.5 x the core."""
    return causal_core(seq, heads, head_dim)[0] * 7 // 6


def kernel(name, kind, tensors, flops, n, fb, act=0, peak=0):
    """A memory-bound kernel of n elements moving fb = (forward, backward)
    bytes each (gen_gpt3.mem); tensors as layer()."""
    lay = layer(name, kind, tensors, flops, kernel_mem(n, fb))
    lay["act_bytes"], lay["act_peak_bytes"] = act, peak
    lay["mem_factor"] = mem_factor_key(fb)
    return lay


def matmul(name, rows, fin, fout, act=0):
    """A bias-free Linear over rows positions (kind fc): its forward's input
    and output at fp32, what it saves for backward (act)."""
    lay = linear(name, fin, fout, rows=rows, bias=False)
    lay["act_bytes"], lay["act_peak_bytes"] = act, 0
    return lay


def llama3_block(p, S, H, n_heads, kvd, ffn):
    """One block's kernels in forward order (p: its name prefix).  act_bytes
    as llama3_blocks' layers, each tensor with the kernel that saves it: the
    norms their input and rstd; wq the normed input (wq, wk, wv's); the core
    q, k, v repeated, its output (wo's input) and the logsumexp; silu_mul
    w1 x, silu(w1 x), w3 x; w2 their product (w1 the block's second normed
    input).  act_peak_bytes: the norms', the core's and silu_mul's as the
    folded layers' (attention, feed_forward)."""
    B, hd = TITAN_BYTES, H // n_heads
    core = layer(p + "attention.core", "fused_attention", [], flash_core_flops(S, n_heads, hd),
                 causal_core(S, n_heads, hd)[1])
    core["act_bytes"] = 4 * S * H * BF16 + S * n_heads * FP32
    core["seq"] = S
    core["head_dim"] = hd
    core["act_peak_bytes"] = 5 * S * H * BF16 + S * H * FP32 + S * n_heads * FP32
    return [
        rmsnorm(p + "attention_norm", S, H, B["norm"]),
        matmul(p + "attention.wq", S, H, H, act=S * H * BF16),
        matmul(p + "attention.wk", S, H, kvd),
        matmul(p + "attention.wv", S, H, kvd),
        kernel(p + "attention.rope", "act", [], ROPE_FLOPS_PER_ELEM * S * (H + kvd), S * (H + kvd), B["rope"]),
        kernel(p + "attention.repeat_kv", "act", [], 0, S * kvd, B["repeat_kv"]),
        core,
        matmul(p + "attention.wo", S, H, H),
        kernel(p + "attention.residual", "act", [], S * H, S * H, B["resid"]),
        rmsnorm(p + "ffn_norm", S, H, B["norm"]),
        matmul(p + "feed_forward.w1", S, H, ffn, act=S * H * BF16),
        matmul(p + "feed_forward.w3", S, H, ffn),
        kernel(p + "feed_forward.silu_mul", "act", [], S * ffn, S * ffn, B["silu_mul"], act=3 * S * ffn * BF16,
               peak=(S * H + 3 * S * ffn) * BF16),
        matmul(p + "feed_forward.w2", S, ffn, H, act=S * ffn * BF16),
        kernel(p + "feed_forward.residual", "act", [], S * H, S * H, B["resid"]),
    ]


def llama3(dim, n_layers, n_heads, n_kv_heads, ffn, vocab, seq):
    """Every kernel torchtitan's eager step runs, a layer each, timed by its
    own bound: the matrix products as kind fc, the fused causal attention as
    kind fused_attention, the element-wise kernels and the loss memory-bound."""
    S, H = seq, dim
    kvd = n_kv_heads * (dim // n_heads)
    emb = layer("tok_embeddings", "embedding", [("weight", vocab * H)], 0, S * INT64 + S * H * FP32)
    emb["act_bytes"] = S * INT64                  # the token ids
    emb["act_peak_bytes"] = S * H * BF16          # its output; backward: the incoming gradient
    L = [emb]
    for i in range(n_layers):
        L += llama3_block("layers.%d." % i, S, H, n_heads, kvd, ffn)
    L.append(rmsnorm("norm", S, H, TITAN_BYTES["norm"]))
    L.append(matmul("output", S, H, vocab, act=S * H * BF16))
    # cross_entropy(logits.float()): the cast, log_softmax and nll eager
    # (gen_gpt3.LOSS); it keeps log_softmax's fp32 output for backward,
    # which holds that, nll_loss's and log_softmax's fp32 gradients at once
    L.append(kernel("loss", "act", [], 0, S * vocab, LOSS, peak=3 * S * vocab * FP32))
    return L


def llama3_8b():
    return llama3(4096, 32, 32, 8, 14336, 128256, LLAMA3_SEQ)


def llama3_70b():
    return llama3(8192, 80, 64, 8, 28672, 128256, LLAMA3_SEQ)


def llama3_params(dim, n_layers, n_heads, n_kv_heads, ffn, vocab):
    """The closed form, independent of the layer list: embedding + output,
    per block (q, o: dim^2; k, v: dim x kv width; three FFN matrices; two
    norms), and the final norm."""
    kvd = n_kv_heads * (dim // n_heads)
    block = 2 * dim * dim + 2 * dim * kvd + 3 * dim * ffn + 2 * dim
    return 2 * vocab * dim + n_layers * block + dim
