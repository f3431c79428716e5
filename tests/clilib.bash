# clilib — helpers the command-line suites source (tests/cli/*.sh run from
# the repository root, print "ok NAME" / "FAIL NAME: why" lines).

# t NAME FN ARGS... — FN prints why it failed (if it did) and returns non-zero.
t() {
    local name=$1 why
    shift
    if why=$("$@" 2>&1); then
        echo "ok $name"
    else
        echo "FAIL $name: $(tr '\n' ' ' <<<"$why" | head -c 400)"
    fi
}

# flat FILE — FILE as PATH<TAB>VALUE lines (fails on invalid JSON).
flat() { awk -f tests/cli/jsonflat.awk "$1"; }
