#!/bin/bash
# Runs the command-line suites (tests/cli/*.sh) and the bad-input corpus
# against the arsim binary given as $1. Each suite prints "ok ..." or
# "FAIL ..." lines, and "skipped ..." when what it needs is not installed
# (the MPI suite without mpicc); this prints those and one closing tally.
export ARSIM=$(readlink -f "${1:-./arsim}")
cd "$(dirname "$0")/.." || exit 1
pass=0; fail=0
for s in tests/cli/*.sh; do
  [ -f "$s" ] || continue
  out=$(bash "$s" 2>&1); rc=$?
  p=$(grep -c '^ok ' <<<"$out"); f=$(grep -c '^FAIL ' <<<"$out")
  grep -E '^(FAIL|skipped) ' <<<"$out"
  if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then f=1; echo "FAIL $s exited $rc"; echo "$out" | tail -20; fi
  echo "$(basename "$s"): $p ok, $f failed"
  pass=$((pass + p)); fail=$((fail + f))
done
echo "command-line suites with $ARSIM:"
echo "cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
