"""bench.py - the trainer's network and compute measurements over gloo:
ping-pong, reduce and all-reduce cases for `arsim calibrate` (measfile.py
writes them in arsim's schema), and how much compute slows while an
all-reduce runs (the issue's comm.interference).

Repetitions follow mpibench's rule: each is timed from a barrier to the
rank's end, the ranks agree on the maximum (so every rank sees the same
times and takes the same decisions), and a case stops once it ran at least
min_reps repetitions for at least min_time seconds, or after max_reps, or
after case_time seconds. Every all-reduce result is checked exactly on every
rank and repetition (integer inputs: fp32 sums are exact).
"""
import statistics
import threading
import time

import torch
import torch.distributed as dist

from comm import AllReduce
import measfile


class Rule:
    """When a case stops (seconds, counts)."""

    def __init__(self, min_reps, max_reps, min_time, case_time):
        self.min_reps, self.max_reps, self.min_time, self.case_time = min_reps, max_reps, min_time, case_time

    def done(self, samples):
        total = sum(samples)
        n = len(samples)
        return n >= self.max_reps or total >= self.case_time or (n >= self.min_reps and total >= self.min_time)


def agree_max(x, group):
    t = torch.tensor([x], dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX, group=group)
    return float(t[0])


def agree_min(n, group):
    """The smallest of the ranks' counts n."""
    return -int(agree_max(-float(n), group))


def repeat(ctx, rule, setup, body, check=None, group=None):
    """Agreed repetition times of body() (setup() and check() untimed); one
    warm-up repetition first. Returns (samples, all checks passed)."""
    group = group or ctx.ctl
    samples, ok = [], True
    for k in range(rule.max_reps + 1):
        setup()
        dist.barrier(group=group)
        t0 = time.perf_counter()
        body()
        t = agree_max(time.perf_counter() - t0, group)
        if check is not None and not check():
            ok = False
        if k > 0:
            samples.append(t)
            if rule.done(samples):
                break
    return samples, ok


def pingpong(ctx, sizes, rule):
    """One-way times between ranks 0 and 1: a round trip of isend/irecv,
    each message waited for as a schedule step waits; small messages
    average several round trips per repetition."""
    cases = []
    if ctx.rank > 1:
        dist.barrier(group=ctx.ctl)
        return cases
    peer = 1 - ctx.rank
    klass = "inter" if ctx.hosts[0] != ctx.hosts[1] else "intra"
    for n in sizes:
        buf = torch.zeros(max(n // 4, 1), dtype=torch.float32)
        trips = 32 if n <= 4096 else 8 if n <= 262144 else 1

        def body():
            for _ in range(trips):
                if ctx.rank == 0:
                    dist.isend(buf, dst=peer, group=ctx.pair, tag=1).wait()
                    dist.irecv(buf, src=peer, group=ctx.pair, tag=2).wait()
                else:
                    dist.irecv(buf, src=peer, group=ctx.pair, tag=1).wait()
                    dist.isend(buf, dst=peer, group=ctx.pair, tag=2).wait()
        samples, _ = repeat(ctx, rule, lambda: None, body, group=ctx.pair)
        one_way = [s / (2 * trips) for s in samples]
        cases.append(measfile.case({"mode": "pingpong", "class": klass, "ranks": 2, "bytes": buf.numel() * 4,
                                    "peers": [0, 1]}, one_way, stable=len(samples) < rule.max_reps))
    dist.barrier(group=ctx.ctl)
    return cases


def reduce(ctx, sizes, rule):
    """a += b over n bytes of fp32 on every rank at once (γ)."""
    cases = []
    for n in sizes:
        a = torch.zeros(n // 4)
        b = torch.ones(n // 4)
        inner = max(1, min(64, (1 << 20) // n))

        def body():
            for _ in range(inner):
                a.add_(b)
        samples, _ = repeat(ctx, rule, lambda: None, body)
        cases.append(measfile.case({"mode": "reduce", "ranks": ctx.world, "bytes": n},
                                   [s / inner for s in samples], stable=len(samples) < rule.max_reps))
    return cases


def allreduce(ctx, algos, sizes, rule):
    """All-reduce times per algorithm and size; gloo's own as algo "gloo".
    Returns (cases, every result exact)."""
    cases, all_ok = [], True
    for algo in algos:
        for n in sizes:
            elems = n // 4
            impl = AllReduce(algo, elems, ctx.rank, ctx.world, ctx.data)
            base = torch.arange(elems, dtype=torch.int64) % 61
            mine = (base + ctx.rank).to(torch.float32)
            want = (base * ctx.world + ctx.world * (ctx.world - 1) // 2).to(torch.float32)
            buf = torch.empty(elems, dtype=torch.float32)
            seq = [0]

            def body():
                impl(buf, seq[0])
                seq[0] += 1
            samples, ok = repeat(ctx, rule, lambda: buf.copy_(mine), body, check=lambda: torch.equal(buf, want))
            ok = agree_max(0.0 if ok else 1.0, ctx.ctl) == 0.0
            all_ok = all_ok and ok
            fields = {"mode": "allreduce", "algo": "ring" if algo == "gloo" else algo, "ranks": ctx.world,
                      "bytes": n, "verified": ok}
            if algo == "gloo":
                fields["library"] = "gloo"
            cases.append(measfile.case(fields, samples, stable=len(samples) < rule.max_reps))
    return cases, all_ok


class CommLoop:
    """A thread that runs all-reduces of one size back to back until every
    rank asked it to stop (agreed after each collective on a group of its
    own, ctx.aux: the compute thread's barriers use ctx.ctl meanwhile, and
    two threads must never issue collectives on one group), recording each
    one's (start, end) on this rank's perf_counter clock."""

    def __init__(self, ctx, algo, elems):
        self.ctx = ctx
        self.impl = AllReduce(algo, elems, ctx.rank, ctx.world, ctx.data)
        self.buf = torch.ones(elems)
        self.stop_local = False
        self.spans = []
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        flag = torch.zeros(1)
        k = 0
        while True:
            t0 = time.perf_counter()
            self.impl(self.buf, k)
            self.spans.append((t0, time.perf_counter()))
            k += 1
            flag[0] = 1.0 if self.stop_local else 0.0
            dist.all_reduce(flag, group=self.ctx.aux)
            if flag[0] == self.ctx.world:
                return

    def start(self):
        self.thread.start()

    def stop(self):
        self.stop_local = True
        self.thread.join()


def interference(ctx, step, algos, sizes, steps, comm_reps):
    """Per algorithm and size: compute steps (forward + backward + update at
    the training batch) alone, then while all-reduces of that size run back
    to back; the all-reduces alone, then under that compute: only those
    that started after this rank's first step began and ended before its
    last step ended (arsim's comm.slowdown is a sync's slow-down while its
    rank computes; one that began during the barrier before the steps or
    ended after them ran partly beside nothing). Each figure is the median
    of a rank's times, maximum over ranks; slowdown = with / alone - 1."""
    window = [0.0, 0.0]   # this rank's compute steps: first start, last end (perf_counter)

    def compute_times():
        dist.barrier(group=ctx.ctl)
        ts = []
        window[0] = time.perf_counter()
        for _ in range(steps):
            t0 = time.perf_counter()
            step()
            ts.append(time.perf_counter() - t0)
        window[1] = time.perf_counter()
        return ts

    def med_all(ts):
        return agree_max(statistics.median(ts), ctx.ctl)

    step()   # warm-up
    rows = []
    for algo in algos:
        for n in sizes:
            alone = med_all(compute_times())   # again before each case: the machine's state drifts
            impl = AllReduce(algo, n // 4, ctx.rank, ctx.world, ctx.data)
            buf = torch.ones(n // 4)
            dist.barrier(group=ctx.ctl)
            ca = []
            for k in range(comm_reps):
                t0 = time.perf_counter()
                impl(buf, k)
                ca.append(time.perf_counter() - t0)
            comm_alone = med_all(ca)
            loop = CommLoop(ctx, algo, n // 4)
            dist.barrier(group=ctx.ctl)
            loop.start()
            with_comm = med_all(compute_times())
            loop.stop()
            inside = [b - a for a, b in loop.spans if a >= window[0] and b <= window[1]]
            # none inside (an all-reduce longer than the steps): every one but the last, as before
            comm_busy = med_all(inside or [b - a for a, b in loop.spans[:-1] or loop.spans])
            rows.append({"impl": algo, "bytes": n, "compute_alone_s": alone, "compute_with_comm_s": with_comm,
                         "compute_slowdown": with_comm / alone - 1, "comm_alone_s": comm_alone,
                         "comm_with_compute_s": comm_busy, "comm_slowdown": comm_busy / comm_alone - 1,
                         "collectives_during_compute": agree_min(len(inside), ctx.ctl)})
    return rows
