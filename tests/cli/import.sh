#!/bin/bash
# `arsim import-profile`: the synthetic trace tests/data/profile-vgg16-cifar10.json
# (made by tests/data/gen_profile_fixture.py) becomes a measured model whose
# per-layer times are exactly those the fixture encodes
# (tests/data/profile-vgg16-cifar10.expected), that loads in `arsim list`,
# `check` and `run`; and bad input fails with one line, exit 2, no output file.
# Prints "ok NAME" / "FAIL NAME"; $ARSIM is the binary; cwd = repo root.
ARSIM=$(readlink -f "${ARSIM:-./arsim}")
TRACE=tests/data/profile-vgg16-cifar10.json
EXPECTED=tests/data/profile-vgg16-cifar10.expected
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { echo "ok $1"; }
bad() { echo "FAIL $1${2:+: $2}"; }
check() { if [ "$2" = 0 ]; then ok "$1"; else bad "$1" "$3"; fi; }

# expect_bad NAME PATTERN ARGS...: exit 2, one stderr line matching PATTERN and the
# one-line form of tests/cli/badinput.sh, empty stdout.
expect_bad() {
  local name=$1 pat=$2; shift 2
  "$ARSIM" import-profile "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  local lines; lines=$(wc -l <"$tmp/err")
  local form='^([^:]+:[0-9]+:[0-9]+|-{1,2}[A-Za-z0-9][A-Za-z0-9-]*|[a-z][a-z-]*): .+; .+$'
  if [ $rc -eq 2 ] && [ "$lines" -eq 1 ] && grep -qE "$pat" "$tmp/err" && grep -qE "$form" "$tmp/err" &&
     [ ! -s "$tmp/out" ]; then
    ok "$name"
  else
    bad "$name" "rc=$rc lines=$lines stderr=$(head -c 300 "$tmp/err")"
  fi
}

# --- import the fixture ------------------------------------------------------
out=$tmp/vgg16-cifar10-measured.yaml
"$ARSIM" import-profile "$TRACE" --model vgg16-cifar10 --out "$out" >"$tmp/sum" 2>"$tmp/err"
rc=$?
check import.exit "$([ $rc -eq 0 ] && [ -s "$out" ] && echo 0)" "rc=$rc $(cat "$tmp/err")"
check import.summary "$(grep -q 'imported 21 layers of vgg16-cifar10' "$tmp/sum" && echo 0)" "$(cat "$tmp/sum")"
check import.no-temp-left "$(ls "$tmp" | grep -q '\.tmp\.' || echo 0)"

# the measured block: batch and precision from the arsim: ranges, GPU from deviceProperties
check import.measured "$(grep -qE '^measured: \{batch: 32, gpu: "v100", source: ".*GPU kernel time, 1 step.*", precision: fp32\}$' "$out" && echo 0)" \
  "$(grep '^measured' "$out")"

# per-layer times equal what the fixture encodes (exact to 1e-9 ms)
sed -nE 's/^  - \{name: "([^"]+)", .*fwd_ms: ([0-9.e+-]+), bwd_ms: ([0-9.e+-]+)\}$/\1 \2 \3/p' "$out" >"$tmp/got"
diffs=$(awk 'NR==FNR { if ($1 !~ /^#/) { f[$1]=$2; b[$1]=$3; n++ } next }
             { m++; d1=$2-f[$1]; d2=$3-b[$1]; if (!($1 in f) || d1*d1 > 1e-18 || d2*d2 > 1e-18) print $1 }
             END { if (m != n) print "count " m " vs " n }' "$EXPECTED" "$tmp/got")
check import.layer-times "$([ -z "$diffs" ] && [ "$(wc -l <"$tmp/got")" -eq 21 ] && echo 0)" "$diffs"

# params, tensors, kinds and flops come from models/vgg16-cifar10.yaml, in order
strip() { sed -nE 's/^  - \{name: "?([^",]+)"?, (kind: .*mem_bytes: [0-9]+).*/\1 \2/p' "$1"; }
check import.layers-from-model "$(diff <(strip models/vgg16-cifar10.yaml) <(strip "$out") >/dev/null && echo 0)"
check import.params "$(grep -q '^params: 33638218$' "$out" && echo 0)"

# stdout without --out: the same layers
"$ARSIM" import-profile "$TRACE" --model vgg16-cifar10 >"$tmp/stdout.yaml" 2>/dev/null
check import.stdout "$(diff <(grep '^  - ' "$out") <(grep '^  - ' "$tmp/stdout.yaml") >/dev/null && echo 0)"

# --batch / --gpu / --precision override the trace
"$ARSIM" import-profile "$TRACE" --model vgg16-cifar10 --batch 64 --gpu a100 --precision fp16 2>/dev/null \
  | grep -qE '^measured: \{batch: 64, gpu: "a100", .*precision: fp16\}$'
check import.overrides $?

# profile_gpu.sh --only refuses a case not in its list before it creates
# anything or looks for a GPU: one line, exit 2.
err=$(bash models/gen/profile_gpu.sh "$tmp/prof" --only vgg16-tf32-b32,vgg16-tf32-b65 2>&1)
rc=$?
check import.profile-only-bad "$([ $rc -eq 2 ] && [ "$(wc -l <<<"$err")" = 1 ] && [ ! -e "$tmp/prof" ] &&
  grep -q "^profile_gpu.sh: --only: 'vgg16-tf32-b65' is not a case; expected MODEL-PREC-bB" <<<"$err" && echo 0)" \
  "rc=$rc $err"

# --- a real trace: PyTorch 2.11 on an H100 (models/gen/profile_gpu.sh) -------
# torch.profiler's own export (kernels tied to launches by correlation id, 3
# profiled steps) imports into exactly the shipped models/*-h100*.yaml.
gzip -dc validate/h100/traces/vgg16-tf32-b32.trace.json.gz >"$tmp/vgg16-tf32-b32.trace.json"
(cd "$tmp" && ARSIM_DATA=$OLDPWD "$ARSIM" import-profile vgg16-tf32-b32.trace.json --model vgg16 \
   --out vgg16-h100.yaml >"$tmp/h100.sum" 2>"$tmp/h100.err")
check import.h100-exit $? "$(cat "$tmp/h100.err")"
check import.h100-summary "$(grep -q '(GPU kernel time, 3 steps, batch 32, h100, tf32)' "$tmp/h100.sum" && echo 0)" \
  "$(cat "$tmp/h100.sum")"
check import.h100-shipped "$(cmp -s "$tmp/vgg16-h100.yaml" models/vgg16-h100.yaml && echo 0)" \
  "$(diff "$tmp/vgg16-h100.yaml" models/vgg16-h100.yaml | head -3)"
# and every other shipped H100 file from its trace in validate/h100/traces
for spec in resnet50:tf32:128: bert-base-384:tf32:32: gpt2:tf32:8: alexnet:tf32:128: vgg16-cifar10:tf32:128: \
            vgg16:fp16:32:-fp16 resnet50:fp16:256:-fp16 bert-base-384:fp16:32:-fp16 gpt2:fp16:8:-fp16; do
  IFS=: read -r m p b suffix <<<"$spec"
  tr=$m-$p-b$b.trace.json
  gzip -dc "validate/h100/traces/$tr.gz" >"$tmp/$tr"
  (cd "$tmp" && ARSIM_DATA=$OLDPWD "$ARSIM" import-profile "$tr" --model "$m" --out "$m-h100$suffix.yaml" \
     >/dev/null 2>"$tmp/h100.err")
  check "import.h100-shipped.$m-h100$suffix" "$(cmp -s "$tmp/$m-h100$suffix.yaml" "models/$m-h100$suffix.yaml" && echo 0)" \
    "$(cat "$tmp/h100.err") $(diff "$tmp/$m-h100$suffix.yaml" "models/$m-h100$suffix.yaml" 2>&1 | head -3)"
  rm -f "$tmp/$tr"
done

# --gaps on a hand-made trace (us): fwd:a launches k1 [100, 110), fwd:b k2
# [130, 150) after a 20 us gap; the loss kernel k3 [160, 165) lies in no
# range, so the 10 us before bwd:b's k4 [175, 185) is nobody's; bwd:a's k5
# [200, 210) waits 15 us behind k4; the optimizer's k6 follows. Kernel
# time: a 10 + 10, b 20 + 10; with --gaps: a 10 + 25, b 40 + 10.
cat >"$tmp/gapmodel.yaml" <<'EOF2'
name: gapmodel
description: "two layers"
params: 16
layers:
  - {name: a, kind: conv, params: 10, tensors: [10], flops: 1000, mem_bytes: 100}
  - {name: b, kind: fc, params: 6, tensors: [6], flops: 100, mem_bytes: 10}
EOF2
{
  echo '{"deviceProperties": [{"name": "NVIDIA H100 80GB HBM3"}], "traceEvents": ['
  echo '{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 300},'
  echo '{"ph": "X", "cat": "user_annotation", "name": "arsim:batch=4", "pid": 1, "tid": 1, "ts": 1, "dur": 1},'
  for r in "fwd:a 10" "fwd:b 20" "bwd:b 50" "bwd:a 60"; do
    set -- $r
    echo "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"$1\", \"pid\": 1, \"tid\": 1, \"ts\": $2, \"dur\": 10},"
  done
  for k in "1 12 100 10" "2 22 130 20" "3 40 160 5" "4 52 175 10" "5 62 200 10" "6 80 215 5"; do
    set -- $k
    echo "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": 1, \"ts\": $2, \"dur\": 1, \"args\": {\"correlation\": $1}},"
    echo "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k$1\", \"pid\": 0, \"tid\": 7, \"ts\": $3, \"dur\": $4, \"args\": {\"correlation\": $1}},"
  done
  echo '{"ph": "i", "name": "end", "pid": 1, "tid": 1, "ts": 299}]}'
} >"$tmp/gaps.json"
gaptimes() { sed -nE 's/^  - \{name: "([ab])", .*fwd_ms: ([0-9.e+-]+), bwd_ms: ([0-9.e+-]+)\}$/\1 \2 \3/p' "$1" | tr '\n' ' '; }
"$ARSIM" import-profile "$tmp/gaps.json" --model "$tmp/gapmodel.yaml" --out "$tmp/nogap.yaml" >/dev/null 2>"$tmp/err"
check import.kernel-time "$([ "$(gaptimes "$tmp/nogap.yaml")" = "a 0.01 0.01 b 0.02 0.01 " ] && echo 0)" \
  "$(gaptimes "$tmp/nogap.yaml") $(cat "$tmp/err")"
"$ARSIM" import-profile "$tmp/gaps.json" --model "$tmp/gapmodel.yaml" --gaps --out "$tmp/gap.yaml" >"$tmp/sum" 2>"$tmp/err"
check import.gaps "$([ "$(gaptimes "$tmp/gap.yaml")" = "a 0.01 0.025 b 0.04 0.01 " ] && echo 0)" \
  "$(gaptimes "$tmp/gap.yaml") $(cat "$tmp/err")"
check import.gaps-said "$(grep -q 'GPU kernel time and idle gaps, 1 step' "$tmp/sum" &&
  grep -q '^# fwd_ms/bwd_ms: GPU kernel time and idle gaps per training step' "$tmp/gap.yaml" && echo 0)"
grep -v '"cat": "kernel"' "$tmp/gaps.json" >"$tmp/cpuonly.json"
expect_bad bad.gaps-cpu-trace '^--gaps: .*cpuonly\.json has no GPU kernel in a layer range' "$tmp/cpuonly.json" \
  --model "$tmp/gapmodel.yaml" --gaps
# no --gpu and a models/gpus.yaml that does not load: one line, not a crash
mkdir -p "$tmp/badgpus/models"
echo 'gpus: 3' >"$tmp/badgpus/models/gpus.yaml"
ARSIM_DATA=$tmp/badgpus expect_bad import.gpus-unreadable '^--gpu: .*gpus\.yaml:1:.*no gpus mapping' \
  "$tmp/vgg16-tf32-b32.trace.json" --model "$(pwd)/models/vgg16.yaml" --out "$tmp/badgpus/m.yaml"
check import.gpus-unreadable-no-file "$([ ! -e "$tmp/badgpus/m.yaml" ] && echo 0)"

# --- the imported model in list, check, run --------------------------------
mkdir -p "$tmp/home/models"
cp models/gpus.yaml "$out" "$tmp/home/models/"
ARSIM_HOME=$tmp/home "$ARSIM" list models >"$tmp/list" 2>&1
check list.measured "$(grep -qE '^vgg16-cifar10-measured +33638218 +21 +32 .*yes \(batch 32, v100\)' "$tmp/list" && echo 0)" \
  "$(cat "$tmp/list")"
ARSIM_HOME=$tmp/home "$ARSIM" list models --json - | grep -q '"measured":[[:space:]]*true'
check list.json-measured $?

cat >"$tmp/scn.yaml" <<'EOF'
name: imported
model: vgg16-cifar10-measured.yaml
gpu: v100
batch: [32, 64]
cluster: {topology: star, nodes: 4, link: {bandwidth: 10Gbps, latency: 5us}}
policies:
  - {name: ddp, overlap: ddp, algorithm: ring}
  - {name: thesis, overlap: layer, algorithm: hybrid}
EOF
"$ARSIM" check "$tmp/scn.yaml" >/dev/null 2>"$tmp/err"
check run.check $? "$(cat "$tmp/err")"
"$ARSIM" run "$tmp/scn.yaml" --csv "$tmp/run.csv" >"$tmp/run.out" 2>"$tmp/err"
check run.exit $? "$(cat "$tmp/err")"
# Measured times scale linearly with the batch from 32, and the optimizer
# update does not depend on it: compute(64) - compute(32) = sum(fwd + bwd).
want=$(awk '$1 !~ /^#/ { s += $2 + $3 } END { printf "%.9f", s / 1e3 }' "$EXPECTED")
got=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) { if ($i == "compute_s") c = i; if ($i == "batch") b = i; if ($i == "policy") p = i } next }
               $p == "ddp" { v[$b] = $c } END { printf "%.9f", v[64] - v[32] }' "$tmp/run.csv")
check run.measured-compute "$(awk -v a="$want" -v b="$got" 'BEGIN { d = a - b; exit !(a > 0 && d * d <= (1e-6 * a) ^ 2) }' && echo 0)" \
  "want $want got $got"

# --- a CPU-only trace of a two-layer model: range times, averaged over steps --
cat >"$tmp/tiny.yaml" <<'EOF'
name: tiny
layers:
  - {name: conv, kind: conv, params: 10, flops: 100}
  - {name: fc, kind: fc, params: 5, flops: 10}
EOF
cat >"$tmp/cpu.json" <<'EOF'
{"traceEvents": [
 {"ph": "X", "cat": "cpu_op", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 1000},
 {"ph": "X", "cat": "user_annotation", "name": "fwd:conv", "pid": 1, "tid": 1, "ts": 10, "dur": 120.5},
 {"ph": "X", "cat": "user_annotation", "name": "fwd:fc", "pid": 1, "tid": 1, "ts": 200, "dur": 30},
 {"ph": "X", "cat": "user_annotation", "name": "bwd:fc", "pid": 1, "tid": 2, "ts": 300, "dur": 60},
 {"ph": "X", "cat": "user_annotation", "name": "bwd:conv", "pid": 1, "tid": 2, "ts": 400, "dur": 250},
 {"ph": "X", "cat": "cpu_op", "name": "ProfilerStep#2", "pid": 1, "tid": 1, "ts": 1000, "dur": 1000},
 {"ph": "X", "cat": "user_annotation", "name": "fwd:conv", "pid": 1, "tid": 1, "ts": 1010, "dur": 79.5},
 {"ph": "X", "cat": "user_annotation", "name": "fwd:fc", "pid": 1, "tid": 1, "ts": 1200, "dur": 10},
 {"ph": "X", "cat": "user_annotation", "name": "bwd:fc", "pid": 1, "tid": 2, "ts": 1300, "dur": 20},
 {"ph": "X", "cat": "user_annotation", "name": "bwd:conv", "pid": 1, "tid": 2, "ts": 1400, "dur": 150}
]}
EOF
# per step: conv fwd (120.5+79.5)/2 = 100 us, bwd 200 us; fc fwd 20 us, bwd 40 us
"$ARSIM" import-profile "$tmp/cpu.json" --model "$tmp/tiny.yaml" --batch 8 --gpu h100 >"$tmp/cpu.yaml" 2>"$tmp/err"
check cpu.exit $? "$(cat "$tmp/err")"
check cpu.times "$(grep -q 'name: "conv", .*fwd_ms: 0.1, bwd_ms: 0.2}' "$tmp/cpu.yaml" &&
                   grep -q 'name: "fc", .*fwd_ms: 0.02, bwd_ms: 0.04}' "$tmp/cpu.yaml" &&
                   grep -q 'CPU range time, 2 steps' "$tmp/cpu.yaml" && echo 0)" "$(grep -E 'name: "|measured' "$tmp/cpu.yaml")"

# --- bad input ----------------------------------------------------------------
expect_bad bad.no-model '^--model: missing; expected' "$TRACE"
expect_bad bad.unknown-model '^--model: unknown model .nosuch.; expected' "$TRACE" --model nosuch
expect_bad bad.no-trace '^import-profile: no TRACE.json file; expected arsim import-profile TRACE.json' --model vgg16-cifar10
expect_bad bad.two-traces "^import-profile: unexpected argument '$TRACE'; expected exactly one TRACE.json file" "$TRACE" "$TRACE" --model vgg16-cifar10
expect_bad bad.missing-file "^$tmp/none.json:1:1: cannot read the trace" "$tmp/none.json" --model vgg16-cifar10
expect_bad bad.unknown-option '^--bogus: unknown option \(or a value it does not take\); expected one of --model' "$TRACE" --model vgg16-cifar10 --bogus
expect_bad bad.batch-zero '^--batch: .0. is not an integer from 1' "$TRACE" --model vgg16-cifar10 --batch 0
expect_bad bad.gpu '^--gpu: unknown GPU .tpu.; expected' "$TRACE" --model vgg16-cifar10 --gpu tpu
expect_bad bad.precision '^--precision: unknown precision .fp8.; expected' "$TRACE" --model vgg16-cifar10 --precision fp8
expect_bad bad.no-batch "^--batch: missing and .* has no arsim:batch=B range" "$tmp/cpu.json" --model "$tmp/tiny.yaml" --gpu v100
expect_bad bad.no-gpu "^--gpu: missing and the trace's device '\(none\)' matches no entry" "$tmp/cpu.json" --model "$tmp/tiny.yaml" --batch 8
expect_bad bad.wrong-model "^$TRACE:1:1: no fwd:conv1 range for layer 'conv1' of model alexnet; expected" "$TRACE" --model alexnet

printf '{"traceEvents": [\n  {"ph": "X", "name": "fwd:a", "ts": 1, "dur": 2},\n  {"ph": "X",, "name": "x"}\n]}\n' >"$tmp/syntax.json"
# cJSON stops at (or just past) the second comma of line 3
expect_bad bad.json-syntax "^$tmp/syntax.json:3:1[45]: not valid JSON; expected" "$tmp/syntax.json" --model "$tmp/tiny.yaml"
: >"$tmp/empty.json"
expect_bad bad.json-empty "^$tmp/empty.json:1:1: empty file; expected" "$tmp/empty.json" --model "$tmp/tiny.yaml"
echo '{"events": []}' >"$tmp/noev.json"
expect_bad bad.no-events "^$tmp/noev.json:1:1: no traceEvents array; expected" "$tmp/noev.json" --model "$tmp/tiny.yaml"
echo '{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 2}]}' >"$tmp/noranges.json"
expect_bad bad.no-ranges "^$tmp/noranges.json:1:1: no fwd:LAYER or bwd:LAYER ranges; expected" "$tmp/noranges.json" --model "$tmp/tiny.yaml"
echo '{"traceEvents": [{"ph": "X", "name": "fwd:conv", "ts": 1, "dur": -2}]}' >"$tmp/negdur.json"
expect_bad bad.negative-dur "^$tmp/negdur.json:1:1: traceEvents\[0\] \('fwd:conv'\): dur is missing, negative" "$tmp/negdur.json" --model "$tmp/tiny.yaml"
echo '{"traceEvents": [{"ph": "X", "name": "arsim:batch=x", "ts": 1, "dur": 2}]}' >"$tmp/badmeta.json"
expect_bad bad.meta-batch "^$tmp/badmeta.json:1:1: traceEvents\[0\] \('arsim:batch=x'\): batch is not an integer" "$tmp/badmeta.json" --model "$tmp/tiny.yaml"
echo '{"traceEvents": []} trailing' >"$tmp/trail.json"
expect_bad bad.trailing "^$tmp/trail.json:1:21: text after the JSON value" "$tmp/trail.json" --model "$tmp/tiny.yaml"

# an error never creates, truncates or replaces the output file
echo keep >"$tmp/keep.yaml"
"$ARSIM" import-profile "$tmp/syntax.json" --model "$tmp/tiny.yaml" --out "$tmp/keep.yaml" 2>/dev/null
check bad.out-kept "$([ $? -eq 2 ] && [ "$(cat "$tmp/keep.yaml")" = keep ] && echo 0)"
"$ARSIM" import-profile "$tmp/syntax.json" --model "$tmp/tiny.yaml" --out "$tmp/new.yaml" 2>/dev/null
check bad.out-not-created "$([ $? -eq 2 ] && [ ! -e "$tmp/new.yaml" ] && echo 0)"
expect_bad bad.out-no-dir "^--out: directory '$tmp/no/such/dir' does not exist; expected" "$TRACE" --model vgg16-cifar10 --out "$tmp/no/such/dir/x.yaml"
expect_bad bad.out-is-dir "^--out: '$tmp' is a directory; expected" "$TRACE" --model vgg16-cifar10 --out "$tmp"
expect_bad bad.out-empty "^--out: empty file name; expected" "$TRACE" --model vgg16-cifar10 --out ""
mkdir "$tmp/ro" && chmod 555 "$tmp/ro"
if [ -w "$tmp/ro" ]; then ok bad.out-unwritable; else  # root writes anywhere: nothing to test
  expect_bad bad.out-unwritable "^--out: $tmp/ro/x.yaml: cannot write" "$TRACE" --model vgg16-cifar10 --out "$tmp/ro/x.yaml"
fi
check bad.no-temp-left "$(ls "$tmp" "$tmp/home/models" | grep -q '\.tmp\.' || echo 0)"
exit 0
