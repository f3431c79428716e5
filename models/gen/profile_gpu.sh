#!/bin/bash
# profile_gpu.sh - profile the shipped models on one GPU with PyTorch, the
# measurement behind models/*-h100.yaml and docs/explanation/h100-measured.md's "Measured on an H100".
#
# Maintainer tool: needs a CUDA GPU and PyTorch (+ torchvision; transformers
# for bert-base-384 and gpt2); not needed to build or test arsim.
#
#   models/gen/profile_gpu.sh DIR [--quick] [--plain] [--only TAG,...]
#
# Writes into DIR (created):
#   MODEL-PREC-bB.trace.json.gz  one torch.profiler trace per profiled case
#                                (3 profiled steps after 5 warm-up steps);
#                                `arsim import-profile` reads it unzipped
#   timings.jsonl                one line per case: mean/min/max wall time of
#                                20 synchronized steps (profile_model.py --time)
#   env.txt                      GPU, driver, torch, cuDNN versions
# A case that fails (a missing package, out of memory) is logged and skipped;
# the others go on. --quick: the first two cases only. --plain: no traces;
# every case timed without the layer hooks and ranges (profile_model.py
# --no-ranges), into timings-plain.jsonl: the step as the user's script runs
# it, against which the ranged timings show what the instrumentation costs.
# --only TAG,...: only the cases so named (MODEL-PREC-bB, as the traces are:
# vgg16-tf32-b64), in the list's order; a tag not in the list is refused.
set -u
dir=${1:?usage: profile_gpu.sh DIR [--quick] [--plain] [--only TAG,...]}
shift
quick= plain=0 only=
while [ $# -gt 0 ]; do
    case $1 in
    --quick) quick=1 ;;
    --plain) plain=1 ;;
    --only)
        [ $# -ge 2 ] || { echo "profile_gpu.sh: --only: missing value; expected tags such as vgg16-tf32-b64" >&2; exit 2; }
        only=$2; shift ;;
    *) echo "profile_gpu.sh: unknown option '$1'; expected --quick, --plain or --only TAG,..." >&2; exit 2 ;;
    esac
    shift
done
here=$(cd "$(dirname "$0")" && pwd)
py=${PYTHON:-python3}

# model batch precision profiled(1)/timed only(0); most wanted first.
cases="vgg16 32 tf32 1
resnet50 128 tf32 1
vgg16 32 fp16 1
resnet50 256 fp16 1
bert-base-384 32 tf32 1
gpt2 8 tf32 1
vgg16 32 fp32 1
resnet50 128 fp32 1
vgg16-cifar10 128 tf32 1
alexnet 128 tf32 1
bert-base-384 32 fp16 1
gpt2 8 fp16 1
resnet50 32 tf32 0
resnet50 64 tf32 0
resnet50 256 tf32 0
vgg16 16 tf32 0
vgg16 64 tf32 0"
[ -n "$quick" ] && cases=$(echo "$cases" | head -2)
if [ -n "$only" ]; then
    all=$cases cases=
    for tag in ${only//,/ }; do
        c=$(echo "$all" | awk -v t="$tag" '$1 "-" $3 "-b" $2 == t')
        [ -n "$c" ] || { echo "profile_gpu.sh: --only: '$tag' is not a case; expected MODEL-PREC-bB of the list in this script, such as vgg16-tf32-b64" >&2; exit 2; }
        cases=${cases:+$cases
}$c
    done
fi
mkdir -p "$dir" || exit 1

{
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1
    $py -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda,
            "cudnn", torch.backends.cudnn.version(), torch.cuda.get_device_name())' 2>&1
    nproc
} >"$dir/env.txt"
cat "$dir/env.txt"
timings=$dir/timings.jsonl
[ "$plain" = 1 ] && timings=$dir/timings-plain.jsonl

# One interpreter for every case (importing torch costs seconds); a case
# that fails prints why and the next one runs.
echo "$cases" | "$py" -c '
import gc, os, subprocess, sys, traceback
sys.path.insert(0, sys.argv[1])
import profile_model, torch
out, plain = sys.argv[2], sys.argv[3] == "1"
for line in sys.stdin:
    model, batch, prec, prof = line.split()
    tag = "%s-%s-b%s" % (model, prec, batch)
    args = ["--model", model, "--batch", batch, "--precision", prec, "--warmup", "5", "--time", "20"]
    prof = "0" if plain else prof
    if plain:
        args.append("--no-ranges")
    elif prof == "1":
        args += ["--active", "3", "--out", os.path.join(out, tag + ".trace.json")]
    print("==", tag, file=sys.stderr, flush=True)
    try:
        profile_model.main(args)
        if prof == "1":
            subprocess.run(["gzip", "-6", "-f", os.path.join(out, tag + ".trace.json")], check=True)
    except BaseException:
        traceback.print_exc(limit=2)
        print("!! %s failed" % tag, file=sys.stderr, flush=True)
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
' "$here" "$dir" "$plain" >>"$timings"
cat "$timings"
