#!/bin/bash
# --max-memory: a run under the bound is unchanged by it; one above it is
# refused before anything runs (exit 2, one line, no output file), and the
# estimate in the refusal grows with the ranks (it scales with p, not p^2:
# 16x the ranks needs well under 16x16 the memory).
A=${ARSIM:-./arsim}
ok() { echo "ok $1"; }
fail() { echo "FAIL $1${2:+: $2}"; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT

a=$("$A" collective --ranks 64 --algo ring --size 1MB --json - | grep -v wall_s)
b=$("$A" collective --ranks 64 --algo ring --size 1MB --json - --max-memory 1GiB | grep -v wall_s)
[ -n "$a" ] && [ "$a" = "$b" ] && ok "collective under the bound: same output" || fail "collective under the bound"

est() {   # RANKS: the refusal's estimate in MiB at a 1 MiB bound
  "$A" collective --ranks "$1" --algo ring --size 64MiB --max-memory 1MiB 2>&1 >/dev/null |
    sed -n 's/.*needs about \([0-9.]*\) MiB.*/\1/p'
}
e1=$(est 4096); e16=$(est 65536)
if awk -v a="$e1" -v b="$e16" 'BEGIN { exit !(a > 0 && b > a && b < 256 * a) }'; then
  ok "estimate grows with p, not p^2 ($e1 -> $e16 MiB for 16x the ranks)"
else
  fail "estimate grows with p" "$e1 -> $e16"
fi

"$A" run configs/default.yaml --max-memory 1MiB --json "$T/out.json" 2>"$T/err" >"$T/out"; rc=$?
[ $rc = 2 ] && [ "$(wc -l <"$T/err")" = 1 ] && [ ! -s "$T/out" ] && [ ! -e "$T/out.json" ] &&
  ok "run refused: exit 2, one line, no output" || fail "run refused" "rc $rc"
"$A" run configs/default.yaml --max-memory 1GiB --json "$T/out.json" >"$T/out" 2>"$T/err"; rc=$?
[ $rc = 0 ] && [ -s "$T/out.json" ] && ok "run under the bound runs" || fail "run under the bound" "rc $rc"
"$A" sweep configs/sweep-thesis.yaml --out "$T/sweep" --jobs 1 --max-memory 1MiB 2>"$T/err" >/dev/null; rc=$?
[ $rc = 2 ] && [ ! -e "$T/sweep/results.jsonl" ] && ok "sweep refused before any scenario ran" ||
  fail "sweep refused" "rc $rc"
