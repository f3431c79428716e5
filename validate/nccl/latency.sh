#!/bin/bash
# validate/nccl/latency.sh — arsim's NCCL model against published
# small-message latencies by GPU count (validate/nccl/published/latency/*.txt;
# sources in docs/dev/references-nccl.md, results in
# docs/explanation/nccl.md, "Latency by GPU count"). Each file carries its
# citation in '#' lines, among them '# label: TEXT' (the run's name),
# '# arsim: ARGS' (the arguments of `arsim collective --algo nccl` that
# model the same run, all but the rank count: node kind, forced algorithm,
# protocol, channels) and '# size: BYTES' (the call's size), then one
# 'RANKS TIME' line a GPU count (ascending, at least 2; microseconds).
# Every file is checked before anything is run, so a malformed one leaves
# no partial output. Prints, per file, a markdown table of the GPU count,
# the call's steps, the published time, arsim's and NCCL's tuner's (as
# arsim transcribes it; the CSV rows carry it), arsim's algorithm and
# protocol, and the error of each, (x - published) / published in time;
# then the worst error of each; then, from a least-squares line of the
# time against the steps over the rows, the time a step (the slope) and
# the time at no step (the intercept) of the three. A step: one of the
# 2 (n - 1) of a Ring all-reduce, or of the n - 1 of another collective.
# Usage: validate/nccl/latency.sh [ARSIM [FILE...]]   (default ./build/arsim,
#        every validate/nccl/published/latency/*.txt)
set -eu
A=${1:-./build/arsim}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- "$(dirname "$0")"/published/latency/*.txt
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/publib.sh"

# check FILE: exits 2 with one line on standard error if FILE is not a
# latency table.
check() {
    local f=$1
    [ -n "$(sed -n 's/^# label: //p' "$f")" ] && [ -n "$(sed -n 's/^# arsim: //p' "$f")" ] ||
        { echo "$f: no '# label:' or '# arsim:' line" >&2; exit 2; }
    sed -n 's/^# size: //p' "$f" | grep -qxE '[1-9][0-9]*' ||
        { echo "$f: no '# size: BYTES' line (a positive integer)" >&2; exit 2; }
    grep -v '^#' "$f" | awk -v f="$f" '
        !NF { next }
        NF != 2 || $1 !~ /^[0-9]+$/ || $2 !~ /^[0-9]+(\.[0-9]+)?$/ || $2 + 0 <= 0 {
            printf "%s: line \"%s\" is not RANKS TIME (an integer, a positive number of us)\n", f, $0 > "/dev/stderr"; bad = 1; exit }
        $1 < 2 || (n && $1 <= last) {
            printf "%s: ranks %s: the rank counts must ascend from 2\n", f, $1 > "/dev/stderr"; bad = 1; exit }
        { last = $1; n++ }
        END { if (!bad && n < 2) { printf "%s: %d rows; a line needs 2 or more\n", f, n > "/dev/stderr"; bad = 1 }
              exit bad }' || exit 2
}
for f; do check "$f"; done

for f; do
    pub_read "$f" "$T/pub"
    size=$(sed -n 's/^# size: //p' "$f")
    : >"$T/sim"
    while read -r ranks _; do
        # shellcheck disable=SC2086 # ARGS are words
        "$A" collective --algo nccl $args --ranks "$ranks" --size "$size" --csv - >"$T/csv"
        # ranks, op, algorithm/protocol, time (us), tuner's time (us),
        # found by the CSV header's names; the one row of the one size.
        awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
            { printf "%s %s %s/%s %.3f %.3f\n", $c["ranks"], $c["op"], $c["nccl_algo"], $c["nccl_proto"],
                     $c["time_s"] * 1e6, $c["tuner_time_s"] * 1e6 }' "$T/csv" >>"$T/sim"
    done <"$T/pub"
    pub_rows "$f" "$T/sim" "$T/pub" "rank counts"
    pub_heading "$label" "$args --ranks N --size $size"
    echo "| GPUs | steps | published time (us) | arsim time (us) | tuner time (us) | arsim's choice | arsim error | tuner error |"
    echo "|---|---|---|---|---|---|---|---|"
    paste -d' ' "$T/pub" "$T/sim" | awk -v f="$f" '
        $1 != $3 { printf "%s: %s ranks published, %s simulated\n", f, $1, $3 > "/dev/stderr"; exit 1 }
        # keep(w, e, n): the worst absolute error of w so far.
        function keep(w, e, n,   a) {
            a = e < 0 ? -e : e
            if (!(w in am) || a > am[w]) { am[w] = a; em[w] = e; nm[w] = n }
        }
        {
            s = ($4 == "allreduce" ? 2 : 1) * ($1 - 1)
            ea = ($6 / $2 - 1) * 100; et = ($7 / $2 - 1) * 100
            printf "| %s | %d | %.2f | %.2f | %.2f | %s | %+.1f %% | %+.1f %% |\n", $1, s, $2, $6, $7, $5, ea, et
            keep("a", ea, $1); keep("t", et, $1)
            k++; x[k] = s; y["p", k] = $2; y["a", k] = $6; y["t", k] = $7
        }
        # fit(w): "SLOPE us a step, INTERCEPT us at none" of a least-squares line.
        function fit(w,   i, sx, sy, sxx, sxy, b) {
            for (i = 1; i <= k; i++) { sx += x[i]; sy += y[w, i]; sxx += x[i] * x[i]; sxy += x[i] * y[w, i] }
            b = (k * sxy - sx * sy) / (k * sxx - sx * sx)
            return sprintf("%.2f us a step, %.2f us at none", b, (sy - b * sx) / k)
        }
        END {
            printf "\nworst error: arsim %+.1f %% at %s GPUs; tuner %+.1f %% at %s GPUs\n", em["a"], nm["a"], em["t"], nm["t"]
            printf "least-squares line over the rows: published %s; arsim %s; tuner %s\n", fit("p"), fit("a"), fit("t")
            print ""
        }'
done
