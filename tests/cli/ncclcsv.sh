#!/bin/bash
# ncclcsv — NCCL's columns in the CSV outputs, against the JSON of the
# same run (the other path), in a forced case:
#  - collective --csv: one header for every algorithm, 20 cells a line;
#    an NCCL row's nccl_algo, nccl_proto, channels, threads, time_s,
#    tuner_time_s and nccl_release are its JSON's, Ring/Simple as forced;
#    a point-to-point row leaves NCCL's cells empty;
#  - run --csv on GPU nodes: nccl_algo, nccl_proto, channels, nccl_time_s,
#    nccl_tuner_time_s and nccl_release appended (then node and cluster,
#    tests/cli/tracelive.sh); forced Ring/Simple on 4
#    channels; nccl_time_s is comm_s (every unit an NCCL call, no
#    slowdown); a point-to-point policy's cells empty; the JSON's keys
#    hold the same;
#  - run --csv elsewhere: no NCCL columns (the header as it was).
A=${ARSIM:-./arsim}
source tests/clilib.bash
export T; T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
FORCED=(--node dgx-h100 --nodes 2 --algo nccl --nccl-algo ring --nccl-proto simple --size 1MiB,64MiB)

# cell FILE ROW COLUMN — the cell of ROW (1: the first after the header) under header COLUMN
cell() {
    awk -F, -v r="$2" -v c="$3" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i; next }
        NR == r + 1 { if (k) print $k; else print "NO-COLUMN" }' "$1"
}

coll_csv() {
    "$A" collective "${FORCED[@]}" --csv "$T/c.csv" --json "$T/c.json" >/dev/null || return 1
    flat "$T/c.json" >"$T/c.flat"
    [ "$(wc -l <"$T/c.csv")" = 3 ] || { echo "$(wc -l <"$T/c.csv") lines"; return 1; }
    awk -F, 'NF != 20 { print "line " NR ": " NF " cells"; bad = 1 } END { exit bad }' "$T/c.csv" || return 1
    local row key want got
    for row in 1 2; do
        [ "$(cell "$T/c.csv" $row algorithm)" = nccl ] || return 1
        [ "$(cell "$T/c.csv" $row nccl_algo)" = Ring ] || { echo "row $row nccl_algo"; return 1; }
        [ "$(cell "$T/c.csv" $row nccl_proto)" = Simple ] || { echo "row $row nccl_proto"; return 1; }
        [ "$(cell "$T/c.csv" $row nccl_release)" = 2.21 ] || { echo "row $row nccl_release"; return 1; }
        [ -z "$(cell "$T/c.csv" $row skew_s)" ] || { echo "row $row skew_s not empty"; return 1; }
        for key in channels threads nodes bytes events; do
            want=$(awk -F'\t' -v k="[$((row - 1))].$key" '$1 == k { print $2 }' "$T/c.flat")
            got=$(cell "$T/c.csv" $row $key)
            [ -n "$want" ] && [ "$got" = "$want" ] || { echo "row $row $key: csv '$got', json '$want'"; return 1; }
        done
        for key in time_s tuner_time_s busbw_Bps tuner_busbw_Bps; do
            want=$(awk -F'\t' -v k="[$((row - 1))].$key" '$1 == k { print $2 }' "$T/c.flat")
            got=$(cell "$T/c.csv" $row $key)
            near "$got" "$want" 1e-12 || { echo "row $row $key: csv '$got', json '$want'"; return 1; }
        done
    done
    [ "$(cell "$T/c.csv" 1 channels)" -ge 1 ] || return 1
}
t "collective --csv: NCCL's columns are its JSON's (forced Ring/Simple)" coll_csv

coll_p2p() {
    "$A" collective --ranks 8 --algo ring --size 1KB,1MB --csv - >"$T/p.csv" || return 1
    head -1 "$T/p.csv" | cmp -s - <(head -1 "$T/c.csv") || { echo "headers differ"; return 1; }
    awk -F, 'NF != 20 { bad = 1 } END { exit bad }' "$T/p.csv" || { echo "not 20 cells"; return 1; }
    local c
    for c in op nodes nccl_algo nccl_proto channels threads tuner_time_s tuner_busbw_Bps nccl_release; do
        [ -z "$(cell "$T/p.csv" 1 $c)" ] || { echo "$c not empty"; return 1; }
    done
    [ "$(cell "$T/p.csv" 2 algorithm)" = ring ] && [ "$(cell "$T/p.csv" 2 bytes)" = 1000000 ]
}
t "collective --csv: a point-to-point row leaves NCCL's cells empty" coll_p2p

run_csv() {
    cat >"$T/s.yaml" <<'EOF'
model: resnet50
precision: fp16
batch: [64]
comm: {slowdown: 0}
cluster: {node: dgx-h100, nodes: 2}
iterations: {warmup: 1, measured: 1}
policies:
  - {name: forced, overlap: ddp, bucket: 25MiB, nccl: {algo: ring, proto: simple, channels: 4}}
  - {name: p2p, overlap: ddp, bucket: 25MiB, algorithm: ring}
EOF
    "$A" run "$T/s.yaml" --csv "$T/r.csv" --json "$T/r.json" >/dev/null || return 1
    flat "$T/r.json" >"$T/r.flat"
    head -1 "$T/r.csv" | grep -q ',comm_bytes,memory_peak_bytes,nccl_algo,nccl_proto,channels,nccl_time_s,nccl_tuner_time_s,nccl_release,node,cluster$' ||
        { head -1 "$T/r.csv"; return 1; }
    [ "$(cell "$T/r.csv" 1 nccl_algo)" = Ring ] && [ "$(cell "$T/r.csv" 1 nccl_proto)" = Simple ] &&
        [ "$(cell "$T/r.csv" 1 channels)" = 4 ] || { sed -n 2p "$T/r.csv"; return 1; }
    near "$(cell "$T/r.csv" 1 nccl_time_s)" "$(cell "$T/r.csv" 1 comm_s)" 1e-9 || { echo "nccl_time_s != comm_s"; return 1; }
    local tu; tu=$(cell "$T/r.csv" 1 nccl_tuner_time_s)
    awk -v x="$tu" 'BEGIN { exit !(x > 0) }' || { echo "tuner time '$tu'"; return 1; }
    local k j
    for k in nccl_algo nccl_proto channels nccl_time_s nccl_tuner_time_s nccl_release; do
        [ -z "$(cell "$T/r.csv" 2 $k)" ] || { echo "p2p $k not empty"; return 1; }
        grep -q "^\.results\[1\]\.$k	" "$T/r.flat" && { echo "p2p JSON has $k"; return 1; }
        j=$(awk -F'\t' -v p=".results[0].$k" '$1 == p { print $2 }' "$T/r.flat" | tr -d '"')
        case $k in
        nccl_algo | nccl_proto | nccl_release) [ "$j" = "$(cell "$T/r.csv" 1 $k)" ] ;;
        *) [ -n "$j" ] && near "$j" "$(cell "$T/r.csv" 1 $k)" 1e-12 ;;
        esac || { echo "JSON's $k '$j' differs from the CSV's"; return 1; }
    done
    # 28 cells, then node and the quoted cluster (its comma inside the quotes)
    awk -F, 'NR > 1 && !(sub(/,dgx-h100,"2 x dgx-h100, rail-optimized fat-tree"$/, "") && NF == 28) { bad = 1 }
        END { exit bad }' "$T/r.csv" || { echo "cells a line"; return 1; }
}
t "run --csv on GPU nodes: NCCL's columns appended, forced Ring/Simple/4" run_csv

run_plain() {
    "$A" run configs/default.yaml --set 'batch=[16]' --csv - >"$T/d.csv" || return 1
    head -1 "$T/d.csv" | grep -q 'nccl' && { echo "NCCL columns without NCCL"; return 1; }
    head -1 "$T/d.csv" | grep -q ',comm_bytes,memory_peak_bytes$'
}
t "run --csv elsewhere: no NCCL columns" run_plain
