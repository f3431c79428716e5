#!/usr/bin/env python3
"""trainer.py - trains an arsim model on synthetic data with torch.distributed
(gloo) under real implementations of arsim's overlap policies, and measures
what arsim needs to predict it.

One process per rank, started by validate/torch/run.sh (env RANK,
WORLD_SIZE, MASTER_ADDR, MASTER_PORT; ARSIM_HOST names the rank's host when
the hostname does not tell them apart). Stages, run in this order, rank 0
writing into --out:

  bench         gloo ping-pong (ranks 0 and 1), reduce (a += b, for γ) and
                all-reduce with arsim's ring, butterfly and Rabenseifner
                schedules over isend/irecv -> meas.json; gloo's own
                all-reduce -> gloo-allreduce.json (both arsim-measurements/1;
                every result checked exactly on every rank).
  profile       forward + backward + update on every rank at once (the CPU
                sharing of the training runs), no communication; rank 0
                records a torch.profiler trace with the fwd:/bwd: layer
                ranges of models/gen/profile_model.py -> profile.trace.json
                (for `arsim import-profile`), compute.json (plain step and
                update times) and gpus-cpu.yaml (a GPU entry whose memory
                rate reproduces the measured update).
  interference  compute steps alone and while all-reduces run back to back
                on the communicator -> interference.json.
  train         every policy of --policies, W warm-up + M measured
                iterations each -> iterations.json (arsim-measurements/1
                iteration cases, which `arsim compare` predicts too).

Policies (the scenario's; plan.py builds their units as arsim does):
  none      backward, then each layer's all-reduce (readiness order) on the
            communicator, then every update, then the next forward;
  ddp       torch.nn.parallel.DistributedDataParallel with its defaults
            (25 MiB buckets, rebuilt in gradient-ready order after the first
            iteration), then optimizer.step(); its bucket sizes are recorded;
  layer     AccumulateGrad hooks hand a unit to the communicator as soon as
            its layers' gradients are complete; a forward pre-hook on each
            layer waits for that layer's units of the previous iteration
            and applies its update only when the next forward reaches it;
  priority  as layer, units cut into partitions and served lowest layer
            first (rank 0 decides, the others follow).
Units run arsim's schedule for their algorithm, or gloo's all-reduce for
the policies named in --gloo (arsim models gloo's all-reduce as a ring).

Iteration time as arsim's train.c defines it: from the moment the compute
stream reaches iteration W's first task to the moment it reaches iteration
W+M's, divided by M; per rank, the maximum over ranks.
"""
import argparse
import datetime
import json
import os
import socket
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "models", "gen"))
sys.dont_write_bytecode = True

import measfile  # noqa: E402
import plan  # noqa: E402

STAGES = ("bench", "profile", "interference", "train")
KiB, MiB = 1 << 10, 1 << 20


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenario", required=True, help="arsim scenario (validate/torch/vgg16-torch.yaml)")
    ap.add_argument("--out", required=True, help="directory for the results (rank 0 writes)")
    ap.add_argument("--stages", default=",".join(STAGES), help="comma list of %s" % ", ".join(STAGES))
    ap.add_argument("--policies", default="", help="comma list of the scenario's policies (default: all)")
    ap.add_argument("--gloo", default="", help="policies whose units run gloo's all-reduce")
    ap.add_argument("--batch", type=int, default=0, help="per-rank batch (default: the scenario's first)")
    ap.add_argument("--iterations", default="", help="W,M (default: the scenario's)")
    ap.add_argument("--set", dest="sets", action="append", default=[],
                    help="KEY=VALUE recorded with each iteration case (what arsim must --set to predict it)")
    ap.add_argument("--short", action="store_true", help="fewer sizes and repetitions (run.sh --short)")
    ap.add_argument("--threads", type=int, default=1, help="torch intra-op threads per rank")
    ap.add_argument("--timeout", type=float, default=600, help="seconds a collective may take before failing")
    a = ap.parse_args(argv)
    bad = [s for s in a.stages.split(",") if s not in STAGES]
    if bad:
        ap.error("--stages: unknown stage '%s'; expected %s" % (bad[0], ", ".join(STAGES)))
    return a


class Ctx:
    """This rank's view of the run: rank, world, the host of every rank, and
    the process groups (data: the communicator's messages; ctl: agreement
    and barriers; aux: a background loop's agreement; pair: ranks 0 and 1).
    DDP uses the default group."""

    def __init__(self, args):
        import torch
        import torch.distributed as dist
        self.args = args
        torch.set_num_threads(args.threads)
        torch.set_num_interop_threads(1)
        dist.init_process_group("gloo", init_method="env://",
                                timeout=datetime.timedelta(seconds=args.timeout))
        self.rank, self.world = dist.get_rank(), dist.get_world_size()
        if self.world < 2:
            sys.exit("trainer.py: WORLD_SIZE %d; expected at least 2 ranks" % self.world)
        self.data = dist.new_group(backend="gloo")
        self.ctl = dist.new_group(backend="gloo")
        self.aux = dist.new_group(backend="gloo")
        self.pair = dist.new_group([0, 1], backend="gloo")
        names = [None] * self.world
        dist.all_gather_object(names, os.environ.get("ARSIM_HOST") or socket.gethostname())
        self.hosts = names
        self.out = args.out
        self.scn = plan.Scenario(args.scenario)
        self.batch = args.batch or self.scn.batch
        self.lib = "gloo (PyTorch %s, torch.distributed)" % torch.__version__

    def env(self):
        return measfile.env(self.world, self.hosts, self.lib, " ".join(sys.argv[1:]))

    def write_json(self, name, obj):
        if self.rank == 0:
            path = os.path.join(self.out, name)
            with open(path + ".tmp", "w") as f:
                json.dump(obj, f, indent=1)
                f.write("\n")
            os.replace(path + ".tmp", path)

    def log(self, msg):
        if self.rank == 0:
            print("trainer: %s" % msg, flush=True)


# ---- stages ----------------------------------------------------------------

def stage_bench(ctx):
    from bench import Rule, allreduce, pingpong, reduce
    short = ctx.args.short
    rule = Rule(5, 40, 0.2, 3) if short else Rule(7, 400, 1.0, 20)
    pp_sizes = [8 * 8 ** k for k in range(8)] if not short else [8, 512, 32 * KiB, 256 * KiB, 2 * MiB]
    ar_sizes = [4 ** k * 16 * KiB for k in range(6)] if not short else [64 * KiB, 256 * KiB, MiB, 4 * MiB]
    red_sizes = [4 ** k * 16 * KiB for k in range(6)] if not short else [64 * KiB, MiB, 4 * MiB]
    ctx.log("bench: ping-pong %d sizes, reduce %d, all-reduce %d sizes x 4" % (
        len(pp_sizes), len(red_sizes), len(ar_sizes)))
    cases = pingpong(ctx, pp_sizes, rule)
    cases += reduce(ctx, red_sizes, rule)
    own, ok1 = allreduce(ctx, ["ring", "butterfly", "rabenseifner"], ar_sizes, rule)
    glo, ok2 = allreduce(ctx, ["gloo"], ar_sizes, rule)
    if ctx.rank == 0:
        measfile.write(os.path.join(ctx.out, "meas.json"), ctx.env(), cases + own)
        measfile.write(os.path.join(ctx.out, "gloo-allreduce.json"), ctx.env(), glo)
    if not (ok1 and ok2):
        raise RuntimeError("an all-reduce result was wrong (see verified: false in meas.json)")


def stage_profile(ctx):
    import torch.distributed as dist
    import profile_model as pm
    from torch.profiler import ProfilerActivity, profile, schedule
    from training import Net, compute_step
    warm, active = (2, 3) if ctx.args.short else (3, 5)
    net = Net(ctx, flat_grads=True)
    plain = [compute_step(net, ctx) for _ in range(warm + active)][warm:]
    ranges = pm.Ranges()
    pm.instrument(net.model, net.mods, [l.name for l in net.layers], ranges)
    trace = os.path.join(ctx.out, "profile.trace.json")

    def step():
        pm.mark_meta(ctx.batch, "fp32")
        loss = net.loss()
        ranges.close("fwd")
        loss.backward()
        ranges.close("bwd")
        for li in net.params:
            net.update(li, 1.0 / ctx.world)

    dist.barrier(group=ctx.ctl)
    with profile(activities=[ProfilerActivity.CPU], schedule=schedule(wait=0, warmup=warm, active=active, repeat=1),
                 on_trace_ready=(lambda p: p.export_chrome_trace(trace)) if ctx.rank == 0 else None) as prof:
        for _ in range(warm + active):
            step()
            prof.step()
    fb = statistics.median(t[0] for t in plain)
    upd = statistics.median(t[1] for t in plain)
    params = sum(l.params for l in net.layers)
    flops = sum(3 * l_flops for l_flops in _model_flops(ctx.scn.model_path)) * ctx.batch
    ctx.write_json("compute.json", {"batch": ctx.batch, "ranks_computing": ctx.world, "steps": active,
                                    "fwd_bwd_s": fb, "update_s": upd, "params": params,
                                    "flops_fwd_bwd": flops, "achieved_gflops": flops / fb / 1e9})
    if ctx.rank == 0:
        mem = 12.0 * params / upd / 1e9
        with open(os.path.join(ctx.out, "gpus-cpu.yaml"), "w") as f:
            f.write("# gpus-cpu.yaml - one rank's CPU share as arsim's compute device, measured by\n"
                    "# validate/torch/trainer.py (stage profile) with %d ranks computing at once:\n"
                    "# mem_GBps makes arsim's update (12 B per parameter) take the measured %.2f ms;\n"
                    "# fp32_tflops is the achieved forward + backward rate (the measured model file\n"
                    "# gives per-layer times, so it is informational).\n"
                    "gpus:\n  cpu:\n    name: \"%s, 1 of %d ranks\"\n    fp32_tflops: %.6f\n"
                    "    mem_GBps: %.4f\n    launch_us: 0\n"
                    % (ctx.world, upd * 1e3, _cpu_name(), ctx.world, flops / fb / 1e12, mem))
    ctx.log("profile: forward + backward %.1f ms, update %.1f ms at batch %d (%d ranks computing)"
            % (fb * 1e3, upd * 1e3, ctx.batch, ctx.world))


def _model_flops(path):
    import re
    with open(path) as f:
        return [int(m.group(1)) for m in re.finditer(r"flops: ([0-9]+)", f.read())]


def _cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip().replace('"', "'")
    except OSError:
        pass
    return "CPU"


def stage_interference(ctx):
    from bench import interference
    from training import Net, compute_step
    net = Net(ctx, flat_grads=True)
    short = ctx.args.short
    sizes = [4 * MiB] if short else [MiB, 4 * MiB, 16 * MiB]
    rows = interference(ctx, lambda: compute_step(net, ctx), ["gloo", "ring"], sizes,
                        steps=3 if short else 6, comm_reps=3 if short else 5)
    ctx.write_json("interference.json", {"batch": ctx.batch, "ranks": ctx.world, "rows": rows})
    for r in rows:
        ctx.log("interference: %s %d MiB: compute %.1f -> %.1f ms (%+.1f %%), all-reduce %.1f -> %.1f ms"
                % (r["impl"], r["bytes"] >> 20, r["compute_alone_s"] * 1e3, r["compute_with_comm_s"] * 1e3,
                   100 * r["compute_slowdown"], r["comm_alone_s"] * 1e3, r["comm_with_compute_s"] * 1e3))


def train_plan(args, scn):
    """(policy names, gloo policy names, W, M) of the train stage; PlanError
    on a policy the scenario lacks or a --gloo policy arsim does not model
    as a ring."""
    names = [p for p in args.policies.split(",") if p] or list(scn.policies)
    gloo = {p for p in args.gloo.split(",") if p}
    for n in names:
        scn.policy(n)
    for g in gloo:
        p = scn.policy(g)
        if p.overlap == "ddp" or p.hybrid or p.algo != "ring" or p.overrides:
            raise plan.PlanError("--gloo: policy '%s' is not a ring policy of overlap none, layer or priority; "
                                 "expected gloo's all-reduce only where arsim models a ring" % g)
    w, m = scn.warmup, scn.measured
    if args.iterations:
        try:
            w, m = (int(x) for x in args.iterations.split(","))
        except ValueError:
            w = -1
        if w < 1 or m < 1:
            raise plan.PlanError("--iterations: '%s'; expected W,M with W >= 1 and M >= 1" % args.iterations)
    return names, gloo, w, m


def stage_train(ctx):
    from training import run_policy
    names, gloo, w, m = train_plan(ctx.args, ctx.scn)
    cases = []
    for name in names:
        c = run_policy(ctx, ctx.scn.policy(name), "gloo" if name in gloo else "arsim", w, m)
        cases.append(c)
        ctx.log("train: %-20s %8.1f ms per iteration (exposed %s), loss %.5f%s" % (
            name, c["time_s"] * 1e3, "-" if c["exposed_s"] is None else "%.1f ms" % (c["exposed_s"] * 1e3),
            c["losses"][-1], "" if c["verified"] else ", ranks DISAGREE"))
        if ctx.rank == 0:
            measfile.write(os.path.join(ctx.out, "iterations.json"), ctx.env(), cases)


def main(argv):
    args = parse_args(argv)
    try:   # every input checked before the process group starts
        train_plan(args, plan.Scenario(args.scenario))
    except plan.PlanError as e:
        sys.stderr.write("trainer.py: %s\n" % e)
        return 2
    ctx = Ctx(args)
    if ctx.rank == 0:
        os.makedirs(args.out, exist_ok=True)
    run = {"bench": stage_bench, "profile": stage_profile, "interference": stage_interference, "train": stage_train}
    for s in args.stages.split(","):
        t0 = time.perf_counter()
        run[s](ctx)
        ctx.log("stage %s: %.1f s" % (s, time.perf_counter() - t0))
    import torch.distributed as dist
    dist.barrier(group=ctx.ctl)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
