#!/bin/bash
# tests/cli/sweep.sh — `arsim sweep` and `arsim plot` end to end: check and
# expansion errors, determinism (--jobs 1, --jobs 4, two shards merged,
# --mpi under mpirun -np 3: the same results.csv byte for byte), killed
# midway (at a byte count) + a torn line + --resume (identical to an uninterrupted run), and
# every figure of `arsim plot` (PNG of the expected pixel size, SVG) plus
# the errors on empty and malformed results files.
# Runs from the repository root with $ARSIM as the binary; prints
# "ok <name>" / "FAIL <name>" lines.
ARSIM=${ARSIM:-./arsim}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
ok() { echo "ok $1"; }
fail() { echo "FAIL $1${2:+: $2}"; }
check() { if eval "$2"; then ok "$1"; else fail "$1" "$3"; fi; }
lines() { [ -f "$1" ] && wc -l <"$1" || echo 0; }

# A small sweep: VGG-16, 3 bandwidths x 3 node counts x 2 batch sizes.
cat >"$T/sweep.yaml" <<'EOF'
name: cli-sweep
model: vgg16
gpu: v100
batch: [16]
cluster:
  topology: star
  nodes: 16
  link: {bandwidth: 10Gbps, latency: 25us}
policies:
  - {name: pytorch-ddp, overlap: ddp, algorithm: ring, bucket: 25MiB}
  - {name: thesis, overlap: layer, algorithm: hybrid}
  - {name: priority-auto, overlap: priority, algorithm: auto}
baseline: pytorch-ddp
iterations: {warmup: 1, measured: 2}
sweep:
  cluster.link.bandwidth: [1Gbps, 10Gbps, 100Gbps]
  cluster.nodes: [16, 32, 64]
  batch: [[16], [64]]
EOF
N=18

# ---- check and expansion errors -------------------------------------------
out=$("$ARSIM" check "$T/sweep.yaml" 2>&1); rc=$?
check sweep-check "[ $rc -eq 0 ] && grep -q '18 scenarios' <<<\"\$out\"" "rc=$rc: $out"

sed 's/  cluster.nodes: \[16, 32, 64\]/  cluster.nodez: [16, 32, 64]/' "$T/sweep.yaml" >"$T/badkey.yaml"
err=$("$ARSIM" sweep "$T/badkey.yaml" --out "$T/badkey" 2>&1 >/dev/null); rc=$?
check sweep-unknown-axis-key "[ $rc -eq 2 ] && [ ! -e '$T/badkey' ] && grep -qx \"$T/badkey.yaml:17:3: unknown key 'nodez'.*\" <<<\"\$err\" && [ \$(wc -l <<<\"\$err\") -eq 1 ]" "rc=$rc: $err"

sed 's/  batch: \[\[16\], \[64\]\]/  batch: []/' "$T/sweep.yaml" >"$T/empty.yaml"
err=$("$ARSIM" check "$T/empty.yaml" 2>&1 >/dev/null); rc=$?
check sweep-empty-axis "[ $rc -eq 2 ] && grep -q \"^$T/empty.yaml:18:10: axis 'batch' has no values\" <<<\"\$err\"" "rc=$rc: $err"

sed 's/  batch: \[\[16\], \[64\]\]/  zip: [{batch: [[16], [64]], iterations.measured: [1, 2, 3]}]/' "$T/sweep.yaml" >"$T/zip.yaml"
err=$("$ARSIM" check "$T/zip.yaml" 2>&1 >/dev/null); rc=$?
check sweep-zip-length "[ $rc -eq 2 ] && grep -q \"^$T/zip.yaml:18:52: zip group: axis 'iterations.measured' has 3 values\" <<<\"\$err\"" "rc=$rc: $err"

sed 's/  batch: \[\[16\], \[64\]\]/  zip: [{batch: [[16], [64]], iterations.measured: [1, 2]}]/' "$T/sweep.yaml" >"$T/zipok.yaml"
out=$("$ARSIM" check "$T/zipok.yaml" 2>&1); rc=$?
check sweep-zip-count "[ $rc -eq 0 ] && grep -q '18 scenarios' <<<\"\$out\"" "rc=$rc: $out"

# ---- determinism ------------------------------------------------------------
"$ARSIM" sweep "$T/sweep.yaml" --out "$T/j1" --jobs 1 2>"$T/j1.log"; rc=$?
check sweep-jobs1 "[ $rc -eq 0 ] && [ \$(lines '$T/j1/results.jsonl') -eq $N ] && [ \$(lines '$T/j1/results.csv') -eq $((1 + N * 3)) ] && [ -s '$T/j1/sweep.yaml' ]" "rc=$rc $(tail -2 "$T/j1.log")"
check sweep-yaml-version "grep -q '^arsim_version: ' '$T/j1/sweep.yaml' && [ \$(grep -c '  - {id: ' '$T/j1/sweep.yaml') -eq $N ]"
check sweep-csv-sorted "tail -n +2 '$T/j1/results.csv' | cut -d, -f1 | sort -c"

"$ARSIM" sweep "$T/sweep.yaml" --out "$T/j4" --jobs 4 2>/dev/null; rc=$?
check sweep-jobs4-identical "[ $rc -eq 0 ] && cmp -s '$T/j1/results.csv' '$T/j4/results.csv'"

"$ARSIM" sweep "$T/sweep.yaml" --out "$T/s0" --shard 0/2 --jobs 2 2>/dev/null && \
"$ARSIM" sweep "$T/sweep.yaml" --out "$T/s1" --shard 1/2 --jobs 2 2>/dev/null; rc=$?
check sweep-shards-disjoint "[ $rc -eq 0 ] && [ \$(lines '$T/s0/results.jsonl') -eq $((N / 2)) ] && [ \$(lines '$T/s1/results.jsonl') -eq $((N / 2)) ]"
"$ARSIM" sweep --merge "$T/s1" "$T/s0" --out "$T/merged" 2>/dev/null; rc=$?
check sweep-merge-identical "[ $rc -eq 0 ] && cmp -s '$T/j1/results.csv' '$T/merged/results.csv'"
"$ARSIM" sweep --merge "$T/s0" "$T/s1" "$T/s0" --out "$T/merged2" 2>/dev/null; rc=$?
check sweep-merge-dedup "[ $rc -eq 0 ] && cmp -s '$T/j1/results.csv' '$T/merged2/results.csv' && [ \$(lines '$T/merged2/results.jsonl') -eq $N ]"

if ! command -v mpirun >/dev/null || ! command -v "${MPICC:-mpicc}" >/dev/null; then
  echo "skipped sweep-mpi-identical: mpirun or ${MPICC:-mpicc} not found, so arsim sweep --mpi is a stub (Open MPI: make deps)"
else
  MPIFLAGS="--oversubscribe"
  [ "$(id -u)" = 0 ] && MPIFLAGS="$MPIFLAGS --allow-run-as-root"
  # timeout: a hang guard (mpirun can hang on a host's network setup), not a
  # verdict on speed: the run takes about a second
  ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
    timeout 600 mpirun $MPIFLAGS -np 3 "$ARSIM" sweep "$T/sweep.yaml" --out "$T/mpi" --mpi >"$T/mpi.log" 2>&1; rc=$?
  check sweep-mpi-identical "[ $rc -eq 0 ] && cmp -s '$T/j1/results.csv' '$T/mpi/results.csv'" "rc=$rc $(tail -3 "$T/mpi.log")"
fi

# ---- killed midway, a torn line, --resume ---------------------------------------
# The run is stopped at a byte count, not at a moment, so the verdict is the
# same on a fast and on a slow machine: under a file-size limit (prlimit
# --fsize) of the first K result lines plus half of the next, the write of
# line K+1 is cut at the limit and arsim's next write attempt kills it
# (SIGXFSZ) — no results.csv, a torn last line. K is the fewest lines longer
# than sweep.yaml (written first, whole); the lines of a --jobs 1 run come in
# scenario order, so j1's results.jsonl gives the byte counts.
if command -v prlimit >/dev/null; then
  read -r K LIMIT < <(LC_ALL=C awk -v y="$(stat -c %s "$T/j1/sweep.yaml")" \
    '{ if (!k && sum > y) { k = NR - 1; lim = sum + int((length($0) + 1) / 2) } sum += length($0) + 1 }
     END { print k + 0, lim + 0 }' "$T/j1/results.jsonl")
  { prlimit --fsize="$LIMIT" --core=0 "$ARSIM" sweep "$T/sweep.yaml" --out "$T/kill" --jobs 1; } 2>/dev/null; rc=$?
  done_lines=$(lines "$T/kill/results.jsonl")
  check sweep-killed-midway "[ $K -ge 1 ] && [ $K -lt $((N - 1)) ] && [ $rc -eq $((128 + $(kill -l XFSZ))) ] && [ $done_lines -eq $K ] && [ \$(stat -c %s '$T/kill/results.jsonl') -eq $LIMIT ] && [ ! -e '$T/kill/results.csv' ]" "rc=$rc, $done_lines of $N lines, K=$K, limit $LIMIT B"
  "$ARSIM" sweep "$T/sweep.yaml" --out "$T/kill" --jobs 1 2>/dev/null; rc=$?
  check sweep-refuses-without-resume "[ $rc -eq 2 ]"
  "$ARSIM" sweep "$T/sweep.yaml" --out "$T/kill" --jobs 2 --resume 2>"$T/resume.log"; rc=$?
  check sweep-resume-identical "[ $rc -eq 0 ] && cmp -s '$T/j1/results.csv' '$T/kill/results.csv'" "rc=$rc $(tail -2 "$T/resume.log")"
  check sweep-resume-no-duplicates "[ \$(lines '$T/kill/results.jsonl') -eq $N ] && [ \$(cut -c1-22 '$T/kill/results.jsonl' | sort -u | wc -l) -eq $N ]"
  check sweep-resume-dropped-torn "grep -q 'torn' '$T/resume.log'"
  sed 's/name: cli-sweep/name: other/' "$T/sweep.yaml" >"$T/other.yaml"
  "$ARSIM" sweep "$T/other.yaml" --out "$T/kill" --resume 2>/dev/null; rc=$?
  check sweep-resume-other-definition "[ $rc -eq 2 ]"
else
  fail sweep-killed-midway "prlimit not found (util-linux)"
fi

# ---- plots ------------------------------------------------------------------------
png_size() { od -An -tu1 -j16 -N8 "$1" | awk '{print $1*16777216+$2*65536+$3*256+$4 "x" $5*16777216+$6*65536+$7*256+$8}'; }
figures_ok() {   # DIR NAME... : every NAME.png is a 960x600 PNG, NAME.svg an SVG, NAME.dat data
  local d=$1; shift
  for f in "$@"; do
    [ "$(head -c 8 "$d/$f.png" | od -An -tx1 | tr -d ' ')" = 89504e470d0a1a0a ] || { echo "$f.png: not a PNG"; return 1; }
    [ "$(png_size "$d/$f.png")" = 960x600 ] || { echo "$f.png: $(png_size "$d/$f.png")"; return 1; }
    [ "$(stat -c %s "$d/$f.png")" -gt 5000 ] || { echo "$f.png: too small"; return 1; }
    grep -q '<svg' "$d/$f.svg" && [ "$(stat -c %s "$d/$f.svg")" -gt 3000 ] || { echo "$f.svg: not an SVG"; return 1; }
    [ "$(grep -vc '^#' "$d/$f.dat")" -gt 0 ] || { echo "$f.dat: no data"; return 1; }
  done
}
"$ARSIM" plot "$T/j1/results.jsonl" --out "$T/plots" >"$T/plot.log" 2>&1; rc=$?
want=()
for g in 01 02 03 04 05 06 07 08 09; do   # 3 bandwidths x 3 node counts
  want+=(iteration_vs_batch-$g speedup_vs_batch-$g breakdown-$g)
done
for g in 01 02 03 04 05 06; do want+=(scaling-$g); done      # 3 bandwidths x 2 batches
for g in 01 02 03; do want+=(best_policy-$g); done           # bandwidth x batch, per node count
msg=$(figures_ok "$T/plots" "${want[@]}")
check plot-sweep-figures "[ $rc -eq 0 ] && [ -z \"\$msg\" ] && [ \$(ls '$T/plots'/*.png | wc -l) -eq ${#want[@]} ]" "rc=$rc $msg $(tail -2 "$T/plot.log")"
check plot-titles "grep -q 'vgg16, 16 x v100 GPUs (16 nodes x 1), star 1 Gb/s' '$T/plots/figures.txt'"
check plot-legend-names-algorithm "grep -q '\"thesis (layer, hybrid)\"' '$T/plots/iteration_vs_batch-01.dat'"

"$ARSIM" plot "$T/j4/results.jsonl" --out "$T/plots4" >/dev/null 2>&1
check plot-data-independent-of-jobs "for f in '$T/plots'/*.dat; do cmp -s \"\$f\" '$T/plots4'/\$(basename \"\$f\") || exit 1; done"

sed -e '/^sweep:/,$d' -e 's/^batch: \[16\]/batch: [16, 64]/' "$T/sweep.yaml" >"$T/plain.yaml"
"$ARSIM" run "$T/plain.yaml" --json "$T/run.json" --trace "$T/run.trace.json" >/dev/null 2>"$T/run.log"; rc=$?
if [ $rc -eq 0 ]; then
  "$ARSIM" plot "$T/run.json" "$T/run.trace.json" --out "$T/rplots" >/dev/null 2>&1; rc=$?
  msg=$(figures_ok "$T/rplots" iteration_vs_batch speedup_vs_batch breakdown timeline)
  check plot-run-and-trace "[ $rc -eq 0 ] && [ -z \"\$msg\" ]" "rc=$rc $msg"
  "$ARSIM" plot "$T/run.trace.json" --out "$T/tplots" >/dev/null 2>&1; rc=$?
  check plot-trace-alone "[ $rc -eq 0 ] && [ -z \"\$(figures_ok '$T/tplots' timeline)\" ]"
  "$ARSIM" run "$T/plain.yaml" --plot "$T/runplot" >/dev/null 2>&1; rc=$?
  msg=$(figures_ok "$T/runplot" iteration_vs_batch speedup_vs_batch breakdown timeline)
  check run-plot-dir "[ $rc -eq 0 ] && [ -z \"\$msg\" ]" "rc=$rc $msg"
else
  fail plot-run-and-trace "arsim run failed: $(tail -1 "$T/run.log")"
fi

# A cluster of GPU nodes: its figures are titled by the cluster as built
# (the node, its count, the fabric; radix and oversubscription where not
# the defaults), not by the graph and the NIC rate it became.
cat >"$T/nodes.yaml" <<'EOF'
name: nodes
model: resnet50
precision: fp16
batch: [32, 64]
cluster: {node: dgx-h100, nodes: 2}
policies:
  - {name: ddp-nccl, overlap: ddp, bucket: 25MiB}
baseline: ddp-nccl
iterations: {warmup: 1, measured: 1}
EOF
sed 's/nodes: 2}/nodes: 4, leaf_radix: 4, oversubscription: 2}/' "$T/nodes.yaml" >"$T/nodes4.yaml"
titled() {   # DIR TITLE: how many figures of DIR/figures.txt have TITLE
  awk -F'\t' -v t="$2" '$2 == t { n++ } END { print n + 0 }' "$1/figures.txt" 2>/dev/null || echo 0
}
for f in nodes nodes4; do
  "$ARSIM" run "$T/$f.yaml" --json "$T/$f.json" --plot "$T/$f-plots" >/dev/null 2>"$T/$f.log" ||
    echo "arsim run $f failed" >>"$T/$f.log"
done
n=$(titled "$T/nodes-plots" "resnet50, 16 x h100 GPUs, 2 x dgx-h100, rail-optimized fat-tree")
check plot-node-cluster-title "[ $n -eq 4 ] && grep -q '\"cluster\":.*\"2 x dgx-h100, rail-optimized fat-tree\"' '$T/nodes.json' && grep -q '\"node\":.*\"dgx-h100\"' '$T/nodes.json'" "$n of 4 titled: $(tail -1 "$T/nodes.log") $(cut -f2 "$T/nodes-plots/figures.txt" 2>/dev/null | tail -1)"
n=$(titled "$T/nodes4-plots" "resnet50, 32 x h100 GPUs, 4 x dgx-h100, rail-optimized fat-tree, leaf radix 4, oversubscription 2")
check plot-node-cluster-fabric-title "[ $n -eq 4 ]" "$n of 4 titled: $(tail -1 "$T/nodes4.log") $(cut -f2 "$T/nodes4-plots/figures.txt" 2>/dev/null | tail -1)"

# Axis values as the sweep file wrote them: an NCCL release 2.20 and an
# oversubscription 1.50, unquoted, are 2.20 and 1.50 in results.jsonl, its
# CSV and the figures' labels (they were 2.2 and 1.5, what a double prints).
cat >"$T/asis.yaml" <<'EOF'
name: asis
model: resnet50
precision: fp16
batch: [32, 64]
cluster: {node: dgx-h100, nodes: 4, leaf_radix: 4}
policies:
  - {name: ddp-nccl, overlap: ddp, bucket: 25MiB, algorithm: nccl}
baseline: ddp-nccl
iterations: {warmup: 1, measured: 1}
sweep:
  policies.0.nccl.release: [2.18, 2.20]
  cluster.oversubscription: [1.50, 2]
EOF
"$ARSIM" sweep "$T/asis.yaml" --out "$T/asis" >/dev/null 2>"$T/asis.log" &&
  "$ARSIM" plot "$T/asis/results.jsonl" --out "$T/asis-plots" >/dev/null 2>>"$T/asis.log"; rc=$?
check sweep-axis-values-as-written "[ $rc -eq 0 ] && grep -q '\"axes\":{\"policies.0.nccl.release\":2.20,\"cluster.oversubscription\":1.50}' '$T/asis/results.jsonl' && [ \$(grep -c '^[^,]*,2.20,1.50,' '$T/asis/results.csv') -eq 2 ] && grep -q '\"ddp-nccl (ddp, nccl) nccl.release=2.20\"' '$T/asis-plots/iteration_vs_batch-01.dat' && grep -q 'cluster.oversubscription=1.50\$' '$T/asis-plots/figures.txt'" "rc=$rc $(tail -1 "$T/asis.log")"

: >"$T/empty.jsonl"
head -c 300 "$T/j1/results.jsonl" >"$T/torn.jsonl"
printf '{"id":"0000-x","index":0,"axes":{},"results":[{"batch":16,"policy":"a"}]}\n' >"$T/nokeys.jsonl"
echo 'garbage' >"$T/garbage.json"
for f in empty torn nokeys garbage; do
  ext=jsonl; [ $f = garbage ] && ext=json
  err=$("$ARSIM" plot "$T/$f.$ext" --out "$T/bad-$f" 2>&1 >/dev/null); rc=$?
  check plot-bad-$f "[ $rc -eq 2 ] && [ ! -e '$T/bad-$f' ] && [ \$(wc -l <<<\"\$err\") -eq 1 ] && grep -q \"^$T/$f.$ext:[0-9]*:[0-9]*: .*; expected\" <<<\"\$err\"" "rc=$rc: $err"
done
exit 0
