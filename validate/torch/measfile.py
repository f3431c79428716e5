#!/usr/bin/env python3
"""measfile.py - the trainer's measurements in arsim's schema
(arsim-measurements/1, validate/README-schema.md; sim/report/reportmeas.c
reads it), so that `arsim calibrate` fits the trainer's own gloo ping-pong,
reduce and all-reduce times and `arsim compare` predicts its iterations.

A case is built from its repetition times: `time_s` is their median, `reps`,
`min_s`, `max_s` describe them, `samples_s` keeps them all (readers ignore
keys they do not know). The file is written to FILE.tmp and renamed, so an
interrupted run never leaves a complete-looking file.

    python3 validate/torch/measfile.py RAW.json OUT.json

turns a raw file ({"env": {...}, "cases": [{..., "samples_s": [...]}]}) into
a measurements file: what tests/tools/torch.sh feeds `arsim calibrate`. No
PyTorch needed.
"""
import json
import os
import sys
import time

SCHEMA = "arsim-measurements/1"


def median(xs):
    s = sorted(xs)
    n = len(s)
    if n == 0:
        raise ValueError("median of no samples")
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def case(fields, samples, stable=True):
    """A case: fields (mode, ranks, bytes, ...) plus the statistics of its
    repetition times (seconds, each > 0)."""
    if not samples or min(samples) <= 0:
        raise ValueError("case %s: repetition times must be > 0 s" % fields)
    c = dict(fields)
    c.update({"time_s": median(samples), "reps": len(samples), "min_s": min(samples),
              "max_s": max(samples), "stable": bool(stable), "samples_s": list(samples)})
    return c


def iteration_case(run, per_iter, steady_s, exposed_s, verified, losses, units):
    """An iteration case (validate/README-schema.md) of one training run.
    run: config, policy, batch, warmup, measured, sets, overlap, algorithm,
    impl (gloo or arsim), elem_bytes, ranks, bytes; per_iter: every
    iteration's seconds (maximum over ranks); steady_s: arsim's steady-state
    iteration time (W to W+M over M, maximum over ranks) -> time_s;
    exposed_s: the compute thread's waits per measured iteration or None;
    units: {"plan": [...]} or {"ddp_bucket_bytes": [...]}, and any other
    keys to add (comm_s: the communicator's busy time per iteration)."""
    w, m = run["warmup"], run["measured"]
    if len(per_iter) != w + m or steady_s <= 0:
        raise ValueError("policy %s: %d iteration times for W + M = %d, steady %g s"
                         % (run["policy"], len(per_iter), w + m, steady_s))
    meas = per_iter[w:]
    c = {"mode": "iteration", "scale": 1}
    c.update(run)
    nunits = len(units.get("plan", units.get("ddp_bucket_bytes", [])))
    c.update({"units": nunits, "exposed_s": exposed_s, "time_s": steady_s, "reps": 1, "min_s": min(meas),
              "max_s": max(meas), "stable": True, "verified": bool(verified), "iterations_s": list(per_iter),
              "losses": list(losses)})
    c.update(units)
    return c


def env(ranks, host_names_by_rank, library, command, cwd=None):
    """The env block: hosts told apart by name, in order of their first rank."""
    hosts = []
    for h in host_names_by_rank:
        if h not in hosts:
            hosts.append(h)
    per = [host_names_by_rank.count(h) for h in hosts]
    consecutive = all(host_names_by_rank[i] == host_names_by_rank[i - 1] or host_names_by_rank[i] not in
                      host_names_by_rank[:i] for i in range(1, len(host_names_by_rank)))
    return {"ranks": ranks, "hosts": len(hosts), "ranks_per_host": per[0] if len(set(per)) == 1 else 0,
            "consecutive": consecutive, "mpi_library": library, "mpi_standard": "none (torch.distributed)",
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "command": command,
            "cwd": cwd or os.getcwd(), "host_names": hosts}


def write(path, env_block, cases):
    """Writes the file atomically: one case per line, as mpibench does."""
    if not cases:
        raise ValueError("%s: no cases to write" % path)
    lines = ["{", '  "schema": "%s",' % SCHEMA, '  "env": %s,' % json.dumps(env_block), '  "cases": [']
    lines += ["    %s%s" % (json.dumps(c), "," if i + 1 < len(cases) else "") for i, c in enumerate(cases)]
    lines += ["  ]", "}"]
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, path)


def load(path):
    with open(path) as f:
        d = json.load(f)
    if d.get("schema") != SCHEMA:
        raise ValueError("%s: schema %r; expected %s" % (path, d.get("schema"), SCHEMA))
    return d


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: measfile.py RAW.json OUT.json\n")
        return 2
    try:
        with open(argv[0]) as f:
            raw = json.load(f)
        cases = []
        for c in raw["cases"]:
            fields = {k: v for k, v in c.items() if k != "samples_s"}
            cases.append(case(fields, c["samples_s"]))
        write(argv[1], raw["env"], cases)
    except (OSError, ValueError, KeyError, TypeError) as e:
        sys.stderr.write("measfile.py: %s: %s; expected a raw file {\"env\": {...}, \"cases\": [{..., "
                         "\"samples_s\": [...]}]}\n" % (argv[0], e))
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
