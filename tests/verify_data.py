#!/usr/bin/python3
"""--verify-data with .npy files written by NumPy: inputs named after the
graph inputs (int64 indices, float32 values, big-endian too), an expected
output named after the graph output; a wrong dtype, a Fortran-order array
and a wrong expected output are refused with the file named.

    tests/verify_data.py BUILD      (tests/verify_data.sh runs it)
"""
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(SRC, "build"))
PASSHOST = os.path.join(BUILD, "bin", "passhost")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*args, code=0):
    p = subprocess.run([PASSHOST, *args], capture_output=True, text=True)
    check(p.returncode == code, f"exit {p.returncode} (want {code}) for {args}: {p.stdout}{p.stderr}")
    return p


def model(path):
    """y = Gather(emb, ids) * 2 / 2 + x: Mul and Div by constants for the passes to fold."""
    emb = numpy_helper.from_array(np.random.default_rng(1).standard_normal((20, 3)).astype(np.float32), "emb")
    two = numpy_helper.from_array(np.array(2, np.float32), "two")
    nodes = [helper.make_node("Gather", ["emb", "ids"], ["g"], name="gather"),
             helper.make_node("Mul", ["g", "two"], ["m"]),
             helper.make_node("Div", ["m", "two"], ["d"]),
             helper.make_node("Add", ["d", "x"], ["y/out:0"])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("ids", TensorProto.INT64, ["b", 5]),
                                       helper.make_tensor_value_info("x", TensorProto.FLOAT, ["b", 5, 3])],
                          [helper.make_tensor_value_info("y/out:0", TensorProto.FLOAT, None)], [emb, two])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
    return numpy_helper.to_array(emb)


def main():
    tmp = tempfile.mkdtemp(prefix="ph_verify_data.")
    try:
        m = os.path.join(tmp, "m.onnx")
        out = os.path.join(tmp, "out.onnx")
        emb = model(m)
        rng = np.random.default_rng(7)
        ids = rng.integers(0, 20, (4, 5)).astype(np.int64)
        x = rng.standard_normal((4, 5, 3)).astype(np.float32)
        d = os.path.join(tmp, "d")
        os.mkdir(d)
        np.save(os.path.join(d, "ids.npy"), ids)
        np.save(os.path.join(d, "x.npy"), x.astype(">f4"))  # big-endian: read as such
        np.save(os.path.join(d, "y_out_0.npy"), emb[ids] + x)  # '/' and ':' of the name are '_'
        p = run(m, out, "--verify-data", d)
        check("output y/out:0 against y_out_0.npy: original error" in p.stdout, f"expected line: {p.stdout}")
        check("verify: 1 data set, 1 output" in p.stdout and ": OK (and the written file)" in p.stdout, p.stdout)
        # a second folder of another batch size: the symbolic dim follows the data
        d2 = os.path.join(tmp, "d2")
        os.mkdir(d2)
        np.save(os.path.join(d2, "ids.npy"), ids[:1])
        np.save(os.path.join(d2, "x.npy"), x[:1])
        p = run(m, out, "--verify-data", d, "--verify-data", d2)
        check("verify: 2 data sets" in p.stdout, p.stdout)
        # refused: a wrong dtype, Fortran order, a wrong expected output
        np.save(os.path.join(d2, "x.npy"), x[:1].astype(np.float64))
        p = run(m, out, "--verify-data", d2, code=2)
        check("x.npy: the file holds double [1,5,3], input 'x' is float [b,5,3]" in p.stderr, p.stderr)
        np.save(os.path.join(d2, "x.npy"), np.asfortranarray(x[:1]))
        p = run(m, out, "--verify-data", d2, code=2)
        check("Fortran order" in p.stderr, p.stderr)
        np.save(os.path.join(d, "y_out_0.npy"), emb[ids] + x + np.float32(1e-3))
        p = run(m, out, "--verify-data", d, code=7)
        check("the original model does not compute" in p.stderr and "y_out_0.npy" in p.stderr, p.stderr)
        check(not os.path.exists(out) or os.path.getsize(out) > 0, "no half-written output")
    finally:
        shutil.rmtree(tmp)
    print("verify_data: %s" % ("ok" if not failures else f"{len(failures)} failures"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
