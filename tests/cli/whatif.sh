#!/bin/bash
# What-if runs (variation, stragglers): the same seed gives byte-identical
# JSON at --jobs 1 and --jobs 2, another seed other numbers; variation.seed
# is a sweep axis like any other key; the table shows p50 and p99; a zero
# variation leaves the plain table as it was.
A=${ARSIM:-./arsim}
ok() { echo "ok $1"; }
fail() { echo "FAIL $1${2:+: $2}"; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT

cat >"$T/s.yaml" <<'Y'
model: vgg16-cifar10
gpu: v100
batch: [32]
cluster: {topology: star, nodes: 8, link: {bandwidth: 10Gbps, latency: 5us}}
policies:
  - {name: ddp, overlap: ddp, algorithm: ring}
  - {name: prio, overlap: priority, algorithm: auto}
iterations: {warmup: 1, measured: 10}
variation: {dist: lognormal, cv: 0.1, seed: 1}
stragglers: [{ranks: [3], slowdown: 1.2}]
Y
{ cat "$T/s.yaml"; printf 'sweep:\n  variation.seed: [1, 2, 3]\n'; } >"$T/sw.yaml"
"$A" sweep "$T/sw.yaml" --out "$T/j1" --jobs 1 >/dev/null 2>&1 &&
    "$A" sweep "$T/sw.yaml" --out "$T/j2" --jobs 2 >/dev/null 2>&1 &&
    cmp -s <(sort "$T/j1/results.jsonl") <(sort "$T/j2/results.jsonl") &&
    ok "same seeds, same bytes at --jobs 1 and 2" || fail "same seeds, same bytes at --jobs 1 and 2"
head -1 "$T/j1/results.csv" | grep -q ',iteration_p99_s,' && ! grep -q 'iteration_times_s' "$T/j1/results.csv" &&
    grep -q '"iteration_times_s":\[' "$T/j1/results.jsonl" && ok "results.csv has the percentiles, results.jsonl the times" ||
    fail "results.csv has the percentiles, results.jsonl the times"
n=$(grep -o '"iteration_p99_s":[^,]*' "$T/j1/results.jsonl" | sort -u | wc -l)
[ "$n" -ge 5 ] && ok "other seeds, other numbers ($n distinct p99)" || fail "other seeds, other numbers" "$n"

"$A" run "$T/s.yaml" --json "$T/a.json" >/dev/null && "$A" run "$T/s.yaml" --json "$T/b.json" >"$T/tab" &&
    cmp -s "$T/a.json" "$T/b.json" && ok "run twice, same JSON" || fail "run twice, same JSON"
grep -q 'p50(ms)  *p99(ms)' "$T/tab" && ok "table shows p50 and p99" || fail "table shows p50 and p99"
for k in iteration_p50_s iteration_p99_s iteration_max_s; do
    grep -q "\"$k\"" "$T/a.json" || fail "JSON has $k"
done && ok "JSON has the percentiles"

grep -v -e '^variation' -e '^stragglers' "$T/s.yaml" >"$T/plain.yaml"
{ cat "$T/plain.yaml"; echo 'variation: {dist: none}'; } >"$T/zero.yaml"
"$A" run "$T/plain.yaml" >"$T/p.tab" && "$A" run "$T/zero.yaml" >"$T/z.tab" &&
    ! grep -q 'p50' "$T/p.tab" && diff <(cut -c1-57 "$T/p.tab" | tail -n +2) <(cut -c1-57 "$T/z.tab" | tail -n +2) >/dev/null &&
    ok "zero variation: the plain run's numbers" || fail "zero variation: the plain run's numbers"

# Faults: a link at half bandwidth slows the job and shows in the
# percentiles only while it lasts; a sweep takes a fault key as an axis.
cat >"$T/f.yaml" <<'Y'
model: vgg16-cifar10
gpu: v100
batch: [32]
cluster: {topology: star, nodes: 8, link: {bandwidth: 10Gbps, latency: 5us}}
policies:
  - {name: ddp, overlap: ddp, algorithm: ring}
iterations: {warmup: 1, measured: 10}
faults: [{link: h3->sw0, at: 0.5s, until: 1.2s, bandwidth: 5Gbps}]
Y
"$A" run "$T/f.yaml" --json "$T/f.json" >/dev/null
p50=$(sed -n 's/.*"iteration_p50_s":[[:space:]]*\([0-9.e-]*\).*/\1/p' "$T/f.json")
mx=$(sed -n 's/.*"iteration_max_s":[[:space:]]*\([0-9.e-]*\).*/\1/p' "$T/f.json")
awk -v a="$p50" -v b="$mx" 'BEGIN { exit !(b > 1.5 * a) }' && ok "a temporary fault shows in the tail (p50 $p50, max $mx)" ||
    fail "a temporary fault shows in the tail" "$p50 $mx"
{ cat "$T/f.yaml"; printf 'sweep:\n  faults.0.bandwidth: [1Gbps, 5Gbps]\n'; } >"$T/fsw.yaml"
"$A" sweep "$T/fsw.yaml" --out "$T/fs" --jobs 2 >/dev/null 2>&1 && [ "$(wc -l <"$T/fs/results.jsonl")" = 2 ] &&
    ok "faults.0.bandwidth is a sweep axis" || fail "faults.0.bandwidth is a sweep axis"

# --trace-ranks all: every rank's compute track; the default, the first
# and the last rank's; a straggler's track is the longest.
"$A" run "$T/s.yaml" --trace "$T/all.json" --trace-ranks all --trace-policy ddp >/dev/null &&
    "$A" run "$T/s.yaml" --trace "$T/ends.json" --trace-policy ddp >/dev/null
na=$(grep -c '"process_name"' "$T/all.json"); ne=$(grep -c '"process_name"' "$T/ends.json")
[ "$na" = 8 ] && [ "$ne" = 2 ] && ok "--trace-ranks all: 8 ranks, default 2" || fail "--trace-ranks" "$na $ne"
"$A" run "$T/s.yaml" --trace-ranks some --trace "$T/x.json" >/dev/null 2>"$T/err"; rc=$?
[ $rc = 2 ] && grep -q "^--trace-ranks: 'some'; expected all or ends$" "$T/err" && ok "--trace-ranks some: exit 2" ||
    fail "--trace-ranks some: exit 2" "$rc $(cat "$T/err")"

# Plots (with gnuplot): a what-if run draws the CDF of its iterations per
# policy, with one point per measured iteration; a sweep over a
# straggler's slowdown draws the speed-up against it.
if command -v gnuplot >/dev/null; then
    "$A" run "$T/s.yaml" --plot "$T/pl" >/dev/null 2>&1 && [ -s "$T/pl/iteration_cdf.png" ] &&
        [ "$(grep -c '^[0-9]' "$T/pl/iteration_cdf.dat")" = 20 ] && ok "iteration_cdf: 2 policies x 10 iterations" ||
        fail "iteration_cdf: 2 policies x 10 iterations"
    { sed 's/slowdown: 1.2/slowdown: 1/' "$T/s.yaml"; printf 'sweep:\n  stragglers.0.slowdown: [1, 1.5, 2]\n'; } >"$T/ss.yaml"
    "$A" sweep "$T/ss.yaml" --out "$T/ss" --jobs 1 >/dev/null 2>&1 && "$A" plot "$T/ss/results.jsonl" --out "$T/ssp" >/dev/null 2>&1 &&
        [ -s "$T/ssp/speedup_vs_whatif-01.png" ] && [ "$(grep -c '^[0-9]' "$T/ssp/speedup_vs_whatif-01.dat")" = 6 ] &&
        ok "speedup_vs_whatif: 2 policies x 3 slowdowns" || fail "speedup_vs_whatif: 2 policies x 3 slowdowns"
fi
