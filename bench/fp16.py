#!/usr/bin/env python3
"""The float16 table: the fp16 profile on each zoo model, checked in ONNX Runtime.

    bench/fp16.py BUILD ZOODIR [--verify] [NAME ...]

For every ZOODIR/NAME.onnx (all of them when no NAME is given):
  - passhost --target fp16 (the default optimize stage, then convert_float16);
    with --verify, --verify=1 too (it judges the result with float16's error
    budget, docs/verify.md; about a minute per CNN on 2 busy cores, so
    `make test-zoo` leaves it out): its verdict, and the largest optimized
    error of an output as a fraction of its budget;
  - the file size before and after, and their ratio;
  - ONNX Runtime runs the converted model (scripts/ort_check.js, optimizations
    off, 3 seeded runs, symbolic dims 1 and 3): the max abs and max rel
    difference from the float32 original's outputs, and the largest output
    magnitude.
Prints a markdown table, then one line "test-fp16: passed" or "test-fp16:
FAILED: ..." naming each model and check that failed.  Exit 1 when passhost
fails (or --verify does), ONNX Runtime cannot run the converted model, or the
file is more than 0.55 of the original (float16 weights halve it; the
border Casts and the kept float32 constants cost a little).
"""
import json
import os
import re
import subprocess
import sys
import tempfile

MAX_RATIO = 0.55
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    build, zoo, names = os.path.abspath(args[0]), os.path.abspath(args[1]), args[2:]
    verify = "--verify" in names
    names = [n for n in names if n != "--verify"]
    names = names or sorted(f[:-5] for f in os.listdir(zoo) if f.endswith(".onnx"))
    rows, failures = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            model = os.path.join(zoo, name + ".onnx")
            out = os.path.join(tmp, name + ".fp16.onnx")
            rep = os.path.join(tmp, "report.json")
            r = run([f"{build}/bin/passhost", "-q", "-i", model, "-o", out, "--target", "fp16",
                     "--report-json", rep] + (["--verify=1"] if verify else []))
            if r.returncode:
                failures.append(f"{name}: passhost exit {r.returncode}: {r.stderr.strip()[-160:]}")
                rows.append(f"| {name} | passhost failed (exit {r.returncode}) | | | | | |")
                continue
            outs = (json.load(open(rep)).get("verify") or {}).get("outputs", [])
            worst = (f'{max((o["optimized_error"] / o["budget"] for o in outs if o.get("budget")), default=0):.2f}'
                     if verify else "-")
            before, after = os.path.getsize(model), os.path.getsize(out)
            ratio = after / before
            if ratio > MAX_RATIO:
                failures.append(f"{name}: size ratio {ratio:.3f} > {MAX_RATIO}")
            c = run(["node", "scripts/ort_check.js", model, out, "--symbolic", "1,3", "--atol", "1e30"])
            last = c.stdout.strip().splitlines()[-1] if c.stdout.strip() else c.stderr.strip()[-120:]
            m = re.search(r"max abs ([0-9.e+-]+|inf|NaN), max rel ([0-9.e+-]+|inf|NaN)", last)
            if c.returncode or not m:
                failures.append(f"{name}: ONNX Runtime: {last}")
                diff = rel = "not run"
            else:
                diff, rel = m.group(1), m.group(2)
            rows.append(f"| {name} | {before / 2**20:.2f} MiB | {after / 2**20:.2f} MiB | {ratio:.3f} | "
                        f"{diff} | {rel} | {worst} |")
    print("| model | size | fp16 size | ratio | ORT max abs diff | ORT max rel diff | "
          "--verify: worst error / float16 budget |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    if failures:
        print("test-fp16: FAILED: " + "; ".join(failures))
        return 1
    print(f"test-fp16: passed: {len(names)} models run in ONNX Runtime, every file <= {MAX_RATIO} of the "
          "original" + (", --verify within float16's budget" if verify else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
