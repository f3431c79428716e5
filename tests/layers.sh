#!/bin/bash
# layers.sh — checks the layer rule of sim/ (sim/layers.txt): every
# `#include "L/x.h"` in sim/M/ names a layer L at or below M, names its
# folder, and exists. Prints one line per violation, file:line: what is
# wrong, and exits 1 if there is one; 0 and a summary otherwise.
#
#   tests/layers.sh [ROOT]      ROOT: the repository (default: this one)
root=${1:-$(dirname "$0")/..}
cd "$root" || exit 2
[ -f sim/layers.txt ] || { echo "layers.sh: sim/layers.txt: no such file" >&2; exit 2; }
awk '
    FNR == NR { if ($0 !~ /^#/ && NF) rank[$1] = ++n; next }
    FNR == 1 {
        split(FILENAME, part, "/"); layer = part[2]
        if (!(layer in rank)) { printf "%s:1: folder sim/%s is not a layer; expected one of sim/layers.txt\n", FILENAME, layer; bad++ }
        files++
    }
    /^[ \t]*#[ \t]*include[ \t]*"/ {
        inc = $0; sub(/^[^"]*"/, "", inc); sub(/".*$/, "", inc)
        if (inc !~ /\//) {
            printf "%s:%d: #include \"%s\" does not name its folder; expected \"LAYER/%s\"\n", FILENAME, FNR, inc, inc; bad++; next
        }
        split(inc, ip, "/"); to = ip[1]
        if (!(to in rank)) { printf "%s:%d: #include \"%s\": %s is not a layer; expected one of sim/layers.txt\n", FILENAME, FNR, inc, to; bad++; next }
        if ((layer in rank) && rank[to] > rank[layer]) {
            printf "%s:%d: #include \"%s\": %s includes %s, a higher layer; expected only layers up to %s\n", FILENAME, FNR, inc, layer, to, layer; bad++
        }
        if (system("test -f sim/" inc) != 0) { printf "%s:%d: #include \"%s\": no such header in sim/\n", FILENAME, FNR, inc; bad++ }
        incs++
    }
    END {
        if (bad) exit 1
        printf "layers: %d files, %d includes, every one downward\n", files, incs
    }
' sim/layers.txt sim/*/*.c sim/*/*.h
