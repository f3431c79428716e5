#!/bin/bash
# h200 — the H200 GPU (models/gpus.yaml's h200) and the DGX H200 node
# (topologies/nodes/dgx-h200.yaml): both listed with their datasheet
# figures; NCCL on dgx-h200 chooses and times exactly as on dgx-h100 (the
# same NVLink, NVSwitch, PCIe and NICs, the same architecture); a scenario
# on 2 x dgx-h200 runs; a step's compute on h200 against h100 differs only
# in the memory-bound terms, by the bandwidth ratio 3350 / 4800 (a closed
# form on a two-layer model; h200 keeps h100's compute figures and fits;
# shipped models against the roofline recomputed from the files).
A=${ARSIM:-./arsim}
source tests/clilib.bash
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT

listed() {
    "$A" list nodes | grep -qE '^dgx-h200 +h200 +8 +nvswitch +18 +450 +yes +8 +400$' || { "$A" list nodes; return 1; }
    "$A" list gpus | grep -qE '^h200 +NVIDIA H200 SXM 141GB +67\.0 +494\.7 +989\.0 +4800 +4\.0 +2\.16 +0\.189 +0\.170 +0\.170 +1\.000$' ||
        { "$A" list gpus; return 1; }
}
t "listed" listed

# the rows of `collective --json` without the cluster's name and description (they name the node and GPU)
rows() { "$A" collective --algo nccl --json - "$@" | grep -vE '"cluster(_built)?":'; }
same_nccl() {   # same_nccl ARGS... — dgx-h200 and dgx-h100 give the same rows
    rows --node dgx-h100 "$@" >"$T/h100.json" || return 1
    rows --node dgx-h200 "$@" >"$T/h200.json" || return 1
    grep -q '"nccl_algo":' "$T/h200.json" || { echo "no rows"; return 1; }
    diff "$T/h100.json" "$T/h200.json" >&2
}
t "nccl one node, tuner's choice" same_nccl --size 64KiB,16MiB,1GiB
t "nccl 2 nodes, tuner's choice" same_nccl --nodes 2 --size 1MiB,256MiB
t "nccl 4 nodes, ring forced" same_nccl --nodes 4 --nccl-algo ring --size 64MiB
t "nccl 2 nodes, reduce-scatter" same_nccl --nodes 2 --op reducescatter --size 64MiB

scenario() {   # 2 x dgx-h200, no overlap: it runs, and its communication is 2 x dgx-h100's
    printf 'name: s\nmodel: gpt2\nprecision: fp16\nbatch: [8]\ncluster: {node: %s, nodes: 2}\npolicies: [{name: p, overlap: none, algorithm: nccl}]\niterations: {warmup: 1, measured: 2}\n' \
        dgx-h200 >"$T/s200.yaml"
    sed 's/dgx-h200/dgx-h100/' "$T/s200.yaml" >"$T/s100.yaml"
    "$A" check "$T/s200.yaml" | grep -q "cluster: 2 x dgx-h200 " || { echo "check"; return 1; }
    "$A" run "$T/s200.yaml" --json "$T/r200.json" >/dev/null || return 1
    "$A" run "$T/s100.yaml" --json "$T/r100.json" >/dev/null || return 1
    flat "$T/r200.json" >"$T/f200" && flat "$T/r100.json" >"$T/f100" || return 1
    grep -qx '\.results\[0\]\.gpu	h200' "$T/f200" || { echo "gpu not h200"; return 1; }
    local c200 c100
    c200=$(awk -F'\t' '$1 ~ /results.*\.comm_s$/ { print $2 }' "$T/f200")
    c100=$(awk -F'\t' '$1 ~ /results.*\.comm_s$/ { print $2 }' "$T/f100")
    [ -n "$c200" ] && awk -v a="$c200" 'BEGIN { exit !(a > 0) }' && [ "$c200" = "$c100" ] ||
        { echo "comm_s h200 '$c200' h100 '$c100'"; return 1; }
}
t "scenario on 2 x dgx-h200" scenario

# A two-layer model at fp16, batch 8: a GEMM bound by FLOPs on both GPUs and an
# activation bound by memory on both. Forward + backward (bwd_ratio 2):
#   gemm: 3 x 4e9 x 8 / (989e12 x 0.189), the same on both;
#   relu: 3 x 4e8 x 8 x 2/4 / mem_Bps (3.35e12, 4.8e12); 4 launches of 4 us.
two_layer_model "$T/m.yaml"
compute_s() {   # compute_s GPU MODEL PRECISION BATCH — arsim's compute of one iteration on one GPU, s
    printf 'name: one\nmodel: %s\ngpu: %s\nprecision: %s\nbatch: [%d]\ncluster: {topology: star, nodes: 1, gpus_per_node: 1, link: {bandwidth: 100Gbps, latency: 1us}}\npolicies: [{name: none, overlap: none, algorithm: ring}]\niterations: {warmup: 1, measured: 2}\n' \
        "$2" "$1" "$3" "$4" >"$T/one.yaml"
    "$A" run "$T/one.yaml" --json - | awk -F'[:,]' '/"compute_s":/ { gsub(/[ \t]/, "", $2); print $2; exit }'
}
closed_form() {
    local h100 h200 gemm want100 want200
    h100=$(compute_s h100 "$T/m.yaml" fp16 8) && h200=$(compute_s h200 "$T/m.yaml" fp16 8) || return 1
    gemm=$(awk 'BEGIN { printf "%.17g", 3 * 4e9 * 8 / (989e12 * 0.189) }')
    want100=$(awk -v g="$gemm" 'BEGIN { printf "%.17g", g + 3 * 4e8 * 8 * 0.5 / 3.35e12 + 4 * 4e-6 }')
    want200=$(awk -v g="$gemm" 'BEGIN { printf "%.17g", g + 3 * 4e8 * 8 * 0.5 / 4.8e12 + 4 * 4e-6 }')
    near "$h100" "$want100" 1e-9 && near "$h200" "$want200" 1e-9 ||
        { echo "h100 $h100 (want $want100), h200 $h200 (want $want200)"; return 1; }
}
t "compute: only the memory term changes" closed_form

# oracle GPU MODEL BATCH — one tf32 iteration's compute (s) under the roofline, read from the files
# alone: per layer 3 max(flops b / (tf32 peak x tensor efficiency of its kind), mem_bytes b / mem)
# (forward + backward at bwd_ratio 2) + 2 launches; per layer with parameters an update of
# params x 12 bytes / mem + a launch.
oracle() {
    awk -v gpu="$1" -v b="$3" '
        FNR == 1 { f++ }
        f == 1 && /^  [a-z0-9]+:$/ { cur = $1; sub(/:$/, "", cur) }
        f == 1 && cur == gpu && /tf32_tflops:/ { peak = $2 * 1e12 }
        f == 1 && cur == gpu && /mem_GBps:/ { mem = $2 * 1e9 }
        f == 1 && cur == gpu && /launch_us:/ { launch = $2 * 1e-6 }
        f == 1 && cur == gpu && /tensor_efficiency:/ { s = $0; gsub(/.*\{|\}.*/, "", s); n = split(s, kv, /, */)
            for (i = 1; i <= n; i++) { split(kv[i], p, /: */); eff[p[1]] = p[2] } }
        f == 2 && /^  - \{name:/ { s = $0; gsub(/.*\{|\}.*/, "", s); gsub(/tensors: \[[^]]*\], */, "", s)
            n = split(s, kv, /, */); delete L
            for (i = 1; i <= n; i++) { split(kv[i], p, /: */); L[p[1]] = p[2] }
            tf = L["flops"] * b / (peak * eff[L["kind"]]); tm = L["mem_bytes"] * b / mem
            t += 3 * (tf > tm ? tf : tm) + 2 * launch
            if (L["params"] > 0) t += L["params"] * 12 / mem + launch }
        END { printf "%.17g\n", t }' models/gpus.yaml "models/$2.yaml"
}
# h200 carries h100's compute figures and fits over: only mem_GBps and memory_GiB (and the overlap's
# bandwidth-scaled channel rates) differ
same_fits() {
    local k a b
    for k in fp32_tflops tf32_tflops fp16_tflops launch_us winograd sms ddp efficiency tensor_efficiency; do
        a=$(awk -v g=h100 -v k="$k" '/^  [a-z0-9]+:$/ { c = $1 } c == g ":" && $1 == k ":" { print }' models/gpus.yaml)
        b=$(awk -v g=h200 -v k="$k" '/^  [a-z0-9]+:$/ { c = $1 } c == g ":" && $1 == k ":" { print }' models/gpus.yaml)
        [ -n "$a" ] && [ "$a" = "$b" ] || { echo "$k: h100 '$a' h200 '$b'"; return 1; }
    done
}
t "h200 keeps h100's compute figures and fits" same_fits
real_models() {   # arsim against the oracle on both GPUs, shipped models in tf32
    local m g got want
    for m in alexnet:128 resnet50:128 gpt2:8; do
        for g in h100 h200; do
            got=$(compute_s "$g" "${m%%:*}" tf32 "${m##*:}") && want=$(oracle "$g" "${m%%:*}" "${m##*:}") || return 1
            near "$got" "$want" 1e-9 || { echo "$m on $g: arsim $got, roofline $want"; return 1; }
        done
    done
}
t "compute: shipped models, the roofline's closed form on both GPUs" real_models

# Every layer's time max(tf, tm) + launch becomes max(tf, r tm) + launch with
# r = 3350 / 4800: a shipped model's compute on h200 lies between r times
# h100's and h100's (strictly below when a layer is memory-bound).
bounds() {
    local m h100 h200
    for m in resnet50:tf32:128 gpt2:fp16:8; do
        IFS=: read -r name prec b <<<"$m"
        h100=$(compute_s h100 "$name" "$prec" "$b") && h200=$(compute_s h200 "$name" "$prec" "$b") || return 1
        awk -v a="$h100" -v c="$h200" 'BEGIN { exit !(c < a && c >= a * 3350 / 4800) }' ||
            { echo "$m: h100 $h100 h200 $h200"; return 1; }
    done
}
t "compute: real models within the bandwidth ratio" bounds

# A node file naming gpu: h200 may leave compute_capability out: it is
# tuned as Hopper, the same rows as the shipped file that states 9.0.
implicit_cc() {
    grep -v '^compute_capability:' topologies/nodes/dgx-h200.yaml >"$T/nocc.yaml"
    ! grep -q compute_capability "$T/nocc.yaml" || { echo "key still there"; return 1; }
    rows --node dgx-h200 --size 64KiB,64MiB >"$T/with.json" || return 1
    rows --node "$T/nocc.yaml" --size 64KiB,64MiB >"$T/without.json" || return 1
    grep -q '"nccl_algo":[[:space:]]*"NVLS"' "$T/without.json" || { echo "not tuned as Hopper (no NVLS)"; return 1; }
    diff "$T/with.json" "$T/without.json" >&2
}
t "h200 without compute_capability is tuned as Hopper" implicit_cc
