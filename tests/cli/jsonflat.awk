# jsonflat — a strict JSON (RFC 8259) validator and flattener in POSIX awk,
# for the command-line suites (no python or jq on a bare Debian machine).
# Reads one JSON text; on success prints one line per scalar,
#   PATH<TAB>VALUE      e.g.  .results[0].batch<TAB>32
# (PATH "" for a scalar root; strings printed without their quotes, escapes
# kept as written; [] and {} print as PATH<TAB>[] / PATH<TAB>{}) and exits
# 0. On malformed input prints "jsonflat: offset N: what" on stderr and
# exits 1. Run it under LC_ALL=C (bytes, not characters):
#   LC_ALL=C awk -f tests/cli/jsonflat.awk FILE

function fail(what) {
    printf "jsonflat: offset %d: %s\n", pos - 1, what > "/dev/stderr"
    failed = 1
    exit 1
}

function ws(    c) {
    for (;;) {
        c = substr(s, pos, 1)
        if (c == " " || c == "\t" || c == "\n" || c == "\r")
            pos++
        else
            return
    }
}

# A string at pos (which holds '"'); returns its text without the quotes.
function str(    start, c, h) {
    start = ++pos
    for (;;) {
        c = substr(s, pos, 1)
        if (c == "")
            fail("unterminated string")
        if (c == "\"")
            break
        if (c == "\\") {
            c = substr(s, pos + 1, 1)
            if (c == "u") {
                h = substr(s, pos + 2, 4)
                if (h !~ /^[0-9A-Fa-f][0-9A-Fa-f][0-9A-Fa-f][0-9A-Fa-f]$/)
                    fail("bad \\u escape")
                pos += 6
                continue
            }
            if (index("\"\\/bfnrt", c) == 0 || c == "")
                fail("bad escape")
            pos += 2
            continue
        }
        if (index(ctl, c))
            fail("control character in a string")
        pos++
    }
    pos++
    return substr(s, start, pos - start - 1)
}

function value(path,    c, n, k, t) {
    ws()
    c = substr(s, pos, 1)
    if (c == "{") {
        pos++
        ws()
        if (substr(s, pos, 1) == "}") {
            pos++
            print path "\t{}"
            return
        }
        for (;;) {
            ws()
            if (substr(s, pos, 1) != "\"")
                fail("expected a string key")
            k = str()
            ws()
            if (substr(s, pos, 1) != ":")
                fail("expected ':'")
            pos++
            value(path "." k)
            ws()
            c = substr(s, pos, 1)
            pos++
            if (c == "}")
                return
            if (c != ",")
                fail("expected ',' or '}'")
        }
    }
    if (c == "[") {
        pos++
        ws()
        if (substr(s, pos, 1) == "]") {
            pos++
            print path "\t[]"
            return
        }
        for (n = 0; ; n++) {
            value(path "[" n "]")
            ws()
            c = substr(s, pos, 1)
            pos++
            if (c == "]")
                return
            if (c != ",")
                fail("expected ',' or ']'")
        }
    }
    if (c == "\"") {
        print path "\t" str()
        return
    }
    t = substr(s, pos, 5)
    if (t ~ /^true/ || t ~ /^null/) {
        print path "\t" substr(t, 1, 4)
        pos += 4
        return
    }
    if (t == "false") {
        print path "\tfalse"
        pos += 5
        return
    }
    t = substr(s, pos, 64)
    if (match(t, /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?/) && RLENGTH > 0 &&
        substr(t, RLENGTH, 1) ~ /[0-9]/) {
        print path "\t" substr(t, 1, RLENGTH)
        pos += RLENGTH
        return
    }
    fail("expected a value")
}

BEGIN {
    for (i = 1; i < 32; i++)
        ctl = ctl sprintf("%c", i)
    RS = "\001"   # the whole text is one record (a raw \001 is never valid JSON)
}

{ s = s $0 }

END {
    if (failed)
        exit 1
    if (NR > 1)
        fail("control character")
    pos = 1
    value("")
    ws()
    if (pos <= length(s))
        fail("text after the JSON value")
}
