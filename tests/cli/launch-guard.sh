#!/bin/bash
# launch-guard — launch_guarded (validate/vallib.bash), which ends an MPI
# launch that hangs after mpibench wrote its file (MPICH 4.0.2 in
# MPI_Finalize), on a stub launcher instead of MPI: a clean exit keeps its
# status; a launch still running GRACE s after its file appeared is ended
# whole (its child; a child in a session of its own, as Hydra starts its
# proxies; a rank in a session of its own whose parent has exited) with
# one warning line and status 0, while a process that only names the
# file is left alone; the limit keeps timeout's 124; TERM to the waiting
# shell ends the launch; an old output file is not taken for this run's.
# No test measures a duration.
set -u
T=$(mktemp -d "${TMPDIR:-/tmp}/arsim-launch-guard.XXXXXX") || exit 1
export LC_ALL=C T
root=$PWD
# ours — PIDs of the processes whose command line names $T (a zombie's is
# empty), read from /proc.
ours() {
    local d argv
    for d in /proc/[0-9]*; do
        { mapfile -d '' -t argv <"$d/cmdline"; } 2>/dev/null || continue
        [[ "${argv[*]}" == *"$T"* ]] && echo "${d#/proc/}"
    done
}
cleanup() { local p; for p in $(ours); do kill -9 "$p" 2>/dev/null; done; rm -rf "$T"; }
trap cleanup EXIT
# shellcheck source=../clilib.bash
. tests/clilib.bash
# shellcheck source=../../validate/vallib.bash
. validate/vallib.bash

# The stub launcher: stub MODE OUT — prints a line to stdout and one to
# stderr (for the log), writes OUT as mpibench does (another name, then a
# rename) unless MODE says not to; appends the PIDs a test checks to
# OUT.pids.
stub=$T/stub
cat >"$stub" <<'S'
#!/bin/bash
mode=$1 out=$2
echo "stub $mode: out"; echo "stub $mode: err" >&2
put() { echo '{"cases": []}' >"$out.tmp.$$" && mv "$out.tmp.$$" "$out"; }
case $mode in
    ok) put ;;
    fail) exit 3 ;;
    quiet) sleep 300 & echo "$$ $!" >>"$out.pids"; wait ;;
    slow) sleep 2; exit 5 ;;
    hang) sleep 300 & echo "$$ $!" >>"$out.pids"; put; wait ;;
    orphan) (setsid "$0" rank "$out" </dev/null >/dev/null 2>&1 &)
            while [ ! -s "$out.rank" ]; do sleep 0.1; done
            setsid sleep 300 & echo "$$ $! $(cat "$out.rank")" >>"$out.pids"; put; wait ;;
    rank) echo $$ >"$out.rank"; while :; do sleep 0.2; done ;;
esac
S
chmod +x "$stub"

# gone PID... — none of the PIDs runs (a zombie waiting for its reaper
# counts as gone).
gone() {
    local p s
    for p in "$@"; do
        { read -r s <"/proc/$p/stat"; } 2>/dev/null || continue
        s=${s##*) }
        [[ $s == Z* ]] || { echo "process $p still runs: $(tr '\0' ' ' <"/proc/$p/cmdline")"; return 1; }
    done
    return 0
}

exits_clean() {
    local rc out=$T/ok.json
    launch_guarded "$out" 1 60 "$stub" "$T/ok.log" "$stub" ok "$out" 2>"$T/ok.err"; rc=$?
    [ $rc = 0 ] || { echo "status $rc, want 0"; return 1; }
    [ -f "$out" ] && [ ! -s "$T/ok.err" ] || { echo "no file or a warning: $(cat "$T/ok.err")"; return 1; }
    [ "$(cat "$T/ok.log")" = $'stub ok: out\nstub ok: err' ] || { echo "log: $(cat "$T/ok.log")"; return 1; }
}

exits_failing() {
    local rc out=$T/fail.json
    launch_guarded "$out" 1 60 "$stub" "$T/fail.log" "$stub" fail "$out" 2>"$T/fail.err"; rc=$?
    [ $rc = 3 ] && [ ! -s "$T/fail.err" ] || { echo "status $rc, want 3, and no warning: $(cat "$T/fail.err")"; return 1; }
}

hang_ended() {
    local rc out=$T/hang.json
    launch_guarded "$out" 1 60 "$stub" "$T/hang.log" "$stub" hang "$out" 2>"$T/hang.err"; rc=$?
    [ $rc = 0 ] || { echo "status $rc, want 0 (60 s limit: 124)"; return 1; }
    [ "$(wc -l <"$T/hang.err")" = 1 ] && grep -q "^vallib: stub did not exit 1 s after stub wrote $out (a hang in MPI_Finalize); ended it$" "$T/hang.err" ||
        { echo "warning: $(cat "$T/hang.err")"; return 1; }
    [ -f "$out" ] || { echo "the output file is gone"; return 1; }
    # shellcheck disable=SC2046
    gone $(cat "$out.pids") && [ -z "$(ours)" ] || { echo "left: $(ours)"; return 1; }
}

orphan_ended() {
    local rc out=$T/orphan.json decoy
    bash -c 'while :; do sleep 0.2; done' decoy "$out" &
    decoy=$!
    launch_guarded "$out" 1 60 "$stub" "$T/orphan.log" "$stub" orphan "$out" 2>"$T/orphan.err"; rc=$?
    [ $rc = 0 ] && [ "$(wc -l <"$T/orphan.err")" = 1 ] || { echo "status $rc, want 0; $(cat "$T/orphan.err")"; kill $decoy; return 1; }
    # shellcheck disable=SC2046
    gone $(cat "$out.pids") || { kill $decoy; return 1; }
    ! gone $decoy >/dev/null || { echo "the decoy naming only the file was ended"; return 1; }
    kill $decoy; wait $decoy 2>/dev/null
    [ -z "$(ours)" ] || { echo "left: $(ours)"; return 1; }
}

limit_ends() {
    local rc out=$T/quiet.json
    launch_guarded "$out" 1 2 "$stub" "$T/quiet.log" "$stub" quiet "$out" 2>"$T/quiet.err"; rc=$?
    [ $rc = 124 ] || { echo "status $rc, want 124 (timeout's)"; return 1; }
    [ ! -e "$out" ] && [ ! -s "$T/quiet.err" ] || { echo "a file or a warning: $(cat "$T/quiet.err")"; return 1; }
    # shellcheck disable=SC2046
    gone $(cat "$out.pids") && [ -z "$(ours)" ] || { echo "left: $(ours)"; return 1; }
}

# TERM to the shell waiting in launch_guarded ends the launch and exits 1
# (a background subshell ignores INT, so TERM stands for both).
interrupted() {
    local rc out=$T/int.json sub i
    (launch_guarded "$out" 1 60 "$stub" "$T/int.log" "$stub" quiet "$out") 2>"$T/int.err" &
    sub=$!
    for ((i = 0; i < 600; i++)); do [ -s "$out.pids" ] && break; sleep 0.1; done
    [ -s "$out.pids" ] || { echo "the stub never started"; return 1; }
    kill -TERM $sub; wait $sub; rc=$?
    [ $rc = 1 ] || { echo "status $rc, want 1"; return 1; }
    # shellcheck disable=SC2046
    gone $(cat "$out.pids") && [ -z "$(ours)" ] || { echo "left: $(ours)"; return 1; }
}

old_file_ignored() {
    local rc out=$T/old.json
    echo '{"cases": []}' >"$out"
    launch_guarded "$out" 1 60 "$stub" "$T/slow.log" "$stub" slow "$out" 2>"$T/old.err"; rc=$?
    [ $rc = 5 ] && [ ! -e "$out" ] && [ ! -s "$T/old.err" ] ||
        { echo "status $rc, want 5, the old file removed and no warning: $(cat "$T/old.err")"; return 1; }
}

t launch_guard_exits_clean exits_clean
t launch_guard_exits_failing exits_failing
t launch_guard_hang_ended hang_ended
t launch_guard_orphan_ended orphan_ended
t launch_guard_limit_ends limit_ends
t launch_guard_interrupted interrupted
t launch_guard_old_file_ignored old_file_ignored
