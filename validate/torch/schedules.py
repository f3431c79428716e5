#!/usr/bin/env python3
"""schedules.py - arsim's all-reduce schedules (sim/coll/collgen.c) in pure
Python, for the PyTorch trainer, which runs them over torch.distributed
isend/irecv.

A schedule is, per rank, a list of steps (send_peer, send_off, send_len,
recv_peer, recv_off, recv_len, reduce), exactly as sim/coll/coll.h defines a
CollStep: a step sends a range of the vector to one peer and receives a range
from another; the send carries the values the range holds when the step
begins; the received values are added into the range (reduce) or copied over
it; a peer of -1 means no send / no receive. The k-th message from rank a to
rank b matches b's k-th receive from a.

Generators mirror collgen.c index for index: the ring (reduce-scatter then
all-gather, blocks of an even split, the first count % p one longer),
butterfly (recursive doubling) and Rabenseifner (recursive halving, then
recursive doubling, MPICH's index arithmetic), with MPICH's fold for group
sizes that are not powers of two. The C schedules and these are compared
step by step: `--dump` writes tests/data/coll_steps.txt, which
tests/unit/test_coll.c checks against coll_build(), and tests/tools/torch.sh
checks that this script still writes that file. `--check` runs every
schedule on integer vectors and checks each rank's exact sum.

    python3 validate/torch/schedules.py --check
    python3 validate/torch/schedules.py --dump > tests/data/coll_steps.txt

No PyTorch needed.
"""
import sys

ALGOS = ("ring", "butterfly", "rabenseifner")
DUMP_RANKS = range(2, 10)
DUMP_COUNTS = (5, 61)


class Step(tuple):
    """(send_peer, send_off, send_len, recv_peer, recv_off, recv_len, reduce)."""
    __slots__ = ()

    def __new__(cls, sp, so, sl, rp, ro, rl, red):
        return tuple.__new__(cls, (sp, so, sl, rp, ro, rl, red))

    send_peer = property(lambda s: s[0])
    send_off = property(lambda s: s[1])
    send_len = property(lambda s: s[2])
    recv_peer = property(lambda s: s[3])
    recv_off = property(lambda s: s[4])
    recv_len = property(lambda s: s[5])
    reduce = property(lambda s: s[6])


def ring_block(p, i, off, count):
    """(offset, length) of block i of an even p-split of [off, off + count)."""
    q, rem = divmod(count, p)
    return off + i * q + min(i, rem), q + (1 if i < rem else 0)


def block_range(p, a, b, off, count):
    """Elements of blocks [a, b) of an even p-split: (offset, length)."""
    start, _ = ring_block(p, a, off, count)
    end = off + count if b >= p else ring_block(p, b, off, count)[0]
    return start, end - start


def _ring_pass(steps, ranks, off, count, shift, reduce):
    p = len(ranks)
    if p <= 1:
        return
    for i in range(p):
        nxt, prv = ranks[(i + 1) % p], ranks[(i - 1) % p]
        for st in range(p - 1):
            so, sl = ring_block(p, (i - st - shift) % p, off, count)
            ro, rl = ring_block(p, (i - st - shift - 1) % p, off, count)
            steps[ranks[i]].append(Step(nxt, so, sl, prv, ro, rl, reduce))


def gen_ring(steps, ranks, off, count):
    _ring_pass(steps, ranks, off, count, 1, True)
    _ring_pass(steps, ranks, off, count, 0, False)


def _fold_run(steps, ranks, off, count, core):
    """MPICH's fold: q = 2^floor(lg p), r = p - q; even members below 2r
    hand their vector to the next one and sit out; the core runs on q."""
    p = len(ranks)
    if p <= 1:
        return
    q = 1
    while q <= p // 2:
        q *= 2
    r = p - q
    for i in range(0, 2 * r, 2):
        steps[ranks[i]].append(Step(ranks[i + 1], off, count, -1, 0, 0, False))
        steps[ranks[i + 1]].append(Step(-1, 0, 0, ranks[i], off, count, True))
    core(steps, [ranks[2 * n + 1 if n < r else n + r] for n in range(q)], off, count)
    for i in range(0, 2 * r, 2):
        steps[ranks[i + 1]].append(Step(ranks[i], off, count, -1, 0, 0, False))
        steps[ranks[i]].append(Step(-1, 0, 0, ranks[i + 1], off, count, False))


def _butterfly_core(steps, g, off, count):
    q = len(g)
    for i in range(q):
        mask = 1
        while mask < q:
            peer = g[i ^ mask]
            steps[g[i]].append(Step(peer, off, count, peer, off, count, True))
            mask <<= 1


def _rabenseifner_core(steps, g, off, count):
    q = len(g)
    for i in range(q):
        send_idx = recv_idx = 0
        last_idx, mask = q, 1
        while mask < q:
            dst = i ^ mask
            if i < dst:
                send_idx = recv_idx + q // (mask * 2)
                so, sl = block_range(q, send_idx, last_idx, off, count)
                ro, rl = block_range(q, recv_idx, send_idx, off, count)
            else:
                recv_idx = send_idx + q // (mask * 2)
                so, sl = block_range(q, send_idx, recv_idx, off, count)
                ro, rl = block_range(q, recv_idx, last_idx, off, count)
            steps[g[i]].append(Step(g[dst], so, sl, g[dst], ro, rl, True))
            send_idx = recv_idx
            mask <<= 1
            if mask < q:
                last_idx = recv_idx + q // mask
        mask >>= 1
        while mask > 0:
            dst = i ^ mask
            if i < dst:
                if mask != q // 2:
                    last_idx = last_idx + q // (mask * 2)
                recv_idx = send_idx + q // (mask * 2)
                so, sl = block_range(q, send_idx, recv_idx, off, count)
                ro, rl = block_range(q, recv_idx, last_idx, off, count)
            else:
                recv_idx = send_idx - q // (mask * 2)
                so, sl = block_range(q, send_idx, last_idx, off, count)
                ro, rl = block_range(q, recv_idx, send_idx, off, count)
            steps[g[i]].append(Step(g[dst], so, sl, g[dst], ro, rl, False))
            if i > dst:
                send_idx = recv_idx
            mask >>= 1


def gen_butterfly(steps, ranks, off, count):
    _fold_run(steps, ranks, off, count, _butterfly_core)


def gen_rabenseifner(steps, ranks, off, count):
    _fold_run(steps, ranks, off, count, _rabenseifner_core)


GENERATORS = {"ring": gen_ring, "butterfly": gen_butterfly, "rabenseifner": gen_rabenseifner}


def build(algo, p, count):
    """Every rank's steps of `algo` on p ranks and count elements: a list of
    p lists of Step (coll_build with the default parameters)."""
    if algo not in GENERATORS:
        raise ValueError("unknown algorithm '%s'; expected one of %s" % (algo, ", ".join(ALGOS)))
    if p < 1 or count < 0:
        raise ValueError("p = %d, count = %d; expected p >= 1 and count >= 0" % (p, count))
    steps = [[] for _ in range(p)]
    GENERATORS[algo](steps, list(range(p)), 0, count)
    return steps


def verify(steps, count):
    """Runs the schedule on integer vectors (rank r's element i starts as
    r * count + i + 1) in a dependency-respecting order and returns None if
    every rank ends with the exact sum, else why not. Messages are matched
    as MPI does: the k-th send from a to b with the k-th receive of b from a,
    lengths equal."""
    p = len(steps)
    vec = [[r * count + i + 1 for i in range(count)] for r in range(p)]
    want = [sum(r * count + i + 1 for r in range(p)) for i in range(count)]
    pos = [0] * p
    sent = {}   # (a, b) -> list of payloads not yet received
    posted = [False] * p   # the current step's send was posted
    progress = True
    while progress:
        progress = False
        for r in range(p):
            if pos[r] >= len(steps[r]):
                continue
            st = steps[r][pos[r]]
            if st.send_peer >= 0 and not posted[r]:
                sent.setdefault((r, st.send_peer), []).append(vec[r][st.send_off:st.send_off + st.send_len])
                posted[r] = True
                progress = True
            if st.recv_peer >= 0:
                queue = sent.get((st.recv_peer, r), [])
                if not queue:
                    continue
                data = queue.pop(0)
                if len(data) != st.recv_len:
                    return "rank %d step %d: received %d elements from %d, expected %d" % (
                        r, pos[r], len(data), st.recv_peer, st.recv_len)
                for k, v in enumerate(data):
                    vec[r][st.recv_off + k] = vec[r][st.recv_off + k] + v if st.reduce else v
            pos[r] += 1
            posted[r] = False
            progress = True
    for r in range(p):
        if pos[r] < len(steps[r]):
            return "rank %d stuck at step %d of %d (deadlock or unmatched message)" % (r, pos[r], len(steps[r]))
        if vec[r] != want:
            bad = next(i for i in range(count) if vec[r][i] != want[i])
            return "rank %d: element %d is %d, expected %d" % (r, bad, vec[r][bad], want[bad])
    left = [k for k, v in sent.items() if v]
    if left:
        return "messages never received: %s" % left
    return None


def dump(out):
    out.write("# tests/data/coll_steps.txt - arsim's all-reduce schedules step by step (test oracle).\n"
              "# Written by validate/torch/schedules.py --dump (the PyTorch trainer's schedules);\n"
              "# tests/unit/test_coll.c checks coll_build() against every line.\n"
              "# ALGO p count rank step send_peer send_off send_len recv_peer recv_off recv_len reduce\n")
    for algo in ALGOS:
        for p in DUMP_RANKS:
            for count in DUMP_COUNTS:
                for r, rs in enumerate(build(algo, p, count)):
                    for k, st in enumerate(rs):
                        out.write("%s %d %d %d %d %d %d %d %d %d %d %d\n" % (
                            algo, p, count, r, k, st.send_peer, st.send_off, st.send_len,
                            st.recv_peer, st.recv_off, st.recv_len, int(st.reduce)))


def check():
    """Exact sums for every algorithm, p = 1..17, counts around p."""
    failures = 0
    cases = 0
    for algo in ALGOS:
        for p in range(1, 18):
            for count in sorted({0, 1, p - 1, p, p + 1, 2 * p + 3, 61}):
                if count < 0:
                    continue
                why = verify(build(algo, p, count), count)
                cases += 1
                if why:
                    failures += 1
                    print("FAIL %s p=%d count=%d: %s" % (algo, p, count, why))
    print("schedules: %d cases, %d wrong" % (cases, failures))
    return failures == 0


def main(argv):
    if argv == ["--dump"]:
        dump(sys.stdout)
        return 0
    if argv == ["--check"]:
        return 0 if check() else 1
    sys.stderr.write("usage: schedules.py --dump | --check\n")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
