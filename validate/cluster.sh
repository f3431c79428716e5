#!/bin/bash
# cluster.sh — an emulated cluster on one machine, for validate/mpibench.
#
#   cluster.sh up N --rate RATE [--prefix P] [--net A.B.C] [--state DIR]
#                               [--slots S] [--burst BYTES] [--queue MS] [--sndbuf BYTES] [--eager]
#   cluster.sh down   [--prefix P] [--state DIR]
#   cluster.sh status [--prefix P] [--state DIR]
#   cluster.sh stats  [--prefix P] [--state DIR]        (tc drops and TCP retransmissions per host)
#   cluster.sh mpirun-line [--prefix P] [--state DIR]   (prints the mpirun command)
#
# `up` makes N hosts as network namespaces P-h0..P-h(N-1), each with one
# veth interface P-eth holding A.B.C.(i+1)/24, joined to a Linux bridge P-br
# that lives in a switch namespace P-sw, so the root namespace gets no
# interface, address or route. Every link is shaped in both directions with
# tc tbf (host egress on P-eth, switch egress on the switch-side port) at
# RATE with a bucket of 1 ms of traffic but at least 100 kB (a smaller one
# loses rate once several flows keep the CPUs busy). Inside each host (all
# per-namespace settings): TCP congestion control is reno, whatever the
# machine's default (BBR's bandwidth probing made a shaped link's rate move
# from one repetition to the next); the TCP send buffer is capped at about
# 2 ms of traffic (net.ipv4.tcp_wmem), so a rank's messages leave one after
# another as the simulator's links send them (with megabytes of buffer, a
# send completes at once and the next message shares the wire with it: a
# tree all-reduce ran 15-30 % slower); idle connections keep their window
# (tcp_slow_start_after_idle = 0) so repetitions start alike. The
# launchers keep each MPI library's own eager limit and rendezvous protocol
# (what users' clusters run; arsim models it: cluster.protocol); --eager
# makes them send every message up to 128 MiB eagerly instead (Open MPI's
# btl_tcp_eager_limit, UCX_RNDV_THRESH=inf for MPICH), the setting the
# validation used before arsim had a protocol layer. Both
# launchers turn off glibc's mmap of large blocks in every rank: MPI
# libraries allocate a message-sized scratch buffer in each large
# MPI_Allreduce, and with 4-8 ranks on 2 cores faulting 64 MiB afresh in
# every call made Open MPI's 64 MiB all-reduce 20-90 % slower (mpibench's
# own schedules allocate once per case). It writes into the state
# directory (default /run/arsim-cluster/P): `state` (exactly what was
# created, with each namespace's inode so `down` never removes a namespace
# of the same name that someone else made), `hostfile` (S slots per host),
# `rsh-agent` (Open MPI's plm_rsh_agent: runs the command in the host's
# namespace and in its own UTS namespace named after the host) and `mpirun`
# (mpirun started inside P-h0 with every setting the emulation needs).
# `stats` prints, per host, the drops and overlimits of the two tbf
# shapers of its link (host egress, switch egress) and its TCP
# retransmitted segments, retransmission timeouts and tail-loss probes
# (cumulative since `up`: take two and subtract).
# A failing or interrupted `up` removes what it made before it exits.
# `down` removes exactly what `state` lists and nothing else. Root only.
set -u
umask 022

prog=cluster.sh
die_usage() { echo "$prog: $*" >&2; exit 2; }
die() { echo "$prog: $*" >&2; exit 1; }

usage() {
    sed -n '3,9p' "$0" | sed 's/^# \{0,1\}//'
}

[ $# -ge 1 ] || { usage >&2; exit 2; }
cmd=$1; shift
case "$cmd" in
    up|down|status|stats|mpirun-line) ;;
    -h|--help|help) usage; exit 0 ;;
    *) die_usage "'$cmd': unknown command; expected up, down, status, stats or mpirun-line" ;;
esac

nhosts=""; rate=""; prefix=arsim; net=10.213.0; statedir=""; slots=1; burst=""; queue_ms=20; sndbuf=""; eager=0
if [ "$cmd" = up ]; then
    [ $# -ge 1 ] || die_usage "up: missing host count; expected cluster.sh up N --rate RATE"
    nhosts=$1; shift
fi
# up_only FLAG: refuses FLAG outside `up`.
up_only() { [ "$cmd" = up ] || die_usage "$1: only for up; expected up N $1 VALUE"; }
while [ $# -gt 0 ]; do
    flag=$1
    if [ "$flag" = --eager ]; then
        [ "$cmd" = up ] || die_usage "--eager: only for up; expected up N --rate RATE --eager"
        eager=1; shift; continue
    fi
    [ $# -ge 2 ] || die_usage "$flag: missing value; expected $flag VALUE"
    val=$2; shift 2
    case "$flag" in
        --rate)   up_only "$flag"; rate=$val ;;
        --net)    up_only "$flag"; net=$val ;;
        --slots)  up_only "$flag"; slots=$val ;;
        --burst)  up_only "$flag"; burst=$val ;;
        --queue)  up_only "$flag"; queue_ms=$val ;;
        --sndbuf) up_only "$flag"; sndbuf=$val ;;
        --prefix) prefix=$val ;;
        --state)  statedir=$val ;;
        *) die_usage "$flag: unknown option; expected --rate, --net, --slots, --burst, --queue, --sndbuf, --eager, --prefix or --state" ;;
    esac
done

[[ "$prefix" =~ ^[a-z][a-z0-9]{0,7}$ ]] ||
    die_usage "--prefix: '$prefix' is not a valid prefix; expected 1-8 lowercase letters or digits, starting with a letter"
[ -n "$statedir" ] || statedir=/run/arsim-cluster/$prefix
case "$statedir" in /*) ;; *) statedir=$PWD/$statedir ;; esac
[[ "$statedir" =~ ^[A-Za-z0-9_./+-]+$ ]] ||
    die_usage "--state: '$statedir' has characters the generated scripts cannot quote; expected letters, digits and _./+-"
state=$statedir/state
sw=$prefix-sw
br=$prefix-br
iface=$prefix-eth

# rate_bps RATE: bits per second of a tc rate such as 1gbit, 200mbit, 500kbit.
rate_bps() {
    local n=${1%%[a-z]*} u=${1##*[0-9]}
    case "$u" in
        kbit) echo $((n * 1000)) ;;
        mbit) echo $((n * 1000000)) ;;
        gbit) echo $((n * 1000000000)) ;;
        *) return 1 ;;
    esac
}

# check_up_args: every value of `up`, checked before anything else (even as
# a user who may not run it); sets bps and the default burst and sndbuf.
check_up_args() {
    local oct
    [[ "$nhosts" =~ ^[0-9]+$ ]] && [ "$nhosts" -ge 1 ] && [ "$nhosts" -le 250 ] ||
        die_usage "up: '$nhosts' is not a host count; expected an integer from 1 to 250"
    [ -n "$rate" ] || die_usage "--rate: missing; expected a tc rate such as 1gbit or 200mbit"
    [[ "$rate" =~ ^[1-9][0-9]{0,6}(kbit|mbit|gbit)$ ]] && bps=$(rate_bps "$rate") ||
        die_usage "--rate: '$rate' is not a rate; expected a whole number with kbit, mbit or gbit such as 1gbit"
    [ "$bps" -ge 100000 ] || die_usage "--rate: '$rate' is too slow; expected at least 100kbit"
    [[ "$slots" =~ ^[1-9][0-9]{0,2}$ ]] || die_usage "--slots: '$slots' is not a slot count; expected an integer from 1 to 999"
    [[ "$queue_ms" =~ ^[1-9][0-9]{0,3}$ ]] || die_usage "--queue: '$queue_ms' is not a queue time; expected whole milliseconds such as 20"
    if [ -z "$burst" ]; then
        burst=$((bps / 8 / 1000))
        [ "$burst" -ge 100000 ] || burst=100000
    fi
    [[ "$burst" =~ ^[1-9][0-9]{3,8}$ ]] || die_usage "--burst: '$burst' is not a burst; expected bytes from 1000 to 999999999"
    if [ -z "$sndbuf" ]; then
        sndbuf=$((bps / 8 / 500))
        [ "$sndbuf" -ge 65536 ] || sndbuf=65536
    fi
    [[ "$sndbuf" =~ ^[1-9][0-9]{4,8}$ ]] || die_usage "--sndbuf: '$sndbuf' is not a buffer size; expected bytes from 10000 to 999999999"
    [[ "$net" =~ ^(10\.[0-9]{1,3}\.[0-9]{1,3}|192\.168\.[0-9]{1,3}|172\.(1[6-9]|2[0-9]|3[01])\.[0-9]{1,3})$ ]] ||
        die_usage "--net: '$net' is not a private /24; expected three octets such as 10.213.0 (10/8, 172.16/12 or 192.168/16)"
    for oct in ${net//./ }; do
        [ "$oct" -le 255 ] || die_usage "--net: '$net' has an octet above 255; expected three octets such as 10.213.0"
    done
}
[ "$cmd" != up ] || check_up_args

[ "$(id -u)" = 0 ] || die "must run as root (network namespaces and tc need it)"
for tool in ip tc unshare stat; do
    command -v $tool >/dev/null 2>&1 || die "'$tool' not found; install iproute2 and util-linux"
done

# ns_inode NAME: the inode of a named network namespace, empty if it is absent.
ns_inode() { stat -L -c %i "/run/netns/$1" 2>/dev/null; }

# state_get KEY: the value of the first `KEY value` line of the state file.
state_get() { awk -v k="$1" '$1 == k { sub(/^[^ ]+ /, ""); print; exit }' "$state"; }

# Removes what the state file lists, newest first: files, then namespaces
# whose inode is still the one recorded (a namespace's veths, bridge and
# qdiscs go with it). Returns 1 if something listed could not be removed;
# the state file then lists only what is left.
teardown() {
    local rc=0 kind name ino cur pids kept=""
    while read -r kind name ino; do
        case "$kind" in
            file) rm -f -- "$name" || { rc=1; kept="$kept|$kind $name"; } ;;
            netns)
                cur=$(ns_inode "$name")
                if [ -z "$cur" ]; then
                    echo "$prog: namespace $name is already gone" >&2
                elif [ "$cur" != "$ino" ]; then
                    echo "$prog: namespace $name is not the one this cluster made (inode $cur, recorded $ino); leaving it alone" >&2
                    rc=1
                else
                    pids=$(echo $(ip netns pids "$name" 2>/dev/null))
                    [ -z "$pids" ] || echo "$prog: warning: processes $pids still run in $name; it lives on until they end" >&2
                fi
                if [ "$cur" = "$ino" ] && ! ip netns del "$name"; then
                    rc=1
                    kept="$kept|$kind $name $ino"
                fi ;;
        esac
    done < <(tac "$state")
    if [ $rc -ne 0 ]; then
        { grep -v -E '^(netns|file) ' "$state"; echo "${kept#|}" | tr '|' '\n' | tac | sed '/^$/d'; } > "$state.new" &&
            mv -f -- "$state.new" "$state"
    fi
    return $rc
}

cmd_down() {
    [ -f "$state" ] || die "no cluster state at $state; nothing to remove"
    [ "$(head -n1 "$state")" = "arsim-cluster 1" ] ||
        die "$state is not an arsim-cluster state file; refusing to act on it"
    [ "$(state_get prefix)" = "$prefix" ] ||
        die "$state belongs to prefix '$(state_get prefix)', not '$prefix'; refusing"
    exec 9>"$statedir/lock"; flock -n 9 || die "another cluster.sh is working on $statedir"
    if teardown; then
        rm -f -- "$state" "$statedir/lock"
        rmdir -- "$statedir" 2>/dev/null
        echo "$prog: cluster $prefix removed"
    else
        die "some of cluster $prefix could not be removed; state kept at $state"
    fi
}

cmd_status() {
    [ -f "$state" ] || { echo "cluster $prefix: down (no state at $state)"; return 3; }
    local n phase h i addr ino alive up_rate down_rate
    n=$(state_get hosts); phase=$(state_get phase)
    echo "cluster $prefix: $phase, $n hosts, rate $(state_get rate) ($(state_get rate_bps) bit/s)," \
         "burst $(state_get burst) B, queue $(state_get queue_ms) ms, TCP send buffer $(state_get sndbuf) B," \
         "net $(state_get net).0/24, interface $(state_get iface)"
    echo "state $statedir  hostfile $statedir/hostfile  launcher $statedir/mpirun"
    printf '%-10s %-16s %-8s %-14s %-14s\n' host address alive "tbf host->sw" "tbf sw->host"
    while read -r _ h addr; do
        ino=$(awk -v h="$h" '$1 == "netns" && $2 == h { print $3 }' "$state")
        [ "$(ns_inode "$h")" = "$ino" ] && alive=yes || alive=no
        i=${h##*-h}
        up_rate=$(tc -n "$h" qdisc show dev "$iface" 2>/dev/null | awk '/tbf/ { for (k = 1; k < NF; k++) if ($k == "rate") print $(k + 1); exit }')
        down_rate=$(tc -n "$sw" qdisc show dev "$prefix-p$i" 2>/dev/null | awk '/tbf/ { for (k = 1; k < NF; k++) if ($k == "rate") print $(k + 1); exit }')
        printf '%-10s %-16s %-8s %-14s %-14s\n' "$h" "$addr" "$alive" "${up_rate:--}" "${down_rate:--}"
    done < <(awk '$1 == "host"' "$state")
    [ "$phase" = up ]
}

# The Open MPI settings the emulation needs (see validate/README-schema.md):
# TCP only, no RDMA put, yield when idle; the eager limit and the
# rendezvous protocol are Open MPI's own unless EAGER (1: 128 MiB eager).
mca_args() {
    echo "--allow-run-as-root --hostfile $statedir/hostfile" \
         "--mca plm_rsh_agent $statedir/rsh-agent --mca plm_rsh_no_tree_spawn 1 --bind-to none" \
         "--mca btl tcp,self --mca btl_tcp_if_include $iface --mca oob_tcp_if_include $iface" \
         "--mca btl_tcp_flags send,inplace,need-ack,need-csum" \
         "$([ "${1:-0}" = 1 ] && echo "--mca btl_tcp_eager_limit 134217728")" \
         "--mca mpi_yield_when_idle 1" $(for v in $(malloc_env); do printf -- '-x %s ' "$v"; done)
}

# glibc settings for every rank: no mmap for large blocks and no trimming, so
# a block freed is reused rather than faulted in afresh (see the banner).
malloc_env() { echo "MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=4294967296"; }

cmd_mpirun_line() {
    [ -f "$state" ] || die "no cluster state at $state; run cluster.sh up first"
    echo "ip netns exec $prefix-h0 unshare --uts sh -c 'hostname $prefix-h0 && exec \"\$0\" \"\$@\"'" \
         "mpirun $(mca_args "$(state_get eager)") -np $(( $(state_get hosts) * $(state_get slots) ))"
}

# record LINE: appends a line to the state file (what was just created).
record() { echo "$*" >> "$state" || die "cannot write $state"; }

up_done=0
up_rollback() {
    [ "$up_done" = 1 ] && return
    trap - EXIT INT TERM HUP
    if [ -f "$state" ]; then
        echo "$prog: up failed; removing what it made" >&2
        teardown && rm -f -- "$state" "$statedir/lock" && rmdir -- "$statedir" 2>/dev/null
    fi
}

# try CMD...: runs a command; on failure reports it and exits (the EXIT
# trap rolls back).
try() { "$@" || die "failed: $*"; }

write_files() {
    local i h hosts=""
    : > "$statedir/hostfile" || die "cannot write $statedir/hostfile"
    record file "$statedir/hostfile"
    for ((i = 0; i < nhosts; i++)); do
        echo "$prefix-h$i slots=$slots" >> "$statedir/hostfile"
        hosts="$hosts $prefix-h$i"
    done
    record file "$statedir/rsh-agent"
    cat > "$statedir/rsh-agent" <<EOF || die "cannot write $statedir/rsh-agent"
#!/bin/sh
# Open MPI plm_rsh_agent for the emulated cluster '$prefix' (made by validate/cluster.sh).
# Called as: rsh-agent [-x]... HOST COMMAND...; runs COMMAND with sh, the way
# ssh would, inside HOST's network namespace and a UTS namespace named HOST
# (options before HOST, such as the -x MPICH's launcher passes, are ignored).
while [ \$# -gt 0 ] && [ "\${1#-}" != "\$1" ]; do shift; done
host=\$1; shift
case " $hosts " in
    *" \$host "*) ;;
    *) echo "rsh-agent: '\$host' is not a host of cluster $prefix" >&2; exit 255 ;;
esac
exec ip netns exec "\$host" unshare --uts sh -c 'hostname "\$0" && exec sh -c "\$*"' "\$host" "\$@"
EOF
    chmod 755 "$statedir/rsh-agent" || die "cannot chmod $statedir/rsh-agent"
    record file "$statedir/mpirun"
    cat > "$statedir/mpirun" <<EOF || die "cannot write $statedir/mpirun"
#!/bin/sh
# mpirun on the emulated cluster '$prefix' (made by validate/cluster.sh):
# starts mpirun inside $prefix-h0 (which also hosts rank 0), reaching the
# other hosts through rsh-agent; extra arguments go to mpirun.
exec ip netns exec $prefix-h0 unshare --uts sh -c 'hostname $prefix-h0 && exec "\$0" "\$@"' \\
    $(command -v mpirun.openmpi || echo mpirun) $(mca_args "$eager") "\$@"
EOF
    chmod 755 "$statedir/mpirun" || die "cannot chmod $statedir/mpirun"
    record file "$statedir/hostfile-mpich"
    for ((i = 0; i < nhosts; i++)); do echo "$prefix-h$i:$slots"; done > "$statedir/hostfile-mpich" ||
        die "cannot write $statedir/hostfile-mpich"
    record file "$statedir/mpiexec-mpich"
    cat > "$statedir/mpiexec-mpich" <<EOF || die "cannot write $statedir/mpiexec-mpich"
#!/bin/sh
# MPICH's mpiexec (Hydra) on the emulated cluster '$prefix' (made by
# validate/cluster.sh), for an mpibench built with mpicc.mpich: started in
# $prefix-h0, proxies launched through rsh-agent, control traffic on $iface;
# UCX over TCP only (shared memory would bypass the shaped links), with
# UCX's own rendezvous threshold$([ "$eager" = 1 ] && echo " raised to infinity (cluster.sh up --eager)");
# extra arguments go to mpiexec.
exec ip netns exec $prefix-h0 unshare --uts sh -c 'hostname $prefix-h0 && exec "\$0" "\$@"' \\
    env UCX_TLS=tcp,self UCX_NET_DEVICES=$iface $([ "$eager" = 1 ] && echo "UCX_RNDV_THRESH=inf ")$(malloc_env) \\
    mpiexec.mpich -f $statedir/hostfile-mpich -launcher ssh -launcher-exec $statedir/rsh-agent -iface $iface "\$@"
EOF
    chmod 755 "$statedir/mpiexec-mpich" || die "cannot chmod $statedir/mpiexec-mpich"
}

cmd_up() {
    local i h ino
    for h in "$sw" $(seq -f "$prefix-h%g" 0 $((nhosts - 1))); do
        [ -z "$(ns_inode "$h")" ] || die "namespace $h exists already and is not this cluster's; choose another --prefix or remove it"
    done
    mkdir -p -- "$statedir" || die "cannot create $statedir"
    [ ! -e "$state" ] || die "cluster $prefix is up already ($state exists); run cluster.sh down first"
    exec 9>"$statedir/lock"; flock -n 9 || die "another cluster.sh is working on $statedir"

    trap up_rollback EXIT
    trap 'exit 130' INT TERM HUP
    printf 'arsim-cluster 1\nprefix %s\nhosts %s\nrate %s\nrate_bps %s\nburst %s\nqueue_ms %s\nsndbuf %s\nnet %s\niface %s\nslots %s\neager %s\nphase creating\n' \
        "$prefix" "$nhosts" "$rate" "$bps" "$burst" "$queue_ms" "$sndbuf" "$net" "$iface" "$slots" "$eager" > "$state" ||
        die "cannot write $state"

    # A namespace is recorded only once `ip netns add` made it, so a
    # rollback never removes one of the same name that it did not make.
    try ip netns add "$sw"
    ino=$(ns_inode "$sw"); record netns "$sw" "$ino"
    try ip -n "$sw" link add "$br" type bridge
    try ip -n "$sw" link set "$br" up
    try ip -n "$sw" link set lo up
    local tbf="tbf rate $rate burst $burst latency ${queue_ms}ms"
    for ((i = 0; i < nhosts; i++)); do
        h=$prefix-h$i
        try ip netns add "$h"
        ino=$(ns_inode "$h"); record netns "$h" "$ino"
        try ip -n "$sw" link add "$prefix-p$i" type veth peer name "$iface" netns "$h"
        try ip -n "$sw" link set "$prefix-p$i" master "$br"
        try ip -n "$sw" link set "$prefix-p$i" up
        try ip -n "$h" addr add "$net.$((i + 1))/24" dev "$iface"
        try ip -n "$h" link set "$iface" up
        try ip -n "$h" link set lo up
        try ip netns exec "$h" sysctl -q -w net.ipv4.tcp_congestion_control=reno \
            "net.ipv4.tcp_wmem=4096 16384 $sndbuf" net.ipv4.tcp_slow_start_after_idle=0
        try tc -n "$h" qdisc add dev "$iface" root $tbf
        try tc -n "$sw" qdisc add dev "$prefix-p$i" root $tbf
        record host "$h" "$net.$((i + 1))"
    done
    write_files
    sed -i 's/^phase creating$/phase up/' "$state" || die "cannot write $state"
    up_done=1
    trap - EXIT INT TERM HUP
    rm -f -- "$statedir/lock"
    echo "$prog: cluster $prefix up: $nhosts hosts at $rate (burst $burst B), $net.1-$nhosts on $iface," \
         "$([ "$eager" = 1 ] && echo "every message eager up to 128 MiB (--eager)" || echo "MPI's own eager limit")"
    echo "run:  $statedir/mpirun -np $((nhosts * slots)) PROGRAM ARGS..."
}

# tbf_counts NS DEV: "dropped overlimits" of the tbf qdisc on DEV in NS.
tbf_counts() {
    tc -s -n "$1" qdisc show dev "$2" 2>/dev/null | awk '/^qdisc tbf/ { t = 1 } t && /dropped/ {
        gsub(/[(),]/, " "); for (k = 1; k < NF; k++) { if ($k == "dropped") d = $(k + 1); if ($k == "overlimits") o = $(k + 1) }
        print d + 0, o + 0; exit }'
}

# tcp_counts NS: "retransmitted-segments timeouts loss-probes" of NS.
tcp_counts() {
    ip netns exec "$1" cat /proc/net/snmp /proc/net/netstat 2>/dev/null | awk '
        $1 == "Tcp:" && !th { for (k = 2; k <= NF; k++) tn[k] = $k; th = 1; next }
        $1 == "Tcp:" { for (k = 2; k <= NF; k++) if (tn[k] == "RetransSegs") r = $k }
        $1 == "TcpExt:" && !xh { for (k = 2; k <= NF; k++) xn[k] = $k; xh = 1; next }
        $1 == "TcpExt:" { for (k = 2; k <= NF; k++) { if (xn[k] == "TCPTimeouts") t = $k; if (xn[k] == "TCPLossProbes") p = $k } }
        END { print r + 0, t + 0, p + 0 }'
}

cmd_stats() {
    [ -f "$state" ] || die "no cluster state at $state; run cluster.sh up first"
    local h i
    printf '%-10s %10s %12s %10s %12s %10s %9s %8s\n' host tbf_drops tbf_overlim sw_drops sw_overlim tcp_retrans timeouts probes
    while read -r _ h _; do
        i=${h##*-h}
        printf '%-10s %10s %12s %10s %12s %10s %9s %8s\n' "$h" $(tbf_counts "$h" "$iface") \
            $(tbf_counts "$sw" "$prefix-p$i") $(tcp_counts "$h")
    done < <(awk '$1 == "host"' "$state")
}

case "$cmd" in
    up) cmd_up ;;
    down) cmd_down ;;
    status) cmd_status ;;
    stats) cmd_stats ;;
    mpirun-line) cmd_mpirun_line ;;
esac
