#!/bin/sh
# Benchmark load, passes and save against cp, and peak memory.
#
#   scripts/bench.sh            (or: make bench)
#
# Environment:
#   BUILD=build        the build tree holding lib/libpasshost.so and bin/passhost
#   BENCH_DIR=DIR      where to put generated models and outputs (default: a new
#                      temporary folder, removed at the end)
#   BENCH_MB=100       size of the generated weights model, MiB
#   BENCH_NODES=100000 node count of the generated graph
#   BENCH_REPS=3       repetitions; the best run is shown
#   BENCH_SIZES="..."  node counts of the linearity check (default: NODES/4,
#                      NODES/2, NODES)
#   BENCH_CALLGRIND=0  skip the instruction counts (valgrind), ~20 s of the run
#   BENCH_STAGE_NODES=1000000 node count of the graph the stage with twice
#                      the rule passes runs on, then the whole CLI (every run)
#
# Prints figures only.  A slow or large result never fails the script; it exits
# non-zero only when a program it runs fails or crashes.
set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
BUILD=${BUILD:-build}
MB=${BENCH_MB:-100}
NODES=${BENCH_NODES:-100000}
REPS=${BENCH_REPS:-3}
CC=${CC:-cc}
failed=0

if [ -n "${BENCH_DIR:-}" ]; then
    DIR=$BENCH_DIR
    mkdir -p "$DIR" || exit 1
else
    DIR=$(mktemp -d "${TMPDIR:-/tmp}/passhost-bench.XXXXXX") || exit 1
    trap 'rm -rf "$DIR"' EXIT
    trap 'exit 130' INT TERM
fi

fail() {
    echo "bench: FAILED: $*" >&2
    failed=1
}

# ------------------------------------------------------------------ build
if [ ! -f "$BUILD/lib/libpasshost.so" ]; then
    make --no-print-directory "$BUILD/lib/libpasshost.so" >/dev/null || { echo "bench: cannot build libpasshost" >&2; exit 1; }
fi
mkdir -p "$BUILD/bench"
LIBDIR=$(cd "$BUILD/lib" && pwd)
for prog in gen_big_model bench_io pattern_bench; do
    $CC -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Isdk/include "bench/$prog.c" \
        -o "$BUILD/bench/$prog" -L"$LIBDIR" -lpasshost -ldl -Wl,-rpath,"$LIBDIR" ||
        { echo "bench: cannot build bench/$prog.c" >&2; exit 1; }
done
GEN=$BUILD/bench/gen_big_model
BIO=$BUILD/bench/bench_io
CLI=$BUILD/bin/passhost
[ -x "$CLI" ] || CLI=
TIME=/usr/bin/time
[ -x "$TIME" ] || TIME=

# ---------------------------------------------------------------- helpers
now_ns() { date +%s%N; }
# ms between two ns stamps
ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b - a) / 1e6 }'; }
# the value of key=VALUE in a line of key=value pairs
kv() { printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
# arithmetic on decimals: calc "EXPR" (awk syntax)
calc() { awk "BEGIN { printf \"%.2f\", $1 }"; }
min() { awk -v a="$1" -v b="$2" 'BEGIN { print (a == "" || b + 0 < a + 0) ? b : a }'; }
fsize() { stat -c %s "$1"; }

# The cost of timing a command from this shell (date, fork, exec of a trivial
# program), best of REPS; subtracted from the cp times so they are not
# flattered for small files.  Sets SPAWN_MS.
time_spawn() {
    SPAWN_MS=
    true_bin=/bin/true
    [ -x "$true_bin" ] || true_bin=/usr/bin/true
    i=0
    while [ $i -lt "$REPS" ]; do
        t0=$(now_ns)
        "$true_bin"
        t1=$(now_ns)
        SPAWN_MS=$(min "$SPAWN_MS" "$(ms "$t0" "$t1")")
        i=$((i + 1))
    done
}

# cp of $1 into the same folder, best of REPS, less SPAWN_MS; sets CP_MS and
# CPSYNC_MS (cp followed by fsync of the copy, i.e. `sync FILE`, as durable as
# a save).
net() { awk -v a="$1" -v b="$SPAWN_MS" 'BEGIN { d = a - b; printf "%.2f", d < 0.01 ? 0.01 : d }'; }
time_cp() {
    CP_MS=
    CPSYNC_MS=
    dst=$DIR/cp.onnx
    i=0
    while [ $i -lt "$REPS" ]; do
        rm -f "$dst"
        sync
        t0=$(now_ns)
        cp "$1" "$dst" || fail "cp $1"
        t1=$(now_ns)
        sync "$dst"
        t2=$(now_ns)
        CP_MS=$(min "$CP_MS" "$(net "$(ms "$t0" "$t1")")")
        CPSYNC_MS=$(min "$CPSYNC_MS" "$(net "$(ms "$t0" "$t2")")")
        i=$((i + 1))
    done
    rm -f "$dst"
}

# bench_io on $1, best of REPS by load+save; sets BIO_LINE
time_io() {
    BIO_LINE=
    best=
    i=0
    while [ $i -lt "$REPS" ]; do
        rm -f "$DIR/io.onnx"
        sync
        line=$("$BIO" "$1" "$DIR/io.onnx") || { fail "bench_io $1 (exit $?)"; return; }
        t=$(calc "$(kv "$line" load_ms) + $(kv "$line" save_ms)")
        if [ -z "$best" ] || [ "$(min "$best" "$t")" != "$best" ]; then
            best=$t
            BIO_LINE=$line
        fi
        i=$((i + 1))
    done
    rm -f "$DIR/io.onnx"
}

# one CLI run with the default passes; sets CLI_MS, CLI_KB, and leaves the
# report in $DIR/cli.err.  $2: extra arguments.
run_cli() {
    rm -f "$DIR/cli.onnx"
    sync
    t0=$(now_ns)
    if [ -n "$TIME" ]; then
        $TIME -f '%M' -o "$DIR/cli.rss" "$CLI" -v -i "$1" -o "$DIR/cli.onnx" >"$DIR/cli.out" 2>"$DIR/cli.err"
        rc=$?
    else
        "$CLI" -v -i "$1" -o "$DIR/cli.onnx" >"$DIR/cli.out" 2>"$DIR/cli.err"
        rc=$?
    fi
    t1=$(now_ns)
    CLI_MS=$(ms "$t0" "$t1")
    CLI_KB='?'
    [ -n "$TIME" ] && CLI_KB=$(tail -n 1 "$DIR/cli.rss")
    if [ $rc -ne 0 ]; then
        fail "passhost -i $1 exited with $rc: $(tail -n 1 "$DIR/cli.err")"
        return 1
    fi
    rm -f "$DIR/cli.onnx"
    return 0
}

# "load X ms, passes Y ms, save Z ms" from the report: sets R_LOAD R_PASSES
# R_SAVE (? when the report has no such line) and R_ROUNDS (sum over stages).
parse_report() {
    line=$(cat "$DIR/cli.out" "$DIR/cli.err" | grep -E '^load [0-9.]+ ms, passes [0-9.]+ ms, save [0-9.]+ ms' | tail -n 1)
    R_LOAD=$(printf '%s' "$line" | sed -n 's/^load \([0-9.]*\) ms.*/\1/p')
    R_PASSES=$(printf '%s' "$line" | sed -n 's/.*passes \([0-9.]*\) ms.*/\1/p')
    R_SAVE=$(printf '%s' "$line" | sed -n 's/.*save \([0-9.]*\) ms.*/\1/p')
    R_ROUNDS=$(cat "$DIR/cli.out" "$DIR/cli.err" | sed -n 's/^stage [a-z]*: \([0-9]*\) rounds\{0,1\},.*/\1/p' |
        awk '{ s += $1 } END { print s + 0 }')
    : "${R_LOAD:=?}" "${R_PASSES:=?}" "${R_SAVE:=?}"
}

# ----------------------------------------------------------------- models
echo "passhost benchmark: $(nproc) cores, $(uname -srm), files in $DIR ($(stat -f -c %T "$DIR"))"
t0=$(now_ns)
"$GEN" weights "$DIR/weights_${MB}mb.onnx" "$MB" 2>/dev/null || fail "gen_big_model weights"
"$GEN" nodes "$DIR/nodes_$NODES.onnx" "$NODES" 2>/dev/null || fail "gen_big_model nodes"
t1=$(now_ns)
echo "generated the ${MB} MiB weights model and the $NODES-node graph in $(ms "$t0" "$t1") ms"
[ $failed -eq 0 ] || exit 1

MODELS="models/cnn_small.onnx models/transformer_block.onnx $DIR/weights_${MB}mb.onnx $DIR/nodes_$NODES.onnx"
name() { basename "$1" .onnx; }

# ------------------------------------------------------------- load/save
echo
time_spawn
echo "== load + save, no passes (bench_io; best of $REPS; outputs removed and the disk synced before each run)"
echo "   cp = cp to the same folder; cp+fsync = cp then sync FILE (both less $SPAWN_MS ms of process start);"
echo "   save includes the fsync ph_model_save does (column fsync); l+s = load + save"
echo "   RSS: after load = VmRSS right after ph_model_load (anon/file); peak = ru_maxrss after save;"
echo "   base = ru_maxrss before loading (the process and its libraries)"
printf '%-20s %9s %8s %9s %8s %8s %8s %8s %8s %15s %9s %8s %8s\n' \
    model "file MiB" "cp ms" "cp+fs ms" "load ms" "save ms" "fsync" "l+s/cp" "l+s/cpfs" \
    "RSS load MiB" "peak MiB" peak/file "(pk-base)/file"
for f in $MODELS; do
    [ -f "$f" ] || { fail "missing $f"; continue; }
    size=$(fsize "$f")
    time_cp "$f"
    time_io "$f"
    [ -n "$BIO_LINE" ] || continue
    l=$(kv "$BIO_LINE" load_ms)
    s=$(kv "$BIO_LINE" save_ms)
    fs=$(kv "$BIO_LINE" fsync_ms)
    peak=$(kv "$BIO_LINE" peak_kb)
    base=$(kv "$BIO_LINE" base_kb)
    rl=$(kv "$BIO_LINE" rss_load_kb)
    ra=$(kv "$BIO_LINE" rss_load_anon_kb)
    rf=$(kv "$BIO_LINE" rss_load_file_kb)
    printf '%-20s %9s %8s %9s %8s %8s %8s %8s %8s %15s %9s %8s %8s\n' \
        "$(name "$f")" "$(calc "$size / 1048576")" "$CP_MS" "$CPSYNC_MS" "$l" "$s" "$fs" \
        "$(calc "($l + $s) / $CP_MS")" "$(calc "($l + $s) / $CPSYNC_MS")" \
        "$(calc "$rl / 1024")($(calc "$ra / 1024")/$(calc "$rf / 1024"))" \
        "$(calc "$peak / 1024")" "$(calc "$peak * 1024 / $size")" \
        "$(calc "($peak - $base) * 1024 / $size")"
done

# ------------------------------------------------------------------- CLI
if [ -z "$CLI" ]; then
    echo
    echo "== $BUILD/bin/passhost not built: no CLI figures"
    [ $failed -eq 0 ] || exit 1
    exit 0
fi

echo
echo "== passhost -i X -o Y, default passes (one run each; peak RSS from /usr/bin/time %M)"
printf '%-20s %9s %9s %9s %9s %9s %7s %9s %9s\n' model "file MiB" "wall ms" "load ms" "passes ms" "save ms" rounds "peak MiB" peak/file
for f in $MODELS; do
    [ -f "$f" ] || continue
    size=$(fsize "$f")
    run_cli "$f" || continue
    parse_report
    cat "$DIR/cli.out" "$DIR/cli.err" >"$DIR/report.$(name "$f")"
    pk='?'
    ratio='?'
    case $CLI_KB in
    '' | *[!0-9]*) ;;
    *) pk=$(calc "$CLI_KB / 1024"); ratio=$(calc "$CLI_KB * 1024 / $size") ;;
    esac
    printf '%-20s %9s %9s %9s %9s %9s %7s %9s %9s\n' "$(name "$f")" "$(calc "$size / 1048576")" \
        "$CLI_MS" "$R_LOAD" "$R_PASSES" "$R_SAVE" "$R_ROUNDS" "$pk" "$ratio"
done
for f in $MODELS; do
    r=$DIR/report.$(name "$f")
    [ -f "$r" ] || continue
    echo
    echo "-- per-pass report, $(name "$f"):"
    grep -E '^(stage |  )' "$r" | sed 's/^/   /'
done

# ------------------------------------------------------------- linearity
SIZES=${BENCH_SIZES:-"$((NODES / 4)) $((NODES / 2)) $NODES"}
echo
echo "== stage runner linearity: default passes on generated graphs (wall time, best of $REPS)"
echo "   passes = the report's passes time: every pass call plus the runner's toposort and"
echo "   node count after each pass that changed the graph"
printf '%9s %7s %9s %10s %16s %9s %14s\n' nodes rounds "load ms" "passes ms" "passes us/node" "save ms" "us/node/round"
first=
for n in $SIZES; do
    f=$DIR/nodes_$n.onnx
    [ -f "$f" ] || "$GEN" nodes "$f" "$n" 2>/dev/null || { fail "gen_big_model nodes $n"; continue; }
    bp=
    bl=
    bs=
    rounds='?'
    i=0
    while [ $i -lt "$REPS" ]; do
        run_cli "$f" || break
        parse_report
        rounds=$R_ROUNDS
        case $R_PASSES in '?') ;; *) bp=$(min "$bp" "$R_PASSES"); bl=$(min "$bl" "$R_LOAD"); bs=$(min "$bs" "$R_SAVE") ;; esac
        i=$((i + 1))
    done
    [ -n "$bp" ] || continue
    per=$(awk -v p="$bp" -v n="$n" 'BEGIN { printf "%.3f", p * 1000 / n }')
    perr=$(awk -v p="$bp" -v n="$n" -v r="$rounds" 'BEGIN { printf "%.3f", (r + 0 > 0) ? p * 1000 / n / r : 0 }')
    [ -n "$first" ] || first=$per
    printf '%9s %7s %9s %10s %16s %9s %14s\n' "$n" "$rounds" "$bl" "$bp" \
        "$per ($(calc "$per / $first")x)" "$bs" "$perr"
done
echo "   (linear: us/node stays flat as the graph grows; the ratio is against the smallest graph."
echo "    Wall time per node also rises when the IR outgrows the CPU caches; the instruction"
echo "    counts below separate that from the algorithm.)"

# Instructions executed (callgrind, deterministic) in ph_model_load, the stage
# runner (host_run_stage, inclusive) and ph_model_save_staged (the CLI's
# save), per node, in the worker process.
if command -v valgrind >/dev/null 2>&1 && command -v callgrind_annotate >/dev/null 2>&1 &&
    [ "${BENCH_CALLGRIND:-1}" != 0 ]; then
    echo
    echo "== instructions per node (valgrind --tool=callgrind, inclusive; set BENCH_CALLGRIND=0 to skip)"
    printf '%9s %7s %14s %18s %20s %14s\n' nodes rounds "load ins/node" "passes ins/node" "passes ins/node/rnd" "save ins/node"
    first=
    for n in $SIZES; do
        f=$DIR/nodes_$n.onnx
        [ -f "$f" ] || continue
        rm -f "$DIR/cli.onnx" "$DIR"/cg.out.*
        # the passes run in a worker the supervisor forks: one file per
        # process (%p), the worker's is the largest
        if ! valgrind --tool=callgrind --callgrind-out-file="$DIR/cg.out.%p" "$CLI" -i "$f" -o "$DIR/cli.onnx" \
            >"$DIR/cli.out" 2>"$DIR/cli.err"; then
            fail "passhost under callgrind on $f: $(tail -n 1 "$DIR/cli.err")"
            continue
        fi
        parse_report
        callgrind_annotate --inclusive=yes "$(ls -S "$DIR"/cg.out.* | head -n 1)" >"$DIR/cg.txt" 2>/dev/null
        ir() {
            grep -E "^ *[0-9,]+ \([ 0-9.]+%\) +[^ ]*:$1 \[" "$DIR/cg.txt" | head -n 1 | awk '{ gsub(",", "", $1); print $1 }'
        }
        il=$(ir ph_model_load)
        ip=$(ir host_run_stage)
        is=$(ir ph_model_save_staged)
        pn() { [ -n "$1" ] && awk -v a="$1" -v n="$n" 'BEGIN { printf "%.0f", a / n }' || printf '?'; }
        ipn=$(pn "$ip")
        ipr='?'
        [ -n "$ip" ] && [ "$R_ROUNDS" -gt 0 ] 2>/dev/null && ipr=$(awk -v a="$ip" -v n="$n" -v r="$R_ROUNDS" 'BEGIN { printf "%.0f", a / n / r }')
        [ -n "$first" ] || first=$ipn
        ratio=
        case $ipn$first in *'?'*) ;; *) ratio=" ($(calc "$ipn / $first")x)" ;; esac
        printf '%9s %7s %14s %18s %20s %14s\n' "$n" "$R_ROUNDS" "$(pn "$il")" "$ipn$ratio" "$ipr" "$(pn "$is")"
    done
    rm -f "$DIR"/cg.out.* "$DIR/cg.txt" "$DIR/cli.onnx"
fi

# ------------------------------------------------------- pattern matching
echo
echo "== pattern matching (bench/pattern_bench): a 4-node pattern (Mul, Add, Relu, Sigmoid) on generated"
echo "   graphs of blocks of 8 nodes, one match per block; best of $REPS"
echo "   match   = every node offered to ph_pattern_match_at;  scan = ph_ruleset_run (op-type index) declining"
echo "   nomatch = every root candidate fails at the third statement;  rewrite = every match committed"
echo "   rerun   = the next run, visiting only what the rewrites touched;  idle = a run with nothing changed"
printf '%9s %-8s %10s %12s %9s\n' nodes what ms "ns/node" found
for n in $NODES $((NODES * 10)); do
    "$BUILD/bench/pattern_bench" "$n" "$REPS" >"$DIR/pattern.out" 2>&1 || { fail "pattern_bench $n: $(tail -n 1 "$DIR/pattern.out")"; continue; }
    while read -r what rest; do
        printf '%9s %-8s %10s %12s %9s\n' "$(kv "$rest" nodes)" "$what" "$(kv "$rest" ms)" \
            "$(kv "$rest" ns_per_node)" "$(kv "$rest" matches_or_rewrites)"
    done <"$DIR/pattern.out"
done

# ------------------------------------------- twice the rule passes
# The goal "the default stage no slower with twice the passes": every
# pattern pass compiled a second time under another name (NAME_2), which
# the worklist runs beside the original, on a graph of STAGE_NODES nodes.
STAGE_NODES=${BENCH_STAGE_NODES:-1000000}
echo
echo "== the optimize stage with the default passes and with every rule pass twice (bench/stage_passes.sh),"
echo "   $STAGE_NODES-node graph, alternated runs ($REPS of each); stage = passhost's 'stage optimize' time"
f="$DIR/nodes_$STAGE_NODES.onnx"
[ -f "$f" ] || "$GEN" nodes "$f" "$STAGE_NODES" 2>/dev/null || fail "gen_big_model nodes $STAGE_NODES"
if [ -f "$f" ]; then
    CC=$CC sh bench/stage_passes.sh "$f" "$REPS" "$BUILD" || fail "stage_passes.sh"
    # The goals "the whole CLI at most 3 s, peak RSS at most 600 MB" on the
    # same graph: every run.
    echo
    echo "== passhost -i X -o Y on the $STAGE_NODES-node graph, default passes ($REPS runs; wall from process"
    echo "   start to exit, peak RSS from /usr/bin/time %M; load, passes and save from the report)"
    printf '%4s %9s %9s %9s %9s %9s\n' run "wall ms" "load ms" "passes ms" "save ms" "peak MiB"
    i=0
    while [ $i -lt "$REPS" ]; do
        i=$((i + 1))
        run_cli "$f" || break
        parse_report
        pk='?'
        case $CLI_KB in '' | *[!0-9]*) ;; *) pk=$(calc "$CLI_KB / 1024") ;; esac
        printf '%4s %9s %9s %9s %9s %9s\n' "$i" "$CLI_MS" "$R_LOAD" "$R_PASSES" "$R_SAVE" "$pk"
    done
    rm -f "$f"
fi

[ $failed -eq 0 ] || exit 1
exit 0
