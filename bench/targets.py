#!/usr/bin/env python3
"""The target-profile table: each shipped profile on each zoo model.

    bench/targets.py BUILD ZOODIR [--profile NAME ...] [--set KEY=VALUE ...] [NAME ...]

For every ZOODIR/NAME.onnx and every profile (default: ort and npu):
  - the violations before: `passhost --check-target PROFILE MODEL`;
  - passhost with `--target PROFILE` (its default optimize stage, then the
    adapt stage the profile decides): nodes before and after (the report's
    summary), the violations left (check_target_constraints, the report's
    target section), by constraint;
  - the max abs difference between the original and the output in ONNX
    Runtime (scripts/ort_check.js: 3 seeded runs, symbolic dims 1 and 3).
--set KEY=VALUE is given to every passhost run (e.g. adapt.level=approx: the
adapt stage may then run approx passes, type_cast_narrow for npu).
Prints a markdown table and, below it, the violations left, by model.
Exit 1 when passhost fails or the outputs differ in ONNX Runtime (beyond
1e-5 + 1e-4|x|; for a profile that changes results by design, APPROX, the
difference is printed, not judged: bench/fp16.py judges fp16).
"""
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter


# profiles whose adapt stage changes results by design (convert_float16)
APPROX = {"fp16"}


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def violations(build, profile, model):
    r = run([f"{build}/bin/passhost", "--check-target", profile, model])
    m = re.match(r"target \S+: (\d+) violation", r.stdout)
    return int(m.group(1)) if m else 0


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    build, zoo = args[0], args[1]
    profiles, names, sets, rest = [], [], [], args[2:]
    while rest:
        a = rest.pop(0)
        if a == "--profile":
            profiles.append(rest.pop(0))
        elif a == "--set":
            sets += ["--set", rest.pop(0)]
        else:
            names.append(a)
    profiles = profiles or ["ort", "npu"]
    names = names or sorted(f[:-5] for f in os.listdir(zoo) if f.endswith(".onnx"))
    failed = False
    rows, left = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for profile in profiles:
            for name in names:
                model = os.path.join(zoo, name + ".onnx")
                out = os.path.join(tmp, f"{name}.{profile}.onnx")
                rep = os.path.join(tmp, "report.json")
                before = violations(build, profile, model)
                r = run([f"{build}/bin/passhost", "-q", "-i", model, "-o", out, "--target", profile,
                         "--report-json", rep] + sets)
                if r.returncode:
                    rows.append(f"| {profile} | {name} | {before} | passhost failed: {r.stderr.strip()[:80]} | | | |")
                    failed = True
                    continue
                report = json.load(open(rep))
                summary = report["summary"]
                target = report.get("target") or {"violations": []}
                after = target["violations"]
                c = run(["node", "scripts/ort_check.js", model, out, "--symbolic", "1,3"] +
                        (["--atol", "1e30"] if profile in APPROX else []))
                m = re.search(r"max abs ([0-9.e+-]+)", c.stdout.splitlines()[-1] if c.stdout else "")
                diff = m.group(1) if m and c.returncode == 0 else "MISMATCH"
                failed |= c.returncode != 0
                by_key = Counter(v["constraint"] for v in after)
                keys = ", ".join(f"{k} {n}" for k, n in by_key.most_common())
                rows.append(f"| {profile} | {name} | {summary['nodes_loaded']} | {summary['nodes_saved']} | "
                            f"{before} | {len(after)}{' (' + keys + ')' if keys else ''} | {diff} |")
                for v in after:
                    where = (v["graph"] + "/" if v["graph"] else "") + (v["node"] or "(unnamed)")
                    left.append(f"| {profile} | {name} | {where} | {v['op']} | {v['constraint']} | "
                                f"{v['value']} | {v['limit']} |")
    print("| profile | model | nodes before | nodes after | violations before | violations after | "
          "ORT max abs diff |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    if left:
        print("\nViolations left after the adapt stage:\n")
        print("| profile | model | node | op | constraint | value | limit |")
        print("|---|---|---|---|---|---|---|")
        print("\n".join(left))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
