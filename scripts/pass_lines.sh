#!/bin/sh
# Lines of every pattern pass (a plugin folder whose source gives a rule
# table, `.rules = name`, not `.rules = NULL`), smallest first, then their
# count, total and median.
#   scripts/pass_lines.sh [REV]     (REV: a git revision; default the work tree)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
rev=${1:-}
list() {
    if [ -n "$rev" ]; then
        git ls-tree -d --name-only "$rev" plugins/ | while read -r d; do
            src=$(git ls-tree --name-only "$rev" "$d/" | grep '\.[ch]$')
            [ -n "$src" ] || continue
            for f in $src; do git show "$rev:$f"; done | grep -Eq '\.rules *= *[a-z_]' || continue
            for f in $src; do git show "$rev:$f"; done | grep -q '\.rules *= *NULL' && continue
            echo "$(for f in $src; do git show "$rev:$f"; done | wc -l) $(basename "$d")"
        done
    else
        for d in plugins/*/; do
            grep -Eq '\.rules *= *[a-z_]' "$d"*.c && ! grep -q '\.rules *= *NULL' "$d"*.c || continue
            echo "$(cat "$d"*.[ch] 2>/dev/null | wc -l) $(basename "$d")"
        done
    fi
}
list | sort -n | awk '{ print; n[NR] = $1; s += $1 }
    END { m = NR % 2 ? n[(NR + 1) / 2] : (n[NR / 2] + n[NR / 2 + 1]) / 2;
          printf "%d pattern passes, %d lines, median %s\n", NR, s, m }'
