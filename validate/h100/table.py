#!/usr/bin/env python3
"""table.py - docs/explanation/h100-measured.md's "Measured on an H100" tables from the timings here.

Maintainer tool (Python 3, no packages): reads the step timings that
models/gen/profile_gpu.sh wrote on an H100 (timings-run*.jsonl with the layer
ranges, timings-plain-run*.jsonl without), asks `arsim run` for the compute
of one iteration on one H100 under its FLOP model (models/gpus.yaml) and
under the shipped measured file (models/MODEL-h100[-fp16].yaml) where there
is one, and under the launch's trace (traces/, run 1) imported with
`--gaps`, and prints markdown:

    python3 validate/h100/table.py [--arsim ./arsim]
    python3 validate/h100/table.py --kinds    # per layer kind: measured vs FLOP model, rates
    python3 validate/h100/table.py --refit    # the trial refit of the H100's FLOP model
    python3 validate/h100/table.py --h200     # plain steps on an H200 (validate/h200/) against the H100's

Every figure is a mean of 20 synchronized steps; "run 1 / run 2" are two
launches of profile_gpu.sh on two machines of the same kind.
"""
import argparse
import gzip
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))


def load(name):
    """{(model, precision, batch): step_ms} of one timings file ({} if absent);
    name relative to this folder."""
    path = os.path.join(HERE, name)
    if not os.path.exists(path):
        return {}
    out = {}
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            out[(r["model"], r["precision"], r["batch"])] = r["step_ms"]
    return out


def compute_ms(arsim, model, precision, batch):
    """arsim's compute(ms) of one iteration on a single H100."""
    scn = ("name: one\nmodel: %s\ngpu: h100\nprecision: %s\nbatch: [%d]\n"
           "cluster: {topology: star, nodes: 1, gpus_per_node: 1, link: {bandwidth: 100Gbps, latency: 1us}}\n"
           "policies:\n  - {name: none, overlap: none, algorithm: ring}\n"
           "iterations: {warmup: 1, measured: 2}\n" % (model, precision, batch))
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(scn)
    try:
        env = dict(os.environ, ARSIM_DATA=ROOT)
        out = subprocess.run([arsim, "run", f.name], capture_output=True, text=True, env=env, check=True).stdout
    finally:
        os.unlink(f.name)
    for line in out.splitlines():
        cols = line.split()
        if len(cols) > 5 and cols[1] == "none":
            return float(cols[5])
    sys.exit("arsim run printed no row for %s %s %d" % (model, precision, batch))


def gaps_ms(arsim, model, precision, batch):
    """compute(ms) of run 1's trace of this case imported with --gaps; None without a trace."""
    trace = os.path.join(HERE, "traces", "%s-%s-b%d.trace.json.gz" % (model, precision, batch))
    if not os.path.exists(trace):
        return None
    with tempfile.TemporaryDirectory() as d:
        with gzip.open(trace, "rb") as f, open(os.path.join(d, "t.json"), "wb") as out:
            shutil.copyfileobj(f, out)
        env = dict(os.environ, ARSIM_DATA=ROOT)
        subprocess.run([arsim, "import-profile", os.path.join(d, "t.json"), "--model", model, "--gaps",
                        "--out", os.path.join(d, "gaps.yaml")], capture_output=True, env=env, check=True)
        return compute_ms(arsim, os.path.join(d, "gaps.yaml"), precision, batch)


def reference(key, r1, r2, p1, p2):
    """The step a prediction is judged against: the plain runs' mean, else the ranged runs'."""
    plain = [v for v in (p1.get(key), p2.get(key)) if v is not None]
    return sum(plain) / len(plain) if plain else (r1[key] + r2.get(key, r1[key])) / 2


def measured_file(model, precision):
    name = model + "-h100" + ("" if precision == "tf32" else "-" + precision)
    return name if os.path.exists(os.path.join(ROOT, "models", name + ".yaml")) else None


def pair(a, b):
    fa = "%.1f" % a if a is not None else "–"
    fb = "%.1f" % b if b is not None else "–"
    return "%s / %s" % (fa, fb)


def gen_gpus():
    """models/gen/gen_gpus.py, the compute model replicated in Python (needs PyYAML)."""
    sys.path.insert(0, os.path.join(ROOT, "models", "gen"))
    import gen_gpus as g
    return g


def layer_ms(g, gpu, layer, prec, batch, eff, memeff, winograd):
    """One layer's forward + backward under the FLOP model, ms (gen_gpus.predict_s's terms, memory
    bandwidth times memeff)."""
    _, _, f32, tf32, f16, mem, launch = gpu
    tensor = tf32 if prec == "tf32" else 0 if prec == "fp32" else f16
    peak = (tensor if tensor > 0 else f32) * 1e12
    flops = layer["flops"] / (winograd if layer.get("winograd") and tensor <= 0 else 1)
    t = 0.0
    for mult in (1.0, g.BWD_RATIO):
        tf = mult * flops * batch / (peak * eff[layer["kind"]])
        tm = mult * layer["mem_bytes"] * batch * g.PREC_BYTES[prec] / 4.0 / (mem * 1e9 * memeff)
        t += max(tf, tm) + launch * 1e-6
    return t * 1e3


def kinds():
    """Per layer kind, the shipped tf32 files against the FLOP model: ms and achieved rates."""
    import yaml
    g = gen_gpus()
    gpu = [x for x in g.GPUS if x[0] == "h100"][0]
    with open(os.path.join(ROOT, "models", "gpus.yaml")) as f:
        spec = yaml.safe_load(f)["gpus"]["h100"]
    for model, batch in (("vgg16", 32), ("resnet50", 128), ("bert-base-384", 32), ("gpt2", 8)):
        with open(os.path.join(ROOT, "models", model + "-h100.yaml")) as f:
            meas = yaml.safe_load(f)["layers"]
        sums = {}
        for l, m in zip(g.load_model(ROOT, model), meas):
            a = sums.setdefault(l["kind"], [0.0, 0.0, 0.0, 0.0])
            a[0] += m["fwd_ms"] + m["bwd_ms"]
            a[1] += layer_ms(g, gpu, l, "tf32", batch, spec["tensor_efficiency"], 1.0, spec["winograd"])
            a[2] += 3 * l["flops"] * batch
            a[3] += 3 * l["mem_bytes"] * batch
        for k, (ms, pred, fl, by) in sums.items():
            print("%s tf32 b%d %-10s measured %7.2f ms, FLOP model %7.2f ms, %6.1f TFLOP/s, %5.0f GB/s"
                  % (model, batch, k, ms, pred, fl / ms / 1e9, by / ms / 1e6))


def refit(cases):
    """The trial refit: one memory efficiency and the conv/GEMM tensor scales, least squares of
    log(predicted / measured) over the tensor-core steps (grid search); prints it and returns
    (memory efficiency, conv scale, GEMM scale)."""
    g = gen_gpus()
    gpu = [x for x in g.GPUS if x[0] == "h100"][0]
    models = {}
    steps = [(k, ref) for k, ref in cases if k[1] != "fp32"]
    for (model, _, _), _ in steps:
        models.setdefault(model, g.load_model(ROOT, model))

    def errors(memeff, conv, gemm):
        eff = {k: min(1.0, (conv if k in g.CONV_KINDS else gemm) * g.SHAPE[k]) for k in g.KINDS}
        out = []
        for (model, prec, batch), ref in steps:
            t = sum(layer_ms(g, gpu, l, prec, batch, eff, memeff, 1.0) for l in models[model])
            t += sum(l["params"] * g.UPDATE_BYTES / (gpu[5] * 1e9 * memeff) * 1e3 + gpu[6] * 1e-3
                     for l in models[model] if l["params"] > 0)
            out.append(t / ref)
        return out
    best = min((sum(math.log(e) ** 2 for e in errors(me, c / 100, gm / 100)), me, c / 100, gm / 100)
               for me in (1.0, 0.7, 0.5, 0.42, 0.35, 0.3, 0.25, 0.2)
               for c in range(5, 60) for gm in range(10, 80, 2))
    e = errors(*best[1:])
    print("refit over %d tensor-core steps: memory efficiency %.2f, conv %.2f, GEMM %.2f: errors %+.0f %% .. "
          "%+.0f %%, rms %.0f %%" % (len(steps), best[1], best[2], best[3], 100 * (min(e) - 1), 100 * (max(e) - 1),
                                    100 * math.sqrt(best[0] / len(e))))
    return best[1:]


def refit_cases():
    """The steps the trial refit is fitted to: ((model, precision, batch), measured ms)."""
    r1, r2 = load("timings-run1.jsonl"), load("timings-run2.jsonl")
    p1, p2 = load("timings-plain-run1.jsonl"), load("timings-plain-run2.jsonl")
    return [(key, reference(key, r1, r2, p1, p2)) for key in r1]


def h200(p1, p2, h):
    """The H200's plain steps against the H100's (the mean of its plain runs)."""
    print("| model | precision | batch | H100 plain (ms) run 1 / 2 | H200 plain (ms) | H200 against H100 |")
    print("|---|---|---:|---:|---:|---:|")
    for key, t in h.items():
        ref = [v for v in (p1.get(key), p2.get(key)) if v is not None]
        change = "%+.0f %%" % (100 * (t / (sum(ref) / len(ref)) - 1)) if ref else "–"
        print("| %s | %s | %d | %s | %.1f | %s |" % (key + (pair(p1.get(key), p2.get(key)), t, change)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arsim", default=os.path.join(ROOT, "arsim"), help="the arsim binary")
    ap.add_argument("--kinds", action="store_true", help="the per-kind split of the shipped tf32 files instead")
    ap.add_argument("--refit", action="store_true", help="the trial refit of the FLOP model instead")
    ap.add_argument("--h200", action="store_true", help="the H200's plain steps against the H100's instead")
    a = ap.parse_args()
    if a.kinds:
        kinds()
        return 0
    r1, r2 = load("timings-run1.jsonl"), load("timings-run2.jsonl")
    p1, p2 = load("timings-plain-run1.jsonl"), load("timings-plain-run2.jsonl")
    if a.h200:
        h200(p1, p2, load(os.path.join("..", "h200", "timings-plain.jsonl")))
        return 0
    if a.refit:
        refit(refit_cases())
        return 0
    print("| model | precision | batch | step, plain (ms) run 1 / 2 | step, with ranges | "
          "arsim, FLOP model (ms) | error | arsim, measured file (ms) | error | with --gaps (ms) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for key in r1:
        model, prec, batch = key
        ref = reference(key, r1, r2, p1, p2)
        flop = compute_ms(a.arsim, model, prec, batch)
        mf = measured_file(model, prec)
        meas = compute_ms(a.arsim, mf, prec, batch) if mf else None
        gaps = gaps_ms(a.arsim, model, prec, batch)
        print("| %s | %s | %d | %s | %s | %.1f | %+.0f %% | %s | %s | %s |" % (
            model, prec, batch, pair(p1.get(key), p2.get(key)), pair(r1[key], r2.get(key)), flop,
            100 * (flop / ref - 1), "%.1f (%s)" % (meas, mf) if meas else "–",
            "%+.0f %%" % (100 * (meas / ref - 1)) if meas else "–", "%.1f" % gaps if gaps else "–"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
