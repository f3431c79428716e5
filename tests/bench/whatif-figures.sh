#!/bin/bash
# tests/bench/whatif-figures.sh — regenerates docs/howto/what-if.md's worked
# question: the table (markdown rows on stdout) and the figures in
# docs/img/whatif/, from configs/whatif-vgg16-64.yaml. Run it after a change
# to the compute or network model, then paste the rows into docs/howto/what-if.md.
#
#   tests/bench/whatif-figures.sh [ARSIM]      (from the repository root; ARSIM defaults to ./arsim)
set -eu
A=$(readlink -f "${1:-./arsim}")
cd "$(dirname "$0")/../.."
C=configs/whatif-vgg16-64.yaml
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
"$A" run "$C" --json "$T/h.json" >/dev/null
"$A" run "$C" --set 'stragglers=[{ranks: [17], slowdown: 1.2}]' --json "$T/s.json" >/dev/null
"$A" run "$C" --set 'variation={dist: normal, cv: 0.1, seed: 1}' --json "$T/v.json" >/dev/null
# one line per result: policy overlap algorithm iteration_s p50 p99
rows() { tr -d '\n\t ' <"$1" | grep -o '"policy":"[^"]*","overlap":"[^"]*","algorithm":"[^"]*","iteration_s":[0-9.e+-]*,"iteration_p50_s":[0-9.e+-]*,"iteration_p99_s":[0-9.e+-]*' |
         sed 's/"[a-z_0-9]*"://g; s/"//g; s/,/ /g'; }
paste <(rows "$T/h.json") <(rows "$T/s.json") <(rows "$T/v.json") | awk '{
  h = $4 * 1e3; s = $10 * 1e3; vm = $16 * 1e3; v5 = $17 * 1e3; v9 = $18 * 1e3
  printf "| %s (%s, %s) | %.1f | %.1f | %+.1f %% | %.1f / %.1f / %.1f | %+.1f %% |\n", $1, $2, $3, h, s, (s / h - 1) * 100, vm, v5, v9, (v9 / h - 1) * 100 }'
"$A" plot "$T/v.json" --out "$T/vp" >/dev/null
cp "$T/vp/iteration_cdf.png" docs/img/whatif/iteration_cdf-cv0.1.png
{ sed 's/^variation:.*$/stragglers: [{ranks: [17], slowdown: 1}]/' "$C"
  printf 'sweep:\n  stragglers.0.slowdown: [1.0, 1.1, 1.2, 1.3, 1.5, 2.0]\n'; } >"$T/sl.yaml"
{ sed 's/^variation:.*$/variation: {dist: normal, cv: 0, seed: 1}/' "$C"
  printf 'sweep:\n  variation.cv: [0, 0.05, 0.1, 0.2, 0.3]\n'; } >"$T/cv.yaml"
"$A" sweep "$T/sl.yaml" --set 'iterations={warmup: 2, measured: 10}' --out "$T/sl" --jobs 2 >/dev/null 2>&1
"$A" sweep "$T/cv.yaml" --out "$T/cv" --jobs 2 >/dev/null 2>&1
"$A" plot "$T/sl/results.jsonl" --out "$T/slp" >/dev/null
"$A" plot "$T/cv/results.jsonl" --out "$T/cvp" >/dev/null
cp "$T/slp/speedup_vs_whatif-01.png" docs/img/whatif/speedup_vs_slowdown.png
cp "$T/cvp/speedup_vs_whatif-01.png" docs/img/whatif/speedup_vs_cv.png
grep -h '^"\|^[0-9]' "$T/slp/speedup_vs_whatif-01.dat" "$T/cvp/speedup_vs_whatif-01.dat" |
    sed 's/^/# /' >&2   # the sweeps' speed-ups and iteration times, for the text
"$A" run "$C" --set 'stragglers=[{ranks: [63], slowdown: 1.2}]' --set 'iterations={warmup: 2, measured: 3}' \
    --trace "$T/tl.json" --trace-policy layer-ring >/dev/null
"$A" plot "$T/tl.json" --out "$T/tlp" >/dev/null
cp "$T/tlp/timeline.png" docs/img/whatif/timeline-straggler-layer-ring.png
