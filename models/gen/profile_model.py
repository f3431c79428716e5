#!/usr/bin/env python3
"""profile_model.py - record one training step of a model under PyTorch, in
the form `arsim import-profile` reads.

User-side tool: run it where PyTorch (and, for bert-base and gpt2, Hugging
Face transformers) is installed. It is not needed to build or test arsim,
downloads nothing (every model is built with random weights) and writes one
Chrome trace:

    python3 models/gen/profile_model.py --model vgg16-cifar10 --batch 64 --out vgg.json
    ./arsim import-profile vgg.json --model vgg16-cifar10 --out models/vgg16-cifar10-v100.yaml

What the trace carries (the contract of sim/report/reportprof.h):
  * a range "fwd:LAYER" around each layer's forward and "bwd:LAYER" around
    its backward, LAYER being a layer name of models/<model>.yaml;
  * ranges "arsim:batch=B" and "arsim:precision=P";
  * CPU and CUDA activity of one profiled step (torch.profiler schedule:
    --warmup steps, then one active step: one "ProfilerStep#N" range), so
    every GPU kernel can be tied to the range it was launched in.

How the ranges are placed (each yaml layer is one torch module):
  * forward: a forward pre-hook on the layer's module opens fwd:LAYER and
    closes the range before it; the last closes when the model returns. So
    the element-wise ops a model file folds into a layer (the ReLU after a
    conv, the attention core after c_attn, a residual add) count in it.
  * backward: a hook on the gradient of the module's output opens bwd:LAYER
    (closing the range before it): it fires when that gradient is complete,
    right before the module's own backward. The last range closes at the end
    of backward (an autograd engine callback). Element-wise ops folded after
    a module therefore count in the backward of the layer after it; the
    step's totals are exact.
  * in-place activations are made out-of-place so that gradient hooks fire.
Kernels outside every range (loss, optimizer step) belong to no layer.

Mapping: ResNet-50, BERT-base and GPT-2 layer names are the torch module
names (GPT-2 without the "transformer." prefix of GPT2LMHeadModel); VGG and
AlexNet name their convs conv<block>_<i> / conv<i>, pools pool<i>, and the
classifier's Linear layers fc6..fc8, as models/gen/gen_models.py does.
"""
import argparse
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))


def yaml_layers(model):
    """Layer names of models/<model>.yaml, in forward order (no YAML package needed)."""
    path = model if model.endswith(".yaml") else os.path.join(ROOT, "models", model + ".yaml")
    names = []
    with open(path) as f:
        for line in f:
            m = re.match(r'\s*- \{name: "?([^",]+)"?,', line)
            if m:
                names.append(m.group(1))
    if not names:
        sys.exit("%s: no layers found" % path)
    return names


def model_name(model):
    """The `name:` of a model file (a path ending in .yaml), else the argument."""
    if not model.endswith(".yaml"):
        return model
    with open(model) as f:
        for line in f:
            m = re.match(r'name: *"?([^"\n]+)"?', line)
            if m:
                return m.group(1).strip()
    sys.exit("%s: no name: line" % model)


def mark_meta(batch, precision):
    """The ranges that tell `arsim import-profile` the batch and precision."""
    from torch.profiler import record_function
    with record_function("arsim:batch=%d" % batch):
        pass
    with record_function("arsim:precision=%s" % precision):
        pass


def vgg_names(features):
    """torchvision VGG features -> {conv<b>_<i>: module, pool<b>: module}."""
    import torch.nn as nn
    out, block, idx = {}, 1, 1
    for m in features:
        if isinstance(m, nn.Conv2d):
            out["conv%d_%d" % (block, idx)] = m
            idx += 1
        elif isinstance(m, nn.MaxPool2d):
            out["pool%d" % block] = m
            block, idx = block + 1, 1
    return out


def alexnet_names(model):
    import torch.nn as nn
    out, conv = {}, 0
    for m in model.features:
        if isinstance(m, nn.Conv2d):
            conv += 1
            out["conv%d" % conv] = m
        elif isinstance(m, nn.MaxPool2d):
            out["pool%d" % conv] = m
    out["avgpool"] = model.avgpool
    return out


def classifier_names(classifier, first=6):
    import torch.nn as nn
    lin = [m for m in classifier if isinstance(m, nn.Linear)]
    return {"fc%d" % (first + i): m for i, m in enumerate(lin)}


def build(name, batch, device):
    """(model, module by layer name, make_batch() -> (inputs, loss_fn))."""
    import torch
    import torch.nn as nn
    if name in ("vgg16", "vgg16-cifar10", "vgg16-half-cifar10", "alexnet", "resnet50"):
        import torchvision
        cifar = name.endswith("cifar10")
        size, classes = (32, 10) if cifar else (224, 1000)
        if name.startswith("vgg16"):
            if name == "vgg16-half-cifar10":   # validate/vgg16-half-cifar10-model.yaml: every width halved
                cfg = [v if v == "M" else v // 2 for v in torchvision.models.vgg.cfgs["D"]]
                model = torchvision.models.vgg.VGG(torchvision.models.vgg.make_layers(cfg))
            else:
                model = torchvision.models.vgg16()
            if cifar:
                w = 512 if name == "vgg16-cifar10" else 256
                model.avgpool = nn.Identity()
                model.classifier = nn.Sequential(
                    nn.Linear(w, 8 * w), nn.ReLU(), nn.Dropout(),
                    nn.Linear(8 * w, 8 * w), nn.ReLU(), nn.Dropout(), nn.Linear(8 * w, 10))
            mods = vgg_names(model.features)
            if name == "vgg16":
                mods["avgpool"] = model.avgpool
            mods.update(classifier_names(model.classifier))
        elif name == "alexnet":
            model = torchvision.models.alexnet()
            mods = alexnet_names(model)
            mods.update(classifier_names(model.classifier))
        else:
            model = torchvision.models.resnet50()
            mods = dict(model.named_modules())
        x = torch.randn(batch, 3, size, size, device=device)
        y = torch.randint(0, classes, (batch,), device=device)
        return model, mods, lambda: ((x,), lambda out: nn.functional.cross_entropy(out, y))
    if name in ("bert-base", "bert-base-384"):
        from transformers import BertConfig, BertModel
        model = BertModel(BertConfig())
        ids = torch.randint(0, 30522, (batch, 384 if name == "bert-base-384" else 128), device=device)
        loss = lambda out: out.last_hidden_state.float().pow(2).mean() + out.pooler_output.float().mean()
        return model, dict(model.named_modules()), lambda: ((ids,), loss)
    if name == "gpt2":
        from transformers import GPT2Config, GPT2LMHeadModel
        model = GPT2LMHeadModel(GPT2Config())
        mods = {k[len("transformer."):] if k.startswith("transformer.") else k: m
                for k, m in model.named_modules()}
        ids = torch.randint(0, 50257, (batch, 1024), device=device)
        loss = lambda out: nn.functional.cross_entropy(out.logits.float().view(-1, out.logits.size(-1)),
                                                       ids.view(-1))
        return model, mods, lambda: ((ids,), loss)
    sys.exit("--model: no PyTorch builder for '%s'; expected vgg16, vgg16-cifar10, vgg16-half-cifar10, alexnet, "
             "resnet50, bert-base, bert-base-384 or gpt2" % name)


class Ranges:
    """At most one open record_function range per pass ("fwd", "bwd")."""

    def __init__(self):
        import torch
        self.torch = torch
        self.open = {}

    def switch(self, phase, name):
        self.close(phase)
        rf = self.torch.autograd.profiler.record_function("%s:%s" % (phase, name))
        rf.__enter__()
        self.open[phase] = rf

    def close(self, phase):
        rf = self.open.pop(phase, None)
        if rf is not None:
            rf.__exit__(None, None, None)


def instrument(model, mods, layers, ranges):
    missing = [n for n in layers if n not in mods]
    if missing:
        sys.exit("no module for layer(s) %s" % ", ".join(missing))
    for m in model.modules():
        if getattr(m, "inplace", False):
            m.inplace = False
    from torch.autograd import Variable
    state = {"callback": False}

    def end_of_backward():
        ranges.close("bwd")
        state["callback"] = False

    def bwd_hook(name):
        def hook(grad):
            if not state["callback"]:
                Variable._execution_engine.queue_callback(end_of_backward)
                state["callback"] = True
            ranges.switch("bwd", name)
        return hook

    def first_tensor(out):
        if hasattr(out, "register_hook"):
            return out
        if isinstance(out, (tuple, list)) and out:
            return first_tensor(out[0])
        if hasattr(out, "last_hidden_state"):
            return out.last_hidden_state
        return None

    for name in layers:
        mod = mods[name]
        mod.register_forward_pre_hook(lambda m, inp, name=name: ranges.switch("fwd", name))

        def post(m, inp, out, name=name):
            t = first_tensor(out)
            if t is not None and t.requires_grad:
                t.register_hook(bwd_hook(name))
        mod.register_forward_hook(post)


def set_precision(torch, precision, device):
    """fp32: no tensor cores (TF32 off for matmuls and convolutions); tf32: TF32
    on for both; fp16/bf16: autocast, TF32 on for what stays in fp32. cuDNN
    picks its fastest algorithm per shape (benchmark mode), as training
    scripts with fixed shapes do."""
    if device.startswith("cuda"):
        tf32 = precision != "fp32"
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.backends.cudnn.allow_tf32 = tf32
        torch.backends.cudnn.benchmark = True
    return {"fp16": torch.float16, "bf16": torch.bfloat16}.get(precision)


def main(argv=None):
    """One case; argv as on the command line (None: sys.argv). profile_gpu.sh
    calls it once per case in one interpreter."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True, help="a model of models/ (vgg16, vgg16-cifar10, alexnet, "
                    "resnet50, bert-base, bert-base-384, gpt2) or a model file "
                    "(validate/vgg16-half-cifar10-model.yaml)")
    ap.add_argument("--batch", type=int, required=True, help="per-GPU batch size")
    ap.add_argument("--out", default=None, help="Chrome trace to write (JSON); none: no profiled step")
    ap.add_argument("--device", default=None, help="cuda (default when available) or cpu")
    ap.add_argument("--precision", default="fp32", choices=["fp32", "tf32", "fp16", "bf16"],
                    help="fp32: CUDA cores only; tf32: TF32 tensor cores; fp16/bf16: torch.autocast")
    ap.add_argument("--warmup", type=int, default=3, help="unprofiled steps first (cuDNN autotune, caches)")
    ap.add_argument("--active", type=int, default=1, help="profiled steps (the importer averages them)")
    ap.add_argument("--time", type=int, default=0, metavar="N",
                    help="after profiling, time N more steps (wall clock, synchronized) and print "
                         "one JSON line: model, batch, precision, device, step_ms (mean, min, max)")
    ap.add_argument("--no-ranges", action="store_true",
                    help="time the model as it is, without the layer hooks and ranges (no --out): "
                         "what the ranges cost shows against a run with them")
    a = ap.parse_args(argv)
    if a.out is None and a.time <= 0:
        ap.error("nothing to do: give --out TRACE, --time N or both")
    if a.no_ranges and a.out:
        ap.error("--no-ranges times only; it cannot write a trace (--out)")
    if a.warmup < 0 or a.active < 1:
        ap.error("--warmup must be >= 0 and --active >= 1")

    import json
    import time
    import torch
    from torch.profiler import ProfilerActivity, profile, schedule
    device = a.device or ("cuda" if torch.cuda.is_available() else "cpu")
    dtype = set_precision(torch, a.precision, device)
    layers = yaml_layers(a.model)
    name = model_name(a.model)
    model, mods, make_batch = build(name, a.batch, device)
    model.to(device).train()
    ranges = Ranges()
    if not a.no_ranges:
        instrument(model, mods, layers, ranges)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)

    def step():
        if not a.no_ranges:
            mark_meta(a.batch, a.precision)
        inputs, loss_fn = make_batch()
        opt.zero_grad(set_to_none=True)
        with torch.autocast(device_type=device.split(":")[0], dtype=dtype, enabled=dtype is not None):
            out = model(*inputs)
            ranges.close("fwd")
            loss = loss_fn(out)
        loss.backward()
        ranges.close("bwd")
        opt.step()
        sync()

    if a.out:
        acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.startswith("cuda") else [])
        with profile(activities=acts, schedule=schedule(wait=0, warmup=a.warmup, active=a.active, repeat=1),
                     on_trace_ready=lambda p: p.export_chrome_trace(a.out)) as prof:
            for _ in range(a.warmup + a.active):
                step()
                prof.step()
        print("wrote %s: %s, batch %d, %s, %s; now: arsim import-profile %s --model %s --out FILE"
              % (a.out, name, a.batch, a.precision, device, a.out, a.model), file=sys.stderr)
    else:
        for _ in range(a.warmup):
            step()
    if a.time > 0:
        ms = []
        for _ in range(a.time):
            t0 = time.perf_counter()
            step()
            ms.append((time.perf_counter() - t0) * 1e3)
        gpu = torch.cuda.get_device_name() if device.startswith("cuda") else "cpu"
        print(json.dumps({"model": name, "batch": a.batch, "precision": a.precision, "device": gpu,
                          "ranges": not a.no_ranges, "steps": a.time, "step_ms": round(sum(ms) / len(ms), 3),
                          "min_ms": round(min(ms), 3), "max_ms": round(max(ms), 3)}), flush=True)


if __name__ == "__main__":
    main()
