#!/usr/bin/env python3
"""overlap_table.py - the tables of docs/explanation/gpu-overlap.md, rebuilt
from the raw measurements of overlap_cost.py (validate/h100/overlap/run*/).

    python3 validate/h100/overlap_table.py [DIR ...]         (default: both kept runs)
    python3 validate/h100/overlap_table.py --fit [DIR ...]   the fitted parameters

Prints markdown: the interference curve (each workload's slow-down beside a
reduce-copy kernel on k SMs, and the kernel's own rate beside it against
alone), the SM-share and byte-share predictions beside them, DDP's own
overhead at world size 1, and the Llama-3 block times. Standard library only.

--fit fits sim/train/interfere.h's mechanism and sim/train/ddpcost.h's terms
to the same runs and prints the parameters (models/gen/gen_gpus.py carries
them into models/gpus.yaml) and every point's error: see overlap_fit.py.
It needs PyYAML: the workloads' compute and memory shares come from arsim's
own model files and models/gpus.yaml.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
HBM_GBPS = 3350.0   # H100 SXM5 HBM3 peak (NVIDIA's data sheet); the byte-share prediction's capacity


def load(folder, section):
    path = os.path.join(folder, section + ".jsonl")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def interference(runs):
    sms = load(runs[0], "env")[0]["sms"]
    rows = {}
    order = []
    for i, run in enumerate(runs):
        for r in load(run, "interference"):
            if r["workload"] == "none":
                continue
            key = (r["workload"], r["k"], r["rate_limit_GBps"])
            if key not in rows:
                rows[key] = [None] * len(runs)
                order.append(key)
            rows[key][i] = r
    print("### Interference: a workload beside a reduce-copy kernel on k SMs (H100, %d SMs)\n" % sms)
    runs_hdr = " | ".join("run %d" % (i + 1) for i in range(len(runs)))
    print("| workload | k | rate cap GB/s | step ms alone | slow-down %s | SM share k/(S-k) | "
          "byte share | comm rate beside / alone |" % runs_hdr)
    print("|---|---:|---:|---:|" + "---:|" * len(runs) + "---:|---:|---:|")
    for key in order:
        name, k, cap = key
        rs = rows[key]
        if k == 0:
            continue
        base = rows[(name, 0, 0.0)][0]["median_ms"]
        slows = " | ".join("%.1f %%" % (100 * r["slowdown"]) if r else "-" for r in rs)
        r0 = rs[0]
        # the kernel reads a and b and writes c: three bytes of HBM per byte written
        share = 3 * r0["comm_out_GBps_beside"] / HBM_GBPS
        print("| %s | %d | %s | %.3f | %s | %.1f %% | %.1f %% | %.0f / %.0f GB/s |" % (
            name, k, "%g" % cap if cap else "none", base, slows, 100 * k / (sms - k),
            100 * share / (1 - share), r0["comm_out_GBps_beside"], r0["comm_out_GBps_alone"]))
    print()


def ddp(runs):
    print("### DDP at world size 1 (NCCL backend) against the plain step, wall ms per step\n")
    runs_hdr = " | ".join("run %d median (overhead)" % (i + 1) for i in range(len(runs)))
    print("| model | variant | buckets | %s | first iteration ms |" % runs_hdr)
    print("|---|---|---:|" + "---:|" * len(runs) + "---:|")
    data = [load(run, "ddp") for run in runs]
    for j, r0 in enumerate(data[0]):
        cells = []
        for d in data:
            if j >= len(d):
                cells.append("-")
                continue
            r = d[j]
            plain = next(x for x in d if x["model"] == r["model"] and x["variant"] == "plain")
            cells.append("%.2f (%+.1f %%)" % (r["median_ms"], 100 * (r["median_ms"] / plain["median_ms"] - 1)))
        print("| %s b%d | %s | %s | %s | %.1f |" % (r0["model"], r0["batch"], r0["variant"],
                                                   r0.get("num_buckets_reduced", "-"), " | ".join(cells),
                                                   r0["first_ms"]))
    print()


def llama(runs):
    rows = load(runs[0], "llama")
    if not rows:
        return
    print("### One Llama-3 block and the output head, bf16, sequence 8192 (median ms)\n")
    print("| model | part | batch | params | forward | backward | forward+backward | saved activations GB |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        saved = "%.2f" % (r["saved_bytes"] / 1e9) if "saved_bytes" in r else "-"
        print("| %s | %s | %d | %d | %.2f | %.2f | %.2f | %s |" % (r["model"], r["part"], r["batch"], r["params"],
                                                                r["fwd_ms"], r["bwd_ms"], r["fwdbwd_ms"], saved))
    print()


def main():
    args = sys.argv[1:]
    fit = "--fit" in args
    args = [a for a in args if a != "--fit"]
    runs = args or [os.path.join(HERE, "overlap", "run1"), os.path.join(HERE, "overlap", "run2")]
    for run in runs:
        if not os.path.isdir(run):
            sys.exit("overlap_table.py: %s: no such folder; expected a folder of overlap_cost.py's JSONL files" % run)
    env = load(runs[0], "env")[0]
    print("Measured on %s (%d SMs), PyTorch %s, CUDA %s, NCCL %s.\n" % (env["gpu"], env["sms"], env["torch"],
                                                                      env["cuda"], env["nccl"]))
    if fit:
        import overlap_fit
        overlap_fit.report(runs, load)
        return
    interference(runs)
    ddp(runs)
    llama(runs)


if __name__ == "__main__":
    main()
