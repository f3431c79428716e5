#!/usr/bin/env python3
"""compare.py - the real PyTorch iterations against arsim's prediction.

    compare.py PRED.json ITER.json [--speedup P:BASE]... [--units POLICY]... [--bound F] [--points N]
               [--tie F] [--json OUT]

PRED.json is `arsim run SCENARIO --json PRED.json --layers` (with the
calibration, the measured model and device set), ITER.json the trainer's
iterations.json (arsim-measurements/1 iteration cases). Prints, per policy:
measured and predicted iteration time, error (predicted - measured) /
measured, exposed communication (the compute thread's waits for syncs) and
communication (the communicator's busy time; arsim: the sum of the
all-reduce durations), measured and predicted; both rankings (fastest first); for each
--speedup pair the speed-up P over BASE measured and predicted (BASE / P)
and the time saved in per cent of BASE, whose difference is the error in
points; whether each policy synchronized exactly the units arsim simulated
(names, bytes, algorithms; DDP: PyTorch's bucket sizes against arsim's
rebuilt layout); whether every rank ended with the same parameters and every
policy with the same loss; with --units, a policy's units one per line: when
each was ready, started, ended and was needed, measured and predicted. Then the targets:
  * every policy within --bound (default 0.10) of its prediction;
  * the same ranking, counting only pairs of policies whose predictions
    differ by more than --tie (default 0.03): arsim predicts several
    policies within a fraction of a per cent of each other, and their
    measured order is a coin flip (the strict ranking is printed too);
  * every --speedup within --points (default 5) points of the prediction;
  * every plan as arsim's, every run consistent.
Exit status: 0 every target met, 3 a target missed, 2 bad input. Pure
Python (json only), no PyTorch.
"""
import argparse
import json
import sys


class Bad(Exception):
    pass


def load(path, what):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise Bad("%s: cannot read %s: %s" % (path, what, e))


def measured_cases(doc, path):
    if doc.get("schema") != "arsim-measurements/1":
        raise Bad("%s: schema %r; expected arsim-measurements/1 (the trainer's iterations.json)"
                  % (path, doc.get("schema")))
    out = {}
    for c in doc.get("cases", []):
        if c.get("mode") == "iteration":
            out[c["policy"]] = c
    if not out:
        raise Bad("%s: no iteration cases; expected the trainer's iterations.json" % path)
    return out


def predicted(doc, path, batch):
    out = {}
    for r in doc.get("results", []):
        if r.get("batch") == batch:
            out[r["policy"]] = r
    if not out:
        raise Bad("%s: no results at batch %d; expected `arsim run --json --layers` of the scenario"
                  % (path, batch))
    return out


def ranking(times):
    return [p for p, _ in sorted(times.items(), key=lambda kv: (kv[1], kv[0]))]


def discordant(meas, pred, tie):
    """Pairs ordered differently measured and predicted, among those whose
    predictions differ by more than tie (relative)."""
    names = sorted(meas)
    bad = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            if abs(pred[a] - pred[b]) <= tie * min(pred[a], pred[b]):
                continue
            if (meas[a] - meas[b]) * (pred[a] - pred[b]) < 0:
                bad.append((a, b))
    return bad


def plan_check(case, res):
    """None if the run synchronized what arsim simulated, else why not."""
    layers = res.get("layers")
    if layers is None:
        return "the prediction has no units (run arsim with --layers)"
    if "ddp_bucket_bytes" in case:
        got, want = case["ddp_bucket_bytes"], [u["bytes"] for u in layers]
        return None if got == want else "PyTorch's buckets %s B, arsim's %s B" % (got, want)
    got = [(u["name"], u["bytes"], u["algorithm"]) for u in case.get("plan", [])]
    want = [(u["name"], u["bytes"], u["algorithm"]) for u in layers]
    if got == want:
        return None
    diff = next((i for i in range(min(len(got), len(want))) if got[i] != want[i]), min(len(got), len(want)))
    return "unit %d: trainer %s, arsim %s" % (diff, got[diff] if diff < len(got) else "-",
                                             want[diff] if diff < len(want) else "-")


def print_units(policy, case, res):
    """A unit per line: ready, start, end, needed (ms after the iteration's
    start), measured on rank 0 in the second-to-last iteration, then arsim's."""
    print("units of %s (ms after the iteration starts; measured / arsim)" % policy)
    print("  %-16s %10s %17s %17s %17s %17s" % ("unit", "bytes", "ready", "start", "end", "needed"))
    ms = lambda v: "-" if v is None else "%.1f" % (v * 1e3)
    for u, r in zip(case["plan"], res.get("layers", [])):
        cells = ["%7s / %-7s" % (ms(u.get(k)), ms(r.get(k))) for k in ("ready_s", "start_s", "end_s", "needed_s")]
        print("  %-16s %10d %s" % (u["name"], u["bytes"], " ".join(cells)))


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pred")
    ap.add_argument("iters")
    ap.add_argument("--speedup", action="append", default=[], help="P:BASE (speed-up of P over BASE)")
    ap.add_argument("--bound", type=float, default=0.10)
    ap.add_argument("--points", type=float, default=5.0)
    ap.add_argument("--tie", type=float, default=0.03)
    ap.add_argument("--units", action="append", default=[],
                    help="POLICY: print its units' timeline, measured (rank 0) beside arsim's")
    ap.add_argument("--json", help="write the comparison here")
    a = ap.parse_args(argv)
    try:
        meas = measured_cases(load(a.iters, "the trainer's iterations"), a.iters)
        batch = next(iter(meas.values()))["batch"]
        pred = predicted(load(a.pred, "arsim's prediction"), a.pred, batch)
        missing = [p for p in meas if p not in pred]
        if missing:
            raise Bad("%s: no prediction for policy '%s' at batch %d; expected the scenario the trainer ran"
                      % (a.pred, missing[0], batch))
        for p in a.units:
            if p not in meas or "plan" not in meas[p]:
                raise Bad("--units: '%s' is not a policy that ran on the communicator; expected one of %s"
                          % (p, ", ".join(q for q in meas if "plan" in meas[q])))
        pairs = []
        for s in a.speedup:
            p, _, base = s.partition(":")
            if p not in meas or base not in meas:
                raise Bad("--speedup: '%s' names a policy that did not run; expected P:BASE among %s"
                          % (s, ", ".join(meas)))
            pairs.append((p, base))
    except Bad as e:
        sys.stderr.write("compare.py: %s\n" % e)
        return 2

    tm = {p: c["time_s"] for p, c in meas.items()}
    tp = {p: pred[p]["iteration_s"] for p in meas}
    out = {"batch": batch, "policies": [], "speedups": [], "targets": []}
    print("batch %d, %d ranks: measured (PyTorch + gloo) against predicted (arsim)" % (
        batch, next(iter(meas.values()))["ranks"]))
    print("%-20s %-6s %12s %13s %8s %13s %9s %13s %9s  %s" % (
        "policy", "impl", "measured(ms)", "predicted(ms)", "error", "exposed(ms)", "predicted", "comm(ms)",
        "predicted", "units as arsim's"))
    errors, plans_ok, consistent = [], True, True
    for p in meas:
        c, r = meas[p], pred[p]
        err = (tp[p] - tm[p]) / tm[p]
        errors.append(abs(err))
        why = plan_check(c, r)
        plans_ok = plans_ok and why is None
        consistent = consistent and bool(c.get("verified"))
        ms = lambda k: "-" if c.get(k) is None else "%.1f" % (c[k] * 1e3)
        print("%-20s %-6s %12.1f %13.1f %+7.1f%% %13s %9.1f %13s %9.1f  %s%s" % (
            p, c.get("impl", "?"), tm[p] * 1e3, tp[p] * 1e3, 100 * err, ms("exposed_s"), r["exposed_comm_s"] * 1e3,
            ms("comm_s"), r["comm_s"] * 1e3, "yes" if why is None else "NO: " + why,
            "" if c.get("verified") else "; ranks DISAGREE"))
        out["policies"].append({"policy": p, "measured_s": tm[p], "predicted_s": tp[p], "rel_error": err,
                                "plan_same": why is None, "plan_diff": why, "consistent": bool(c.get("verified"))})
    rm, rp = ranking(tm), ranking(tp)
    print("ranking measured:  %s" % " < ".join(rm))
    print("ranking predicted: %s" % " < ".join(rp))
    disc = discordant(tm, tp, a.tie)
    for p, base in pairs:
        sm, sp = tm[base] / tm[p], tp[base] / tp[p]
        lm, lp = 100 * (1 - tm[p] / tm[base]), 100 * (1 - tp[p] / tp[base])
        print("speed-up of %s over %s: measured %.3f (%.1f %% less time), predicted %.3f (%.1f %%): %+.1f points"
              % (p, base, sm, lm, sp, lp, lp - lm))
        out["speedups"].append({"policy": p, "base": base, "measured": sm, "predicted": sp,
                                "measured_less_pct": lm, "predicted_less_pct": lp, "points": lp - lm})
    for p in a.units:
        print_units(p, meas[p], pred[p])
    losses = [c["losses"][-1] for c in meas.values() if c.get("losses")]
    spread = (max(losses) - min(losses)) / abs(min(losses)) if losses and min(losses) else 0.0
    print("final loss over policies: %.6f .. %.6f (relative spread %.1e: the policies train alike)"
          % (min(losses), max(losses), spread) if losses else "final loss: not recorded")

    def target(name, value, ok):
        out["targets"].append({"target": name, "value": value, "met": ok})
        print("%-62s %-28s %s" % (name, value, "met" if ok else "MISSED"))
        return ok

    print()
    ok = target("every policy within %.0f %% of arsim" % (100 * a.bound), "max |error| %.1f %%" % (100 * max(errors)),
                max(errors) <= a.bound)
    print("%-62s %-28s %s" % ("same ranking, strictly (near-ties may swap)", "yes" if rm == rp else "no", "info"))
    ok &= target("same order of pairs predicted > %.0f %% apart" % (100 * a.tie),
                 "%d discordant%s" % (len(disc), "" if not disc else ": " + ", ".join("%s/%s" % d for d in disc[:3])),
                 not disc)
    for s in out["speedups"]:
        ok &= target("speed-up %s over %s within %.0f points" % (s["policy"], s["base"], a.points),
                     "%+.1f points" % s["points"], abs(s["points"]) <= a.points)
    ok &= target("every policy synchronized arsim's units", "yes" if plans_ok else "no", plans_ok)
    ok &= target("every rank ended with the same parameters", "yes" if consistent else "no", consistent)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
            f.write("\n")
    return 0 if ok else 3


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
