#!/bin/sh
# Install the Debian packages passhost needs to build and test.
#   scripts/deps.sh          install whatever is missing (needs root or sudo)
#   scripts/deps.sh --check  exit 0 if everything is installed, 1 otherwise
#   scripts/deps.sh --fuzz   also clang and libFuzzer, for `make fuzz` (with or without --check)
set -eu
# python3-jsonschema: tests/report_json.sh checks --report-json against docs/report.schema.json
# libonnx-dev + libprotobuf-dev (its C++ headers): the operator schemas are generated at build
# time from libonnx's registry (sdk/src/schema/gen_schemas.cc, built with build-essential's g++)
# libonnx-testdata: the ONNX conformance suite of `make test-conformance` and the
# test_data_set folders of the --verify-data tests
PKGS="build-essential pkg-config protobuf-c-compiler libprotobuf-c-dev libinih-dev check libonnx-dev libprotobuf-dev libtcmalloc-minimal4 python3-jsonschema libonnx-testdata"
FUZZ_PKGS="clang libclang-rt-14-dev"
check=0
for arg in "$@"; do
    case $arg in
    --check) check=1 ;;
    --fuzz) PKGS="$PKGS $FUZZ_PKGS" ;;
    *) echo "usage: scripts/deps.sh [--check] [--fuzz]" >&2; exit 2 ;;
    esac
done
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
if [ "$check" = 1 ]; then
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
