#!/bin/sh
# Install the Debian packages passhost needs to build and test.
#   scripts/deps.sh          install whatever is missing (needs root or sudo)
#   scripts/deps.sh --check  exit 0 if everything is installed, 1 otherwise
set -eu
PKGS="build-essential pkg-config protobuf-c-compiler libprotobuf-c-dev libinih-dev check libonnx-dev libtcmalloc-minimal4"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
if [ "${1:-}" = "--check" ]; then
    [ -z "$missing" ] && exit 0
    echo "missing packages:$missing" >&2
    exit 1
fi
[ -z "$missing" ] && exit 0
echo "installing:$missing" >&2
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing
