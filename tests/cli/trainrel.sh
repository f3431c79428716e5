#!/bin/bash
# trainrel — a policy's `nccl: {release: R}` in training, against the
# other path (`arsim collective --algo nccl --nccl-release R`): ResNet-50
# DDP in 1 MiB buckets on one DGX H100, where the tuner picks NVLS/Simple
# for most buckets and the releases part (2.18 runs NVLS at about 1 MiB
# where 2.21 runs Ring/LL; NVLS's launch is 23 us in 2.18, 25 in 2.21):
#  - from the memo and live (comm.streams 2, the buckets one after
#    another on an idle network), each unit's duration, algorithm,
#    protocol and channels are the collective's of its size in the
#    policy's release; its row and the result say the release; the two
#    releases' choices differ on some unit;
#  - no release is 2.21 given: the same table, JSON and CSV byte for byte;
#  - collective --json and --csv carry nccl_release (2.21 by default);
#  - a sweep's axis policies.0.nccl.release runs each release.
A=${ARSIM:-./arsim}
source tests/clilib.bash
export T; T=$(mktemp -d); trap 'rm -rf "$T"' EXIT

# scenario FILE STREAMS — two policies, release "2.18" (a string) and 2.21 (a number)
scenario() {
    cat >"$1" <<EOF
model: resnet50
precision: fp16
batch: [64]
comm: {slowdown: 0, streams: $2}
cluster: {node: dgx-h100, nodes: 1}
iterations: {warmup: 1, measured: 1}
policies:
  - {name: r218, overlap: ddp, bucket: 1MiB, nccl: {release: "2.18"}}
  - {name: r221, overlap: ddp, bucket: 1MiB, nccl: {release: 2.21}}
EOF
}

# units FLAT I — "bytes algo proto channels release start end" per unit of result I
units() {
    awk -F'\t' -v r=".results[$2].layers[" '
        index($1, r) == 1 { rest = substr($1, length(r) + 1); i = rest + 0; k = substr(rest, index(rest, "].") + 2)
                            v[i, k] = $2; if (i + 1 > n) n = i + 1 }
        END { for (i = 0; i < n; i++)
            printf "%s %s %s %s %s %s %s\n", v[i, "bytes"], v[i, "nccl_algo"], v[i, "nccl_proto"], v[i, "channels"],
                   v[i, "nccl_release"], v[i, "start_s"], v[i, "end_s"] }' "$1"
}

# oracle NAME STREAMS — every unit of both releases against collective --nccl-release
oracle() {
    scenario "$T/$1.yaml" "$2"
    "$A" run "$T/$1.yaml" --layers --json "$T/$1.json" >/dev/null || return 1
    flat "$T/$1.json" >"$T/$1.flat"
    local i r n bytes algo proto ch rel s e prev=0 got
    for i in 0 1; do
        r=$([ $i = 0 ] && echo 2.18 || echo 2.21)
        grep -qxF ".results[$i].nccl_release	$r" "$T/$1.flat" || { echo "result $i has no nccl_release $r"; return 1; }
        units "$T/$1.flat" $i >"$T/$1-$i.txt"
        n=0 prev=0
        while read -r bytes algo proto ch rel s e; do
            [ "$rel" = "$r" ] || { echo "unit of $bytes B: release '$rel', want $r"; return 1; }
            awk -v s="$s" -v p="$prev" 'BEGIN { exit !(s >= p) }' || { echo "units overlap at $s s"; return 1; }
            prev=$e
            "$A" collective --node dgx-h100 --algo nccl --nccl-release "$r" --size "$bytes" --json - >"$T/c.json" ||
                return 1
            flat "$T/c.json" >"$T/c.flat"
            got=$(awk -F'\t' '$1 == "[0].time_s" { print $2 }' "$T/c.flat")
            near "$(awk -v s="$s" -v e="$e" 'BEGIN { printf "%.12g", e - s }')" "$got" 1e-9 ||
                { echo "$r, $bytes B: unit $s .. $e s, collective $got s"; return 1; }
            for kv in "nccl_algo	$algo" "nccl_proto	$proto" "channels	$ch" "nccl_release	$r"; do
                grep -qxF "[0].$kv" "$T/c.flat" || { echo "$r, $bytes B: unit's $kv, collective's differs"; return 1; }
            done
            n=$((n + 1))
        done <"$T/$1-$i.txt"
        [ "$n" -ge 20 ] || { echo "$n units in release $r"; return 1; }
    done
    [ "$(awk '$2 == "NVLS"' "$T/$1-0.txt" | wc -l)" -ge 10 ] || { echo "2.18 runs NVLS on few units"; return 1; }
    paste -d' ' "$T/$1-0.txt" "$T/$1-1.txt" | awk '$1 != $8 { bad = 1 } $2 == "NVLS" && $9 == "Ring" { d++ }
        END { exit bad || d < 3 }' || { echo "the releases' units do not part (NVLS in 2.18, Ring in 2.21)"; return 1; }
}
t "memo: each unit = collective --nccl-release (2.18, 2.21), rows carry it" oracle memo 1
t "live (comm.streams 2): each unit = collective --nccl-release" oracle live 2

default_221() {
    local base='model: resnet50
precision: fp16
batch: [64]
comm: {slowdown: 0}
cluster: {node: dgx-h100, nodes: 1}
iterations: {warmup: 1, measured: 1}
policies:'
    printf '%s\n  - {name: d, overlap: ddp, bucket: 1MiB}\n' "$base" >"$T/d.yaml"
    printf '%s\n  - {name: d, overlap: ddp, bucket: 1MiB, nccl: {release: "2.21"}}\n' "$base" >"$T/e.yaml"
    "$A" run "$T/d.yaml" --layers --json "$T/d.json" --csv "$T/d.csv" >"$T/d.txt" &&
        "$A" run "$T/e.yaml" --layers --json "$T/e.json" --csv "$T/e.csv" >"$T/e.txt" || return 1
    sed -i "s|$T/[de]\.yaml||" "$T/d.json" "$T/e.json"   # the scenario's file name
    for x in txt json csv; do
        cmp -s "$T/d.$x" "$T/e.$x" || { echo "$x differs"; diff "$T/d.$x" "$T/e.$x" | head -5; return 1; }
    done
    grep -q '"nccl_release":	"2.21"' "$T/d.json" && head -1 "$T/d.csv" | grep -q ',nccl_release,node,cluster$' &&
        [ "$(tail -1 "$T/d.csv" | sed 's/,[^,]*,"[^"]*"$//' | awk -F, '{ print $NF }')" = 2.21 ] || { echo "no 2.21 in the default's rows"; return 1; }
}
t "no release is 2.21 given, byte for byte (table, JSON, CSV)" default_221

coll_rows() {
    "$A" collective --node dgx-h100 --algo nccl --size 1MiB --json "$T/c1.json" --csv "$T/c1.csv" >/dev/null &&
        "$A" collective --node dgx-h100 --algo nccl --nccl-release 2.18 --size 1MiB --json "$T/c2.json" \
            --csv "$T/c2.csv" >/dev/null || return 1
    grep -q '"nccl_release":	"2.21"' "$T/c1.json" && grep -q '"nccl_release":	"2.18"' "$T/c2.json" ||
        { echo "JSON's nccl_release"; return 1; }
    head -1 "$T/c1.csv" | grep -q ',tuner_busbw_Bps,nccl_release$' || { echo "CSV header"; return 1; }
    [ "$(sed -n 2p "$T/c1.csv" | awk -F, '{ print NF, $NF }')" = "20 2.21" ] &&
        [ "$(sed -n 2p "$T/c2.csv" | awk -F, '{ print NF, $NF }')" = "20 2.18" ] || { echo "CSV rows"; return 1; }
}
t "collective --json and --csv carry nccl_release" coll_rows

sweep_axis() {
    scenario "$T/s.yaml" 1
    printf 'sweep:\n  policies.0.nccl.release: [2.18, "2.20", 2.21]\n' >>"$T/s.yaml"
    "$A" sweep "$T/s.yaml" --out "$T/sw" >/dev/null 2>&1 || { echo "sweep failed"; return 1; }
    # each line's axis value and its first result's (r218's) nccl_release
    sed -E 's/.*"axes":\{"policies\.0\.nccl\.release":"?([0-9.]+)"?\}.*"policy":"r218"[^}]*"nccl_release":"([0-9.]+)".*/\1 \2/' \
        "$T/sw/results.jsonl" | sort >"$T/sw.txt"
    printf '2.18 2.18\n2.20 2.20\n2.21 2.21\n' | cmp -s - "$T/sw.txt" || { echo "runs: $(cat "$T/sw.txt")"; return 1; }
}
t "sweep axis policies.0.nccl.release runs each release" sweep_axis
