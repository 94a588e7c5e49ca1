#!/bin/sh
# --verify-data on .npy files written by NumPy (tests/verify_data.py; the
# model is made with python3-onnx).
cd "$(dirname "$0")/.." || exit 1
exec /usr/bin/python3 tests/verify_data.py "${PASSHOST_BUILD:-build}"
