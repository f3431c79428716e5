#!/bin/bash
# nccltrain — training on GPU nodes through NCCL, from the command line:
# configs/resnet50-dgx-h100.yaml (16 x DGX H100) runs; each NCCL unit of
# its JSON takes what `arsim collective --algo nccl` reports for the same
# size on the same cluster and carries the same choice (an oracle from the
# other path), forced or the tuner's; a policy without an algorithm and
# `algorithm: nccl` give the same rows; with comm.streams 2 the default
# still goes through NCCL (its calls live) and gives algorithm: nccl's
# rows; fsdp2 (calls live) runs NCCL and its JSON says what; the same
# output twice.
A=${ARSIM:-./arsim}
source tests/clilib.bash
export T; T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
CFG=configs/resnet50-dgx-h100.yaml

runs() {
    "$A" check "$CFG" >/dev/null || return 1
    "$A" run "$CFG" --set 'batch=[64]' --layers --json "$T/r.json" --csv "$T/r.csv" >"$T/r.txt" || return 1
    [ "$(($(wc -l <"$T/r.csv") - 1))" = 6 ] || { echo "$(wc -l <"$T/r.csv") CSV lines, want 7"; return 1; }
    flat "$T/r.json" >"$T/r.flat"
}
t "resnet50-dgx-h100 runs" runs

# units POLICY — "bytes algo proto channels duration" per unit of POLICY
units() {
    local r
    r=$(awk -F'\t' -v p="$1" '$2 == p && $1 ~ /^\.results\[[0-9]+\]\.policy$/ { print substr($1, 1, length($1) - 7) }' \
        "$T/r.flat")
    [ -n "$r" ] || return 1
    awk -F'\t' -v r="$r.layers[" '
        index($1, r) == 1 { rest = substr($1, length(r) + 1); i = rest + 0; k = substr(rest, index(rest, "].") + 2)
                            v[i, k] = $2; if (i + 1 > n) n = i + 1 }
        END { for (i = 0; i < n; i++)
            printf "%s %s %s %s %.12f\n", v[i, "bytes"], v[i, "nccl_algo"], v[i, "nccl_proto"], v[i, "channels"],
                   v[i, "end_s"] - v[i, "start_s"] }' "$T/r.flat"
}

# oracle POLICY [COLLECTIVE ARGS] — each unit against collective --algo nccl
oracle() {
    local p=$1 n=0 bytes algo proto ch dur got
    shift
    units "$p" >"$T/u.txt"
    while read -r bytes algo proto ch dur; do
        [ "$algo" != "" ] || { echo "unit of $bytes B has no nccl_algo"; return 1; }
        "$A" collective --node dgx-h100 --nodes 16 --algo nccl "$@" --size "$bytes" --json - >"$T/c.json" || return 1
        flat "$T/c.json" >"$T/c.flat"
        got=$(awk -F'\t' '$1 == "[0].time_s" { print $2 }' "$T/c.flat")
        near "$dur" "$got" 1e-9 || { echo "$bytes B: unit $dur s, collective $got s"; return 1; }
        for kv in "nccl_algo	$algo" "nccl_proto	$proto" "channels	$ch"; do
            grep -qxF "[0].$kv" "$T/c.flat" || { echo "$bytes B: unit's $kv, collective's differs"; return 1; }
        done
        n=$((n + 1))
    done <"$T/u.txt"
    [ "$n" -ge 3 ] || { echo "$n units"; return 1; }
}
t "ddp unit = collective --algo nccl (tuner)" oracle ddp-nccl
t "forced ring unit = collective --nccl-algo ring" oracle ddp-nccl-ring --nccl-algo ring
forced_ring() {
    units ddp-nccl-ring >"$T/f.txt" || return 1
    [ "$(wc -l <"$T/f.txt")" = 3 ] && [ "$(awk '$2 == "Ring"' "$T/f.txt" | wc -l)" = 3 ] || { cat "$T/f.txt"; return 1; }
}
t "nccl: {algo: ring} runs Ring" forced_ring

same_default() {
    { sed -n '/^model:/,/^cluster:/p' "$CFG"
      printf 'policies:\n  - {name: a, overlap: layer}\n  - {name: b, overlap: layer, algorithm: nccl}\n'; } >"$T/t.yaml"
    "$A" run "$T/t.yaml" --set 'batch=[64]' --layers --csv "$T/t.csv" >"$T/t.txt" || return 1
    [ "$(sed 1d "$T/t.csv" | sed 's/,[ab],/,P,/' | sort -u | wc -l)" = 1 ] || { echo "rows differ:"; cat "$T/t.csv"; return 1; }
    # the per-unit rows of both policies, names aside, are the same lines
    awk '/^ +64 a /{p = "a"; next} /^ +64 b /{p = "b"; next} p { print > (ENVIRON["T"] "/" p ".units") }' "$T/t.txt"
    cmp -s "$T/a.units" "$T/b.units" && [ "$(grep -c ' nccl ' "$T/a.units")" -gt 100 ]
}
t "default on GPU nodes = algorithm: nccl" same_default

# live_default — with comm.streams 2 (collectives live on the network) the
# default on nodes is still NCCL, its calls run live: the same rows as
# algorithm: nccl there, with the NCCL columns filled
live_default() {
    { sed -n '/^model:/,/^cluster:/p' "$CFG"
      printf 'comm: {streams: 2}\npolicies:\n  - {name: a, overlap: ddp}\n  - {name: b, overlap: ddp, algorithm: nccl}\n'; } >"$T/l.yaml"
    "$A" run "$T/l.yaml" --set 'batch=[64]' --csv "$T/l.csv" >/dev/null || return 1
    head -1 "$T/l.csv" | grep -q nccl_algo || { echo "no NCCL columns with live streams: $(head -1 "$T/l.csv")"; return 1; }
    [ "$(sed 1d "$T/l.csv" | grep -cE ',nccl,.*,(Ring|Tree|NVLS|NVLSTree)[^,]*,(LL|LL128|Simple)[^,]*,[0-9]+,')" = 2 ] ||
        { cat "$T/l.csv"; return 1; }
    [ "$(sed 1d "$T/l.csv" | sed 's/,[ab],/,P,/' | sort -u | wc -l)" = 1 ] || { cat "$T/l.csv"; return 1; }
}
t "comm.streams 2 on nodes: default = NCCL, live" live_default

# fsdp2_nccl — fsdp2 (a stream per collective: its calls live) on 2 x
# dgx-h100 goes through NCCL: the result and every unit of its JSON carry
# nccl_algo, nccl_proto and channels
fsdp2_nccl() {
    printf 'model: gpt2\nbatch: [1]\ncluster: {node: dgx-h100, nodes: 2}\niterations: {warmup: 1, measured: 1}\npolicies:\n  - {name: f2, overlap: fsdp2}\n' >"$T/f2.yaml"
    "$A" run "$T/f2.yaml" --layers --json "$T/f2.json" >/dev/null || return 1
    flat "$T/f2.json" >"$T/f2.flat" || return 1
    awk -F'\t' '
        $1 == ".results[0].algorithm" { ra = $2 } $1 == ".results[0].nccl_algo" { rn = $2 }
        $1 == ".results[0].nccl_proto" { rp = $2 }
        match($1, /^\.results\[0\]\.layers\[[0-9]+\]\./) {
            u = substr($1, 1, RLENGTH); k = substr($1, RLENGTH + 1); seen[u] = 1
            if (k == "algorithm" && $2 == "nccl") ok[u]++
            if (k == "nccl_algo" && $2 ~ /^(Ring|Tree|NVLS|NVLSTree)$/) ok[u]++
            if (k == "nccl_proto" && $2 ~ /^(LL|LL128|Simple)$/) ok[u]++
            if (k == "channels" && $2 + 0 >= 1) ok[u]++
        }
        END {
            if (ra != "nccl" || rn == "" || rp == "") { print "result: " ra " " rn " " rp; exit 1 }
            for (u in seen) { n++; if (ok[u] != 4) { print u " lacks its NCCL fields"; exit 1 } }
            if (n == 0) { print "no units"; exit 1 }
        }' "$T/f2.flat"
}
t "fsdp2 on dgx-h100 runs NCCL (live), its rows carry nccl_algo and nccl_proto" fsdp2_nccl

twice() {
    "$A" run "$CFG" --set 'batch=[64]' --layers --json "$T/r2.json" >"$T/r2.txt" || return 1
    cmp -s "$T/r.txt" "$T/r2.txt" && cmp -s <(grep -v wall_s "$T/r.json") <(grep -v wall_s "$T/r2.json")
}
t "same output twice" twice
