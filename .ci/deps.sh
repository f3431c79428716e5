#!/bin/sh
# Installs the Debian packages named as arguments that are missing.
# As root: apt-get update (once, the lists may be empty) and apt-get install.
# Otherwise: prints the exact command and fails.
missing=""
for p in "$@"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "arsim: missing packages:$missing" >&2
  echo "run as root:  apt-get update && apt-get install -y$missing" >&2
  exit 1
fi
echo "arsim: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >&2 && apt-get install -y -q --no-install-recommends $missing >&2
