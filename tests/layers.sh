#!/bin/sh
# The folders of sdk/src and host/ are layers (scripts/layers.txt,
# scripts/check_layers.py): the real tree passes, and small trees built
# here, each breaking one rule, fail with a line naming the edge.
cd "$(dirname "$0")/.." || exit 1
BUILD=${PASSHOST_BUILD:-build}
CHECK="/usr/bin/python3 scripts/check_layers.py"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# the real tree
out=$($CHECK "$BUILD") || fail "the tree breaks its layers:
$out"
echo "$out"

T=$(mktemp -d "${TMPDIR:-/tmp}/ph_layers.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT

# A tree with folders lo < mid < hi under grp/ (objects in build/obj/grp).
# Each case writes its files, then builds every grp/*/*.c.
tree() {
    rm -rf "$T/src" "$T/build"
    mkdir -p "$T/src/grp/lo" "$T/src/grp/mid" "$T/src/grp/hi" "$T/src/passhost"
    printf 'int lo_fn(void) { return 1; }\n' > "$T/src/grp/lo/lo.c"
    printf 'int lo_fn(void);\nint mid_fn(void) { return lo_fn(); }\n' > "$T/src/grp/mid/mid.c"
    printf 'int mid_fn(void);\nint hi_fn(void) { return mid_fn(); }\n' > "$T/src/grp/hi/hi.c"
    printf 'layers grp grp lo mid hi\n' > "$T/order"
}
build() {
    for c in "$T"/src/grp/*/*.c; do
        f=$(basename "$(dirname "$c")")
        mkdir -p "$T/build/obj/grp/$f"
        cc -c -fvisibility=hidden -I"$T/src/grp" -I"$T/src" "$c" \
            -o "$T/build/obj/grp/$f/$(basename "$c" .c).o" || return 1
    done
}
check() { $CHECK --order "$T/order" --root "$T/src" "$T/build"; }
# expect_fail NAME PATTERN: the check exits 1 and says PATTERN
expect_fail() {
    build || { fail "$1: cannot build the tree"; return; }
    if out=$(check); then
        fail "$1: the check passed:
$out"
    elif ! echo "$out" | grep -q -- "$2"; then
        fail "$1: the message does not say '$2':
$out"
    fi
}

tree
build && check > /dev/null || fail "a tree that calls only downward fails the check"

tree # a lower folder calls a higher one
printf 'int hi_fn(void);\nint lo_fn(void) { return hi_fn(); }\n' > "$T/src/grp/lo/lo.c"
expect_fail "call upward" "grp/lo/lo.c calls hi_fn of grp/hi/hi.c: lo is below hi"

tree # two folders call each other: a cycle is an upward edge
printf 'int hi_fn(void);\nint mid_fn(void) { return hi_fn(); }\n' > "$T/src/grp/mid/mid.c"
expect_fail "cycle" "grp/mid/mid.c calls hi_fn of grp/hi/hi.c: mid is below hi"

tree # a lower folder includes a higher one's header
printf 'int hi_fn(void);\n' > "$T/src/grp/hi/hi.h"
printf '#include "hi/hi.h"\nint lo_fn(void) { return 1; }\n' > "$T/src/grp/lo/lo.c"
expect_fail "include upward" 'grp/lo/lo.c includes "hi/hi.h": lo is below hi'

tree # a folder the order does not place
mkdir -p "$T/src/grp/extra"
printf 'int extra_fn(void) { return 2; }\n' > "$T/src/grp/extra/extra.c"
expect_fail "unplaced folder" "grp/extra: "

tree # a public-only folder calls an internal (hidden) symbol
printf 'public grp hi\n' >> "$T/order"
expect_fail "internal call" "grp/hi/hi.c calls mid_fn of grp/mid/mid.c, which is internal"

tree # ... and passes when it calls what the library exports
printf 'public grp hi\n' >> "$T/order"
printf '__attribute__((visibility("default"))) int mid_fn(void) { return 3; }\n' > "$T/src/grp/mid/mid.c"
build && check > /dev/null || fail "a public-only folder calling an exported function fails the check"

tree # a public-only folder includes an internal header
printf 'public grp hi\n' >> "$T/order"
printf 'int x;\n' > "$T/src/grp/internal.h"
printf '#include "internal.h"\nint hi_fn(void) { return 0; }\n' > "$T/src/grp/hi/hi.c"
expect_fail "internal include" 'grp/hi/hi.c includes "internal.h": hi is built on the public API only'

[ "$fails" -eq 0 ] && echo "layers: the check fails on each broken tree and passes the real one"
[ "$fails" -eq 0 ]
