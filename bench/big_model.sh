#!/bin/sh
# bench/big_model.sh - a model over protobuf's 2 GB limit, through passhost.
#
#   bench/big_model.sh
#
# 1. bench/gen_big_model writes a MatMul/Add/Relu chain of BIG_MB MiB of float
#    weights (default 2560: 2.5 GiB).  It saves with ph_model_save, which puts
#    the weights of a model this large into one external-data file:
#    big.onnx + big.onnx.data.
# 2. passhost round-trips it twice: with no pass (load and save only) and with
#    the default stages.  Each prints wall time and peak RSS (/usr/bin/time)
#    against the size of the files read.
# 3. python3-onnx loads each output with its external data, runs the checker on
#    the path, and compares every initializer with the input's, byte for byte
#    (the no-pass round trip must match all of them).
# 4. ONNX Runtime (onnxruntime-node, scripts/ort_check.js) runs the input and
#    the default-stages output on the same random input when there is memory
#    for both (BIG_ORT=0 skips it).
#
# Environment:
#   BUILD=build     the build tree holding bin/passhost and lib/libpasshost.so
#   BIG_MB=2560     weights, MiB
#   BIG_DIR=DIR     where the models go (default: a new temporary folder on the
#                   disk of /var/tmp, removed at the end; needs ~4x BIG_MB)
#   BIG_ORT=1       0: skip ONNX Runtime
#
# Prints figures.  Exits non-zero only when a step fails: a program crashes,
# an output does not load, a tensor differs, or ORT finds a mismatch.
set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
BUILD=${BUILD:-build}
MB=${BIG_MB:-2560}
ORT=${BIG_ORT:-1}
CC=${CC:-cc}
PY=/usr/bin/python3
TIME=/usr/bin/time
failed=0

if [ -n "${BIG_DIR:-}" ]; then
    DIR=$BIG_DIR
    mkdir -p "$DIR" || exit 1
else
    DIR=$(mktemp -d /var/tmp/passhost-big.XXXXXX) || exit 1
    trap 'rm -rf "$DIR"' EXIT
    trap 'exit 130' INT TERM
fi

fail() {
    echo "big_model: FAILED: $*" >&2
    failed=1
}

[ -x "$TIME" ] || { echo "big_model: needs /usr/bin/time (Debian package time)" >&2; exit 1; }
if [ ! -x "$BUILD/bin/passhost" ]; then
    make --no-print-directory BUILD="$BUILD" all >/dev/null || { echo "big_model: cannot build passhost" >&2; exit 1; }
fi
mkdir -p "$BUILD/bench"
LIBDIR=$(cd "$BUILD/lib" && pwd)
$CC -std=c11 -D_GNU_SOURCE -O2 -g -Isdk/include bench/gen_big_model.c -o "$BUILD/bench/gen_big_model" \
    -L"$LIBDIR" -lpasshost -Wl,-rpath,"$LIBDIR" || { echo "big_model: cannot build gen_big_model" >&2; exit 1; }

mib() { echo $(( $1 / 1048576 )); }
size_of() { stat -c %s "$1" 2>/dev/null || echo 0; }

# run LABEL CMD...: time and peak RSS of CMD, one line
run() {
    label=$1
    shift
    if ! $TIME -f '%e %M' -o "$DIR/time.txt" "$@" >"$DIR/run.out" 2>"$DIR/run.err"; then
        cat "$DIR/run.err" >&2
        fail "$label"
        return 1
    fi
    set -- $(tail -n 1 "$DIR/time.txt")
    printf '  %-28s %8.1f s   peak RSS %6d MiB\n' "$label" "$1" $(( $2 / 1024 ))
    RSS_KB=$2
}

echo "big_model: $MB MiB of weights in $DIR"
run "generate (gen_big_model)" "$BUILD/bench/gen_big_model" weights "$DIR/big.onnx" "$MB" || exit 1
IN_MODEL=$(size_of "$DIR/big.onnx")
IN_DATA=$(size_of "$DIR/big.onnx.data")
[ "$IN_DATA" -gt 0 ] || fail "the generated model has no external-data file"
IN_TOTAL=$((IN_MODEL + IN_DATA))
echo "  input: big.onnx $IN_MODEL bytes + big.onnx.data $(mib "$IN_DATA") MiB"

NOPASS="--set optimize.no_integral=true --set adapt.no_integral=true"
# shellcheck disable=SC2086
if run "passhost, no pass" "$BUILD/bin/passhost" -q -i "$DIR/big.onnx" -o "$DIR/same.onnx" $NOPASS; then
    echo "    peak RSS / input size: $(awk "BEGIN { printf \"%.2f\", $RSS_KB * 1024 / $IN_TOTAL }")"
    echo "    output: same.onnx $(size_of "$DIR/same.onnx") bytes + same.onnx.data $(mib "$(size_of "$DIR/same.onnx.data")") MiB"
fi
if run "passhost, default stages" "$BUILD/bin/passhost" -q -i "$DIR/big.onnx" -o "$DIR/opt.onnx"; then
    echo "    peak RSS / input size: $(awk "BEGIN { printf \"%.2f\", $RSS_KB * 1024 / $IN_TOTAL }")"
    echo "    output: opt.onnx $(size_of "$DIR/opt.onnx") bytes + opt.onnx.data $(mib "$(size_of "$DIR/opt.onnx.data")") MiB"
fi

# python3-onnx: load with external data, check, compare the tensors
if $PY -c 'import onnx' 2>/dev/null; then
    for out in same opt; do
        [ -f "$DIR/$out.onnx" ] || continue
        if ! $PY - "$DIR/big.onnx" "$DIR/$out.onnx" "$out" <<'EOF'
import sys, time
import onnx
from onnx import numpy_helper
src, out, which = sys.argv[1:4]
t0 = time.time()
onnx.checker.check_model(out)  # by path: models over 2 GB
a = onnx.load(src)             # with external data
b = onnx.load(out)
want = {t.name: numpy_helper.to_array(t) for t in a.graph.initializer}
same = differ = 0
for t in b.graph.initializer:
    got = numpy_helper.to_array(t)
    w = want.get(t.name)
    if w is not None and w.shape == got.shape and w.dtype == got.dtype and w.tobytes() == got.tobytes():
        same += 1
    else:
        differ += 1
print(f"  python onnx {onnx.__version__}: {out.rsplit('/', 1)[-1]} loads and checks; "
      f"{same} initializers identical to the input's, {differ} new or changed ({time.time() - t0:.1f} s)")
if which == "same" and (differ or same != len(want)):
    sys.exit(1)
EOF
        then
            fail "python onnx on $out.onnx"
        fi
    done
else
    echo "  python3-onnx not installed: output not checked in python"
fi

# ONNX Runtime: both models in memory at once
avail_kb=$(awk '/MemAvailable/ { print $2 }' /proc/meminfo)
need_kb=$(( IN_TOTAL / 1024 * 3 ))
if [ "$ORT" = 0 ]; then
    echo "  ONNX Runtime: skipped (BIG_ORT=0)"
elif [ ! -d node_modules/onnxruntime-node ] || ! command -v node >/dev/null; then
    echo "  ONNX Runtime: onnxruntime-node not installed (npm install --ignore-scripts)"
elif [ "$avail_kb" -lt "$need_kb" ]; then
    echo "  ONNX Runtime: skipped ($(( avail_kb / 1024 )) MiB available, needs about $(( need_kb / 1024 )))"
elif [ -f "$DIR/opt.onnx" ]; then
    if $TIME -f '%e %M' -o "$DIR/time.txt" node scripts/ort_check.js "$DIR/big.onnx" "$DIR/opt.onnx" --runs 1 -q \
        >"$DIR/ort.out" 2>&1; then
        set -- $(tail -n 1 "$DIR/time.txt")
        echo "  ONNX Runtime: $(tail -n 1 "$DIR/ort.out") ($1 s, peak RSS $(( $2 / 1024 )) MiB for both models)"
    else
        cat "$DIR/ort.out" >&2
        fail "ONNX Runtime"
    fi
fi
exit $failed
