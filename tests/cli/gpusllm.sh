#!/bin/bash
# gpusllm — a scenario's gpus_file reaches a node cluster's GPU, and
# models/gpus-llm.yaml is models/gpus.yaml with the GEMM kinds at the
# maximum achievable matmul rate (models/gen/gen_gpus_llm.py): fc =
# MAMF / peak (A100 271.2 / 312, H100 and H200 794.5 / 989), attention and
# default 0.9 of it, embedding 0.5, every other field unchanged. Closed form:
# a two-layer model's compute on 1 x dgx-a100 with each file.
A=${ARSIM:-./arsim}
source tests/clilib.bash
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT

# entry FILE GPU — the GPU's entry of a GPU file, one field a line
entry() { awk -v g="$2" '/^  [a-z0-9]+:$/ { cur = $1; sub(/:$/, "", cur); next } cur == g && /^    / { print } /^[^ ]/ { cur = "" }' "$1"; }

# tensor efficiency of KIND in GPU's entry of FILE
teff() { entry "$1" "$2" | awk -v k="$3" '/tensor_efficiency:/ { s = $0; gsub(/.*\{|\}.*/, "", s); n = split(s, kv, /, */)
    for (i = 1; i <= n; i++) { split(kv[i], p, /: */); if (p[1] == k) print p[2] } }'; }

llm_file() {
    local g mamf peak k want got
    for g in a100:271.2:312 h100:794.5:989 h200:794.5:989; do
        IFS=: read -r g mamf peak <<<"$g"
        diff <(entry models/gpus.yaml "$g" | grep -v tensor_efficiency) \
             <(entry models/gpus-llm.yaml "$g" | grep -v tensor_efficiency) >&2 || { echo "$g: other fields differ"; return 1; }
        for k in fc:1 attention:0.9 default:0.9 embedding:0.5 conv:0 norm:0 act:0 pool:0; do
            IFS=: read -r k s <<<"$k"
            if [ "$s" = 0 ]; then want=$(teff models/gpus.yaml "$g" "$k")
            else want=$(awk -v m="$mamf" -v p="$peak" -v s="$s" 'BEGIN { printf "%.3f", m / p * s }'); fi
            got=$(teff models/gpus-llm.yaml "$g" "$k")
            [ -n "$got" ] && [ "$got" = "$want" ] || { echo "$g $k: $got, want $want"; return 1; }
        done
    done
    [ "$(grep -c '^  [a-z0-9]*:$' models/gpus-llm.yaml)" = 3 ] || { echo "not three GPUs"; return 1; }
}
t "gpus-llm.yaml: GEMM kinds at MAMF / peak, the rest as gpus.yaml" llm_file

# A two-layer model at fp16, batch 8 (as h200.sh): a GEMM bound by FLOPs and an
# activation bound by memory. Forward + backward (bwd_ratio 2):
#   3 x 4e9 x 8 / (312e12 x fc) + 3 x 4e8 x 8 x 2/4 / 2039e9 + 4 launches of 4 us.
two_layer_model "$T/m.yaml"
compute_s() {   # compute_s CLUSTER [GPUS_FILE] [GPU] — compute of one iteration, s
    {
        printf 'name: one\nmodel: %s\nprecision: fp16\nbatch: [8]\ncluster: %s\n' "$T/m.yaml" "$1"
        [ -n "$2" ] && printf 'gpus_file: %s\n' "$(readlink -f "$2")"
        [ -n "$3" ] && printf 'gpu: %s\n' "$3"
        printf 'policies: [{name: none, overlap: none, algorithm: nccl}]\niterations: {warmup: 1, measured: 2}\n'
    } >"$T/one.yaml"
    "$A" run "$T/one.yaml" --json - | awk -F'[:,]' '/"compute_s":/ { gsub(/[ \t]/, "", $2); print $2; exit }'
}
want_s() { awk -v e="$1" 'BEGIN { printf "%.17g", 3 * 4e9 * 8 / (312e12 * e) + 3 * 4e8 * 8 * 0.5 / 2039e9 + 4 * 4e-6 }'; }
node_file() {
    local def llm given
    def=$(compute_s '{node: dgx-a100, nodes: 1}') && llm=$(compute_s '{node: dgx-a100, nodes: 1}' models/gpus-llm.yaml) &&
        given=$(compute_s '{node: dgx-a100, nodes: 1}' models/gpus-llm.yaml a100) || return 1
    near "$def" "$(want_s 0.338)" 1e-9 || { echo "default file: $def, want $(want_s 0.338)"; return 1; }
    near "$llm" "$(want_s 0.869)" 1e-9 || { echo "gpus-llm: $llm, want $(want_s 0.869)"; return 1; }
    [ "$given" = "$llm" ] || { echo "with gpu: a100 given $given, without $llm"; return 1; }
}
t "a node cluster's GPU comes from gpus_file" node_file
