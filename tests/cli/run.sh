#!/bin/bash
# run — positive command-line tests of `arsim run`, `check`, `collective`
# and `list` against $ARSIM, from the repository root: exit status, the
# table, the JSON/CSV/trace files and their keys, --set, determinism, and
# the closed forms the outputs must agree with (docs/dev/design.md §7.7). JSON is read
# with tests/cli/jsonflat.awk (a strict validator; no python or jq).
# Prints "ok <test>" or "FAIL <test>: why" per test.
set -u
A=${ARSIM:?set ARSIM to the arsim binary}
SCEN=tests/bad/support/ok.yaml      # vgg16-cifar10, 4 nodes x 1, batch [32, 64], policies ddp (baseline), thesis
T=$(mktemp -d "${TMPDIR:-/tmp}/arsim-run.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
export LC_ALL=C

# shellcheck source=../clilib.bash
. tests/clilib.bash
# get FLAT PATH — the value at PATH.
get() { awk -F'\t' -v p="$2" '$1 == p { print $2; found = 1; exit } END { exit !found }' "$1"; }

# --- arsim run ---------------------------------------------------------------

run_table() {
    "$A" run "$SCEN" >"$T/table" 2>"$T/err" || { echo "exit $?: $(cat "$T/err")"; return 1; }
    [ ! -s "$T/err" ] || { echo "stderr: $(cat "$T/err")"; return 1; }
    grep -Eq '^ *batch +policy +overlap +algorithm +iter\(ms\) +compute\(ms\) +comm\(ms\) +exposed\(ms\)( +slowed\(ms\) +cslowed\(ms\))? +samples/s +speedup *$' \
        "$T/table" || { echo "no header row"; return 1; }
    local rows
    rows=$(grep -Ec '^ +(32|64) +(ddp +ddp +ring|thesis +layer +hybrid) +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +([0-9.]+ +[0-9.]+ +)?[0-9.]+ +[0-9.]+ *$' "$T/table")
    [ "$rows" -eq 4 ] || { echo "$rows result rows, expected 4 (2 batches x 2 policies)"; return 1; }
    grep -Eq '^ +32 +ddp +.* 1\.000 *$' "$T/table" || { echo "baseline row without speedup 1.000"; return 1; }
}

# only_files DIR NAME... — DIR holds exactly the files NAME... (no temporaries).
only_files() {
    local d=$1 f n
    shift
    for n in "$@"; do [ -f "$d/$n" ] || { echo "no $n"; return 1; }; done
    for f in "$d"/* "$d"/.[!.]*; do
        n=${f#"$d"/}
        [ "$n" = '.[!.]*' ] && continue
        [[ " $* " == *" $n "* ]] || { echo "stray file $n"; return 1; }
    done
}

# The two files, an old out.json replaced, nothing else left beside them.
run_files() {
    local o=$T/o
    mkdir -p "$o"
    printf 'old contents\n' >"$o/out.json"
    "$A" run "$SCEN" --json "$o/out.json" --csv "$o/out.csv" --layers >"$T/table" 2>"$T/err" ||
        { echo "exit $?: $(cat "$T/err")"; return 1; }
    only_files "$o" out.json out.csv || return 1
    cp "$o"/out.* "$T"/
    flat "$T/out.json" >"$T/run.flat" || { echo "--json output is not valid JSON"; return 1; }
    grep -Eq '^ +unit +bytes +algorithm +ready\(ms\)' "$T/table" || { echo "--layers printed no unit table"; return 1; }
}

run_json_keys() {
    local n k c
    n=$(grep -Ec '^\.results\[[0-9]+\]\.policy	' "$T/run.flat")
    [ "$n" -eq 4 ] || { echo "$n results, expected 4"; return 1; }
    for k in batch policy overlap algorithm iteration_s compute_s comm_s exposed_comm_s samples_per_s speedup; do
        c=$(grep -Ec "^\.results\[[0-9]+\]\.$k	" "$T/run.flat")
        [ "$c" -eq 4 ] || { echo "key $k in $c of 4 results"; return 1; }
    done
    c=$(grep -Eo '^\.results\[[0-9]+\]\.layers\[0\]\.(name|bytes|algorithm)	' "$T/run.flat" | wc -l)
    [ "$c" -eq 12 ] || { echo "layers (name, bytes, algorithm) in $((c / 3)) of 4 results"; return 1; }
    [ "$(get "$T/run.flat" .scenario.world)" = 4 ] || { echo "scenario.world is not 4"; return 1; }
}

# Per result: samples/s = batch * world / iteration; iteration = compute +
# exposed; exposed <= comm; speedup = baseline iteration / iteration at the
# same batch, 1 for the baseline (ddp).
run_json_consistent() {
    awk -F'\t' -v world=4 '
        match($1, /^\.results\[[0-9]+\]\./) {
            i = substr($1, 10, RLENGTH - 11); k = substr($1, RLENGTH + 1); v[i, k] = $2; if (i + 1 > n) n = i + 1
        }
        function rel(a, b) { d = a - b; if (d < 0) d = -d; m = (a < 0 ? -a : a); return m ? d / m : d }
        END {
            for (i = 0; i < n; i++)
                if (v[i, "policy"] == "ddp") base[v[i, "batch"]] = v[i, "iteration_s"]
            for (i = 0; i < n; i++) {
                it = v[i, "iteration_s"]; b = v[i, "batch"]
                if (rel(v[i, "samples_per_s"], b * world / it) > 1e-9) { print "result " i ": samples_per_s"; bad = 1 }
                if (rel(it, v[i, "compute_s"] + v[i, "slowdown_s"] + v[i, "exposed_comm_s"]) > 1e-9) { print "result " i ": iteration != compute + slowdown + exposed"; bad = 1 }
                if (v[i, "exposed_comm_s"] > v[i, "comm_s"] * (1 + 1e-12)) { print "result " i ": exposed > comm"; bad = 1 }
                if (rel(v[i, "speedup"], base[b] / it) > 1e-9) { print "result " i ": speedup"; bad = 1 }
            }
            exit bad
        }' "$T/run.flat"
}

# comm.slowdown without the overlap mechanism (comm.overlap false): no
# comm_slowdown_s at 0 (results as before); at 0.5 every result carries it,
# and comm_s grows by exactly it (the syncs' idle-network durations do not
# depend on it) while compute_s stays.
run_comm_slowdown() {
    "$A" run "$SCEN" --set comm.overlap=false --json "$T/cs0.json" >/dev/null 2>"$T/err" &&
        "$A" run "$SCEN" --set comm.overlap=false --set comm.slowdown=0.5 --json "$T/cs.json" >/dev/null 2>"$T/err" ||
        { echo "exit $?: $(cat "$T/err")"; return 1; }
    flat "$T/cs0.json" >"$T/cs0.flat" && flat "$T/cs.json" >"$T/cs.flat" || { echo "not valid JSON"; return 1; }
    ! grep -q 'comm_slowdown_s' "$T/cs0.flat" || { echo "comm_slowdown_s at comm.slowdown 0"; return 1; }
    awk -F'\t' '
        FNR == 1 { f++ }
        match($1, /^\.results\[[0-9]+\]\./) { i = substr($1, 10, RLENGTH - 11); k = substr($1, RLENGTH + 1); v[f, i, k] = $2; n = i + 1 }
        function rel(a, b) { d = a - b; if (d < 0) d = -d; m = (a < 0 ? -a : a); return m ? d / m : d }
        END {
            for (i = 0; i < n; i++) {
                if (!((2, i, "comm_slowdown_s") in v)) { print "result " i ": no comm_slowdown_s"; bad = 1; continue }
                add = v[2, i, "comm_slowdown_s"]; grow = v[2, i, "comm_s"] - v[1, i, "comm_s"]
                d = add - grow; if (d < 0) d = -d
                if (add < 0 || d > 1e-11) { print "result " i ": comm_slowdown_s " add ", comm_s grew " grow; bad = 1 }
                if (rel(v[2, i, "compute_s"], v[1, i, "compute_s"]) > 1e-12) { print "result " i ": compute_s moved"; bad = 1 }
                if (v[2, i, "policy"] == "thesis" && add <= 0) { print "result " i ": thesis overlaps, nothing added"; bad = 1 }
            }
            exit bad
        }' "$T/cs0.flat" "$T/cs.flat"
}

# comm.gradient_precision fp32 under precision fp16 (PyTorch autocast):
# the all-reduces of fp32 (comm_s equal, row by row), the compute of fp16
# (compute_s equal for the layer-wise policy, whose compute has no bucket
# copies), and fp16 gradients' comm below it.
run_gradient_precision() {
    local p
    for p in "fp16 fp32" "fp32 fp32" "fp16 fp16"; do
        set -- $p
        "$A" run "$SCEN" --set precision="$1" --set comm.gradient_precision="$2" --csv "$T/gp-$1-$2.csv" \
            >/dev/null 2>"$T/err" || { echo "$p: exit $?: $(cat "$T/err")"; return 1; }
    done
    paste -d, "$T/gp-fp16-fp32.csv" "$T/gp-fp32-fp32.csv" "$T/gp-fp16-fp16.csv" | awk -F, '
        NR == 1 { for (i = 1; i <= NF; i++) if (!($i in k)) k[$i] = i; w = NF / 3; next }
        function v(f, name) { return $(k[name] + f * w) }
        {
            if (v(0, "comm_s") != v(1, "comm_s")) { print "row " NR ": comm_s " v(0, "comm_s") " vs fp32 " v(1, "comm_s"); bad = 1 }
            if (v(0, "policy") == "thesis" && v(0, "compute_s") != v(2, "compute_s")) {
                print "row " NR ": compute_s " v(0, "compute_s") " vs fp16 " v(2, "compute_s"); bad = 1 }
            if (!(v(2, "comm_s") < v(0, "comm_s"))) { print "row " NR ": fp16 gradients not cheaper"; bad = 1 }
            rows++
        }
        END { if (rows != 4) { print rows " rows"; bad = 1 } exit bad }'
}

run_csv() {
    head -1 "$T/out.csv" | grep -q 'batch,policy,overlap,algorithm,iteration_s,compute_s,comm_s,exposed_comm_s,samples_per_s,speedup' ||
        { echo "CSV header: $(head -1 "$T/out.csv")"; return 1; }
    [ "$(wc -l <"$T/out.csv")" -eq 5 ] || { echo "$(wc -l <"$T/out.csv") CSV lines, expected 1 + 4"; return 1; }
    # the CSV's iteration_s equals the JSON's, row by row (same order)
    local i=0 col v j
    col=$(head -1 "$T/out.csv" | tr ',' '\n' | grep -nx iteration_s | cut -d: -f1)
    while IFS= read -r v; do
        j=$(get "$T/run.flat" ".results[$i].iteration_s") || { echo "no JSON result $i"; return 1; }
        near "$v" "$j" 1e-12 || { echo "row $i: CSV iteration_s $v, JSON $j"; return 1; }
        i=$((i + 1))
    done < <(tail -n +2 "$T/out.csv" | cut -d, -f"$col")
}

run_trace() {
    local o=$T/tr
    mkdir -p "$o"
    "$A" run "$SCEN" --trace "$o/out.trace.json" >/dev/null 2>"$T/err" || { echo "exit $?: $(cat "$T/err")"; return 1; }
    only_files "$o" out.trace.json || return 1
    flat "$o/out.trace.json" >"$T/trace.flat" || { echo "--trace output is not valid JSON"; return 1; }
    awk -F'\t' '
        match($1, /^\.traceEvents\[[0-9]+\]\./) { i = substr($1, 14, RLENGTH - 15); e[i, substr($1, RLENGTH + 1)] = $2; if (i + 1 > n) n = i + 1 }
        END {
            for (i = 0; i < n; i++) {
                if (e[i, "ph"] == "X" && e[i, "pid"] == "0") {
                    x[e[i, "tid"]]++
                    if (e[i, "dur"] == "" || e[i, "dur"] < 0 || e[i, "ts"] == "") { print "X event " i " without ts/dur"; bad = 1 }
                }
                if (e[i, "ph"] == "C") c++
            }
            if (!x[0]) { print "no X events on pid 0 tid 0 (compute)"; bad = 1 }
            if (!x[1]) { print "no X events on pid 0 tid 1 (communication)"; bad = 1 }
            if (!c) { print "no C (counter) events"; bad = 1 }
            exit bad
        }' "$T/trace.flat"
}

run_trace_choice() {
    "$A" run "$SCEN" --trace "$T/ddp64.json" --trace-policy ddp --trace-batch 64 >/dev/null 2>"$T/err" ||
        { echo "exit $?: $(cat "$T/err")"; return 1; }
    flat "$T/ddp64.json" >"$T/ddp64.flat" || { echo "not valid JSON"; return 1; }
    [ "$(get "$T/ddp64.flat" .otherData.policy)" = ddp ] || { echo "traced policy is not ddp"; return 1; }
    [ "$(get "$T/ddp64.flat" .otherData.batch)" = 64 ] || { echo "traced batch is not 64"; return 1; }
}

# 16 nodes instead of 4, one batch: 2 results at batch 32 on 16 GPUs; ring's
# bandwidth term 2(p-1)/p grows from 1.5 to 1.875, so ddp's (ring) comm
# time grows by about 1.25 (plus 2(p-1) latencies per bucket).
run_set() {
    "$A" run "$SCEN" --set cluster.nodes=16 --set 'batch=[32]' --json "$T/set.json" >/dev/null 2>"$T/err" ||
        { echo "exit $?: $(cat "$T/err")"; return 1; }
    flat "$T/set.json" >"$T/set.flat" || { echo "not valid JSON"; return 1; }
    [ "$(get "$T/set.flat" .scenario.world)" = 16 ] || { echo "world is not 16"; return 1; }
    [ "$(grep -Ec '^\.results\[[0-9]+\]\.batch	32$' "$T/set.flat")" -eq 2 ] ||
        { echo "expected 2 results, both at batch 32"; return 1; }
    ! get "$T/set.flat" '.results[2].batch' >/dev/null || { echo "more than 2 results"; return 1; }
    local c4 c16
    if ! c4=$(get "$T/run.flat" '.results[0].comm_s') || ! c16=$(get "$T/set.flat" '.results[0].comm_s'); then
        echo "no ddp comm_s"
        return 1
    fi
    awk -v a="$c4" -v b="$c16" 'BEGIN { r = b / a; exit !(r > 1.2 && r < 1.3) }' ||
        { echo "comm_s 4 -> 16 nodes: $c4 -> $c16, expected a ratio near 1.25"; return 1; }
}

check_ok() {
    local out
    out=$("$A" check "$SCEN" 2>"$T/err") || { echo "exit $?: $(cat "$T/err")"; return 1; }
    [ "$(head -1 <<<"$out")" = "$SCEN: ok: vgg16-cifar10, 2 batch sizes x 2 policies, 4 GPUs (4 nodes x 1)" ] ||
        { echo "output: $out"; return 1; }
    # the estimate: 2 x 2 runs of 1 + 2 iterations, the memory run --max-memory refuses with
    local mem
    mem=$("$A" run "$SCEN" --max-memory 1 2>&1 | sed -n 's/.* needs about \([0-9.]* [MG]iB\) of memory .*/\1/p')
    [ "$(sed -n 2p <<<"$out")" = "$SCEN: run would simulate 4 runs of 3 iterations (1 warmup + 2 measured), holding \
about $mem of memory at the peak (the estimate --max-memory is compared with)" ] && [ -n "$mem" ] ||
        { echo "estimate: $(sed -n 2p <<<"$out") (run: $mem)"; return 1; }
    out=$("$A" check "$SCEN" --set cluster.nodes=16 --set cluster.gpus_per_node=2 2>"$T/err") ||
        { echo "--set: exit $?: $(cat "$T/err")"; return 1; }
    [[ $(head -1 <<<"$out") == *", 32 GPUs (16 nodes x 2)" ]] || { echo "with --set: $out"; return 1; }
}

# check --estimate: the events `run --json` sums over its results, from a
# probe of every policy at the first batch size. Exact where the probe is
# the whole run (one batch size) and under the memo of an idle network
# (one stream: its events do not depend on the batch size); within the
# stated factor of 2 with live streams and compute variation (the batch
# size moves what the collectives meet), where the printed range is
# [estimate / 2, estimate x 2].
estimate_vs_run() {
    local out est lo hi got
    out=$("$A" check "$@" --estimate 2>"$T/err") || { echo "check $*: exit $?: $(cat "$T/err")"; return 1; }
    read -r est lo hi < <(sed -n 's/.*: run would simulate about \([0-9]*\) engine events (between \([0-9]*\) and \([0-9]*\)).*/\1 \2 \3/p' <<<"$out")
    [ -n "$est" ] && [ "$lo" -eq $((est / 2)) ] && [ "$hi" -eq $((est * 2)) ] ||
        { echo "check $*: no estimate line with its range: $out"; return 1; }
    "$A" run "$@" --json "$T/est.json" >/dev/null 2>"$T/err" || { echo "run $*: exit $?: $(cat "$T/err")"; return 1; }
    got=$(flat "$T/est.json" | awk -F'\t' '$1 ~ /^\.results\[[0-9]+\]\.events$/ { s += $2 } END { print s + 0 }')
    echo "$est $got"
}
check_estimate() {
    local r
    r=$(estimate_vs_run "$SCEN" --set 'batch=[32]') || { echo "$r"; return 1; }
    set -- $r; [ "$1" -eq "$2" ] && [ "$2" -gt 0 ] || { echo "one batch size: estimate $1, run $2; want equal"; return 1; }
    r=$(estimate_vs_run configs/default.yaml) || { echo "$r"; return 1; }
    set -- $r; [ "$1" -eq "$2" ] && [ "$2" -gt 0 ] || { echo "memo engine: estimate $1, run $2; want equal"; return 1; }
    r=$(estimate_vs_run configs/default.yaml --set comm.streams=2 \
        --set 'variation={dist: normal, cv: 0.3, seed: 1}') || { echo "$r"; return 1; }
    set -- $r
    [ "$2" -gt 0 ] && [ "$2" -ge $(($1 / 2)) ] && [ "$2" -le $(($1 * 2)) ] ||
        { echo "live streams: estimate $1, run $2; want the run within [estimate / 2, estimate x 2]"; return 1; }
    "$A" check configs/sweep-thesis.yaml --estimate >/dev/null 2>"$T/err" && { echo "a sweep was probed"; return 1; }
    grep -q '^--estimate: configs/sweep-thesis.yaml is a sweep; expected a scenario' "$T/err" ||
        { echo "sweep: $(cat "$T/err")"; return 1; }
}

# --- arsim collective ---------------------------------------------------------

coll_table() {
    "$A" collective --ranks 8 --bandwidth 10Gbps --latency 5us --algo ring --size 1KB,1MB,64MB >"$T/ctable" \
        2>"$T/err" || { echo "exit $?: $(cat "$T/err")"; return 1; }
    grep -Eq '^ *size\(B\) +algorithm +ranks +time\(us\) +algbw\(GB/s\) +busbw\(GB/s\) +events *$' "$T/ctable" ||
        { echo "header: $(head -1 "$T/ctable")"; return 1; }
    [ "$(grep -Ec '^ +(1000|1000000|64000000) +ring +8 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9]+ *$' "$T/ctable")" -eq 3 ] ||
        { echo "expected 3 rows: $(cat "$T/ctable")"; return 1; }
}

# Ring on a star of 8 (a message crosses two 5 us links: alpha = 10 us,
# beta = 1 / 1.25e9 s/B, gamma = 0): 2(p-1) alpha + 2 (p-1)/p n beta.
coll_json() {
    "$A" collective --ranks 8 --bandwidth 10Gbps --latency 5us --algo ring --size 1KB,1MB,64MB --json - \
        >"$T/c1.json" 2>"$T/err" || { echo "exit $?: $(cat "$T/err")"; return 1; }
    flat "$T/c1.json" >"$T/c1.flat" || { echo "not valid JSON"; return 1; }
    local i k n t bw bus
    for i in 0 1 2; do
        for k in algorithm ranks bytes time_s algbw_Bps busbw_Bps events wall_s; do
            get "$T/c1.flat" "[$i].$k" >/dev/null || { echo "element $i lacks $k"; return 1; }
        done
        if [ "$(get "$T/c1.flat" "[$i].algorithm")" != ring ] || [ "$(get "$T/c1.flat" "[$i].ranks")" != 8 ]; then
            echo "element $i: not ring on 8 ranks"
            return 1
        fi
        n=$(get "$T/c1.flat" "[$i].bytes"); t=$(get "$T/c1.flat" "[$i].time_s")
        bw=$(get "$T/c1.flat" "[$i].algbw_Bps"); bus=$(get "$T/c1.flat" "[$i].busbw_Bps")
        near "$t" "$(awk -v n="$n" 'BEGIN { printf "%.12g", 14 * 10e-6 + 2 * 7 / 8 * n / 1.25e9 }')" 1e-3 ||
            { echo "element $i: time_s $t for $n bytes, closed form differs by more than 0.1%"; return 1; }
        near "$bw" "$(awk -v n="$n" -v t="$t" 'BEGIN { printf "%.17g", n / t }')" 1e-9 || { echo "algbw $i"; return 1; }
        near "$bus" "$(awk -v b="$bw" 'BEGIN { printf "%.17g", b * 2 * 7 / 8 }')" 1e-9 || { echo "busbw $i"; return 1; }
    done
    ! get "$T/c1.flat" '[3].bytes' >/dev/null || { echo "more than 3 elements"; return 1; }
}

coll_deterministic() {
    "$A" collective --ranks 8 --bandwidth 10Gbps --latency 5us --algo ring --size 1KB,1MB,64MB --json - \
        >"$T/c2.json" 2>"$T/err" || { echo "exit $?: $(cat "$T/err")"; return 1; }
    grep -v '"wall_s"' "$T/c1.json" >"$T/c1.nowall"
    grep -v '"wall_s"' "$T/c2.json" >"$T/c2.nowall"
    cmp -s "$T/c1.nowall" "$T/c2.nowall" || { echo "two runs differ beyond wall_s"; return 1; }
    [ "$(grep -c '"wall_s"' "$T/c1.json")" -eq 3 ] || { echo "wall_s not one line per element"; return 1; }
}

coll_topology_file() {
    "$A" collective --topology tests/bad/support/star4.yaml --algo butterfly --size 4KiB --json - >"$T/c3.json" \
        2>"$T/err" || { echo "exit $?: $(cat "$T/err")"; return 1; }
    flat "$T/c3.json" >"$T/c3.flat" || { echo "not valid JSON"; return 1; }
    [ "$(get "$T/c3.flat" '[0].ranks')" = 4 ] || { echo "ranks is not the file's 4 hosts"; return 1; }
    # butterfly, p = 4: log2(p) (alpha + n beta) = 2 (10 us + 4096 / 1.25e9)
    near "$(get "$T/c3.flat" '[0].time_s')" 2.65536e-05 1e-3 || { echo "time_s $(get "$T/c3.flat" '[0].time_s')"; return 1; }
}

# --- arsim list ----------------------------------------------------------

# The algorithm names of docs/dev/design.md §13.4, one per line (first word), and in --json.
list_algorithms() {
    local names="auto butterfly hierarchical hybrid rabenseifner ring torus2d tree" got
    got=$("$A" list algorithms 2>"$T/err" | awk '{ print $1 }' | sort | tr '\n' ' ')
    [ "$got" = "$names " ] || { echo "first words: $got"; return 1; }
    "$A" list algorithms --json - >"$T/algos.json" 2>"$T/err" || { echo "--json: exit $?"; return 1; }
    got=$(flat "$T/algos.json" | awk -F'\t' '$1 ~ /^\[[0-9]+\]\.name$/ { print $2 }' | sort | tr '\n' ' ')
    [ "$got" = "$names " ] || { echo "--json names: $got"; return 1; }
}

t "run: table" run_table
t "run --json --csv --layers: files" run_files
t "run --json: keys" run_json_keys
t "run --json: samples/s, exposed, speedup consistent" run_json_consistent
t "run --csv: columns and values" run_csv
t "run --set comm.slowdown=0.5: comm_slowdown_s, comm_s grows by it" run_comm_slowdown
t "run --set comm.gradient_precision=fp32 under fp16: fp32 comm, fp16 compute" run_gradient_precision
t "run --trace: valid JSON, X on tid 0 and 1, C counters" run_trace
t "run --trace-policy --trace-batch" run_trace_choice
t "run --set cluster.nodes=16 --set batch=[32]" run_set
t "check" check_ok
t "check --estimate: events against run's" check_estimate
t "collective: table" coll_table
t "collective --json: keys and closed form" coll_json
t "collective --json: deterministic" coll_deterministic
t "collective --topology FILE" coll_topology_file
t "list algorithms" list_algorithms
