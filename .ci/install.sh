#!/bin/sh
# install.sh — `make install` and `make uninstall`.
#
#   .ci/install.sh install DESTDIR PREFIX BUILD FILE...
#   .ci/install.sh uninstall DESTDIR PREFIX
#
# install puts BUILD/arsim in PREFIX/bin, BUILD/arsim.1 in
# PREFIX/share/man/man1, BUILD/arsim-scenario.5 in PREFIX/share/man/man5,
# BUILD/arsim.bash as
# PREFIX/share/bash-completion/completions/arsim and every FILE (a path in
# the checkout: models/vgg16.yaml) under PREFIX/share/arsim/, all below
# DESTDIR (empty, or a packager's staging directory). It records every
# file it wrote and every directory it created in the manifest
# PREFIX/share/arsim/.installed ("f PATH" / "d PATH", PATH without
# DESTDIR), so that uninstall removes exactly those and nothing more: a
# directory that holds anything else stays, with a note. Installing again
# first uninstalls what the manifest lists; an install that fails
# half-way removes what it wrote.
set -eu
mode=$1 dest=$2 prefix=$3
case $prefix in /*) ;; *) echo "make $mode: PREFIX '$prefix' is not an absolute path; expected PREFIX=/usr/local or such" >&2; exit 2 ;; esac
datadir=$prefix/share/arsim
manifest=$datadir/.installed

# uninstall LIST: removes what LIST (a copy of the manifest) names.
uninstall() {
    while read -r kind path; do
        case $kind in f) rm -f "$dest$path" ;; esac
    done <"$1"
    rm -f "$dest$manifest"
    # the directories, children (longer paths) before their parents
    sed -n 's/^d //p' "$1" | sort -r | while IFS= read -r path; do
        rmdir "$dest$path" 2>/dev/null || echo "make uninstall: kept $dest$path: it holds files arsim did not install" >&2
    done
}

# mkdirs DIR: creates DIR (below DESTDIR) and every missing parent, and
# records each one it created.
mkdirs() {
    d="" rest=${1#/}
    while [ -n "$rest" ]; do
        d="$d/${rest%%/*}"
        case $rest in */*) rest=${rest#*/} ;; *) rest="" ;; esac
        if [ ! -d "$dest$d" ]; then
            mkdir -p "$dest$d"
            echo "d $d" >>"$list"
        fi
    done
}

# put SRC DST MODE: installs one file and records it.
put() {
    mkdirs "$(dirname "$2")"
    install -m "$3" "$1" "$dest$2"
    echo "f $2" >>"$list"
}

list=$(mktemp)
done=""
# an install that fails half-way takes back what it wrote
trap 'if [ "$mode" = install ] && [ -z "$done" ]; then uninstall "$list"; fi; rm -f "$list"' EXIT
if [ "$mode" = uninstall ]; then
    if [ ! -f "$dest$manifest" ]; then
        echo "make uninstall: $dest$manifest: no manifest; expected an arsim installed by make install with this PREFIX and DESTDIR" >&2
        exit 1
    fi
    cp "$dest$manifest" "$list"
    uninstall "$list"
    echo "removed arsim from $dest$prefix"
    exit 0
fi
build=$4
shift 4
if [ -f "$dest$manifest" ]; then
    cp "$dest$manifest" "$list"
    uninstall "$list"
    : >"$list"
fi
put "$build/arsim" "$prefix/bin/arsim" 755
put "$build/arsim.1" "$prefix/share/man/man1/arsim.1" 644
put "$build/arsim-scenario.5" "$prefix/share/man/man5/arsim-scenario.5" 644
put "$build/arsim.bash" "$prefix/share/bash-completion/completions/arsim" 644
for f in "$@"; do
    put "$f" "$datadir/$f" 644
done
install -m 644 "$list" "$dest$manifest"
done=yes
echo "installed arsim in $dest$prefix (bin/arsim, share/arsim, share/man/man1/arsim.1, share/man/man5/arsim-scenario.5, bash completion);" \
     "make uninstall PREFIX=$prefix${dest:+ DESTDIR=$dest} removes it"
