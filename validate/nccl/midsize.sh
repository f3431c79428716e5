#!/bin/bash
# validate/nccl/midsize.sh — arsim's NCCL model against published per-size
# nccl-tests all_reduce_perf curves (validate/nccl/published/*.txt; sources
# in docs/dev/references-nccl.md, results in docs/explanation/nccl.md).
# Each published file carries its citation in '#' lines, among them
# '# label: TEXT' (the curve's name) and '# arsim: ARGS' (the arguments of
# `arsim collective --algo nccl` that model the same run), then one
# 'SIZE BUSBW' line a size (bytes, GB/s). Prints, per file, a markdown table
# of size, published busbw, arsim's busbw and the error (arsim - published)
# / published, then the worst error from 64 KiB to 16 MiB and at 64 MiB and
# above beside issue 34's targets (25 % and 10 %).
# Usage: validate/nccl/midsize.sh [ARSIM [FILE...]]   (default ./build/arsim,
#        every validate/nccl/published/*.txt)
set -eu
A=${1:-./build/arsim}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- "$(dirname "$0")"/published/*.txt
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/publib.sh"

for f; do
    pub_read "$f" "$T/pub"
    sizes=$(awk '{ print $1 }' "$T/pub" | paste -sd, -)
    # shellcheck disable=SC2086 # ARGS are words
    "$A" collective --algo nccl $args --size "$sizes" | awk '!/^#/ && $1 ~ /^[0-9]+$/ { print $1, $10 }' >"$T/sim"
    pub_rows "$f" "$T/sim" "$T/pub" sizes
    pub_heading "$label" "$args"
    echo "| size (B) | published busbw (GB/s) | arsim busbw (GB/s) | error |"
    echo "|---|---|---|---|"
    paste -d' ' "$T/pub" "$T/sim" | awk -v f="$f" "$PUB_WORST_AWK"'
        $1 != $3 { printf "%s: size %s published, %s simulated\n", f, $1, $3 > "/dev/stderr"; exit 1 }
        {
            e = ($4 - $2) / $2 * 100
            printf "| %s | %.2f | %.2f | %+.1f %% |\n", $1, $2, $4, e
            a = e < 0 ? -e : e
            if ($1 >= 65536 && $1 <= 16777216) { nm++; if (nm == 1 || a > am) { am = a; em = e; sm = $1 } }
            if ($1 >= 67108864) { nb++; if (nb == 1 || a > ab) { ab = a; eb = e; sb = $1 } }
        }
        END {
            printf "\nworst error, %s; %s\n\n", worst("64 KiB to 16 MiB", 25, em, sm, nm),
                   worst(">= 64 MiB", 10, eb, sb, nb)
        }'
done
