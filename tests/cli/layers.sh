#!/bin/bash
# The layer rule (sim/layers.txt, checked by tests/layers.sh): the tree as
# it is passes, and a copy with a deliberately wrong include (an upward
# one, one without its folder, one of a missing header) fails with the
# line that names it.
source tests/clilib.bash
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT

passes() { tests/layers.sh . >/dev/null || { tests/layers.sh .; return 1; }; }
t "the tree keeps the layer rule" passes

# broken KIND LINE EXPECT — a copy of sim/ with LINE added to net/net.c
# must fail (exit 1) and print a line matching EXPECT (a regex).
broken() {
    rm -rf "$T/r"; mkdir -p "$T/r"; cp -r sim tests "$T/r/"
    sed -i "0,/^#include/s||$2\n#include|" "$T/r/sim/net/net.c"
    local out rc
    out=$(tests/layers.sh "$T/r" 2>&1); rc=$?
    [ $rc -eq 1 ] || { echo "exit $rc, expected 1: $out"; return 1; }
    grep -qE "$3" <<<"$out" || { echo "no '$3' in: $out"; return 1; }
}
t "net including train fails" broken up '#include "train/train.h"' \
    'sim/net/net.c:[0-9]+: #include "train/train.h": net includes train, a higher layer'
t "net including cli fails" broken up '#include "cli/cmdrun.h"' 'net includes cli, a higher layer'
t "an include without its folder fails" broken bare '#include "coll.h"' \
    'sim/net/net.c:[0-9]+: #include "coll.h" does not name its folder'
t "an include of a missing header fails" broken missing '#include "net/nosuch.h"' \
    'sim/net/net.c:[0-9]+: #include "net/nosuch.h": no such header'
t "a folder that is not a layer fails" bash -c 'rm -rf "$0/r"; mkdir -p "$0/r"; cp -r sim tests "$0/r/";
    mkdir "$0/r/sim/extra"; printf "int x;\n" > "$0/r/sim/extra/x.c";
    ! tests/layers.sh "$0/r" >/dev/null' "$T"

# make check runs no Python (docs/dev/testing.md): no line of its suites
# (tests/cli, the runners, the layer check) calls python outside a comment;
# the maintainer tools' checks that do live in tests/tools.
no_python() {
    local hits
    hits=$(grep -nE '(^|[;&|({]|\$\()[[:space:]]*(exec[[:space:]]+)?python3?[[:space:]]' tests/cli/*.sh tests/run_cli.sh \
        tests/run_unit.sh tests/layers.sh tests/clilib.bash | grep -vE '^[^:]+:[0-9]+:[[:space:]]*#')
    [ -z "$hits" ] || { echo "$hits" | head -3; return 1; }
}
t "the suites of make check call no Python" no_python
