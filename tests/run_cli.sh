#!/bin/bash
# Runs the suites of a folder against the arsim binary given as $1: $2 is
# cli (the default: tests/cli/*.sh, the command-line suites and the
# bad-input corpus, what `make test` runs; no Python) or tools
# (tests/tools/*.sh: the checks of the maintainer tools in Python, what
# `make check-tools` runs). Each suite prints "ok ..." or "FAIL ..." lines,
# and "skipped ..." when what it needs is not installed (the MPI suite
# without mpicc, the tools without python3); this prints those and one
# closing tally.
export ARSIM=$(readlink -f "${1:-./arsim}")
kind=${2:-cli}
case $kind in cli | tools) ;; *) echo "run_cli.sh: unknown suite folder '$kind'; expected cli or tools" >&2; exit 2 ;; esac
cd "$(dirname "$0")/.." || exit 1
pass=0; fail=0
for s in tests/"$kind"/*.sh; do
  [ -f "$s" ] || continue
  out=$(bash "$s" 2>&1); rc=$?
  p=$(grep -c '^ok ' <<<"$out"); f=$(grep -c '^FAIL ' <<<"$out")
  grep -E '^(FAIL|skipped) ' <<<"$out"
  if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then f=1; echo "FAIL $s exited $rc"; echo "$out" | tail -20; fi
  echo "$(basename "$s"): $p ok, $f failed"
  pass=$((pass + p)); fail=$((fail + f))
done
echo "suites of tests/$kind with $ARSIM:"
echo "$kind: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
