#!/usr/bin/env python3
"""The real-model table: passhost's default optimize stage against ONNX
Runtime's basic level on the models of bench/gen_zoo.py.

    bench/zoo.py BUILD ZOODIR [--latency] [--target ort] [NAME ...]

For every ZOODIR/NAME.onnx (all of them when no NAME is given):
  - passhost's default stages (BUILD/bin/passhost -i M -o OUT): nodes before
    and after, the passes that rewrote something, passhost's own wall time
    (the summary line's) without the save and with it: loading the plugins
    and the model, shape inference and the stages are what ORT's session
    creation does too (it reads the model, optimizes it and writes nothing),
    while the save writes the output durably (a temporary file, fsync, then
    a rename over the previous output);
  - ONNX Runtime at its basic level (scripts/ort_bench.js --save-optimized):
    the nodes its optimized graph keeps, and the session creation time
    (passhost's and ORT's times: the best of 3 runs);
  - the max abs difference between the original and passhost's output in
    ONNX Runtime, optimizations off (scripts/ort_check.js, 3 seeded runs,
    symbolic dims 1 and 3);
  - passhost --verify with the defaults (the error budget against the
    float64 reference, docs/verify.md): the largest optimized error of an
    output as a fraction of its budget ("0.25": a quarter of it), and the
    outputs' lines "NAME: original error / optimized error / budget";
  - with --latency: ORT inference latency (median of 20 runs, 1 thread,
    symbolic dims 16) of the original and of passhost's output,
    optimizations disabled and basic;
  - with --target ort, passhost also runs with `--set adapt.target=ort` and
    the latency columns are those of that output.
Prints a markdown table, then one line: "test-zoo: passed: ..." or
"test-zoo: FAILED: ..." naming each model and check that failed.  Exit 1
when a check fails: outputs differ beyond 1e-4, --verify fails, passhost leaves more nodes than ORT's basic level, the optimize stage
needs more than 6 rounds to settle (its cap is 16), or passhost fails.  Node
counts are the main graph's; "layout nodes" counts Transpose, Reshape,
Flatten, Squeeze and Unsqueeze.
"""
import json
import os
import re
import subprocess
import sys

import onnx

MAX_ROUNDS = 6  # the default optimize stage's cap is 16
REPEAT = 3  # passhost and ORT session times: the best of 3
LATENCY_DIM = 16  # symbolic dims (batch, sequence) in the latency runs
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def nodes(path):
    return len(onnx.load(path, load_external_data=False).graph.node)


def layout_nodes(path):
    """Transpose and Reshape-like nodes of the main graph."""
    ops = {"Transpose", "Reshape", "Flatten", "Squeeze", "Unsqueeze"}
    return sum(n.op_type in ops for n in onnx.load(path, load_external_data=False).graph.node)


def run(cmd):
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def ort_bench(model, level, save=None, runs=0, symbolic=1):
    cmd = ["node", "scripts/ort_bench.js", model, "--level", level, "--runs", str(runs), "--warm",
           "--symbolic", str(symbolic)]
    if save:
        cmd += ["--save-optimized", save]
    rc, out = run(cmd)
    if rc:
        raise RuntimeError(f"ort_bench {model} {level}: {out.strip()}")
    return json.loads(out.strip().splitlines()[-1])


def passhost(build, model, out, extra):
    rc, text = run([os.path.join(build, "bin", "passhost"), "-v", "-i", model, "-o", out] + extra)
    if rc:
        raise RuntimeError(f"passhost {model}: exit {rc}\n{text}")
    fired = []
    for line in text.splitlines():
        # pass, calls, rewrites, then the other figures
        m = re.match(r"\s+([a-z0-9_.]+)\s+(\d+)\s+(\d+)\s+[\d.]+\s", line)
        if m and m.group(1) != "total" and int(m.group(3)) > 0:
            fired.append(f"{m.group(1)} {m.group(3)}")
    total = re.search(r"nodes \d+ -> \d+, ([\d.]+) ms", text)
    save = re.search(r"save ([\d.]+) ms", text)
    rounds = re.search(r"stage optimize: (\d+) rounds?", text)
    ms = float(total.group(1)) if total else float("nan")
    return fired, (ms, ms - float(save.group(1)) if save else float("nan")), int(rounds.group(1)) if rounds else -1


def verify(build, model, out):
    """passhost --verify: (ok, worst optimized error / budget, the outputs' lines)."""
    rc, text = run([os.path.join(build, "bin", "passhost"), "-i", model, "-o", out, "--verify", "-v"])
    lines, worst = [], 0.0
    for m in re.finditer(r"^  output (\S+)\s+original error (\S+)\s+optimized error (\S+)\s+budget (\S+)",
                         text, re.M):
        lines.append(f"{m.group(1)}: {m.group(2)} / {m.group(3)} / {m.group(4)}")
        worst = max(worst, float(m.group(3)) / float(m.group(4)))
    return rc == 0 and lines, worst, lines


def max_abs(orig, new):
    rc, out = run(["node", "scripts/ort_check.js", orig, new, "-q", "--runs", "3", "--symbolic", "1,3",
                   "--atol", "1e-4", "--rtol", "0"])
    m = re.search(r"max abs (\S+)", out)
    return rc, (m.group(1).rstrip(",") if m else out.strip())


def main():
    args = sys.argv[1:]
    latency = "--latency" in args
    target = None
    if "--target" in args:
        target = args[args.index("--target") + 1]
        del args[args.index("--target"):args.index("--target") + 2]
    args = [a for a in args if a != "--latency"]
    if len(args) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    build, zoo = os.path.abspath(args[0]), os.path.abspath(args[1])
    names = args[2:] or sorted(f[:-5] for f in os.listdir(zoo) if f.endswith(".onnx"))
    work = os.path.join(build, "zoo")
    os.makedirs(work, exist_ok=True)
    failed = 0
    rows, lat_rows, verify_rows, failures = [], [], [], []
    for name in names:
        model = os.path.join(zoo, name + ".onnx")
        out = os.path.join(work, name + ".opt.onnx")
        ort_basic = os.path.join(work, name + ".ort_basic.onnx")
        # times: the best of REPEAT runs each (the machine may be busy)
        try:
            fired, ms, rounds = passhost(build, model, out, [])
        except RuntimeError as e:
            failed += 1
            failures.append(f"{name} (passhost failed: {str(e).splitlines()[0]})")
            continue
        times = [ms] + [passhost(build, model, out, [])[1] for _ in range(REPEAT - 1)]
        ms, ms_work = min(t[0] for t in times), min(t[1] for t in times)
        basic = ort_bench(model, "basic", save=ort_basic)
        basic["create_ms"] = min([basic["create_ms"]] +
                                 [ort_bench(model, "basic")["create_ms"] for _ in range(REPEAT - 1)])
        vok, worst, vlines = verify(build, model, os.path.join(work, name + ".verify.onnx"))
        verify_rows.append(f"| {name} | {'OK' if vok else 'FAIL'} | {worst:.2f} | {'<br>'.join(vlines)} |")
        rc, err = max_abs(model, out)
        ort_ok = rc == 0
        ok = ort_ok and bool(vok)
        n0, n1, nb = nodes(model), nodes(out), nodes(ort_basic)
        l1, lb = layout_nodes(out), layout_nodes(ort_basic)
        # the stage must settle well under its cap (max_iterations, 16)
        settled = 0 < rounds <= MAX_ROUNDS
        if not ok or n1 > nb or not settled:
            failed += 1
            why = [w for w, bad in (("outputs differ in ORT", not ort_ok), ("--verify failed", not vok), (f"{n1} nodes, ORT basic {nb}", n1 > nb),
                                    (f"{rounds} rounds", not settled)) if bad]
            failures.append(f"{name} ({', '.join(why)})")
        rows.append(f"| {name} | {n0} | {n1} | {nb} | {l1} / {lb} | {rounds}{'' if settled else ' FAIL'} | {ms_work:.0f} / {ms:.0f} "
                    f"| {basic['create_ms']:.0f} | {err}{'' if ok else ' FAIL'} | {', '.join(fired) or '-'} |")
        if latency:
            lat_model = out
            if target:
                lat_model = os.path.join(work, f"{name}.{target}.onnx")
                passhost(build, model, lat_model, ["--set", f"adapt.target={target}"])
                rc2, err2 = max_abs(model, lat_model)
                if rc2:
                    failed += 1
                    err2 += " FAIL"
                    failures.append(f"{name} (target {target}: outputs differ in ORT)")
            cells = []
            for m in (model, lat_model):
                for level in ("disabled", "basic"):
                    cells.append(f"{ort_bench(m, level, runs=20, symbolic=LATENCY_DIM)['run_ms_median']:.2f}")
            lat_rows.append(f"| {name} | {' | '.join(cells)} |" + (f" {err2} |" if target else ""))
        sys.stdout.flush()
    print("| model | nodes | passhost | ORT basic | layout nodes passhost / ORT basic | rounds | passhost ms: all but the save / whole run "
          "| ORT basic session ms | max abs (ORT) | passes that fired (rewrites) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    print("\n".join(rows))
    print()
    print("| model | passhost --verify | worst optimized error / budget | output: original error / optimized error / budget |")
    print("|---|---|---:|---|")
    print("\n".join(verify_rows))
    if latency:
        what = f"passhost target={target}" if target else "passhost"
        print()
        print(f"| model | original, ORT disabled ms | original, ORT basic ms | {what}, ORT disabled ms | {what}, ORT basic ms |"
              + (" max abs |" if target else ""))
        print("|---|---:|---:|---:|---:|" + ("---:|" if target else ""))
        print("\n".join(lat_rows))
    print()
    if failed:
        print(f"test-zoo: FAILED: {failed} of {len(names)} model checks: {'; '.join(failures)}")
    else:
        print(f"test-zoo: passed: {len(names)} model{'' if len(names) == 1 else 's'}: outputs equal in ONNX Runtime, no more nodes than "
              f"its basic level, settled in {MAX_ROUNDS} rounds or fewer")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
