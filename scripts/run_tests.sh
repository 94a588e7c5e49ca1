#!/bin/sh
# Run every test program of a build tree and print one closing line.
#   scripts/run_tests.sh build/san
# Each Check program runs its cases in forked children (CK_FORK=yes) under the
# sanitizers the tree was built with; shell tests in tests/*.sh run with
# PASSHOST_BUILD pointing at the tree.
set -u
BUILD=${1:-build/san}
export CK_FORK=yes
export CK_DEFAULT_TIMEOUT=${CK_DEFAULT_TIMEOUT:-120}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export PASSHOST_BUILD="$BUILD"
passed=0
failed=0
failed_names=""
# Add a Check summary line ("N%: Checks: C, Failures: F, Errors: E") to the
# counts; a program that crashed before printing one counts as one failure.
count_checks() {
    line=$(grep -E '^[0-9]+%: Checks: ' "$1" | tail -n 1)
    if [ -z "$line" ]; then
        failed=$((failed + 1))
        return
    fi
    c=$(echo "$line" | sed -E 's/.*Checks: ([0-9]+).*/\1/')
    f=$(echo "$line" | sed -E 's/.*Failures: ([0-9]+).*/\1/')
    e=$(echo "$line" | sed -E 's/.*Errors: ([0-9]+).*/\1/')
    passed=$((passed + c - f - e))
    failed=$((failed + f + e))
}
for t in "$BUILD"/tests/test_*; do
    [ -x "$t" ] || continue
    name=$(basename "$t")
    log="$BUILD/tests/$name.log"
    if "$t" >"$log" 2>&1; then
        count_checks "$log"
        printf 'PASS %s: %s\n' "$name" "$(grep -E '^[0-9]+%: Checks' "$log" | tail -n 1)"
    else
        before=$failed
        count_checks "$log"
        [ "$failed" -eq "$before" ] && failed=$((failed + 1)) # e.g. a leak report at exit
        failed_names="$failed_names $name"
        printf 'FAIL %s\n' "$name"
        sed 's/^/    /' "$log" | tail -n 40
    fi
done
for t in tests/*.sh; do
    [ -f "$t" ] || continue
    name=$(basename "$t" .sh)
    log="$BUILD/tests/$name.log"
    if sh "$t" >"$log" 2>&1; then
        passed=$((passed + 1))
        printf 'PASS %s\n' "$name"
    else
        failed=$((failed + 1))
        failed_names="$failed_names $name"
        printf 'FAIL %s\n' "$name"
        sed 's/^/    /' "$log" | tail -n 40
    fi
done
[ -n "$failed_names" ] && printf 'failed:%s\n' "$failed_names"
printf '%d passed, %d failed\n' "$passed" "$failed"
[ "$failed" -eq 0 ]
