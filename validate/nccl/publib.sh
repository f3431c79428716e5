# validate/nccl/publib.sh — what the scripts that set arsim beside a
# published nccl-tests table share (midsize.sh, scale.sh, latency.sh source
# it): reading a table's file, the row-count check, a table's heading, and
# awk's worst() for a band of sizes.

# pub_read FILE OUT — sets label and args from FILE's '# label:' and
# '# arsim:' lines (exit 2 with one line on standard error if either is
# missing) and writes its data lines, blank ones dropped, to OUT.
pub_read() {
    label=$(sed -n 's/^# label: //p' "$1")
    args=$(sed -n 's/^# arsim: //p' "$1")
    [ -n "$label" ] && [ -n "$args" ] || { echo "$1: no '# label:' or '# arsim:' line" >&2; exit 2; }
    grep -v '^#' "$1" | awk 'NF' >"$2"
}

# pub_rows FILE SIM PUB WHAT — exit 1 unless arsim's rows (SIM) are as
# many as the published ones (PUB; WHAT names them: sizes, rank counts).
pub_rows() {
    [ "$(wc -l <"$2")" -eq "$(wc -l <"$3")" ] ||
        { echo "$1: arsim printed $(wc -l <"$2") rows for $(wc -l <"$3") $4" >&2; exit 1; }
}

# pub_heading LABEL ARGS — the table's title and the arsim command that ran it.
pub_heading() {
    echo "**$1**"
    echo
    echo "arsim: \`arsim collective --algo nccl $2\`"
    echo
}

# awk source, put before a program that calls worst(NAME, LIM, E, S, N):
# the band NAME's worst error E (%) at size S beside its target LIM (%),
# or "no point" when the band had none (N = 0).
PUB_WORST_AWK='
function worst(name, lim, e, s, n) {
    if (n == 0) return sprintf("%s: no point", name)
    return sprintf("%s: %+.1f %% at %s B (target %d %%: %s)", name, e, s, lim,
                   (e <= lim && e >= -lim) ? "met" : "missed")
}'
