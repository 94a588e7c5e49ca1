#!/bin/sh
# Benchmark passhost's evaluator against ONNX Runtime, single thread.
#
#   scripts/bench_eval.sh
#
# For each bundled model (models/*.onnx) and a ResNet-50 (generated into
# BUILD/bench/resnet50.onnx by bench/gen_resnet50.py with Debian's torch and
# torchvision, not committed), prints passhost's evaluator time (ph_eval_run,
# bench/eval_bench.c built -O2, best of N after a warm-up) beside ONNX
# Runtime's (bench/ort_time.js: onnxruntime-node, 1 thread, sequential,
# graph optimizations disabled; and, for context, 'all'), the ratio, and how
# far the evaluator's outputs are from ORT's on the same inputs.
#
# Environment:
#   BUILD=build              build tree with lib/libpasshost.so (an -O2 build,
#                            not the sanitized one)
#   BENCH_EVAL_RUNS=10       timed runs per model and runtime (best shown)
#   BENCH_EVAL_DIMS="batch=1 seq=16"  values of symbolic dims (others are 1)
#   BENCH_EVAL_RESNET=1      0 skips the ResNet-50
#
# Prints figures only; exits non-zero only when something cannot run (the
# evaluator refusing a model is reported in the table and makes the exit 1).
set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 2
BUILD=${BUILD:-build}
RUNS=${BENCH_EVAL_RUNS:-10}
DIMS=${BENCH_EVAL_DIMS:-batch=1 seq=16}
CC=${CC:-cc}
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
failed=0

die() {
    echo "bench_eval: $*" >&2
    exit 2
}

# ------------------------------------------------------------------ build
if [ ! -f "$BUILD/lib/libpasshost.so" ]; then
    make --no-print-directory BUILD="$BUILD" "$BUILD/lib/libpasshost.so" >/dev/null || die "cannot build libpasshost"
fi
if ldd "$BUILD/lib/libpasshost.so" 2>/dev/null | grep -q 'libasan'; then
    die "$BUILD/lib/libpasshost.so is a sanitized build: use an -O2 build (make all, BUILD=build)"
fi
mkdir -p "$BUILD/bench" || exit 2
LIBDIR=$(cd "$BUILD/lib" && pwd)
$CC -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Isdk/include bench/eval_bench.c -o "$BUILD/bench/eval_bench" \
    -L"$LIBDIR" -lpasshost -lm -Wl,-rpath,"$LIBDIR" || die "cannot build bench/eval_bench.c"

command -v node >/dev/null 2>&1 || die "node not found (Debian: apt-get install nodejs npm)"
if [ ! -d node_modules/onnxruntime-node ]; then
    command -v npm >/dev/null 2>&1 || die "onnxruntime-node is missing and npm is not found (apt-get install npm)"
    echo "bench_eval: installing onnxruntime-node (npm install --ignore-scripts)"
    npm install --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null || die "npm install failed"
fi

# ------------------------------------------------------------------ models
models=$(ls models/*.onnx)
RESNET=$BUILD/bench/resnet50.onnx
resnet_note=
if [ "${BENCH_EVAL_RESNET:-1}" != 0 ]; then
    if [ ! -f "$RESNET" ]; then
        echo "bench_eval: generating $RESNET (bench/gen_resnet50.py)"
        if origin=$("$PY" bench/gen_resnet50.py "$RESNET" 2>"$BUILD/bench/gen_resnet50.log"); then
            printf '%s\n' "$origin" >"$RESNET.origin"
        else
            rm -f "$RESNET"
            tail -3 "$BUILD/bench/gen_resnet50.log" >&2
            resnet_note="ResNet-50 skipped: cannot generate it (needs Debian's python3-torch; python3-torchvision optional)"
        fi
    fi
    [ -f "$RESNET" ] && models="$models $RESNET"
fi

dimargs=
for d in $DIMS; do dimargs="$dimargs --dim $d"; done

field() { # field NAME LINE
    printf '%s\n' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"
}

echo
echo "evaluator vs ONNX Runtime $(node -e "console.log(require('onnxruntime-node/package.json').version)" 2>/dev/null), 1 thread, best of $RUNS (symbolic dims: $DIMS, others 1)"
echo
echo "| model | nodes | passhost eval ms | ORT ms (opt disabled) | eval / ORT | ORT ms (opt all) | eval prepare ms | eval vs ORT max abs (rel) |"
echo "|---|---|---|---|---|---|---|---|"
notes=
for m in $models; do
    name=$(basename "$m" .onnx)
    dump=$BUILD/bench/eval-out/$name
    mkdir -p "$dump"
    # shellcheck disable=SC2086
    ev=$("$BUILD/bench/eval_bench" "$m" --runs "$RUNS" $dimargs --dump "$dump" 2>"$BUILD/bench/eval_bench.err")
    erc=$?
    # shellcheck disable=SC2086
    ort0=$(node bench/ort_time.js "$m" --runs "$RUNS" $dimargs --opt disabled ${ev:+--compare "$dump"}) || {
        echo "bench_eval: ORT failed on $m" >&2
        failed=1
    }
    # shellcheck disable=SC2086
    ort3=$(node bench/ort_time.js "$m" --runs "$RUNS" $dimargs --opt all) || failed=1
    o0=$(field best_ms "$ort0")
    o3=$(field best_ms "$ort3")
    if [ $erc -ne 0 ] || [ -z "$ev" ]; then
        failed=1
        why=$(cat "$BUILD/bench/eval_bench.err")
        echo "| $name | | **fails** | $o0 | | $o3 | | |"
        notes="$notes
$name: $why"
        continue
    fi
    e=$(field best_ms "$ev")
    ratio=$(awk -v a="$e" -v b="$o0" 'BEGIN { if (b > 0) printf "%.2f×", a / b }')
    echo "| $name | $(field nodes "$ev") | $e | $o0 | $ratio | $o3 | $(field prepare_ms "$ev") | $(field max_abs "$ort0") ($(field max_rel "$ort0")) |"
done
echo
[ -f "$RESNET.origin" ] && [ -f "$RESNET" ] && echo "resnet50: $(cat "$RESNET.origin"), opset 13, input 1x3x224x224, $(wc -c <"$RESNET") bytes"
[ -z "$resnet_note" ] || echo "$resnet_note"
[ -z "$notes" ] || printf 'evaluator failures:%s\n' "$notes"
exit $failed
