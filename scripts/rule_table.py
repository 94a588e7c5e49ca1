#!/usr/bin/env python3
"""scripts/rule_table.py [--fixed FILE] LOG... - the per-pass table of the
rule checker (docs/rules.md) from the output of `passhost --check-rules`
or scripts/check_rules.sh (one log per seed; the counts are summed).

Columns: pass, rules, instances tried, matched, rewritten, refused (matched
but left by the rule's condition), failing instances in these logs, and the
failures found and fixed (lines "PASS: what" of FILE, default
scripts/rule_fixes.txt).  Prints Markdown."""
import os
import re
import sys


def main(argv):
    fixed_file = os.path.join(os.path.dirname(__file__), "rule_fixes.txt")
    if len(argv) > 2 and argv[1] == "--fixed":
        fixed_file = argv[2]
        argv = argv[2:]
    logs = argv[1:]
    if not logs:
        sys.exit(__doc__)
    passes = {}
    rule_re = re.compile(r"^  (\S+)\s+" + r"\s+".join([r"(\d+)"] * 10) + r"(?:\s+(\d+)/(\d+))?\s*$")
    for log in logs:
        current = None
        with open(log) as f:
            for line in f:
                head = line.split()
                if line[:1] not in (" ", "") and len(head) >= 11 and head[1:3] == ["forms", "tried"]:
                    current = head[0]
                    passes.setdefault(current, {})
                    continue
                m = rule_re.match(line)
                if m and current:
                    rule = m.group(1)
                    vals = [int(v or 0) for v in m.groups()[1:]]
                    acc = passes[current].setdefault(rule, [0] * 12)
                    passes[current][rule] = [a + b for a, b in zip(acc, vals)]
    fixes = {}
    if os.path.exists(fixed_file):
        with open(fixed_file) as f:
            for line in f:
                if ":" in line and not line.startswith("#"):
                    fixes.setdefault(line.split(":", 1)[0].strip(), []).append(line.split(":", 1)[1].strip())
    print("| pass | rules | instances | matched | rewritten | refused | in a body (rewritten) | failing | found and fixed |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    tot = [0] * 8
    for name in sorted(passes):
        rules = passes[name]
        # forms tried rejected pos matched rewritten refused neg unjudged failures
        tried = sum(r[1] for r in rules.values())
        matched = sum(r[4] for r in rules.values())
        rewritten = sum(r[5] for r in rules.values())
        refused = sum(r[6] for r in rules.values())
        failing = sum(r[9] for r in rules.values())
        body_rw = sum(r[10] for r in rules.values())
        body = sum(r[11] for r in rules.values())
        row = [len(rules), tried, matched, rewritten, refused, body, body_rw, failing]
        tot = [a + b for a, b in zip(tot, row)]
        fx = "; ".join(fixes.get(name, [])) or "-"
        cells = [str(v) for v in row[:5]] + ["%d (%d)" % (row[5], row[6]), str(row[7])]
        print("| %s | %s | %s |" % (name, " | ".join(cells), fx))
    cells = [str(v) for v in tot[:5]] + ["%d (%d)" % (tot[5], tot[6]), str(tot[7])]
    print("| **%d passes** | %s | %d |" % (len(passes), " | ".join(cells), sum(len(v) for v in fixes.values())))


if __name__ == "__main__":
    main(sys.argv)
