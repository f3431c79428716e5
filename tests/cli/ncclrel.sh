#!/bin/bash
# ncclrel — arsim collective --nccl-release: NVLS's floor by release (the
# release's launch, 25 us in 2.21 and 23 through 2.20, plus 8 + 2 flags of
# 0.6 us and 4 NVLink hops of 0.5 us: 33 and 31 us), 2.21 the default row
# for row, 2.19 and 2.20 alike where a call fills whole loops, Ring the
# same in every release, and the published curves run with their own
# release (validate/nccl/published/: C1 2.18.5, C3 2.20.5).
A=${ARSIM:-./arsim}
source tests/clilib.bash
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT

# rows ARGS... — the table rows of an NCCL run on one 8 x H100 node.
rows() { "$A" collective --algo nccl --node dgx-h100 "$@" | awk '$1 ~ /^[0-9]+$/'; }

floor() {
    local r want lat got
    for r in 2.18 2.19 2.20 2.21; do
        case $r in 2.21) want=33.000 lat=25.000 ;; *) want=31.000 lat=23.000 ;; esac
        got=$(rows --nccl-algo nvls --nccl-release "$r" --size 1 | awk '$1 == 1 { print $7, $8 }')
        [ "$got" = "$want $lat" ] || { echo "release $r: time and tuner '$got', want '$want $lat'"; return 1; }
    done
}
t "NVLS floor by release: 33 us in 2.21, 31 through 2.20" floor

default_is_221() {
    rows --nccl-algo nvls --size 1,64KiB,1MiB >"$T/d" && rows --nccl-algo nvls --nccl-release 2.21 --size 1,64KiB,1MiB >"$T/e" &&
        cmp -s "$T/d" "$T/e"
}
t "no --nccl-release is 2.21, row for row" default_is_221

whole_loops() {
    rows --nccl-algo nvls --nccl-release 2.19 --size 2MiB,4MiB >"$T/a" &&
        rows --nccl-algo nvls --nccl-release 2.20 --size 2MiB,4MiB >"$T/b" || return 1
    cmp -s "$T/a" "$T/b" || { echo "2.19 and 2.20 differ on whole loops:"; cat "$T/a" "$T/b"; return 1; }
    rows --nccl-algo nvls --nccl-release 2.20 --size 64KiB >"$T/c" &&
        rows --nccl-algo nvls --nccl-release 2.19 --size 64KiB >"$T/g" || return 1
    awk 'NR == FNR { e = $7; next } { exit !($7 - e >= 3) }' "$T/c" "$T/g" ||
        { echo "2.19 at 64 KiB not 3 us above 2.20: $(cat "$T/c" "$T/g")"; return 1; }
}
t "2.19 and 2.20 alike on whole loops, 2.19 slower at 64 KiB" whole_loops

ring_same() {
    local r
    rows --nccl-algo ring --size 64KiB,16MiB >"$T/r" || return 1
    for r in 2.18 2.19 2.20; do
        rows --nccl-algo ring --nccl-release "$r" --size 64KiB,16MiB | cmp -s - "$T/r" || { echo "Ring moved with $r"; return 1; }
    done
}
t "Ring is the same in every release" ring_same

published() {
    grep -qx '# arsim: --node dgx-h100 --nccl-algo nvls --nccl-release 2.18' validate/nccl/published/azure-nd-h100-v5.txt ||
        { echo "C1 does not run 2.18"; return 1; }
    grep -qx '# arsim: --node dgx-h100 --nccl-algo nvls --nccl-release 2.20' validate/nccl/published/azure-nd-h200-v5.txt ||
        { echo "C3 does not run 2.20"; return 1; }
}
t "the published NVLS curves run with their release" published
