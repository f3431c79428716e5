#!/bin/bash
# conventions — what every command shares (docs/reference/conventions.md):
# `-` is standard output for every output option, `--json` means the same
# in every command, `arsim` alone prints the overview and `arsim list`
# alone lists every category. Run from the repository root; $ARSIM is the
# binary. Prints "ok NAME" / "FAIL NAME: why".
set -u
A=${ARSIM:?set ARSIM to the arsim binary}
# shellcheck source=tests/clilib.bash
. tests/clilib.bash
T=$(mktemp -d "${TMPDIR:-/tmp}/arsim-conv.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
S=tests/bad/support/ok.yaml
nowall() { grep -v '"wall_s"' "$@"; }

# run: each of --json, --csv, --trace given `-` writes on stdout exactly
# the bytes it writes to a file, nothing else (no table), and no file `-`
# (run in an empty directory, with the checkout's binary: it finds the
# checkout's models from there).
run_dash() {
    "$A" run "$S" --json "$T/r.json" --csv "$T/r.csv" --trace "$T/r.trace" >"$T/table" || return 1
    local opt abs
    abs=$(pwd)/$S
    mkdir -p "$T/cwd"
    for opt in json csv trace; do
        (cd "$T/cwd" && "$A" run "$abs" --$opt "$T/f.$opt" >/dev/null && "$A" run "$abs" --$opt -) >"$T/d.$opt" ||
            { echo "--$opt -: exit $?"; return 1; }
        [ -z "$(ls -A "$T/cwd")" ] || { echo "--$opt - made a file: $(ls -A "$T/cwd")"; return 1; }
        cmp -s "$T/d.$opt" "$T/f.$opt" || { echo "--$opt -: differs from --$opt FILE"; return 1; }
    done
    # with a file output the table is still printed, the same as without
    "$A" run "$S" >"$T/plain" && cmp -s "$T/plain" "$T/table" || { echo "table with --json FILE differs"; return 1; }
    # the other outputs still go to their files
    "$A" run "$S" --json - --csv "$T/r2.csv" >"$T/d2.json" && cmp -s "$T/r2.csv" "$T/r.csv" &&
        cmp -s "$T/d2.json" "$T/r.json" || { echo "--json - with --csv FILE"; return 1; }
}

# collective and list: --json FILE writes the JSON and keeps the table;
# --json - prints the JSON alone.
json_same() {
    "$A" collective --ranks 4 --algo ring --size 1KB,1MB >"$T/c.table" || return 1
    "$A" collective --ranks 4 --algo ring --size 1KB,1MB --json "$T/c.json" >"$T/c.table2" || return 1
    "$A" collective --ranks 4 --algo ring --size 1KB,1MB --json - >"$T/c.stdout" || return 1
    cmp -s "$T/c.table" "$T/c.table2" || { echo "collective: table differs with --json FILE"; return 1; }
    cmp -s <(nowall "$T/c.json") <(nowall "$T/c.stdout") || { echo "collective: --json - differs from FILE"; return 1; }
    flat "$T/c.stdout" | grep -q $'^\[1\]\.bytes\t1000000$' || { echo "collective: not the JSON array"; return 1; }
    "$A" list models --json "$T/m.json" >"$T/m.table2" && "$A" list models >"$T/m.table" &&
        "$A" list models --json - >"$T/m.stdout" || return 1
    cmp -s "$T/m.table" "$T/m.table2" && cmp -s "$T/m.json" "$T/m.stdout" || { echo "list: --json"; return 1; }
}

# arsim alone: the overview of --help, on stdout, exit 0.
bare() {
    "$A" >"$T/bare" 2>"$T/bare.err"; local rc=$?
    "$A" --help >"$T/help"
    [ $rc = 0 ] && [ ! -s "$T/bare.err" ] && cmp -s "$T/bare" "$T/help" || { echo "rc $rc"; return 1; }
}

# list alone: every category under its name, each the table `list CAT` prints.
list_all() {
    "$A" list >"$T/all" || return 1
    local c n=0
    for c in models gpus topologies algorithms policies; do
        "$A" list $c >"$T/one" || return 1
        awk -v c="$c:" '$0 == c { on = 1; next } on && /^$/ { exit } on' "$T/all" | cmp -s - "$T/one" ||
            { echo "list: section $c differs from list $c"; return 1; }
        n=$((n + 1))
    done
    [ "$(grep -c -E '^(models|gpus|topologies|algorithms|policies):$' "$T/all")" = 5 ] || { echo "headings"; return 1; }
    "$A" list --json - >"$T/all.json" || return 1
    for c in models gpus topologies algorithms policies; do
        "$A" list $c --json - >"$T/one.json"
        diff <(flat "$T/all.json" | sed -n "s/^\.$c\[/[/p") <(flat "$T/one.json") >/dev/null ||
            { echo "list --json: .$c differs from list $c --json"; return 1; }
    done
}

t "- is standard output: run --json/--csv/--trace" run_dash
t "--json FILE and --json -: collective and list" json_same
t "arsim alone prints the overview" bare
t "list alone: every category" list_all

# an unknown model or topology names where arsim looked, in one line:
# the config's directory, the working directory, the executable's
# checkout, the installed directory.
looked() {
    local root exe
    root=$(pwd -P) exe=$(readlink -f "$A")
    "$A" run "$S" --set model=no-such-net >/dev/null 2>"$T/err" && return 1
    [ "$(wc -l <"$T/err")" = 1 ] || { cat "$T/err"; return 1; }
    grep -q "unknown model 'no-such-net'; expected .* (looked in tests/bad/support/models, \./models, .*)$" "$T/err" ||
        { cat "$T/err"; return 1; }
    [ "$(dirname "$exe")" = "$root" ] || [ "$(dirname "$(dirname "$exe")")" = "$root" ] || return 0
    grep -qF ", $root/models, " "$T/err" || { echo "no checkout directory in: $(cat "$T/err")"; return 1; }
    "$A" collective --topology no-such-topo --algo ring --size 1KB >/dev/null 2>"$T/err" && return 1
    grep -qF "(looked in ./topologies, $root/topologies, " "$T/err" || { cat "$T/err"; return 1; }
}
t "unknown names say where arsim looked" looked

# rates as datasheets write them: 400Gb/s (bits) = 50GB/s (bytes) = 400Gbps
units() {
    local r i=0
    for r in 400Gbps 400Gb/s 50GB/s 0.4Tb/s; do
        "$A" run "$S" --set cluster.link.bandwidth=$r --json - >"$T/u.$i" || return 1
        cmp -s "$T/u.0" "$T/u.$i" || { echo "$r differs from 400Gbps"; return 1; }
        i=$((i + 1))
    done
    "$A" collective --ranks 4 --algo ring --size 1MB --bandwidth 3.2Tb/s --json - | nowall >"$T/u.c1" &&
        "$A" collective --ranks 4 --algo ring --size 1MB --bandwidth 400GB/s --json - | nowall >"$T/u.c2" &&
        cmp -s "$T/u.c1" "$T/u.c2" || { echo "collective: 3.2Tb/s differs from 400GB/s"; return 1; }
}
t "units: 400Gb/s, 3.2Tb/s, 450GB/s" units

# --set KEY=null removes the key: adding a key and removing it again is
# the scenario as written; removing a policy drops exactly its rows.
set_null() {
    "$A" run "$S" --json "$T/n0.json" >"$T/n0" || return 1
    "$A" run "$S" --set cluster.gpus_per_node=4 --set cluster.gpus_per_node=null --json "$T/n1.json" >"$T/n1" ||
        return 1
    cmp -s "$T/n0.json" "$T/n1.json" || { echo "add then remove differs from the scenario"; return 1; }
    "$A" run "$S" --set policies.1=null >"$T/n2" || return 1
    grep -q ' thesis ' "$T/n0" && grep -v ' thesis ' "$T/n0" | cmp -s - "$T/n2" ||
        { echo "policies.1=null: not the table less the thesis rows"; return 1; }
}
t "--set KEY=null removes the key" set_null

# run's progress line: nothing on a stderr that is not a terminal; forced
# (ARSIM_PROGRESS=1), one line per (batch, policy) run as it starts, in
# order; the results the same either way.
progress() {
    "$A" run "$S" >"$T/p.out" 2>"$T/p.err" || return 1
    [ ! -s "$T/p.err" ] || { echo "stderr not empty: $(head -c 200 "$T/p.err")"; return 1; }
    ARSIM_PROGRESS=1 "$A" run "$S" >"$T/p.out1" 2>"$T/p.err1" || return 1
    cmp -s "$T/p.out" "$T/p.out1" || { echo "stdout differs with progress"; return 1; }
    printf 'arsim run: %s runs done, now batch %s policy %s\n' 0/4 32 ddp 1/4 32 thesis 2/4 64 ddp 3/4 64 thesis \
        >"$T/p.want"
    sed 's/; [0-9]* s$//' "$T/p.err1" | cmp -s - "$T/p.want" || { echo "lines: $(cat "$T/p.err1")"; return 1; }
    ARSIM_PROGRESS=0 "$A" run "$S" 2>"$T/p.err0" >/dev/null && [ ! -s "$T/p.err0" ] || { echo "=0 wrote"; return 1; }
}
t "run: progress on stderr only when asked or a terminal" progress

# collective --intra, against closed forms (latencies 0):
#  - hierarchical, 2 nodes x 8 GPUs, intra inf: the 8 GPUs' shards share
#    the node's NIC: 8 x (4 MB + 4 MB) = 64 MB at 12.5 GB/s = 5.12 ms;
#  - ring over 16 GPUs, the NICs inf, intra 100 GB/s: 30 steps of 4 MB on
#    a GPU's own link, 40 us each = 1.2 ms;
#  - ring inside one node of 8 (the 1 Gbps NIC unused): 14 x 80 us = 1.12 ms;
#  - on a hierarchical file, --intra replaces the file's intra links.
intra() {
    local c=("$A" collective --size 64MB --latency 0 --json -) got
    got=$("${c[@]}" --ranks 16 --gpus-per-node 8 --algo hierarchical --bandwidth 100Gbps --intra inf,0 | flat /dev/stdin |
        sed -n 's/^\[0\]\.time_s\t//p')
    [ "$got" = 0.00512 ] || { echo "hierarchical: $got"; return 1; }
    got=$("${c[@]}" --ranks 16 --gpus-per-node 8 --algo ring --bandwidth inf --intra 100GB/s,0 | flat /dev/stdin |
        sed -n 's/^\[0\]\.time_s\t//p')
    [ "$got" = 0.0012 ] || { echo "ring 16: $got"; return 1; }
    got=$("${c[@]}" --ranks 8 --gpus-per-node 8 --algo ring --bandwidth 1Gbps --intra 100GB/s,0 | flat /dev/stdin |
        sed -n 's/^\[0\]\.time_s\t//p')
    [ "$got" = 0.00112 ] || { echo "ring 8: $got"; return 1; }
    sed 's|^intra: .*|intra: {bandwidth: 900GB/s, latency: 2us}|' topologies/dgx-8x8.yaml >"$T/dgx.yaml"
    "$A" collective --topology "$T/dgx.yaml" --algo hierarchical --size 64MB --json - | nowall >"$T/i1" &&
        "$A" collective --topology dgx-8x8 --algo hierarchical --size 64MB --intra 900GB/s,2us --json - | nowall \
            >"$T/i2" && cmp -s "$T/i1" "$T/i2" || { echo "--intra on dgx-8x8 differs from the edited file"; return 1; }
}
t "collective --intra: closed forms" intra

# collective's columns widen to their widest cell: every line has as many
# fields as the header, and each field ends where its header ends.
columns() {
    "$A" collective --ranks 8 --algo ring --size 1KB,64GB --bandwidth 1Mbps >"$T/cols" || return 1
    awk 'NR == 1 { n = NF; for (i = 1; i <= NF; i++) { match(substr($0, p + 1), /[^ ]+/); p += RSTART + RLENGTH - 1;
                   end[i] = p } next }
         NF != n { print "line " NR ": " NF " fields"; bad = 1; exit }
         { p = 0; for (i = 1; i <= NF; i++) { match(substr($0, p + 1), /[^ ]+/); p += RSTART + RLENGTH - 1
           if (i != 2 && p != end[i]) { print "line " NR " field " i " ends at " p ", not " end[i]; bad = 1 } } }
         END { exit bad }' "$T/cols" || return 1
    grep -q ' 896000000140\.000 ' "$T/cols" || { echo "the long time is not whole"; return 1; }
}
t "collective: columns do not overflow" columns

# compare --json -: the JSON alone, the bytes --json FILE writes
compare_dash() {
    local syn=tests/data/calib-synthetic.json
    "$A" calibrate "$syn" --out "$T/cal.yaml" >/dev/null || return 1
    "$A" compare "$syn" --calibration "$T/cal.yaml" --json "$T/cmp.json" >"$T/cmp.table" || return 1
    "$A" compare "$syn" --calibration "$T/cal.yaml" --json - >"$T/cmp.stdout" || return 1
    [ -s "$T/cmp.table" ] && cmp -s "$T/cmp.json" "$T/cmp.stdout" || { echo "differs from --json FILE"; return 1; }
}
t "compare --json -" compare_dash

# calibrate --out -: the calibration alone, the bytes --out FILE writes
calibrate_dash() {
    local syn=tests/data/calib-synthetic.json
    "$A" calibrate "$syn" --out "$T/cal.yaml" >"$T/cal.table" 2>"$T/err" || return 1
    "$A" calibrate "$syn" --out - >"$T/cal.stdout" 2>"$T/err.stdout" || return 1
    grep -q '^class ' "$T/cal.table" || { echo "no table with --out FILE"; return 1; }
    cmp -s "$T/cal.yaml" "$T/cal.stdout" || { echo "differs from --out FILE"; return 1; }
    [ ! -s "$T/err.stdout" ] || { echo "stderr: $(cat "$T/err.stdout")"; return 1; }
}
t "calibrate --out -" calibrate_dash
