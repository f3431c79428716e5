#!/bin/bash
# fsdp — `overlap: fsdp` from the command line against $ARSIM, from the
# repository root: comm_bytes and memory_peak_bytes in the JSON and CSV
# (full_shard on 8 GPUs: 7/8 x (3Ψ - root) x 2 bytes, and 7/8 x Ψ x 2 more for
# its reduce-scatters in fp32, reduce_precision), the table's memory
# column and its mark for a run above the GPU's memory, and
# --strict-memory (refuses with exit 2 and one line naming the batch that
# would fit, or, when none does, a change that fits at batch 1, which does;
# passes a run that fits); sweeps over fsdp keys and their
# figures (configs/sweep-fsdp-knobs.yaml: a line per value; the model
# sweep's memory figure with the runs above the GPU's memory marked);
# fsdp2's reshard_after_forward N at the shard group's size and at 1 (true's
# and false's rows); the trace of an fsdp iteration (one iteration's spans).
# Prints "ok <test>" or "FAIL <test>: why" per test.
set -u
A=${ARSIM:?set ARSIM to the arsim binary}
FIT=configs/llama3-8b-fsdp-h100-8.yaml   # torchtitan's op-level SAC: 70.0 GiB a GPU, of the h100gt's 89
T=$(mktemp -d "${TMPDIR:-/tmp}/arsim-fsdp.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
export LC_ALL=C
# shellcheck source=../clilib.bash
. tests/clilib.bash
get() { awk -F'\t' -v p="$2" '$1 == p { print $2; found = 1; exit } END { exit !found }' "$1"; }

# the same scenario without checkpointing: 126 GiB (the loss head 23.5 of them), above the H100's 80
cat >"$T/big.yaml" <<'YAML'
model: llama3-8b-h100
precision: bf16
batch: [2]
cluster: {node: dgx-h100, nodes: 1}
policies:
  - {name: fsdp, overlap: fsdp}
YAML

# comm_bytes' closed form on 16 channels, where every unit's shard divides among them (on the tuner's 24 the
# root's does not, and the simulated ring rounds each channel's share of its last loop up: 336 B more); the
# last block kept gathered after forward (reshard_last_unit: false) sends 7/8 of its 218,112,000 bf16
# parameters' all-gather less than full sharding's 54,373,143,552: 53,991,447,552
CH16=(--set "policies.0.nccl={channels: 16}")

json_fields() {
    "$A" run "$FIT" "${CH16[@]}" --json "$T/o.json" >/dev/null 2>"$T/err" ||
        { echo "exit $?: $(cat "$T/err")"; return 1; }
    flat "$T/o.json" >"$T/flat" || { echo "invalid JSON"; return 1; }
    local c m f
    c=$(get "$T/flat" .results[0].comm_bytes) || { echo "no comm_bytes"; return 1; }
    [ "$c" = 53991447552 ] || { echo "comm_bytes $c, expected 53991447552"; return 1; }
    m=$(get "$T/flat" .results[0].memory_peak_bytes) || { echo "no memory_peak_bytes"; return 1; }
    awk -v m="$m" 'BEGIN { exit !(m > 40 * 2^30 && m < 89 * 2^30) }' || { echo "memory_peak_bytes $m"; return 1; }
    f=$(get "$T/flat" .results[0].memory_fits) || { echo "no memory_fits"; return 1; }
    [ "$f" = true ] || { echo "memory_fits $f"; return 1; }
}

csv_fields() {
    "$A" run "$FIT" "${CH16[@]}" --csv "$T/o.csv" >/dev/null 2>"$T/err" ||
        { echo "exit $?: $(cat "$T/err")"; return 1; }
    local nccl=',nccl_algo,nccl_proto,channels,nccl_time_s,nccl_tuner_time_s,nccl_release'   # its units go through NCCL
    head -1 "$T/o.csv" | grep -Eq ",speedup(,slowdown_s,comm_slowdown_s)?,comm_bytes,memory_peak_bytes$nccl,node,cluster\$" || { echo "header: $(head -1 "$T/o.csv")"; return 1; }
    tail -1 "$T/o.csv" | grep -Eq ',53991447552,[0-9]+,Ring,Simple,[0-9]+,[0-9.e-]+,[0-9.e-]+,2\.21,[a-z0-9-]+,"[^"]*"$' || { echo "row: $(tail -1 "$T/o.csv")"; return 1; }
}

table_mark() {
    "$A" run "$T/big.yaml" >"$T/table" 2>"$T/err" || { echo "exit $?: $(cat "$T/err")"; return 1; }
    grep -Eq 'memory\(GiB\) *$' "$T/table" || { echo "no memory column"; return 1; }
    grep -Eq '^ +2 +fsdp .* 126\.[0-9] !$' "$T/table" || { echo "row not marked: $(cat "$T/table")"; return 1; }
    grep -q "^# !: the estimated peak memory is above the h100's 80 GiB$" "$T/table" || { echo "no footnote"; return 1; }
    "$A" run "$FIT" >"$T/table" 2>"$T/err" || return 1
    ! grep -q '!' "$T/table" || { echo "a fitting run marked"; return 1; }
}

strict_refuses() {
    echo sentinel >"$T/keep.json"
    local rc=0
    "$A" run "$T/big.yaml" --strict-memory --json "$T/keep.json" >"$T/out" 2>"$T/err" || rc=$?
    [ "$rc" -eq 2 ] || { echo "exit $rc, expected 2"; return 1; }
    [ ! -s "$T/out" ] || { echo "stdout not empty"; return 1; }
    [ "$(wc -l <"$T/err")" -eq 1 ] || { echo "stderr: $(cat "$T/err")"; return 1; }
    grep -q "^--strict-memory: policy 'fsdp' at batch 2 needs an estimated 126\.[0-9] GiB a GPU, above the h100's 80 GiB; expected batch 1 " \
        "$T/err" || { echo "message: $(cat "$T/err")"; return 1; }
    [ "$(cat "$T/keep.json")" = sentinel ] || { echo "output written"; return 1; }
    "$A" run "$FIT" --strict-memory >/dev/null 2>"$T/err" || { echo "a fitting run refused: $(cat "$T/err")"; return 1; }
}

# when no batch fits, the hint names a change that fits, and it does: DDP's replicas (checkpointed already)
# fit at no batch; the hint's overlap: fsdp at batch 1 runs at the estimate it names, under the 80 GiB
strict_hint_fits() {
    local rc=0 want got
    "$A" run "$T/big.yaml" --strict-memory --set 'policies=[{name: d, overlap: ddp, checkpoint: full}]' \
        >/dev/null 2>"$T/err" || rc=$?
    [ "$rc" -eq 2 ] || { echo "exit $rc, expected 2"; return 1; }
    want=$(sed -n 's/.*; expected overlap: fsdp (\([0-9.]*\) GiB at batch 1)$/\1/p' "$T/err")
    [ -n "$want" ] || { echo "message: $(cat "$T/err")"; return 1; }
    "$A" run "$T/big.yaml" --strict-memory --set batch=1 --set 'policies=[{name: d, overlap: fsdp, checkpoint: full}]' \
        >"$T/table" 2>"$T/err" || { echo "the hint refused: $(cat "$T/err")"; return 1; }
    got=$(awk '$2 == "d" { print $NF }' "$T/table")
    [ "$got" = "$want" ] || { echo "hint $want GiB, run $got GiB"; return 1; }
}

# the trace of an fsdp2 iteration: well-formed spans (ts, dur >= 0), one iteration's collectives (33 wrapping
# units: 33 reduce-scatters), and of the iteration before only what this forward waits on (the all-gathers
# issued after its update, still running when the iteration starts): no collective ends before the compute
# track's first task starts (once the whole iteration before's collectives were there, with no compute);
# collectives that run at once on lanes of their own (once they overlapped on one thread)
trace_one_iteration() {
    "$A" run "$FIT" --trace "$T/tr.json" >/dev/null 2>"$T/err" || { echo "exit $?: $(cat "$T/err")"; return 1; }
    flat "$T/tr.json" >"$T/tr.flat" || { echo "invalid JSON"; return 1; }
    awk -F'\t' '
        match($1, /^\.traceEvents\[[0-9]+\]\./) { i = substr($1, 14, RLENGTH - 15); k = substr($1, RLENGTH + 1); v[i, k] = $2
                                                   if (i + 0 > n) n = i + 0 }
        END {
            k0 = -1
            for (i = 0; i <= n; i++)
                if (v[i, "ph"] == "X" && v[i, "pid"] == 0 && v[i, "tid"] == 0 && (k0 < 0 || v[i, "ts"] < k0)) k0 = v[i, "ts"]
            for (i = 0; i <= n; i++) {
                if (v[i, "ph"] != "X" || v[i, "pid"] != 0) continue
                if (v[i, "ts"] < 0 || v[i, "dur"] < 0) { print "span " v[i, "name"] " at " v[i, "ts"] " for " v[i, "dur"]; bad = 1 }
                if (v[i, "tid"] < 1) continue
                c[++nc] = i
                rs += v[i, "name"] ~ / rs$/
                before += v[i, "ts"] < k0
                if (v[i, "ts"] + v[i, "dur"] < k0 - 1e-3) { print v[i, "name"] " ended before the iteration"; bad = 1 }
            }
            # fsdp2 runs all-gathers and reduce-scatters at once: a viewer nests the slices of one thread, so
            # collectives that overlap are on lanes (tids) of their own, none overlapping another in its lane
            for (a = 1; a <= nc; a++)
                for (b = a + 1; b <= nc; b++) {
                    i = c[a]; j = c[b]
                    if (v[i, "tid"] == v[j, "tid"] && v[i, "ts"] < v[j, "ts"] + v[j, "dur"] - 1e-3 &&
                        v[j, "ts"] < v[i, "ts"] + v[i, "dur"] - 1e-3) { print v[i, "name"] " overlaps " v[j, "name"]; bad = 1 }
                    lanes[v[i, "tid"]]
                }
            nl = 0; for (l in lanes) nl++
            if (nl < 2) { print "one communication lane for two streams"; bad = 1 }
            if (rs != 33) { print rs " reduce-scatters, expected 33"; bad = 1 }
            if (before < 1) { print "no all-gather of the iteration before"; bad = 1 }
            exit bad
        }' "$T/tr.flat"
}

knobs_lines() {
    command -v gnuplot >/dev/null || return 0
    "$A" sweep configs/sweep-fsdp-knobs.yaml --out "$T/knobs" --jobs 1 >/dev/null 2>"$T/err" ||
        { echo "sweep exit $?: $(cat "$T/err")"; return 1; }
    "$A" plot "$T/knobs/results.jsonl" --out "$T/kp" >/dev/null 2>"$T/err" ||
        { echo "plot exit $?: $(cat "$T/err")"; return 1; }
    # ddp once, then fsdp per backward_prefetch x wrap: 1 + 3 x 2 lines, each with both batches
    local n
    n=$(grep -c '^"' "$T/kp/iteration_vs_batch.dat")
    [ "$n" = 7 ] || { echo "$n lines, expected 7"; return 1; }
    grep -qx '"fsdp (fsdp, ring) backward_prefetch=none wrap={min_params:300000000}"' "$T/kp/iteration_vs_batch.dat" ||
        { echo "no line labelled with its axis values"; return 1; }
    n=$(grep -c ' b=1"' "$T/kp/breakdown.dat")
    [ "$n" = 7 ] || { echo "$n bars at batch 1, expected 7"; return 1; }
}

# two dimensions besides the policy axes: the heat map's runner-up is
# another line, not DDP's copy from another scenario (which read as a tie)
knobs_best() {
    command -v gnuplot >/dev/null || return 0
    "$A" sweep configs/sweep-fsdp-knobs.yaml --out "$T/kb" --jobs 1 --set 'sweep.cluster.nodes=[2,4]' >/dev/null \
        2>"$T/err" || { echo "sweep exit $?: $(cat "$T/err")"; return 1; }
    "$A" plot "$T/kb/results.jsonl" --out "$T/kbp" >/dev/null 2>"$T/err" || { echo "plot exit $?: $(cat "$T/err")"; return 1; }
    [ "$(grep -c '"ddp" "+[0-9.]*%"$' "$T/kbp/best_policy.dat")" = 4 ] ||
        { echo "cells: $(grep -v '^#' "$T/kbp/best_policy.dat" | tr '\n' ';')"; return 1; }
}

models_memory() {
    command -v gnuplot >/dev/null || return 0
    "$A" sweep configs/sweep-fsdp-models.yaml --out "$T/models" --jobs 1 >/dev/null 2>"$T/err" ||
        { echo "sweep exit $?: $(cat "$T/err")"; return 1; }
    "$A" plot "$T/models/results.jsonl" --out "$T/mp" >/dev/null 2>"$T/err" ||
        { echo "plot exit $?: $(cat "$T/err")"; return 1; }
    # memory-01/02 against GPUs per model, 03/04 against the model at 16 and 128 GPUs
    local f
    for f in memory-01 memory-02 memory-03 memory-04; do
        [ -s "$T/mp/$f.png" ] && [ -s "$T/mp/$f.svg" ] || { echo "no $f image"; return 1; }
    done
    # 128 GPUs: 70B (x = 1) fits full_shard and fsdp2 only; DDP never fits
    awk '/^"/ { p = $0; next } NF == 5 && $1 == 1 { print p, $5 }' "$T/mp/memory-04.dat" >"$T/over"
    [ "$(tr '\n' ';' <"$T/over")" = '"ddp (ddp, hierarchical)" 1;"full_shard (fsdp, ring)" 0;"shard_grad_op (fsdp, ring)" 1;"hybrid_shard (fsdp, ring)" 1;"fsdp2 (fsdp2, ring)" 0;' ] ||
        { echo "fits: $(tr '\n' ';' <"$T/over")"; return 1; }
}

# fsdp2's reshard_after_forward: N equal to the shard group re-shards to all of it, as true does (the
# world under full_shard, the node under hybrid_shard), and N = 1 keeps a whole copy, as false does: the
# same row, time, bytes and memory, to the last digit (hybrid's N = node once held a second 1/N copy)
cat >"$T/rg.yaml" <<'YAML'
model: llama3-8b
precision: bf16
gpus_file: gpus-llm
gpu: h100
batch: [1]
cluster: {topology: fat-tree, nodes: 2, gpus_per_node: 4, link: {bandwidth: 400Gbps, latency: 2us}}
iterations: {warmup: 1, measured: 1}
policies:
  - {name: re-true, overlap: fsdp2}
  - {name: world, overlap: fsdp2, reshard_after_forward: 8}
  - {name: re-false, overlap: fsdp2, reshard_after_forward: false}
  - {name: one, overlap: fsdp2, reshard_after_forward: 1}
  - {name: hybrid, overlap: fsdp2, sharding: hybrid_shard}
  - {name: node, overlap: fsdp2, sharding: hybrid_shard, reshard_after_forward: 4}
YAML
reshard_group_sizes() {
    "$A" run "$T/rg.yaml" --csv "$T/rg.csv" >/dev/null 2>"$T/err" || { echo "exit $?: $(cat "$T/err")"; return 1; }
    # every field but the name (10th), row by row: true = world, false = one, hybrid = node
    awk -F, 'NR > 1 { $10 = ""; row[NR] = $0 }
             END { exit !(row[2] == row[3] && row[4] == row[5] && row[6] == row[7] && row[2] != row[4]) }' \
        "$T/rg.csv" || { echo "rows differ: $(cut -d, -f10,13,21,22 "$T/rg.csv" | tr '\n' ';')"; return 1; }
}

t fsdp-json json_fields
t fsdp-csv csv_fields
t fsdp-table-mark table_mark
t fsdp-strict-memory strict_refuses
t fsdp-strict-memory-hint strict_hint_fits
t fsdp-trace-one-iteration trace_one_iteration
t fsdp-sweep-knobs-lines knobs_lines
t fsdp-sweep-knobs-best knobs_best
t fsdp-sweep-models-memory models_memory
t fsdp2-reshard-group-sizes reshard_group_sizes
