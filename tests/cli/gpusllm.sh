#!/bin/bash
# gpusllm — a scenario's gpus_file reaches a node cluster's GPU, and
# models/gpus-llm.yaml and gpus-llm-cudnn.yaml (models/gen/gen_gpus_llm.py)
# are models/gpus.yaml with the kernel kinds of an LLM step at the rates
# measured in validate/kernels/h200/ (and validate/h100/overlap): checked
# here against those raw runs by independent awk, and by a closed form of a
# two-layer model's compute on 1 x dgx-a100; the generated model files'
# mem_factor (models/gen/memfactor.py) against the same runs. That the
# generators (Python) write these files is tests/tools/gpusllm.sh's.
A=${ARSIM:-./arsim}
source tests/clilib.bash
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
K=validate/kernels/h200

# entry FILE GPU — the GPU's entry of a GPU file, one field a line
entry() { awk -v g="$2" '/^  [a-z0-9]+:$/ { cur = $1; sub(/:$/, "", cur); next } cur == g && /^    / { print } /^[^ ]/ { cur = "" }' "$1"; }

# tensor efficiency of KIND in GPU's entry of FILE
teff() { entry "$1" "$2" | awk -v k="$3" '/tensor_efficiency:/ { s = $0; gsub(/.*\{|\}.*/, "", s); n = split(s, kv, /, */)
    for (i = 1; i <= n; i++) { split(kv[i], p, /: */); if (p[1] == k) print p[2] } }'; }
memeff() { entry "$1" "$2" | awk '/mem_efficiency:/ { print $2 }'; }

# num FIELD — awk fragment: the JSON number of FIELD in the current line, into v
num='function num(f,   s) { s = $0; if (!match(s, "\"" f "\": [-0-9.e+]+")) return ""; s = substr(s, RSTART, RLENGTH); sub(/.*: /, "", s); return s + 0 }'
# med(a, n): the median of a[1..n] (sorted in place), awk
med='function med(a, n,   i, j, x) { for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }'

# the H200's fc: per run, the shipped GEMM records whose m, n, k are multiples
# of 8, total FLOPs over total time; the mean of the two runs, over 989e12
h200_fc() {
    for r in 1 2; do
        awk "$num"' /"section": "gemm"/ { m = num("m"); n = num("n"); k = num("k")
            if (m % 8 || n % 8 || k % 8) next; f += 2 * m * n * k; t += num("s") } END { printf "%.17g\n", f / t }' "$K/rates-run$r.jsonl"
    done | awk '{ s += $1 } END { printf "%.3f", s / NR / 989e12 }'
}
# the H200's mem_efficiency: copy (4 bytes an element) and add (6) forward records, bytes / time / 4.8e12
h200_mem() {
    cat "$K/rates-run1.jsonl" "$K/rates-run2.jsonl" | awk "$num"' /"section": "mem"/ && /"kernel": "(copy|add)"/ {
        b = /"copy"/ ? 4 : 6; s += b * num("elements") / num("fwd_s") / 4.8e12; n++ } END { printf "%.3f", s / n }'
}
# the H100's mem_efficiency: the 1 GiB copy alone (k 0), 2 GiB moved, over 3.35e12, mean of two runs
h100_mem() {
    cat validate/h100/overlap/run1/interference.jsonl validate/h100/overlap/run2/interference.jsonl |
        awk "$num"' /"workload": "copy-1GiB"/ && /"k": 0,/ { s += 2 * 2^30 / (num("median_ms") * 1e-3) / 3.35e12; n++ }
            END { printf "%.3f", s / n }'
}

# the fused attention's half-rate sequence S0 for BACKEND: per head dimension, least squares of
# time / FLOPs (FLOPs as arsim counts a fused layer's three passes) on 1 / S, S0 = slope / intercept;
# the mean over the head dimensions, rounded
seq_half() {
    awk "$num"' /"section": "attnseq"/ && index($0, "\"backend\": \"" b "\"") && !/"error"/ {
        s = num("seq"); h = num("heads"); hd = num("head_dim"); d = h * hd
        f = 3 * num("b") * (4 * s * s * d + 5 * s * s * h) / 2 * 7 / 6
        x = 1 / s; y = num("fwdbwd_s") / f; n[hd]++; sx[hd] += x; sy[hd] += y; sxx[hd] += x * x; sxy[hd] += x * y }
        END { for (k in n) { m = n[k]; sl = (m * sxy[k] - sx[k] * sy[k]) / (m * sxx[k] - sx[k] * sx[k])
                             ic = (sy[k] - sl * sx[k]) / m; t += sl / ic; c++ }
              printf "%d", t / c + 0.5 }' b="$1" "$K/attnseq.jsonl"
}

# the fused kernel's long-sequence rate at head dimension D for BACKEND, S0 the file's: the median
# over attnseq.jsonl's and attnshape.jsonl's points of that dimension (with a key-value head a head)
# of rate x (S + S0) / S, over 989e12
head_dim_rate() {
    cat "$K/attnseq.jsonl" "$K/attnshape.jsonl" | awk "$num$med"'
        /"section": "attn(seq|shape)"/ && index($0, "\"backend\": \"" b "\"") && !/"error"/ && num("head_dim") == d {
            kv = num("kv_heads"); h = num("heads"); if (kv != "" && kv != h) next
            s = num("seq"); f = 3 * num("b") * (4 * s * s * h * d + 5 * s * s * h) / 2 * 7 / 6
            x[++n] = f / num("fwdbwd_s") * (s + s0) / s }
        END { printf "%.3f", med(x, n) / 989e12 }' b="$1" d="$2" s0="$3"
}
# hdmap FILE GPU KEY D: the value of head dimension D in GPU's head-dimension map KEY of FILE
hdmap() { entry "$1" "$2" | awk -v k="$3" -v d="$4" '$0 ~ "^    " k ":" { s = $0; gsub(/.*\{|\}.*/, "", s); n = split(s, kv, /, */)
    for (i = 1; i <= n; i++) { split(kv[i], p, /: */); if (p[1] == d) print p[2] } }'; }
hd_of() { hdmap "$1" "$2" fused_attention_head_dim "$3"; }
head_dims() {
    local f be d s0 got want
    for f in models/gpus-llm.yaml:FLASH_ATTENTION models/gpus-llm-cudnn.yaml:CUDNN_ATTENTION; do
        be=${f#*:}; f=${f%%:*}
        s0=$(entry "$f" h200 | awk '/fused_attention_seq_half:/ { print $2 }')
        for d in 64 80 96 128; do
            want=$(head_dim_rate "$be" "$d" "$s0"); got=$(hd_of "$f" h200 "$d")
            # the file's S0 is rounded to a token: within a step of the last place
            awk -v a="$got" -v b="$want" 'BEGIN { exit !(a - b <= 0.0011 && b - a <= 0.0011) }' ||
                { echo "$f h200 head_dim $d: $got, raw runs $want"; return 1; }
            [ "$(hd_of "$f" h100 "$d")" = "$got" ] || { echo "$f h100 head_dim $d differs from the h200's"; return 1; }
        done
    done
    # FlashAttention-2's head dimension 80 is the slowest, 128 the fastest
    awk -v a="$(hd_of models/gpus-llm.yaml h200 80)" -v b="$(hd_of models/gpus-llm.yaml h200 128)" \
        -v m="$(teff models/gpus-llm.yaml h200 fused_attention)" 'BEGIN { exit !(a < m && m < b) }' ||
        { echo "head_dim 80 / fused_attention / 128 out of order"; return 1; }
}
t "gpus-llm files' fused_attention_head_dim on the H200 and H100: the raw sweeps' rates by head dimension" head_dims

# the eager score products' rate at head dimension D ("all": every shape): per run, each eager shape's
# six bmm records' FLOPs (2 batch seq^2 head_dim) over their time, the median over the shapes of that
# dimension; the mean of the two runs, unrounded, in FLOP/s
bmm_rate() {
    for r in 1 2; do
        awk "$num$med"'
            /"section": "bmm"/ { m = $0; sub(/.*"model": "/, "", m); sub(/".*/, "", m); hd[m] = num("head_dim")
                f[m] += 2 * num("batch") * num("seq") ^ 2 * hd[m]; t[m] += num("s") }
            END { for (m in f) if (d == "all" || hd[m] == d) x[++n] = f[m] / t[m]; printf "%.17g\n", med(x, n) }' d="$1" "$K/rates-run$r.jsonl"
    done | awk '{ s += $1 } END { printf "%.17g", s / NR }'
}
ahd_of() { hdmap "$1" "$2" attention_head_dim "$3"; }
attention_head_dims() {
    local f d all r want got
    all=$(bmm_rate all)
    got=$(teff models/gpus-llm.yaml h200 attention); want=$(awk -v r="$all" 'BEGIN { printf "%.3f", r / 989e12 }')
    [ "$got" = "$want" ] || { echo "h200 attention $got, raw runs $want"; return 1; }
    for f in models/gpus-llm.yaml models/gpus-llm-cudnn.yaml; do
        [ "$(entry "$f" h200 | grep -c '^    attention_head_dim: {80: [0-9.]*, 128: [0-9.]*}$')" = 1 ] ||
            { echo "$f h200: attention_head_dim not {80, 128}"; return 1; }
        for d in 80 128; do
            r=$(bmm_rate "$d")
            want=$(awk -v r="$r" 'BEGIN { printf "%.3f", r / 989e12 }'); got=$(ahd_of "$f" h200 "$d")
            [ "$got" = "$want" ] || { echo "$f h200 attention_head_dim $d: $got, raw runs $want"; return 1; }
            [ "$(ahd_of "$f" h100 "$d")" = "$got" ] || { echo "$f h100 attention_head_dim $d differs from the h200's"; return 1; }
            # the A100: its attention (rounded: within a step of the last place) times the H200's ratio
            want=$(awk -v a="$(teff "$f" a100 attention)" -v r="$r" -v m="$all" 'BEGIN { printf "%.6f", a * r / m }')
            got=$(ahd_of "$f" a100 "$d")
            awk -v a="$got" -v b="$want" 'BEGIN { exit !(a - b <= 0.0011 && b - a <= 0.0011) }' ||
                { echo "$f a100 attention_head_dim $d: $got, want $want"; return 1; }
        done
    done
    # head dimension 80 runs at about two thirds of 128's rate, below the median over all shapes
    awk -v a="$(ahd_of models/gpus-llm.yaml h200 80)" -v b="$(ahd_of models/gpus-llm.yaml h200 128)" \
        -v m="$(teff models/gpus-llm.yaml h200 attention)" 'BEGIN { exit !(a < m && m <= b && a < 0.75 * b) }' ||
        { echo "attention_head_dim 80 / attention / 128 out of order"; return 1; }
}
t "gpus-llm files' attention, attention_head_dim on the H200, H100 and A100: the raw bmm runs' rates by head dimension" attention_head_dims

measured() {
    local got
    got=$(teff models/gpus-llm.yaml h200 fc); [ "$got" = "$(h200_fc)" ] || { echo "h200 fc $got, raw runs $(h200_fc)"; return 1; }
    got=$(memeff models/gpus-llm.yaml h200); [ "$got" = "$(h200_mem)" ] || { echo "h200 mem_efficiency $got, raw $(h200_mem)"; return 1; }
    got=$(memeff models/gpus-llm.yaml h100); [ "$got" = "$(h100_mem)" ] || { echo "h100 mem_efficiency $got, raw $(h100_mem)"; return 1; }
    got=$(entry models/gpus-llm.yaml h200 | awk '/fused_attention_seq_half:/ { print $2 }')
    [ "$got" = "$(seq_half FLASH_ATTENTION)" ] || { echo "h200 seq_half $got, raw $(seq_half FLASH_ATTENTION)"; return 1; }
    got=$(entry models/gpus-llm-cudnn.yaml h200 | awk '/fused_attention_seq_half:/ { print $2 }')
    [ "$got" = "$(seq_half CUDNN_ATTENTION)" ] || { echo "cudnn h200 seq_half $got, raw $(seq_half CUDNN_ATTENTION)"; return 1; }
}
t "gpus-llm files' H200 fc, mem_efficiency and fused_attention_seq_half, H100 mem_efficiency: the raw runs' figures" measured

# share KERNEL FWD_BYTES BWD_BYTES — a memory-bound kernel's forward and backward shares of 4.8 TB/s:
# bytes a call moves per element times elements over time, the median over its records of each run,
# the mean of the two runs (BWD_BYTES 0: the forward's share for both)
share() {
    for r in 1 2; do
        awk "$num$med"'
            /"section": "mem"/ && index($0, "\"kernel\": \"" k "\"") { n++
                f[n] = fb * num("elements") / num("fwd_s") / 4.8e12
                b[n] = bb ? bb * num("elements") / num("bwd_s") / 4.8e12 : f[n] }
            END { printf "%.17g %.17g\n", med(f, n), med(b, n) }' k="$1" fb="$2" bb="$3" "$K/rates-run$r.jsonl"
    done | awk '{ f += $1; b += $2 } END { printf "%.17g %.17g", f / NR, b / NR }'
}
# a model file's mem_factor of layer NAME ("" where it gives none)
factor_of() { awk -v n="$2" 'index($0, "{name: " n ",") { if (match($0, /mem_factor: [0-9.]+/)) print substr($0, RSTART + 12, RLENGTH - 12) }' "$1"; }
mem_factors() {
    local c ln sc got f
    c=$(h200_mem)
    # eager LayerNorm: the generator's 4 / 10 bytes at layernorm's shares (a call moves 4 / 6: the
    # measured backward computes no weight gradient)
    ln=$(share layernorm 4 6 | awk -v c="$c" '{ printf "%.3f", 14 / (4 / $1 + 10 / $2) / c }')
    # the eager score chain: scale 4 / 4 and masked_fill 4 / 4 at an add's forward share, softmax
    # 4 / 6, dropout 5 / 5 at theirs
    sc=$( { share add 6 0; echo; share softmax 4 6; echo; share dropout 5 5; echo; } | awk -v c="$c" '
        { s[NR] = $1; t[NR] = $2 } END { printf "%.3f", 36 / (16 / s[1] + 4 / s[2] + 6 / t[2] + 5 / s[3] + 5 / t[3]) / c }')
    awk -v a="$ln" -v b="$sc" 'BEGIN { exit !(a > 0.3 && a < 0.9 && b > 0.3 && b < 0.9) }' || { echo "ln $ln, scores $sc"; return 1; }
    for f in models/gpt3-175b.yaml validate/anchors/models/gpt3-xl.yaml validate/llm/models/gpt3-2.7b-8k.yaml; do
        got=$(factor_of "$f" h.0.ln_1); [ "$got" = "$ln" ] || { echo "$f ln_1: $got, raw runs $ln"; return 1; }
        got=$(factor_of "$f" h.3.attn.softmax); [ "$got" = "$sc" ] || { echo "$f softmax: $got, raw runs $sc"; return 1; }
    done
    got=$(factor_of validate/llm/models/mpt-7b-2k.yaml ln_f); [ "$got" = "$ln" ] || { echo "mpt ln_f: $got"; return 1; }
    # a fused kernel (the flash variant's dropout + add + LayerNorm), a residual add (at least a copy's
    # rate) and the files fitted through gpus.yaml's efficiencies carry none
    [ -z "$(factor_of validate/llm/models/gpt3-1.3b-2k-flash.yaml h.0.ln_1)" ] || { echo "flash ln_1 has one"; return 1; }
    [ -z "$(factor_of models/gpt3-175b.yaml h.0.res_1)" ] || { echo "res_1 has one"; return 1; }
    for f in models/bert-base.yaml models/bert-base-384.yaml models/gpt2.yaml models/resnet50.yaml models/vgg16.yaml; do
        ! grep -q mem_factor "$f" || { echo "$f has mem_factor"; return 1; }
    done
}
t "memory-bound layers' mem_factor (eager LayerNorm, score chain) from the raw runs; none on fused kernels or fitted files" mem_factors

llm_file() {
    local f g k want got fc
    for f in models/gpus-llm.yaml models/gpus-llm-cudnn.yaml; do
        [ "$(grep -c '^  [a-z0-9]*:$' "$f")" = 3 ] || { echo "$f: not three GPUs"; return 1; }
        for g in a100 h100 h200; do
            diff <(entry models/gpus.yaml "$g" | grep -v tensor_efficiency) \
                 <(entry "$f" "$g" | grep -v 'tensor_efficiency\|mem_efficiency\|fused_attention_seq_half\|attention_head_dim') >&2 ||
                { echo "$f $g: other fields differ"; return 1; }
            got=$(entry "$f" "$g" | awk '/fused_attention_seq_half:/ { print $2 }')
            awk -v x="$got" 'BEGIN { exit !(x >= 256 && x <= 4096) }' || { echo "$f $g fused_attention_seq_half: $got"; return 1; }
            for k in conv norm act pool; do
                [ "$(teff "$f" "$g" "$k")" = "$(teff models/gpus.yaml "$g" "$k")" ] || { echo "$f $g $k changed"; return 1; }
            done
            fc=$(teff "$f" "$g" fc)
            for k in default:0.9 embedding:0.5; do
                want=$(awk -v f="$fc" -v s="${k#*:}" 'BEGIN { printf "%.3f", f * s }')
                got=$(teff "$f" "$g" "${k%%:*}")
                # fc is rounded before the product is: a 0.001 step at most
                awk -v a="$got" -v b="$want" 'BEGIN { exit !(a - b <= 0.0011 && b - a <= 0.0011) }' ||
                    { echo "$f $g ${k%%:*}: $got, want $want"; return 1; }
            done
            for k in fc attention fused_attention; do
                got=$(teff "$f" "$g" "$k")
                awk -v x="$got" 'BEGIN { exit !(x > 0.1 && x < 0.9) }' || { echo "$f $g $k: $got"; return 1; }
            done
            got=$(memeff "$f" "$g")
            awk -v x="$got" 'BEGIN { exit !(x > 0.5 && x <= 1) }' || { echo "$f $g mem_efficiency: $got"; return 1; }
        done
    done
    # the -cudnn file differs in the H100's and H200's fused attention only (its rate, its
    # half-rate sequence and its rates by head dimension; and the header's name), and runs it faster
    [ "$(diff models/gpus-llm.yaml models/gpus-llm-cudnn.yaml | grep -c '^<')" = 7 ] || { echo "cudnn: other lines differ"; return 1; }
    [ "$(diff <(grep -v 'fused_attention\|^# models/gpus-llm' models/gpus-llm.yaml) \
              <(grep -v 'fused_attention\|^# models/gpus-llm' models/gpus-llm-cudnn.yaml) | wc -l)" = 0 ] ||
        { echo "cudnn: a line without fused_attention differs"; return 1; }
    for g in h100 h200; do
        awk -v a="$(teff models/gpus-llm.yaml $g fused_attention)" -v b="$(teff models/gpus-llm-cudnn.yaml $g fused_attention)" \
            'BEGIN { exit !(b > 1.5 * a) }' || { echo "$g: cudnn not faster"; return 1; }
    done
}
t "gpus-llm files: gpus.yaml's fields, the kind shape, the cudnn file's one difference" llm_file

# FILE D N: the eager score products of FILE, N of them (Q K^T and P V a block), each at head dimension D
eager_hd() {
    [ "$(grep -c 'kind: attention,' "$1")" = "$3" ] || { echo "$1: not $3 attention layers"; return 1; }
    [ "$(grep 'kind: attention,' "$1" | grep -c ", head_dim: $2[,}]")" = "$3" ] || { echo "$1: not all at head_dim $2"; return 1; }
}
eager_head_dims() {
    # GPT-3 175B: 96 heads of 128; 2.7B: 32 of 80; XL (1.3B): 16 of 128 (d_model / heads)
    eager_hd models/gpt3-175b.yaml 128 192 && eager_hd validate/anchors/models/gpt3-2.7b.yaml 80 64 &&
        eager_hd validate/llm/models/gpt3-2.7b-8k.yaml 80 64 && eager_hd validate/anchors/models/gpt3-xl.yaml 128 48
}
t "every eager score product of the generated GPT files carries its head dimension" eager_head_dims

# A two-layer model at fp16, batch 8 (as h200.sh): a GEMM bound by FLOPs and an
# activation bound by memory. Forward + backward (bwd_ratio 2):
#   3 x 4e9 x 8 / (312e12 x fc) + 3 x 4e8 x 8 x 2/4 / (2039e9 x mem_efficiency) + 4 launches of 4 us.
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
want_s() { awk -v e="$1" -v m="$2" 'BEGIN { printf "%.17g", 3 * 4e9 * 8 / (312e12 * e) + 3 * 4e8 * 8 * 0.5 / (2039e9 * m) + 4 * 4e-6 }'; }
node_file() {
    local def llm given fc me
    fc=$(teff models/gpus-llm.yaml a100 fc) && me=$(memeff models/gpus-llm.yaml a100)
    def=$(compute_s '{node: dgx-a100, nodes: 1}') && llm=$(compute_s '{node: dgx-a100, nodes: 1}' models/gpus-llm.yaml) &&
        given=$(compute_s '{node: dgx-a100, nodes: 1}' models/gpus-llm.yaml a100) || return 1
    near "$def" "$(want_s 0.338 1)" 1e-9 || { echo "default file: $def, want $(want_s 0.338 1)"; return 1; }
    near "$llm" "$(want_s "$fc" "$me")" 1e-9 || { echo "gpus-llm: $llm, want $(want_s "$fc" "$me")"; return 1; }
    [ "$given" = "$llm" ] || { echo "with gpu: a100 given $given, without $llm"; return 1; }
}
t "a node cluster's GPU comes from gpus_file, with its mem_efficiency" node_file

# gpus_file: gpus-llm-cudnn, a bare name, resolves in models/ as gpus-llm does
bare_name() {
    local a b
    a=$(compute_s '{node: dgx-h100, nodes: 1}' models/gpus-llm-cudnn.yaml) || return 1
    sed -i 's|^gpus_file: .*|gpus_file: gpus-llm-cudnn|' "$T/one.yaml"
    b=$("$A" run "$T/one.yaml" --json - | awk -F'[:,]' '/"compute_s":/ { gsub(/[ \t]/, "", $2); print $2; exit }')
    [ -n "$b" ] && [ "$a" = "$b" ] || { echo "path $a, bare name $b"; return 1; }
}
t "gpus_file: gpus-llm-cudnn resolves as a bare name" bare_name
