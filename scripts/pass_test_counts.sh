#!/bin/sh
# scripts/pass_test_counts.sh [REV [--compare]] - the cases and lines of each
# pass's tests (tests/test_pass_NAME.c), in the work tree or at git revision
# REV.  A case is a START_TEST block; one registered with
# tcase_add_loop_test over a table (sizeof TABLE / sizeof *TABLE) counts once
# per row of the table.  With --compare it prints REV and the work tree side
# by side and exits 1 when a pass has fewer cases than at REV.
set -eu
cd "$(dirname "$0")/.."
exec python3 - "$@" <<'PY'
import re, subprocess, sys

def text(rev, path):
    if rev:
        r = subprocess.run(["git", "show", f"{rev}:{path}"], capture_output=True, text=True)
        return r.stdout if r.returncode == 0 else None
    try:
        return open(path).read()
    except OSError:
        return None

def files(rev):
    if rev:
        out = subprocess.run(["git", "ls-tree", "--name-only", rev, "tests/"], capture_output=True,
                             text=True, check=True).stdout.split()
    else:
        out = subprocess.run(["sh", "-c", "ls tests/test_pass_*.c"], capture_output=True, text=True).stdout.split()
    return sorted(f for f in out if re.match(r"tests/test_pass_.*\.c$", f))

def count(src):
    if src is None:
        return 0, 0
    cases = len(re.findall(r"^START_TEST\(", src, re.M))
    for table in re.findall(r"tcase_add_loop_test\([^;]*sizeof\s+(\w+)\s*/", src):
        m = re.search(r"\b" + table + r"\[\]\s*=\s*\{\n(.*?)\n\};", src, re.S)
        if m:
            rows = len(re.findall(r"^    \{", m.group(1), re.M))
            cases += max(rows - 1, 0)
    return cases, src.count("\n")

args = sys.argv[1:]
rev = args[0] if args else ""
if len(args) > 1 and args[1] == "--compare":
    names = sorted(set(files(rev)) | set(files("")))
    status, t = 0, [0, 0, 0, 0]
    print(f"{'pass':44s} {'cases, lines before':>20s} {'cases, lines now':>20s}")
    for f in names:
        c0, l0 = count(text(rev, f))
        c1, l1 = count(text("", f))
        mark = "  FEWER" if c1 < c0 else ""
        status |= c1 < c0
        print(f"{f[len('tests/test_pass_'):-2]:44s} {c0:8d} {l0:8d} l  {c1:8d} {l1:8d} l{mark}")
        t = [t[0] + c0, t[1] + l0, t[2] + c1, t[3] + l1]
    print(f"{'total':44s} {t[0]:8d} {t[1]:8d} l  {t[2]:8d} {t[3]:8d} l")
    sys.exit(status)
tc = tl = 0
for f in files(rev):
    c, l = count(text(rev, f))
    print(f"{f[len('tests/test_pass_'):-2]:44s} {c:5d} cases {l:6d} lines")
    tc, tl = tc + c, tl + l
print(f"{'total':44s} {tc:5d} cases {tl:6d} lines")
PY
