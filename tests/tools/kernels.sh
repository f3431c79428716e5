#!/bin/bash
# kernels — validate/kernels/table.py's block table (arsim's time for one
# block of a model file on one H200 with models/gpus-llm.yaml) against an
# independent roofline written here: each layer of block h.1, forward and
# backward (x 2), the larger of FLOPs / (989e12 x the kind's
# tensor_efficiency) and mem_bytes x batch x 2/4 / (4.8e12 x
# mem_efficiency x the layer's mem_factor, 1 if it gives none), plus a 4 us
# launch each pass; an attention layer's efficiency its head_dim's in
# attention_head_dim where listed; a fused_attention layer's (its head_dim's
# in fused_attention_head_dim where listed) times
# seq / (seq + fused_attention_seq_half). A fused block
# (MPT-7B: kind fused_attention, seq 2048) and two eager ones (GPT-3 XL and
# 2.7B: kind attention, head dimension 128 and 80).
A=${ARSIM:-./arsim}
# shellcheck source=../clilib.bash
. tests/clilib.bash

# roofline MODEL BATCH — block h.1's forward + backward on the h200 of gpus-llm.yaml, ms (3 decimals)
roofline() {
    python3 - "$1" "$2" <<'EOF'
import re, sys
gpus = open("models/gpus-llm.yaml").read().split("\n  h200:")[1]
eff = {k: float(v) for k, v in re.findall(r"(\w+): ([0-9.]+)", re.search(r"tensor_efficiency: \{(.*)\}", gpus).group(1))}
memeff = float(re.search(r"mem_efficiency: ([0-9.]+)", gpus).group(1))
half = float(re.search(r"fused_attention_seq_half: ([0-9.]+)", gpus).group(1))
hd = {kind: {int(k): float(v) for k, v in re.findall(r"(\d+): ([0-9.]+)",
                                                    re.search(r"\n    %s_head_dim: \{(.*)\}" % kind, gpus).group(1))}
      for kind in ("attention", "fused_attention")}
batch, t = int(sys.argv[2]), 0.0
for line in open(sys.argv[1]):
    m = re.search(r"\{name: (h\.1\.[^,]*), kind: (\w+),.* flops: (\d+), mem_bytes: (\d+)", line)
    if not m:
        continue
    e = eff.get(m.group(2), eff["default"])
    seq = re.search(r"seq: (\d+)", line)
    mf = re.search(r"mem_factor: ([0-9.]+)", line)
    mf = float(mf.group(1)) if mf else 1.0
    d = re.search(r"head_dim: (\d+)", line)
    if d and int(d.group(1)) in hd.get(m.group(2), {}):
        e = hd[m.group(2)][int(d.group(1))]
    if seq and m.group(2) == "fused_attention":
        e *= int(seq.group(1)) / (int(seq.group(1)) + half)
    for mult in (1, 2):
        t += max(mult * int(m.group(3)) * batch / (989e12 * e),
                 mult * int(m.group(4)) * batch * 0.5 / (4.8e12 * memeff * mf)) + 4e-6
print("%.3f" % (t * 1e3))
EOF
}

block_table() {
    local out row want got kinds
    out=$(python3 validate/kernels/table.py --arsim "$A" --only block) || { echo "table.py failed"; return 1; }
    for row in "mpt-7b (fused):validate/llm/models/mpt-7b-2k.yaml:6:fused_attention" \
               "gpt3-xl (eager):validate/anchors/models/gpt3-xl.yaml:8:attention" \
               "gpt3-2.7b (eager):validate/anchors/models/gpt3-2.7b.yaml:4:attention"; do
        IFS=: read -r name file batch kinds <<<"$row"
        grep -q "^  - {name: h\.1\.[^,]*, kind: $kinds," "$file" || { echo "$file: no $kinds layer in block h.1"; return 1; }
        grep -q "^  - {name: h\.1\..*mem_factor: 0\.[0-9]*}" "$file" || { echo "$file: no mem_factor in block h.1"; return 1; }
        want=$(roofline "$file" "$batch")
        got=$(awk -F'|' -v n="$name" 'index($2, n) { gsub(/ /, "", $6); print $6 }' <<<"$out")
        [ -n "$got" ] || { echo "$name: no row"; return 1; }
        # table.py prints 2 decimals
        awk -v a="$got" -v b="$want" 'BEGIN { exit !(a - b <= 0.0051 && b - a <= 0.0051) }' ||
            { echo "$name: arsim $got ms, roofline $want ms"; return 1; }
    done
}
if python3_or_skip "kernels: table.py's block table" validate/kernels/table.py; then
    t "kernels: table.py's arsim block times are the roofline of gpus-llm's h200 (fused and eager)" block_table
fi
