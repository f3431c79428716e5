# vallib.bash — the pure helpers of validate/validate.sh (no root, no
# cluster): merging replays into a measurements file, picking errors out
# of a compare JSON, their statistics, and summaries of the network's
# trouble. Sourced by validate.sh; tests/cli/vallib.sh tests them. Needs
# $root (the repository, for tests/cli/jsonflat.awk) and LC_ALL=C.
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
        match($1, /^\.cases\[[0-9]+\]\./) { i = substr($1, 8, RLENGTH - 9); k = substr($1, RLENGTH + 1); v[i, k] = $2; n = i > n ? i : n }
        END { for (i = 0; i <= n; i++) {
            e = v[i, "rel_error"]; if (e == "" || e == "null") continue
            if (e < 0) e = -e
            if (sel == "heldbig" && v[i, "mode"] == "allreduce" && v[i, "fitted"] == "false" && v[i, "bytes"] >= 262144) print e
            if (sel == "heldsmall" && v[i, "mode"] == "allreduce" && v[i, "fitted"] == "false" && v[i, "bytes"] >= 16384 &&
                v[i, "bytes"] <= 131072) print e
            if (sel == "iteration" && v[i, "mode"] == "iteration") print e
        } }' "$1"
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
        match($1, /^M\.cases\[[0-9]+\]\./) { i = substr($1, 9, RLENGTH - 10); m[i, substr($1, RLENGTH + 1)] = $2; n = i > n ? i : n; next }
        match($1, /^C\.cases\[[0-9]+\]\./) { i = substr($1, 9, RLENGTH - 10); c[i, substr($1, RLENGTH + 1)] = $2 }
        END { for (i = 0; i <= n; i++) if (m[i, "tcp.timeouts"] > 0) {
            k++; e = c[i, "rel_error"]
            printf "   case %d %s %s %s B: %d TCP timeouts, %d of %d slow repetitions after one; median %.3f ms, max %.3f ms; error %s\n",
                i, m[i, "mode"], m[i, "algo"] m[i, "class"] m[i, "policy"], m[i, "bytes"], m[i, "tcp.timeouts"],
                m[i, "tcp.slow_timeout_reps"], m[i, "tcp.slow_reps"], 1e3 * m[i, "time_s"], 1e3 * m[i, "max_s"],
                e == "" || e == "null" ? "-" : sprintf("%+.1f%%", 100 * e) }
          if (!k) print "   no case saw a TCP retransmission timeout" }'
}

