#!/bin/sh
# Outputs of two builds on the same models, compared: each model goes
# through the default stages of OLD and of NEW (and again with
# adapt.target=ort); the two outputs are compared with cmp, and when they
# differ, again with every node name and every generated name (values
# between nodes, new initializers) numbered in order of appearance
# (bench/same_but_names.py), which tells a renaming from a change.
#   bench/same_outputs.sh OLD_BUILD NEW_BUILD MODEL...
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OLD=$1
NEW=$2
shift 2
TMP=$(mktemp -d "${TMPDIR:-/tmp}/same_outputs.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
status=0
for m in "$@"; do
    b=$(basename "$m" .onnx)
    for t in default ort; do
        set --
        [ $t = ort ] && set -- --set adapt.target=ort
        "$OLD/bin/passhost" -i "$m" -o "$TMP/old.onnx" -q "$@" >/dev/null 2>&1 || { echo "$b $t: OLD failed"; status=1; continue; }
        "$NEW/bin/passhost" -i "$m" -o "$TMP/new.onnx" -q "$@" >/dev/null 2>&1 || { echo "$b $t: NEW failed"; status=1; continue; }
        if cmp -s "$TMP/old.onnx" "$TMP/new.onnx"; then
            echo "$b $t: byte-identical"
        elif /usr/bin/python3 "$ROOT/bench/same_but_names.py" "$TMP/old.onnx" "$TMP/new.onnx"; then
            echo "$b $t: identical but for node and generated names"
        else
            echo "$b $t: DIFFERENT"
            status=1
        fi
    done
done
exit $status
