#!/bin/bash
# run.sh — the real-PyTorch loop of `make validate-torch`: VGG-16 at half
# width trained with PyTorch + gloo on an emulated cluster, against arsim's
# prediction of the same training.
#   1. validate/cluster.sh up 4 --rate RATE (root: network namespaces);
#   2. validate/torch/trainer.py on every host, one rank each, stages
#        bench        gloo ping-pong, reduce, all-reduce (arsim's schedules
#                     and gloo's own) -> meas.json, gloo-allreduce.json
#        profile      forward + backward + update on all ranks at once, a
#                     torch.profiler trace from rank 0 -> profile.trace.json
#        interference compute alone and under all-reduces -> interference.json
#        train        every policy of the scenario for real -> iterations.json
#      then the cluster goes down (EXIT trap, whatever happens);
#   3. arsim calibrate meas.json --fit ring: α and β from gloo's own
#      all-reduces (gloo's per-step cost is not the ping-pong's α; the
#      ping-pong stays in meas.json for the record); γ from reduce;
#   4. arsim import-profile profile.trace.json -> the measured model file;
#   5. arsim run the scenario with the calibration, the measured model, the
#      measured update rate, comm.interference and comm.slowdown (the
#      median compute and all-reduce slow-downs of interference.json's gloo
#      rows) -> pred.json;
#   6. compare.py: measured against predicted per policy, rankings,
#      speed-ups of layer + hybrid over none and over DDP, the targets.
#
#   validate/torch/run.sh [--short] [--local N] [--out DIR] [--rate RATE]
#       [--batch B] [--policies LIST] [--prefix P] [--net A.B.C]
#       [--threads N] [--arsim PATH] [--python PATH]
#   validate/torch/run.sh ... --measure-only --out DIR   (steps 1-2 only)
#   validate/torch/run.sh --predict DIR                   (steps 3-6 on DIR)
#
# --short: 5 policies, fewer sizes and iterations (about 2 minutes).
# Why 700mbit at batch 32: forward + backward + update of the half-width VGG
# take about 0.6-0.7 s per rank with 4 ranks on this machine's 2 cores (one
# thread each), and a ring all-reduce of its 33.7 MB of gradients moves
# 2 x 3/4 x 33.7 = 50.5 MB per rank, 0.60 s at 700 Mbit/s (669 Mbit/s of TCP
# goodput): communication and compute of the same order, so how much of one
# a policy hides under the other decides the ranking.
# --measure-only: the cluster and the trainer, no arsim (it need not be
#   built there): measure on the machine that has the cores, then
# --predict DIR: calibrate, import, predict and compare on what an earlier
#   --measure-only left in DIR (its run.env gives the batch), anywhere.
# --threads N: torch intra-op threads per rank (default 1).
# --local N: N ranks on this host over loopback, no cluster and no root (a
#   functional run: the times are this host's, not a network's).
# Exit status: 0 every target met, 3 only a target missed (the runs were
# right), 1 a failed step, 2 usage. Everything lands in DIR (default a new
# directory under $TMPDIR); `log` holds every rank's output.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
prog=run.sh
short=0
local_n=0
outdir=""
measure_only=0
predict_dir=""
threads=1
rate=700mbit
hosts=4
batch=32
policies=""
prefix=arstorch
net=10.213.6
arsim=$root/arsim
python=/usr/bin/python3
scenario=$here/vgg16-torch.yaml
model=$root/validate/vgg16-half-cifar10-model.yaml
gloo_policies=none-gloo,layer-gloo
short_policies=none-gloo,ddp,layer-ring,layer-hybrid,priority-ring
speedups=(layer-hybrid:none-gloo layer-hybrid:ddp)

usage() { sed -n '/^#   validate\/torch\/run.sh/,/(steps 3-6 on DIR)/p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
    case "$1" in
        --short) short=1; shift; continue ;;
        --measure-only) measure_only=1; shift; continue ;;
        -h|--help) usage; exit 0 ;;
    esac
    [ $# -ge 2 ] || { echo "$prog: $1: missing value or unknown option; see --help" >&2; exit 2; }
    case "$1" in
        --local) local_n=$2 ;;
        --out) outdir=$2 ;;
        --predict) predict_dir=$2 ;;
        --threads) threads=$2 ;;
        --rate) rate=$2 ;;
        --batch) batch=$2 ;;
        --policies) policies=$2 ;;
        --prefix) prefix=$2 ;;
        --net) net=$2 ;;
        --arsim) arsim=$2 ;;
        --python) python=$2 ;;
        *) echo "$prog: $1: unknown option; expected --short, --measure-only, --predict, --threads, --local, --out, --rate, --batch, --policies, --prefix, --net, --arsim or --python" >&2
           exit 2 ;;
    esac
    shift 2
done
[[ "$local_n" =~ ^[0-9]+$ ]] && { [ "$local_n" = 0 ] || [ "$local_n" -ge 2 ]; } ||
    { echo "$prog: --local: '$local_n' is not a rank count; expected an integer >= 2" >&2; exit 2; }
[[ "$batch" =~ ^[1-9][0-9]*$ ]] || { echo "$prog: --batch: '$batch' is not a batch size; expected an integer >= 1" >&2; exit 2; }
if [ -z "$policies" ]; then
    [ $short = 1 ] && policies=$short_policies
fi
[ "$local_n" = 0 ] || hosts=$local_n

[[ "$threads" =~ ^[1-9][0-9]*$ ]] || { echo "$prog: --threads: '$threads' is not a thread count; expected an integer >= 1" >&2; exit 2; }
if [ -n "$predict_dir" ]; then
    [ $measure_only = 0 ] || { echo "$prog: --predict and --measure-only exclude each other; expected one of them" >&2; exit 2; }
    [ -f "$predict_dir/run.env" ] || { echo "$prog: --predict: $predict_dir/run.env not found; expected the --out of a --measure-only run" >&2; exit 2; }
    batch=$(sed -n 's/^batch=\([1-9][0-9]*\)$/\1/p' "$predict_dir/run.env")
    [ -n "$batch" ] || { echo "$prog: --predict: $predict_dir/run.env:1:1: no batch=N line; expected the run.env --measure-only writes" >&2; exit 2; }
    outdir=$predict_dir
fi

# --- can it run here? ---------------------------------------------------------
[ $measure_only = 1 ] || [ -x "$arsim" ] || { echo "$prog: $arsim not found; build it with make" >&2; exit 1; }
if [ -z "$predict_dir" ]; then
    "$python" -c 'import torch, torchvision' 2>/dev/null ||
        { echo "$prog: $python has no torch/torchvision; run make deps-torch (python3-torch python3-torchvision)" >&2; exit 1; }
    if [ "$local_n" = 0 ]; then
        [ "$(id -u)" = 0 ] || { echo "$prog: the emulated cluster needs root (network namespaces); --local N runs without" >&2; exit 1; }
        unshare --net true 2>/dev/null || { echo "$prog: network namespaces are unavailable here; --local N runs without" >&2; exit 1; }
    fi
fi
[ $measure_only = 1 ] || "$arsim" check "$scenario" >/dev/null || exit 1

[ -n "$outdir" ] || outdir=$(mktemp -d "${TMPDIR:-/tmp}/arsim-torch.XXXXXX") || exit 1
mkdir -p "$outdir" || exit 1
outdir=$(cd "$outdir" && pwd)
log=$outdir/log
[ -n "$predict_dir" ] || : >"$log"
statedir=""
up=0
cleanup() {
    if [ $up = 1 ]; then
        "$root/validate/cluster.sh" down --prefix "$prefix" --state "$statedir" >>"$log" 2>&1 ||
            echo "$prog: teardown failed; see $statedir/state" >&2
    fi
    [ -z "$statedir" ] || rmdir "$statedir" 2>/dev/null
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
export LC_ALL=C
start=$(date +%s)

measured_model=$outdir/vgg16-half-cifar10-measured.yaml
sets=(--set "model=$measured_model" --set "gpus_file=$outdir/gpus-cpu.yaml" --set "batch=[$batch]")
limit=$([ $short = 1 ] && echo 300 || echo 1500)   # seconds a rank may run
targs=(--scenario "$scenario" --out "$outdir" --batch "$batch" --gloo "$gloo_policies" --timeout 300
       --set "model=$measured_model" --set "gpus_file=$outdir/gpus-cpu.yaml")
[ -z "$policies" ] || targs+=(--policies "$policies")
[ $short = 0 ] || targs+=(--short --iterations 2,4)
[ "$threads" = 1 ] || targs+=(--threads "$threads")

# launch N — every rank of the trainer, in its host's namespace on the
# cluster (gloo on the host's interface, rank 0's address as the store), or
# on loopback; waits for all and fails if any failed.
launch() {
    local n=$1 i port addr ifname pids=() rc=0
    if [ "$local_n" = 0 ]; then addr=$net.1; ifname=$prefix-eth; port=29500
    else addr=127.0.0.1; ifname=lo; port=$((20000 + RANDOM % 20000)); fi
    for ((i = 0; i < n; i++)); do
        local pre=() host=local-h$i
        if [ "$local_n" = 0 ]; then host=$prefix-h$i; pre=(ip netns exec "$host"); fi
        timeout -k 10 "$limit" "${pre[@]}" env RANK=$i WORLD_SIZE=$n MASTER_ADDR=$addr MASTER_PORT=$port GLOO_SOCKET_IFNAME=$ifname \
            ARSIM_HOST=$host MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=4294967296 \
            "$python" "$here/trainer.py" "${targs[@]}" >>"$log.$i" 2>&1 &
        pids+=($!)
    done
    for i in "${pids[@]}"; do wait "$i" || rc=1; done
    for ((i = 0; i < n; i++)); do cat "$log.$i" >>"$log"; rm -f "$log.$i"; done
    return $rc
}

if [ -z "$predict_dir" ]; then
    if [ "$local_n" = 0 ]; then
        statedir=$(mktemp -d "${TMPDIR:-/tmp}/arsim-torch-state.XXXXXX") || exit 1
        echo "== $hosts hosts at $rate (validate/cluster.sh), batch $batch per rank"
        "$root/validate/cluster.sh" up "$hosts" --rate "$rate" --prefix "$prefix" --net "$net" --state "$statedir" >>"$log" 2>&1 ||
            { echo "$prog: cluster.sh up failed; see $log" >&2; exit 1; }
        up=1
    else
        echo "== $hosts local ranks on loopback (no cluster), batch $batch per rank"
    fi
    launch "$hosts" || { echo "$prog: the trainer failed; see $log" >&2; tail -n 20 "$log" >&2; exit 1; }
    grep '^trainer: ' "$log" | sed 's/^trainer: /   /'
    if [ $up = 1 ]; then
        "$root/validate/cluster.sh" down --prefix "$prefix" --state "$statedir" >>"$log" 2>&1
        up=0
    fi
    printf 'batch=%s\nhosts=%s\nrate=%s\nthreads=%s\nshort=%s\nlocal=%s\n' "$batch" "$hosts" "$rate" "$threads" "$short" "$local_n" >"$outdir/run.env"
    if [ $measure_only = 1 ]; then
        echo "== measured in $(($(date +%s) - start)) s; predict with: validate/torch/run.sh --predict $outdir"
        exit 0
    fi
fi

# step NAME CMD... — runs an arsim step, its output in OUT/NAME.txt; fails with it.
step() {
    local name=$1
    shift
    "$@" >"$outdir/$name.txt" 2>&1 || { echo "$prog: $name failed:"; cat "$outdir/$name.txt"; exit 1; } >&2
}
echo "== arsim calibrate --fit ring (gloo's all-reduces; γ from reduce)"
step calibrate "$arsim" calibrate "$outdir/meas.json" --fit ring --out "$outdir/calib.yaml"
sed -n '3,5p' "$outdir/calibrate.txt"
step import "$arsim" import-profile "$outdir/profile.trace.json" --model "$model" --batch "$batch" --gpu v100 \
    --out "$measured_model"
# import-profile names a device of models/gpus.yaml only; the times are this
# CPU's (gpus-cpu.yaml), so the measured file says so.
sed -i -e 's/^measured: {batch: \([0-9]*\), gpu: "v100"/measured: {batch: \1, gpu: "cpu"/' \
    -e 's/^\(# fwd_ms\/bwd_ms: .* on \)v100 /\1cpu (gpus-cpu.yaml) /' "$measured_model"
head -n 1 "$outdir/import.txt"
# median FIELD — the median of FIELD over interference.json's gloo rows, at
# least 0: compute_slowdown is comm.interference (compute slows by it while
# a sync is in flight), comm_slowdown is comm.slowdown (a sync slows by it
# while compute runs)
median() {
    "$python" -c 'import json, statistics, sys
rows = [r[sys.argv[2]] for r in json.load(open(sys.argv[1]))["rows"] if r["impl"] == "gloo"]
print("%.4f" % max(0.0, statistics.median(rows)) if rows else "0")' "$outdir/interference.json" "$1" 2>/dev/null || echo 0
}
interf=$(median compute_slowdown)
cslow=$(median comm_slowdown)
step predict "$arsim" run "$scenario" "${sets[@]}" --set "cluster.calibration=$outdir/calib.yaml" \
    --set "comm.interference=$interf" --set "comm.slowdown=$cslow" --json "$outdir/pred.json" --layers
step gloo-compare "$arsim" compare "$outdir/gloo-allreduce.json" --calibration "$outdir/calib.yaml"
echo "== gloo's own all-reduce against arsim's ring (calibrated)"
grep -E '^ +[0-9]+ +allreduce' "$outdir/gloo-compare.txt" | head -n 8
echo "== interference: compute while an all-reduce runs (interference.json)"
grep '^trainer: interference' "$log" | sed 's/^trainer: interference: /   /'
echo "   predicted with comm.interference=$interf and comm.slowdown=$cslow (the median compute and all-reduce"
echo "   slow-downs under gloo)"
echo "== measured (PyTorch) against predicted (arsim)"
sp=()
grep -q '"policy": "layer-hybrid"' "$outdir/iterations.json" && sp+=(--units layer-hybrid)
for s in "${speedups[@]}"; do
    p=${s%%:*}; b=${s#*:}
    if grep -q "\"policy\": \"$p\"" "$outdir/iterations.json" && grep -q "\"policy\": \"$b\"" "$outdir/iterations.json"; then
        sp+=(--speedup "$s")
    fi
done
"$python" "$here/compare.py" "$outdir/pred.json" "$outdir/iterations.json" "${sp[@]}" --json "$outdir/compare.json"
rc=$?
echo "== $(($(date +%s) - start)) s; results in $outdir"
[ $rc -eq 2 ] && exit 1
exit $rc
