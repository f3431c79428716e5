#!/usr/bin/env python3
"""rndv_trace — what a packet trace says about MPICH/UCX's rendezvous.

Reads `tcpdump -nn -tt -r CAPTURE` text of one host's interface (a capture
taken inside that host's namespace during an all-reduce of MPICH over UCX's
TCP transport) and labels each TCP segment with payload by its length:
UCX's request-to-send (56 B), ready-to-receive (55 B), put acknowledgement
(9 B), ack-to-put (22 B); data (over 1000 B).

Default (a ring): for every acknowledgement the host sends to its left
neighbour, how long after the last incoming data byte it left and how many
bytes of the host's own data to its right neighbour left in between (the
host's one shaper FIFO), then a summary.

--exchange (a butterfly or an exchange: the host and a partner send each
other a message): for every exchange, what each end sent first — its own
request-to-send ("request"), or the ready-to-receive for the other's
("answer": it had read that request before posting) — and whether the two
messages' data overlapped in time (crossed) or went one after the other
(turns).

usage: tcpdump -nn -tt -r h1.pcap | python3 validate/rndv_trace.py [--exchange] HOST_IP

(docs/explanation/validation-method.md, "Validation": MPICH's acknowledgement and the host's queue; an
exchange takes turns when its later rank has read the request.)
"""
import statistics
import sys

LABELS = {56: "RTS", 55: "RTR", 9: "ACK", 22: "ATP"}


def segments(lines):
    """(time, src, dst, bytes, label) of each segment with payload."""
    for line in lines:
        f = line.split()
        if len(f) < 6 or f[1] != "IP" or not f[-1].isdigit():
            continue
        n = int(f[-1])
        if n == 0:
            continue
        src, dst = f[2].rsplit(".", 1)[0], f[4].rstrip(":").rsplit(".", 1)[0]
        yield float(f[0]), src, dst, n, LABELS.get(n, "data" if n > 1000 else None)


def ring(me, segs):
    last_in = None          # time of the last incoming data segment
    out_since = 0           # own outgoing data bytes since then
    waits, between, after_own = [], [], 0
    last_out = None
    for t, src, dst, n, kind in segs:
        if kind == "data" and dst == me:
            last_in, out_since = t, 0
        elif kind == "data" and src == me:
            out_since += n
            last_out = t
        elif kind == "ACK" and src == me and last_in is not None:
            waits.append((t - last_in) * 1e3)
            between.append(out_since)
            if last_out is not None and t - last_out < 10e-6:
                after_own += 1
            print("ACK %.3f ms after the last data in, %7d B of own data out in between" % (waits[-1], out_since))
            last_in = None
    if waits:
        print("%d acknowledgements: wait median %.3f ms, mean %.3f ms; %d left within 10 us of own data"
              % (len(waits), statistics.median(waits), statistics.mean(waits), after_own))


def exchange(me, segs):
    """An exchange opens with the first request-to-send between the host and
    a peer and closes when both acknowledgements (9 B, one each way) have
    passed; the data segments in between, each way, give its two spans."""
    open_ = {}              # peer -> the exchange in progress
    counts = {"crossed": 0, "turns": 0}
    t0 = None
    for t, src, dst, n, kind in segs:
        t0 = t if t0 is None else t0
        peer = dst if src == me else src if dst == me else None
        if peer is None or kind is None:
            continue
        x = open_.get(peer)
        if x is None:
            if kind != "RTS":
                continue
            x = open_[peer] = {"start": t, "first": {}, "out": [], "in": [], "acks": 0}
        if kind in ("RTS", "RTR") and src not in x["first"]:
            x["first"][src] = "request" if kind == "RTS" else "answer"
        elif kind == "data":
            x["out" if src == me else "in"].append(t)
        elif kind == "ACK":
            x["acks"] += 1
        if x["acks"] == 2 and x["out"] and x["in"]:
            lo = max(x["out"][0], x["in"][0])
            hi = min(x["out"][-1], x["in"][-1])
            shorter = min(x["out"][-1] - x["out"][0], x["in"][-1] - x["in"][0])
            way = "crossed" if shorter > 0 and hi - lo > shorter / 2 else "turns"
            counts[way] += 1
            print("%9.4f s  %-15s first sent: host %-7s partner %-7s out %.1f ms, in %.1f ms: %s" % (
                x["start"] - t0, peer, x["first"].get(me, "-"), x["first"].get(peer, "-"),
                (x["out"][-1] - x["out"][0]) * 1e3, (x["in"][-1] - x["in"][0]) * 1e3, way))
            del open_[peer]
    print("%d exchanges crossed, %d took turns" % (counts["crossed"], counts["turns"]))


def main():
    args = sys.argv[1:]
    mode = ring
    if args and args[0] == "--exchange":
        mode, args = exchange, args[1:]
    if len(args) != 1:
        sys.exit("usage: tcpdump -nn -tt -r CAPTURE | rndv_trace.py [--exchange] HOST_IP")
    mode(args[0], segments(sys.stdin))


if __name__ == "__main__":
    main()
