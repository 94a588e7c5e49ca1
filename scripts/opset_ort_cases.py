#!/usr/bin/env python3
"""convert_opset's adapters checked in ONNX Runtime, one small model each.

    scripts/opset_ort_cases.py BUILD

Each case is a model written with onnx.helper at one opset; passhost runs
convert_opset alone (--passes='adapt(convert_opset<opset=RANGE>)') and
scripts/ort_check.js compares the result with the original in ONNX Runtime
(seeded random inputs, |diff| <= 1e-5 + 1e-4 |want|).  Covers the versions
passhost's own evaluator does not run (Upsample, Resize 10, TopK 1), so the
unit tests' structural checks get a numeric one here.  Prints one line per
case; exits 1 when one fails, 2 when onnx or node is missing.
"""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper, save
except ImportError:
    print("opset_ort_cases: python3-onnx not installed", file=sys.stderr)
    sys.exit(2)

F = TensorProto.FLOAT
HERE = os.path.dirname(os.path.abspath(__file__))


def const(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def model(opset, nodes, inputs, outputs, inits=()):
    g = helper.make_graph(nodes, "case", [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                          [helper.make_tensor_value_info(n, t, None) for n, t in outputs], list(inits))
    ir = 3 if opset < 9 else 7 if opset < 15 else 8 if opset < 19 else 9
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=ir)


def N(op, i, o, **kw):
    return helper.make_node(op, i, o, **kw)


X4 = [("x", F, [1, 2, 3, 4])]
CASES = [
    ("resize13_scales_to10", "10", model(13, [N("Resize", ["x", "", "s"], ["y"], coordinate_transformation_mode="asymmetric",
                                                nearest_mode="floor")], X4, [("y", F)],
                                         [const("s", np.array([1, 1, 2, 3], np.float32))])),
    ("resize13_sizes_to8_upsample", "8", model(13, [N("Resize", ["x", "", "", "z"], ["y"],
                                                      coordinate_transformation_mode="asymmetric", nearest_mode="floor")],
                                               X4, [("y", F)], [const("z", np.array([1, 2, 6, 12], np.int64))])),
    ("upsample9_nearest3_to11", "11", model(9, [N("Upsample", ["x", "s"], ["y"])], X4, [("y", F)],
                                            [const("s", np.array([1, 1, 3, 3], np.float32))])),
    ("upsample7_linear_to13", "13", model(7, [N("Upsample", ["x"], ["y"], mode="linear", scales=[1.0, 1.0, 2.0, 2.0])],
                                          X4, [("y", F)])),
    ("topk11_to9", "9", model(11, [N("TopK", ["x", "k"], ["v", "i"], axis=3)], X4, [("v", F), ("i", TensorProto.INT64)],
                              [const("k", np.array([2], np.int64))])),
    ("topk9_to11", "11", model(9, [N("TopK", ["x"], ["v", "i"], k=3, axis=-1)], X4, [("v", F), ("i", TensorProto.INT64)])),
    ("softmax11_axis1_to13", "13", model(11, [N("Softmax", ["x"], ["y"], axis=1)], X4, [("y", F)])),
    ("logsoftmax13_axis1_to11", "11", model(13, [N("LogSoftmax", ["x"], ["y"], axis=1)], X4, [("y", F)])),
    ("hardmax13_axis2_to11", "11", model(13, [N("Hardmax", ["x"], ["y"], axis=2)], X4, [("y", F)])),
    ("slice13_to9", "9", model(13, [N("Slice", ["x", "b", "e", "a"], ["y"])], X4, [("y", F)],
                               [const("b", np.array([1, 0], np.int64)), const("e", np.array([3, -1], np.int64)),
                                const("a", np.array([2, 3], np.int64))])),
    ("pad13_to10", "10", model(13, [N("Pad", ["x", "p", "v"], ["y"])], X4, [("y", F)],
                               [const("p", np.array([0, 0, 1, 2, 0, 1, 0, 1], np.int64)),
                                const("v", np.array(0.5, np.float32))])),
    ("pad9_reflect_to13", "13", model(9, [N("Pad", ["x"], ["y"], mode="reflect", pads=[0, 0, 1, 1, 0, 0, 1, 1])], X4,
                                      [("y", F)])),
    ("clip13_to10", "10", model(13, [N("Clip", ["x", "lo", "hi"], ["y"])], X4, [("y", F)],
                                [const("lo", np.array(-0.25, np.float32)), const("hi", np.array(0.5, np.float32))])),
    ("clip10_to13", "13", model(10, [N("Clip", ["x"], ["y"], min=-0.5, max=0.25)], X4, [("y", F)])),
    ("split13_to11", "11", model(13, [N("Split", ["x", "s"], ["a", "b"], axis=3)], X4, [("a", F), ("b", F)],
                                 [const("s", np.array([1, 3], np.int64))])),
    ("squeeze_unsqueeze13_to11", "11", model(13, [N("Unsqueeze", ["x", "a"], ["u"]), N("ReduceSum", ["u", "r"], ["s"]),
                                                  N("Squeeze", ["s", "a"], ["y"])], X4, [("y", F)],
                                             [const("a", np.array([0], np.int64)), const("r", np.array([2], np.int64))])),
    ("reducesum11_to13", "13", model(11, [N("ReduceSum", ["x"], ["y"], axes=[1, 3], keepdims=0)], X4, [("y", F)])),
    ("dropout13_to11", "11", model(13, [N("Dropout", ["x", "r"], ["y"])], X4, [("y", F)],
                                   [const("r", np.array(0.3, np.float32))])),
    ("layernorm17_to11", "11", model(17, [N("LayerNormalization", ["x", "g", "b"], ["y"], axis=-2, epsilon=1e-3)], X4,
                                     [("y", F)], [const("g", np.linspace(0.5, 2, 12, dtype=np.float32).reshape(3, 4)),
                                                  const("b", np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4))])),
    ("hardswish14_to11", "11", model(14, [N("HardSwish", ["x"], ["y"])], X4, [("y", F)])),
    ("greaterorequal12_to11", "11", model(12, [N("GreaterOrEqual", ["x", "c"], ["y"])], X4, [("y", TensorProto.BOOL)],
                                          [const("c", np.array([0.0, 0.5, -0.5, 0.25], np.float32))])),
    ("gemm13_noC_to9", "9", model(13, [N("Gemm", ["m", "w"], ["y"])], [("m", F, [2, 4])], [("y", F)],
                                  [const("w", np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3))])),
    ("bn9_to14", "14", model(9, [N("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"])], X4, [("y", F)],
                             [const("s", np.array([0.5, 2], np.float32)), const("b", np.array([0.1, -0.2], np.float32)),
                              const("m", np.array([0.3, -0.1], np.float32)), const("v", np.array([0.9, 1.5], np.float32))])),
]

# A Loop whose body has an Unsqueeze and a Softmax over axis 0.
body = helper.make_graph(
    [N("Identity", ["cin"], ["cout"]), N("Softmax", ["v"], ["sm"], axis=0), N("Unsqueeze", ["sm", "z"], ["u"]),
     N("Squeeze", ["u", "z"], ["vo"])], "body",
    [helper.make_tensor_value_info("i", TensorProto.INT64, []), helper.make_tensor_value_info("cin", TensorProto.BOOL, []),
     helper.make_tensor_value_info("v", F, [3, 4])],
    [helper.make_tensor_value_info("cout", TensorProto.BOOL, []), helper.make_tensor_value_info("vo", F, [3, 4])],
    [const("z", np.array([0], np.int64))])
CASES.append(("loop_body13_to11", "11", model(13, [N("Loop", ["n", "c", "x"], ["y"], body=body)], [("x", F, [3, 4])],
                                              [("y", F)], [const("n", np.array(2, np.int64)),
                                                           const("c", np.array(True))])))


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    build = sys.argv[1]
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, rng, m in CASES:
            src, out = os.path.join(tmp, name + ".onnx"), os.path.join(tmp, name + ".out.onnx")
            save(m, src)
            r = subprocess.run([f"{build}/bin/passhost", "-q", "-i", src, "-o", out,
                                f"--passes=adapt(convert_opset<opset={rng}>)"], capture_output=True, text=True)
            if r.returncode:
                print(f"FAIL {name}: passhost: {r.stderr.strip()}")
                failed += 1
                continue
            r = subprocess.run(["node", os.path.join(HERE, "ort_check.js"), src, out, "-q"], capture_output=True,
                               text=True)
            line = (r.stdout + r.stderr).strip().splitlines()
            print(("ok   " if r.returncode == 0 else "FAIL ") + name + ": " + (line[-1] if line else ""))
            failed += r.returncode != 0
    print(f"opset_ort_cases: {len(CASES) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
