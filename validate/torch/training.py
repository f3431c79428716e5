"""training.py - the model and one policy's training run for trainer.py:
the PyTorch model checked against the arsim model file, its gradients as
views into the flat buffer of plan.py, the hooks, the communicator, the
timed iterations and the iteration case that measfile.py writes (see
trainer.py's banner for what each policy does)."""
import sys
import time

import profile_model as pm
import torch
import torch.distributed as dist

import measfile
import plan
from bench import agree_max
from comm import AllReduce, Communicator

SEED = 20240613
LR = 1e-3

class Net:
    """The scenario's model built in PyTorch (profile_model.build), every
    layer of the arsim model file mapped to its module with the same tensors,
    activations out of place (as the profile runs them); optionally its
    gradients as views into one flat buffer laid out as plan.py says."""

    def __init__(self, ctx, flat_grads):
        torch.manual_seed(SEED)
        self.model, mods, self.make_batch = pm.build(ctx.scn.model_name, ctx.batch, "cpu")
        for m in self.model.modules():
            if getattr(m, "inplace", False):
                m.inplace = False
        self.model.train()
        self.layers = ctx.scn.layers
        self.mods = mods
        self.params = {}
        seen = 0
        for l in self.layers:
            if l.name not in mods:
                sys.exit("trainer.py: no module for layer %s of %s" % (l.name, ctx.scn.model_path))
            ps = list(mods[l.name].parameters())
            if [p.numel() for p in ps] != l.tensors:
                sys.exit("trainer.py: layer %s has tensors %s in PyTorch, %s in %s" % (
                    l.name, [p.numel() for p in ps], l.tensors, ctx.scn.model_path))
            if ps:
                self.params[l.index] = ps
            seen += l.params
        if seen != sum(p.numel() for p in self.model.parameters()):
            sys.exit("trainer.py: the model file's layers do not cover every PyTorch parameter")
        self.flat = None
        if flat_grads:
            self.flat = torch.zeros(seen)
            for li, ps in self.params.items():
                off = self.layers[li].off
                for p in ps:
                    p.grad = self.flat[off:off + p.numel()].view_as(p)
                    off += p.numel()

    def update(self, li, scale):
        """SGD on layer li's parameters with its (summed) gradients times
        scale, then zero its gradients for the next backward."""
        with torch.no_grad():
            for p in self.params[li]:
                p.add_(p.grad, alpha=-LR * scale)
        l = self.layers[li]
        self.flat[l.off:l.off + l.params].zero_()

    def loss(self):
        (x,), loss_fn = self.make_batch()
        return loss_fn(self.model(x))

    def checksum(self):
        with torch.no_grad():
            return sum(float(p.double().sum()) + float((p.double() * p.double()).sum())
                       for p in self.model.parameters())


def compute_step(net, ctx):
    """forward + backward + every update, no communication; returns the
    seconds of forward + backward and of the updates."""
    t0 = time.perf_counter()
    net.loss().backward()
    t1 = time.perf_counter()
    for li in net.params:
        net.update(li, 1.0 / ctx.world)
    return t1 - t0, time.perf_counter() - t1




def _agree_list(xs, group):
    t = torch.tensor(xs, dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX, group=group)
    return [float(v) for v in t]


def _consistent(net, group):
    """Every rank holds the same parameters (the same checksum, bit for bit)."""
    c = net.checksum()
    hi = torch.tensor([c], dtype=torch.float64)
    lo = torch.tensor([-c], dtype=torch.float64)
    dist.all_reduce(hi, op=dist.ReduceOp.MAX, group=group)
    dist.all_reduce(lo, op=dist.ReduceOp.MAX, group=group)
    return float(hi[0]) == -float(lo[0])


def _ddp(ctx, iters):
    """DistributedDataParallel with its defaults; returns (start times,
    losses, net, DDP's bucket sizes in bytes after the rebuild)."""
    net = Net(ctx, flat_grads=False)
    ddp = torch.nn.parallel.DistributedDataParallel(net.model)
    opt = torch.optim.SGD(net.model.parameters(), lr=LR)
    starts, losses = [], []
    for _ in range(iters):
        starts.append(time.perf_counter())
        opt.zero_grad()
        (x,), loss_fn = net.make_batch()
        loss = loss_fn(ddp(x))
        loss.backward()
        opt.step()
        losses.append(float(loss))
    starts.append(time.perf_counter())
    info = ddp._get_ddp_logging_data()
    sizes = info.get("rebuilt_bucket_sizes") or info.get("bucket_sizes") or ""
    buckets = [int(s) for s in str(sizes).replace(",", " ").split()]
    del ddp
    return starts, losses, net, buckets, None


def _hooked(ctx, pol, impl, iters):
    """none, layer, priority on the communicator; returns (start times,
    losses, net, the units as dicts with rank 0's timeline of the second-to-
    last iteration (ready, start, end, needed: seconds after its start, as
    arsim's --layers), (the compute thread's total wait, the communicator's
    total busy time) at each start)."""
    net = Net(ctx, flat_grads=True)
    units = plan.units_for(pol, net.layers, ctx.scn.elem_bytes)
    impls = [AllReduce("gloo" if impl == "gloo" else u.algo, u.elems, ctx.rank, ctx.world, ctx.data)
             for u in units]
    comm = Communicator(units, net.flat, impls, ctx.rank, ctx.world, ctx.data, ctx.ctl, pol.overlap == "priority")
    by_ready, covering = {}, {}
    for i, u in enumerate(units):
        by_ready.setdefault(u.first_layer, []).append(i)
        for l in range(u.first_layer, u.last_layer + 1):
            covering.setdefault(l, []).append(i)
    every = list(range(len(units)))
    scale = 1.0 / ctx.world
    it = {"gen": 0}
    keep, handles = [], []
    if pol.overlap in ("layer", "priority"):
        left = {li: len(ps) for li, ps in net.params.items()}
        for li, ps in net.params.items():
            def grads_ready(*_, li=li):
                left[li] -= 1
                if left[li] == 0:
                    left[li] = len(net.params[li])
                    for u in by_ready.get(li, []):
                        comm.ready(u, it["gen"])

            def forward_gate(module, inputs, li=li):
                if it["gen"] > 0:
                    comm.wait(covering.get(li, []), it["gen"] - 1)
                    net.update(li, scale)
            for p in ps:
                acc = p.expand_as(p).grad_fn.next_functions[0][0]
                acc.register_hook(grads_ready)
                keep.append(acc)
            handles.append(net.mods[net.layers[li].name].register_forward_pre_hook(forward_gate))
    starts, losses, waits, busy = [], [], [], []
    try:
        for i in range(iters):
            it["gen"] = i
            starts.append(time.perf_counter())
            waits.append(comm.waited_s)
            busy.append(comm.busy_s)
            loss = net.loss()
            loss.backward()
            if pol.overlap == "none":
                for u in every:
                    comm.ready(u, i)
                comm.wait(every, i)
                for li in net.params:
                    net.update(li, scale)
            losses.append(float(loss))
        starts.append(time.perf_counter())
        waits.append(comm.waited_s)
        busy.append(comm.busy_s)
        if pol.overlap != "none":   # drain: the last iteration's all-reduces, then their updates
            comm.wait(every, iters - 1)
            for li in net.params:
                net.update(li, scale)
    finally:
        comm.close()
        for h in handles:
            h.remove()
    plan_rows = [u.as_dict(ctx.scn.elem_bytes) for u in units]
    if iters >= 2:   # the units of the second-to-last iteration: the last forward needed them
        for row, (rd, st, en, nd) in zip(plan_rows, comm.timeline(iters - 2, starts[iters - 2])):
            row.update({"ready_s": rd, "start_s": st, "end_s": en, "needed_s": nd})
    return starts, losses, net, plan_rows, (waits, busy)


def run_policy(ctx, pol, impl, warmup, measured):
    """Trains under pol for warmup + measured iterations (same seed, model
    and data for every policy) and returns its iteration case."""
    torch.manual_seed(SEED)
    dist.barrier(group=ctx.ctl)
    iters = warmup + measured
    if pol.overlap == "ddp":
        starts, losses, net, layout, waits = _ddp(ctx, iters)
        units = {"ddp_bucket_bytes": layout}
    else:
        starts, losses, net, layout, waits = _hooked(ctx, pol, impl, iters)
        units = {"plan": layout}
    per_iter = _agree_list([starts[i + 1] - starts[i] for i in range(iters)], ctx.ctl)
    steady = agree_max((starts[iters] - starts[warmup]) / measured, ctx.ctl)
    exposed = comm_s = None
    if waits is not None:
        exposed = agree_max((waits[0][iters] - waits[0][warmup]) / measured, ctx.ctl)
        comm_s = agree_max((waits[1][iters] - waits[1][warmup]) / measured, ctx.ctl)
    ok = _consistent(net, ctx.ctl)
    run = {"config": ctx.args.scenario, "policy": pol.name, "batch": ctx.batch, "warmup": warmup,
           "measured": measured, "sets": list(ctx.args.sets), "overlap": pol.overlap,
           "algorithm": "hybrid" if pol.hybrid else pol.algo, "impl": "gloo" if pol.overlap == "ddp" else impl,
           "elem_bytes": ctx.scn.elem_bytes, "ranks": ctx.world,
           "bytes": ctx.scn.total_elems() * ctx.scn.elem_bytes}
    units["comm_s"] = comm_s
    return measfile.iteration_case(run, per_iter, steady, exposed, ok, losses, units)
