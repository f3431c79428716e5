#!/bin/bash
# --help, --version, `help COMMAND`, the man page and the bash completion:
# all are written from the commands' option tables, so they must agree
# with each other and with the parser. The command names and the version
# are read here independently (this list, sim/io/version.h).
source tests/clilib.bash
A=${ARSIM:?set ARSIM to the arsim binary}
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
CMDS="run collective sweep plot calibrate compare check import-profile list"

# out_ok ARGS... — exit 0, stdout not empty, stderr empty; stdout in $T/out.
out_ok() {
    "$A" "$@" >"$T/out" 2>"$T/err"; local rc=$?
    [ $rc -eq 0 ] || { echo "$*: exit $rc: $(cat "$T/err")"; return 1; }
    [ -s "$T/out" ] || { echo "$*: nothing on stdout"; return 1; }
    [ ! -s "$T/err" ] || { echo "$*: stderr: $(cat "$T/err")"; return 1; }
}

overview() {
    out_ok --help || return 1
    grep -q '^usage: arsim COMMAND' "$T/out" || { echo "no usage line"; return 1; }
    for c in $CMDS; do
        grep -qE "^  $c +[a-z]" "$T/out" || { echo "command $c not listed"; return 1; }
    done
    cp "$T/out" "$T/help"
    out_ok -h && cmp -s "$T/out" "$T/help" || { echo "-h differs from --help"; return 1; }
    out_ok help && cmp -s "$T/out" "$T/help" || { echo "help differs from --help"; return 1; }
    out_ok help help && cmp -s "$T/out" "$T/help" || { echo "help help differs from --help"; return 1; }
}
t "arsim --help lists every command" overview

version() {
    local want
    want=$(sed -n 's/^#define ARSIM_VERSION "\(.*\)"$/arsim \1/p' sim/io/version.h)
    out_ok --version || return 1
    [ "$(cat "$T/out")" = "$want" ] || { echo "'$(cat "$T/out")', want '$want'"; return 1; }
}
t "arsim --version prints sim/io/version.h's version" version

# The options a command's --help lists, one a line: "--name" or "--name VALUE".
help_opts() { sed -n 's/^  \(--[a-z-]*\)\( [^ ][^ ]*\)\{0,1\}\(  .*\)\{0,1\}$/\1\2/p' "$1" | grep -v '^--help$'; }

command_help() {
    local c=$1 o name
    out_ok "$c" --help || return 1
    grep -q "^usage: arsim $c" "$T/out" || { echo "no usage line"; return 1; }
    cp "$T/out" "$T/$c.help"
    out_ok "$c" -h && cmp -s "$T/out" "$T/$c.help" || { echo "-h differs"; return 1; }
    out_ok help "$c" && cmp -s "$T/out" "$T/$c.help" || { echo "help $c differs"; return 1; }
    help_opts "$T/$c.help" >"$T/$c.opts"
    [ -s "$T/$c.opts" ] || { echo "no options listed"; return 1; }
    # every listed option is one the parser knows, taking a value or not as listed
    while read -r name val; do
        if [ -n "$val" ]; then
            "$A" "$c" "$name" >/dev/null 2>"$T/err"
            grep -q "^$name: missing value; expected" "$T/err" || { echo "$name: $(cat "$T/err")"; return 1; }
        else
            "$A" "$c" "$name" --no-such-option >/dev/null 2>"$T/err"
            grep -q '^--no-such-option: unknown option' "$T/err" || { echo "$name: $(cat "$T/err")"; return 1; }
        fi
    done <"$T/$c.opts"
}
for c in $CMDS; do t "arsim $c --help: every option listed is parsed" command_help "$c"; done

# The man page: groff without warnings; per command, the options of its --help.
man_page() {
    out_ok --man || return 1
    cp "$T/out" "$T/arsim.1"
    grep -q '^\.TH ARSIM 1 ' "$T/arsim.1" || { echo "no .TH"; return 1; }
    if command -v groff >/dev/null; then
        groff -man -Tutf8 -ww -z "$T/arsim.1" 2>"$T/groff" && [ ! -s "$T/groff" ] ||
            { echo "groff: $(head -3 "$T/groff")"; return 1; }
    fi
    for c in $CMDS; do
        awk -v c="$c" '{ s = $0; gsub(/\\-/, "-", s); gsub(/\\f[BIR]/, "", s) }
            /^\.SS / { on = index(s, "\"arsim " c " ") == 5 || s == ".SS \"arsim " c "\"" }
            on && /^\\fB\\-\\-/ { print s }' "$T/arsim.1" |
            grep -v '^--help, -h$' >"$T/$c.man"
        diff "$T/$c.opts" "$T/$c.man" >/dev/null || { echo "$c: man $(tr '\n' ' ' <"$T/$c.man")"; return 1; }
    done
}
t "arsim --man: groff-clean, the options of every --help" man_page

# Completion: source the script and ask it as bash would.
complete_at() {   # LINE — prints the completions of LINE (the cursor at its end)
    bash -c 'source "$1"; COMP_LINE=$2; COMP_POINT=${#2}; read -r -a COMP_WORDS <<<"$2"
             [[ $2 == *" " ]] && COMP_WORDS+=("")
             COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); _arsim; printf "%s\n" "${COMPREPLY[@]}"' _ "$T/arsim.bash" "$1"
}
completion() {
    out_ok --bash-completion || return 1
    cp "$T/out" "$T/arsim.bash"
    bash -n "$T/arsim.bash" || { echo "not valid bash"; return 1; }
    local got want
    got=$(complete_at "$A " | sort | tr '\n' ' ')
    want=$(printf '%s\n' $CMDS help --help --version | sort | tr '\n' ' ')
    [ "$got" = "$want" ] || { echo "commands: $got"; return 1; }
    [ "$(complete_at "$A coll")" = collective ] || { echo "coll: $(complete_at "$A coll")"; return 1; }
    got=$(complete_at "$A collective --" | sort)
    want=$( (cat "$T/collective.opts" | cut -d' ' -f1; echo --help) | sort)
    [ "$got" = "$want" ] || { echo "collective options: $got"; return 1; }
    got=$(complete_at "$A collective --algo " | sort | tr '\n' ' ')
    [ "$got" = "butterfly hierarchical nccl rabenseifner ring torus2d tree " ] || { echo "--algo: $got"; return 1; }
    got=$(complete_at "$A collective --topology fat-tree-k" | sort | tr '\n' ' ')
    [ "$got" = "fat-tree-k16 fat-tree-k8 " ] || { echo "--topology: $got"; return 1; }
    got=$(complete_at "$A collective --node dgx-" | sort | tr '\n' ' ')
    [ "$got" = "dgx-1 dgx-a100 dgx-h100 dgx-h200 " ] || { echo "--node: $got"; return 1; }
    got=$(complete_at "$A run x.yaml --set model=vgg" | sort | tr '\n' ' ')
    [ "$got" = "vgg16 vgg16-cifar10 vgg16-cifar10-h100 vgg16-h100 vgg16-h100-fp16 " ] || { echo "--set model=: $got"; return 1; }
    got=$(complete_at "$A run x.yaml --set policies.0.overlap=" | sort | tr '\n' ' ')
    [ "$got" = "ddp fsdp fsdp2 layer none priority " ] || { echo "--set overlap=: $got"; return 1; }
    got=$(complete_at "$A import-profile t.json --gpu " | sort)
    [ "$got" = "$("$A" list gpus --names | sort)" ] || { echo "--gpu: $got"; return 1; }
    got=$(complete_at "$A list " | sort | tr '\n' ' ')
    [ "$got" = "algorithms gpus models nodes policies topologies " ] || { echo "list: $got"; return 1; }
    got=$(complete_at "$A help co" | sort | tr '\n' ' ')
    [ "$got" = "collective compare " ] || { echo "help co: $got"; return 1; }
    [ -z "$(complete_at "$A collective --ranks ")" ] || { echo "--ranks offers something"; return 1; }
}
t "arsim --bash-completion: commands, options, values, list names" completion

# A default --help states is the default: giving it changes nothing
# (--trials and --seed, which only a skewed run takes, beside --skew).
defaults_hold() {
    local base=(collective --ranks 5 --algo hierarchical --gpus-per-node 1 --size 1KB,1MB --json -) opt val n=0
    "$A" "${base[@]}" | grep -v '"wall_s"' >"$T/base.json" || return 1
    "$A" "${base[@]}" --skew 1us | grep -v '"wall_s"' >"$T/skew.json" || return 1
    # "--opt VALUE  ...; default: X" on the option's lines, joined
    awk 'function out() { if (o) print o, (match(line, /default: [^ ;]+$/) ? substr(line, RSTART + 9) : "") }
         /^  --/ { out(); o = $1; line = $0; next } /^   / { line = line $0 } END { out() }' \
        "$T/collective.help" | while read -r opt val; do
        [ -n "$val" ] || continue
        case $opt in
        --trials | --seed)
            "$A" "${base[@]}" --skew 1us "$opt" "$val" | grep -v '"wall_s"' | cmp -s - "$T/skew.json" ;;
        *) "$A" "${base[@]}" "$opt" "$val" | grep -v '"wall_s"' | cmp -s - "$T/base.json" ;;
        esac || { echo "$opt $val changes the output"; return 1; }
        n=$((n + 1)); echo "$n" >"$T/ndefaults"
    done || return 1
    [ "$(cat "$T/ndefaults" 2>/dev/null)" -ge 3 ] || { echo "only $(cat "$T/ndefaults" 2>/dev/null) defaults tried"; return 1; }
}
t "collective: each default --help states changes nothing when given" defaults_hold
