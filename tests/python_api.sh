#!/bin/sh
# The Python module (python/passhost) against the program: identical bytes
# for every way a model goes in and out, options and errors
# (tests/python_api.py).  Needs Debian's python3 with python3-onnx (skipped
# with a message without it).  ctypes loads libpasshost-pipeline.so into
# python3, which has no sanitizer runtime, so a sanitized tree (make test's
# build/san) is compared through the plain tree PASSHOST_PLAIN_BUILD
# (default build, which `make test` builds too): its library and its
# passhost program.
cd "$(dirname "$0")/.." || exit 1
if ! /usr/bin/python3 -c 'import onnx' 2>/dev/null; then
    echo "python_api: skipped (python3-onnx is not installed: apt-get install python3-onnx)"
    exit 0
fi
BUILD=${PASSHOST_BUILD:-build}
lib=$BUILD/lib/libpasshost-pipeline.so
if [ -f "$lib" ] && nm -D "$lib" | grep -q '__asan_\|__ubsan_'; then
    BUILD=${PASSHOST_PLAIN_BUILD:-build}
    lib=$BUILD/lib/libpasshost-pipeline.so
    echo "python_api: $PASSHOST_BUILD is sanitized; using the plain tree $BUILD"
fi
if [ ! -f "$lib" ] || [ ! -x "$BUILD/bin/passhost" ]; then
    echo "python_api: no $lib or $BUILD/bin/passhost: run make BUILD=$BUILD first"
    exit 1
fi
PYTHONDONTWRITEBYTECODE=1 PASSHOST_LIB=$lib PYTHONPATH=python exec /usr/bin/python3 tests/python_api.py "$BUILD"
