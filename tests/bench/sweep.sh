#!/bin/bash
# tests/bench/sweep.sh — sweep speed: a 1,000-scenario sweep of the
# default scenario's family (configs/default.yaml: VGG-16, 6 policies x 4
# batch sizes per scenario) on 8 to 64 GPUs — 4 node counts x 25 link
# bandwidths x 10 link latencies — with --jobs 1 and --jobs 2; prints the
# figures beside the targets (<= 60 s with 2 jobs on 2 cores; speed-up
# from 1 to 2 jobs near 2, here >= 1.7).
# Usage (from the repository root): tests/bench/sweep.sh [ARSIM]
# (ARSIM defaults to $ARSIM, else ./arsim). BENCH_LATENCIES=K keeps the
# first K latencies (100 K scenarios) for a quicker look; the 60 s target
# is then scaled to 1,000 scenarios.
ARSIM=${1:-${ARSIM:-./arsim}}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
bws=""; for g in 1 2 3 4 5 6 8 10 12 15 20 25 30 35 40 45 50 56 60 70 75 80 90 95 100; do bws="$bws${bws:+, }${g}Gbps"; done
lats=""; k=0
for u in 1 2 5 10 15 20 25 30 40 50; do
  k=$((k + 1)); [ "$k" -gt "${BENCH_LATENCIES:-10}" ] && break
  lats="$lats${lats:+, }${u}us"
done
{ sed '/^sweep:/,$d' configs/default.yaml
  printf 'sweep:\n  cluster.nodes: [8, 16, 32, 64]\n  cluster.link.bandwidth: [%s]\n  cluster.link.latency: [%s]\n' "$bws" "$lats"
} >"$T/bench.yaml"
count=$("$ARSIM" check "$T/bench.yaml" | sed -n 's/.*ok: \([0-9]*\) scenario.*/\1/p')
[ -n "$count" ] || { echo "FAIL sweep bench: arsim check failed"; "$ARSIM" check "$T/bench.yaml"; exit 1; }
run() {   # JOBS -> "wall_s cpu_s" (cpu = user + sys of arsim and its threads), or "fail"
  local TIMEFORMAT='%R %U %S' t
  t=$( { time "$ARSIM" sweep "$T/bench.yaml" --out "$T/j$1" --jobs "$1" 2>"$T/j$1.log"; } 2>&1 ) ||
    { tail -3 "$T/j$1.log" >&2; echo fail; return; }
  awk '{ printf "%.2f %.2f", $1, $2 + $3 }' <<<"$t"
}
# The machine's own ceiling: the same CPU-bound loop once, then twice at once.
spin() { awk 'BEGIN { for (i = 0; i < 3e7; i++) x += i; }'; }
machine=$( { TIMEFORMAT='%R'; time spin; } 2>&1; { TIMEFORMAT='%R'; time { spin & spin & wait; }; } 2>&1 )
load0=$(cut -d' ' -f1 /proc/loadavg)
r1=$(run 1)
r2=$(run 2)
load1=$(cut -d' ' -f1 /proc/loadavg)
if [ "$r1" = fail ] || [ "$r2" = fail ]; then echo "FAIL sweep bench: a sweep failed"; exit 1; fi
same=$(cmp -s "$T/j1/results.csv" "$T/j2/results.csv" && echo yes || echo NO)
read -r t1 c1 <<<"$r1"
read -r t2 c2 <<<"$r2"
awk -v n="$count" -v t1="$t1" -v t2="$t2" -v c1="$c1" -v c2="$c2" -v cores="$(nproc)" -v same="$same" \
    -v l0="$load0" -v l1="$load1" -v m="$machine" 'BEGIN {
  split(m, mt, "\n")
  printf "sweep bench: %d scenarios of configs/default.yaml (VGG-16 on 8-64 GPUs, 24 runs each), %d cores\n", n, cores
  printf "  --jobs 1: %7.1f s wall, %7.1f s CPU  (%.1f scenarios/s)\n", t1, c1, n / t1
  per1000 = t2 * 1000 / n
  printf "  --jobs 2: %7.1f s wall, %7.1f s CPU  (%.1f scenarios/s; %.1f s per 1,000)   target <= 60 s per 1,000: %s\n",
         t2, c2, n / t2, per1000, (per1000 <= 60 ? "met" : "NOT MET")
  printf "  speed-up 1 -> 2 jobs: %.2fx   target near 2x (>= 1.7x): %s\n", t1 / t2, (t1 / t2 >= 1.7 ? "met" : "NOT MET")
  printf "  this machine runs two CPU-bound processes %.2fx faster than one (the ceiling for the speed-up)\n", 2 * mt[1] / mt[2]
  printf "  CPU per scenario: %.1f ms (1 job), %.1f ms (2 jobs)\n", c1 * 1000 / n, c2 * 1000 / n
  printf "  results.csv identical for --jobs 1 and 2: %s\n", same
  if (l0 > cores || l1 > cores)
    printf "  note: load average %.1f -> %.1f on %d cores: other work shared the CPUs, wall times are not representative\n", l0, l1, cores
}'
