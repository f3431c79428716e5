#!/bin/bash
# The docs stay true: every relative link in every markdown file resolves;
# every ```sh block of README.md, the tutorial and the how-to guides runs (from a
# scratch workspace that links the checkout's files, so what a command
# writes lands there); the command-line reference equals what
# docs/reference/cli.sh writes from arsim's help; no markdown file is over
# 1,500 lines and README.md over 300; the man pages carry their sections;
# every arsim session a page shows prints what it shows; nccl.md's anchor
# table is what validate/nccl/anchors.sh prints; the summaries quote the
# torchtitan check's current errors.
source tests/clilib.bash
A=$(readlink -f "${ARSIM:?set ARSIM to the arsim binary}")   # absolute: the page blocks run in a scratch workspace
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT

# The markdown files of the checkout (not build output, not results).
mdfiles() {
    find . \( -path ./.git -o -path './build*' -o -path ./results \) -prune -o -name '*.md' -print | sort
}

# links FILE — "LINE TARGET ANCHOR" for every relative link and image
# outside code (fenced blocks and `inline code` are skipped; URLs too); an
# in-page #anchor has the file itself as its target, "-" is no anchor.
links() {
    awk -v self="$(basename "$1")" '
    /^ *```/ { fence = !fence; next }
    fence { next }
    {
        line = $0
        gsub(/`[^`]*`/, "", line)
        while (match(line, /\]\([^)[:space:]]+\)/)) {
            tgt = substr(line, RSTART + 2, RLENGTH - 3)
            line = substr(line, RSTART + RLENGTH)
            if (tgt ~ /^[a-z]+:/) continue
            anchor = "-"
            if (index(tgt, "#")) { anchor = substr(tgt, index(tgt, "#") + 1); tgt = substr(tgt, 1, index(tgt, "#") - 1) }
            if (tgt == "") tgt = self
            print NR, tgt, anchor
        }
    }' "$1"
}

# anchors FILE — the anchor of every heading, as GitHub writes it: lower
# case, punctuation dropped (letters of other scripts kept), spaces to '-'.
anchors() {
    LC_ALL=C awk '
    /^ *```/ { fence = !fence; next }
    !fence && /^#+ / {
        h = $0; sub(/^#+ /, "", h); h = tolower(h)
        gsub(/–|—|§|·|×|≥|≤|→|←|’|‘|“|”|…|±|≈|²|⁶⁴|√/, "", h)
        gsub(/[][!"#$%&'\''()*+,.\/:;<=>?@\\^`{|}~]/, "", h)
        gsub(/ /, "-", h)
        print h
    }' "$1"
}

links_resolve() {
    local f n tgt anchor path bad=0 count=0
    while read -r f; do
        while read -r n tgt anchor; do
            count=$((count + 1))
            path=$(dirname "$f")/$tgt
            if [ ! -e "$path" ]; then
                echo "$f:$n: link to $tgt: no such file"; bad=1
            elif [ "$anchor" != - ] && [[ $path == *.md ]] && ! anchors "$path" | grep -qxF -- "$anchor"; then
                echo "$f:$n: link to $tgt#$anchor: no such heading"; bad=1
            fi
        done < <(links "$f")
    done < <(mdfiles)
    [ "$count" -gt 50 ] || { echo "only $count links found; the link scanner is broken"; bad=1; }
    return $bad
}
t "every relative link in the markdown files resolves, headings too" links_resolve

sizes() {
    local f n bad=0
    while read -r f; do
        n=$(wc -l <"$f")
        [ "$n" -le 1500 ] || { echo "$f: $n lines, over 1,500"; bad=1; }
    done < <(mdfiles)
    n=$(wc -l <README.md)
    [ "$n" -le 300 ] || { echo "README.md: $n lines, over 300"; bad=1; }
    return $bad
}
t "no markdown file over 1,500 lines, README.md at most 300" sizes

cli_reference() {
    bash docs/reference/cli.sh "$A" >"$T/cli.md" || { echo "docs/reference/cli.sh failed"; return 1; }
    diff -u docs/reference/cli.md "$T/cli.md" | head -20 >"$T/cli.diff"
    [ ! -s "$T/cli.diff" ] || { echo "docs/reference/cli.md is stale (run docs/reference/cli.sh ./arsim > docs/reference/cli.md):"; cat "$T/cli.diff"; return 1; }
    grep -q '^## arsim run$' docs/reference/cli.md || { echo "no run section"; return 1; }
}
t "docs/reference/cli.md equals what docs/reference/cli.sh writes" cli_reference

man_pages() {
    "$A" --man >"$T/arsim.1" || { echo "arsim --man failed"; return 1; }
    local s
    for s in NAME SYNOPSIS DESCRIPTION COMMANDS EXAMPLES ENVIRONMENT FILES '"EXIT STATUS"' '"SEE ALSO"'; do
        grep -q "^\.SH $s\$" "$T/arsim.1" || { echo "arsim.1 has no $s section"; return 1; }
    done
    grep -q 'arsim\\-scenario' "$T/arsim.1" || { echo "arsim.1 does not refer to arsim-scenario(5)"; return 1; }
    "$A" --man-scenario >"$T/arsim-scenario.5" || { echo "arsim --man-scenario failed"; return 1; }
    grep -q '^\.TH ARSIM-SCENARIO 5' "$T/arsim-scenario.5" || { echo "no .TH ARSIM-SCENARIO 5"; return 1; }
    # every top-level scenario key the reader checks is on the page
    local keys k
    keys=$(sed -n '/^#define SCENARIO_KEYS/,/[^\\]$/p' sim/train/scenario.c | grep -o '"[^"]*"' | tr -d '"' | tr ',' ' ')
    [ -n "$keys" ] || { echo "no SCENARIO_KEYS in sim/train/scenario.c"; return 1; }
    for k in $keys; do
        grep -q "^\\\\fB$k\\\\fR" "$T/arsim-scenario.5" || { echo "arsim-scenario.5 lacks key $k"; return 1; }
    done
}
t "man pages: arsim(1) has EXAMPLES and FILES, arsim-scenario(5) every scenario key" man_pages

# The words of docs/reference/scenario.md's code: its fenced blocks and
# its `code spans` (a span may cross a line), one word a line.
code_words() {
    awk '/^ *```/ { fence = !fence; next } fence { print > "/dev/stderr"; next } { print }' "$1" 2>"$T/fenced" |
        tr '\n' ' ' | grep -o '`[^`]*`' >"$T/spans"
    cat "$T/fenced" "$T/spans" | grep -oE '[A-Za-z_][A-Za-z_0-9]*' | sort -u
}

# Every key the scenario reader accepts is in docs/reference/scenario.md:
# an unknown key in each map of a scenario makes arsim name the keys it
# knows there ("expected one of: ..."), and each must be in the page's code.
scenario_keys() {
    local probes=(   # ~ is a space inside one --set value
        "--set zzz=1" "--set cluster.zzz=1" "--set cluster.link.zzz=1" "--set cluster.protocol.zzz=1"
        "--set policies.0.zzz=1" "--set comm.zzz=1" "--set iterations.zzz=1" "--set compute.zzz=1"
        "--set cluster.gpus_per_node=2 --set cluster.intra={zzz:~1}" "--set variation={zzz:~1}"
        "--set stragglers=[{ranks:~[0],~slowdown:~2,~zzz:~1}]"
        "--set faults=[{link:~h0->sw0,~bandwidth:~5Gbps,~zzz:~1}]" "--set faults=[{link:~{zzz:~1}}]"
        "--set background=[{pattern:~incast,~load:~0.1,~zzz:~1}]" "--set policies.4.hybrid={zzz:~1}"
        "--set policies=[{name:~f,~overlap:~fsdp,~wrap:~{zzz:~1}}]"
        "--set gpu=h100 --set cluster={node:~dgx-h100,~nodes:~2,~zzz:~1}"
        "--set gpu=h100 --set cluster={node:~dgx-h100,~nodes:~2} --set policies=[{name:~n,~algorithm:~nccl,~nccl:~{zzz:~1}}]"
    )
    local p a keys k n=0 bad=0 args words
    code_words docs/reference/scenario.md >"$T/words"
    for p in "${probes[@]}"; do
        args=()
        read -ra words <<<"$p"
        for a in "${words[@]}"; do args+=("${a//\~/ }"); done
        keys=$("$A" check configs/default.yaml "${args[@]}" 2>&1 | sed -n "s/.*unknown key 'zzz' in .*; expected one of: //p")
        [ -n "$keys" ] || { echo "$p: arsim named no keys"; bad=1; continue; }
        for k in ${keys//,/ }; do
            n=$((n + 1))
            grep -qxF "$k" "$T/words" || { echo "docs/reference/scenario.md lacks key $k (${p})"; bad=1; }
        done
    done
    [ "$n" -ge 100 ] || { echo "only $n keys probed"; bad=1; }
    return $bad
}
t "every key the scenario reader accepts is in docs/reference/scenario.md" scenario_keys

# doc_keys FROM TO — the `keys` of the first column of outputs.md's table
# rows between a line holding FROM and one holding TO, in page order.
doc_keys() {
    awk -v from="$1" -v to="$2" 'index($0, from) { on = 1; next } on && index($0, to) { exit }
        on && /^\| `/ { split($0, c, "|"); print c[2] }' docs/reference/outputs.md |
        grep -o '`[^`]*`' | tr -d '`' | tr -d '[]' | sed 's/^layers\.//'
}

# emitted_keys JSON PREFIX — the keys right under PREFIX (".results[0].")
# in JSON's order, each once.
emitted_keys() {
    LC_ALL=C awk -f tests/cli/jsonflat.awk "$1" | cut -f1 | grep -F "$2" | awk -v p="$2" '
        index($0, p) == 1 { k = substr($0, length(p) + 1); sub(/[.[].*/, "", k); if (!seen[k]++) print k }'
}

# in_order EMITTED DOC — every line of EMITTED is in DOC, in DOC's order.
in_order() {
    awk 'NR == FNR { if (!($0 in at)) at[$0] = FNR; next }
        !($0 in at) { print "undocumented: " $0; bad = 1; next }
        at[$0] < last { print "out of the page'\''s order: " $0 " (after " prev ")"; bad = 1 }
        { last = at[$0]; prev = $0 } END { exit bad }' "$2" "$1"
}

# Every key of a run's --json result and unit row, and of its --csv header,
# is in docs/reference/outputs.md, in the order arsim writes them: a plain
# run with what-if variation, and fsdp2 through NCCL (memory, NCCL, FSDP2's
# copies).
output_fields() {
    local bad=0
    "$A" run configs/default.yaml --set batch=64 --set 'variation={dist: normal, cv: 0.1, seed: 1}' \
        --json "$T/o1.json" --csv "$T/o1.csv" >/dev/null || { echo "run 1 failed"; return 1; }
    "$A" run configs/llama3-8b-fsdp-h100-8.yaml --set 'policies=[{name: f, overlap: fsdp2, checkpoint: selective}]' \
        --set iterations.warmup=0 --set iterations.measured=1 --json "$T/o2.json" --csv "$T/o2.csv" >/dev/null ||
        { echo "run 2 failed"; return 1; }
    doc_keys 'Each of `results`' 'Each of `layers`' >"$T/doc-results"
    doc_keys 'Each of `layers`' '## ' >"$T/doc-layers"
    sed -n '/^`scenario`: /,/^$/p' docs/reference/outputs.md | grep -o '`[^`]*`' | tr -d '`' | tail -n +2 >"$T/doc-scenario"
    awk '/^A header line, then one line per result/,/^rows\./' docs/reference/outputs.md | tr '\n' ' ' |
        sed 's/^[^:]*: //' | grep -oE '[A-Za-z_0-9]+' >"$T/doc-csv"
    local o
    for o in o1 o2; do
        emitted_keys "$T/$o.json" '.scenario.' >"$T/e" && in_order "$T/e" "$T/doc-scenario" || { echo "($o scenario)"; bad=1; }
        emitted_keys "$T/$o.json" '.results[0].' >"$T/e" && in_order "$T/e" "$T/doc-results" || { echo "($o results)"; bad=1; }
        emitted_keys "$T/$o.json" '.results[0].layers[0].' >"$T/e" && in_order "$T/e" "$T/doc-layers" ||
            { echo "($o layers)"; bad=1; }
        head -1 "$T/$o.csv" | tr ',' '\n' >"$T/e" && in_order "$T/e" "$T/doc-csv" || { echo "($o csv)"; bad=1; }
    done
    [ "$(wc -l <"$T/doc-results")" -ge 30 ] || { echo "the results table was not found"; bad=1; }
    return $bad
}
t "every --json and --csv field of arsim run is in docs/reference/outputs.md, in its order" output_fields

# A scratch workspace: every top-level entry of the checkout linked, ./arsim
# the binary under test behind a wrapper that notes each call that fails
# (a pipe into head would hide its status); a fresh one per page, its
# blocks run in order.
workspace() {
    local w=$1 e
    mkdir -p "$w"
    for e in * .[!.]*; do
        case $e in .git|arsim|results|build*) continue ;; esac
        ln -s "$PWD/$e" "$w/$e"
    done
    cat >"$w/arsim" <<EOF
#!/bin/bash
"$A" "\$@"
rc=\$?
[ \$rc -eq 0 ] || [ \$rc -eq 141 ] || echo "arsim \$*: exit \$rc" >>"$T/arsim-failed"
exit \$rc
EOF
    chmod +x "$w/arsim"
}

# blocks FILE DIR — writes each ```sh block of FILE as DIR/LINE.sh.
blocks() {
    awk -v dir="$2" '
    /^```sh *$/ { inb = 1; name = dir "/" NR ".sh"; next }
    inb && /^```/ { inb = 0; close(name); next }
    inb { print > name }' "$1"
}

# run_block WS BLOCK — the block exits 0, and every arsim call in it does
# (exit 141, a pipe's reader that stopped early, aside) unless the block
# shows a refusal on purpose with `||`.
run_block() {
    local ws=$1 b=$2
    rm -f "$T/arsim-failed"
    (cd "$ws" && bash -e "$b") >"$T/block.out" 2>&1 ||
        { echo "exit $?:"; tail -5 "$T/block.out"; return 1; }
    if [ -s "$T/arsim-failed" ] && ! grep -q '||' "$b"; then
        echo "an arsim call failed inside the block:"; cat "$T/arsim-failed"; tail -3 "$T/block.out"; return 1
    fi
}

pages=0
for page in README.md docs/tutorial/*.md docs/howto/*.md; do
    [ -f "$page" ] || continue
    d=$T/blocks/$(basename "$page" .md); mkdir -p "$d"
    blocks "$page" "$d"
    ls "$d"/*.sh >/dev/null 2>&1 || continue
    pages=$((pages + 1))
    ws=$T/ws/$(basename "$page" .md); workspace "$ws"
    for b in $(cd "$d" && ls | sort -n); do
        if grep -qE 'arsim plot|--plot ' "$d/$b" && ! command -v gnuplot >/dev/null; then
            echo "skipped $page:${b%.sh}: it draws figures and gnuplot is not installed"
            continue
        fi
        t "$page:${b%.sh}: the sh block runs" run_block "$ws" "$d/$b"
    done
done
some_pages() { [ "$pages" -ge 5 ] || { echo "only $pages pages have sh blocks"; return 1; }; }
t "the tutorial and the how-tos have runnable sh blocks" some_pages

# transcript_segments FILE DIR — every fenced block of FILE that opens with
# "$ arsim ..." or "$ ./arsim ..." is a shown session: each "$ " command
# (with its "\" continuation lines) and the output lines under it, up to
# the next "$ ". Writes each command with output as DIR/LINE.cmd (the
# command, "arsim" or "./arsim" dropped) and DIR/LINE.out (its lines, "..."
# for an omission).
transcript_segments() {
    awk -v dir="$2" '
    function flush() { if (cmd != "" && nout > 0) { print cmd > (dir "/" at ".cmd"); close(dir "/" at ".cmd"); close(dir "/" at ".out") } cmd = ""; nout = 0 }
    /^```/ {
        if (!inb) { inb = 1; first = 1; shown = 0; next }
        inb = 0; flush(); next
    }
    !inb { next }
    first { first = 0; shown = ($0 ~ /^\$ (\.\/)?arsim /) }
    !shown { next }
    cont { cmd = cmd " " $0; cont = sub(/ *\\$/, "", cmd); next }
    /^\$ / { flush(); at = NR; cmd = $0; sub(/^\$ (\.\/)?arsim /, "", cmd); cont = sub(/ *\\$/, "", cmd); next }
    { nout++; print > (dir "/" at ".out") }' "$1"
}

# shown_in_order SHOWN ACTUAL — each line of SHOWN but "..." begins a line
# of ACTUAL, after the one the line before it began (a shown line may be
# cut short at the page's width, never changed).
shown_in_order() {
    awk 'NR == FNR { out[++n] = $0; next }
        $0 == "..." { next }
        { while (++i <= n && index(out[i], $0) != 1) ; if (i > n) { print "not printed (in this order): " $0; exit 1 } }' "$2" "$1"
}

# Every session the docs show (README.md, the tutorial, the how-tos) is what
# arsim prints today: a command's shown lines, in order, begin its output's.
transcripts() {
    local page d c n=0 bad=0 ws=$T/ws/transcripts
    workspace "$ws"
    for page in README.md docs/tutorial/*.md docs/howto/*.md; do
        d=$T/transcripts/$(basename "$page" .md); mkdir -p "$d"
        transcript_segments "$page" "$d"
        for c in "$d"/*.cmd; do
            [ -e "$c" ] || continue
            n=$((n + 1))
            (cd "$ws" && eval "\"\$A\" $(cat "$c")") >"$T/actual" 2>&1 ||
                { echo "$page:$(basename "$c" .cmd): exit $?"; bad=1; continue; }
            shown_in_order "${c%.cmd}.out" "$T/actual" >"$T/why" ||
                { echo "$page:$(basename "$c" .cmd): $(cat "$T/why")"; bad=1; }
        done
    done
    [ "$n" -ge 3 ] || { echo "only $n shown sessions found; the scanner is broken"; bad=1; }
    return $bad
}
t "every arsim session shown in README.md, the tutorial and the how-tos prints what the page shows" transcripts

# nccl.md's table against published busbw is what validate/nccl/anchors.sh
# prints today (the summaries in README.md, accuracy.md and limitations.md
# quote it).
nccl_anchor_table() {
    bash validate/nccl/anchors.sh "$A" >"$T/anchors" 2>&1 || { echo "anchors.sh: exit $?: $(tail -2 "$T/anchors")"; return 1; }
    [ "$(wc -l <"$T/anchors")" -ge 10 ] || { echo "anchors.sh printed $(wc -l <"$T/anchors") lines"; return 1; }
    grep -vxF -f docs/explanation/nccl.md "$T/anchors" >"$T/missing"
    [ ! -s "$T/missing" ] || { echo "docs/explanation/nccl.md lacks these rows of validate/nccl/anchors.sh:"; cat "$T/missing"; return 1; }
}
t "docs/explanation/nccl.md's anchor table is what validate/nccl/anchors.sh prints" nccl_anchor_table

# The torchtitan check's result table gives its history "before → ... →
# **now**"; README.md, limitations.md and accuracy.md quote the current
# error on 8 and on 128 GPUs ("+9.5 %", the last bold figure of the row).
torchtitan_quotes() {
    local gpus now f bad=0
    for gpus in 8 128; do
        now=$(awk -F'|' -v g="$gpus" '$2 ~ "^ *" g " *$" { n = split($5, b, /\*\*/); print b[n - 1] }' docs/explanation/torchtitan.md)
        [[ $now =~ ^[-+][0-9.]+\ %$ ]] || { echo "torchtitan.md: no current error for $gpus GPUs (read '$now')"; bad=1; continue; }
        for f in README.md docs/explanation/limitations.md docs/explanation/accuracy.md; do
            grep -qF -- "$now" "$f" || { echo "$f does not quote torchtitan.md's current error on $gpus GPUs, $now"; bad=1; }
        done
    done
    return $bad
}
t "README.md, limitations.md and accuracy.md quote the torchtitan check's current errors" torchtitan_quotes
