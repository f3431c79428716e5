#!/bin/bash
# tests/bench/protocol-table.sh — the table of docs/explanation/mpi-protocol.md of what the protocol
# layer changes: ring, butterfly and Rabenseifner on 8 and 12 ranks, 1 KiB
# to 64 MiB, on arsim collective's default star (10 Gbit/s, 5 us per link:
# α = 10 us host to host), each setting against every message eager:
#   rdv none   --eager-limit 64KiB --handshake none (the default: SMPI)
#   rdv rtt    --eager-limit 64KiB --handshake rtt  (Open MPI, MPICH)
#   rtt+ack    --eager-limit 64KiB --handshake rtt --ack rtt (MPICH over UCX)
#   o 5us      --eager-limit inf --overhead 5us     (LogGP's o)
#   seg 64KiB  --eager-limit inf --segment 64KiB    (NCCL-like pieces)
# Prints a Markdown table: the eager time and each setting's change in %.
#
#   tests/bench/protocol-table.sh [ARSIM]     (from the repository root)
set -eu
A=${1:-./arsim}
export LC_ALL=C
sizes="1KiB 16KiB 256KiB 4MiB 64MiB"
t() { "$A" collective --ranks "$1" --algo "$2" --size "$3" "${@:4}" --json - | sed -n 's/.*"time_s":[[:space:]]*\([-0-9.eE+]*\).*/\1/p'; }
pct() { awk -v a="$1" -v b="$2" 'BEGIN { d = (a - b) / b * 100; printf (d < 0.05 && d > -0.05) ? "0" : "%+.1f %%", d }'; }
echo "| P | algorithm | size | eager | rdv none | rdv rtt | rtt+ack | o 5us | seg 64KiB |"
echo "|---|---|---|---|---|---|---|---|---|"
for p in 8 12; do
    for a in ring butterfly rabenseifner; do
        for s in $sizes; do
            e=$(t "$p" "$a" "$s" --eager-limit inf)
            n=$(t "$p" "$a" "$s" --eager-limit 64KiB --handshake none)
            r=$(t "$p" "$a" "$s" --eager-limit 64KiB --handshake rtt)
            k=$(t "$p" "$a" "$s" --eager-limit 64KiB --handshake rtt --ack rtt)
            o=$(t "$p" "$a" "$s" --eager-limit inf --overhead 5us)
            g=$(t "$p" "$a" "$s" --eager-limit inf --segment 64KiB)
            printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$p" "$a" "$s" \
                "$(awk -v x="$e" 'BEGIN { printf x < 1e-3 ? "%.1f us" : "%.3f ms", x < 1e-3 ? x * 1e6 : x * 1e3 }')" \
                "$(pct "$n" "$e")" "$(pct "$r" "$e")" "$(pct "$k" "$e")" "$(pct "$o" "$e")" "$(pct "$g" "$e")"
        done
    done
done
