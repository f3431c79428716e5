#!/bin/bash
# scale — validate/nccl/scale.sh computes its table, its worst errors and a
# Ring's time a step correctly (against a stand-in arsim whose CSV rows are
# known), refuses a published file without its label or with a line that is
# not SIZE BUSBW TIME, and every published table under
# validate/nccl/published/nodes/ is well formed (a source, ascending powers
# of two, non-negative busbw, positive time; busbw x time / size the same in
# every row where busbw is 1 GB/s or more, within 1 %: the rank count's
# factor, which catches a digit misread) and runs through the real arsim,
# one row a size.
A=${ARSIM:-./arsim}
source tests/clilib.bash
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT

# The stand-in prints arsim's CSV header and, at every size it is asked
# for, 16 ranks of a Ring/LL128 all-reduce taking 20 us at 100 GB/s busbw,
# the tuner 5 us at 200 GB/s (busbw and time need not agree here: the
# errors come from the times, the busbw columns are printed as given).
cat >"$T/fake" <<'SH'
#!/bin/bash
while [ $# -gt 0 ]; do [ "$1" = --size ] && sizes=$2; shift; done
echo "algorithm,ranks,bytes,time_s,algbw_Bps,busbw_Bps,events,skew_s,trials,time_min_s,time_max_s,op,nodes,nccl_algo,nccl_proto,channels,threads,tuner_time_s,tuner_busbw_Bps,nccl_release"
tr , '\n' <<<"$sizes" | awk '{ print "nccl,16," $1 ",0.00002,1,100000000000,1,,,,,allreduce,2,Ring,LL128,16,640,0.000005,200000000000,2.21" }'
SH
chmod +x "$T/fake"
cat >"$T/pub.txt" <<'TXT'
# label: made up
# arsim: --node dgx-h100 --nodes 2
65536 80 25
67108864 125 18
TXT

table() {
    validate/nccl/scale.sh "$T/fake" "$T/pub.txt" >"$T/out" 2>"$T/err" || { echo "exit $?: $(cat "$T/err")"; return 1; }
    for want in "**made up**" \
        "| 65536 | 80.00 | 100.00 | 200.00 | +25.0 % | +400.0 % | 25.0 | 20.0 | 5.0 |" \
        "| 67108864 | 125.00 | 100.00 | 200.00 | -10.0 % | +260.0 % | 18.0 | 20.0 | 5.0 |" \
        "worst error, arsim: 64 KiB to 16 MiB: +25.0 % at 65536 B (target 25 %: met); >= 64 MiB: -10.0 % at 67108864 B (target 10 %: met)" \
        "worst error, tuner: 64 KiB to 16 MiB: +400.0 % at 65536 B (target 25 %: missed); >= 64 MiB: +260.0 % at 67108864 B (target 10 %: missed)" \
        "time a step at 65536 B (Ring/LL128, 16 ranks, 30 steps): published 0.83 us, arsim 0.67 us, tuner 0.17 us"; do
        grep -qxF -- "$want" "$T/out" || { echo "no line '$want' in: $(cat "$T/out")"; return 1; }
    done
    [ "$(grep -c '^| [0-9]' "$T/out")" -eq 2 ] || { echo "not 2 rows"; return 1; }
}
t "scale: table, errors, worst errors and time a step against known rows" table

refused() {
    local name=$1 file=$2 msg=$3
    validate/nccl/scale.sh "$T/fake" "$file" >"$T/out" 2>"$T/err"
    [ $? -eq 2 ] || { echo "$name: exit not 2"; return 1; }
    [ ! -s "$T/out" ] || { echo "$name: partial output"; return 1; }
    grep -qF -- "$msg" "$T/err" || { echo "$name: message: $(cat "$T/err")"; return 1; }
}
bad() {
    grep -v '^# label' "$T/pub.txt" >"$T/nolabel.txt"
    refused unlabelled "$T/nolabel.txt" "no '# label:' or '# arsim:' line" || return 1
    awk '/^#/ || NF != 3 { print; next } { print $1, $2 }' "$T/pub.txt" >"$T/twocol.txt"
    refused "two columns" "$T/twocol.txt" 'line "65536 80" is not SIZE BUSBW TIME'
}
t "scale: a file without its label, or with a line short of a column, is refused" bad

published() {
    local f n
    for f in validate/nccl/published/nodes/*.txt; do
        grep -q '^# source: ' "$f" || { echo "$f: no source"; return 1; }
        grep -v '^#' "$f" | awk -v f="$f" '{ x = $1; while (x > 1 && x % 2 == 0) x /= 2 }
            NF != 3 || $2 < 0 || $3 <= 0 || $1 <= last || x != 1 { print f ": bad line " NR ": " $0; bad = 1; exit }
            $2 >= 1 { k = $2 * $3 / $1 * 1000; if (k0 == "") k0 = k
                      if (k > 1.01 * k0 || k < 0.99 * k0) { print f ": busbw x time / size " k " against " k0 " at " $1; bad = 1; exit } }
            { last = $1 } END { exit bad }' || return 1
        n=$(grep -vc '^#' "$f")
        validate/nccl/scale.sh "$A" "$f" >"$T/out" 2>"$T/err" || { echo "$f: exit $?: $(cat "$T/err")"; return 1; }
        [ "$(grep -c '^| [0-9]' "$T/out")" -eq "$n" ] || { echo "$f: rows not $n"; return 1; }
        grep -q '^worst error, arsim: ' "$T/out" || { echo "$f: no summary"; return 1; }
    done
}
t "scale: every published table between nodes is well formed and runs through arsim" published
