# vallib.bash — the helpers of validate/validate.sh that need no root and
# no cluster: merging replays into a measurements file, picking errors out
# of a compare JSON, their statistics, summaries of the network's trouble
# (tests/cli/vallib.sh tests these), and an MPI launch that is ended when
# it hangs after its output is complete (tests/cli/launch-guard.sh).
# Sourced by validate.sh. Needs $root (the repository, for
# tests/cli/jsonflat.awk) and LC_ALL=C.
: "${root:?vallib.bash: set root to the repository first}"

# merge MAIN ADD... — appends the iteration cases of the ADD files (one
# case per line, as mpibench writes them) to MAIN's cases, in place.
merge() {
    local main=$1 tmp=$1.merge
    shift
    awk 'FNR == 1 { file++ }
        file == 1 { lines[++nl] = $0; next }
        /^    \{"mode": "iteration"/ { sub(/,$/, ""); add[++na] = $0 }
        END {
            last = nl; while (last > 0 && lines[last] !~ /^    \{"mode"/) last--
            for (i = 1; i <= last; i++) print lines[i] (i == last && na ? "," : "")
            for (i = 1; i <= na; i++) print add[i] (i < na ? "," : "")
            for (i = last + 1; i <= nl; i++) print lines[i]
        }' "$main" "$@" >"$tmp" && awk -f "$root/tests/cli/jsonflat.awk" "$tmp" >/dev/null && mv "$tmp" "$main"
}

# errors FLAT SELECT — the |rel_error| of the cases of a compare JSON
# (flattened) that SELECT picks: heldbig (held-out all-reduce >= 256 KiB),
# heldsmall (held-out all-reduce of 16 KiB..128 KiB) or iteration.
errors() {
    awk -F'\t' -v sel="$2" '
        match($1, /^\.cases\[[0-9]+\]\./) { i = substr($1, 8, RLENGTH - 9); k = substr($1, RLENGTH + 1); v[i, k] = $2; i += 0; n = i > n ? i : n }
        END { for (i = 0; i <= n; i++) {
            e = v[i, "rel_error"]; if (e == "" || e == "null") continue
            if (e < 0) e = -e
            if (sel == "heldbig" && v[i, "mode"] == "allreduce" && v[i, "fitted"] == "false" && v[i, "bytes"] >= 262144) print e
            if (sel == "heldsmall" && v[i, "mode"] == "allreduce" && v[i, "fitted"] == "false" && v[i, "bytes"] >= 16384 &&
                v[i, "bytes"] <= 131072) print e
            if (sel == "iteration" && v[i, "mode"] == "iteration") print e
        } }' "$1"
}
# spread FLAT — "ranked faster within slower" of a compare JSON
# (flattened): of the held-out all-reduces >= 256 KiB that list their
# repetitions, the predictions faster than the repetitions' 10th
# percentile, within the 10th to 90th, slower than the 90th ("0 0 0 0"
# where the file has none).
spread() {
    awk -F'\t' '
        match($1, /^\.summary\[[0-9]+\]\./) { i = substr($1, 10, RLENGTH - 11); v[i, substr($1, RLENGTH + 1)] = $2; i += 0; n = i > n ? i : n }
        END { for (i = 0; i <= n; i++)
                  if (v[i, "group"] == "allreduce >= 256 KiB" && v[i, "held_out"] == "true" && v[i, "ranked_cases"] != "") {
                      print v[i, "ranked_cases"], v[i, "faster_than_p10"], v[i, "within_p10_p90"], v[i, "slower_than_p90"]; exit }
              print 0, 0, 0, 0 }' "$1"
}
# pairs CMPFLAT MEASFLAT — "same differ ties" over the pairs of policies
# of each iteration setting (config, batch, ranks) of a compare JSON
# (flattened) whose cases both were predicted: a pair whose measured times
# differ by no more than the repetitions' spread (the larger of the two
# cases' max_s - min_s, from the measurements file, flattened) is a tie,
# counted apart; any other pair is the same where the prediction orders
# it as the measurement does, else differ. "0 0 0" without iterations.
pairs() {
    { sed 's/^/C/' "$1"; sed 's/^/M/' "$2"; } | awk -F'\t' '
        match($1, /^C\.cases\[[0-9]+\]\./) { i = substr($1, 9, RLENGTH - 10); c[i, substr($1, RLENGTH + 1)] = $2; i += 0; n = i > n ? i : n; next }
        match($1, /^M\.cases\[[0-9]+\]\./) { i = substr($1, 9, RLENGTH - 10); m[i, substr($1, RLENGTH + 1)] = $2 }
        END {
            for (i = 0; i <= n; i++) {
                if (c[i, "mode"] != "iteration" || c[i, "predicted_s"] == "" || c[i, "predicted_s"] == "null") continue
                k = c[i, "index"]; sp[i] = m[k, "max_s"] - m[k, "min_s"]
                key = c[i, "config"] SUBSEP c[i, "batch"] SUBSEP c[i, "ranks"]
                for (j in seen) if (seen[j] == key) {
                    dm = c[i, "measured_s"] - c[j, "measured_s"]; dp = c[i, "predicted_s"] - c[j, "predicted_s"]
                    w = sp[i] > sp[j] ? sp[i] : sp[j]
                    if ((dm < 0 ? -dm : dm) <= w) ties++
                    else if ((dm > 0) == (dp > 0) && dp != 0) same++
                    else differ++
                }
                seen[i] = key
            }
            print same + 0, differ + 0, ties + 0 }'
}
# consistent MEASFLAT CMPFLAT CAL — one line per way the outputs of one
# cluster disagree with each other (nothing: well-formed and consistent):
# the compare file's schema; a compare case per measured case; every case
# predicted (or noted why not), its rel_error (predicted - measured) /
# measured; some case fitted and some held-out all-reduce predicted; the calibration's inter alpha and beta > 0
# and its gamma (the loop measures reduce).
consistent() {
    grep -q '^\.schema	arsim-compare/1$' "$2" || echo "compare: no schema arsim-compare/1"
    { sed 's/^/M/' "$1"; sed 's/^/C/' "$2"; } | awk -F'\t' '
        match($1, /^M\.cases\[[0-9]+\]\.mode$/) { nm++ }
        match($1, /^C\.cases\[[0-9]+\]\./) { i = substr($1, 9, RLENGTH - 10); c[i, substr($1, RLENGTH + 1)] = $2; i += 0; n = i > n ? i : n; nc = n + 1 }
        END {
            if (nm == 0) print "measurements: no cases"
            if (nc != nm) printf "compare: %d cases for %d measured\n", nc, nm
            for (i = 0; i < nc; i++) {
                p = c[i, "predicted_s"]; t = c[i, "measured_s"]; e = c[i, "rel_error"]
                if (p == "" || p == "null") { if (c[i, "note"] == "") printf "compare: case %d neither predicted nor noted why\n", i; continue }
                if (!(p + 0 > 0)) { printf "compare: case %d: predicted_s %s is not > 0\n", i, p; continue }
                d = (p - t) / t - e; if (d < 0) d = -d
                if (!(t + 0 > 0) || d > 1e-6 * (1 + (e < 0 ? -e : e))) printf "compare: case %d: rel_error %s is not (%s - %s) / %s\n", i, e, p, t, t
                if (c[i, "fitted"] == "true") fit++; else if (c[i, "mode"] == "allreduce") held++
            }
            if (!fit) print "compare: no case fitted"
            if (!held) print "compare: no held-out all-reduce predicted" }'
    awk '/^inter: \{/ { a = $0; b = $0; sub(/.*alpha_s: /, "", a); sub(/[,}].*/, "", a); sub(/.*beta_s_per_byte: /, "", b); sub(/[,}].*/, "", b)
                       if (a != "" && a + 0 >= 0 && b + 0 > 0) ok = 1 }
         /^gamma_s_per_byte: / { g = 1 }
         END { if (!ok) print "calibration: no inter class with alpha_s >= 0 and beta_s_per_byte > 0"
               if (!g) print "calibration: no gamma_s_per_byte" }' "$3"
}
# stats — "count median max" of numbers on stdin.
stats() { sort -g | awk '{ a[++n] = $1 } END { if (!n) { print 0, "nan", "nan"; exit }
    m = n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2; print n, m, a[n] }'; }
pct() { awk -v x="$1" 'BEGIN { if (x == "nan") print "-"; else printf "%.1f%%", 100 * x }'; }
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "nan" && a <= b) }'; }

# netgrowth BEFORE AFTER WHAT — one line: what the shapers dropped and TCP
# retransmitted during WHAT, summed over the hosts.
netgrowth() {
    awk -v what="$3" 'FNR == 1 { f++; next } { for (k = 2; k <= 8; k++) v[f, k] += $k }
        END { printf "   network during %s: tbf drops %d (host) + %d (switch), overlimits %d + %d; TCP %d segments retransmitted, %d timeouts, %d loss probes\n",
              what, v[2,2] - v[1,2], v[2,4] - v[1,4], v[2,3] - v[1,3], v[2,5] - v[1,5], v[2,6] - v[1,6], v[2,7] - v[1,7], v[2,8] - v[1,8] }' "$1" "$2"
}
# timeouts MEAS CMP — the measured cases during which a TCP retransmission
# timer fired (mpibench's "tcp" counters), with compare's error for each.
timeouts() {
    { awk -f "$root/tests/cli/jsonflat.awk" "$1" | sed 's/^/M/'; awk -f "$root/tests/cli/jsonflat.awk" "$2" | sed 's/^/C/'; } |
    awk -F'\t' '
        match($1, /^M\.cases\[[0-9]+\]\./) { i = substr($1, 9, RLENGTH - 10); m[i, substr($1, RLENGTH + 1)] = $2; i += 0; n = i > n ? i : n; next }
        match($1, /^C\.cases\[[0-9]+\]\./) { i = substr($1, 9, RLENGTH - 10); c[i, substr($1, RLENGTH + 1)] = $2 }
        END { for (i = 0; i <= n; i++) if (m[i, "tcp.timeouts"] > 0) {
            k++; e = c[i, "rel_error"]
            printf "   case %d %s %s %s B: %d TCP timeouts, %d of %d slow repetitions after one; median %.3f ms, max %.3f ms; error %s\n",
                i, m[i, "mode"], m[i, "algo"] m[i, "class"] m[i, "policy"], m[i, "bytes"], m[i, "tcp.timeouts"],
                m[i, "tcp.slow_timeout_reps"], m[i, "tcp.slow_reps"], 1e3 * m[i, "time_s"], 1e3 * m[i, "max_s"],
                e == "" || e == "null" ? "-" : sprintf("%+.1f%%", 100 * e) }
          if (!k) print "   no case saw a TCP retransmission timeout" }'
}


# --- guarded MPI launches -----------------------------------------------------
# An MPI library may hang in MPI_Finalize after the work is done (MPICH
# 4.0.2 over UCX's TCP transport did on the emulated cluster: mpibench had
# written its file, rank 0 spun in UCX's progress). launch_guarded ends
# such a launch once its output is complete instead of letting it run into
# the limit. A process manager may move its daemons and ranks into
# sessions of their own (MPICH's Hydra calls setsid() in every child it
# starts), so ending a launch ends its whole process tree, not only its
# process group, and any process left over whose arguments name both the
# program and the output file (the ranks, should their parents die first).

# proc_stat PID — sets the caller's st_ppid, st_pgrp and st_start (start
# time, clock ticks after boot) from /proc/PID/stat; fails when PID is
# gone or a zombie.
proc_stat() {
    local line f
    [[ $1 =~ ^[0-9]+$ ]] && { read -r line <"/proc/$1/stat"; } 2>/dev/null || return 1
    read -r -a f <<<"${line##*) }" # after "PID (COMMAND) ": COMMAND may hold spaces and ')'
    [ "${f[0]}" != Z ] || return 1
    st_ppid=${f[1]} st_pgrp=${f[2]} st_start=${f[19]}
}

# launch_procs ROOT PROG OUT — "PID START" of each live process of the
# launch started as ROOT: ROOT, the members of process group ROOT (ROOT
# empty: neither, for a ROOT that has exited and whose PID may be reused),
# every process whose arguments include both PROG and OUT, and the
# descendants of all these. Never this shell or its subshells.
launch_procs() {
    local root=$1 bin=$2 out=$3 d p a st_ppid st_pgrp st_start more=1 hasbin hasout
    local -A parent start mine
    local -a argv
    for d in /proc/[0-9]*; do
        p=${d#/proc/}
        [ "$p" != $$ ] && [ "$p" != "$BASHPID" ] && proc_stat "$p" || continue
        parent[$p]=$st_ppid start[$p]=$st_start
        if [ -n "$root" ] && { [ "$p" = "$root" ] || [ "$st_pgrp" = "$root" ]; }; then mine[$p]=1; continue; fi
        { mapfile -d '' -t argv <"$d/cmdline"; } 2>/dev/null || continue
        hasbin=0 hasout=0
        for a in "${argv[@]}"; do
            [[ $a == "$bin" ]] && hasbin=1
            [[ $a == "$out" ]] && hasout=1
        done
        [ $hasbin = 1 ] && [ $hasout = 1 ] && mine[$p]=1
    done
    while [ $more = 1 ]; do
        more=0
        for p in "${!parent[@]}"; do
            [ -z "${mine[$p]:-}" ] && [ -n "${mine[${parent[$p]}]:-}" ] && { mine[$p]=1; more=1; }
        done
    done
    for p in "${!mine[@]}"; do echo "$p ${start[$p]}"; done
}

# signal_procs SIG — sends SIG to each "PID START" process on stdin that
# still runs with that start time (a PID the system gave to another
# process since is left alone); prints how many were still running.
signal_procs() {
    local sig=$1 p s n=0 st_ppid st_pgrp st_start
    while read -r p s; do
        proc_stat "$p" && [ "$st_start" = "$s" ] || continue
        kill "-$sig" "$p" 2>/dev/null && n=$((n + 1))
    done
    echo $n
}

# launch_end ROOT PROG OUT — ends the launch (see launch_procs): TERM,
# then KILL for whatever still runs 5 s later (looked up again by PROG and
# OUT only, since ROOT may have exited by then). Prints how many processes
# it found running.
launch_end() {
    local procs n i
    procs=$(launch_procs "$@")
    n=$(signal_procs TERM <<<"$procs")
    for ((i = 0; i < 25; i++)); do
        [ "$(signal_procs 0 <<<"$procs")" = 0 ] && break
        sleep 0.2
    done
    signal_procs KILL <<<"$procs"$'\n'"$(launch_procs "" "$2" "$3")" >/dev/null
    echo "$n"
}

# launch_guarded OUT GRACE LIMIT PROG LOG CMD... — runs CMD (an MPI
# launcher starting PROG, which writes OUT when it has finished) under
# `timeout -k 10 LIMIT`, its output appended to LOG, and returns CMD's
# exit status (timeout's 124 or 137 past LIMIT). OUT is removed first:
# mpibench writes it under another name and renames it when complete, so
# its existence means this run's results are all in. If CMD still runs
# about GRACE seconds after OUT appeared, it ends the launch, prints one
# warning line to stderr and returns 0. Whatever ends CMD, no process of
# the launch outlives this function (a line on stderr says how many had to
# be ended after CMD's exit); INT, TERM or HUP while it waits end the
# launch and exit 1.
launch_guarded() {
    local out=$1 grace=$2 limit=$3 bin=$4 log=$5 pid rc since="" traps n me=${prog:-vallib}
    shift 5
    rm -f -- "$out" || return 1
    traps=$(trap -p INT TERM HUP)
    timeout -k 10 "$limit" "$@" >>"$log" 2>&1 &
    pid=$!
    # shellcheck disable=SC2064 # the trap names this launch, expanded now
    trap "launch_end $pid $(printf '%q %q' "$bin" "$out") >/dev/null; exit 1" INT TERM HUP
    # kill -0 and test are builtins: the loop forks only its sleep, once a
    # second, on the CPUs the ranks measure on. Linux hands PIDs out in a
    # cycle, so within a second of CMD's exit $pid is no other process.
    while kill -0 "$pid" 2>/dev/null; do
        if [ -z "$since" ] && [ -e "$out" ]; then since=$SECONDS; fi
        if [ -n "$since" ] && [ $((SECONDS - since)) -ge "$grace" ]; then
            launch_end "$pid" "$bin" "$out" >/dev/null
            wait "$pid" 2>/dev/null
            trap - INT TERM HUP; eval "$traps"
            echo "$me: $(basename "$1") did not exit $grace s after $(basename "$bin") wrote $out (a hang in MPI_Finalize); ended it" >&2
            return 0
        fi
        sleep 1
    done
    wait "$pid"
    rc=$?
    trap - INT TERM HUP; eval "$traps"
    n=$(launch_end "" "$bin" "$out")
    [ "$n" = 0 ] || echo "$me: $n processes of $(basename "$bin") (--out $out) outlived $(basename "$1") (exit $rc); ended them" >&2
    return $rc
}
