#!/usr/bin/env python3
"""compare-mean.py - a validation run's held-out all-reduces >= 256 KiB,
judged against each case's median (what `arsim compare` reports) and
against its mean (the quantity an iteration adds up).

Maintainer tool (Python 3, no packages), not needed to build or test:

    python3 validate/compare-mean.py RUN_DIR [RUN_DIR ...]

RUN_DIR is what validate.sh wrote (meas-H.json, compare-H.json for H = 4
and 8 hosts). The predictions are compare's own, unchanged; only the
measured statistic differs. Prints, per run and host count, the median and
maximum |error| both ways and the three worst cases against the mean.
"""
import json
import os
import statistics
import sys


def judge(run, hosts):
    with open(os.path.join(run, "meas-%d.json" % hosts)) as f:
        meas = json.load(f)["cases"]
    with open(os.path.join(run, "compare-%d.json" % hosts)) as f:
        rows = json.load(f)["cases"]
    by_median, by_mean, worst = [], [], []
    for r in rows:
        if r["mode"] != "allreduce" or r["bytes"] < 262144 or r["fitted"] or r["outlier"]:
            continue
        reps = meas[r["index"]].get("reps_s") or []
        if not reps:
            continue
        e_med = 100 * (r["predicted_s"] / r["measured_s"] - 1)
        e_mean = 100 * (r["predicted_s"] / statistics.mean(reps) - 1)
        by_median.append(abs(e_med))
        by_mean.append(abs(e_mean))
        worst.append((abs(e_mean), "%s %d B: %+.1f %% / %+.1f %%" % (r["algo"], r["bytes"], e_med, e_mean)))
    if not by_median:
        return None
    worst.sort(reverse=True)
    return (len(by_median), statistics.median(by_median), max(by_median), statistics.median(by_mean),
            max(by_mean), [w[1] for w in worst[:3]])


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: compare-mean.py RUN_DIR [RUN_DIR ...]")
    for run in sys.argv[1:]:
        for hosts in (4, 8):
            if not os.path.exists(os.path.join(run, "compare-%d.json" % hosts)):
                continue
            j = judge(run, hosts)
            if j is None:
                continue
            n, med, mx, med_m, mx_m, worst = j
            print("%s %d hosts, %d cases: vs median: median %.1f %%, max %.1f %% | vs mean: median %.1f %%, "
                  "max %.1f %% | worst (median / mean): %s" % (run, hosts, n, med, mx, med_m, mx_m, "; ".join(worst)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
