#!/bin/sh
# Inferred shapes agree with onnx.shape_inference on every bundled model
# (scripts/compare_onnx_shapes.py), where Debian's python3-onnx is installed.
cd "$(dirname "$0")/.." || exit 1
if ! /usr/bin/python3 -c 'import onnx' 2>/dev/null; then
    echo "onnx_shapes: python3-onnx is not installed: skipped"
    exit 0
fi
# a build without sanitizers: the comparison tool links libpasshost
exec /usr/bin/python3 scripts/compare_onnx_shapes.py --build build
