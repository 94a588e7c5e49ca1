#!/bin/sh
# scripts/pass_test_counts.sh [REV] - the cases and lines of each pass's tests
# (tests/test_pass_NAME.c), in the work tree or at git revision REV.
# A case is a START_TEST block; with REV and the work tree both given
# (scripts/pass_test_counts.sh REV --compare) it prints both side by side and
# fails when a pass has fewer cases than at REV.
set -eu
cd "$(dirname "$0")/.."
count() { # REV-or-empty FILE -> "cases lines"
    if [ -n "$1" ]; then
        git show "$1:$2" 2>/dev/null || true
    else
        cat "$2" 2>/dev/null || true
    fi | awk '/^START_TEST\(/ { c++ } END { printf "%d %d\n", c, NR }'
}
files() {
    if [ -n "$1" ]; then
        git ls-tree --name-only "$1" tests/ | grep '^tests/test_pass_.*\.c$'
    else
        ls tests/test_pass_*.c
    fi
}
rev=${1:-}
if [ "${2:-}" = "--compare" ]; then
    status=0
    tc0=0 tl0=0 tc1=0 tl1=0
    printf '%-44s %12s %12s\n' "pass" "cases before" "cases now"
    for f in $( (files "$rev"; files "") | sort -u); do
        set -- $(count "$rev" "$f") $(count "" "$f")
        name=${f#tests/test_pass_}
        name=${name%.c}
        mark=""
        [ "$3" -lt "$1" ] && mark="  FEWER" && status=1
        printf '%-44s %6d %5d l %6d %5d l%s\n' "$name" "$1" "$2" "$3" "$4" "$mark"
        tc0=$((tc0 + $1)) tl0=$((tl0 + $2)) tc1=$((tc1 + $3)) tl1=$((tl1 + $4))
    done
    printf '%-44s %6d %5d l %6d %5d l\n' "total" "$tc0" "$tl0" "$tc1" "$tl1"
    exit $status
fi
tc=0 tl=0
for f in $(files "$rev"); do
    set -- $(count "$rev" "$f")
    name=${f#tests/test_pass_}
    printf '%-44s %5d cases %6d lines\n' "${name%.c}" "$1" "$2"
    tc=$((tc + $1)) tl=$((tl + $2))
done
printf '%-44s %5d cases %6d lines\n' "total" "$tc" "$tl"
