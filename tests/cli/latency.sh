#!/bin/bash
# latency — validate/nccl/latency.sh computes its table, its worst errors
# and its least-squares line of time against steps correctly (against a
# stand-in arsim whose CSV rows are known), refuses a malformed published
# file (no label, no size, a line short of a column, rank counts that do
# not ascend from 2, a single row) with one line and no output, even after
# a good file, and every published table under
# validate/nccl/published/latency/ is well formed (a source; the script's
# own checks) and runs through the real arsim, one row a GPU count, with
# the protocol its '# arsim:' line forces.
A=${ARSIM:-./arsim}
source tests/clilib.bash
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT

# The stand-in prints arsim's CSV header and one row: N ranks of a Ring/LL
# all-reduce taking 4 + 1.5 x 2 (N - 1) us, the tuner 3 + 0.5 x 2 (N - 1);
# it refuses any size but the file's 64 B, so the size is passed on.
cat >"$T/fake" <<'SH'
#!/bin/bash
while [ $# -gt 0 ]; do
    case $1 in --ranks) n=$2 ;; --size) s=$2 ;; esac
    shift
done
[ "$s" = 64 ] || { echo "size $s" >&2; exit 3; }
echo "algorithm,ranks,bytes,time_s,algbw_Bps,busbw_Bps,events,skew_s,trials,time_min_s,time_max_s,op,nodes,nccl_algo,nccl_proto,channels,threads,tuner_time_s,tuner_busbw_Bps,nccl_release"
awk -v n="$n" 'BEGIN { s = 2 * (n - 1); printf "nccl,%d,64,%.9g,1,1,1,,,,,allreduce,1,Ring,LL,1,96,%.9g,1,2.21\n", n, (4 + 1.5 * s) * 1e-6, (3 + 0.5 * s) * 1e-6 }'
SH
chmod +x "$T/fake"
cat >"$T/pub.txt" <<'TXT'
# label: made up
# arsim: --node dgx-a100 --nccl-algo ring
# size: 64
2 10
3 12
4 13
TXT

# Published 10, 12, 13 us at 2, 4, 6 steps: the least-squares slope is
# (-2 x -5/3 + 0 + 2 x 4/3) / 8 = 0.75 us a step, the intercept
# 35/3 - 0.75 x 4 = 8.67 us; the stand-in's lines are exact.
table() {
    validate/nccl/latency.sh "$T/fake" "$T/pub.txt" >"$T/out" 2>"$T/err" || { echo "exit $?: $(cat "$T/err")"; return 1; }
    for want in "**made up**" \
        "arsim: \`arsim collective --algo nccl --node dgx-a100 --nccl-algo ring --ranks N --size 64\`" \
        "| 2 | 2 | 10.00 | 7.00 | 4.00 | Ring/LL | -30.0 % | -60.0 % |" \
        "| 3 | 4 | 12.00 | 10.00 | 5.00 | Ring/LL | -16.7 % | -58.3 % |" \
        "| 4 | 6 | 13.00 | 13.00 | 6.00 | Ring/LL | +0.0 % | -53.8 % |" \
        "worst error: arsim -30.0 % at 2 GPUs; tuner -60.0 % at 2 GPUs" \
        "least-squares line over the rows: published 0.75 us a step, 8.67 us at none; arsim 1.50 us a step, 4.00 us at none; tuner 0.50 us a step, 3.00 us at none"; do
        grep -qxF -- "$want" "$T/out" || { echo "no line '$want' in: $(cat "$T/out")"; return 1; }
    done
    [ "$(grep -c '^| [0-9]' "$T/out")" -eq 3 ] || { echo "not 3 rows"; return 1; }
}
t "latency: table, errors, worst errors and least-squares line against known rows" table

refused() {
    local name=$1 file=$2 msg=$3
    validate/nccl/latency.sh "$T/fake" "$T/pub.txt" "$file" >"$T/out" 2>"$T/err"
    [ $? -eq 2 ] || { echo "$name: exit not 2"; return 1; }
    [ ! -s "$T/out" ] || { echo "$name: partial output"; return 1; }
    [ "$(wc -l <"$T/err")" -eq 1 ] || { echo "$name: not one line: $(cat "$T/err")"; return 1; }
    grep -qF -- "$msg" "$T/err" || { echo "$name: message: $(cat "$T/err")"; return 1; }
}
bad() {
    grep -v '^# label' "$T/pub.txt" >"$T/nolabel.txt"
    refused unlabelled "$T/nolabel.txt" "no '# label:' or '# arsim:' line" || return 1
    grep -v '^# size' "$T/pub.txt" >"$T/nosize.txt"
    refused "no size" "$T/nosize.txt" "no '# size: BYTES' line" || return 1
    sed 's/^3 12$/3/' "$T/pub.txt" >"$T/onecol.txt"
    refused "one column" "$T/onecol.txt" 'line "3" is not RANKS TIME' || return 1
    sed 's/^4 13$/3 13/' "$T/pub.txt" >"$T/repeat.txt"
    refused "repeated rank count" "$T/repeat.txt" "ranks 3: the rank counts must ascend from 2" || return 1
    sed 's/^2 10$/1 10/' "$T/pub.txt" >"$T/one.txt"
    refused "one rank" "$T/one.txt" "ranks 1: the rank counts must ascend from 2" || return 1
    grep -v '^[34] ' "$T/pub.txt" >"$T/single.txt"
    refused "a single row" "$T/single.txt" "1 rows; a line needs 2 or more"
}
t "latency: a malformed file is refused with one line and no output, even after a good one" bad

published() {
    local f n p
    for f in validate/nccl/published/latency/*.txt; do
        grep -q '^# source: ' "$f" || { echo "$f: no source"; return 1; }
        n=$(grep -v '^#' "$f" | awk 'NF' | wc -l)
        validate/nccl/latency.sh "$A" "$f" >"$T/out" 2>"$T/err" || { echo "$f: exit $?: $(cat "$T/err")"; return 1; }
        [ "$(grep -c '^| [0-9]' "$T/out")" -eq "$n" ] || { echo "$f: rows not $n"; return 1; }
        grep -q '^least-squares line over the rows: published ' "$T/out" || { echo "$f: no line"; return 1; }
        p=$(sed -n 's/^# arsim: .*--nccl-proto \([a-z0-9]*\).*/\1/p' "$f")
        [ -z "$p" ] || [ "$(grep '^| [0-9]' "$T/out" | grep -vic "| Ring/$p |")" -eq 0 ] ||
            { echo "$f: a row not Ring/$p"; return 1; }
    done
}
t "latency: every published latency table is well formed and runs through arsim" published
