#!/bin/bash
# The shipped scenarios (configs/) and topology files (topologies/): each
# scenario passes `arsim check` and `arsim run` with one result per (batch,
# policy); each sweep file (configs/sweep-*.yaml) expands and passes `arsim
# check`; each topology file runs `arsim collective --topology` with its
# host count; and a few figures are checked against closed forms written
# here from the files' own numbers (alpha-beta-gamma, docs/dev/design.md §7.7).
# Prints "ok NAME" / "FAIL NAME"; $ARSIM is the binary; cwd = repo root.
ARSIM=$(readlink -f "${ARSIM:-./arsim}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { echo "ok $1"; }
bad() { echo "FAIL $1${2:+: $2}"; }
check() { if [ "$2" = 0 ]; then ok "$1"; else bad "$1" "$3"; fi; }
# close A B: |A - B| <= 1e-3 |B|
close() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; if (b < 0) b = -b; exit !(d <= 1e-3 * b) }'; }

# --- scenarios: check, run, one CSV line per (batch, policy) ----------------
for spec in default:24 default-1gbps:24 resnet50-64gpu:28 bert-base-16gpu:28 vgg16-h100-measured:12; do
  name=${spec%%:*} rows=${spec##*:}
  f=configs/$name.yaml
  "$ARSIM" check "$f" >"$tmp/out" 2>"$tmp/err"
  check "$name.check" $? "$(cat "$tmp/err")"
  "$ARSIM" run "$f" --csv "$tmp/$name.csv" >"$tmp/out" 2>"$tmp/err"
  check "$name.run" $? "$(cat "$tmp/err")"
  n=$(($(wc -l <"$tmp/$name.csv") - 1))
  check "$name.rows" "$([ "$n" = "$rows" ] && echo 0)" "$n rows, want $rows"
  [ "$name" = default ] || check "$name.banner" "$(head -1 "$f" | grep -q "^# configs/$name.yaml - " && echo 0)"
done

# column COL of the CSV line with policy P and batch B
col() { awk -F, -v c="$2" -v p="$3" -v b="$4" 'NR == 1 { for (i = 1; i <= NF; i++) k[$i] = i; next }
                                               $k["policy"] == p && $k["batch"] == b { print $k[c] }' "$1"; }

# default-1gbps, no-overlap + ring: one ring all-reduce per layer with
# parameters (16 in VGG-16) on a star of 8 at 1 Gbit/s, alpha = 2 x 25 us,
# gamma = 3 / 900 GB/s (the V100's memory bandwidth):
#   16 * 2(p-1) alpha + 2 (p-1)/p n beta + (p-1)/p n gamma, n = 4 * 138357544
want=$(awk 'BEGIN { n = 4 * 138357544; printf "%.9f", 16 * 14 * 50e-6 + 1.75 * n / 1.25e8 + 0.875 * n * 3 / 900e9 }')
got=$(col "$tmp/default-1gbps.csv" comm_s no-overlap 16)
check default-1gbps.closed-form "$(close "$got" "$want" && echo 0)" "got $got want $want"
# and its 10 Gbit/s twin differs by the bandwidth term only
want10=$(awk 'BEGIN { n = 4 * 138357544; printf "%.9f", 16 * 14 * 50e-6 + 1.75 * n / 1.25e9 + 0.875 * n * 3 / 900e9 }')
got10=$(col "$tmp/default.csv" comm_s no-overlap 16)
check default.closed-form "$(close "$got10" "$want10" && echo 0)" "got $got10 want $want10"

# bert-base-16gpu, no-overlap + ring: every BERT-base layer has parameters;
# star of 16 at 100 Gbit/s, alpha = 2 x 1.5 us, gamma = 3 / 2039 GB/s (A100)
layers=$(grep -c '^  - {name:' models/bert-base.yaml)
params=$(sed -n 's/^params: //p' models/bert-base.yaml)
want=$(awk -v L="$layers" -v P="$params" 'BEGIN { n = 4 * P; printf "%.9f", L * 30 * 3e-6 + 2 * 15 / 16 * n / 12.5e9 + 15 / 16 * n * 3 / 2039e9 }')
got=$(col "$tmp/bert-base-16gpu.csv" comm_s no-overlap 8)
check bert-base-16gpu.closed-form "$(close "$got" "$want" && echo 0)" "got $got want $want ($layers layers)"

# resnet50-64gpu: 8 nodes x 8 GPUs = 64 ranks, fp16 gradients
check resnet50-64gpu.world "$(awk -F, 'NR == 2 { exit !($5 == 8 && $6 == 8 && $7 == 64) }' "$tmp/resnet50-64gpu.csv" && echo 0)"

# --- sweeps: each expands and checks; the NCCL scale figure's three files ----
# (configs/sweep-fsdp-scale-nccl{-node,,-far}.yaml, plotted as one figure) take
# the node counts 1, 2, 4, ..., 8,192 once each, in that order
for f in configs/sweep-*.yaml; do
  "$ARSIM" check "$f" >"$tmp/out" 2>"$tmp/err"
  check "$(basename "$f" .yaml).check" "$(grep -q "^$f: ok: [0-9]* scenarios\?," "$tmp/out" && echo 0)" "$(cat "$tmp/err" "$tmp/out")"
done
n=$(for s in -node '' -far; do sed -n 's/^  cluster\.nodes: \[\(.*\)\]$/\1/p' "configs/sweep-fsdp-scale-nccl$s.yaml"; done | tr -d ' ' | paste -sd,)
check sweep-fsdp-scale-nccl.nodes "$([ "$n" = 1,2,4,8,16,32,64,128,256,512,1024,2048,4096,8192 ] && echo 0)" "nodes $n"

# --- topology files: collective on every host ------------------------------
# json_num KEY FILE: the first numeric value of "KEY" in cJSON's output
json_num() { awk -F'\t' -v k="\"$1\":" '$(NF-1) == k { gsub(/,/, "", $NF); print $NF; exit }' "$2"; }
for kv in star-8-10g:8 fat-tree-k8:128 torus-8x8:64 ring-16:16 dgx-8x8:64 graph-example:8; do
  name=${kv%%:*} hosts=${kv##*:}
  "$ARSIM" collective --topology "$name" --algo ring --size 1MB --json - >"$tmp/c.json" 2>"$tmp/err"
  rc=$?
  check "topo.$name.run" "$([ $rc = 0 ] && [ "$(json_num ranks "$tmp/c.json")" = "$hosts" ] && echo 0)" \
    "rc=$rc ranks=$(json_num ranks "$tmp/c.json") $(cat "$tmp/err")"
  check "topo.$name.banner" "$(head -1 "topologies/$name.yaml" | grep -q "^# topologies/$name.yaml - " && echo 0)"
done
# fat-tree-k16 is big: ranks only, on a small message
"$ARSIM" collective --topology fat-tree-k16 --algo butterfly --size 4KB --json - >"$tmp/c.json" 2>"$tmp/err"
check topo.fat-tree-k16.run "$([ "$(json_num ranks "$tmp/c.json")" = 1024 ] && echo 0)" "$(cat "$tmp/err")"

# closed forms of ring on 1 MB (n = 1e6 bytes), gamma 0:
# star-8-10g: alpha 2 x 25 us, 10 Gbit/s: 14 alpha + 1.75 n / 1.25e9 = 2100 us
# ring-16: neighbours one hop apart, alpha 2 us, 25 Gbit/s: 30 alpha + 2 (15/16) n / 3.125e9 = 660 us
# graph-example: the slowest ring neighbours (h3 -> h4) cross leaf-spine-leaf:
#   alpha = 1 + 0.5 + 0.5 + 1 us = 3 us, bottleneck 25 Gbit/s: 14 alpha + 1.75 n / 3.125e9 = 602 us
for kv in star-8-10g:0.0021 ring-16:0.00066 graph-example:0.000602; do
  name=${kv%%:*} want=${kv##*:}
  "$ARSIM" collective --topology "$name" --algo ring --size 1MB --json - >"$tmp/c.json"
  got=$(json_num time_s "$tmp/c.json")
  check "topo.$name.closed-form" "$(close "$got" "$want" && echo 0)" "got $got want $want"
done
exit 0
