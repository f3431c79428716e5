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

# near A B REL — |A - B| <= REL * max(|A|, |B|).
near() { awk -v a="$1" -v b="$2" -v r="$3" 'BEGIN { d = a - b; m = a < 0 ? -a : a; n = b < 0 ? -b : b;
    if (n > m) m = n; exit !((d < 0 ? -d : d) <= r * m) }'; }

# two_layer_model FILE — writes a model of two layers: a GEMM of 4e9 FLOPs
# and 1,000 bytes (bound by FLOPs on every GPU) and an activation of 1,000
# FLOPs and 4e8 bytes (bound by memory), no parameters.
two_layer_model() {
    cat >"$1" <<'EOM'
name: two
params: 0
layers:
  - {name: gemm, kind: fc, params: 0, tensors: [], flops: 4000000000, mem_bytes: 1000}
  - {name: relu, kind: act, params: 0, tensors: [], flops: 1000, mem_bytes: 400000000}
EOM
}

# python3_or_skip WHAT TOOL — true where python3 is installed; otherwise
# prints "skipped WHAT: no python3 (TOOL is a maintainer tool)" and is
# false, so the checks it guards are reported skipped, never passed.
python3_or_skip() {
    command -v python3 >/dev/null && return 0
    echo "skipped $1: no python3 ($2 is a maintainer tool)"
    return 1
}
