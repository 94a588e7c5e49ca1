#!/bin/sh
# The cost of containment: passhost with its supervisor and worker process
# (the default) against --no-fork (one process), on a small bundled model and
# on generated big ones.
#
#   bench/supervise_bench.sh          (after make; BUILD=build by default)
#
# Environment:
#   BUILD=build        the build tree holding bin/passhost and lib/libpasshost.so
#   BENCH_DIR=DIR      where generated models and outputs go (default: a new
#                      temporary folder, removed at the end)
#   BENCH_NODES=100000 node count of the generated graph (gen_big_model nodes)
#   BENCH_MB=100       weights of the generated weights model, MiB
#   BENCH_REPS=7       runs of each mode per model, alternated; best and median shown
#   BENCH_CALLGRIND=1  0 skips the instruction counts (valgrind --tool=callgrind,
#                      every process of the run counted)
#   BENCH_PERF=1       0 skips the CPU time of all processes (perf stat -r REPS,
#                      when perf is installed: Debian's linux-perf)
#
# Prints figures only; exits non-zero only when a program it runs fails.
set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
BUILD=${BUILD:-build}
NODES=${BENCH_NODES:-100000}
MB=${BENCH_MB:-100}
REPS=${BENCH_REPS:-7}
CC=${CC:-cc}
CLI=$BUILD/bin/passhost
[ -x "$CLI" ] || { echo "supervise_bench: $CLI not built (make BUILD=$BUILD)" >&2; exit 1; }

if [ -n "${BENCH_DIR:-}" ]; then
    DIR=$BENCH_DIR
    mkdir -p "$DIR" || exit 1
else
    DIR=$(mktemp -d "${TMPDIR:-/tmp}/passhost-supervise.XXXXXX") || exit 1
    trap 'rm -rf "$DIR"' EXIT
    trap 'exit 130' INT TERM
fi

LIBDIR=$(cd "$BUILD/lib" && pwd)
mkdir -p "$BUILD/bench"
$CC -std=c11 -D_GNU_SOURCE -O2 -Isdk/include bench/gen_big_model.c -o "$BUILD/bench/gen_big_model" \
    -L"$LIBDIR" -lpasshost -ldl -Wl,-rpath,"$LIBDIR" || { echo "cannot build gen_big_model" >&2; exit 1; }
"$BUILD/bench/gen_big_model" nodes "$DIR/nodes_$NODES.onnx" "$NODES" >/dev/null 2>&1 || exit 1
"$BUILD/bench/gen_big_model" weights "$DIR/weights_${MB}mb.onnx" "$MB" >/dev/null 2>&1 || exit 1
MODELS="models/cnn_small.onnx $DIR/nodes_$NODES.onnx $DIR/weights_${MB}mb.onnx"

now_ns() { date +%s%N; }
calc() { awk "BEGIN { printf \"%.2f\", $1 }"; }
# best and median of the numbers on stdin: "BEST MEDIAN"
stats() { sort -g | awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.2f %.2f", v[1], m }'; }

# one run: wall ms on stdout; $1 model, $2 extra flag ("" or --no-fork)
run_once() {
    rm -f "$DIR/out.onnx"
    sync
    t0=$(now_ns)
    # shellcheck disable=SC2086
    "$CLI" -i "$1" -o "$DIR/out.onnx" -q $2 || { echo "passhost failed on $1 ($2)" >&2; return 1; }
    t1=$(now_ns)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f\n", (b - a) / 1e6 }'
}

# peak RSS in KiB (/usr/bin/time %M: the largest of passhost and its worker)
peak_kb() {
    [ -x /usr/bin/time ] || { echo '?'; return; }
    rm -f "$DIR/out.onnx"
    # shellcheck disable=SC2086
    /usr/bin/time -f %M -o "$DIR/rss" "$CLI" -i "$1" -o "$DIR/out.onnx" -q $2 >/dev/null 2>&1
    tail -n 1 "$DIR/rss"
}

# Instructions of every process of one run (callgrind): "TOTAL SUPERVISOR".
# --dump-before=fork writes the supervisor's counts up to the fork to a file
# of their own and starts both processes from zero, so nothing is counted
# twice: TOTAL is the sum of the files, SUPERVISOR the supervisor's own work
# after the fork (its smallest file).
instructions() {
    rm -f "$DIR"/cg.* "$DIR/out.onnx"
    # shellcheck disable=SC2086
    valgrind --tool=callgrind --dump-before=fork --callgrind-out-file="$DIR/cg.%p" "$CLI" -i "$1" \
        -o "$DIR/out.onnx" -q $2 >/dev/null 2>&1 || { echo "? ?"; return; }
    for f in "$DIR"/cg.*; do
        callgrind_annotate "$f" 2>/dev/null | sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,
    done | sort -g | awk '{ s += $1; if (NR == 1) small = $1 } END { printf "%d %d", s, (NR > 2) ? small : 0 }'
}

echo "passhost supervisor overhead: $(nproc) cores, $(uname -srm), $REPS runs of each mode per model"
echo "   wall = whole command (load, passes, save with its fsync), best and median of $REPS, modes alternated"
printf '%-20s %9s %22s %22s %12s %12s %14s\n' model "file MiB" "--no-fork ms best/med" \
    "supervised best/med" "delta best" "delta med" "peak MiB n/s"
failed=0
for m in $MODELS; do
    [ -f "$m" ] || { echo "missing $m" >&2; failed=1; continue; }
    : >"$DIR/t.nofork"
    : >"$DIR/t.fork"
    run_once "$m" "" >/dev/null || { failed=1; continue; } # warm the page cache
    i=0
    while [ $i -lt "$REPS" ]; do
        run_once "$m" --no-fork >>"$DIR/t.nofork" || failed=1
        run_once "$m" "" >>"$DIR/t.fork" || failed=1
        i=$((i + 1))
    done
    set -- $(stats <"$DIR/t.nofork")
    nb=$1 nm=$2
    set -- $(stats <"$DIR/t.fork")
    fb=$1 fm=$2
    pn=$(peak_kb "$m" --no-fork)
    pf=$(peak_kb "$m" "")
    printf '%-20s %9s %22s %22s %12s %12s %14s\n' "$(basename "$m" .onnx)" \
        "$(calc "$(stat -c %s "$m") / 1048576")" "$nb / $nm" "$fb / $fm" \
        "$(calc "$fb - $nb") ms" "$(calc "$fm - $nm") ms" \
        "$(calc "$pn / 1024")/$(calc "$pf / 1024")"
done

# CPU time of every process of the run and wall time, mean of REPS (perf stat)
if command -v perf >/dev/null 2>&1 && [ "${BENCH_PERF:-1}" != 0 ] &&
    perf stat -e task-clock true >/dev/null 2>&1; then
    echo
    echo "== CPU time of all processes (perf stat -e task-clock -r $REPS: mean +- stddev of the mean)"
    printf '%-20s %24s %24s %12s\n' model "--no-fork CPU ms" "supervised CPU ms" "delta ms"
    for m in $MODELS; do
        line=
        for mode in --no-fork ""; do
            # shellcheck disable=SC2086
            perf stat -x, -e task-clock -r "$REPS" -o "$DIR/perf" "$CLI" -i "$m" -o "$DIR/out.onnx" -q \
                $mode >/dev/null 2>&1 || { line="$line ?"; continue; }
            cpu=$(awk -F, '/task-clock/ { printf "%.2f|%s", $1, $4 }' "$DIR/perf")
            line="$line|$cpu"
        done
        printf '%s\n' "$line" | awk -F'|' -v m="$(basename "$m" .onnx)" \
            '{ printf "%-20s %24s %24s %12.2f\n", m, $2 " +- " $3, $4 " +- " $5, $4 - $2 }'
    done
fi

if command -v valgrind >/dev/null 2>&1 && command -v callgrind_annotate >/dev/null 2>&1 &&
    [ "${BENCH_CALLGRIND:-1}" != 0 ]; then
    echo
    echo "== instructions executed (valgrind --tool=callgrind --dump-before=fork): supervised ="
    echo "   start-up before the fork + worker + supervisor after the fork; supervisor = the last"
    printf '%-20s %16s %16s %16s %12s %9s\n' model "--no-fork" supervised "supervisor" "delta" "delta %"
    for m in $MODELS; do
        set -- $(instructions "$m" --no-fork)
        n=$1
        set -- $(instructions "$m" "")
        f=$1 s=$2
        printf '%-20s %16s %16s %16s %12s %8s%%\n' "$(basename "$m" .onnx)" "$n" "$f" "$s" \
            "$(awk -v a="$n" -v b="$f" 'BEGIN { printf "%+d", b - a }')" \
            "$(awk -v a="$n" -v b="$f" 'BEGIN { printf "%+.3f", (a > 0) ? (b - a) * 100 / a : 0 }')"
    done
fi
rm -f "$DIR/out.onnx"
exit $failed
