#!/bin/bash
# What `arsim run` shows of collectives run live on the shared network
# (comm.streams > 1): the trace's NIC counter against its closed form.
source tests/clilib.bash
get() { awk -F'\t' -v p="$2" '$1 == p { print $2; found = 1; exit } END { exit !found }' "$1"; }
A=${ARSIM:-./arsim}
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
SCEN=tests/bad/support/ok.yaml      # vgg16-cifar10, 4 hosts on a star of 10 Gbit/s links; ddp: ring

# counter K TOL POLICY ARGS... — runs ARGS (arsim run's) with --trace and
# --json and checks the trace's NIC counter: at each instant, the sum over
# POLICY's collectives in flight on rank 0 of K S / dur (S: its unit's
# bytes from the JSON's layers, dur: its span in the trace, s), x 100,
# within TOL relative.
counter() {
    local k=$1 tol=$2 pol=$3; shift 3
    "$A" run "$@" --trace-policy "$pol" --trace "$T/tr.json" --json "$T/r.json" >/dev/null 2>"$T/err" ||
        { echo "exit $?: $(cat "$T/err")"; return 1; }
    flat "$T/tr.json" >"$T/tr.flat" && flat "$T/r.json" >"$T/r.flat" || { echo "not valid JSON"; return 1; }
    awk -F'\t' -v K="$k" -v tol="$tol" -v pol="$pol" '
        FNR == NR {   # the JSON: the policy'"'"'s units, their bytes
            if (match($1, /^\.results\[[0-9]+\]\./)) {
                i = substr($1, 10, RLENGTH - 11); k = substr($1, RLENGTH + 1)
                if (k == "policy") rp[i] = $2
                if (match(k, /^layers\[[0-9]+\]\./)) { j = substr(k, 8, RLENGTH - 9); f = substr(k, RLENGTH + 1)
                    if (f == "name") nm[i, j] = $2; if (f == "bytes") by[i, j] = $2; if (j + 1 > nl[i]) nl[i] = j + 1 }
            }
            next
        }
        match($1, /^\.traceEvents\[[0-9]+\]\./) { i = substr($1, 14, RLENGTH - 15); e[i, substr($1, RLENGTH + 1)] = $2; if (i + 1 > n) n = i + 1 }
        END {
            for (i in rp) if (rp[i] == pol) for (j = 0; j < nl[i]; j++) S[nm[i, j]] = by[i, j]
            for (i = 0; i < n; i++)
                if (e[i, "ph"] == "X" && e[i, "cat"] == "comm" && e[i, "pid"] == "0") {
                    if (!(e[i, "name"] in S)) { print "comm event " e[i, "name"] " not among " pol "'"'"'s units"; exit 1 }
                    m++; ts[m] = e[i, "ts"]; te[m] = e[i, "ts"] + e[i, "dur"]
                    u[m] = 100 * K * S[e[i, "name"]] / (e[i, "dur"] * 1e-6)
                }
            if (m < 3) { print "only " m " collectives on rank 0"; exit 1 }
            for (i = 0; i < n; i++) {
                if (e[i, "ph"] != "C") continue
                c++; t = e[i, "ts"]; want = 0
                for (k = 1; k <= m; k++) if (ts[k] <= t + 1e-3 && t < te[k] - 1e-3) { want += u[k]; on++ }
                got = e[i, "args.NIC egress %"]; d = got - want
                if ((d < 0 ? -d : d) > tol * (want > 1 ? want : 1)) { print "at " t " us: counter " got ", closed form " want; bad = 1 }
                if (got > 0) pos++
            }
            if (!c || !pos) { print c " counter events, " pos " of them above 0"; exit 1 }
            exit bad
        }' "$T/r.flat" "$T/tr.flat"
}

# A live ddp run (two streams: buckets overlap). A ring all-reduce of S
# bytes over p ranks has every rank send 2(p-1) chunks of S/p: 2(p-1)S
# bytes leave the hosts, whatever else shares the links; the p egress
# links hold p x 1.25e9 B/s. So a bucket that took dur s used them
# 2(p-1)S / (p 1.25e9 dur) of the time (p = 4: 6S / 5e9 dur).
t "live ddp: the NIC counter is each bucket's 6S / (5e9 dur), summed over those in flight" \
    counter 1.2e-9 1e-9 ddp "$SCEN" --set comm.streams=2 --set 'batch=[32]'

# The same on the per-rank engine (a what-if run: `variation` given): the
# counter is drawn on the first traced rank, from the same closed form.
printf '%s\n' "$(cat "$SCEN")" 'variation: {dist: normal, cv: 0.05, per: gpu}' >"$T/whatif.yaml"
t "what-if ddp: the NIC counter on the first traced rank is each bucket's 6S / (5e9 dur)" \
    counter 1.2e-9 1e-9 ddp "$T/whatif.yaml" --set 'batch=[32]'

# NCCL's Ring on one dgx-h100 (8 GPUs): each GPU sends 2 x 7/8 S, 14 S in
# all, over links leaving the GPUs of 18 x 20.6 GB/s (NVLink) + 55 GB/s
# (PCIe) each: K = 14 / (8 x 425.8e9). Within 1e-4: the data bytes the
# simulated NCCL schedule sends are not exactly 2 x 7/8 S (1.2e-5 more
# here): the last loop's parts and slices are rounded up, alike for all
# ranks (docs/explanation/nccl.md, "Bytes a rank sends"; test_ncclacct).
printf 'name: n\nmodel: resnet50\nprecision: fp16\nbatch: [64]\ncluster: {node: dgx-h100, nodes: 1}\niterations: {warmup: 1, measured: 1}\npolicies: [{name: ring, overlap: ddp, bucket: 25MiB, nccl: {algo: ring, proto: simple}}]\n' >"$T/ring.yaml"
t "nccl Ring: the NIC counter is each call's 14S / (8 x 425.8e9 dur)" \
    counter "$(awk 'BEGIN { printf "%.17g", 14 / (8 * 425.8e9) }')" 1e-4 ring "$T/ring.yaml"

# A cluster of GPU nodes: `cluster` is its name in a few words in both
# `run --json` and `collective --algo nccl --json`; the latter's full
# description is `cluster_built`; `run --csv` ends with node and cluster
# (quoted: it holds commas), the JSON's values.
NODES=$T/nodes.yaml
printf 'name: s\nmodel: gpt2\nprecision: fp16\nbatch: [8]\ncluster: {node: dgx-h100, nodes: 2}\npolicies: [{name: p, overlap: ddp, algorithm: nccl}]\niterations: {warmup: 0, measured: 1}\n' >"$NODES"
WANT="2 x dgx-h100, rail-optimized fat-tree"
cluster_key() {
    "$A" run "$NODES" --json "$T/n.json" >/dev/null 2>"$T/err" || { echo "run: exit $?: $(cat "$T/err")"; return 1; }
    flat "$T/n.json" >"$T/n.flat" || { echo "run: not valid JSON"; return 1; }
    local k
    for k in .scenario.cluster '.results[0].cluster'; do
        [ "$(get "$T/n.flat" "$k")" = "$WANT" ] || { echo "run $k: $(get "$T/n.flat" "$k"), want $WANT"; return 1; }
    done
    "$A" collective --algo nccl --node dgx-h100 --nodes 2 --size 1MiB --json "$T/c.json" >/dev/null 2>"$T/err" ||
        { echo "collective: exit $?: $(cat "$T/err")"; return 1; }
    flat "$T/c.json" >"$T/c.flat" || { echo "collective: not valid JSON"; return 1; }
    [ "$(get "$T/c.flat" '[0].cluster')" = "$WANT" ] || { echo "collective cluster: $(get "$T/c.flat" '[0].cluster')"; return 1; }
    case $(get "$T/c.flat" '[0].cluster_built') in
        "2 x dgx-h100 ("*"rail-optimized fat-tree, 8 rails"*) ;;
        *) echo "collective cluster_built: $(get "$T/c.flat" '[0].cluster_built')"; return 1 ;;
    esac
}
t "cluster: the short name in run and collective --json, cluster_built the description" cluster_key

csv_cluster() {
    "$A" run "$NODES" --csv "$T/n.csv" --json "$T/n2.json" >/dev/null 2>"$T/err" || { echo "exit $?: $(cat "$T/err")"; return 1; }
    [ "$(head -1 "$T/n.csv" | awk -F, '{ print $(NF - 1) "," $NF }')" = node,cluster ] ||
        { echo "header ends: $(head -1 "$T/n.csv" | tail -c 60)"; return 1; }
    local row; row=$(sed -n 2p "$T/n.csv")
    [ "${row%,dgx-h100,\"$WANT\"}" != "$row" ] || { echo "row ends: ${row: -60}"; return 1; }
    [ "$(wc -l <"$T/n.csv")" -eq 2 ] || { echo "$(wc -l <"$T/n.csv") lines"; return 1; }
}
t "run --csv ends with node and cluster, as the JSON's" csv_cluster

# An oversubscription is named as the scenario wrote it (1.50, as a sweep's
# group label shows it), in run's JSON and so in plot's titles.
oversub_text() {
    "$A" run "$NODES" --set cluster.oversubscription=1.50 --json "$T/o.json" >/dev/null 2>"$T/err" ||
        { echo "exit $?: $(cat "$T/err")"; return 1; }
    flat "$T/o.json" >"$T/o.flat" || { echo "not valid JSON"; return 1; }
    [ "$(get "$T/o.flat" .scenario.cluster)" = "$WANT, oversubscription 1.50" ] ||
        { echo "cluster: $(get "$T/o.flat" .scenario.cluster)"; return 1; }
}
t "oversubscription 1.50 is named 1.50" oversub_text

# fsdp2's first all-gathers (root ag, layers.0 ag) are issued as the update
# ends, for the next forward: the rows show the instance the shown
# iteration's forward waited on, issued as it started (root ag: ready,
# start and needed 0), the same instance the trace draws first; no row is
# stamped at the iteration's end.
fsdp_rows() {
    "$A" run configs/llama3-8b-fsdp-h100-8.yaml --json "$T/f.json" --trace "$T/f.tr.json" >/dev/null 2>"$T/err" ||
        { echo "exit $?: $(cat "$T/err")"; return 1; }
    flat "$T/f.json" >"$T/f.flat" && flat "$T/f.tr.json" >"$T/ftr.flat" || { echo "not valid JSON"; return 1; }
    awk -F'\t' '
        FNR == NR {
            if ($1 == ".results[0].iteration_s") it = $2
            if (match($1, /^\.results\[0\]\.layers\[[0-9]+\]\./)) { j = substr($1, 20, RLENGTH - 21); r[j, substr($1, RLENGTH + 1)] = $2; if (j + 1 > n) n = j + 1 }
            next
        }
        match($1, /^\.traceEvents\[[0-9]+\]\./) { i = substr($1, 14, RLENGTH - 15); e[i, substr($1, RLENGTH + 1)] = $2; if (i + 1 > m) m = i + 1 }
        END {
            if (n < 3 || it <= 0) { print n " rows, iteration " it; exit 1 }
            for (j = 0; j < n; j++) {
                if (!(0 <= r[j, "ready_s"] && r[j, "ready_s"] <= r[j, "start_s"] && r[j, "start_s"] <= r[j, "end_s"] && r[j, "ready_s"] < it)) {
                    print r[j, "name"] ": ready " r[j, "ready_s"] ", start " r[j, "start_s"] ", end " r[j, "end_s"] " of an iteration of " it; bad = 1 }
                if (r[j, "name"] == "root ag" && (r[j, "ready_s"] != 0 || r[j, "start_s"] != 0 || r[j, "needed_s"] != 0)) { print "root ag not issued at 0"; bad = 1 }
                if (r[j, "name"] == "root ag" || r[j, "name"] == "layers.0 ag") {
                    for (i = 0; i < m; i++) if (e[i, "ph"] == "X" && e[i, "pid"] == "0" && e[i, "name"] == r[j, "name"]) break
                    if (i == m) { print "no trace span of " r[j, "name"]; bad = 1; continue }
                    d1 = e[i, "ts"] / 1e6 - r[j, "start_s"]; d2 = (e[i, "ts"] + e[i, "dur"]) / 1e6 - r[j, "end_s"]
                    if (d1 * d1 > 1e-18 || d2 * d2 > 1e-18) { print r[j, "name"] ": row " r[j, "start_s"] ".." r[j, "end_s"] ", trace " e[i, "ts"] " + " e[i, "dur"] " us"; bad = 1 }
                    seen++
                }
            }
            if (seen != 2) { print "root ag and layers.0 ag: " seen " of 2 rows"; bad = 1 }
            exit bad
        }' "$T/f.flat" "$T/ftr.flat"
}
t "fsdp2 rows: the first all-gathers as the iteration's forward waited on them" fsdp_rows
