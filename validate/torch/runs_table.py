#!/usr/bin/env python3
"""runs_table.py - the markdown tables of docs/explanation/pytorch-validation.md
for runs measured with `run.sh --measure-only`: each DIR is copied to a
temporary folder, predicted there with `run.sh --predict` (arsim calibrate,
import-profile, run, compare.py), and the runs are printed side by side:
per policy measured, predicted and error; then each target.

MAINTAINER TOOL (needs ./arsim built; standard library only):

    python3 validate/torch/runs_table.py validate/h200/torch/net1 validate/h200/torch/net2
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def predict(src, tmp):
    d = os.path.join(tmp, os.path.basename(os.path.normpath(src)))
    shutil.copytree(src, d)
    r = subprocess.run(["bash", os.path.join(HERE, "run.sh"), "--predict", d],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode not in (0, 3):   # 3: a target missed, the runs were right
        sys.exit("runs_table.py: run.sh --predict %s failed:\n%s" % (src, r.stdout))
    with open(os.path.join(d, "compare.json")) as f:
        cmp_ = json.load(f)
    with open(os.path.join(d, "interference.json")) as f:
        rows = [x for x in json.load(f)["rows"] if x["impl"] == "gloo"]
    env = dict(l.strip().split("=", 1) for l in open(os.path.join(d, "run.env")) if "=" in l)
    # what run.sh passes arsim: the median over the gloo rows, at least 0
    med = lambda k: max(0.0, statistics.median(x[k] for x in rows)) if rows else 0.0
    return cmp_, env, med("compute_slowdown"), med("comm_slowdown")


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) >= 2 else 2
    dirs = argv[1:]
    with tempfile.TemporaryDirectory() as tmp:
        runs = [predict(d, tmp) for d in dirs]
    names = [os.path.basename(os.path.normpath(d)) for d in dirs]
    for n, (_, env, interf, cslow) in zip(names, runs):
        print("- %s: %s hosts at %s, batch %s, %s thread(s) a rank; comm.interference %.4f, comm.slowdown %.4f"
              % (n, env.get("hosts"), env.get("rate"), env.get("batch"), env.get("threads"), interf, cslow))
    print()
    head = "| policy |" + "".join(" %s measured (ms) | predicted | error |" % n for n in names)
    print(head)
    print("|---|" + "---:|---:|---:|" * len(names))
    order = []
    for c, _, _, _ in runs:
        for p in c["policies"]:
            if p["policy"] not in order:
                order.append(p["policy"])
    for pol in order:
        cells = []
        for c, _, _, _ in runs:
            p = next((x for x in c["policies"] if x["policy"] == pol), None)
            cells.append(" %.1f | %.1f | %+.1f %% |" % (1e3 * p["measured_s"], 1e3 * p["predicted_s"], 100 * p["rel_error"])
                         if p else " - | - | - |")
        print("| %s |%s" % (pol, "".join(cells)))
    print()
    print("| target |" + "".join(" %s |" % n for n in names))
    print("|---|" + "---|" * len(names))
    tnames = []
    for c, _, _, _ in runs:
        for t in c["targets"]:
            if t["target"] not in tnames:
                tnames.append(t["target"])
    for tn in tnames:
        cells = []
        for c, _, _, _ in runs:
            t = next((x for x in c["targets"] if x["target"] == tn), None)
            cells.append(" %s: %s |" % (t["value"].replace("|", "\\|"), "met" if t["met"] else "**missed**") if t and t.get("met") is not None
                         else " %s |" % (t["value"] if t else "-"))
        print("| %s |%s" % (tn, "".join(cells)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
