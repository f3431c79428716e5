#!/bin/bash
# calib — command-line tests of `arsim calibrate` and `arsim compare`
# against $ARSIM, from the repository root: the calibrate -> compare round
# trip on tests/data/calib-synthetic.json (times from the α-β-γ closed
# forms, made by tests/data/gen_calib_synthetic.sh) recovers α, β and γ
# and predicts every case with ~0 error; the calibration works in a
# scenario; --json, --plot and the held-out marking; bad input exits 2
# with one line "file:line:col: ..." and leaves no output file.
# Prints "ok <test>" or "FAIL <test>: why" per test.
set -u
A=${ARSIM:?set ARSIM to the arsim binary}
SYN=tests/data/calib-synthetic.json
T=$(mktemp -d "${TMPDIR:-/tmp}/arsim-calib.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
export LC_ALL=C

# shellcheck source=../clilib.bash
. tests/clilib.bash
# yaml_num FILE CLASS KEY — the number after KEY: inside the flow map of CLASS.
yaml_num() { sed -n "s/^$2: {.*$3: \([^,}]*\).*/\1/p" "$1"; }

generator() {
    tests/data/gen_calib_synthetic.sh >"$T/gen.json" || { echo "generator failed"; return 1; }
    cmp -s "$T/gen.json" "$SYN" || { echo "tests/data/gen_calib_synthetic.sh does not reproduce $SYN"; return 1; }
}

calibrate_synthetic() {
    "$A" calibrate "$SYN" --out "$T/cal.yaml" >"$T/table" 2>"$T/err" || { echo "exit $?: $(cat "$T/err")"; return 1; }
    [ ! -s "$T/err" ] || { echo "stderr: $(cat "$T/err")"; return 1; }
    [ ! -e "$T/cal.yaml.tmp" ] || { echo "temporary file left"; return 1; }
    local a b g
    a=$(yaml_num "$T/cal.yaml" inter alpha_s); b=$(yaml_num "$T/cal.yaml" inter beta_s_per_byte)
    g=$(sed -n 's/^gamma_s_per_byte: //p' "$T/cal.yaml")
    near "$a" 40e-6 1e-6 || { echo "alpha $a, want 4e-05"; return 1; }
    near "$b" 8.4e-9 1e-6 || { echo "beta $b, want 8.4e-09"; return 1; }
    near "$g" 2e-10 1e-6 || { echo "gamma $g, want 2e-10"; return 1; }
    grep -Eq '^class +alpha\(us\) +beta\(ns/B\)' "$T/table" || { echo "no fit table"; return 1; }
    grep -Eq '^inter +40\.000 +8\.40000 ' "$T/table" || { echo "no inter fit row 40 us, 8.4 ns/B"; return 1; }
    # one residual row per point: 8 ping-pong + 7 ring (inter), 8 reduce (gamma)
    local ni ng
    ni=$(grep -Ec '^inter +[0-9]+ +(pingpong inter|allreduce ring) ' "$T/table")
    ng=$(grep -Ec '^gamma +[0-9]+ +reduce ' "$T/table")
    [ "$ni" -eq 15 ] && [ "$ng" -eq 8 ] || { echo "$ni inter and $ng gamma residual rows, want 15 and 8"; return 1; }
    grep -q 'inter_burst_bytes: 0$' "$T/cal.yaml" || { echo "a burst found in burst-free data"; return 1; }
}

compare_roundtrip() {
    "$A" compare "$SYN" --calibration "$T/cal.yaml" --json "$T/cmp.json" >"$T/ctable" 2>"$T/err" ||
        { echo "exit $?: $(cat "$T/err")"; return 1; }
    flat "$T/cmp.json" >"$T/cmp.flat" || return 1
    local n bad fitted
    n=$(grep -c '^\.cases\[[0-9]*\]\.rel_error	' "$T/cmp.flat")
    [ "$n" -eq 58 ] || { echo "$n predicted cases, want 58"; return 1; }
    bad=$(awk -F'\t' '$1 ~ /\.rel_error$/ { v = $2 < 0 ? -$2 : $2; if (v > 1e-6) print $1, $2 }' "$T/cmp.flat")
    [ -z "$bad" ] || { echo "errors beyond 1e-6: $bad"; return 1; }
    # fitted: 8 ping-pong, 8 reduce, 7 ring; held out: the other 35 all-reduces
    fitted=$(grep -c '\.fitted	true$' "$T/cmp.flat")
    [ "$fitted" -eq 23 ] || { echo "$fitted fitted cases, want 23"; return 1; }
    grep -Eq '^allreduce >= 256 KiB +held-out +20 +0\.0% +0\.0%$' "$T/ctable" ||
        { echo "no held-out >= 256 KiB summary row with 0.0% errors"; return 1; }
    grep -Eq '^ +51 +allreduce mpi +4 +4096 .* held +sim butterfly \(Open MPI tuned\)$' "$T/ctable" ||
        { echo "mpi at 4 KiB not predicted as Open MPI's recursive doubling"; return 1; }
}

fit_pingpong_only() {
    "$A" calibrate "$SYN" --fit pingpong --out "$T/calp.yaml" >/dev/null 2>"$T/err" || { cat "$T/err"; return 1; }
    "$A" compare "$SYN" --calibration "$T/calp.yaml" >"$T/ptable" 2>"$T/err" || { cat "$T/err"; return 1; }
    grep -Eq '^ +[0-9]+ +allreduce ring .* held +sim ring$' "$T/ptable" || { echo "ring not held out"; return 1; }
    grep -Eq '^ +[0-9]+ +allreduce ring .* fit ' "$T/ptable" && { echo "ring marked fitted"; return 1; }
    grep -q '^  modes: \[pingpong\]$' "$T/calp.yaml" || { echo "fit.modes not [pingpong]"; return 1; }
}

scenario_uses_it() {
    "$A" check tests/bad/support/ok.yaml --set "cluster.calibration=$T/cal.yaml" >/dev/null 2>"$T/err" ||
        { echo "exit $?: $(cat "$T/err")"; return 1; }
}

plots() {
    command -v gnuplot >/dev/null || return 0
    "$A" compare "$SYN" --calibration "$T/cal.yaml" --plot "$T/plots" >/dev/null 2>"$T/err" ||
        { echo "exit $?: $(cat "$T/err")"; return 1; }
    local f
    for f in calib-scatter calib-error; do
        for e in png svg dat; do [ -s "$T/plots/$f.$e" ] || { echo "no $f.$e"; return 1; }; done
    done
}

# burst_cal FILE — a calibration of α 40 us, β 8.4 ns/B and a 100 kB
# token bucket (burst) between hosts.
burst_cal() {
    printf '%s\n' 'inter: {alpha_s: 4e-05, beta_s_per_byte: 8.4e-09}' \
        'fit: {inter_burst_bytes: 100000, inter_rms_rel: 0}' >"$1"
}

# a calibration's burst b is each link's token bucket: ping-pong is
# α + β·max(0, n - b); a 2-rank ring of n bytes (two steps of n/2, the
# second after an idle gap of α that refills α/β) is 2α + β(n - b - α/β).
burst() {
    burst_cal "$T/calb.yaml"
    printf '%s\n' '{"schema": "arsim-measurements/1", "env": {"ranks": 2, "hosts": 2, "date": "x"}, "cases": [' \
        '{"mode": "pingpong", "class": "inter", "ranks": 2, "bytes": 65536, "time_s": 1e-3},' \
        '{"mode": "pingpong", "class": "inter", "ranks": 2, "bytes": 262144, "time_s": 1e-3},' \
        '{"mode": "allreduce", "algo": "ring", "ranks": 2, "bytes": 1048576, "time_s": 1e-2}]}' >"$T/burst.json"
    "$A" compare "$T/burst.json" --calibration "$T/calb.yaml" --json "$T/bcmp.json" >/dev/null 2>"$T/err" ||
        { echo "exit $?: $(cat "$T/err")"; return 1; }
    flat "$T/bcmp.json" >"$T/bcmp.flat" || return 1
    local k got want
    for k in "0 4e-05" "1 $(awk 'BEGIN { printf "%.12g", 4e-05 + (262144 - 100000) * 8.4e-09 }')" \
             "2 $(awk 'BEGIN { printf "%.12g", 8e-05 + (1048576 - 100000 - 4e-05 / 8.4e-09) * 8.4e-09 }')"; do
        set -- $k
        got=$(awk -F'\t' -v p=".cases[$1].predicted_s" '$1 == p { print $2 }' "$T/bcmp.flat")
        [ -n "$got" ] && near "$got" "$2" 1e-6 || { echo "case $1 predicted '$got', want $2"; return 1; }
    done
}

# iteration cases: compare's prediction is `arsim run`'s iteration time of
# the same scenario, policy and batch with the calibration set (8 ranks:
# cluster.nodes=8), and the measured and predicted rankings are compared.
iteration() {
    "$A" run tests/bad/support/ok.yaml --set "cluster.calibration=$T/cal.yaml" --json "$T/run.json" >/dev/null 2>&1 &&
        "$A" run tests/bad/support/ok.yaml --set "cluster.calibration=$T/cal.yaml" --set cluster.nodes=8 \
            --json "$T/run8.json" >/dev/null 2>&1 || { echo "arsim run failed"; return 1; }
    flat "$T/run.json" >"$T/run.flat" && flat "$T/run8.json" >"$T/run8.flat" || return 1
    local it='{"mode": "iteration", "config": "tests/bad/support/ok.yaml", "batch": 64, "scale": 1, "sets": []'
    printf '%s\n' '{"schema": "arsim-measurements/1", "env": {"ranks": 4, "hosts": 4, "date": "x"}, "cases": [' \
        "$it, \"policy\": \"ddp\", \"ranks\": 4, \"time_s\": 2.0}," \
        "$it, \"policy\": \"thesis\", \"ranks\": 4, \"time_s\": 1.5}," \
        "$it, \"policy\": \"thesis\", \"ranks\": 8, \"time_s\": 1.5}]}" >"$T/iter.json"
    "$A" compare "$T/iter.json" --calibration "$T/cal.yaml" --json "$T/icmp.json" >"$T/itable" 2>"$T/err" ||
        { echo "exit $?: $(cat "$T/err")"; return 1; }
    flat "$T/icmp.json" >"$T/icmp.flat" || return 1
    # run.json results are batch-major, policies in file order: [2] ddp at 64, [3] thesis at 64
    local k want got
    for k in "0 2 run" "1 3 run" "2 3 run8"; do
        set -- $k
        want=$(awk -F'\t' -v p=".results[$2].iteration_s" '$1 == p { print $2 }' "$T/$3.flat")
        got=$(awk -F'\t' -v p=".cases[$1].predicted_s" '$1 == p { print $2 }' "$T/icmp.flat")
        [ -n "$want" ] && [ -n "$got" ] && near "$got" "$want" 1e-9 ||
            { echo "case $1 predicted '$got', arsim run says '$want'"; return 1; }
    done
    grep -q '^\.rankings\[0\]\.same	false$' "$T/icmp.flat" || { echo "ranking not marked different"; return 1; }
    grep -Eq '^ranking, tests/bad/support/ok.yaml batch 64 on 4 ranks, fastest first: measured thesis ddp; predicted ddp thesis; DIFFERENT$' \
        "$T/itable" || { echo "no ranking line"; return 1; }
}

# an iteration case of p ranks is predicted with the ranks issuing each
# collective as far apart as mpibench's own p-rank all-reduces left their
# barrier: variation.jitter = the median start_spread_s x (p+1)/(p-1) over
# those cases (not `mpi`, not other rank counts) — `arsim run` with that
# jitter is the oracle.
iteration_jitter() {
    local w
    w=$(awk 'BEGIN { printf "%.17g", 2e-4 * 5 / 3 }')
    "$A" run tests/bad/support/ok.yaml --set "cluster.calibration=$T/cal.yaml" --set variation.dist=none \
        --set "variation.jitter=${w}s" --json "$T/runj.json" >/dev/null 2>&1 || { echo "arsim run failed"; return 1; }
    flat "$T/runj.json" >"$T/runj.flat" || return 1
    local ar='{"mode": "allreduce", "algo": "ring", "bytes": 65536, "time_s": 1e-3'
    printf '%s\n' '{"schema": "arsim-measurements/1", "env": {"ranks": 4, "hosts": 4, "date": "x"}, "cases": [' \
        "$ar, \"ranks\": 4, \"start_spread_s\": 1e-4}," "$ar, \"ranks\": 4, \"start_spread_s\": 3e-4}," \
        "$ar, \"ranks\": 4, \"start_spread_s\": 2e-4}," "$ar, \"ranks\": 8, \"start_spread_s\": 9e-3}," \
        '{"mode": "allreduce", "algo": "mpi", "bytes": 65536, "time_s": 1e-3, "ranks": 4, "start_spread_s": 9e-3},' \
        '{"mode": "iteration", "config": "tests/bad/support/ok.yaml", "batch": 64, "scale": 1, "sets": [], "policy": "thesis", "ranks": 4, "time_s": 1.5}]}' \
        >"$T/iterj.json"
    "$A" compare "$T/iterj.json" --calibration "$T/cal.yaml" --json "$T/ijcmp.json" >"$T/ijtable" 2>"$T/err" ||
        { echo "exit $?: $(cat "$T/err")"; return 1; }
    flat "$T/ijcmp.json" >"$T/ijcmp.flat" || return 1
    local want got plain
    want=$(awk -F'\t' '$1 == ".results[3].iteration_s" { print $2 }' "$T/runj.flat")
    plain=$(awk -F'\t' '$1 == ".results[3].iteration_s" { print $2 }' "$T/run.flat")
    got=$(awk -F'\t' '$1 == ".cases[5].predicted_s" { print $2 }' "$T/ijcmp.flat")
    [ -n "$want" ] && [ -n "$got" ] && near "$got" "$want" 1e-9 ||
        { echo "predicted '$got', arsim run with jitter ${w}s says '$want'"; return 1; }
    ! near "$got" "$plain" 1e-6 || { echo "the jitter changed nothing ($got, plain $plain)"; return 1; }
    grep -q 'train thesis batch 64, issues up to 0.333 ms apart (start spread)' "$T/ijtable" ||
        { echo "no jitter in the case's line: $(grep iteration "$T/ijtable")"; return 1; }
}

# bad_calib NAME JSON-TEXT PATTERN — calibrate exits 2, one stderr line matching PATTERN, no --out.
bad_calib() {
    local f="$T/$1.json" out="$T/$1.yaml"
    printf '%s' "$2" >"$f"
    "$A" calibrate "$f" --out "$out" >/dev/null 2>"$T/err"
    local rc=$?
    [ $rc -eq 2 ] || { echo "exit $rc, want 2"; return 1; }
    [ "$(wc -l <"$T/err")" -eq 1 ] || { echo "stderr not one line: $(cat "$T/err")"; return 1; }
    grep -Eq "^$f:$3" "$T/err" || { echo "stderr '$(cat "$T/err")' does not match $f:$3"; return 1; }
    [ ! -e "$out" ] && [ ! -e "$out.tmp" ] || { echo "output file created"; return 1; }
}

H='{"schema": "arsim-measurements/1", "cases": [
{"mode": "pingpong", "class": "inter", "ranks": 2, "bytes": 8, "time_s": 5e-05},
'
bad_inputs() {
    bad_calib schema '{"schema": "arsim-measurements/7", "cases": []}' '1:12: unknown schema' || return 1
    bad_calib negtime "$H"'{"mode": "pingpong", "class": "inter", "ranks": 2, "bytes": 4096, "time_s": -1e-4}]}' \
        '3:77: case 1: .time_s. is zero or negative' || return 1
    bad_calib fracbytes "$H"'{"mode": "pingpong", "class": "inter", "ranks": 2, "bytes": 40.5, "time_s": 1e-4}]}' \
        '3:61: case 1: .bytes. is 40.5, not a whole number' || return 1
    bad_calib ranks1 "$H"'{"mode": "allreduce", "algo": "ring", "ranks": 1, "bytes": 4096, "time_s": 1e-3}]}' \
        '3:48: case 1: .ranks. is 1' || return 1
    bad_calib toofew "$H"'{"mode": "pingpong", "class": "inter", "ranks": 2, "bytes": 8, "time_s": 6e-05}]}' \
        '2:1: too few points for the inter fit' || return 1
    bad_calib nothing '{"schema": "arsim-measurements/1", "cases": [{"mode": "reduce", "ranks": 4, "bytes": 8,
"time_s": 1e-9}]}' '1:1: no pingpong or ring all-reduce cases' || return 1
    bad_calib pairs0 "$H"'{"mode": "exchange", "class": "inter", "ranks": 2, "bytes": 4096, "delay_s": 0, "pairs": 0, "time_s": 1e-4}]}' \
        "3:90: case 1: bad 'pairs'; expected the pairs exchanging at once" || return 1
    bad_calib notjson '{"schema": "arsim-measurements/1", "cases": [' '1:[0-9]+: not valid JSON' || return 1
    bad_calib empty '' '1:1: empty file' || return 1
}

# every repetition listed ("reps_s"): compare ranks the prediction among
# them — the share that ran faster, a tie counting half — and counts the
# predictions faster than the 10th percentile, within the 10th to 90th,
# slower than the 90th. Each ping-pong below is predicted at exactly α
# (40 us, under the 100 kB burst).
reps_rank() {
    burst_cal "$T/calr.yaml"
    local p='{"mode": "pingpong", "class": "inter", "ranks": 2, "bytes": 64'
    printf '%s\n' '{"schema": "arsim-measurements/1", "env": {"ranks": 2, "hosts": 2, "date": "x"}, "cases": [' \
        "$p, \"time_s\": 4.5e-5, \"reps\": 4, \"min_s\": 3e-5, \"max_s\": 6e-5, \"reps_s\": [6e-5, 3e-5, 5e-5, 4e-5]}," \
        "$p, \"time_s\": 6e-5, \"reps_s\": [5e-5, 7e-5, 6e-5]}," \
        "$p, \"time_s\": 2e-5, \"reps_s\": [1e-5, 2e-5, 3e-5]}," \
        "$p, \"time_s\": 5e-5}]}" >"$T/reps.json"
    "$A" compare "$T/reps.json" --calibration "$T/calr.yaml" --json "$T/rcmp.json" >"$T/rtable" 2>"$T/err" ||
        { echo "exit $?: $(cat "$T/err")"; return 1; }
    flat "$T/rcmp.json" >"$T/rcmp.flat" || return 1
    local k got
    for k in "0 0.375" "1 0" "2 1"; do
        set -- $k
        got=$(awk -F'\t' -v p=".cases[$1].rank" '$1 == p { print $2 }' "$T/rcmp.flat")
        [ -n "$got" ] && near "$got" "$2" 1e-12 || { echo "case $1 rank '$got', want $2"; return 1; }
    done
    grep -q '^\.cases\[3\]\.rank	' "$T/rcmp.flat" && { echo "a rank for a case without repetitions"; return 1; }
    for k in "ranked_cases 3" "faster_than_p10 1" "within_p10_p90 1" "slower_than_p90 1"; do
        set -- $k
        grep -q "^\.summary\[0\]\.$1	$2\$" "$T/rcmp.flat" || { echo "summary $1 not $2"; return 1; }
    done
    grep -Eq '^pingpong +held-out +3 +1 +1 +1$' "$T/rtable" || { echo "no spread row 3 1 1 1"; return 1; }
    grep -Eq '^ +0 +pingpong inter +2 +64 .* 38% +held ' "$T/rtable" || { echo "no rank column 38%"; return 1; }
}

# --statistic mean: each case judged by the mean of its repetitions
# without the slowest and fastest tenth (floor(n / 10) each end; below 10
# repetitions the plain mean), the listed median where there are none.
# The ping-pongs are predicted at α = 40 us; rankings and the header follow.
statistic_mean() {
    burst_cal "$T/calr.yaml"
    local p='{"mode": "pingpong", "class": "inter", "ranks": 2, "bytes": 64' k got
    printf '%s\n' '{"schema": "arsim-measurements/1", "env": {"ranks": 2, "hosts": 2, "date": "x"}, "cases": [' \
        "$p, \"time_s\": 4e-5, \"reps_s\": [6e-5, 4e-5, 4e-5, 3e-5, 9e-4, 4e-5, 6e-5, 4e-5, 6e-5, 4e-5]}," \
        "$p, \"time_s\": 4.5e-5, \"reps_s\": [6e-5, 3e-5, 5e-5, 4e-5]}," \
        "$p, \"time_s\": 5e-5}]}" >"$T/mean.json"
    "$A" compare "$T/mean.json" --calibration "$T/calr.yaml" --statistic mean --json "$T/mcmp.json" >"$T/mtable" \
        2>"$T/err" || { echo "exit $?: $(cat "$T/err")"; return 1; }
    flat "$T/mcmp.json" >"$T/mcmp.flat" || return 1
    grep -q '^\.statistic	mean$' "$T/mcmp.flat" || { echo "no statistic: mean"; return 1; }
    # 4.75e-5: 3e-5 and 9e-4 trimmed; 4.5e-5: the plain mean of four; 5e-5: no repetitions listed
    for k in "0 4.75e-05 -0.157894736842105" "1 4.5e-05 -0.111111111111111" "2 5e-05 -0.2"; do
        set -- $k
        got=$(awk -F'\t' -v p=".cases[$1].measured_s" '$1 == p { print $2 }' "$T/mcmp.flat")
        near "$got" "$2" 1e-12 || { echo "case $1 measured '$got', want $2"; return 1; }
        got=$(awk -F'\t' -v p=".cases[$1].rel_error" '$1 == p { print $2 }' "$T/mcmp.flat")
        near "$got" "$3" 1e-9 || { echo "case $1 error '$got', want $3"; return 1; }
    done
    grep -q 'measured = the mean of each case.s repetitions without their slowest and fastest tenth' "$T/mtable" ||
        { echo "no statistic in the header"; return 1; }
    grep -Eq '^ +0 +pingpong inter +2 +64 +0\.0475 +0\.0400 +-15\.8% ' "$T/mtable" || { echo "row 0 not by the mean"; return 1; }
    # the default is the median, as before
    "$A" compare "$T/mean.json" --calibration "$T/calr.yaml" --json "$T/dcmp.json" >/dev/null 2>"$T/err" ||
        { echo "exit $?: $(cat "$T/err")"; return 1; }
    flat "$T/dcmp.json" | grep -q '^\.cases\[0\]\.measured_s	4e-05$' || { echo "median default changed"; return 1; }
    flat "$T/dcmp.json" | grep -q '^\.statistic	median$' || { echo "no statistic: median"; return 1; }
}

bad_options() {
    local rc
    "$A" calibrate "$SYN" --fit tree --out "$T/x.yaml" >/dev/null 2>"$T/err"; rc=$?
    [ $rc -eq 2 ] && grep -q '^--fit: unknown .tree.' "$T/err" || { echo "--fit tree: exit $rc: $(cat "$T/err")"; return 1; }
    "$A" calibrate "$SYN" --out "$T/no/such/dir/x.yaml" >/dev/null 2>"$T/err"; rc=$?
    [ $rc -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] || { echo "--out bad dir: exit $rc"; return 1; }
    "$A" calibrate "$T/missing.json" >/dev/null 2>"$T/err"; rc=$?
    [ $rc -eq 2 ] && grep -q "^$T/missing.json:1:1: cannot read" "$T/err" || { echo "missing file: exit $rc"; return 1; }
    [ ! -e "$T/x.yaml" ] || { echo "output created"; return 1; }
    "$A" compare "$SYN" --json "$T/c.json" >/dev/null 2>"$T/err"; rc=$?
    [ $rc -eq 2 ] && grep -q '^--calibration: missing' "$T/err" || { echo "no --calibration: exit $rc"; return 1; }
    printf 'inter: {alpha_s: -1, beta_s_per_byte: 1e-8}\n' >"$T/neg.yaml"
    "$A" compare "$SYN" --calibration "$T/neg.yaml" --json "$T/c.json" >/dev/null 2>"$T/err"; rc=$?
    [ $rc -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "^$T/neg.yaml:1:[0-9]*:" "$T/err" ||
        { echo "negative alpha: exit $rc: $(cat "$T/err")"; return 1; }
    [ ! -e "$T/c.json" ] || { echo "--json written on bad input"; return 1; }
}

t calib_generator generator
t calib_synthetic_fit calibrate_synthetic
t calib_compare_roundtrip compare_roundtrip
t calib_fit_pingpong_only fit_pingpong_only
t calib_in_scenario scenario_uses_it
t calib_compare_plots plots
t calib_iteration iteration
t calib_iteration_jitter iteration_jitter
t calib_burst burst
t calib_reps_rank reps_rank
t calib_statistic_mean statistic_mean
t calib_bad_files bad_inputs
t calib_bad_options bad_options
