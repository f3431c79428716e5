#!/usr/bin/env python3
"""gen_vgg16_small.py - writes validate/vgg16-half-cifar10-model.yaml, the model of
the validation scenario validate/vgg16-small.yaml: VGG-16 (torchvision cfg D, no
BN) on CIFAR-10 32x32 with every width halved (conv 32-64-128-256-256, classifier
256->2048->2048->10), 8,423,338 parameters (33.7 MB at fp32).

Why halved: at 1 Gbit/s a ring all-reduce of the full CIFAR VGG-16 (134.6 MB)
takes about 1.7 s on 4 ranks, too long for an iteration of 0.2-1 s; at half
width it takes about 0.42 s, the order of the scenario's compute.

The layer records come from models/gen/gen_models.py's helpers (same counting
conventions as every model file), so only the widths differ from
models/vgg16-cifar10.yaml.  Run from the repository root:

    python3 validate/gen_vgg16_small.py           # rewrite the model file
    python3 validate/gen_vgg16_small.py --check   # exit 1 if it differs
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "models", "gen"))
sys.dont_write_bytecode = True
import gen_models as g  # noqa: E402

OUT = os.path.join(ROOT, "validate", "vgg16-half-cifar10-model.yaml")
CFG = [v if v == "M" else v // 2 for v in g.VGG16_CFG]
PARAMS = 8423338


def build():
    layers, c, h, w = [], 3, 32, 32
    block, idx = 1, 1
    for v in CFG:
        if v == "M":
            lay, h, w = g.maxpool("pool%d" % block, c, 2, 2, 0, h, w)
            layers.append(lay)
            block, idx = block + 1, 1
        else:
            lay, h, w = g.conv2d("conv%d_%d" % (block, idx), c, v, 3, 1, 1, h, w)
            layers.append(lay)
            c, idx = v, idx + 1
    assert (c, h, w) == (256, 1, 1)
    layers.append(g.linear("fc6", 256, 2048))
    layers.append(g.linear("fc7", 2048, 2048))
    layers.append(g.linear("fc8", 2048, 10))
    return layers


def main():
    layers = build()
    assert sum(l["params"] for l in layers) == PARAMS
    m = {
        "file": "vgg16-half-cifar10",
        "description": "VGG-16 at half width (cfg D, no BN) on CIFAR-10 32x32, classifier 256-2048-2048-10",
        "banner": [
            "The model of validate/vgg16-small.yaml: models/vgg16-cifar10.yaml with every",
            "width halved (conv 32-64-128-256-256, classifier 256->2048->2048->10).",
            "Written by validate/gen_vgg16_small.py with models/gen/gen_models.py's",
            "layer helpers; the next line names that tool, whose conventions apply.",
        ],
    }
    text = g.emit_model(m, layers).replace("models/vgg16-half-cifar10.yaml", "validate/vgg16-half-cifar10-model.yaml", 1)
    if sys.argv[1:] == ["--check"]:
        with open(OUT) as f:
            sys.exit(0 if f.read() == text else 1)
    with open(OUT, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
