#!/bin/bash
# vallib — validate/vallib.bash, the helpers validate.sh reports with, on
# hand-made compare and measurement files (no root, no cluster): the
# held-out error sets (>= 256 KiB, 16-128 KiB, replays) and their count,
# median and maximum; the network line from two `cluster.sh stats`
# snapshots; the cases whose repetitions met a TCP retransmission timeout,
# with their error; where held-out predictions lie among their
# repetitions. Prints "ok <test>" or "FAIL <test>: why" per test.
set -u
T=$(mktemp -d "${TMPDIR:-/tmp}/arsim-vallib.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
export LC_ALL=C
root=$PWD
# shellcheck source=../clilib.bash
. tests/clilib.bash
# shellcheck source=../../validate/vallib.bash
. validate/vallib.bash

cat >"$T/cmp.json" <<'J'
{"cases": [
  {"mode": "allreduce", "bytes": 16384, "fitted": false, "rel_error": -0.30},
  {"mode": "allreduce", "bytes": 65536, "fitted": false, "rel_error": 0.10},
  {"mode": "allreduce", "bytes": 131072, "fitted": false, "rel_error": -0.05},
  {"mode": "allreduce", "bytes": 131072, "fitted": true, "rel_error": 0.90},
  {"mode": "allreduce", "bytes": 262144, "fitted": false, "rel_error": 0.02},
  {"mode": "allreduce", "bytes": 67108864, "fitted": false, "rel_error": -0.12},
  {"mode": "allreduce", "bytes": 4096, "fitted": false, "rel_error": 0.70},
  {"mode": "pingpong", "bytes": 262144, "fitted": false, "rel_error": 0.50},
  {"mode": "iteration", "bytes": 0, "fitted": false, "rel_error": -0.04},
  {"mode": "allreduce", "bytes": 1048576, "fitted": false, "rel_error": null}
]}
J

spread_counts() {
    printf '%s\n' '{"summary": [' \
        '{"group": "allreduce", "held_out": true, "cases": 9, "ranked_cases": 9, "faster_than_p10": 1, "within_p10_p90": 1, "slower_than_p90": 7},' \
        '{"group": "allreduce >= 256 KiB", "held_out": false, "cases": 5, "ranked_cases": 5, "faster_than_p10": 5, "within_p10_p90": 0, "slower_than_p90": 0},' \
        '{"group": "allreduce >= 256 KiB", "held_out": true, "cases": 6, "ranked_cases": 6, "faster_than_p10": 4, "within_p10_p90": 2, "slower_than_p90": 0}]}' >"$T/sp.json"
    flat "$T/sp.json" >"$T/sp.flat" || return 1
    local got
    got=$(spread "$T/sp.flat"); [ "$got" = "6 4 2 0" ] || { echo "spread: '$got', want '6 4 2 0'"; return 1; }
    flat "$T/cmp.json" >"$T/flat" || return 1
    got=$(spread "$T/flat"); [ "$got" = "0 0 0 0" ] || { echo "no repetitions: '$got', want '0 0 0 0'"; return 1; }
}

error_sets() {
    flat "$T/cmp.json" >"$T/flat" || return 1
    local got
    got=$(errors "$T/flat" heldbig | stats); [ "$got" = "2 0.07 0.12" ] || { echo "heldbig: '$got', want '2 0.07 0.12'"; return 1; }
    got=$(errors "$T/flat" heldsmall | stats); [ "$got" = "3 0.10 0.3" ] || { echo "heldsmall: '$got', want '3 0.10 0.3'"; return 1; }
    got=$(errors "$T/flat" iteration | stats); [ "$got" = "1 0.04 0.04" ] || { echo "iteration: '$got'"; return 1; }
    got=$(printf '' | stats); [ "$got" = "0 nan nan" ] || { echo "empty: '$got'"; return 1; }
    le 0.1 0.2 && ! le nan 0.2 && ! le 0.3 0.2 || { echo "le"; return 1; }
    [ "$(pct 0.0712)" = "7.1%" ] && [ "$(pct nan)" = "-" ] || { echo "pct"; return 1; }
}

network() {
    printf '%s\n' 'host tbf_drops tbf_overlim sw_drops sw_overlim tcp_retrans timeouts probes' \
        'ars-h0 1 10 0 5 100 2 7' 'ars-h1 0 3 1 0 50 0 1' >"$T/n0"
    printf '%s\n' 'host tbf_drops tbf_overlim sw_drops sw_overlim tcp_retrans timeouts probes' \
        'ars-h0 4 30 0 9 130 3 9' 'ars-h1 0 8 2 1 51 1 1' >"$T/n1"
    local got want="   network during the test: tbf drops 3 (host) + 1 (switch), overlimits 25 + 5; TCP 31 segments retransmitted, 2 timeouts, 2 loss probes"
    got=$(netgrowth "$T/n0" "$T/n1" "the test")
    [ "$got" = "$want" ] || { echo "got '$got'"; return 1; }
}

timeout_cases() {
    cat >"$T/meas.json" <<'J'
{"schema": "arsim-measurements/1", "cases": [
  {"mode": "allreduce", "algo": "butterfly", "ranks": 8, "bytes": 262144, "time_s": 0.031, "max_s": 0.125,
   "tcp": {"retrans": 12, "timeouts": 3, "loss_probes": 0, "slow_reps": 4, "slow_timeout_reps": 3}},
  {"mode": "allreduce", "algo": "ring", "ranks": 8, "bytes": 262144, "time_s": 0.02, "max_s": 0.021,
   "tcp": {"retrans": 0, "timeouts": 0, "loss_probes": 0, "slow_reps": 0, "slow_timeout_reps": 0}}
]}
J
    printf '%s\n' '{"cases": [{"rel_error": -0.75}, {"rel_error": 0.01}]}' >"$T/c2.json"
    local got want="   case 0 allreduce butterfly 262144 B: 3 TCP timeouts, 3 of 4 slow repetitions after one; median 31.000 ms, max 125.000 ms; error -75.0%"
    got=$(timeouts "$T/meas.json" "$T/c2.json")
    [ "$got" = "$want" ] || { echo "got '$got'"; return 1; }
    printf '%s\n' '{"cases": [{"mode": "pingpong", "bytes": 8, "time_s": 1e-4, "max_s": 2e-4}]}' >"$T/m3.json"
    got=$(timeouts "$T/m3.json" "$T/c2.json")
    [ "$got" = "   no case saw a TCP retransmission timeout" ] || { echo "none: got '$got'"; return 1; }
}

# pairs: within one setting every pair of predicted policies counted
# once; a pair closer than the larger of its two repetition spreads is a
# near-tie whatever the prediction says; another setting's cases never
# pair with these; unpredicted cases take no part.
policy_pairs() {
    cat >"$T/pm.json" <<'J'
{"cases": [
  {"mode": "iteration", "min_s": 0.990, "max_s": 1.010},
  {"mode": "iteration", "min_s": 1.195, "max_s": 1.205},
  {"mode": "iteration", "min_s": 1.200, "max_s": 1.240},
  {"mode": "iteration", "min_s": 2.0, "max_s": 2.0},
  {"mode": "iteration", "min_s": 2.9, "max_s": 3.1},
  {"mode": "allreduce", "min_s": 0.1, "max_s": 0.1}
]}
J
    # setting a: 1.0 | 1.2 | 1.23 (1.2-1.23 within 0.04: a tie); predicted 1.0 < 1.3 > 1.1
    # (a,b same; a,c same; b,c tie); setting b: 2.0 | 3.0 predicted 2.5 > 2.4 (differ); the
    # unpredicted case 5 of setting a pairs with nothing
    cat >"$T/pc.json" <<'J'
{"cases": [
  {"index": 0, "mode": "iteration", "config": "a.yaml", "batch": 8, "ranks": 4, "measured_s": 1.0, "predicted_s": 1.0},
  {"index": 1, "mode": "iteration", "config": "a.yaml", "batch": 8, "ranks": 4, "measured_s": 1.2, "predicted_s": 1.3},
  {"index": 2, "mode": "iteration", "config": "a.yaml", "batch": 8, "ranks": 4, "measured_s": 1.23, "predicted_s": 1.1},
  {"index": 3, "mode": "iteration", "config": "b.yaml", "batch": 8, "ranks": 4, "measured_s": 2.0, "predicted_s": 2.5},
  {"index": 4, "mode": "iteration", "config": "b.yaml", "batch": 8, "ranks": 4, "measured_s": 3.0, "predicted_s": 2.4},
  {"index": 5, "mode": "iteration", "config": "a.yaml", "batch": 8, "ranks": 4, "measured_s": 9.0, "predicted_s": null}
]}
J
    flat "$T/pm.json" >"$T/pm.flat" && flat "$T/pc.json" >"$T/pc.flat" || return 1
    local got
    got=$(pairs "$T/pc.flat" "$T/pm.flat"); [ "$got" = "2 1 1" ] || { echo "pairs: '$got', want '2 1 1'"; return 1; }
    printf '%s\n' '{"cases": []}' >"$T/p0.json"
    flat "$T/p0.json" >"$T/p0.flat" || return 1
    got=$(pairs "$T/p0.flat" "$T/pm.flat"); [ "$got" = "0 0 0" ] || { echo "no iterations: '$got'"; return 1; }
}

# consistent: the fixture's own calibration and compare agree (no line);
# each kind of disagreement is named: a missing case, an error that is not
# (predicted - measured) / measured, an unpredicted case without a note,
# no held-out all-reduce, a calibration without beta or gamma.
consistency() {
    local A=${ARSIM:?set ARSIM to the arsim binary} m=tests/data/calib-protocol.json got
    "$A" calibrate "$m" --out "$T/cc.yaml" >/dev/null && "$A" compare "$m" --calibration "$T/cc.yaml" --json "$T/cc.json" >/dev/null ||
        return 1
    flat "$m" >"$T/cm.flat" && flat "$T/cc.json" >"$T/cc.flat" || return 1
    got=$(consistent "$T/cm.flat" "$T/cc.flat" "$T/cc.yaml"); [ -z "$got" ] || { echo "fixture: '$got'"; return 1; }
    grep -v '^\.cases\[49\]\.' "$T/cc.flat" >"$T/c1.flat"
    got=$(consistent "$T/cm.flat" "$T/c1.flat" "$T/cc.yaml")
    [ "$got" = "compare: 49 cases for 50 measured" ] || { echo "missing case: '$got'"; return 1; }
    sed 's/^\(\.cases\[30\]\.rel_error\)	.*/\1	0.5/' "$T/cc.flat" >"$T/c2.flat"
    got=$(consistent "$T/cm.flat" "$T/c2.flat" "$T/cc.yaml")
    [[ $got == "compare: case 30: rel_error 0.5 is not ("* ]] && [ "$(wc -l <<<"$got")" = 1 ] || { echo "bad error: '$got'"; return 1; }
    sed 's/^\(\.cases\[31\]\.predicted_s\)	.*/\1	null/' "$T/cc.flat" >"$T/c3.flat"
    got=$(consistent "$T/cm.flat" "$T/c3.flat" "$T/cc.yaml")
    [ "$got" = "compare: case 31 neither predicted nor noted why" ] || { echo "unpredicted: '$got'"; return 1; }
    sed '/^\.cases\[[0-9]*\]\.fitted/s/false$/true/' "$T/cc.flat" >"$T/c4.flat"
    got=$(consistent "$T/cm.flat" "$T/c4.flat" "$T/cc.yaml")
    [ "$got" = "compare: no held-out all-reduce predicted" ] || { echo "none held out: '$got'"; return 1; }
    sed -e 's/beta_s_per_byte: [^,]*,/beta_s_per_byte: 0,/' -e '/^gamma_s_per_byte:/d' "$T/cc.yaml" >"$T/c5.yaml"
    got=$(consistent "$T/cm.flat" "$T/cc.flat" "$T/c5.yaml")
    [ "$got" = $'calibration: no inter class with alpha_s >= 0 and beta_s_per_byte > 0\ncalibration: no gamma_s_per_byte' ] ||
        { echo "calibration: '$got'"; return 1; }
    grep -v '^\.schema' "$T/cc.flat" >"$T/c6.flat"
    got=$(consistent "$T/cm.flat" "$T/c6.flat" "$T/cc.yaml")
    [ "$got" = "compare: no schema arsim-compare/1" ] || { echo "schema: '$got'"; return 1; }
}

# validate.sh --reanalyze: no root, no cluster — an earlier run's
# measurements (here the protocol fixture, 4 ranks, as a --short run's
# meas-4.json) calibrated, compared and checked again (by the mean, the
# median's compare beside; --statistic median swaps them, a bad one is
# one line, exit 2); a kept full run's 8-host fit takes the 4-host
# protocol unless --own-protocol, and β comes from the largest rings unless
# --no-ring-beta; the run's own folder is refused as --out.
reanalyze() {
    local A=${ARSIM:?set ARSIM to the arsim binary} run=$T/run out=$T/re
    mkdir -p "$run" && cp tests/data/calib-protocol.json "$run/meas-4.json" || return 1
    validate/validate.sh --short --reanalyze "$run" --out "$out" --arsim "$A" >"$T/re.log" 2>&1 ||
        { echo "exit $?: $(tail -3 "$T/re.log")"; return 1; }
    # --short checks form and consistency and reports the error without a bound
    grep -q '^outputs well-formed and consistent *every cluster *PASS$' "$T/re.log" &&
        grep -q '^held-out all-reduce >= 256 KiB: median |error| *0.0% over [0-9]* cases *INFO$' "$T/re.log" &&
        ! grep -q '<=' "$T/re.log" || { echo "short checks: $(grep -A4 '^== checks' "$T/re.log")"; return 1; }
    [ -f "$out/calib-4.yaml" ] && [ -f "$out/compare-4.json" ] && [ ! -e "$run/calib-4.yaml" ] ||
        { echo "calib/compare not in --out only"; return 1; }
    # judged by the mean by default; the median's compare beside it
    grep -q '^== checks (.*; each case judged by its mean)$' "$T/re.log" || { echo "no statistic in the checks"; return 1; }
    grep -Eq '"statistic":[[:space:]]*"mean"' "$out/compare-4.json" && grep -Eq '"statistic":[[:space:]]*"median"' "$out/compare-4-other.json" ||
        { echo "compare-4.json not by the mean or compare-4-other.json not by the median"; return 1; }
    validate/validate.sh --short --reanalyze "$run" --out "$T/re3" --arsim "$A" --statistic median >"$T/re3.log" 2>&1 ||
        { echo "--statistic median: exit $?"; return 1; }
    grep -Eq '"statistic":[[:space:]]*"median"' "$T/re3/compare-4.json" || { echo "--statistic median not passed on"; return 1; }
    # a run kept gzipped (validate/runs/) reads the same
    mkdir -p "$T/rungz" && gzip -c tests/data/calib-protocol.json >"$T/rungz/meas-4.json.gz" || return 1
    validate/validate.sh --short --reanalyze "$T/rungz" --out "$T/regz" --arsim "$A" >"$T/regz.log" 2>&1 ||
        { echo "gzipped run: exit $?: $(tail -3 "$T/regz.log")"; return 1; }
    # the same comparison but for the two file paths it names
    diff <(grep -Ev '"(measurements|calibration)":' "$T/regz/compare-4.json") \
        <(grep -Ev '"(measurements|calibration)":' "$out/compare-4.json") >/dev/null ||
        { echo "gzipped run compares otherwise"; return 1; }
    validate/validate.sh --short --reanalyze "$run" --out "$T/re5" --arsim "$A" --carry-protocol >"$T/re5.log" 2>&1 ||
        { echo "--carry-protocol: exit $?: $(tail -3 "$T/re5.log")"; return 1; }
    # a kept full run (two clusters): the 8-host fit takes the 4-host protocol unless --own-protocol, and finds
    # the bucket's peak rate there (its ping-pong: ~18 ns/B up to ~180 KB, 42 ns/B beyond)
    validate/validate.sh --reanalyze validate/runs/ompi16 --out "$T/re6" --arsim "$A" >"$T/re6.log" 2>&1
    grep -q '^  inter_protocol_from: ".*/calib-4.yaml"$' "$T/re6/calib-8.yaml" &&
        ! grep -q 'inter_protocol_from' "$T/re6/calib-4.yaml" &&
        grep -Eq '^  inter_peak_bytes_per_s: [0-9.e+]+$' "$T/re6/calib-8.yaml" &&
        grep -q '^peak inter: the burst.s credit passes at ' "$T/re6/calibrate-8.txt" ||
        { echo "carried by default, with a peak: $(tail -3 "$T/re6.log")"; return 1; }
    # β from the 16 and 64 MiB rings by default: run 16 orders all 10 pairs of policies that lie apart
    # beyond their repetitions' spread (2 more are near-ties); with --no-ring-beta the ping-pong rule gives
    # the β, the 4-host rings then want a host queue (128 KiB halves their rms.err) and with it the 10
    # pairs are in order too
    grep -q "^beta inter: held at the largest rings' slope" "$T/re6/calibrate-4.txt" &&
        grep -q '^policy ranking measured = predicted *10 of 10 pairs same *PASS$' "$T/re6.log" &&
        grep -q "^policy pairs within their repetitions' spread *2 near-ties, not ranked *INFO$" "$T/re6.log" ||
        { echo "rings' beta: $(grep -E '^beta|ranking' "$T/re6/calibrate-4.txt" "$T/re6.log")"; return 1; }
    validate/validate.sh --reanalyze validate/runs/ompi16 --out "$T/re9" --arsim "$A" --no-ring-beta >"$T/re9.log" 2>&1
    ! grep -q "^beta inter: held at the largest rings' slope" "$T/re9/calibrate-4.txt" &&
        grep -q '^host_queue inter: 131072 B ' "$T/re9/calibrate-4.txt" &&
        grep -q '^policy ranking measured = predicted *10 of 10 pairs same *PASS$' "$T/re9.log" ||
        { echo "--no-ring-beta: $(grep -E '^beta|ranking' "$T/re9/calibrate-4.txt" "$T/re9.log")"; return 1; }
    # a run kept from another clone (run 22, its scenario named by that clone's absolute path, here by
    # one that surely is gone): re-analysed with this clone's scenario, every replay predicted
    mkdir -p "$T/run22"
    for n in 4 8; do
        gzip -dc "validate/runs/ompi22/meas-$n.json.gz" | sed "s|\"/[^\"]*/validate/vgg16-small.yaml\"|\"$T/gone/validate/vgg16-small.yaml\"|" \
            >"$T/run22/meas-$n.json"
    done
    validate/validate.sh --reanalyze "$T/run22" --out "$T/re22" --arsim "$A" >"$T/re22.log" 2>&1
    grep -q '^   its scenario /.*/validate/vgg16-small.yaml is gone: .*/validate/vgg16-small.yaml read instead$' \
        "$T/re22.log" && grep -q '^iteration replays: .* over 8  *PASS$' "$T/re22.log" ||
        { echo "relocated scenario: $(grep -E 'gone|^iteration' "$T/re22.log")"; return 1; }
    validate/validate.sh --reanalyze validate/runs/ompi16 --out "$T/re7" --arsim "$A" --own-protocol >"$T/re7.log" 2>&1
    [ -f "$T/re7/calib-8.yaml" ] && ! grep -q 'inter_protocol_from' "$T/re7/calib-8.yaml" ||
        { echo "--own-protocol: $(tail -3 "$T/re7.log")"; return 1; }
    # with MPICH each cluster fits its own by default
    validate/validate.sh --reanalyze validate/runs/mpich7 --mpi mpich --out "$T/re8" --arsim "$A" >"$T/re8.log" 2>&1
    [ -f "$T/re8/calib-8.yaml" ] && ! grep -q 'inter_protocol_from' "$T/re8/calib-8.yaml" ||
        { echo "--mpi mpich: carried: $(tail -3 "$T/re8.log")"; return 1; }
    # MPICH's own all-reduce is predicted by MPICH's selection table (its
    # blocking MPI_Allreduce in run 7: Rabenseifner from 4 KiB up on 4 ranks)
    grep -q '"how":[[:space:]]*"sim rabenseifner (MPICH.s selection, MPI_Allreduce)"' "$T/re8/compare-4.json" ||
        { echo "--mpi mpich: mpi not predicted by MPICH's selection: $(grep -m1 -o '"how":[[:space:]]*"sim [^"]*(best[^"]*"' "$T/re8/compare-4.json")"; return 1; }
    # MPICH run 11 measured its own all-reduce as MPI_Iallreduce (the case's
    # "call"): predicted by the nonblocking table, docs/explanation/validation-history-2.md's 3.8 % median and 23.9 % maximum (34.2 % before
    # progress in_mpi let a step's exchange cross after a reduction; 4.2 and 23.7 % with each repetition
    # predicted on its own network), and the 4-host ranking right
    validate/validate.sh --reanalyze validate/runs/mpich11 --mpi mpich --out "$T/re11" --arsim "$A" >"$T/re11.log" 2>&1
    grep -q '"how":[[:space:]]*"sim rabenseifner (MPICH.s selection, MPI_Iallreduce)"' "$T/re11/compare-8.json" &&
        grep -q "median |error| <= 10.0% 3.8% over 60 cases" "$T/re11.log" &&
        grep -q "max |error| <= 25.0% 23.9% *PASS" "$T/re11.log" &&
        grep -q '^policy ranking measured = predicted *12 of 12 pairs same *PASS$' "$T/re11.log" ||
        { echo "mpich11: $(grep -m1 'median |error|' "$T/re11.log")"; return 1; }
    validate/validate.sh --short --reanalyze "$run" --out "$T/re10" --arsim "$A" --mpi-call wait >"$T/re10.log" 2>&1
    [ $? = 2 ] && [ "$(wc -l <"$T/re10.log")" = 1 ] && grep -q "^validate.sh: --mpi-call: 'wait' is not a call" "$T/re10.log" ||
        { echo "--mpi-call wait: $(cat "$T/re10.log")"; return 1; }
    # what only a measurement uses is refused with --reanalyze, not ignored
    validate/validate.sh --reanalyze "$run" --out "$T/re12" --arsim "$A" --mpi-call allreduce >"$T/re12.log" 2>&1
    [ $? = 2 ] && [ "$(wc -l <"$T/re12.log")" = 1 ] && [ ! -e "$T/re12" ] &&
        grep -q "^validate.sh: --mpi-call: only a measurement uses it; expected no --mpi-call with --reanalyze" "$T/re12.log" ||
        { echo "--reanalyze --mpi-call: $(cat "$T/re12.log")"; return 1; }
    validate/validate.sh --short --reanalyze "$run" --out "$T/re13" --arsim "$A" --median-bound 0.2 >"$T/re13.log" 2>&1
    [ $? = 2 ] && [ "$(wc -l <"$T/re13.log")" = 1 ] && [ ! -e "$T/re13" ] &&
        grep -q "^validate.sh: --median-bound: given with --short; expected it only with the full loop" "$T/re13.log" ||
        { echo "--short --median-bound: $(cat "$T/re13.log")"; return 1; }
    validate/validate.sh --short --reanalyze "$run" --out "$T/re4" --arsim "$A" --statistic mode >"$T/re4.log" 2>&1
    [ $? = 2 ] && [ "$(wc -l <"$T/re4.log")" = 1 ] && grep -q "^validate.sh: --statistic: 'mode' is not a statistic" "$T/re4.log" ||
        { echo "--statistic mode: $(cat "$T/re4.log")"; return 1; }
    validate/validate.sh --short --reanalyze "$run" --out "$run" --arsim "$A" >"$T/re2.log" 2>&1
    [ $? = 2 ] && grep -q "is the run's own directory" "$T/re2.log" || { echo "--out = RUN not refused: $(cat "$T/re2.log")"; return 1; }
}

# validate/rings_beta.sh (docs/explanation/validation-history-2.md, "The rings' β"): the queue scan on kept
# run 20 shows the two modes the table of docs/explanation/validation-history-2.md names; a bad experiment is one
# line, exit 2.
rings_beta() {
    local out
    out=$(validate/rings_beta.sh queue validate/runs/ompi20 "$T/rbq" 2>&1) || { echo "queue: exit $?"; return 1; }
    grep -q '^ *0 B  measured 99.6092 predicted 106.6644 +7.1%$' <<<"$out" &&
        grep -q '^ *8000 B  measured 99.6092 predicted 74.2787 -25.4%$' <<<"$out" || { echo "queue scan: $out"; return 1; }
    out=$(validate/rings_beta.sh bogus 2>&1)
    [ $? = 2 ] && [ "$(wc -l <<<"$out")" = 1 ] && grep -q "^rings_beta.sh: 'bogus' is not an experiment" <<<"$out" ||
        { echo "bad experiment: $out"; return 1; }
}

t vallib_error_sets error_sets
t vallib_spread spread_counts
t vallib_network network
t vallib_timeouts timeout_cases
t vallib_pairs policy_pairs
t vallib_consistent consistency
t vallib_reanalyze reanalyze
t vallib_rings_beta rings_beta
