"""llama3_base.py - what the per-layer-time Llama 3 generators share: the
block-level layers of Llama 3 8B (llama3_layers.llama3_blocks: attention_norm,
attention, ffn_norm, feed_forward a block), writing a layer line with its
times, and the rewrite-or --check ending.

MAINTAINER TOOL support (gen_llama3_h100.py, gen_llama3_titan.py); not needed
to build, test or run arsim.  Standard library only.
"""

import os

from gen_gpt3 import write_or_check  # the generators' rewrite-or --check ending, re-exported
from llama3_layers import LLAMA3_SEQ, llama3_blocks

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def load_layers():
    """The 131 block-level layers of Llama 3 8B in forward order, each a dict of its fields (tensors as the
    model file's list text); models/llama3-8b.yaml splits each block into its kernels."""
    layers = []
    for l in llama3_blocks(4096, 32, 32, 8, 14336, 128256, LLAMA3_SEQ):
        layers.append({"name": l["name"], "kind": l["kind"], "params": l["params"],
                       "tensors": "[%s]" % ", ".join(str(n) for _, n in l["tensors"]), "flops": l["flops"],
                       "mem_bytes": l["mem_bytes"], "act_bytes": l["act_bytes"],
                       "act_peak_bytes": l["act_peak_bytes"]})
    assert len(layers) == 131, len(layers)
    return layers


def fmt(ms):
    return "%.6g" % ms


def layer_line(l, act_bytes, fwd_ms, bwd_ms, act_peak_bytes=None):
    """One layer of a timed model file: l's fields with act_bytes (and act_peak_bytes, if given) replaced and
    the two times (ms)."""
    peak = l["act_peak_bytes"] if act_peak_bytes is None else act_peak_bytes
    return ("  - {name: %s, kind: %s, params: %d, tensors: %s, flops: %d, mem_bytes: %d, act_bytes: %d, "
            "act_peak_bytes: %d, fwd_ms: %s, bwd_ms: %s}" % (l["name"], l["kind"], l["params"], l["tensors"],
                                                             l["flops"], l["mem_bytes"], act_bytes, peak,
                                                             fmt(fwd_ms), fmt(bwd_ms)))

