#!/bin/sh
# The full allocation-failure sweep: every allocation n of a run on each
# bundled model fails in turn (tests/test_alloc_failures.c; `make test` tries
# one n per call site).  Prints, per model and mode, the allocation points, how
# many failures ended in a clean error, how many were absorbed, and any
# problem (crash, leak, missing message, file left behind, wrong model).
#
#   scripts/alloc_sweep.sh [BUILD]        BUILD: a sanitized tree (default build/san)
#   PH_ALLOC_MODELS=/abs/a.onnx:/abs/b.onnx scripts/alloc_sweep.sh   other models
#
# Two modes, as SQLite's tests do: transient (only allocation n fails) and
# persistent (n and every later one fail).  A few minutes per mode.
set -u
BUILD=${1:-build/san}
cd "$(dirname "$0")/.."
make --no-print-directory BUILD="$BUILD" SAN=1 all "$BUILD/tests/test_alloc_failures" >/dev/null || exit 1
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export CK_FORK=yes PH_ALLOC_STRIDE=1
status=0
for mode in 0 1; do
    log=$BUILD/tests/alloc_sweep.$mode.log
    start=$(date +%s)
    PH_ALLOC_PERSISTENT=$mode "$BUILD/tests/test_alloc_failures" >"$log" 2>&1 || status=1
    end=$(date +%s)
    grep -E 'allocation points' "$log"
    grep -E 'allocation [0-9]+.*(leaked|without a message|left a file|is wrong)|died at' "$log" | head -n 20
    echo "  ($((end - start)) s; log $log)"
done
exit $status
