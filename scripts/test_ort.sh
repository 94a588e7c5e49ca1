#!/bin/sh
# Cross-check passhost's rewrites of the bundled models with ONNX Runtime.
#
#   scripts/test_ort.sh [BUILD]        (make test-ort: after make all, BUILD=build)
#
# For every models/*.onnx, the models of scripts/gen_everyday_models.py, and
# the torch exports of scripts/gen_torch_models.py
# (when python3-torch is installed: torchvision ResNet-18 and MobileNetV2 with
# BatchNormalization kept, a BERT-style encoder at opsets 17 and 13, a small
# CNN with every Conv activation at opsets 13 and 10, an MLP with every Gemm
# activation and a tanh GELU):
#   1. passhost -i M -o OUT with the default stages;
#   2. once more with every pass of this build that is exact or fp and off by
#      default switched on (--set optimize.pass_on=... / adapt.pass_on=...,
#      found with passhost --list-passes; approx passes are skipped);
#   3. once more with the ONNX Runtime target profile, configs/targets/ort.ini
#      (adapt.target=ort: the com.microsoft fusions), printing the adapt
#      stage's per-pass report so one sees which fusions fired, and with
#      --verify: passhost's own evaluator runs the com.microsoft ops of the
#      result against the original (so its contrib kernels and ONNX
#      Runtime's are both checked against the original model);
#   4. once more with the generic NPU profile, configs/targets/npu.ini,
#      its adapt stage at level approx (--target npu --set
#      adapt.level=approx: int64 narrowed to int32 by type_cast_narrow, pads
#      made explicit, operands brought to one rank...);
# and for each rewrite scripts/ort_check.js compares the original with the
# rewritten model in ONNX Runtime (optimizations off, 1 thread): 4 seeded runs,
# symbolic dims 1 in runs 0 and 2 and 3 in runs 1 and 3 (a seq of 1 would
# hide a broken attention), atol 1e-5, rtol 1e-4.
#
# Installs onnxruntime-node (npm install --ignore-scripts) when it is missing.
# Outputs go to BUILD/test-ort/.  Ends with "N passed, N failed"; exits 1 if
# anything failed, 2 if it cannot run at all (no node/npm, no passhost).
#
# Environment: ORT_CHECK_ARGS adds options to every ort_check.js call (e.g.
# "--runs 8"); TEST_ORT_MODELS adds models to check (space-separated paths, e.g.
# build/bench/resnet50.onnx from scripts/bench_eval.sh); PASSHOST_PLUGIN_PATH
# is honoured by passhost as usual.
set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 2
BUILD=${1:-build}
PASSHOST=$BUILD/bin/passhost
OUT=$BUILD/test-ort

die() {
    echo "test_ort: $*" >&2
    exit 2
}

[ -x "$PASSHOST" ] || die "$PASSHOST not found: build first (make all)"
command -v node >/dev/null 2>&1 || die "node not found: install Node.js (Debian: apt-get install nodejs npm)"

if [ ! -d node_modules/onnxruntime-node ]; then
    command -v npm >/dev/null 2>&1 ||
        die "onnxruntime-node is not installed and npm is not found: install npm (Debian: apt-get install npm), then run npm install --ignore-scripts in $ROOT"
    echo "test_ort: installing onnxruntime-node (npm install --ignore-scripts)"
    log=$(npm install --ignore-scripts --no-audit --no-fund --loglevel=error 2>&1) || {
        printf '%s\n' "$log" >&2
        die "npm install --ignore-scripts failed (above)"
    }
fi
node -e "require('onnxruntime-node')" 2>/dev/null ||
    die "onnxruntime-node does not load: $(node -e "require('onnxruntime-node')" 2>&1 | grep -m1 -i error)"

# Passes that are exact or fp, off by default: NAME STAGE per line.
list=$("$PASSHOST" --list-passes 2>&1) || {
    printf '%s\n' "$list" >&2
    die "passhost --list-passes failed"
}
extra=$(printf '%s\n' "$list" | awk 'NR > 1 && /^[^ ]/ && NF >= 6 && $3 == "off" && ($4 == "exact" || $4 == "fp") { print $1, $2 }')
approx=$(printf '%s\n' "$list" | awk 'NR > 1 && /^[^ ]/ && NF >= 6 && $3 == "off" && $4 == "approx" { printf "%s ", $1 }')
opt_on=$(printf '%s\n' "$extra" | awk '$2 ~ /optimize/ { printf "%s%s", sep, $1; sep = "," }')
adapt_on=$(printf '%s\n' "$extra" | awk '$2 == "adapt" { printf "%s%s", sep, $1; sep = "," }')

mkdir -p "$OUT" || die "cannot create $OUT"
passed=0
failed=0
failures=

fail() {
    failed=$((failed + 1))
    failures="$failures
  $1"
}

# check MODEL TAG [passhost args...]  (tag "ort": print the adapt report)
check() {
    model=$1 tag=$2
    shift 2
    name=$(basename "$model" .onnx)
    out=$OUT/$name.$tag.onnx
    rm -f "$out"
    echo "== $name ($tag): passhost -i $model -o $out $*"
    if [ "$tag" = ort ]; then
        # a model whose symbolic dims cannot be 1 for the evaluator gives
        # real sizes (MODEL.verifyargs beside it; its .ortargs match them)
        vargs=$(cat "${model%.onnx}.verifyargs" 2>/dev/null)
        # shellcheck disable=SC2086  # vargs is a list of options
        "$PASSHOST" -v -i "$model" -o "$out" "$@" --verify $vargs >"$OUT/$name.$tag.report" 2>&1
        rc=$?
        sed -n '/^stage adapt/,/^  total/p; /^verify:/p' "$OUT/$name.$tag.report"
        [ $rc -eq 0 ] || cat "$OUT/$name.$tag.report"
    else
        "$PASSHOST" -q -i "$model" -o "$out" "$@"
        rc=$?
    fi
    if [ $rc -ne 0 ]; then
        echo "test_ort: FAILED: passhost exited $rc on $model ($tag)"
        fail "$name ($tag): passhost exited $rc"
        return
    fi
    # a model may need inputs of its own (MODEL.ortargs beside it: e.g. a
    # fixed audio length and a batch of 1 for the VAD-like model)
    own=$(cat "${model%.onnx}.ortargs" 2>/dev/null)
    # shellcheck disable=SC2086  # ORT_CHECK_ARGS and own are lists of options
    node scripts/ort_check.js "$model" "$out" --runs 4 --symbolic 1,3 $own ${ORT_CHECK_ARGS:-}
    rc=$?
    if [ $rc -eq 0 ]; then
        passed=$((passed + 1))
    else
        fail "$name ($tag): ort_check exited $rc"
    fi
}

models=$(ls models/*.onnx 2>/dev/null)
[ -n "$models" ] || die "no models/*.onnx"
# torch exports (fusion passes on real exports), when Debian's python3-torch
# is installed: torchvision CNNs with BatchNormalization kept, a BERT-style
# encoder and a small CNN for the target-ort fusions
if /usr/bin/python3 scripts/gen_torch_models.py "$OUT/torch" 2>"$OUT/torch.log"; then
    models="$models $(ls "$OUT"/torch/*.onnx)"
else
    echo "test_ort: no torch models ($(tail -n 1 "$OUT/torch.log")): bundled models only"
fi
# the shapes of real exports passhost met (scripts/gen_everyday_models.py):
# If nodes with constant conditions, an out-of-order fp16 model, a Reshape
# fed by a Shape chain, an If in a Loop body, int64 index arithmetic
if /usr/bin/python3 scripts/gen_everyday_models.py "$OUT/everyday" >"$OUT/everyday.log" 2>&1; then
    printf '%s\n' "--shape input:1x512 --symbolic 1" >"$OUT/everyday/vad_like.ortargs"
    printf '%s\n' "--input-shape input:1x512" >"$OUT/everyday/vad_like.verifyargs"
    printf '%s\n' "--shape x:1x3x16x16 --symbolic 1" >"$OUT/everyday/reshape_chain.ortargs"
    printf '%s\n' "--input-shape x:1x3x16x16" >"$OUT/everyday/reshape_chain.verifyargs"
    models="$models $(ls "$OUT"/everyday/*.onnx)"
else
    echo "test_ort: no everyday models ($(tail -n 1 "$OUT/everyday.log"))"
fi
for m in ${TEST_ORT_MODELS:-}; do
    [ -f "$m" ] || die "TEST_ORT_MODELS: $m not found"
    models="$models $m"
done
if [ -n "$opt_on$adapt_on" ]; then
    echo "test_ort: passes off by default, switched on in the second run: $(printf '%s\n' "$extra" | awk '{ printf "%s ", $1 }')"
else
    echo "test_ort: every exact/fp pass of this build is on by default: one run per model"
fi
[ -z "$approx" ] || echo "test_ort: skipped (approx): $approx"

for m in $models; do
    check "$m" default
    if [ -n "$opt_on$adapt_on" ]; then
        set --
        [ -z "$opt_on" ] || set -- "$@" --set "optimize.pass_on=$opt_on"
        [ -z "$adapt_on" ] || set -- "$@" --set "adapt.pass_on=$adapt_on"
        check "$m" all "$@"
    fi
    check "$m" ort configs/targets/ort.ini
    check "$m" npu --target npu --set adapt.level=approx
done

[ $failed -eq 0 ] || echo "test_ort: failed:$failures"
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
