#!/bin/sh
# Run every test program of a build tree and print one closing line.
#   scripts/run_tests.sh build/san
# Check programs (BUILD/tests/test_*) and shell tests (tests/*.sh) run
# TEST_JOBS at a time (default: the number of processors), longest first
# (the durations of the previous run, BUILD/tests/durations). A line is
# printed as each one ends; the failing ones' logs are printed again at the
# end, in name order, with the counts.
#
# Check programs run each case in a child process (CK_FORK=yes), except the
# programs whose cases only compute, which say so in their main
# (srunner_set_fork_status CK_NOFORK): under the sanitizers a fork and the
# leak check at each child's exit cost more than such a case itself. There
# a crash fails the whole program, and since cases in one process have no
# per-case timer every program runs under `timeout` (TEST_TIMEOUT seconds,
# default 1200). Shell tests run with PASSHOST_BUILD pointing at the tree.
set -u
BUILD=${1:-build/san}
export CK_FORK=${CK_FORK:-yes}
export CK_DEFAULT_TIMEOUT=${CK_DEFAULT_TIMEOUT:-120}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export PASSHOST_BUILD="$BUILD"
TIMEOUT=${TEST_TIMEOUT:-1200}
JOBS=${TEST_JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)}
LOGS="$BUILD/tests"

# One test: BUILD/tests/NAME.log, NAME.rc (exit status), NAME.s (seconds).
if [ "${2:-}" = "--one" ]; then
    t=$3
    case "$t" in
    *.sh) name=$(basename "$t" .sh) ;;
    *) name=$(basename "$t") ;;
    esac
    start=$(date +%s%N)
    case "$t" in
    *.sh) timeout -k 10 "$TIMEOUT" sh "$t" >"$LOGS/$name.log" 2>&1 ;;
    *) timeout -k 10 "$TIMEOUT" "$t" >"$LOGS/$name.log" 2>&1 ;;
    esac
    rc=$?
    end=$(date +%s%N)
    [ "$rc" -eq 124 ] && printf '\n(stopped after %s s: TEST_TIMEOUT)\n' "$TIMEOUT" >>"$LOGS/$name.log"
    echo "$rc" >"$LOGS/$name.rc"
    secs=$(((end - start) / 1000000)) # milliseconds
    printf '%s %s\n' "$name" "$secs" >"$LOGS/$name.s"
    if [ "$rc" -eq 0 ]; then
        printf 'PASS %s (%d.%01d s)\n' "$name" $((secs / 1000)) $((secs % 1000 / 100))
    else
        printf 'FAIL %s (exit %d)\n' "$name" "$rc"
    fi
    exit 0
fi

mkdir -p "$LOGS"
# The tests, longest first by the previous run's durations (unknown ones
# first of all, in name order).
list=$(mktemp)
trap 'rm -f "$list" "$list.d"' EXIT
for t in "$BUILD"/tests/test_* tests/*.sh; do
    case "$t" in
    *.log | *.rc | *.s) continue ;;
    *.sh) [ -f "$t" ] || continue; name=$(basename "$t" .sh) ;;
    *) [ -x "$t" ] || continue; name=$(basename "$t") ;;
    esac
    rm -f "$LOGS/$name.rc" "$LOGS/$name.s"
    d=$(awk -v n="$name" '$1 == n { print $2 }' "$LOGS/durations" 2>/dev/null)
    printf '%s %s\n' "${d:-999999999}" "$t"
done | sort -k1,1nr -k2,2 | cut -d' ' -f2 >"$list"
xargs -P "$JOBS" -n 1 "$0" "$BUILD" --one <"$list"

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
for t in $(sort "$list"); do
    case "$t" in
    *.sh) name=$(basename "$t" .sh) ;;
    *) name=$(basename "$t") ;;
    esac
    log="$LOGS/$name.log"
    rc=$(cat "$LOGS/$name.rc" 2>/dev/null || echo 1)
    cat "$LOGS/$name.s" >>"$list.d" 2>/dev/null
    case "$t" in
    *.sh)
        if [ "$rc" -eq 0 ]; then
            passed=$((passed + 1))
            continue
        fi
        failed=$((failed + 1))
        ;;
    *)
        before=$failed
        count_checks "$log"
        [ "$rc" -eq 0 ] && [ "$failed" -eq "$before" ] && continue
        [ "$failed" -eq "$before" ] && failed=$((failed + 1)) # e.g. a leak report at exit
        ;;
    esac
    failed_names="$failed_names $name"
    printf '\nFAIL %s, the end of %s:\n' "$name" "$log"
    sed 's/^/    /' "$log" | tail -n 40
done
[ -f "$list.d" ] && mv "$list.d" "$LOGS/durations"
[ -n "$failed_names" ] && printf 'failed:%s\n' "$failed_names"
printf '%d passed, %d failed\n' "$passed" "$failed"
[ "$failed" -eq 0 ]
