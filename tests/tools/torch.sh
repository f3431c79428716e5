#!/bin/bash
# torch — the pure parts of the real-PyTorch loop (validate/torch/), without
# PyTorch, from the repository root: the trainer's schedules are arsim's
# (exact sums; the step-by-step oracle tests/data/coll_steps.txt is what
# schedules.py writes); a measurements file written by measfile.py from
# closed-form repetition times is accepted by `arsim calibrate`, which
# recovers α, β and γ; plan.py's sync units and algorithms equal arsim's
# (`run --layers`) for every policy kind; `arsim compare` predicts the
# trainer's iteration cases as `arsim run` does; compare.py's errors,
# speed-ups and verdicts are the hand-computed ones; bad input to the
# trainer and to run.sh exits 2 with one line. Every Python file compiles.
# Needs python3 (and PyYAML for the plan); skips with a line otherwise.
set -u
A=${ARSIM:?set ARSIM to the arsim binary}
T=$(mktemp -d "${TMPDIR:-/tmp}/arsim-torch.XXXXXX") || exit 1
trap '[ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
export LC_ALL=C PYTHONDONTWRITEBYTECODE=1
D=validate/torch
SCN=$D/vgg16-torch.yaml

# shellcheck source=../clilib.bash
. tests/clilib.bash
near() { awk -v a="$1" -v b="$2" -v r="$3" 'BEGIN { d = a - b; m = a < 0 ? -a : a; n = b < 0 ? -b : b;
    if (n > m) m = n; exit !((d < 0 ? -d : d) <= r * m) }'; }

python3_or_skip torch validate/torch/ || exit 0

compiles() {
    python3 -c 'import sys
for f in sys.argv[1:]:
    compile(open(f).read(), f, "exec")' $D/*.py models/gen/profile_model.py
}

schedules_exact() {
    local out
    out=$(python3 $D/schedules.py --check) || { echo "$out" | head -5; return 1; }
    grep -Eq '^schedules: [0-9]+ cases, 0 wrong$' <<<"$out" || { echo "$out" | tail -1; return 1; }
}

schedules_oracle() {
    python3 $D/schedules.py --dump >"$T/steps.txt" || return 1
    cmp -s "$T/steps.txt" tests/data/coll_steps.txt ||
        { echo "schedules.py --dump differs from tests/data/coll_steps.txt"; return 1; }
}

# Closed forms on 4 ranks, α = 150 us, β = 12 ns/B, γ = 0.3 ns/B; each case's
# repetitions are t, 0.97 t and 1.6 t (median t).
raw_fixture() {
    python3 - "$1" <<'EOF'
import json, sys
a, b, g, p = 150e-6, 12e-9, 0.3e-9, 4
cases = []
def add(fields, t):
    fields["samples_s"] = [t * 1.6, t, t * 0.97]
    cases.append(fields)
for n in (8, 512, 32768, 262144, 2097152):
    add({"mode": "pingpong", "class": "inter", "ranks": 2, "bytes": n, "peers": [0, 1]}, a + n * b)
for n in (65536, 1048576, 4194304):
    add({"mode": "reduce", "ranks": p, "bytes": n}, n * g)
for n in (65536, 262144, 1048576, 4194304):
    add({"mode": "allreduce", "algo": "ring", "ranks": p, "bytes": n, "verified": True},
        2 * (p - 1) * a + 2 * (p - 1) / p * n * b + (p - 1) / p * n * g)
env = {"ranks": 4, "hosts": 4, "ranks_per_host": 1, "consecutive": True, "mpi_library": "gloo (synthetic)",
       "mpi_standard": "none", "date": "2025-01-01T00:00:00Z", "command": "tests/tools/torch.sh"}
json.dump({"env": env, "cases": cases}, open(sys.argv[1], "w"))
EOF
}

measfile_calibrate() {
    raw_fixture "$T/raw.json" || return 1
    python3 $D/measfile.py "$T/raw.json" "$T/meas.json" || { echo "measfile.py failed"; return 1; }
    [ ! -e "$T/meas.json.tmp" ] || { echo "temporary file left"; return 1; }
    flat "$T/meas.json" >"$T/meas.flat" || return 1
    grep -q '^\.schema	arsim-measurements/1$' "$T/meas.flat" || { echo "no schema"; return 1; }
    # the median of (1.6 t, t, 0.97 t) is t: ping-pong of 8 B takes α + 8β
    local t0 r0 lo
    t0=$(awk -F'\t' '$1 == ".cases[0].time_s" { print $2 }' "$T/meas.flat")
    r0=$(awk -F'\t' '$1 == ".cases[0].reps" { print $2 }' "$T/meas.flat")
    lo=$(awk -F'\t' '$1 == ".cases[0].min_s" { print $2 }' "$T/meas.flat")
    near "$t0" 0.000150096 1e-9 && [ "$r0" = 3 ] && near "$lo" "$(awk 'BEGIN { printf "%.17g", 0.97 * 0.000150096 }')" 1e-9 ||
        { echo "case 0: time $t0 reps $r0 min $lo, want 1.50096e-4, 3, 0.97 of it"; return 1; }
    "$A" calibrate "$T/meas.json" --out "$T/cal.yaml" >"$T/caltable" 2>"$T/err" ||
        { echo "arsim calibrate: $(cat "$T/err")"; return 1; }
    local a b g
    a=$(sed -n 's/^inter: {.*alpha_s: \([^,}]*\).*/\1/p' "$T/cal.yaml")
    b=$(sed -n 's/^inter: {.*beta_s_per_byte: \([^,}]*\).*/\1/p' "$T/cal.yaml")
    g=$(sed -n 's/^gamma_s_per_byte: //p' "$T/cal.yaml")
    near "$a" 150e-6 1e-6 && near "$b" 12e-9 1e-6 && near "$g" 0.3e-9 1e-6 ||
        { echo "fit alpha $a beta $b gamma $g, want 1.5e-4, 1.2e-8, 3e-10"; return 1; }
    grep -q 'mpi_library: "gloo (synthetic)"' "$T/cal.yaml" || { echo "the library is not recorded"; return 1; }
}

have_yaml() { python3 -c 'import yaml' 2>/dev/null; }

# A scenario with every kind of unit plan the trainer implements.
# (conv5_2 holds exactly 2360320 B and conv2_2 exactly 147712 B: the fusion
# and threshold boundaries are inclusive, as in policy.c and trainsel.c.)
plan_scenario() {
    sed -e '/^policies:/,$d' -e "s|^model: .*|model: $PWD/validate/vgg16-half-cifar10-model.yaml|" \
        -e "s|^gpus_file: .*|gpus_file: $PWD/$D/gpus-cpu.yaml|" "$SCN" >"$T/plan.yaml"
    cat >>"$T/plan.yaml" <<'EOF'
policies:
  - {name: none-rab, overlap: none, algorithm: rabenseifner}
  - {name: ddp, overlap: ddp, algorithm: ring, ddp_layout: rebuilt}
  - {name: layer-fused, overlap: layer, algorithm: hybrid, fusion: 2360320}
  - {name: layer-thr, overlap: layer, algorithm: hybrid, hybrid: {conv: rabenseifner, fc: butterfly, threshold: 147712},
     overrides: {fc7: ring, conv1_1: ring}}
  - {name: prio-small, overlap: priority, algorithm: hybrid, partition: 1MiB, fusion: 2MiB}
  - {name: prio-none, overlap: priority, algorithm: ring, partition: 0}
baseline: ddp
EOF
}

plan_units() {
    have_yaml || { echo "no PyYAML"; return 1; }
    plan_scenario
    "$A" run "$T/plan.yaml" --json "$T/plan.json" --layers >/dev/null 2>"$T/err" || { cat "$T/err"; return 1; }
    python3 - "$T/plan.yaml" "$T/plan.json" <<'EOF'
import json, sys
sys.path.insert(0, "validate/torch")
import plan
scn = plan.Scenario(sys.argv[1])
res = {r["policy"]: r for r in json.load(open(sys.argv[2]))["results"]}
checked = 0
for name, pol in scn.policies.items():
    if pol.overlap == "ddp":
        continue
    got = [u.as_dict(4) for u in plan.units_for(pol, scn.layers, 4)]
    want = [{k: u[k] for k in ("name", "bytes", "algorithm")} for u in res[name]["layers"]]
    if got != want:
        sys.exit("%s: trainer %s\n   arsim %s" % (name, got[:4], want[:4]))
    units = plan.units_for(pol, scn.layers, 4)
    # contiguous and disjoint: the units tile the flat buffer exactly once
    spans = sorted((u.off, u.elems) for u in units)
    end = 0
    for off, n in spans:
        if off != end:
            sys.exit("%s: units leave a gap or overlap at element %d" % (name, off))
        end = off + n
    if end != scn.total_elems():
        sys.exit("%s: units cover %d of %d elements" % (name, end, scn.total_elems()))
    checked += 1
if checked != 5:
    sys.exit("checked %d policies, want 5" % checked)
EOF
}

# iterations.json as the trainer writes it (measfile.iteration_case), with
# each policy's time = arsim's prediction x a factor.
fake_iterations() {
    python3 - "$SCN" "$T/pred.json" "$T/iters.json" "$1" "${2:-}" <<'EOF'
import json, sys
sys.path.insert(0, "validate/torch")
import measfile, plan
scn_path, pred_path, out, factors, spoil = sys.argv[1:6]
scn = plan.Scenario(scn_path)
pred = {r["policy"]: r for r in json.load(open(pred_path))["results"]}
fac = dict(kv.split("=") for kv in factors.split(","))
cases = []
for name, f in fac.items():
    pol = scn.policy(name)
    t = pred[name]["iteration_s"] * float(f)
    if pol.overlap == "ddp":
        units = {"ddp_bucket_bytes": [u["bytes"] for u in pred[name]["layers"]]}
    else:
        units = {"plan": [u.as_dict(4) for u in plan.units_for(pol, scn.layers, 4)]}
        if name == spoil:
            units["plan"][0]["algorithm"] = "butterfly"
    run = {"config": scn_path, "policy": name, "batch": 32, "warmup": 2, "measured": 2, "sets": [],
           "overlap": pol.overlap, "algorithm": "hybrid" if pol.hybrid else pol.algo, "impl": "arsim",
           "elem_bytes": 4, "ranks": 4, "bytes": scn.total_elems() * 4}
    cases.append(measfile.iteration_case(run, [2 * t, t, t, t], t, None if pol.overlap == "ddp" else 0.1,
                                         True, [2.3, 2.2], units))
env = measfile.env(4, ["h0", "h1", "h2", "h3"], "gloo (synthetic)", "tests/tools/torch.sh")
measfile.write(out, env, cases)
EOF
}

compare_verdicts() {
    have_yaml || { echo "no PyYAML"; return 1; }
    "$A" run "$SCN" --json "$T/pred.json" --layers >/dev/null 2>"$T/err" || { cat "$T/err"; return 1; }
    fake_iterations "none-gloo=1.05,ddp=0.98,layer-hybrid=1.02,layer-butterfly=1.0" || return 1
    python3 $D/compare.py "$T/pred.json" "$T/iters.json" --speedup layer-hybrid:none-gloo --speedup layer-hybrid:ddp \
        --json "$T/cmp.json" >"$T/out" 2>&1
    local rc=$?
    [ $rc -eq 0 ] || { echo "exit $rc, want 0: $(tail -8 "$T/out")"; return 1; }
    # (predicted - measured) / measured = 1/f - 1
    grep -Eq '^none-gloo +arsim .* -4\.8% ' "$T/out" && grep -Eq '^ddp +arsim .* \+2\.0% ' "$T/out" ||
        { echo "errors: $(grep -E '^(none-gloo|ddp) ' "$T/out")"; return 1; }
    # speed-up over none-gloo: measured = predicted x 1.05 / 1.02
    python3 - "$T/cmp.json" "$T/pred.json" <<'EOF' || return 1
import json, sys
c = json.load(open(sys.argv[1]))
p = {r["policy"]: r["iteration_s"] for r in json.load(open(sys.argv[2]))["results"]}
s = {(x["policy"], x["base"]): x for x in c["speedups"]}
for base, fb in (("none-gloo", 1.05), ("ddp", 0.98)):
    x = s[("layer-hybrid", base)]
    want_p = p[base] / p["layer-hybrid"]
    want_m = want_p * fb / 1.02
    pts = 100 * (1 - 1 / want_p) - 100 * (1 - 1 / want_m)
    if abs(x["predicted"] - want_p) > 1e-9 or abs(x["measured"] - want_m) > 1e-9 or abs(x["points"] - pts) > 1e-6:
        sys.exit("speed-up over %s: %s, want measured %g predicted %g points %g" % (base, x, want_m, want_p, pts))
if not all(t["met"] for t in c["targets"]):
    sys.exit("a target missed: %s" % c["targets"])
EOF
}

compare_misses() {
    have_yaml || { echo "no PyYAML"; return 1; }
    fake_iterations "none-gloo=1.2,ddp=1.0,layer-ring=1.0" || return 1
    python3 $D/compare.py "$T/pred.json" "$T/iters.json" >"$T/out" 2>&1
    [ $? -eq 3 ] && grep -Eq '^every policy within 10 % of arsim +max \|error\| 16\.7 % +MISSED$' "$T/out" ||
        { echo "want exit 3 and a 16.7 % miss: $(grep -E 'within|^none' "$T/out")"; return 1; }
    fake_iterations "ddp=1.0,layer-ring=1.0" layer-ring || return 1
    python3 $D/compare.py "$T/pred.json" "$T/iters.json" >"$T/out" 2>&1
    [ $? -eq 3 ] && grep -Eq '^layer-ring .*NO: unit 0: trainer' "$T/out" &&
        grep -Eq "^every policy synchronized arsim's units +no +MISSED$" "$T/out" ||
        { echo "a spoiled plan is not caught: $(grep -E '^layer-ring|synchronized' "$T/out")"; return 1; }
    python3 $D/compare.py "$T/pred.json" "$T/iters.json" --speedup layer-ring:nope >"$T/out" 2>&1
    [ $? -eq 2 ] && [ "$(wc -l <"$T/out")" -eq 1 ] && grep -q '^compare.py: --speedup: ' "$T/out" ||
        { echo "bad --speedup: $(cat "$T/out")"; return 1; }
}

# arsim compare reads the trainer's iteration cases and predicts each as
# `arsim run` does with the same calibration.
arsim_compare() {
    have_yaml || { echo "no PyYAML"; return 1; }
    [ -s "$T/cal.yaml" ] || { echo "no calibration (measfile_calibrate failed)"; return 1; }
    "$A" run "$SCN" --set "cluster.calibration=$T/cal.yaml" --json "$T/pred.json" --layers >/dev/null || return 1
    fake_iterations "none-ring=1.0,ddp=1.0,priority-ring=1.0" || return 1
    "$A" compare "$T/iters.json" --calibration "$T/cal.yaml" --json "$T/acmp.json" >"$T/out" 2>"$T/err" ||
        { echo "arsim compare: $(cat "$T/err")"; return 1; }
    flat "$T/acmp.json" | awk -F'\t' '$1 ~ /^\.cases\[[0-9]+\]\.rel_error$/ { n++; v = $2 < 0 ? -$2 : $2; if (v > 1e-9) bad = bad " " $2 }
        END { if (n != 3 || bad != "") { print n " cases, errors" bad; exit 1 } }'
}

trainer_bad_input() {
    local out rc
    out=$(python3 $D/trainer.py --scenario $SCN --out "$T/x" --policies nope 2>&1); rc=$?
    [ $rc -eq 2 ] && [ "$(wc -l <<<"$out")" -eq 1 ] && grep -q "^trainer.py: --policies: no policy 'nope' in " <<<"$out" ||
        { echo "unknown policy: rc $rc: $out"; return 1; }
    out=$(python3 $D/trainer.py --scenario $SCN --out "$T/x" --gloo layer-hybrid 2>&1); rc=$?
    [ $rc -eq 2 ] && grep -q "^trainer.py: --gloo: policy 'layer-hybrid' is not a ring policy" <<<"$out" ||
        { echo "--gloo on hybrid: rc $rc: $out"; return 1; }
    out=$(python3 $D/trainer.py --scenario $SCN --out "$T/x" --iterations 0,3 2>&1); rc=$?
    [ $rc -eq 2 ] && grep -q "^trainer.py: --iterations: '0,3'; expected W,M" <<<"$out" ||
        { echo "--iterations 0,3: rc $rc: $out"; return 1; }
    [ ! -e "$T/x" ] || { echo "an output directory was made"; return 1; }
}

run_usage() {
    local args out rc
    mkdir -p "$T/m" && echo batch=32 >"$T/m/run.env"
    for args in "--local 1" "--batch 0" "--frobnicate 1" "--threads 0" "--predict $T/nodir" \
                "--predict $T/m --measure-only"; do
        # shellcheck disable=SC2086
        out=$($D/run.sh $args 2>&1); rc=$?
        [ $rc -eq 2 ] && [ "$(wc -l <<<"$out")" -eq 1 ] && grep -q '^run.sh: --' <<<"$out" ||
            { echo "run.sh $args: rc $rc: $out"; return 1; }
    done
}

t torch.compiles compiles
t torch.schedules-exact schedules_exact
t torch.schedules-oracle schedules_oracle
t torch.measfile-calibrate measfile_calibrate
if have_yaml; then
    t torch.plan-units plan_units
    t torch.compare-verdicts compare_verdicts
    t torch.compare-misses compare_misses
    t torch.arsim-compare arsim_compare
else
    echo "skip torch.plan/compare: python3 has no PyYAML (python3-yaml)"
fi
# run.sh --predict on a run measured elsewhere (validate/h200/torch/full1,
# raw, as --measure-only left it): every policy the trainer measured is
# compared, its error its prediction over its measurement.
predict_raw() {
    local rc
    cp -a validate/h200/torch/full1 "$T/full1" || return 1
    $D/run.sh --predict "$T/full1" --arsim "$A" >"$T/out" 2>&1; rc=$?
    [ $rc -eq 0 ] || [ $rc -eq 3 ] || { echo "run.sh --predict: rc $rc"; tail -5 "$T/out"; return 1; }
    python3 -c '
import json, sys
c = json.load(open(sys.argv[1] + "/compare.json"))
names = [p["policy"] for p in c["policies"]]
assert len(names) == 10, names
for p in c["policies"]:
    assert p["measured_s"] > 0 and p["predicted_s"] > 0, p
    assert abs(p["rel_error"] - (p["predicted_s"] / p["measured_s"] - 1)) < 1e-9, p
' "$T/full1"
}

t torch.trainer-bad-input trainer_bad_input
t torch.run-usage run_usage
t torch.predict-raw predict_raw
