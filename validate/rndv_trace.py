#!/usr/bin/env python3
"""rndv_trace — where the post-data acknowledgement of MPICH/UCX's rendezvous waits.

Reads `tcpdump -nn -tt -r CAPTURE` text of one host's interface (a capture
taken inside that host's namespace during a ring all-reduce of MPICH over
UCX's TCP transport) and labels each TCP segment with payload by its length:
UCX's request-to-send (56 B), ready-to-receive (55 B), put acknowledgement
(9 B), ack-to-put (22 B); data (over 1000 B). For every acknowledgement the
host sends to its left neighbour it prints how long after the last incoming
data byte it left and how many bytes of the host's own data to its right
neighbour left in between (the host's one shaper FIFO), then a summary.

usage: tcpdump -nn -tt -r h1.pcap | python3 validate/rndv_trace.py HOST_IP

(README, "Validation": MPICH's acknowledgement and the host's queue.)
"""
import statistics
import sys

LABELS = {56: "RTS", 55: "RTR", 9: "ACK", 22: "ATP"}


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: tcpdump -nn -tt -r CAPTURE | rndv_trace.py HOST_IP")
    me = sys.argv[1]
    last_in = None          # time of the last incoming data segment
    out_since = 0           # own outgoing data bytes since then
    waits, between, after_own = [], [], 0
    last_out = None
    for line in sys.stdin:
        f = line.split()
        if len(f) < 6 or f[1] != "IP" or not f[-1].isdigit():
            continue
        t, src, dst, n = float(f[0]), f[2].rsplit(".", 1)[0], f[4].rstrip(":").rsplit(".", 1)[0], int(f[-1])
        if n == 0:
            continue
        kind = LABELS.get(n, "data" if n > 1000 else None)   # mpibench's own small messages: None
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


if __name__ == "__main__":
    main()
