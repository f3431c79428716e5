# titanlib — what the torchtitan scripts of validate/fsdp/ share (sourced;
# $A is the arsim binary).

# tok CONFIG [ARG...] — tokens/s per GPU of CONFIG's run with ARG... given
# to `arsim run` (samples/s x 8192 / world, torchtitan's sequence).
tok() {
    local c=$1
    shift
    "$A" run "$c" "$@" --csv - | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
        { printf "%.1f\n", $c["samples_per_s"] * 8192 / $c["world"] }'
}
