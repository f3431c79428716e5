#!/bin/bash
# Runs every Check suite in BUILD/tests/ and prints one closing tally.
build=${1:-build}
pass=0; fail=0; bad=()
for t in "$build"/tests/test_*; do
  [ -x "$t" ] || continue
  out=$("$t" 2>&1); rc=$?
  echo "$out" | grep -E '^[0-9]+%: Checks' | sed "s|^|$(basename "$t"): |"
  n=$(echo "$out" | sed -n 's/.*Checks: \([0-9]*\), Failures: \([0-9]*\), Errors: \([0-9]*\).*/\1 \2 \3/p' | tail -1)
  read -r c f e <<<"${n:-0 0 0}"
  pass=$((pass + c - f - e)); fail=$((fail + f + e))
  if [ $rc -ne 0 ] || [ -z "$n" ]; then bad+=("$(basename "$t")"); echo "$out" | grep -vE '^[0-9]+%: Checks' | head -40; fi
done
echo "unit suites in $build:"
echo "unit: $pass passed, $fail failed"
[ ${#bad[@]} -eq 0 ] || { echo "failing suites: ${bad[*]}"; exit 1; }
