#!/bin/bash
# badinput — runs the bad-input corpus (tests/bad/) against $ARSIM, from the
# repository root. Every case must:
#   - exit with status 2 (no crash, no sanitizer report, no leak report);
#   - print exactly one line on stderr, of the form
#       file:line:col: what is wrong; what is expected
#       --flag: what is wrong; what is expected      (a command-line flag)
#       word: what is wrong; what is expected        (a subcommand)
#     that matches the case's expectation (an ERE);
#   - print nothing on stdout;
#   - leave the output directory as it was: a pre-existing out.json
#     untouched, no other file (result, temporary) created.
# Cases:
#   tests/bad/topo/*       arsim collective --topology FILE --algo ring --size 1KB --json -
#   tests/bad/scenario/*   arsim run FILE --json OUT --csv OUT --trace OUT, and arsim check FILE
#   tests/bad/model/*      as scenario/*: scenarios naming the bad-*.yaml/.bin
#                          model and GPU files beside them (those are not cases)
#   tests/bad/cmdlines.txt one command line per line: ARGS # expect: ERE
#   tests/bad/mpibench.txt the same for validate/mpibench ($MPIBENCH), no mpirun
#   tests/bad/cluster.txt  the same for validate/cluster.sh (values are checked
#                          before root is required and before anything is made)
# A case file's expectation is its first line, "# expect: ERE"; an optional
# second line "# args: ARGS" appends arguments. Files that cannot carry a
# comment (empty, binary) are listed in tests/bad/expect.txt.
# Prints "ok <case>" or "FAIL <case>: why" per case.
set -u
A=${ARSIM:?set ARSIM to the arsim binary}
MPIBENCH=${MPIBENCH:-validate/mpibench}
BAD=tests/bad
# shellcheck disable=SC2034 # S and O are used by the eval'd command lines
S=$BAD/support
FORM='^([^:]+:[0-9]+:[0-9]+|-{1,2}[A-Za-z0-9][A-Za-z0-9-]*|[a-z][a-z.-]*): .+; .+$'
T=$(mktemp -d "${TMPDIR:-/tmp}/arsim-bad.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
O=$T/out
mkdir -p "$O"
SENTINEL='{"sentinel": "must survive a bad run"}'

# Expectations of the files that cannot carry a comment (expect.txt).
declare -A EXPECT_TXT
while read -r path re; do
    case $path in '' | '#'*) continue ;; esac
    EXPECT_TXT[$path]=$re
    [ -f "$BAD/$path" ] || echo "FAIL expect.txt: $path does not exist"
done <"$BAD/expect.txt"

# Sets EXP and ARGS (a word array) from corpus file $1: its first line
# "# expect: ERE" (or its expect.txt entry) and second line "# args: ...".
# Bash builtins only, so the corpus runs fast.
read_case() {
    local l1="" l2=""
    { IFS= read -r l1; IFS= read -r l2; } <"$1" 2>/dev/null
    EXP=${EXPECT_TXT[${1#"$BAD"/}]:-}
    [[ $l1 == '# expect: '* ]] && EXP=${l1#'# expect: '}
    ARGS=()
    [[ $l2 == '# args: '* ]] && read -r -a ARGS <<<"${l2#'# args: '}"
}

# Puts back the output directory: only out.json, holding SENTINEL.
reset_out() {
    rm -rf "$O"
    mkdir -p "$O"
    printf '%s\n' "$SENTINEL" >"$O/out.json"
}
reset_out

# check NAME ERE CMD... — runs CMD and checks every rule above.
check() {
    local name=$1 exp=$2 rc err="" out="" lines=() left=()
    shift 2
    "$@" </dev/null >"$T/stdout" 2>"$T/stderr"
    rc=$?
    IFS= read -r -d '' err <"$T/stderr"
    mapfile -t lines <"$T/stderr"
    shopt -s nullglob dotglob
    left=("$O"/*)
    shopt -u nullglob dotglob
    IFS= read -r -d '' out <"$O/out.json"
    if [ -z "$exp" ]; then
        echo "FAIL $name: no expectation (first line '# expect: ERE' or an entry in $BAD/expect.txt)"
    elif [ $rc -ne 2 ]; then
        echo "FAIL $name: exit status $rc, expected 2; stderr: ${err:0:300}"
    elif [ ${#lines[@]} -ne 1 ] || [ "${err: -1}" != $'\n' ]; then
        echo "FAIL $name: ${#lines[@]} lines on stderr (or no final newline), expected one: ${err:0:300}"
    elif ! [[ ${lines[0]} =~ $FORM ]]; then
        echo "FAIL $name: not 'file:line:col: what; expected' nor '--flag: what; expected': $err"
    elif ! [[ ${lines[0]} =~ $exp ]]; then
        echo "FAIL $name: '${lines[0]}' does not match /$exp/"
    elif [ -s "$T/stdout" ]; then
        echo "FAIL $name: wrote on stdout: $(head -c 200 "$T/stdout")"
    elif [ "$out" != "$SENTINEL"$'\n' ]; then
        echo "FAIL $name: the pre-existing out.json was changed"
    elif [ ${#left[@]} -ne 1 ]; then
        echo "FAIL $name: output files were created: ${left[*]}"
    else
        echo "ok $name"
        return
    fi
    reset_out
}

cases=0
for f in "$BAD"/topo/*; do
    [ -f "$f" ] || continue
    read_case "$f"
    check "${f#"$BAD"/}" "$EXP" "$A" collective --topology "$f" --algo ring --size 1KB --json - "${ARGS[@]}"
    cases=$((cases + 1))
done

for f in "$BAD"/scenario/* "$BAD"/model/*; do
    [ -f "$f" ] || continue
    case ${f##*/} in bad-*) continue ;; esac
    read_case "$f"
    check "${f#"$BAD"/} (run)" "$EXP" "$A" run "$f" --json "$O/out.json" --csv "$O/new.csv" \
        --trace "$O/new.trace.json" "${ARGS[@]}"
    # `check` validates a sweep file (it expands it): sweep-* cases are for `run` only
    case ${f##*/} in sweep-*) ;; *) check "${f#"$BAD"/} (check)" "$EXP" "$A" check "$f" "${ARGS[@]}" ;; esac
    cases=$((cases + 1))
done

# cmdlines FILE PROGRAM... — FILE: one "ARGS # expect: ERE" per line; ARGS
# may quote, and use $O (the output directory, holding out.json), $S
# (tests/bad/support) and $BAD; each runs as PROGRAM... ARGS.
cmdlines() {
    local file=$1 ln=0 line args exp
    shift
    while IFS= read -r line || [ -n "$line" ]; do
        ln=$((ln + 1))
        case $line in '' | '#'*) continue ;; esac
        args=${line%% \# expect: *}
        exp=${line#*\# expect: }
        [ "$exp" != "$line" ] || exp=""
        eval "set -- $args"
        check "${file#"$BAD"/}:$ln: $args" "$exp" "${PROG[@]}" "$@"
        cases=$((cases + 1))
    done <"$file"
}
PROG=("$A"); cmdlines "$BAD/cmdlines.txt"
# mpibench checks every argument before MPI_Init: no mpirun needed. It is
# built by make validate-build, which make test runs first; without mpicc
# neither is there, and these cases are skipped.
if ! command -v "${MPICC:-mpicc}" >/dev/null; then
    echo "skipped mpibench.txt: ${MPICC:-mpicc} not found, so validate/mpibench is not built (Open MPI: make deps installs openmpi-bin and libopenmpi-dev)"
elif [ -x "$MPIBENCH" ]; then
    PROG=("$MPIBENCH"); cmdlines "$BAD/mpibench.txt"
else
    echo "FAIL mpibench.txt: $MPIBENCH is not built (make validate-build)"
fi
PROG=(validate/cluster.sh); cmdlines "$BAD/cluster.txt"

echo "# $cases bad-input cases"
