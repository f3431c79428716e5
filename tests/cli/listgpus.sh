#!/bin/bash
# listgpus — `arsim list gpus [--gpus-file FILE|NAME]`: the last four
# columns (tensor-core efficiency of fc, attention and fused_attention,
# mem_efficiency) against the GPU files read here with awk, an oracle
# independent of arsim's loader (an absent kind takes the map's default,
# else 0.5; an absent tensor_efficiency map the efficiency map's values; an
# absent mem_efficiency 1; "-" for a GPU with no tf32 or fp16 peak);
# gpus-llm and gpus-llm-cudnn differ in the fused column of h100 and h200
# only; --json carries the head-dimension maps as the file gives them; the
# file is found as a scenario's gpus_file is; a bad file, or the
# option with another category, is exit 2 and one line.
# Run from the repository root; $ARSIM is the binary.
A=$(readlink -f "${ARSIM:-./arsim}")
source tests/clilib.bash
root=$(pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# want FILE — "KEY FC ATTN FUSED MEM" per entry of a GPU file, sorted by key.
want() {
    awk '
    # val(LINE, K): the value of K in the inline map on LINE, "" if absent
    function val(line, k,    m) {
        if (!match(line, "[{ ,]" k ": *[0-9.]+")) return ""
        m = substr(line, RSTART + 1, RLENGTH - 1); sub(/^[^:]*: */, "", m); return m
    }
    function kind(map, k,    v) {
        v = val(map, k); if (v == "") v = val(map, "default"); return v == "" ? 0.5 : v
    }
    function flush() {
        if (key == "") return
        te = te != "" ? te : ef
        if (tensor) printf "%s %.3f %.3f %.3f", key, kind(te, "fc"), kind(te, "attention"), kind(te, "fused_attention")
        else printf "%s - - -", key
        printf " %.3f\n", mem == "" ? 1 : mem
    }
    /^gpus:/ { in_gpus = 1; next }
    in_gpus && /^  [a-z0-9_-]+:[ \t]*$/ {
        flush(); key = $1; sub(/:$/, "", key); te = ef = mem = ""; tensor = 0; next }
    in_gpus && /^    tensor_efficiency:/ { te = $0 }
    in_gpus && /^    efficiency:/ { ef = $0 }
    in_gpus && /^    mem_efficiency:/ { mem = $2 }
    in_gpus && /^    (tf32|fp16)_tflops:/ && $2 + 0 > 0 { tensor = 1 }
    END { flush() }' "$1" | sort
}

# got ARGS... — "KEY FC ATTN FUSED MEM" per row of `arsim list gpus ARGS`.
got() {
    "$A" list gpus "$@" >"$T/table" || return 1
    awk 'NR > 1 { print $1, $(NF - 3), $(NF - 2), $(NF - 1), $NF }' "$T/table" | sort
}

# same_as_file NAME FILE — the columns of --gpus-file NAME are FILE's.
same_as_file() {
    want "$2" >"$T/want" && got --gpus-file "$1" >"$T/got" || return 1
    [ -s "$T/want" ] || { echo "no entries read from $2"; return 1; }
    diff "$T/want" "$T/got" >&2
}
t "gpus-llm: columns of every GPU as models/gpus-llm.yaml gives them" same_as_file gpus-llm models/gpus-llm.yaml
t "gpus-llm-cudnn: columns as models/gpus-llm-cudnn.yaml gives them" \
    same_as_file gpus-llm-cudnn models/gpus-llm-cudnn.yaml

h200_llm() {
    local w g
    w=$(want models/gpus-llm.yaml | awk '$1 == "h200"')
    g=$(got --gpus-file gpus-llm | awk '$1 == "h200"')
    [ -n "$w" ] && [ "$w" = "$g" ] || { echo "want '$w' got '$g'"; return 1; }
}
t "gpus-llm: h200's row" h200_llm

# gpus-llm-cudnn: every column of every row as gpus-llm's but the fused one,
# which differs exactly on h100 and h200
cudnn_fused_only() {
    "$A" list gpus --gpus-file gpus-llm >"$T/llm" && "$A" list gpus --gpus-file gpus-llm-cudnn >"$T/cudnn" || return 1
    local other fused
    other=$(diff <(awk '{ $(NF - 1) = ""; print }' "$T/llm") <(awk '{ $(NF - 1) = ""; print }' "$T/cudnn"))
    [ -z "$other" ] || { echo "other columns differ: $other"; return 1; }
    fused=$(paste -d' ' <(awk 'NR > 1 { print $1, $(NF - 1) }' "$T/llm") <(awk 'NR > 1 { print $(NF - 1) }' "$T/cudnn") |
        awk '$2 != $3 { printf "%s ", $1 }')
    [ "$fused" = "h100 h200 " ] || { echo "fused differs on '$fused'"; return 1; }
}
t "gpus-llm-cudnn: only the fused column, only h100 and h200" cudnn_fused_only

# models/gpus.yaml (no option): its maps give no fused_attention, so the
# fused column is each map's default; the file gives no mem_efficiency but
# h100gt's, the H100's 1 GiB copy (2 GiB moved) over 3.35 TB/s, recomputed
# here from the raw run
default_file() {
    same_as_file gpus models/gpus.yaml || return 1
    grep -q 'fused_attention' models/gpus.yaml && { echo "gpus.yaml names fused_attention"; return 1; }
    [ "$(grep -c 'mem_efficiency:' models/gpus.yaml)" = 1 ] || { echo "gpus.yaml: mem_efficiency not on one GPU"; return 1; }
    local copy
    copy=$(grep '"copy-1GiB"' validate/h100/overlap/run1/interference.jsonl |
           awk -F'"median_ms": ' '/"k": 0,/ { split($2, a, ","); printf "%.3f", 2 * 2^30 / (a[1] * 1e-3) / 3.35e12 }')
    [ -n "$copy" ] || { echo "no copy-1GiB record"; return 1; }
    got >"$T/plain" || return 1
    diff "$T/got" "$T/plain" >&2 || return 1
    awk -v copy="$copy" '$5 != ($1 == "h100gt" ? copy : "1.000") || $4 != $3 { print "row " $0 " (h100gt copy " copy ")"; f = 1 }
         END { exit f }' "$T/plain" || return 1
    # fused = default = attention in every tensor_efficiency map of the file (checked, not assumed)
    awk '/^    tensor_efficiency:/ { d = $0; a = $0; sub(/.*default: */, "", d); sub(/[,}].*/, "", d)
         sub(/.*attention: */, "", a); sub(/[,}].*/, "", a); if (d != a) { print "default " d " attention " a; f = 1 } }
         END { exit f }' models/gpus.yaml || return 1
    awk '$1 == "gtx1080ti" && $2 $3 $4 == "---" { f = 1 } END { exit !f }' "$T/plain" ||
        { echo "gtx1080ti (no tensor cores) not '-'"; return 1; }
}
t "gpus.yaml: mem eff 1.000 (h100gt: the H100's copy), fused eff = attn eff (its maps' default)" default_file

# the old columns keep their place: the first eight of each row are what
# they were before the new ones were appended
old_columns() {
    "$A" list gpus >"$T/plain" || return 1
    head -1 "$T/plain" | grep -qE '^gpu +name +fp32 TF/s +tf32 TF/s +fp16 TF/s +mem GB/s +launch us +winograd +fc eff +attn eff +fused eff +mem eff$' ||
        { head -1 "$T/plain"; return 1; }
    grep -qE '^v100 +NVIDIA V100 SXM2 32GB +15\.7 +0\.0 +125\.0 +900 +5\.0 +2\.16 ' "$T/plain" || { cat "$T/plain"; return 1; }
}
t "the existing columns first, in their order" old_columns

# found as a scenario's gpus_file: a bare name in models/ along the data
# search path, a path as a path (relative to the working directory)
resolution() {
    "$A" list gpus --gpus-file gpus-llm >"$T/bare" || return 1
    "$A" list gpus --gpus-file models/gpus-llm.yaml >"$T/path" || return 1
    cmp -s "$T/bare" "$T/path" || { echo "bare name and path differ"; return 1; }
    mkdir -p "$T/elsewhere" && cp models/gpus-llm-cudnn.yaml "$T/elsewhere/mine.yaml"
    (cd "$T/elsewhere" && ARSIM_DATA=$root "$A" list gpus --gpus-file gpus-llm) >"$T/data" || return 1
    cmp -s "$T/bare" "$T/data" || { echo "ARSIM_DATA: differs"; return 1; }
    (cd "$T/elsewhere" && "$A" list gpus --gpus-file mine.yaml) >"$T/mine" || return 1
    "$A" list gpus --gpus-file gpus-llm-cudnn >"$T/cudnn" || return 1
    cmp -s "$T/mine" "$T/cudnn" || { echo "a file in the working directory: differs"; return 1; }
    "$A" list gpus --gpus-file gpus >"$T/gpus" && "$A" list gpus >"$T/plain" || return 1
    cmp -s "$T/gpus" "$T/plain" || { echo "--gpus-file gpus differs from the default"; return 1; }
}
t "--gpus-file: a bare name in models/, or a path" resolution

names() {
    "$A" list gpus --gpus-file gpus-llm --names >"$T/names" || return 1
    diff <(want models/gpus-llm.yaml | awk '{ print $1 }') "$T/names" >&2
}
t "--names --gpus-file: the file's keys" names

# JSON: mem_efficiency and tensor_efficiency.{fc,attention,fused_attention}
# present, numeric, and the table's values; no tensor_efficiency without tensor cores
json_fields() {
    local file=$1
    "$A" list gpus ${file:+--gpus-file "$file"} --json - >"$T/j.json" || return 1
    flat "$T/j.json" >"$T/j.flat" || return 1
    awk -F'\t' -v num='^-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?$' '
        { split($1, p, "."); i = p[1] }
        p[2] == "key" { key[i] = $2 }
        $1 ~ /\.(mem_efficiency|tensor_efficiency\.(fc|attention|fused_attention))$/ {
            if ($2 !~ num) { print "not a number: " $0; bad = 1 }
            f = $1; sub(/^[^.]*\./, "", f); v[i, f] = sprintf("%.3f", $2) }
        END { for (j in key) {
                  m = v[j, "mem_efficiency"]; if (m == "") { print key[j] " lacks mem_efficiency"; bad = 1 }
                  fc = v[j, "tensor_efficiency.fc"]; at = v[j, "tensor_efficiency.attention"]
                  fu = v[j, "tensor_efficiency.fused_attention"]
                  if (fc == "" && at == "" && fu == "") fc = at = fu = "-"
                  print key[j], fc, at, fu, m
              }
              exit bad }' "$T/j.flat" | sort >"$T/j.got" || { cat "$T/j.got"; return 1; }
    got ${file:+--gpus-file "$file"} >"$T/t.got" || return 1
    diff "$T/t.got" "$T/j.got" >&2
}
t "--json: the fields, numeric, as the table (gpus-llm)" json_fields gpus-llm
t "--json: the fields, numeric, as the table (gpus.yaml)" json_fields ""

# JSON: each GPU's head-dimension maps (fused_attention_head_dim, attention_head_dim) as the
# file gives them, "KEY MAP D EFF" a line; none for a file without them (gpus.yaml)
json_head_dims() {
    local file=$1 src=${1:-gpus}
    "$A" list gpus ${file:+--gpus-file "$file"} --json - >"$T/h.json" || return 1
    flat "$T/h.json" >"$T/h.flat" || return 1
    awk -F'\t' '{ split($1, p, ".") } p[2] == "key" { key[p[1]] = $2 }
        p[2] ~ /head_dim$/ { n++; m[n] = p[1]; w[n] = p[2] " " p[3] " " sprintf("%.3f", $2) }
        END { for (i = 1; i <= n; i++) print key[m[i]], w[i] }' "$T/h.flat" | sort >"$T/h.got"
    awk '/^  [a-z0-9]+:$/ { k = $1; sub(/:$/, "", k) }
        /^    (fused_)?attention_head_dim:/ { m = $1; sub(/:$/, "", m); s = $0; gsub(/.*\{|\}.*/, "", s)
            n = split(s, kv, /, */); for (i = 1; i <= n; i++) { split(kv[i], q, /: */); printf "%s %s %s %.3f\n", k, m, q[1], q[2] } }' \
        "models/$src.yaml" | sort >"$T/h.want"
    diff "$T/h.want" "$T/h.got" >&2 || return 1
    [ -n "$file" ] || [ ! -s "$T/h.got" ] || { echo "gpus.yaml: a head-dimension map"; return 1; }
    [ -z "$file" ] || [ "$(grep -c ' attention_head_dim ' "$T/h.got")" -ge 6 ] || { echo "$file: too few"; return 1; }
}
t "--json: fused_attention_head_dim and attention_head_dim as the file gives them (gpus-llm)" json_head_dims gpus-llm
t "--json: no head-dimension map where the file gives none (gpus.yaml)" json_head_dims ""

# one_line CMD... — exit 2, nothing on stdout, one line on stderr (left in $T/err)
one_line() {
    "$@" >"$T/out" 2>"$T/err"
    local rc=$?
    [ $rc = 2 ] && [ ! -s "$T/out" ] && [ "$(wc -l <"$T/err")" = 1 ] ||
        { echo "exit $rc, stdout $(wc -c <"$T/out") bytes, stderr: $(cat "$T/err")"; return 1; }
}

# a bad file: the loader's own message, at the position of the bad value
bad_file() {
    sed '/^  h200:/,$ s/^    mem_efficiency: .*/    mem_efficiency: 1.5/' models/gpus-llm.yaml >"$T/bad.yaml"
    local line
    line=$(awk '/^  h200:/ { h = 1 } h && /^    mem_efficiency: 1\.5$/ { print NR; exit }' "$T/bad.yaml")
    [ -n "$line" ] || { echo "no bad line written"; return 1; }
    one_line "$A" list gpus --gpus-file "$T/bad.yaml" || return 1
    grep -qE "^$T/bad\.yaml:$line:[0-9]+: .*; expected .*1" "$T/err" || { cat "$T/err"; return 1; }
    one_line "$A" list gpus --gpus-file no-such-gpus || return 1
    grep -qE '^no-such-gpus:1:1: no GPU file; expected a path, or a name in models/' "$T/err" || { cat "$T/err"; return 1; }
    one_line "$A" list gpus --gpus-file models/vgg16.yaml || return 1
    grep -qE '^models/vgg16\.yaml:[0-9]+:[0-9]+: no gpus mapping; expected' "$T/err" || { cat "$T/err"; return 1; }
}
t "a bad GPU file: exit 2, the loader's file:line:col" bad_file

other_category() {
    one_line "$A" list models --gpus-file gpus-llm || return 1
    grep -q '^--gpus-file: given without the gpus category; expected arsim list gpus --gpus-file FILE$' "$T/err" ||
        { cat "$T/err"; return 1; }
    one_line "$A" list --gpus-file gpus-llm
}
t "--gpus-file with list models, or every category: exit 2" other_category
exit 0
