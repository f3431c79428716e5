#!/bin/bash
# smoke.sh — a short end-to-end check of the MPI harness, as root:
# brings up 4 emulated hosts at 1 Gbit/s (validate/cluster.sh), runs
# mpibench `all` (pingpong, reduce, and all-reduce with arsim's ring and
# butterfly schedules, 4 KiB to 4 MiB, every result checked on every rank)
# and one short `iteration` replay of validate/vgg16-small.yaml under
# layer-hybrid (ring and butterfly units run incrementally while compute
# is emulated; every unit checked) through mpirun, writes the measurements
# JSON, and always tears the hosts down again. Exit status: 0 all ran and
# every all-reduce result was right; 1 a wrong result, a failed or
# timed-out run, or a cluster failure; 2 usage.
#
#   validate/smoke.sh [--out FILE] [--prefix P] [--net A.B.C] [--mpibench PATH]
#                     [--hosts N] [--rate RATE] [--timeout SECONDS]
set -u
here=$(cd "$(dirname "$0")" && pwd)
prog=smoke.sh
out=${TMPDIR:-/tmp}/arsim-smoke-measurements.json
prefix=arsmoke
net=10.213.1
mpibench=$here/mpibench
hosts=4
rate=1gbit
limit=300
sizes=4KiB,64KiB,1MiB,4MiB
algos=ring,butterfly

while [ $# -gt 0 ]; do
    [ $# -ge 2 ] || { echo "$prog: $1: missing value; expected $1 VALUE" >&2; exit 2; }
    case "$1" in
        --out) out=$2 ;;
        --prefix) prefix=$2 ;;
        --net) net=$2 ;;
        --mpibench) mpibench=$2 ;;
        --hosts) hosts=$2 ;;
        --rate) rate=$2 ;;
        --timeout) limit=$2 ;;
        *) echo "$prog: $1: unknown option; expected --out, --prefix, --net, --mpibench, --hosts, --rate or --timeout" >&2
           exit 2 ;;
    esac
    shift 2
done
[[ "$limit" =~ ^[1-9][0-9]*$ ]] || { echo "$prog: --timeout: '$limit' is not a number of seconds; expected a positive integer" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "$prog: must run as root (network namespaces)" >&2; exit 2; }
[ -x "$mpibench" ] || { echo "$prog: $mpibench not found; build it with make validate-build" >&2; exit 2; }
case "$out" in /*) ;; *) out=$PWD/$out ;; esac
case "$mpibench" in /*) ;; *) mpibench=$PWD/$mpibench ;; esac
statedir=$(mktemp -d "${TMPDIR:-/tmp}/arsim-smoke.XXXXXX") || exit 1

cleanup() {
    "$here/cluster.sh" down --prefix "$prefix" --state "$statedir" >/dev/null || echo "$prog: teardown failed; see $statedir/state" >&2
    rmdir "$statedir" 2>/dev/null
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

start=$(date +%s)
"$here/cluster.sh" up "$hosts" --rate "$rate" --prefix "$prefix" --net "$net" --state "$statedir" || exit 1
rm -f -- "$out"
timeout -k 10 "$limit" "$statedir/mpirun" -np "$hosts" "$mpibench" all --algo "$algos" --sizes "$sizes" \
    --poll 20us --case-time 5s --timeout 60s --max-reps 20 --out "$out"
rc=$?
if [ $rc -eq 0 ] && [ "$hosts" = 4 ]; then
    iter=${out%.json}-iteration.json
    rm -f -- "$iter"
    timeout -k 10 "$limit" "$statedir/mpirun" -np "$hosts" "$mpibench" iteration \
        --config "$here/vgg16-small.yaml" --policy layer-hybrid --scale 0.2 --iterations 1,1 \
        --poll 20us --min-reps 1 --max-reps 1 --timeout 60s --out "$iter"
    rc=$?
    [ $rc -ne 0 ] || grep -q '"mode": "iteration".*"verified": true' "$iter" ||
        { echo "$prog: the iteration replay's results are wrong or missing in $iter" >&2; exit 1; }
fi
end=$(date +%s)
if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    echo "$prog: mpirun ran past $limit s and was stopped" >&2
    exit 1
fi
if [ $rc -ne 0 ]; then
    echo "$prog: mpibench failed (exit $rc)" >&2
    exit 1
fi
[ -f "$out" ] || { echo "$prog: no measurements file $out" >&2; exit 1; }
nsizes=$(echo "$sizes" | tr ',' '\n' | wc -l)
nalgos=$(echo "$algos" | tr ',' '\n' | wc -l)
good=$(grep -c '"mode": "allreduce".*"verified": true' "$out")
bad=$(grep -c '"verified": false' "$out")
if [ "$bad" -ne 0 ] || [ "$good" -ne $((nsizes * nalgos)) ]; then
    echo "$prog: $bad wrong all-reduce results, $good right of $((nsizes * nalgos)) expected" >&2
    exit 1
fi
echo "$prog: ok: $good all-reduce cases$([ "$hosts" = 4 ] && echo " and an iteration replay") verified on $hosts hosts in $((end - start)) s; measurements in $out"
