#!/bin/bash
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@" # run_tests.sh runs tests with sh
# completion/passhost.bash (installed for bash-completion): the options of
# `passhost --help`, pass names after --passes (also after a comma), --skip,
# --trace-rule and --check-rules, the levels after --level, files elsewhere.
# Runs under bash with the built passhost first on PATH.
cd "$(dirname "$0")/.." || exit 1
BUILD=${PASSHOST_BUILD:-build}
PATH="$(pwd)/$BUILD/bin:$PATH"
# shellcheck disable=SC1091
. completion/passhost.bash
fail() { echo "completion: FAIL: $*"; exit 1; }

# complete WORD...: the words of a line, the last one being completed
complete_line() {
    COMP_WORDS=("$@")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMPREPLY=()
    _passhost
    printf '%s\n' "${COMPREPLY[@]}"
}

out=$(complete_line passhost --verif)
grep -qx -- '--verify' <<<"$out" && grep -qx -- '--verify-each' <<<"$out" ||
    fail "--verif: $out"
out=$(complete_line passhost --tra)
grep -qx -- '--trace-rule' <<<"$out" || fail "--tra: $out"
out=$(complete_line passhost -O)
grep -qx -- '-O0' <<<"$out" || fail "-O: $out"
out=$(complete_line passhost --passes eliminate_ide)
[ "$out" = eliminate_identity ] || fail "--passes eliminate_ide: $out"
out=$(complete_line passhost --passes=fuse_conv_bn,eliminate_nop_p)
grep -qx -- '--passes=fuse_conv_bn,eliminate_nop_pad' <<<"$out" &&
    grep -qx -- '--passes=fuse_conv_bn,eliminate_nop_pool' <<<"$out" || fail "--passes=a,b: $out"
out=$(complete_line passhost --skip const)
grep -qx constant_folding <<<"$out" && grep -qx constant_to_initializer <<<"$out" || fail "--skip: $out"
out=$(complete_line passhost --trace-rule fuse_conv_)
grep -qx fuse_conv_bn <<<"$out" || fail "--trace-rule: $out"
out=$(complete_line passhost --check-rules fuse_gel)
[ "$out" = fuse_gelu ] || fail "--check-rules fuse_gel: $out"
out=$(complete_line passhost --check-rules)
grep -qx -- '--check-rules' <<<"$out" || fail "--check-rules: $out"
out=$(complete_line passhost --level e)
[ "$out" = exact ] || fail "--level e: $out"
out=$(complete_line passhost --level=a)
[ "$out" = --level=approx ] || fail "--level=a: $out"
out=$(complete_line passhost models/cnn_sm)
[ "$out" = models/cnn_small.onnx ] || fail "a model file: $out"
echo "completion: ok"
