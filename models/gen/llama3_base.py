"""llama3_base.py - what the per-layer-time Llama 3 generators share: reading
the layers of models/llama3-8b.yaml, writing a layer line with its times, and
the rewrite-or --check ending.

MAINTAINER TOOL support (gen_llama3_h100.py, gen_llama3_titan.py); not needed
to build, test or run arsim.  Standard library only.
"""

import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BASE = os.path.join(ROOT, "models", "llama3-8b.yaml")

LAYER_RE = re.compile(r"^  - \{name: ([^,]+), kind: (\w+), params: (\d+), tensors: (\[[^\]]*\]), "
                      r"flops: (\d+), mem_bytes: (\d+), act_bytes: (\d+), act_peak_bytes: (\d+)\}$")


def load_layers():
    """The 131 layers of models/llama3-8b.yaml, in file order, each a dict of its fields."""
    layers = []
    with open(BASE) as f:
        for line in f:
            m = LAYER_RE.match(line.rstrip("\n"))
            if m:
                layers.append({"name": m.group(1), "kind": m.group(2), "params": int(m.group(3)),
                               "tensors": m.group(4), "flops": int(m.group(5)), "mem_bytes": int(m.group(6)),
                               "act_bytes": int(m.group(7)), "act_peak_bytes": int(m.group(8))})
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


def write_or_check(path, text, check):
    """Rewrite path with text (0), or with check compare them, say so and return 0 if equal, 1 if not."""
    if check:
        with open(path) as f:
            same = f.read() == text
        print("%s: %s" % (path, "up to date" if same else "differs"))
        return 0 if same else 1
    with open(path, "w") as f:
        f.write(text)
    return 0
