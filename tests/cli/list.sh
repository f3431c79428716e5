#!/bin/bash
# `arsim list models|gpus|topologies|nodes|algorithms|policies [--json]`: the
# model totals are the published parameter counts (docs/dev/references.md §4), written
# here independently; the data files are found along the data search path
# ($ARSIM_DATA, the working directory, the installed directory). Prints
# "ok NAME" / "FAIL NAME"; $ARSIM is the binary; cwd = repo root.
ARSIM=$(readlink -f "${ARSIM:-./arsim}")
root=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { echo "ok $1"; }
bad() { echo "FAIL $1${2:+: $2}"; }
check() { if [ "$2" = 0 ]; then ok "$1"; else bad "$1" "$3"; fi; }

# name params layers tensors (published figures; layers and tensors counted by hand:
# VGG-16 13 conv + 5 pool + avgpool + 3 fc, 2 tensors per conv/fc; ResNet-50 161 tensors;
# Llama 3: 15 layers (kernels) and 9 tensors per block, plus tok_embeddings, norm, output, loss)
cat >"$tmp/want" <<'EOF'
vgg16 138357544 22 32
vgg16-cifar10 33638218 21 32
resnet50 25557032 109 161
alexnet 61100840 12 16
gpt2 124439808 76 148
llama3-8b 8030261248 484 291
llama3-70b 70553706496 1204 723
EOF

"$ARSIM" list models >"$tmp/table" 2>"$tmp/err"
check models.exit $? "$(cat "$tmp/err")"
while read -r name params layers tensors; do
  line=$(awk -v n="$name" '$1 == n' "$tmp/table")
  got=$(awk '{ print $2, $3, $4 }' <<<"$line")
  check "models.table.$name" "$([ "$got" = "$params $layers $tensors" ] && echo 0)" "got '$got'"
done <"$tmp/want"
check models.table.bert "$(awk '$1 == "bert-base" && $2 > 109000000 && $2 < 111000000 { f = 1 } END { exit !f }' "$tmp/table" && echo 0)"
# measured: exactly the H100 files (models/*-h100*.yaml, from profile_gpu.sh), each
# with the parameters of the model it measured
check models.measured-h100-only "$(awk 'NR > 1 && (($1 ~ /-h100(-fp16)?$/) != ($NF == "h100)")) { f = 1 }
  END { exit f }' "$tmp/table" && echo 0)"
check models.measured-count "$(awk 'NR > 1 && $NF == "h100)" { n++ } END { exit n != 11 }' "$tmp/table" && echo 0)"
check models.measured-params "$(awk 'NR > 1 { p[$1] = $2 } END { for (n in p) if (n ~ /-h100/) {
  b = n; sub(/-h100(-fp16)?$/, "", b); if (p[b] != p[n]) f = 1 } exit f }' "$tmp/table" && echo 0)"
check models.no-gpus-file "$(grep -q '^gpus ' "$tmp/table" || echo 0)"

# --json: an array of objects with name, params, layers (cJSON's formatted output)
"$ARSIM" list models --json - >"$tmp/json" 2>"$tmp/err"
check models.json.exit $? "$(cat "$tmp/err")"
awk -F'\t' '/"name":/ { gsub(/[",]/, "", $NF); n = $NF }
            /"params":/ { gsub(/,/, "", $NF); p[n] = $NF }
            /"layers":/ { gsub(/,/, "", $NF); l[n] = $NF }
            /"tensors":/ { gsub(/,/, "", $NF); print n, p[n], l[n], $NF }' "$tmp/json" >"$tmp/jgot"
while read -r name params layers tensors; do
  got=$(awk -v n="$name" '$1 == n { print $2, $3, $4 }' "$tmp/jgot")
  check "models.json.$name" "$([ "$got" = "$params $layers $tensors" ] && echo 0)" "got '$got'"
done <"$tmp/want"
check models.json.array "$(head -c1 "$tmp/json" | grep -q '\[' && tail -c2 "$tmp/json" | grep -q ']' && echo 0)"

# GPUs: datasheet peaks of models/gpus.yaml
"$ARSIM" list gpus >"$tmp/gpus" 2>"$tmp/err"
check gpus.exit $? "$(cat "$tmp/err")"
check gpus.v100 "$(grep -qE '^v100 .* 15\.7 +0\.0 +125\.0 +900 ' "$tmp/gpus" && echo 0)" "$(cat "$tmp/gpus")"
check gpus.a100-tf32 "$(grep -qE '^a100 .* 19\.5 +156\.0 +312\.0 +2039 ' "$tmp/gpus" && echo 0)" "$(cat "$tmp/gpus")"
check gpus.h200 "$(grep -qE '^h200 .* 67\.0 +494\.7 +989\.0 +4800 ' "$tmp/gpus" && echo 0)" "$(cat "$tmp/gpus")"
check gpus.all "$(for g in gtx1080ti v100 a100 h100 h100gt h200; do grep -q "^$g " "$tmp/gpus" || exit 1; done && echo 0)"
"$ARSIM" list gpus --json - | grep -q '"fp32_flops_per_s":[[:space:]]*19500000000000'
check gpus.json $?

# algorithms and policies, with descriptions
"$ARSIM" list algorithms >"$tmp/alg"
check algorithms.names "$([ "$(awk '{ printf "%s ", $1 }' "$tmp/alg")" = \
  "ring butterfly rabenseifner tree hierarchical torus2d hybrid auto " ] && echo 0)" "$(cat "$tmp/alg")"
"$ARSIM" list policies >"$tmp/pol"
check policies.names "$([ "$(awk '{ printf "%s ", $1 }' "$tmp/pol")" = "none ddp layer priority fsdp fsdp2 " ] && echo 0)"
check policies.described "$(awk 'NF < 4 { f = 1 } END { exit f }' "$tmp/pol" && echo 0)"
n=$("$ARSIM" list policies --json - | grep -c '"description":')
check policies.json "$([ "$n" = 6 ] && echo 0)" "$n descriptions"

# topologies: the kinds, then the files with their host counts
"$ARSIM" list topologies >"$tmp/topo" 2>"$tmp/err"
check topologies.exit "$([ -s "$tmp/topo" ] && [ ! -s "$tmp/err" ] && echo 0)" "$(cat "$tmp/err")"
for kv in star-8-10g:8 fat-tree-k8:128 fat-tree-k16:1024 torus-8x8:64 ring-16:16 dgx-8x8:64 graph-example:8; do
  name=${kv%%:*} hosts=${kv##*:}
  check "topologies.$name" "$(awk -v n="$name" -v h="$hosts" '$1 == n && $3 == h { f = 1 } END { exit !f }' "$tmp/topo" && echo 0)"
done
check topologies.kinds "$(for k in star ring torus2d fat-tree hierarchical graph; do
  grep -qE "^$k +\(built-in\)" "$tmp/topo" || exit 1; done && echo 0)"

# nodes: each shipped node's row against the issue's figures (docs/dev/references-nccl.md):
# GPU kind and count, NVLink fabric, links a GPU, GB/s a GPU and direction, NVLS, NICs and their Gb/s
"$ARSIM" list nodes >"$tmp/nodes" 2>"$tmp/err"
check nodes.exit "$([ -s "$tmp/nodes" ] && [ ! -s "$tmp/err" ] && echo 0)" "$(cat "$tmp/err")"
for row in "dgx-1 v100 8 mesh 6 150 no 4 100" "dgx-a100 a100 8 nvswitch 12 300 no 8 200" \
           "dgx-h100 h100 8 nvswitch 18 450 yes 8 400" "pcie-a100 a100 8 pcie 0 0 no 4 200"; do
  check "nodes.${row%% *}" "$(awk -v r="$row" '{ $1 = $1 } $0 == r { f = 1 } END { exit !f }' "$tmp/nodes" && echo 0)" \
    "$(grep "^${row%% *} " "$tmp/nodes")"
done
# a node file of one's own in $ARSIM_DATA is listed beside the shipped ones; a broken one is skipped with its
# own position in a note
mkdir -p "$tmp/hn/topologies/nodes"
sed 's/^gpus: 8/gpus: 4/; s/gpu_switch: .*/gpu_switch: [0, 0, 1, 1]/; s/gpu_nic: .*/gpu_nic: [0, 1, 2, 3]/' \
  topologies/nodes/dgx-h100.yaml >"$tmp/hn/topologies/nodes/my-h100x4.yaml"
sed 's/gpu_nic: .*/gpu_nic: [0, 1, 2, 3, 4, 5, 6, 9]/' topologies/nodes/dgx-h100.yaml >"$tmp/hn/topologies/nodes/broken.yaml"
ARSIM_DATA=$tmp/hn "$ARSIM" list nodes >"$tmp/out" 2>"$tmp/err"
check nodes.own "$([ $? = 0 ] && grep -qE '^my-h100x4 +h100 +4 +nvswitch' "$tmp/out" && grep -q '^dgx-h100 ' "$tmp/out" &&
                    ! grep -q '^broken' "$tmp/out" && grep -q 'nodes/broken.yaml:[0-9]*:[0-9]*: GPU 7 wired to NIC 9' "$tmp/err" &&
                    echo 0)" "$(cat "$tmp/out" "$tmp/err")"

# --names: the first column of the table, one a line (the header left out)
for what in models gpus topologies nodes algorithms policies; do
  "$ARSIM" list "$what" >"$tmp/t.$what" && "$ARSIM" list "$what" --names >"$tmp/n.$what"
  skip=1; case $what in algorithms | policies) skip=0 ;; esac
  check "names.$what" "$(awk -v s=$skip 'NR > s { print $1 }' "$tmp/t.$what" | diff - "$tmp/n.$what" >/dev/null && echo 0)" \
    "$(head -3 "$tmp/n.$what")"
done

# the data search path: $ARSIM_DATA (or its older name $ARSIM_HOME) from
# elsewhere; the checkout's own data for its executable run from
# elsewhere; nothing found for a copy of the executable outside any
# checkout, unless arsim is installed (the installed directory is the last
# place searched; --help names it)
(cd "$tmp" && ARSIM_DATA=$root "$ARSIM" list models) >"$tmp/home" 2>&1
check data.models "$(diff "$tmp/table" "$tmp/home" >/dev/null && echo 0)"
(cd "$tmp" && ARSIM_HOME=$root "$ARSIM" list models) >"$tmp/home" 2>&1
check home.models "$(diff "$tmp/table" "$tmp/home" >/dev/null && echo 0)"
(cd "$tmp" && "$ARSIM" list models) >"$tmp/home" 2>&1
check data.exe-checkout "$(diff "$tmp/table" "$tmp/home" >/dev/null && echo 0)"
installed=$("$ARSIM" --help | tr '\n' ' ' | sed -n 's/.* 5\. \([^ ,]*\),.*/\1/p')
check data.installed-named "$([ -n "$installed" ] && echo 0)"
mkdir -p "$tmp/lone" && cp "$ARSIM" "$tmp/lone/arsim"
if [ ! -e "$installed" ]; then
  (cd "$tmp" && lone/arsim list models) >"$tmp/empty" 2>&1
  check home.none "$([ "$(wc -l <"$tmp/empty")" = 1 ] && echo 0)" "$(cat "$tmp/empty")"
  (cd "$tmp" && lone/arsim list gpus) >"$tmp/out" 2>"$tmp/err"
  check home.no-gpus "$([ $? = 2 ] && [ ! -s "$tmp/out" ] && [ "$(wc -l <"$tmp/err")" = 1 ] && echo 0)"
fi

# a broken model file is skipped with a note, the others still listed
mkdir -p "$tmp/h2/models"
cp models/vgg16.yaml models/gpus.yaml "$tmp/h2/models/"
printf 'name: broken\nlayers: 3\n' >"$tmp/h2/models/broken.yaml"
ARSIM_DATA=$tmp/h2 "$ARSIM" list models >"$tmp/out" 2>"$tmp/err"
check broken.skipped "$([ $? = 0 ] && grep -q '^vgg16 ' "$tmp/out" && ! grep -q '^broken' "$tmp/out" &&
                         grep -q 'broken.yaml:2:' "$tmp/err" && echo 0)" "$(cat "$tmp/err")"

# bad category / usage: exit 2, one line, nothing on stdout
for args in "list nothing" "list --names" "list models --yaml" "list models --json - extra"; do
  "$ARSIM" $args >"$tmp/out" 2>"$tmp/err"
  check "usage.${args// /_}" "$([ $? = 2 ] && [ ! -s "$tmp/out" ] && [ "$(wc -l <"$tmp/err")" = 1 ] && echo 0)"
done
exit 0
