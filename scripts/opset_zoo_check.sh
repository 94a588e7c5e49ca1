#!/bin/sh
# scripts/opset_zoo_check.sh - opset conversion of real models checked in
# ONNX Runtime.
#
#   scripts/opset_zoo_check.sh BUILD MODELS_DIR
#
# For every MODELS_DIR/*.onnx: convert_opset alone (no other pass) converts
# the model down to 11 (the opset11 profile's range) and up to 17, and the
# opset-11 result back up to 17; scripts/ort_check.js compares each result
# with the original in ONNX Runtime (same seeded inputs, |diff| <= 1e-5 +
# 1e-4 |want|).  Prints one line per model with the max abs difference of
# each; exits 1 when a conversion fails or a result differs.
set -u
BUILD=${1:?usage: opset_zoo_check.sh BUILD MODELS_DIR}
DIR=${2:?usage: opset_zoo_check.sh BUILD MODELS_DIR}
HERE=$(cd "$(dirname "$0")" && pwd)
PH="$BUILD/bin/passhost"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
status=0

# convert IN OUT RANGE: 0 or the failure printed
convert() {
  "$PH" -q -i "$1" -o "$2" --passes="adapt(convert_opset<opset=$3>)" >"$TMP/log" 2>&1 ||
    { sed 's/^/    /' "$TMP/log"; return 1; }
}
# check ORIG OUT: prints the max abs difference, or FAIL
check() {
  out=$(node "$HERE/ort_check.js" "$1" "$2" -q 2>&1)
  rc=$?
  diff=$(printf '%s\n' "$out" | sed -n 's/.*max abs \([^,]*\),.*/\1/p')
  [ $rc -eq 0 ] && printf '%s' "${diff:-?}" || { printf 'FAIL'; printf '%s\n' "$out" >>"$TMP/why"; return 1; }
}

printf '%-20s %-8s %-12s %-12s %-12s\n' model opset "down to 11" "up to 17" "11 then 17"
for m in "$DIR"/*.onnx; do
  name=$(basename "$m" .onnx)
  from=$(/usr/bin/python3 -c "import onnx,sys;print([o.version for o in onnx.load('$m',load_external_data=False).opset_import if o.domain in ('','ai.onnx')][0])" 2>/dev/null || echo '?')
  d11=FAIL u17=FAIL r17=FAIL
  if convert "$m" "$TMP/$name.11.onnx" 7..11; then d11=$(check "$m" "$TMP/$name.11.onnx") || status=1; else status=1; fi
  if convert "$m" "$TMP/$name.17.onnx" 17..; then u17=$(check "$m" "$TMP/$name.17.onnx") || status=1; else status=1; fi
  if [ -f "$TMP/$name.11.onnx" ] && convert "$TMP/$name.11.onnx" "$TMP/$name.r17.onnx" 17..; then
    r17=$(check "$m" "$TMP/$name.r17.onnx") || status=1
  else status=1; fi
  printf '%-20s %-8s %-12s %-12s %-12s\n' "$name" "$from" "$d11" "$u17" "$r17"
done
[ -f "$TMP/why" ] && cat "$TMP/why"
[ $status -eq 0 ] && echo "opset_zoo_check: every conversion equal in ONNX Runtime" || echo "opset_zoo_check: FAILED"
exit $status
