#!/bin/bash
# install — `make install` into a temporary prefix, then docs/tutorial/tour.md's tour run
# from another directory with only the installed tree (its outputs must
# equal the checkout's), the order of the data search path, the man page
# and the completion as installed; `make uninstall` must leave nothing,
# and the same with DESTDIR. The install builds in a copy of build/
# ($T/build: only io/datapath.o is rebuilt for the prefix), so the
# checkout's own build is not touched. The checkout's ./arsim is the
# reference.
source tests/clilib.bash
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
ROOT=$PWD
REF=$ROOT/arsim
P=$T/usr
BIN=$P/bin/arsim
W=$T/elsewhere
mkdir -p "$W"
unset ARSIM_DATA ARSIM_HOME

# make without the jobserver of a make that may have started this suite
mk() { env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s --no-print-directory BUILD="$T/build" "$@"; }

installs() {
    [ -d build ] && cp -a build "$T/build"
    mk install PREFIX="$P" >"$T/make.log" 2>&1 || { echo "make install: $(tail -3 "$T/make.log")"; return 1; }
    for f in bin/arsim share/man/man1/arsim.1 share/bash-completion/completions/arsim share/arsim/.installed \
             share/arsim/models/vgg16.yaml share/arsim/models/gpus.yaml share/arsim/topologies/fat-tree-k8.yaml \
             share/arsim/configs/default.yaml share/arsim/configs/sweep-thesis.yaml share/arsim/plots/common.gp; do
        [ -f "$P/$f" ] || { echo "no $P/$f"; return 1; }
    done
    [ -x "$BIN" ] || { echo "$BIN is not executable"; return 1; }
}
t "make install PREFIX=\$T/usr" installs
[ -x "$BIN" ] || exit 0

# in W, with the installed binary: same stdout as the checkout's ./arsim
# (JSON host timings removed)
same() {
    local ref got
    ref=$("$REF" "$@" 2>&1 | grep -v '"wall_s"') || { echo "checkout: $ref"; return 1; }
    got=$(cd "$W" && "$BIN" "$@" 2>&1 | grep -v '"wall_s"') || { echo "installed: $got"; return 1; }
    [ "$ref" = "$got" ] || { echo "outputs differ: $(diff <(echo "$ref") <(echo "$got") | head -5)"; return 1; }
}
# in W, with the installed binary: exit 0
runs() { (cd "$W" && "$BIN" "$@") >"$T/out" 2>"$T/err" || { echo "exit $?: $(tail -2 "$T/err")"; return 1; }; }

t "tour: run configs/default.yaml" same run configs/default.yaml
tour_files() {
    runs run configs/default.yaml --set cluster.nodes=32 --set 'batch=[32,64]' --json out.json --csv out.csv \
        --trace vgg16.trace.json --layers || return 1
    for f in out.json out.csv vgg16.trace.json; do [ -s "$W/$f" ] || { echo "no $f"; return 1; }; done
}
t "tour: run --set --json --csv --trace --layers" tour_files
tour_check() {
    runs check configs/default.yaml || return 1
    grep -q "^$P/share/arsim/configs/default.yaml: ok: vgg16, 4 batch sizes x 6 policies" "$T/out" ||
        { echo "check: $(cat "$T/out")"; return 1; }
}
t "tour: check (names the installed file)" tour_check
t "tour: collective on a star" same collective --ranks 16 --bandwidth 10Gbps --latency 5us --algo ring --size 1KB,1MB,64MB
t "tour: collective --topology topologies/fat-tree-k8.yaml" \
    same collective --topology topologies/fat-tree-k8.yaml --algo butterfly --size 256MB --json -
t "tour: collective --links" same collective --ranks 8 --algo ring --size 64MB --links
tour_sweep() {
    runs sweep configs/sweep-thesis.yaml --out results/thesis --jobs 2 || return 1
    [ "$(wc -l <"$W/results/thesis/results.jsonl")" -eq 16 ] || { echo "not 16 scenarios"; return 1; }
    runs plot results/thesis/results.jsonl --out results/thesis/plots || return 1
    [ -s "$W/results/thesis/plots/figures.txt" ] && ls "$W"/results/thesis/plots/*.png >/dev/null ||
        { echo "no figures"; return 1; }
}
t "tour: sweep, plot (the installed gnuplot scripts)" tour_sweep
tour_calib() {
    cp tests/data/calib-synthetic.json "$W/meas.json"
    runs calibrate meas.json --out calib.yaml && runs compare meas.json --calibration calib.yaml || return 1
    grep -q '^compare meas.json' "$T/out" || { echo "compare: $(head -1 "$T/out")"; return 1; }
}
t "tour: calibrate, compare" tour_calib
tour_import() {
    cp tests/data/profile-vgg16-cifar10.json "$W/step.trace.json"
    mkdir -p "$W/models"
    runs import-profile step.trace.json --model vgg16-cifar10 --gpu h100 --out models/vgg16-h100.yaml || return 1
    runs list models || return 1
    grep -q '^vgg16-h100 ' "$T/out" && grep -q '^resnet50 ' "$T/out" ||
        { echo "list models: the working directory's and the installed models: $(cat "$T/out")"; return 1; }
    rm -r "$W/models"
}
t "tour: import-profile, list models (working directory and installed)" tour_import
for what in models gpus topologies nodes algorithms policies; do
    t "tour: list $what" same list "$what"
done
t "--version" same --version

# The search path: the config's directory, $ARSIM_DATA ($ARSIM_HOME), the
# working directory, the installed share/arsim. A model "probe" in each,
# named after where it is; `check` prints the model's name.
probe() { mkdir -p "$1/models"; sed "s/^name: .*/name: $2/" models/vgg16-cifar10.yaml >"$1/models/probe.yaml"; }
found() {   # EXPECTED [ENV...] — the model `check` finds, run in W
    local want=$1 got
    shift
    got=$(cd "$W" && env "$@" "$BIN" check "$T/cfg/scn.yaml" 2>&1)
    [[ $got == *": ok: $want,"* ]] || { echo "want $want: $got"; return 1; }
}
search_order() {
    mkdir -p "$T/cfg"
    sed 's/^model: .*/model: probe/' tests/bad/support/ok.yaml >"$T/cfg/scn.yaml"
    probe "$T/cfg" from-config
    probe "$T/env" from-env
    probe "$T/env2" from-env2
    probe "$W" from-cwd
    probe "$P/share/arsim" from-installed
    found from-config ARSIM_DATA="$T/env" || return 1
    rm "$T/cfg/models/probe.yaml"
    found from-env ARSIM_DATA="$T/env" || return 1
    found from-env ARSIM_HOME="$T/env" || return 1
    found from-env2 ARSIM_DATA="$T/env2" ARSIM_HOME="$T/env" || return 1
    found from-cwd || return 1
    rm "$W/models/probe.yaml"
    found from-installed || return 1
    rm "$P/share/arsim/models/probe.yaml"
    local got
    got=$(cd "$W" && "$BIN" check "$T/cfg/scn.yaml" 2>&1)
    [[ $got == *"unknown model 'probe'"* ]] || { echo "none left: $got"; return 1; }
}
t "search path: config dir, \$ARSIM_DATA (\$ARSIM_HOME), working dir, installed" search_order

man_installed() {
    [ "$(MANPATH=$P/share/man man -w arsim 2>&1)" = "$P/share/man/man1/arsim.1" ] || { echo "man -w: not found"; return 1; }
    MANWIDTH=80 MANPATH=$P/share/man man arsim 2>/dev/null | grep -q -- '--topology' || { echo "man arsim: no --topology"; return 1; }
}
command -v man >/dev/null && t "man arsim finds the installed page" man_installed
completion_installed() {
    local got
    got=$(bash -c 'source "$1"; COMP_LINE="$2 collective --topology fat-tree-k"; COMP_POINT=${#COMP_LINE}
                   COMP_WORDS=("$2" collective --topology fat-tree-k); COMP_CWORD=3; cd "$3"; _arsim
                   printf "%s\n" "${COMPREPLY[@]}"' _ "$P/share/bash-completion/completions/arsim" "$BIN" "$W" |
          sort | tr '\n' ' ')
    [ "$got" = "fat-tree-k16 fat-tree-k8 " ] || { echo "got '$got'"; return 1; }
}
t "the installed completion offers the installed topologies" completion_installed

uninstalls() {
    mk uninstall PREFIX="$P" >"$T/make.log" 2>&1 || { echo "make uninstall: $(tail -3 "$T/make.log")"; return 1; }
    [ ! -e "$P" ] || { echo "left: $(find "$P" | head -5)"; return 1; }
}
t "make uninstall leaves nothing" uninstalls

destdir() {
    local S=$T/stage
    mk install PREFIX=/opt/arsim DESTDIR="$S" >"$T/make.log" 2>&1 || { echo "make install: $(tail -3 "$T/make.log")"; return 1; }
    [ -x "$S/opt/arsim/bin/arsim" ] && [ -f "$S/opt/arsim/share/arsim/models/vgg16.yaml" ] || { echo "not staged"; return 1; }
    "$S/opt/arsim/bin/arsim" --help | grep -q ' /opt/arsim/share/arsim,' || { echo "the data directory is not /opt/arsim/share/arsim"; return 1; }
    mk uninstall PREFIX=/opt/arsim DESTDIR="$S" >"$T/make.log" 2>&1 || { echo "make uninstall: $(tail -3 "$T/make.log")"; return 1; }
    [ -d "$S" ] && [ -z "$(ls -A "$S")" ] || { echo "left: $(find "$S" | head -5)"; return 1; }
}
t "make install/uninstall DESTDIR=\$T/stage PREFIX=/opt/arsim" destdir
