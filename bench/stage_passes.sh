#!/bin/sh
# The optimize stage on one model with the default passes, and with twice
# the rule passes: every pattern pass compiled a second time under the name
# NAME_2 (bench/pass_copy.h), which the plan puts right after the original.
#
#   bench/stage_passes.sh MODEL RUNS BUILD[:REV] [BUILD[:REV] ...]
#
# For each BUILD tree (bin/passhost, lib/, plugins/) a copy with the extra
# plugins is made in a temporary folder; the copies are compiled from the
# plugin sources of git revision REV (default: the work tree), against that
# revision's headers, so an older build gets copies it can load.  Then the
# runs alternate between the builds, default and twice, RUNS times (a
# shared machine drifts over minutes: only alternated runs compare), and
# each line prints the build, the plan, the stage's passes and its time
# (passhost's report line "stage optimize: N rounds, T ms").  Prints
# figures only.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
MODEL=$1
RUNS=$2
shift 2
CC=${CC:-cc}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/stage_passes.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
k=0
builds=""
for spec in "$@"; do
    k=$((k + 1))
    build=${spec%%:*}
    rev=
    [ "$build" != "$spec" ] && rev=${spec#*:}
    src=$TMP/src$k
    mkdir -p "$src"
    if [ -n "$rev" ]; then
        git -C "$ROOT" archive "$rev" plugins sdk/include | tar -x -C "$src" || exit 1
    else
        cp -r "$ROOT/plugins" "$ROOT/sdk" "$src"/ || exit 1
    fi
    twice=$TMP/twice$k
    mkdir -p "$twice"
    cp -r "$build/bin" "$build/lib" "$build/plugins" "$twice"/ || exit 1
    n=0
    for d in "$src"/plugins/*/; do
        name=$(basename "$d")
        grep -Eq '\.rules *= *[a-z_]' "$d"*.c && ! grep -q '\.rules *= *NULL' "$d"*.c || continue
        $CC -std=c11 -D_GNU_SOURCE -O2 -fPIC -shared -w -I"$src/sdk/include" \
            -include "$ROOT/bench/pass_copy.h" -DPASS_COPY_NAME="\"${name}_2\"" \
            -o "$twice/plugins/${name}_2.so" "$d"*.c -L"$build/lib" -lpasshost -lm \
            -Wl,-rpath,"$twice/lib" || exit 1
        n=$((n + 1))
    done
    echo "build $k: $build${rev:+ (passes of $rev)}: $n pattern passes copied"
    builds="$builds $k"
done
run() { # tree label
    out=$(/usr/bin/time -f 'cpu %U %S' "$1/bin/passhost" -i "$MODEL" -o "$TMP/out.onnx" 2>&1)
    stage=$(echo "$out" | grep '^stage optimize' | sed 's/.*rounds, //; s/,.*//')
    cpu=$(echo "$out" | grep '^cpu ' | awk '{printf "%.2f", $2 + $3}')
    echo "$2: stage $stage, whole run $cpu s CPU"
}
i=0
while [ $i -lt "$RUNS" ]; do
    for k in $builds; do
        b=$(echo "$@" | tr ' ' '\n' | sed -n "${k}p")
        run "${b%%:*}" "build $k default"
        run "$TMP/twice$k" "build $k twice  "
    done
    i=$((i + 1))
done
