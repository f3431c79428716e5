#!/bin/bash
# rings_beta.sh — reruns the experiments behind docs/explanation/validation-history-2.md's "The rings' β"
# (maintainer tool; not part of the build or the tests' figures).
#
#   validate/rings_beta.sh slopes               per kept run: the 4- and 8-host ping-pong's slope (8/32 MiB)
#                                               and the ring's per direction (16/64 MiB, γ off)
#   validate/rings_beta.sh jitter RUN OUT       the replays with the start jitter 1, 2, 4, 8 times the measured
#                                               width (the ping-pong's β, as before the rings' β)
#   validate/rings_beta.sh beta RUN OUT         the replays with the ping-pong rule's 4-host β times 1.03
#   validate/rings_beta.sh late RUN OUT         a 256 KiB and a 1 MiB exchange, either end 0 µs to 1 ms late
#   validate/rings_beta.sh queue RUN OUT        the 8-host Rabenseifner of 1 MiB against the carried
#                                               control_queue_from_lower
#   validate/rings_beta.sh cluster OUT          (root) 4 emulated hosts at 1 Gbit/s and 400 Mbit/s: ping-pong
#                                               8/32 MiB, ring 16/64 MiB, and the ACKs a host's interface carries
#
# RUN: a kept run (validate/runs/ompiN); OUT: a new directory. Needs
# ./arsim or $ARSIM (and validate/mpibench for cluster, tcpdump for its ACK count).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/.."
A=${ARSIM:-$PWD/arsim}   # the arsim binary (ARSIM, as the tests set it)
die() { echo "rings_beta.sh: $*" >&2; exit 2; }

# reanalyze RUN OUT [validate.sh options]: calibrate and compare RUN into OUT.
reanalyze() {
    local run=$1 out=$2
    shift 2
    bash validate/validate.sh --reanalyze "$run" --out "$out" --arsim "$A" "$@" >"$out.log" 2>&1 || [ $? = 3 ]
}

# iterations FILE CAL STAT: the 4-host replays' measured and predicted times.
iterations() {
    "$A" compare "$1" --calibration "$2" --statistic "$3" | awk '$2 == "iteration" { print "  ", $3, $6, $7, $8 }'
}

case "${1:-}" in
slopes)
    python3 - <<'EOF'
import glob, gzip, json, os, re
def key(d):
    name, num = re.match(r'(.*?)(\d+)$', os.path.basename(d)).groups()
    return name, int(num)
for d in sorted(glob.glob('validate/runs/*'), key=key):
    out = []
    for h in ('4', '8'):
        m = json.load(gzip.open(os.path.join(d, 'meas-%s.json.gz' % h)))
        pp = {c['bytes']: c['time_s'] for c in m['cases'] if c['mode'] == 'pingpong' and c.get('class') == 'inter'}
        ring = {c['bytes']: (c['time_s'], c['ranks']) for c in m['cases'] if c['mode'] == 'allreduce' and c.get('algo') == 'ring'}
        red = [(c['bytes'], c['time_s']) for c in m['cases'] if c['mode'] == 'reduce']
        g = sum(t for n, t in red) / sum(n for n, t in red)
        bp = (pp[32 << 20] - pp[8 << 20]) / (24 << 20)
        (t1, p), (t2, _) = ring[16 << 20], ring[64 << 20]
        br = ((t2 - t1) / (48 << 20) - (p - 1) / p * g) * p / (2 * (p - 1))
        out.append('%s hosts: ping-pong %.3f, ring %.3f ns/B (%+.2f %%)' % (h, bp * 1e9, br * 1e9, 100 * (br / bp - 1)))
    print(os.path.basename(d), ' | '.join(out))
EOF
    ;;
jitter)
    [ $# = 3 ] || die "jitter: expected RUN OUT (a kept run, a new directory)"
    reanalyze "$2" "$3" --no-ring-beta
    for f in 1 2 4 8; do
        python3 - "$3" "$f" <<'EOF'
import json, statistics, sys
out, f = sys.argv[1], float(sys.argv[2])
m = json.load(open(out + '/meas-4.json'))
w = statistics.median(c['start_spread_s'] * 5 / 3 for c in m['cases'] if c['mode'] == 'allreduce'
                      and c.get('algo') != 'mpi' and c['ranks'] == 4 and c.get('start_spread_s', -1) > 0)
for c in m['cases']:
    if c['mode'] == 'iteration':
        c['sets'].append('variation.jitter=%.9gs' % (f * w))
json.dump(m, open(out + '/jitter.json', 'w'))
EOF
        echo "jitter x$f"
        iterations "$3/jitter.json" "$3/calib-4.yaml" median
    done
    ;;
beta)
    [ $# = 3 ] || die "beta: expected RUN OUT (a kept run, a new directory)"
    reanalyze "$2" "$3" --no-ring-beta
    awk '{ if (match($0, /beta_s_per_byte: [0-9.e+-]+/)) {
               v = substr($0, RSTART + 17, RLENGTH - 17) * 1.03
               $0 = substr($0, 1, RSTART - 1) sprintf("beta_s_per_byte: %.9g", v) substr($0, RSTART + RLENGTH) }
           print }' "$3/calib-4.yaml" >"$3/calib-4-beta103.yaml"
    echo "4-host beta x1.03"
    iterations "$3/meas-4.json" "$3/calib-4-beta103.yaml" mean
    ;;
late)
    [ $# = 3 ] || die "late: expected RUN OUT (a kept run, a new directory)"
    reanalyze "$2" "$3" --no-ring-beta
    python3 - "$3" <<'EOF'
import copy, json, sys
out = sys.argv[1]
m = json.load(open(out + '/meas-4.json'))
base = next(c for c in m['cases'] if c['mode'] == 'exchange')
cases = []
for n in (262144, 1048576):
    for late in (0, 20e-6, 50e-6, 80e-6, 120e-6, 170e-6, 250e-6, 400e-6, 1e-3):
        for lower in (False, True):
            c = copy.deepcopy(base)
            c.update(bytes=n, delay_s=late, reps=1, reps_s=[1e-3], time_s=1e-3, min_s=1e-3, max_s=1e-3)
            if lower:
                c['peers'] = [1, 0]
            cases.append(c)
m['cases'] = cases
json.dump(m, open(out + '/late.json', 'w'))
EOF
    "$A" compare "$3/late.json" --calibration "$3/calib-4.yaml" |
        awk '$2 == "exchange" { print "  ", $5, "B, the", $13, "rank", $15, "ms late:", $7, "ms" }'
    ;;
queue)
    [ $# = 3 ] || die "queue: expected RUN OUT (a kept run, a new directory)"
    reanalyze "$2" "$3"
    for q in 0 1722 4000 8000 12000 16000 19484 30000 60000 120000 220436; do
        sed -E "s/control_queue_from_lower: [0-9]+/control_queue_from_lower: $q/" "$3/calib-8.yaml" >"$3/calib-8-q.yaml"
        printf '%8s B  ' "$q"
        "$A" compare "$3/meas-8.json" --calibration "$3/calib-8-q.yaml" --statistic mean |
            awk '$2 == "allreduce" && $3 == "rabenseifner" && $5 == 1048576 { print "measured", $6, "predicted", $7, $8 }'
    done
    ;;
cluster)
    [ $# = 2 ] || die "cluster: expected OUT (a new directory)"
    mkdir -p "$2"
    for rate in 1gbit 400mbit; do
        validate/cluster.sh up 4 --rate "$rate" --prefix rb --net 10.215.0 >"$2/up-$rate.log"
        trap 'validate/cluster.sh down --prefix rb >/dev/null 2>&1' EXIT
        run=/run/arsim-cluster/rb/mpirun
        "$run" -np 4 "$PWD/validate/mpibench" pingpong --sizes 8MiB,32MiB --poll 20us --quiet --min-reps 7 \
            --max-reps 20 --out "$2/pp-$rate.json"
        iface=$(awk '$1 == "iface" { print $2 }' /run/arsim-cluster/rb/state)
        ip netns exec rb-h1 tcpdump -i "$iface" -s 80 -w "$2/ring-$rate.pcap" tcp 2>/dev/null &
        dump=$!
        sleep 1
        "$run" -np 4 "$PWD/validate/mpibench" allreduce --algo ring --sizes 16MiB,64MiB --poll 20us --quiet \
            --min-reps 7 --max-reps 20 --out "$2/ring-$rate.json"
        sleep 1
        kill "$dump"
        wait "$dump" || true
        validate/cluster.sh down --prefix rb >>"$2/up-$rate.log"
        trap - EXIT
        python3 - "$2" "$rate" <<'EOF'
import json, sys
out, rate = sys.argv[1:]
t = {}
for f in ('pp', 'ring'):
    for c in json.load(open('%s/%s-%s.json' % (out, f, rate)))['cases']:
        t[(f, c['bytes'])] = c['time_s']
bp = (t[('pp', 32 << 20)] - t[('pp', 8 << 20)]) / (24 << 20)
gamma = 0.353e-9   # run 19's 4-host reduce fit, as docs/explanation/validation-history-2.md's table
br = ((t[('ring', 64 << 20)] - t[('ring', 16 << 20)]) / (48 << 20) - 0.75 * gamma) * 2 / 3
print('%s: ping-pong 8/32 MiB %.3f / %.3f ms (%.3f ns/B), ring 16/64 MiB %.3f / %.3f ms (%.3f ns/B per direction, %+.2f %%)'
      % (rate, t[('pp', 8 << 20)] * 1e3, t[('pp', 32 << 20)] * 1e3, bp * 1e9, t[('ring', 16 << 20)] * 1e3,
         t[('ring', 64 << 20)] * 1e3, br * 1e9, 100 * (br / bp - 1)))
EOF
        tcpdump -r "$2/ring-$rate.pcap" -n 2>/dev/null |
            awk '/ length 0$/ { acks++ } / length [1-9]/ { bytes += $NF } END { printf "  pure ACKs %d, payload %d B: one ACK per %.0f B\n", acks, bytes, bytes / (acks ? acks : 1) }'
    done
    ;;
-h | --help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//' ;;
*) die "'${1:-}' is not an experiment; expected slopes, jitter, beta, late, queue, cluster or --help" ;;
esac
