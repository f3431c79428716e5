"""memfactor.py - the mem_factor of a generated memory-bound layer: the share
of the GPU's copy rate (a gpus file's mem_Bps x mem_efficiency) its kernels
reach, from the memory-bound kernels measured on the project's H200
(validate/kernels/h200/rates-run1.jsonl and -run2.jsonl, rates.py's mem
section). Shared by gen_gpt3.py (and the files built from its layers) and
gen_models.py's Llama 3 files.

A measured kernel's share, forward and backward: the bytes its call moves
per element (MEASURED_BYTES) times the elements over its time, over the
H200's 4.8 TB/s; the median over the widths measured (768 to 12288; the
softmax one width, the cross-entropy two vocabularies) in each run, the mean
of the two runs. A kernel measured forward only (add, copy: autograd's
backward of an add is no kernel) takes its forward share for backward too.

A generated layer is a list of parts (kernel, f, b): f and b the bytes the
generator counts per element for that part's forward and backward, kernel
the measured kernel whose shares it runs at. Its factor is

    (sum f + sum b) / sum (f / s_f + b / s_b) / copy_share,  at most 1,

copy_share the H200's mem_efficiency as gen_gpus_llm.py writes it in
models/gpus-llm.yaml (the mean of a copy's and an add's share, to 3
places), so that the layer's memory time in arsim, bytes / (4.8 TB/s x
copy_share x factor), is the time of its parts at their measured shares.
A part without a measurement of its own takes the nearest measured kernel:
the eager scale and masked_fill of the score chain, the residual add's
backward and the bias gradients (one streaming pass each) take add's; rotary
embedding (element-wise complex products) add's; repeat_kv (a copy of k and
v per head) copy's. A fused kernel (FlashAttention's dropout + add +
LayerNorm, a fused cross-entropy) is another implementation than the eager
kernels measured: it has no part here and no factor (1).

The factor is a property of the kernel's implementation (its passes and
reductions), measured on the H200 against its copy; the A100 and H100 take
it by assumption.

Bytes each measured call moves per element, forward / backward, every
eager kernel of the call counted (rates.py's mem_cases; the backward is
autograd.grad of the output with respect to the input alone, so no weight
or bias gradient runs):
  copy                 4 / -    x, y
  add                  6 / -    a, b, y
  gelu_tanh            4 / 6    x, y; dy, x, dx
  dropout              5 / 5    x, y, 1-byte mask; dy, mask, dx
  layernorm            4 / 6    x, y; dy, x, dx (fp32 mean and rstd per row
                                not counted)
  rmsnorm              4 / 6    F.rms_norm, as layernorm (no generator uses
                                it: torchtitan's norm is rmsnorm_eager)
  softmax              4 / 6    x, y; dy, y, dx
  silu_mul             10 / 12  silu: x, s; mul: s, b, y; backward
                                dy, b, ds, then ds, x, dx
  cross_entropy_fp32   14 / 22  cast 2 + 4, log_softmax 4 + 4; nll's
                                gradient 4, log_softmax backward 4 + 4 + 4,
                                cast 4 + 2 (gen_gpt3.py's eager loss)
  rmsnorm_eager        36 / 84  torchtitan's fp32 RMSNorm as llama3_layers.py
                                counts it (TITAN_BYTES); its backward count
                                includes the weight's gradient, which the
                                measured call skips, so its backward share
                                is an upper estimate
"""
import statistics

import gen_gpus_llm

MEASURED_BYTES = {"copy": (4, None), "add": (6, None), "gelu_tanh": (4, 6), "dropout": (5, 5),
                  "layernorm": (4, 6), "rmsnorm": (4, 6), "softmax": (4, 6), "silu_mul": (10, 12),
                  "cross_entropy_fp32": (14, 22), "rmsnorm_eager": (36, 84)}


class Bytes(tuple):
    """(forward, backward) bytes per element of a generated memory-bound layer, the sum of its parts;
    .parts: the (kernel, f, b) list, kernel None for a part with no measured kernel (a fused one)."""

    def __new__(cls, *parts):
        t = super().__new__(cls, (sum(p[1] for p in parts), sum(p[2] for p in parts)))
        t.parts = parts
        return t


def shares(root=None):
    """{kernel: (forward share, backward share)} of the H200's 4.8 TB/s, the mean of the two runs of the
    median over widths."""
    runs = gen_gpus_llm.load_runs(root or gen_gpus_llm.root_dir())
    hbm = gen_gpus_llm.HBM["h200"]

    def share(run, k, nbytes, pas):
        """Kernel k's share in one run, pass pas ("fwd_s" or "bwd_s"): the median over its widths."""
        return statistics.median(nbytes * r["elements"] / r[pas] / hbm
                                 for r in run if r["section"] == "mem" and r["kernel"] == k)

    out = {}
    for k, (f, b) in MEASURED_BYTES.items():
        sf = gen_gpus_llm.mean(lambda run: share(run, k, f, "fwd_s"), runs)
        out[k] = (sf, gen_gpus_llm.mean(lambda run: share(run, k, b, "bwd_s"), runs) if b else sf)
    return out


def copy_share(root=None):
    """The H200's mem_efficiency as models/gpus-llm.yaml carries it (gen_gpus_llm.py, 3 places)."""
    runs = gen_gpus_llm.load_runs(root or gen_gpus_llm.root_dir())
    return round(gen_gpus_llm.mean(lambda r: gen_gpus_llm.stream_share(r, gen_gpus_llm.HBM["h200"]), runs), 3)


_CACHE = {}


def factor(fb):
    """The mem_factor of a layer of Bytes fb, rounded to 3 places; None where it is 1 (no measured part, or
    its parts reach the copy rate)."""
    parts = getattr(fb, "parts", ())
    if not parts or any(p[0] is None for p in parts):
        return None
    if not _CACHE:
        _CACHE["s"], _CACHE["c"] = shares(), copy_share()
    s, c = _CACHE["s"], _CACHE["c"]
    t = sum(f / s[k][0] + b / s[k][1] for k, f, b in parts)
    x = round((fb[0] + fb[1]) / t / c, 3)
    return x if x < 1 else None


def key(fb):
    """The model file's text for fb's factor: ", mem_factor: X", or "" where it is 1."""
    x = factor(fb)
    return "" if x is None else ", mem_factor: %.3f" % x


if __name__ == "__main__":
    c = copy_share()
    print("copy_share %.3f" % c)
    for k, (f, b) in sorted(shares().items()):
        print("%-20s forward %.3f backward %.3f" % (k, f, b))
