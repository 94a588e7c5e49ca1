#!/bin/sh
# docs/passes.md is generated from the passes' descriptors and header
# comments (scripts/gen_pass_docs.sh): it must be what the script writes
# now, so a pass whose header changed brings its documentation along.
cd "$(dirname "$0")/.." || exit 1
BUILD=${PASSHOST_BUILD:-build}
T=$(mktemp -d "${TMPDIR:-/tmp}/ph_pass_docs.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
scripts/gen_pass_docs.sh "$BUILD" "$T/passes.md" >/dev/null || { echo "FAIL: scripts/gen_pass_docs.sh failed"; exit 1; }
if ! diff -u docs/passes.md "$T/passes.md" >"$T/diff"; then
    head -n 40 "$T/diff"
    echo "FAIL: docs/passes.md is not what scripts/gen_pass_docs.sh writes: run it and commit the result"
    exit 1
fi
echo "docs/passes.md is up to date ($(grep -c '^## ' docs/passes.md) passes)"
