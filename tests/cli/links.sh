#!/bin/bash
# collective --links: per-link statistics conserve the bytes the schedule
# sent (bytes x hops) and show contention as peak depth. Expected numbers
# come from the algorithms' message counts, not from arsim.
A=${ARSIM:-./arsim}
ok() { echo "ok $1"; }
fail() { echo "FAIL $1${2:+: $2}"; }

# ring, p = 4, n = 1 MB on a star: each rank sends 2(p-1) blocks of n/p,
# each crossing 2 links -> 4 * 6 * 250000 * 2 = 12,000,000 bytes.
out=$("$A" collective --ranks 4 --bandwidth 10Gbps --latency 5us --algo ring --size 1MB --links)
total=$(sed -n 's/^ *\([0-9]*\) links carried \([0-9]*\) bytes in all$/\1 \2/p' <<<"$out")
[ "$total" = "8 12000000" ] && ok "ring bytes conserved" || fail "ring bytes conserved" "$total"

# butterfly, p = 4: lg p = 2 whole-vector exchanges per rank -> 4 * 2 * 1e6 * 2 = 16,000,000.
out=$("$A" collective --ranks 4 --bandwidth 10Gbps --latency 5us --algo butterfly --size 1MB --links --json -)
sum=$(grep '"bytes"' <<<"$out" | tail -n +2 | sed 's/[^0-9]//g' | awk '{s+=$1} END {print s}')
[ "$sum" = "16000000" ] && ok "butterfly bytes conserved (JSON)" || fail "butterfly bytes conserved (JSON)" "$sum"
grep -q '"peak_messages":	1' <<<"$out" && ok "no queueing on a star" || fail "no queueing on a star"

# A 4:1 oversubscribed fat-tree queues on its uplinks: some link holds 2+ messages at once.
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
printf 'kind: fat-tree\nk: 4\noversubscription: 4\nlink: {bandwidth: 10Gbps, latency: 1us}\n' >"$T/ft.yaml"
out=$("$A" collective --topology "$T/ft.yaml" --algo butterfly --size 1MB --links --json -)
peak=$(grep '"peak_messages"' <<<"$out" | sed 's/[^0-9]//g' | sort -n | tail -1)
[ "${peak:-0}" -ge 2 ] && ok "oversubscribed fat-tree queues (peak $peak)" || fail "oversubscribed fat-tree queues" "$peak"
