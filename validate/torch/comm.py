"""comm.py - the trainer's communicator: one thread per rank that runs the
sync units' all-reduces one at a time (arsim's comm.streams = 1), each with
gloo's own all-reduce or with one of arsim's schedules over isend/irecv.

Ownership: the Communicator borrows the flat gradient buffer and the process
groups; it owns its thread and the per-unit scratch space. Units are armed
once per iteration: the autograd hooks call ready(u, gen) when unit u's
gradients of iteration `gen` are complete; the forward pre-hooks (or the
step after backward) call wait(units, gen). Ranks must run the same units
in the same order: FIFO units are submitted in the same order everywhere
(backward runs the same on every rank); under `priority`, rank 0 picks the
ready unit whose layer the next forward needs first and broadcasts its index
on a control group, the others run that unit as soon as their own gradients
for it are ready (as validate/mbreplay.c does over MPI).
"""
import threading
import time

import torch
import torch.distributed as dist

from plan import priority_key
from schedules import build

STOP = -1


def run_schedule(steps, buf, scratch, group, tag):
    """Runs this rank's steps of an arsim schedule on buf (a 1-D tensor):
    per step, irecv into scratch and isend from buf, wait for both, then add
    or copy what arrived (so a send carries the values at the step's start).
    Empty messages are skipped on both sides (both know the length)."""
    for st in steps:
        reqs = []
        got = None
        if st.recv_peer >= 0 and st.recv_len > 0:
            got = scratch[:st.recv_len]
            reqs.append(dist.irecv(got, src=st.recv_peer, group=group, tag=tag))
        if st.send_peer >= 0 and st.send_len > 0:
            reqs.append(dist.isend(buf[st.send_off:st.send_off + st.send_len], dst=st.send_peer,
                                   group=group, tag=tag))
        for r in reqs:
            r.wait()
        if got is not None:
            dst = buf[st.recv_off:st.recv_off + st.recv_len]
            if st.reduce:
                dst.add_(got)
            else:
                dst.copy_(got)


class AllReduce:
    """One all-reduce implementation for vectors of a fixed length on this
    rank: gloo's (algo "gloo") or an arsim schedule (ring, butterfly,
    rabenseifner)."""

    def __init__(self, algo, elems, rank, world, group):
        self.algo = algo
        self.group = group
        self.steps = None if algo == "gloo" else build(algo, world, elems)[rank]
        need = max([st.recv_len for st in self.steps] + [0]) if self.steps else 0
        self.scratch = torch.empty(need, dtype=torch.float32)

    def __call__(self, buf, tag):
        if self.steps is None:
            dist.all_reduce(buf, group=self.group)
        else:
            run_schedule(self.steps, buf, self.scratch, self.group, tag)


class Communicator:
    """Runs units' all-reduces on a background thread; see the banner."""

    def __init__(self, units, flat, impls, rank, world, group, ctl_group, priority):
        self.units = units              # plan.Unit list, launch order
        self.flat = flat                # the flat gradient buffer (borrowed)
        self.impls = impls              # per unit: AllReduce
        self.rank = rank
        self.group = group              # data process group (borrowed)
        self.ctl = ctl_group            # priority decisions (borrowed)
        self.priority = priority and world > 1
        self.cv = threading.Condition()
        self.ready_gen = [0] * len(units)   # iteration + 1 whose gradients are ready
        self.done_gen = [0] * len(units)    # iteration + 1 whose all-reduce completed
        self.fifo = []                  # ready units, submission order (FIFO, and rank 0's candidates)
        self.seq = 0                    # collectives run (their tag)
        self.waited_s = 0.0             # time the compute thread spent in wait()
        self.busy_s = 0.0               # time spent running collectives
        self.times = {}                 # (unit, gen) -> [ready, start, end, needed] (perf_counter s, or None)
        self.error = None
        self.stopping = False
        self.thread = threading.Thread(target=self._main, name="arsim-communicator", daemon=True)
        self.thread.start()

    # -- compute side ---------------------------------------------------------
    def _stamp(self, u, gen, k):
        """Records event k (0 ready, 1 start, 2 end, 3 needed) of unit u in
        iteration gen, the first time it happens; call with cv held."""
        row = self.times.setdefault((u, gen), [None] * 4)
        if row[k] is None:
            row[k] = time.perf_counter()

    def timeline(self, gen, origin):
        """Per unit of iteration gen: (ready, start, end, needed) in seconds
        after origin (a perf_counter time), None where it did not happen."""
        with self.cv:
            rows = [self.times.get((u, gen), [None] * 4) for u in range(len(self.units))]
        return [[None if t is None else t - origin for t in r] for r in rows]

    def ready(self, u, gen):
        with self.cv:
            self._stamp(u, gen, 0)
            self.ready_gen[u] = gen + 1
            if not (self.priority and self.rank != 0):
                self.fifo.append(u)
            self.cv.notify_all()

    def wait(self, us, gen):
        """Blocks until every unit in us finished its all-reduce of iteration gen."""
        t0 = time.perf_counter()
        with self.cv:
            for u in us:
                self._stamp(u, gen, 3)
            while not self.error and any(self.done_gen[u] <= gen for u in us):
                self.cv.wait()
        self.waited_s += time.perf_counter() - t0
        if self.error:
            raise RuntimeError("communicator failed: %s" % self.error)

    def close(self):
        with self.cv:
            self.stopping = True
            self.cv.notify_all()
        self.thread.join()
        if self.error:
            raise RuntimeError("communicator failed: %s" % self.error)

    # -- the thread -----------------------------------------------------------
    def _next_local(self):
        """The next unit this rank picks itself (FIFO, or rank 0's priority
        choice), or STOP once closed and nothing is left."""
        with self.cv:
            while not self.fifo and not self.stopping:
                self.cv.wait()
            if not self.fifo:
                return STOP
            if self.priority:
                pick = min(self.fifo, key=lambda u: priority_key(self.units[u]))
                self.fifo.remove(pick)
                return pick
            return self.fifo.pop(0)

    def _next(self):
        if not self.priority:
            return self._next_local()
        box = torch.zeros(1, dtype=torch.int64)
        if self.rank == 0:
            box[0] = self._next_local()
        dist.broadcast(box, src=0, group=self.ctl)
        u = int(box[0])
        if u != STOP and self.rank != 0:
            with self.cv:
                while self.ready_gen[u] <= self.done_gen[u]:
                    self.cv.wait()
        return u

    def _main(self):
        try:
            while True:
                u = self._next()
                if u == STOP:
                    return
                unit = self.units[u]
                with self.cv:
                    gen = self.ready_gen[u] - 1
                    self._stamp(u, gen, 1)
                t0 = time.perf_counter()
                self.impls[u](self.flat[unit.off:unit.off + unit.elems], self.seq % (1 << 30))
                self.busy_s += time.perf_counter() - t0
                self.seq += 1
                with self.cv:
                    self._stamp(u, gen, 2)
                    self.done_gen[u] = self.ready_gen[u]
                    self.cv.notify_all()
        except Exception as e:  # reported to the compute thread, which raises it
            with self.cv:
                self.error = "%s: %s" % (type(e).__name__, e)
                self.cv.notify_all()
