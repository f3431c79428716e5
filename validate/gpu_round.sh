#!/bin/bash
# gpu_round.sh — what one lent GPU machine (one GPU, 16 cores, minutes of
# time) measures for arsim in one go; every result lands in OUTDIR (default
# $OUT, else /tmp/gpu-round), raw, for the tables rebuilt elsewhere:
#   env.txt             the machine: GPU, cores, torch, iproute2, namespaces
#   llama_step.jsonl    validate/fsdp/llama_step.py: Llama 3 8B blocks at
#                       depth 2 and 4, SAC / none / full, FSDP2 on one GPU,
#                       with the allocator's expandable segments and, for
#                       SAC, without (iteration times, peaks per phase)
#   torch-runN.tgz      validate/torch/run.sh --short --measure-only, twice,
#                       on 4 emulated hosts with a core or more per rank
#                       (--local 4 where namespaces or tc are missing; the
#                       run.env inside says which); predicted afterwards
#                       with run.sh --predict on the unpacked folder
#   log.txt             everything printed
#
#   bash validate/gpu_round.sh [OUTDIR]
#
# MAINTAINER TOOL (needs a CUDA GPU and PyTorch >= 2.6); not part of the
# build or the tests.  Each part has its own time limit, so one that fails
# leaves the others' results.
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-${OUT:-/tmp/gpu-round}}
mkdir -p "$out" || exit 1
py=$(command -v python3)
log=$out/log.txt
exec > >(tee -a "$log") 2>&1
export PYTHONUNBUFFERED=1

echo "== env $(date -u +%FT%TZ)"
{
    nvidia-smi -L; nproc; uname -r
    "$py" -c 'import torch, torchvision; print("torch", torch.__version__, "torchvision", torchvision.__version__)'
    ip -V; tc -V
    unshare --net true && echo "netns: yes" || echo "netns: no"
} >"$out/env.txt" 2>&1
cat "$out/env.txt"

echo "== llama_step (FSDP2, one GPU)"
PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True timeout -k 5 150 "$py" "$here/fsdp/llama_step.py" \
    --layers 2,4 --ac selective,none,full --out "$out/llama_step.jsonl"
PYTORCH_CUDA_ALLOC_CONF= timeout -k 5 60 "$py" "$here/fsdp/llama_step.py" \
    --layers 2,4 --ac selective --out "$out/llama_step.jsonl"

mode=()
if ! unshare --net true 2>/dev/null || ! command -v tc >/dev/null; then
    mode=(--local 4)
    echo "== no namespaces or tc here: run.sh --local 4"
fi
for i in 1 2; do
    echo "== run.sh --short --measure-only, run $i"
    d=/tmp/torch-run$i
    rm -rf "$d"
    timeout -k 10 200 bash "$here/torch/run.sh" --short --measure-only "${mode[@]}" --python "$py" --out "$d"
    echo "rc $?"
    tar czf "$out/torch-run$i.tgz" -C "$d" . 2>/dev/null
done
echo "== done $(date -u +%FT%TZ)"
