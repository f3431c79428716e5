#!/bin/bash
# tests/bench/run.sh — `make bench`: arsim's speed and memory beside their
# targets, and SimGrid SMPI side by side on the same collectives.
#
#   tests/bench/run.sh [ARSIM]          (from the repository root; ARSIM defaults to ./arsim)
#
# Sections: (a) kernel — ring and butterfly all-reduce of 64 MiB on stars
# of 64, 256, 1024 ranks and a k=16 fat-tree, message and packet mode
# (issue 2); (b) training — whole `arsim run`s (issue 3); (c) the sweep
# bench (tests/bench/sweep.sh, when present); (d) SimGrid SMPI's trace
# replay of lr / rdb / rab_rdb against arsim's ring / butterfly /
# rabenseifner on 64 and 256 ranks (issue 2), and on 6, 12 and 100 ranks
# at 1 MiB and 64 MiB (MPICH's fold; issue 12); (e) scale: the targets of
# issue 14 up to 65,536 GPUs (run before (d)); (f) NCCL: all-reduce of
# 1 GiB through NCCL's model on 1,024 and 8,192 DGX H100 nodes (issue 34), and llama3-70b
# under fsdp on 8,192 DGX H100 nodes (issue 36;
# run before (d)).
#
# Every figure is printed beside its target with PASS or MISS. A MISS never
# fails the build: the exit status is 0 unless something crashed (a run
# that exits non-zero or prints no figures), then 1. The last line is a
# summary. Wall time and peak RSS come from tests/bench/benchrun.c (fork,
# exec, wait4), built here with cc; GNU time is not needed.
#
# Environment: BENCH_DIR (scratch, default build/bench), BENCH_REPEAT (runs
# of each kernel case with a wall target, best wall kept; default 3), BENCH_SKIP
# (space-separated sections to skip: kernel training whatif sweep scale nccl smpi), BENCH_SCALE_TIMEOUT
# (seconds after which a scale run is killed and reported as a MISS; default 180), BENCH_NCCL_TIMEOUT
# (the same for an NCCL run; default 300). The NCCL rows alone:
# BENCH_SKIP="kernel training whatif sweep scale smpi" tests/bench/run.sh.
set -u
ARSIM=$(readlink -f "${1:-./arsim}")
cd "$(dirname "$0")/../.." || exit 1
HERE=tests/bench
DIR=${BENCH_DIR:-build/bench}
REPEAT=${BENCH_REPEAT:-3}
SKIP=" ${BENCH_SKIP:-} "
mkdir -p "$DIR" || exit 1

npass=0; nmiss=0; ncrash=0; crashed=()

# ---- helpers -------------------------------------------------------------

crash() {   # WHAT [DETAILS-FILE]: counts and reports a crashed run
  ncrash=$((ncrash + 1)); crashed+=("$1")
  echo "  CRASH: $1"
  [ -n "${2:-}" ] && [ -s "$2" ] && tail -5 "$2" | sed 's/^/    | /'
}

# verdict VALUE OP LIMIT: sets V to PASS or MISS and counts it (no
# subshell: call it directly, then use $V). OP is le or ge.
verdict() {
  if awk -v v="$1" -v l="$3" -v op="$2" 'BEGIN { exit !(op == "le" ? v <= l : v >= l) }'; then
    npass=$((npass + 1)); V=PASS
  else
    nmiss=$((nmiss + 1)); V=MISS
  fi
}

# measure OUT ERR -- CMD...: runs CMD under benchrun (stdout to OUT, stderr
# to ERR) and sets M_RC, M_WALL, M_CPU (s) and M_RSS (MiB).
measure() {
  local out=$1 err=$2; shift 3
  "$DIR/benchrun" -o "$out" -- "$@" 2>"$err"
  local line; line=$(grep '^benchrun: rc=' "$err" | tail -1)
  M_RC=$(sed -n 's/.*rc=\([0-9]*\).*/\1/p' <<<"$line")
  M_WALL=$(sed -n 's/.*wall_s=\([0-9.]*\).*/\1/p' <<<"$line")
  M_CPU=$(sed -n 's/.*cpu_s=\([0-9.]*\).*/\1/p' <<<"$line")
  M_RSS=$(awk -v k="$(sed -n 's/.*maxrss_kib=\([0-9]*\).*/\1/p' <<<"$line")" 'BEGIN { printf "%.1f", k / 1024 }')
  [ -n "$M_RC" ] || M_RC=127
}

jget() {    # FILE KEY: the first number after "KEY": in a JSON file
  sed -n "s/.*\"$2\":[[:space:]]*\\([-0-9.eE+]*\\).*/\\1/p" "$1" | head -1
}

skipped() { [[ "$SKIP" == *" $1 "* ]]; }

# ---- setup ---------------------------------------------------------------

if ! cc -std=c11 -O2 -Wall -Wextra -Werror -o "$DIR/benchrun" "$HERE/benchrun.c"; then
  echo "bench: cannot build $HERE/benchrun.c"; echo "bench: 0 targets met, 0 missed, 1 crashed"; exit 1
fi
[ -x "$ARSIM" ] || { echo "bench: no arsim binary at $ARSIM"; echo "bench: 0 targets met, 0 missed, 1 crashed"; exit 1; }

echo "arsim bench — $(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) cores ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)); load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "  wall = process wall seconds (benchrun), cpu = user+system seconds, rss = peak resident MiB; arsim runs on one core."
echo "  A loaded machine inflates wall times; cpu shows the work itself."

# ---- (a) kernel ----------------------------------------------------------

kernel_case() {   # LABEL RANKS MODE ALGO ARSIM-ARGS...: one row (a ring on 1024 ranks: best wall of $REPEAT runs)
  local label=$1 p=$2 mode=$3 algo=$4; shift 4
  local best_wall="" best_cpu="" best_sim="" rss=0 out="$DIR/k.json" err="$DIR/k.err" i simw runs=1
  [ "$algo" = ring ] && [ "$p" = 1024 ] && runs=$REPEAT
  for ((i = 0; i < runs; i++)); do
    measure "$out" "$err" -- "$ARSIM" collective "$@" --algo "$algo" --size 64MiB --json -
    if [ "$M_RC" != 0 ] || [ -z "$(jget "$out" time_s)" ]; then
      crash "kernel $label $mode $algo (exit $M_RC)" "$err"; return
    fi
    simw=$(jget "$out" wall_s)
    if [ -z "$best_wall" ] || awk -v a="$M_WALL" -v b="$best_wall" 'BEGIN { exit !(a < b) }'; then
      best_wall=$M_WALL; best_cpu=$M_CPU; best_sim=$simw
    fi
    rss=$(awk -v a="$rss" -v b="$M_RSS" 'BEGIN { m = (b > a) ? b : a; print m }')
  done
  local t ev rate rcpu checks=""
  t=$(jget "$out" time_s); ev=$(jget "$out" events)
  rate=$(awk -v e="$ev" -v w="$best_sim" 'BEGIN { r = (w > 0) ? e / w / 1e6 : 0; printf "%.1f", r }')
  rcpu=$(awk -v e="$ev" -v w="$best_cpu" 'BEGIN { r = (w > 0) ? e / w / 1e6 : 0; printf "%.1f", r }')
  if awk -v e="$ev" 'BEGIN { exit !(e >= 1000000) }'; then
    verdict "$rcpu" ge 10; checks+="ev/s>=10M $V"
  else
    checks+="ev/s n/a (<1M events)"
  fi
  if [ "$algo" = ring ] && [ "$p" = 1024 ]; then
    local lim=1; [ "$mode" = packet ] && lim=2
    verdict "$best_wall" le "$lim"; checks+="; wall<=${lim}s $V"
  fi
  verdict "$rss" le 512; checks+="; rss<=512MiB $V"
  printf "  %-13s %5s %-7s %-9s %11.6f %10s %6s %6s %7.3f %7.3f %7.1f  %s\n" \
    "$label" "$p" "$mode" "$algo" "$t" "$ev" "$rate" "$rcpu" "$best_wall" "$best_cpu" "$rss" "$checks"
}

if ! skipped kernel; then
  echo
  echo "== (a) kernel: all-reduce of 64 MiB, arsim collective; 10 Gbit/s and 5 us per link (rings on 1024 ranks: best of $REPEAT runs)"
  echo "   Mev/s: million events per second of arsim's own wall_s (the simulation alone); Mev/cpu: per CPU second of the"
  echo "   whole process (start-up included). Targets: >= 10 M events per second on one core, judged on Mev/cpu (single-"
  echo "   threaded, so it is the wall rate of an idle core; runs of >= 1 M events), ring on 1024 ranks <= 1 s wall"
  echo "   (message mode) and <= 2 s (packet mode, 64 KiB packets), peak RSS <= 512 MiB."
  printf "  %-13s %5s %-7s %-9s %11s %10s %6s %6s %7s %7s %7s  %s\n" topology ranks mode algo sim_time_s events Mev/s Mev/cpu wall_s cpu_s rss_MiB targets
  for mode in message packet; do
    pk=(); [ "$mode" = packet ] && pk=(--packet 64KiB)
    for p in 64 256 1024; do
      for algo in ring butterfly; do
        kernel_case star "$p" "$mode" "$algo" --ranks "$p" --bandwidth 10Gbps --latency 5us "${pk[@]}"
      done
    done
    for algo in ring butterfly; do
      kernel_case fat-tree-k16 1024 "$mode" "$algo" --topology "$HERE/fat-tree-k16.yaml" --ranks 1024 "${pk[@]}"
    done
  done
fi

# ---- (b) training --------------------------------------------------------

train_case() {   # LABEL GPUS LIMIT_S CONFIG SET...
  local label=$1 gpus=$2 lim=$3 cfg=$4; shift 4
  local args=() s
  for s in "$@"; do args+=(--set "$s"); done
  local out="$DIR/t.txt" err="$DIR/t.err" js="$DIR/t.json"
  rm -f "$js"
  measure "$out" "$err" -- "$ARSIM" run "$cfg" "${args[@]}" --json "$js"
  local it ev
  it=$( [ -f "$js" ] && jget "$js" iteration_s); ev=$( [ -f "$js" ] && jget "$js" events)
  if [ "$M_RC" != 0 ] || [ -z "$it" ]; then crash "training $label (exit $M_RC)" "$err"; return; fi
  verdict "$M_WALL" le "$lim"; local vw=$V
  verdict "$M_RSS" le 1024
  printf "  %-47s %5s %9.3f %9s %7.3f %7.3f %7.1f  wall<=%ss %s; rss<=1GiB %s\n" "$label" "$gpus" \
    "$(awk -v x="$it" 'BEGIN { print x * 1000 }')" "${ev:-?}" "$M_WALL" "$M_CPU" "$M_RSS" "$lim" "$vw" "$V"
}

if ! skipped training; then
  echo
  echo "== (b) training: one whole arsim run (2 warm-up + 3 measured iterations), batch 64 per GPU, message mode"
  printf "  %-47s %5s %9s %9s %7s %7s %7s  %s\n" scenario GPUs iter_ms events wall_s cpu_s rss_MiB targets
  one_pol() { echo "policies=[{name: $1, overlap: $2, algorithm: $3}]"; }
  train_case "VGG-16 layer+hybrid, star 10G (default.yaml)" 64 1 configs/default.yaml \
    cluster.nodes=64 "$(one_pol thesis layer hybrid)" baseline=thesis 'batch=[64]'
  train_case "VGG-16 layer+hybrid, star 10G (default.yaml)" 512 10 configs/default.yaml \
    cluster.nodes=512 "$(one_pol thesis layer hybrid)" baseline=thesis 'batch=[64]'
  # one A100 per host on a k=16 fat-tree (1024 hosts), links as topologies/fat-tree-k16.yaml, fp16 as
  # configs/resnet50-64gpu.yaml (whose NVSwitch `intra` class needs gpus_per_node > 1)
  train_case "ResNet-50 priority+auto, 1024x1 fat-tree k=16" 1024 20 configs/default.yaml \
    model=resnet50 gpu=a100 precision=fp16 cluster.topology=fat-tree cluster.k=16 cluster.nodes=1024 \
    cluster.link.bandwidth=100Gbps cluster.link.latency=500ns cluster.switch_latency=200ns \
    "$(one_pol prio priority auto)" baseline=prio 'batch=[64]'
  # configs/resnet50-64gpu.yaml scaled to 128 nodes x 8 GPUs (NVSwitch inside, k=8 fat-tree between)
  train_case "ResNet-50 priority+auto, 128x8 fat-tree k=8" 1024 20 configs/resnet50-64gpu.yaml \
    cluster.nodes=128 cluster.k=8 "$(one_pol prio priority auto)" baseline=prio 'batch=[64]'
fi

# ---- (b2) what-if (BENCH_SKIP name: whatif) -----------------------------

if ! skipped whatif; then
  echo
  echo "== (b2) what-if: per-rank streams, VGG-16 on 64 V100s (star 10G), cv 0.1, 2 warm-up + 100 measured iterations (issue 15)"
  printf "  %-47s %5s %9s %9s %7s %7s %7s  %s\n" scenario GPUs iter_ms events wall_s cpu_s rss_MiB targets
  wi() { echo "policies=[{name: $1, overlap: $2, algorithm: $3}]"; }
  for pol in "prio priority auto" "ddp ddp ring"; do
    set -- $pol
    train_case "VGG-16 $2+$3, variation cv 0.1" 64 10 configs/default.yaml cluster.nodes=64 "$(wi "$@")" \
      baseline="$1" 'batch=[32]' 'iterations={warmup: 2, measured: 100}' 'variation={dist: normal, cv: 0.1, seed: 1}'
  done
fi

# ---- (c) sweep -----------------------------------------------------------

if ! skipped sweep; then
  echo
  echo "== (c) sweep (tests/bench/sweep.sh)"
  if [ -f "$HERE/sweep.sh" ]; then
    sout="$DIR/sweep.out"
    bash "$HERE/sweep.sh" "$ARSIM" >"$sout" 2>&1; src=$?
    sed 's/^/  /' "$sout"
    # sweep.sh ends its target lines in "met" / "NOT MET" and its determinism line in "yes" / "NO"
    met=$(grep -c ': met$\|identical.*: yes$' "$sout"); notmet=$(grep -c 'NOT MET$\|identical.*: NO$' "$sout")
    npass=$((npass + met)); nmiss=$((nmiss + notmet))
    if [ $src -ne 0 ] || grep -q '^FAIL' "$sout"; then crash "sweep.sh (exit $src)"; fi
  else
    echo "  (no tests/bench/sweep.sh yet)"
  fi
fi

# ---- (e) scale (issue 14) -------------------------------------------------

# scale_row LABEL WALL_LIMIT_S RSS_LIMIT_MIB TIMEOUT_S -- ARSIM-ARGS...: one run (a 1,024-rank ring: best
# wall of $REPEAT), its figures beside the issue's targets; a run past TIMEOUT_S is killed and shown as
# "> TIMEOUT_S" (MISS). Events per CPU second are judged (>= 20 M) on the 1,024-rank ring only.
scale_row() {
  local label=$1 wl=$2 rl=$3 to=$4; shift 5
  local out="$DIR/s.out" err="$DIR/s.err" runs=1 i best="" cpu="" rss=0 rc=0 ev=""
  [[ "$label" == "ring 64 MiB, 1,024"* ]] && runs=$REPEAT
  for ((i = 0; i < runs; i++)); do
    measure "$out" "$err" -- timeout "$to" "$ARSIM" "$@"
    rc=$M_RC
    [ "$rc" = 0 ] || break
    if [ -z "$best" ] || awk -v a="$M_WALL" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$M_WALL; cpu=$M_CPU; fi
    rss=$(awk -v a="$rss" -v b="$M_RSS" 'BEGIN { print (b > a) ? b : a }')
  done
  if [ "$rc" = 124 ]; then
    nmiss=$((nmiss + 1)); local vw=MISS   # killed: its wall is not known to meet any limit
    printf "  %-58s %9s %9s %8s %6s  wall<=%ss %s (killed at %s s); rss<=%sMiB n/a\n" "$label" "> $to" "-" \
      "$M_RSS" "-" "$wl" "$vw" "$to" "$rl"
    return
  fi
  if [ "$rc" != 0 ]; then crash "scale $label (exit $rc)" "$err"; return; fi
  ev=$(jget "$out" events)
  verdict "$best" le "$wl"; local vw=$V
  verdict "$rss" le "$rl"; local vr=$V
  local rate="-" extra=""
  if [ "$runs" -gt 1 ] && [ -n "$ev" ]; then
    rate=$(awk -v e="$ev" -v c="$cpu" 'BEGIN { printf "%.1f", (c > 0) ? e / c / 1e6 : 0 }')
    verdict "$rate" ge 20; extra="; Mev/cpu>=20 $V"
  fi
  printf "  %-58s %9.3f %9.3f %8.1f %6s  wall<=%ss %s; rss<=%sMiB %s%s\n" "$label" "$best" "$cpu" "$rss" "$rate" \
    "$wl" "$vw" "$rl" "$vr" "$extra"
}

if ! skipped scale; then
  echo
  echo "== (e) scale (issue 14): 64 MiB all-reduces and whole runs up to 65,536 GPUs, one run each (the 1,024-rank"
  echo "   ring: best of $REPEAT). Targets as the issue's table; BENCH_SCALE_TIMEOUT (default 180 s) kills a run past it."
  printf "  %-58s %9s %9s %8s %6s  %s\n" run wall_s cpu_s rss_MiB Mev/cpu targets
  STO=${BENCH_SCALE_TIMEOUT:-180}
  co=(collective --size 64MiB --json -)
  scale_row "ring 64 MiB, 1,024 ranks, star, message mode" 0.25 32 "$STO" -- "${co[@]}" --algo ring --ranks 1024
  scale_row "ring 64 MiB, 4,096 ranks, star" 3 128 "$STO" -- "${co[@]}" --algo ring --ranks 4096
  scale_row "ring 64 MiB, 16,384 ranks, star" 60 512 "$STO" -- "${co[@]}" --algo ring --ranks 16384
  for algo in rabenseifner butterfly; do
    scale_row "$algo 64 MiB, 65,536 ranks, k=64 fat-tree" 10 1024 "$STO" -- "${co[@]}" --algo "$algo" \
      --topology "$HERE/fat-tree-k64.yaml"
  done
  scale_row "hierarchical 64 MiB, 8,192 x 8, rabenseifner between nodes" 60 2048 "$STO" -- "${co[@]}" \
    --algo hierarchical --inter rabenseifner --topology "$HERE/hier-8192x8.yaml"
  scale_row "hierarchical 64 MiB, 8,192 x 8, ring between nodes" 60 2048 "$STO" -- "${co[@]}" \
    --algo hierarchical --inter ring --topology "$HERE/hier-8192x8.yaml"
  for m in gpt2 resnet50; do
    for pol in "ddp-hier|{name: ddp-hier, overlap: ddp, algorithm: hierarchical, inter: rabenseifner, bucket: 25MiB}" \
               "priority-auto|{name: priority-auto, overlap: priority, algorithm: auto}"; do
      scale_row "run configs/$m-64k.yaml, ${pol%%|*}" 120 4096 "$STO" -- run "configs/$m-64k.yaml" \
        --set "policies=[${pol#*|}]" --set "baseline=${pol%%|*}" --json "$DIR/s.json"
    done
  done
fi

# ---- (f) NCCL (issue 34) ---------------------------------------------------

# nccl_row LABEL WALL_LIMIT_S RSS_LIMIT_MIB TIMEOUT_S -- ARSIM-ARGS...: $REPEAT runs (one when the first
# is killed past TIMEOUT_S); wall min / median / max, the median judged, and the largest peak RSS.
nccl_row() {
  local label=$1 wl=$2 rl=$3 to=$4; shift 5
  local out="$DIR/n.out" err="$DIR/n.err" i walls=() rss=0 ev=""
  for ((i = 0; i < REPEAT; i++)); do
    measure "$out" "$err" -- timeout "$to" "$ARSIM" "$@"
    if [ "$M_RC" = 124 ]; then
      nmiss=$((nmiss + 1)); local vw=MISS   # killed: its wall is not known to meet any limit
      printf "  %-44s %27s %8s %9s  wall<=%ss %s (killed at %s s); rss<=%sMiB n/a\n" "$label" "> $to" "$M_RSS" \
        "-" "$wl" "$vw" "$to" "$rl"
      return
    fi
    if [ "$M_RC" != 0 ]; then crash "nccl $label (exit $M_RC)" "$err"; return; fi
    walls+=("$M_WALL")
    rss=$(awk -v a="$rss" -v b="$M_RSS" 'BEGIN { print (b > a) ? b : a }')
  done
  ev=$(jget "$out" events)
  local mmm; mmm=$(printf '%s\n' "${walls[@]}" | sort -g | awk '{ w[NR] = $1 } END {
    printf "%.3f %.3f %.3f", w[1], (NR % 2) ? w[(NR + 1) / 2] : (w[NR / 2] + w[NR / 2 + 1]) / 2, w[NR] }')
  local med; med=$(cut -d' ' -f2 <<<"$mmm")
  verdict "$med" le "$wl"; local vw=$V
  verdict "$rss" le "$rl"; local vr=$V
  printf "  %-44s %27s %8.1f %9s  wall<=%ss %s; rss<=%sMiB %s\n" "$label" "$mmm" "$rss" "${ev:--}" "$wl" "$vw" \
    "$rl" "$vr"
}

if ! skipped nccl; then
  echo
  echo "== (f) NCCL (issue 34): all-reduce of 1 GiB by NCCL's tuner and schedule on DGX H100 nodes, $REPEAT runs"
  echo "   each (wall min / median / max; the median judged). BENCH_NCCL_TIMEOUT (default 300 s) kills a run past it."
  printf "  %-44s %27s %8s %9s  %s\n" run "wall_s min/median/max" rss_MiB events targets
  NTO=${BENCH_NCCL_TIMEOUT:-300}
  nc=(collective --node dgx-h100 --algo nccl --size 1GiB --json -)
  nccl_row "NCCL all-reduce 1 GiB, 1,024 x 8 H100" 10 2048 "$NTO" -- "${nc[@]}" --nodes 1024
  nccl_row "NCCL all-reduce 1 GiB, 8,192 x 8 H100" 60 2048 "$NTO" -- "${nc[@]}" --nodes 8192 --leaf-radix 128
  # issue 36: llama3-70b under fsdp (full_shard) on 8,192 DGX H100 nodes, its all-gathers and
  # reduce-scatters through NCCL (the torchtitan scenario's policy on another model and cluster);
  # the issue sets only the time (120 s); the memory column is judged against section (e)'s 4 GiB.
  # Killed at 130 s: past 120 s it is a miss whatever it would take (its Ring all-gathers and
  # reduce-scatters grow with the square of the GPUs; simulated on one leaf's 64 nodes of the 8,192,
  # about 100 s of CPU, docs/dev/performance.md).
  # (the torchtitan config runs fsdp2, each NCCL call live: FSDP1's policy set here)
  nccl_row "run llama3-70b fsdp, 8,192 x 8 H100" 120 4096 "$((NTO < 130 ? NTO : 130))" -- run configs/llama3-8b-fsdp-h100-128.yaml \
    --set 'policies.0={name: fsdp, overlap: fsdp, sharding: full_shard, reduce_precision: fp32}' --set model=llama3-70b --set cluster.node=dgx-h100 --set cluster.nodes=8192 --set cluster.leaf_radix=128 \
    --json -
fi

# ---- (d) SimGrid SMPI ----------------------------------------------------

# Messages on one rank's critical path: ring 2(p-1); butterfly lg p, and
# k+2 with MPICH's fold for p not a power of two (k = floor(lg p));
# Rabenseifner 2 lg p, and 2k+2 folded.
crit_msgs() {
  awk -v a="$1" -v p="$2" 'BEGIN { k = 0; while (2 ^ (k + 1) <= p) k++; f = (2 ^ k != p)
    m = (a == "ring") ? 2 * (p - 1) : (a == "butterfly") ? k + 2 * f : 2 * k + 2 * f; print m }'
}

# hostfile and replay index of P ranks each running one all-reduce of BYTES (MPI_BYTE)
smpi_traces() {   # P BYTES: sets HF and IDX
  HF="$sd/hosts$1-$2"; IDX="$sd/index$1-$2"
  : >"$HF"; : >"$IDX"
  local r
  for ((r = 0; r < $1; r++)); do
    echo "h$r" >>"$HF"
    printf '%s init\n%s allreduce %s 0\n%s finalize\n' $r $r "$2" $r >"$sd/r$1-$2-$r.txt"
    readlink -f "$sd/r$1-$2-$r.txt" >>"$IDX"
  done
}

smpi_run() {   # OUT ERR PLATFORM NP HOSTFILE INDEX ALGO: replay, sets S_TIME (s) and the M_* figures
  measure "$1" "$2" -- smpirun -no-privatize -np "$4" -platform "$3" -hostfile "$5" -replay "$6" \
    --cfg=network/model:CM02 --cfg=network/TCP-gamma:0 --cfg=network/crosstraffic:0 \
    --cfg=smpi/allreduce:"$7" --cfg=smpi/host-speed:1Gf --cfg=smpi/display-timing:yes \
    --log=xbt_cfg.thres:warning --log=smpi_config.thres:warning
  S_TIME=$(sed -n 's/.*Simulation time \([0-9.eE+-]*\).*/\1/p' "$2" | tail -1)
  S_SIM=$(sed -n 's/.*The simulation took \([0-9.eE+-]*\) seconds.*/\1/p' "$2" | tail -1)
}

if ! skipped smpi; then
  echo
  echo "== (d) SimGrid SMPI side by side: all-reduce of 64 MiB (MPI_BYTE), star of P hosts, 10 Gbit/s and 5 us per link"
  if ! command -v smpirun >/dev/null 2>&1 && [ -x ./.ci/deps.sh ]; then
    ./.ci/deps.sh libsimgrid-dev 2>&1 | sed 's/^/  /'
  fi
  if ! command -v smpirun >/dev/null 2>&1; then
    echo "  SKIPPED: smpirun not found (Debian: apt-get install libsimgrid-dev, as root)"
  else
    sg=$(dpkg-query -W -f='${Version}' libsimgrid-dev 2>/dev/null || echo '?')
    echo "   SimGrid $sg, smpirun -replay (time-independent trace: one 'allreduce 67108864 0' action per rank, no data,"
    echo "   no reduction), -no-privatize, network/model:CM02, TCP-gamma:0, crosstraffic:0; platform $HERE/smpi-star-256.xml"
    echo "   (private 1.25 GB/s, 5 us SPLITDUPLEX link per host, no backbone: route = 2 links, as arsim's star)."
    sd="$DIR/smpi"; mkdir -p "$sd"
    # what SMPI adds to every message: one rdb message of 100 B at 1 kB/s
    printf 'h0\nh1\n' >"$sd/hosts2"
    : >"$sd/index2"
    for r in 0 1; do
      printf '%s init\n%s allreduce 100 0\n%s finalize\n' $r $r $r >"$sd/probe$r.txt"
      echo "$(readlink -f "$sd/probe$r.txt")" >>"$sd/index2"
    done
    smpi_run "$sd/probe.out" "$sd/probe.err" "$HERE/smpi-probe.xml" 2 "$sd/hosts2" "$sd/index2" rdb
    if [ "$M_RC" != 0 ] || [ -z "$S_TIME" ]; then
      crash "smpi probe (exit $M_RC)" "$sd/probe.err"; ovh=16
      echo "   per-message overhead probe failed; assuming 16 bytes"
    else
      ovh=$(awk -v t="$S_TIME" 'BEGIN { printf "%.0f", t * 1000 - 100 }')
      echo "   SMPI per-message overhead, measured: one 100 B message at 1 kB/s takes ${S_TIME} s = (100 + $ovh) B / 1 kB/s -> $ovh bytes"
    fi
    echo "   arsim' = arsim + (messages on the critical path) x $ovh B / 1.25 GB/s: what SMPI must show if both models agree;"
    echo "   agreement target |SMPI - arsim'| / SMPI <= 1%; speed target: arsim process wall >= 20x shorter than smpirun's."
    echo "   Walls: process wall seconds (what a user waits for); sim: each tool's own timer around the simulation alone"
    echo "   (arsim's wall_s; SMPI's \"simulation took\", after parsing and platform setup). speedup = smpi_wall / arsim_wall."
    printf "  %4s %-22s %12s %12s %9s %8s %8s %8s %9s %9s %7s  %s\n" P "algo arsim/SMPI" arsim_s "arsim'_s" smpi_s "diff%" a_wall s_wall a_sim s_sim speedup targets
    for p in 64 256; do
      smpi_traces "$p" 67108864
      for pair in ring:lr butterfly:rdb rabenseifner:rab_rdb; do
        a=${pair%%:*}; s=${pair##*:}
        measure "$sd/a.json" "$sd/a.err" -- "$ARSIM" collective --ranks "$p" --bandwidth 10Gbps --latency 5us \
          --algo "$a" --size 64MiB --json -
        at=$(jget "$sd/a.json" time_s); aw=$M_WALL; asim=$(jget "$sd/a.json" wall_s)
        if [ "$M_RC" != 0 ] || [ -z "$at" ]; then crash "arsim $a on $p ranks (exit $M_RC)" "$sd/a.err"; continue; fi
        smpi_run "$sd/s.out" "$sd/s.err" "$HERE/smpi-star-256.xml" "$p" "$HF" "$IDX" "$s"
        if [ "$M_RC" != 0 ] || [ -z "$S_TIME" ]; then crash "smpirun $s on $p ranks (exit $M_RC)" "$sd/s.err"; continue; fi
        if ! grep -q "Switch to algorithm $s for collective allreduce" "$sd/s.err"; then
          crash "smpirun did not select allreduce algorithm $s" "$sd/s.err"; continue
        fi
        adj=$(awk -v t="$at" -v m="$(crit_msgs "$a" "$p")" -v o="$ovh" 'BEGIN { printf "%.9f", t + m * o / 1.25e9 }')
        diff=$(awk -v x="$adj" -v y="$S_TIME" 'BEGIN { d = (x - y) / y * 100; printf "%+.4f", d }')
        absd=$(awk -v d="$diff" 'BEGIN { m = (d < 0) ? -d : d; print m }')
        spd=$(awk -v a="$aw" -v s="$M_WALL" 'BEGIN { r = (a > 0) ? s / a : 0; printf "%.0f", r }')
        verdict "$absd" le 1; va=$V
        verdict "$spd" ge 20
        printf "  %4s %-22s %12.9f %12.9f %9.6f %8s %8.3f %8.3f %9.5f %9.5f %6sx  agree<=1%% %s; speed>=20x %s\n" \
          "$p" "$a/$s" "$at" "$adj" "$S_TIME" "$diff" "$aw" "$M_WALL" "$asim" "${S_SIM:-0}" "$spd" "$va" "$V"
      done
    done
    echo
    echo "   Non-powers of two (MPICH's fold), 1 MiB and 64 MiB, same platform; arsim with its default protocol"
    echo "   (64 KiB eager limit, no handshake: SMPI's send-is-detached-thresh). Target |SMPI - arsim'| / SMPI <= 1%"
    echo "   for butterfly/rdb and rabenseifner/rab_rdb. Ring/lr has no target: at a count not divisible by P, lr runs"
    echo "   its ring on floor(n/P)-byte blocks and then all-reduces the n mod P leftover bytes with redbcast: a linear"
    echo "   reduce to rank 0 (alpha, plus P-1 small messages through its link) and a binomial broadcast whose eager"
    echo "   sends leave the root together (ceil(lg P) - 1 alpha deep): ceil(lg P) alpha more (docs/dev/performance.md: SMPI side by side)."
    printf "  %4s %9s %-22s %12s %12s %12s %9s  %s\n" P bytes "algo arsim/SMPI" arsim_s "arsim'_s" smpi_s "diff%" "target"
    for p in 6 12 100; do
      for bytes in 1048576 67108864; do
        smpi_traces "$p" "$bytes"
        for pair in butterfly:rdb rabenseifner:rab_rdb ring:lr; do
          a=${pair%%:*}; s=${pair##*:}
          measure "$sd/a.json" "$sd/a.err" -- "$ARSIM" collective --ranks "$p" --bandwidth 10Gbps --latency 5us \
            --algo "$a" --size "$bytes" --json -
          at=$(jget "$sd/a.json" time_s)
          if [ "$M_RC" != 0 ] || [ -z "$at" ]; then crash "arsim $a on $p ranks (exit $M_RC)" "$sd/a.err"; continue; fi
          smpi_run "$sd/s.out" "$sd/s.err" "$HERE/smpi-star-256.xml" "$p" "$HF" "$IDX" "$s"
          if [ "$M_RC" != 0 ] || [ -z "$S_TIME" ]; then crash "smpirun $s on $p ranks (exit $M_RC)" "$sd/s.err"; continue; fi
          adj=$(awk -v t="$at" -v m="$(crit_msgs "$a" "$p")" -v o="$ovh" 'BEGIN { printf "%.9f", t + m * o / 1.25e9 }')
          diff=$(awk -v x="$adj" -v y="$S_TIME" 'BEGIN { d = (x - y) / y * 100; printf "%+.4f", d }')
          if [ "$a" = ring ]; then
            gap=$(awk -v x="$adj" -v y="$S_TIME" 'BEGIN { printf "%.1f", (y - x) / 10e-6 }')
            printf "  %4s %9s %-22s %12.9f %12.9f %12.6f %9s  none: SMPI - arsim' = %s alpha\n" \
              "$p" "$bytes" "$a/$s" "$at" "$adj" "$S_TIME" "$diff" "$gap"
          else
            absd=$(awk -v d="$diff" 'BEGIN { m = (d < 0) ? -d : d; print m }')
            verdict "$absd" le 1
            printf "  %4s %9s %-22s %12.9f %12.9f %12.6f %9s  agree<=1%% %s\n" \
              "$p" "$bytes" "$a/$s" "$at" "$adj" "$S_TIME" "$diff" "$V"
          fi
        done
      done
    done
    echo "   SMPI prints its time with 6 decimals (1 us), so diff% resolves about 0.001%."
  fi
fi

# ---- summary -------------------------------------------------------------

echo
if [ $ncrash -gt 0 ]; then
  echo "bench: $((npass + nmiss)) targets: $npass met, $nmiss missed; $ncrash crashed: ${crashed[*]}"
  exit 1
fi
echo "bench: $((npass + nmiss)) targets: $npass met, $nmiss missed; nothing crashed"
exit 0
