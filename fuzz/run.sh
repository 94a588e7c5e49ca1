#!/bin/sh
# Run the libFuzzer targets of a build tree, each for a while; fail on a crash.
#
#   fuzz/run.sh BUILD SECONDS [NAME...]      e.g. fuzz/run.sh build/fuzz 60 load
#
# Each fuzzer NAME (fuzz/NAME.c, built as BUILD/bin/fuzz_NAME by `make
# fuzz-build`) runs for SECONDS from its seeds in fuzz/corpus/NAME (read only)
# and its working corpus BUILD/corpus/NAME (new inputs go there, so later
# runs go on where earlier ones stopped), with fuzz/NAME.dict when present.
# One line per fuzzer: executions, coverage (cov: edges, ft: features),
# corpus size.  A crash, leak, sanitizer report, timeout (over 25 s for one
# input) or out-of-memory (over 2.5 GB) stops that fuzzer; the input is kept
# as BUILD/artifacts/NAME/crash-* (or leak-, timeout-, oom-) and the log as
# BUILD/fuzz_NAME.log.  Reproduce one with
#   BUILD/bin/fuzz_NAME BUILD/artifacts/NAME/crash-...
# and minimize it with -minimize_crash=1 -runs=10000.
#
# FUZZ_RUNS=N FUZZ_SEED=S make the run repeatable (CI): each fuzzer runs
# exactly N inputs from seed S, starting from the seeds in the repository
# only (a fresh working corpus BUILD/corpus-seedS/NAME), so the same sources
# give the same inputs on every machine; SECONDS is then only a safety cap.
# fuzz/NAME.runs lowers N for a fuzzer whose every input is a whole run of
# the program (plugin_faults: a few hundred runs, about a minute), and
# fuzz/NAME.timeout raises its 25 s limit for one input (plugin_faults: a
# run that crashes, is blamed, re-run and verified takes up to about 26 s in
# the fuzzing build; the harness itself fails a run that lasts 60 s).
set -u
BUILD=${1:?usage: fuzz/run.sh BUILD SECONDS [NAME...]}
SECONDS_EACH=${2:?usage: fuzz/run.sh BUILD SECONDS [NAME...]}
shift 2
cd "$(dirname "$0")/.."
names="$*"
[ -n "$names" ] || names=$(for f in fuzz/*.c; do basename "$f" .c; done)
# the passes of the build tree, as the program finds them, and nothing else
unset PASSHOST_PLUGIN_PATH
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
failed=""
for n in $names; do
    bin=$BUILD/bin/fuzz_$n
    [ -x "$bin" ] || { echo "fuzz: $bin not built (make fuzz-build)" >&2; exit 2; }
    work=$BUILD/corpus/$n
    if [ -n "${FUZZ_SEED:-}" ]; then
        work=$BUILD/corpus-seed$FUZZ_SEED/$n
        rm -rf "$work"
    fi
    art=$BUILD/artifacts/$n
    log=$BUILD/fuzz_$n.log
    mkdir -p "$work" "$art"
    limit=25
    [ -f "fuzz/$n.timeout" ] && limit=$(cat "fuzz/$n.timeout")
    set -- -max_total_time="$SECONDS_EACH" -timeout="$limit" -rss_limit_mb=2560 \
        -artifact_prefix="$art/" -print_final_stats=1
    [ -f "fuzz/$n.dict" ] && set -- "$@" -dict="fuzz/$n.dict"
    runs=${FUZZ_RUNS:-}
    # a fuzzer whose inputs are whole runs of the program caps them (fuzz/NAME.runs)
    if [ -n "$runs" ] && [ -f "fuzz/$n.runs" ] && [ "$(cat "fuzz/$n.runs")" -lt "$runs" ]; then
        runs=$(cat "fuzz/$n.runs")
    fi
    [ -n "$runs" ] && set -- "$@" -runs="$runs"
    [ -n "${FUZZ_SEED:-}" ] && set -- "$@" -seed="$FUZZ_SEED"
    "$bin" "$@" "$work" "fuzz/corpus/$n" >"$log" 2>&1
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    last=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
    cov=$(echo "$last" | sed -nE 's/.*cov: ([0-9]+).*/\1/p')
    ft=$(echo "$last" | sed -nE 's/.*ft: ([0-9]+).*/\1/p')
    corp=$(echo "$last" | sed -nE 's/.*corp: ([0-9]+).*/\1/p')
    if [ "$rc" -eq 0 ]; then
        printf 'fuzz %-9s %ss: %s executions, cov %s, ft %s, corpus %s: no crash\n' \
            "$n" "$SECONDS_EACH" "${execs:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}"
    else
        failed="$failed $n"
        printf 'fuzz %-9s FAILED after %s executions (exit %d); log %s\n' "$n" "${execs:-?}" "$rc" "$log"
        grep -E 'ERROR|SUMMARY|^fuzz: |Test unit written|==[0-9]+==' "$log" | head -n 12 | sed 's/^/    /'
        grep -E '^    #[0-9]+ ' "$log" | head -n 12 | sed 's/^/    /'
    fi
done
if [ -n "$failed" ]; then
    echo "fuzz: crashes in:$failed (inputs in $BUILD/artifacts)" >&2
    exit 1
fi
