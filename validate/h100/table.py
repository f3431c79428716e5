#!/usr/bin/env python3
"""table.py - README's "Measured on an H100" tables from the timings here.

Maintainer tool (Python 3, no packages): reads the step timings that
models/gen/profile_gpu.sh wrote on an H100 (timings-run*.jsonl with the layer
ranges, timings-plain-run*.jsonl without), asks `arsim run` for the compute
of one iteration on one H100 under its FLOP model (models/gpus.yaml) and
under the shipped measured file (models/MODEL-h100[-fp16].yaml) where there
is one, and under the launch's trace (traces/, run 1) imported with
`--gaps`, and prints markdown:

    python3 validate/h100/table.py [--arsim ./arsim]

Every figure is a mean of 20 synchronized steps; "run 1 / run 2" are two
launches of profile_gpu.sh on two machines of the same kind.
"""
import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))


def load(name):
    """{(model, precision, batch): step_ms} of one timings file ({} if absent)."""
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


def measured_file(model, precision):
    name = model + "-h100" + ("" if precision == "tf32" else "-" + precision)
    return name if os.path.exists(os.path.join(ROOT, "models", name + ".yaml")) else None


def pair(a, b):
    fa = "%.1f" % a if a is not None else "–"
    fb = "%.1f" % b if b is not None else "–"
    return "%s / %s" % (fa, fb)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arsim", default=os.path.join(ROOT, "arsim"), help="the arsim binary")
    a = ap.parse_args()
    r1, r2 = load("timings-run1.jsonl"), load("timings-run2.jsonl")
    p1, p2 = load("timings-plain-run1.jsonl"), load("timings-plain-run2.jsonl")
    print("| model | precision | batch | step, plain (ms) run 1 / 2 | step, with ranges | "
          "arsim, FLOP model (ms) | error | arsim, measured file (ms) | error | with --gaps (ms) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for key in r1:
        model, prec, batch = key
        plain = [v for v in (p1.get(key), p2.get(key)) if v is not None]
        ref = sum(plain) / len(plain) if plain else (r1[key] + r2.get(key, r1[key])) / 2
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
