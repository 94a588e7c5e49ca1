#!/usr/bin/python3
"""--report-json: the report validates against docs/report.schema.json and
holds the same figures as the text report of the same run; its effective
configuration reproduces the run; a failed run's report validates too.

    tests/report_json.py BUILD      (tests/report_json.sh runs it)
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import jsonschema

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(SRC, "build"))
PASSHOST = os.path.join(BUILD, "bin", "passhost")
SCHEMA = json.load(open(os.path.join(SRC, "docs", "report.schema.json")))
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*args, code=0):
    p = subprocess.run([PASSHOST, *args], capture_output=True, text=True)
    check(p.returncode == code, f"exit {p.returncode} (want {code}) for {args}: {p.stderr}")
    return p


def validate(path):
    report = json.load(open(path))
    errors = sorted(jsonschema.Draft202012Validator(SCHEMA).iter_errors(report), key=str)
    for e in errors:
        check(False, f"{path}: schema: {e.message} at {list(e.absolute_path)}")
    return report


def close(text_value, json_value, decimals):
    return abs(float(text_value) - round(json_value, decimals)) <= 1.5 * 10 ** -decimals


def compare_with_text(text, rep):
    lines = text.splitlines()
    stages = {s["name"]: s for s in rep["stages"]}
    i = 0
    while i < len(lines):
        m = re.match(r"stage (\w+)(?:, target \S+)?: (\d+) rounds?(?: \(cap reached, no fixpoint\))?, "
                     r"([\d.]+) ms, nodes (\d+) -> (\d+)$", lines[i])
        if not m:
            i += 1
            continue
        st = stages[m.group(1)]
        check(int(m.group(2)) == st["rounds"], f"rounds of {st['name']}")
        check(close(m.group(3), st["ms"], 2), f"ms of {st['name']}: {m.group(3)} vs {st['ms']}")
        check(int(m.group(4)) == st["nodes_before"] and int(m.group(5)) == st["nodes_after"],
              f"nodes of {st['name']}")
        i += 3  # header, column titles, rule
        passes = {p["name"]: p for p in st["passes"]}
        seen = 0
        while i < len(lines) and lines[i].startswith("  ") and not lines[i].startswith("  ("):
            cells = lines[i].split()
            if cells[0] == "total":
                check(int(cells[1]) == sum(p["calls"] for p in st["passes"]), "total calls")
                check(int(cells[2]) == sum(p["rewrites"] for p in st["passes"]), "total rewrites")
                check(close(cells[3], st["ms"], 3), "total ms")
                check(int(cells[4]) == sum(p["node_change"] for p in st["passes"]), "total change")
                i += 1
                break
            if cells[0] == "(checks":
                other = max(st["ms"] - sum(p["ms"] for p in st["passes"]), st["check_ms"])
                check(close(cells[3], other, 3), f"checks row {cells[3]} vs {other}")
                i += 1
                continue
            name = cells[0]
            off = 2 if len(cells) > 1 and cells[1] == "(once)" else 1
            p = passes[name]
            check(int(cells[off]) == p["calls"], f"{name} calls")
            check(int(cells[off + 1]) == p["rewrites"], f"{name} rewrites")
            check(close(cells[off + 2], p["ms"], 3), f"{name} ms {cells[off + 2]} vs {p['ms']}")
            check(int(cells[off + 3]) == p["node_change"], f"{name} node change")
            seen += 1
            i += 1
        check(seen == len(st["passes"]), f"rows of {st['name']}: {seen} vs {len(st['passes'])}")
    # the calls add up to the per-pass figures
    for st in rep["stages"]:
        for p in st["passes"]:
            calls = [c for c in rep["calls"] if c["stage"] == st["name"] and c["pass"] == p["name"]]
            check(len(calls) == p["calls"], f"calls of {p['name']}")
            check(sum(c["rewrites"] for c in calls) == p["rewrites"], f"call rewrites of {p['name']}")
            check(sum(c["nodes_after"] - c["nodes_before"] for c in calls) == p["node_change"],
                  f"call node changes of {p['name']}")
    m = re.search(r"^load ([\d.]+) ms, passes ([\d.]+) ms, save ([\d.]+) ms$", text, re.M)
    check(m and close(m.group(1), rep["times_ms"]["load"], 2) and close(m.group(2), rep["times_ms"]["passes"], 2)
          and close(m.group(3), rep["times_ms"]["save"], 2), "load/passes/save line")
    m = re.search(r"^passhost: (.*) -> (.*): (\d+) pass(?:es)?, (\d+) rewrites?, nodes (\d+) -> (\d+), ([\d.]+) ms$",
                  text, re.M)
    s = rep["summary"]
    check(m and m.group(1) == rep["input"] and m.group(2) == rep["output"], "summary names")
    check(m and [int(m.group(k)) for k in (3, 4, 5, 6)] == [s["passes"], s["rewrites"], s["nodes_loaded"],
                                                            s["nodes_saved"]], "summary figures")
    check(m and close(m.group(7), rep["times_ms"]["total"], 2), "total ms")
    # the input/output table
    m = re.search(r"^nodes\s+(\d+)\s+(\d+)", text, re.M)
    check(m and int(m.group(1)) == rep["models"]["input"]["nodes"] and int(m.group(2)) == rep["models"]["output"]["nodes"],
          "nodes row of the table")
    for model in ("input", "output"):
        mi = rep["models"][model]
        check(sum(mi["op_types"].values()) == mi["nodes"], f"op types of the {model} add up")
    for op, n in rep["models"]["input"]["op_types"].items():
        m = re.search(r"^  " + re.escape(op) + r"\s+(\d+)\s+(\d+|-)", text, re.M)
        out = rep["models"]["output"]["op_types"].get(op, 0)
        check(m and int(m.group(1)) == n and int(m.group(2).replace("-", "0")) == out, f"op row {op}")
    # verification
    v = rep["verify"]
    check(v["mode"] == "budget" and v["reference"]["float64"] is True, "the error budget judged the outputs")
    for o in v["outputs"]:
        m = re.search(r"^  output " + re.escape(o["name"]) +
                      r"\s+original error (\S+)\s+optimized error (\S+)\s+budget (\S+)", text, re.M)
        check(m and [m.group(k) for k in (1, 2, 3)] ==
              [f"{o[k]:.3g}" for k in ("original_error", "optimized_error", "budget")],
              f"verify figures of {o['name']}")
        check(o["optimized_error"] <= o["budget"] and o["ok"], f"{o['name']} within its budget")
    m = re.search(r"^verify: (\d+) runs?, (\d+) outputs?, max abs (\S+), max rel (\S+); [^:]*: (OK|MISMATCH)",
                  text, re.M)
    check(m and int(m.group(1)) == v["runs"] and int(m.group(2)) == len(v["outputs"]) and
          (m.group(5) == "OK") == v["ok"], "verify verdict")
    check(m and m.group(3) == f"{max(o['max_abs'] for o in v['outputs']):.3g}", "verdict max abs")
    m = re.search(r"^verify-each: .* each of the (\d+) pass calls? that changed it \(of (\d+)\)", text, re.M)
    check(m and int(m.group(1)) == rep["verify_each"]["calls_checked"] and int(m.group(2)) == len(rep["calls"]),
          "verify-each verdict")


def main():
    tmp = tempfile.mkdtemp(prefix="ph_report_json.")
    try:
        model = os.path.join(tmp, "cnn_small.onnx")
        shutil.copy(os.path.join(SRC, "models", "cnn_small.onnx"), model)
        out = os.path.join(tmp, "out.onnx")
        rj = os.path.join(tmp, "r.json")
        p = run(model, out, "--verify=2", "--verify-each", "-v", "--report-json", rj)
        rep = validate(rj)
        check(rep["status"] == {"exit_code": 0, "ok": True, "error": None}, "status")
        compare_with_text(p.stdout, rep)
        # the effective configuration runs the same passes to the same bytes
        ini = os.path.join(tmp, "effective.ini")
        open(ini, "w").write(rep["config"]["ini"])
        again = os.path.join(tmp, "again.onnx")
        run(ini, "-o", again, "-q")
        check(open(out, "rb").read() == open(again, "rb").read(), "the effective config reproduces the output")
        # with --passes (an order of its own), the same
        rj2 = os.path.join(tmp, "r2.json")
        run(model, out, "-q", "--passes=fuse_conv_bn,eliminate_identity,eliminate_nop_pool", "--report-json", rj2)
        rep2 = validate(rj2)
        check([p["name"] for p in rep2["stages"][0]["passes"]] ==
              ["fuse_conv_bn", "eliminate_identity", "eliminate_nop_pool"], "--passes order in the report")
        open(ini, "w").write(rep2["config"]["ini"])
        run(ini, "-o", again, "-q", "--report-json", rj2)
        check([p["name"] for p in validate(rj2)["stages"][0]["passes"]] ==
              ["fuse_conv_bn", "eliminate_identity", "eliminate_nop_pool"], "the effective config keeps the order")
        check(open(out, "rb").read() == open(again, "rb").read(), "the effective config of --passes reproduces")
        # a failed run: a pass that breaks the outputs, --verify
        plugins = os.path.join(tmp, "plugins")
        os.mkdir(plugins)
        shutil.copy(os.path.join(BUILD, "test-plugins", "tp_wrong_math.so"), plugins)
        rj3 = os.path.join(tmp, "r3.json")
        bad = os.path.join(tmp, "bad.onnx")
        run(model, bad, "--plugin-dir", plugins, "--passes=tp_wrong_math", "--verify", "--report-json", rj3, code=7)
        rep3 = validate(rj3)
        check(not os.path.exists(bad), "nothing written")
        check(rep3["status"]["exit_code"] == 7 and "differs" in rep3["status"]["error"], "failed status")
        check(rep3["verify"]["ok"] is False and rep3["verify"]["outputs"][0]["mismatches"] > 0, "mismatch figures")
        check(rep3["models"]["output"] is None and rep3["models"]["input"]["nodes"] == 26, "models of a failed run")
        # a pass that fails: its call is in the timeline, marked failed
        shutil.copy(os.path.join(BUILD, "test-plugins", "tp_fail.so"), plugins)
        rj4 = os.path.join(tmp, "r4.json")
        run(model, bad, "--plugin-dir", plugins, "--passes=eliminate_identity,tp_fail", "-q",
            "--report-json", rj4, code=5)
        rep4 = validate(rj4)
        check(rep4["calls"][-1]["pass"] == "tp_fail" and rep4["calls"][-1]["rewrites"] == -1,
              "the failed call")
        check(rep4["status"]["error"] == "pass tp_fail: failed: deliberate failure", "the failed pass's error")
        # real data with expected outputs (libonnx-testdata), and fixed tolerances
        data = "/usr/share/libonnx-testdata/data/node/test_sub"
        if os.path.isdir(data):
            rj5 = os.path.join(tmp, "r5.json")
            run(os.path.join(data, "model.onnx"), out, "-q", "--verify-data", os.path.join(data, "test_data_set_0"),
                "--report-json", rj5)
            v5 = validate(rj5)["verify"]
            check(v5["data"] == [os.path.join(data, "test_data_set_0")] and len(v5["expected"]) == 1 and
                  v5["expected"][0]["ok"] and v5["expected"][0]["file"].endswith("output_0.pb") and
                  v5["expected"][0]["file_error"] <= v5["expected"][0]["budget"], "expected outputs in the report")
            run(model, out, "-q", "--verify-atol", "1e-3", "--report-json", rj5)
            v5 = validate(rj5)["verify"]
            check(v5["mode"] == "tolerance" and v5["atol"] == 1e-3 and v5["rtol"] == 1e-4, "fixed tolerances")
        # the schema refuses what is not a report
        broken = dict(rep3)
        broken["summary"] = {"passes": -1}
        check(not jsonschema.Draft202012Validator(SCHEMA).is_valid(broken), "the schema can fail")
    finally:
        shutil.rmtree(tmp)
    print("report_json: %s" % ("ok" if not failures else f"{len(failures)} failures"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
