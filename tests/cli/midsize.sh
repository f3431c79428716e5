#!/bin/bash
# midsize — validate/nccl/midsize.sh computes its table and its worst errors
# correctly (against a stand-in arsim whose busbw is known), refuses a
# published file without its label or arsim line, and every published curve
# under validate/nccl/published/ is well formed (ascending powers of two,
# positive busbw) and runs through the real arsim, one row a size.
A=${ARSIM:-./arsim}
source tests/clilib.bash
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT

# The stand-in prints arsim's two header lines and a busbw of 100 (column
# 10) at every size it is asked for.
cat >"$T/fake" <<'SH'
#!/bin/bash
while [ $# -gt 0 ]; do [ "$1" = --size ] && sizes=$2; shift; done
echo "# fake"; echo "size(B) op ranks algo proto ch time tuner algbw busbw tunerbw events"
tr , '\n' <<<"$sizes" | awk '{ print $1, "allreduce", 8, "Ring", "Simple", 1, 1, 1, 1, "100.0000", 1, 1 }'
SH
chmod +x "$T/fake"
cat >"$T/pub.txt" <<'TXT'
# label: made up
# arsim: --node dgx-h100
65536 80
1048576 125
67108864 200
8589934592 100
TXT

table() {
    validate/nccl/midsize.sh "$T/fake" "$T/pub.txt" >"$T/out" 2>"$T/err" || { echo "exit $?: $(cat "$T/err")"; return 1; }
    for want in "**made up**" "| 65536 | 80.00 | 100.00 | +25.0 % |" "| 1048576 | 125.00 | 100.00 | -20.0 % |" \
        "| 67108864 | 200.00 | 100.00 | -50.0 % |" "| 8589934592 | 100.00 | 100.00 | +0.0 % |" \
        "worst error, 64 KiB to 16 MiB: +25.0 % at 65536 B (target 25 %: met); >= 64 MiB: -50.0 % at 67108864 B (target 10 %: missed)"; do
        grep -qxF -- "$want" "$T/out" || { echo "no line '$want' in: $(cat "$T/out")"; return 1; }
    done
    [ "$(grep -c '^| [0-9]' "$T/out")" -eq 4 ] || { echo "not 4 rows"; return 1; }
}
t "midsize: table, errors and worst errors against known busbw" table

unlabelled() {
    grep -v '^# label' "$T/pub.txt" >"$T/nolabel.txt"
    validate/nccl/midsize.sh "$T/fake" "$T/nolabel.txt" >"$T/out" 2>"$T/err"
    [ $? -eq 2 ] || { echo "exit not 2"; return 1; }
    [ ! -s "$T/out" ] || { echo "partial output"; return 1; }
    grep -q "no '# label:' or '# arsim:' line" "$T/err" || { echo "message: $(cat "$T/err")"; return 1; }
}
t "midsize: a published file without its label is refused" unlabelled

published() {
    local f n
    for f in validate/nccl/published/*.txt; do
        grep -q '^# source: ' "$f" || { echo "$f: no source"; return 1; }
        grep -v '^#' "$f" | awk -v f="$f" '{ x = $1; while (x > 1 && x % 2 == 0) x /= 2 }
            NF != 2 || $2 <= 0 || $1 <= last || x != 1 { print f ": bad line " NR ": " $0; bad = 1; exit }
            { last = $1 } END { exit bad }' || return 1
        n=$(grep -vc '^#' "$f")
        validate/nccl/midsize.sh "$A" "$f" >"$T/out" 2>"$T/err" || { echo "$f: exit $?: $(cat "$T/err")"; return 1; }
        [ "$(grep -c '^| [0-9]' "$T/out")" -eq "$n" ] || { echo "$f: rows not $n"; return 1; }
        grep -q '^worst error, 64 KiB to 16 MiB: [-+]' "$T/out" || { echo "$f: no summary"; return 1; }
    done
}
t "midsize: every published curve is well formed and runs through arsim" published
