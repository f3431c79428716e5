#!/bin/sh
# docs/reference/cli.sh — writes the command-line reference (docs/reference/cli.md)
# from arsim's own help, which is written from the same option tables as
# --help, the man page and the completion:
#
#   docs/reference/cli.sh [ARSIM] > docs/reference/cli.md
#
# tests/cli/docs.sh checks that the committed file equals what this writes.
set -eu
A=${1:-./arsim}
cmds=$("$A" --help | sed -n '/^Commands:/,/^$/p' | awk '/^  [a-z]/ { print $1 }')
cat <<'HEAD'
# Command-line reference

Written by `docs/reference/cli.sh` from `arsim help COMMAND`, which arsim
writes from the same option tables as `--help`, the man page (`man arsim`)
and the bash completion; `make test` checks that this file is current
(after changing an option: `docs/reference/cli.sh ./arsim >
docs/reference/cli.md`). Units: [units](units.md); outputs and their
fields: [outputs](outputs.md); the scenario file: [scenario](scenario.md).

    arsim COMMAND [OPTION...] [ARGUMENT...]
    arsim help [COMMAND] | --help | --version

HEAD
echo "| command | what it does |"
echo "|---|---|"
for c in $cmds; do
    s=$("$A" help "$c" | awk 'NR >= 3 && /^$/ { exit } NR >= 3 { printf "%s%s", sep, $0; sep = " " }' | sed 's/\.$//')
    echo "| [\`$c\`](#arsim-$c) | $s |"
done
for c in $cmds; do
    printf '\n## arsim %s\n\n```text\n' "$c"
    "$A" help "$c"
    printf '```\n'
done
