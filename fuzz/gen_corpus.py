#!/usr/bin/python3
"""Write the seed corpora of the fuzzers (fuzz/corpus/NAME) and fuzz/config.dict.

  /usr/bin/python3 fuzz/gen_corpus.py

Models (fuzz/corpus/load and fuzz/corpus/pipeline, the same files):
  - tiny versions of the bundled models, made by the same torch code as
    scripts/gen_models.py (cnn_small at width 4, transformer_block at d=8);
  - tests/models/control_flow.onnx, unknown_fields.onnx, external_data.onnx
    (the fuzzers put a 4224-byte external_data.bin beside every input);
  - small torch exports with the operators the passes look for (Conv1d/3d,
    grouped and depthwise Conv, pixel shuffle, Resize, LayerNorm, GELU,
    Einsum, Split, Slice, Cast, ...);
  - onnx.helper graphs, one per family of passes, with the patterns they
    rewrite (no-op Pad/Slice/Expand/Reshape/Transpose/Cast, Dropout, QDQ
    pairs, Constant nodes, duplicate initializers, dynamic Reshape, ...),
    at opsets 11 and 17 so attribute and input forms both occur;
  - hostile models: bodies nested in bodies (If/Loop/Scan), If nested 31
    deep (the most the loader reads) and 32 deep (refused), attributes of
    the wrong type, unknown operators and domains, and external data at
    every kind of file the fuzzers put beside the input (a FIFO, a folder,
    a socket, a device, links; fuzz/support/fuzz_support.c).
Dictionaries fuzz/load.dict and fuzz/pipeline.dict: those file names and
the operator and attribute names the loader checks.
Configs (fuzz/corpus/config): configs/*.ini, configs/targets/*.ini and
variants; after a NUL byte, `--set` overrides one a line (see fuzz/config.c).

Files named crash-*.onnx / crash-*.ini are not made here: they are inputs
on which a fuzzer found a bug, kept as regression tests (replayed by
tests/test_fuzz_corpus.c); the script leaves them alone.

Deterministic: fixed seeds, so running it twice writes the same bytes.  Every
model is checked with onnx.checker.  Keep the corpora small: the script
prints the total size (a few hundred KB at most).
"""

import glob
import os
import sys
import warnings

import numpy as np
import onnx
import torch
from onnx import TensorProto as TP, helper, numpy_helper

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import gen_models  # noqa: E402  (the bundled models' torch code)

FUZZ = os.path.join(ROOT, "fuzz")
MODEL_CORPORA = ("load", "pipeline")
F, I64, B = TP.FLOAT, TP.INT64, TP.BOOL


def export(net, args, names_in, names_out, opset, dynamic=None, training=None):
    net.eval()
    import io
    buf = io.BytesIO()
    kw = {}
    if training is not None:
        kw["training"] = training
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(net, args, buf, opset_version=opset, do_constant_folding=False,
                          input_names=names_in, output_names=names_out,
                          dynamic_axes=dynamic or {}, **kw)
    return buf.getvalue()


# --------------------------------------------------------------- torch nets

def cnn_tiny():
    torch.manual_seed(1)
    net = gen_models.CnnSmall(width=4, classes=3)
    gen_models.randomize_bn(net, torch.Generator().manual_seed(2))
    x = torch.randn(1, 3, 8, 8)
    return export(net, (x,), ["input"], ["logits"], 13,
                  {"input": {0: "batch"}, "logits": {0: "batch"}},
                  training=torch.onnx.TrainingMode.PRESERVE)


def transformer_tiny():
    torch.manual_seed(3)
    net = gen_models.TransformerBlock(d=8, heads=2, hidden=16, classes=3)
    x = torch.randn(1, 4, 8)
    return export(net, (x,), ["tokens"], ["hidden", "logits", "gram", "sim", "present_k"], 13,
                  {"tokens": {0: "batch", 1: "seq"}})


class Convs(torch.nn.Module):
    """Conv1d+BN1d, Conv3d, grouped and depthwise Conv2d, pixel shuffle,
    channel shuffle, Pad+Conv, Resize, PReLU, pools, ReduceMean, Linear."""

    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv1d(2, 4, 3, padding=1)
        self.bn1 = torch.nn.BatchNorm1d(4)
        self.c3 = torch.nn.Conv3d(1, 2, (1, 3, 3), padding=(0, 1, 1))
        self.g = torch.nn.Conv2d(4, 4, 3, padding=1, groups=2)
        self.dw = torch.nn.Conv2d(4, 4, 3, padding=1, groups=4)
        self.pw = torch.nn.Conv2d(4, 8, 1)
        self.pad_conv = torch.nn.Conv2d(2, 2, 3)
        self.prelu = torch.nn.PReLU(2)
        self.fc = torch.nn.Linear(2, 3)

    def forward(self, a, v, x):
        y1 = torch.relu(self.bn1(self.c1(a)))
        y3 = self.c3(v).squeeze(2)
        y = self.dw(torch.nn.functional.relu6(self.g(x)))
        y = self.pw(y)
        b, c, h, w = y.shape
        y = y.view(b, 2, c // 2, h, w).transpose(1, 2).reshape(b, c, h, w)  # channel shuffle
        y = torch.nn.functional.pixel_shuffle(y, 2)                          # DepthToSpace
        y = torch.nn.functional.interpolate(y, scale_factor=0.5, mode="nearest")
        p = self.pad_conv(torch.nn.functional.pad(y3, (1, 1, 1, 1)))
        p = self.prelu(p) + torch.nn.functional.avg_pool2d(p, 1)
        m = p.mean(dim=(2, 3))
        return y1, y, self.fc(m), torch.sigmoid(m) * m


def convs():
    torch.manual_seed(4)
    net = Convs()
    gen_models.randomize_bn(net, torch.Generator().manual_seed(5))
    with torch.no_grad():
        net.bn1.running_var.fill_(1.5)
    args = (torch.randn(1, 2, 6), torch.randn(1, 1, 1, 4, 4), torch.randn(1, 4, 4, 4))
    return export(net, args, ["a", "v", "x"], ["y1", "y", "fc", "silu"], 13)


class Seq(torch.nn.Module):
    """LayerNorm (opset 17: LayerNormalization), GELU, Einsum, Split, Stack,
    strided Slice, Cast, Where, comparisons, Expand, Gather, Concat."""

    def __init__(self):
        super().__init__()
        self.ln = torch.nn.LayerNorm(6)
        self.w = torch.nn.Parameter(torch.randn(6, 6) * 0.2)

    def forward(self, x, idx):
        y = torch.nn.functional.gelu(self.ln(x))
        y = torch.einsum("bsd,de->bse", y, self.w)
        a, b = torch.split(y, [2, 4], dim=-1)
        s = torch.stack([a[..., 0], a[..., 1]], dim=-1)
        z = y[:, ::2, 1:5]
        h = z.to(torch.float16).to(torch.float32)
        w = torch.where(h > 0, h, torch.zeros_like(h))
        e = w.unsqueeze(1).expand(-1, 2, -1, -1).squeeze(0)
        g = torch.index_select(b, 1, idx)
        return torch.cat([s, s], dim=-1), e, g


def seq17():
    torch.manual_seed(6)
    x = torch.randn(1, 4, 6)
    idx = torch.tensor([0, 2], dtype=torch.int64)
    return export(Seq(), (x, idx), ["x", "idx"], ["cat", "e", "g"], 17,
                  {"x": {1: "seq"}})


# ------------------------------------------------------------ helper graphs

def tensor(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def model(nodes, inputs, outputs, inits=(), opset=17, name="g"):
    g = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="passhost-fuzz-corpus")
    m.ir_version = 8
    return m


def vi(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def nops(opset):
    """A chain of no-ops for the eliminate_* passes."""
    n = helper.make_node
    rng = np.random.default_rng(7)
    inits = [
        tensor("zero_pads", np.zeros(8, np.int64)),
        tensor("shape_same", np.array([1, 2, 4, 4], np.int64)),
        tensor("starts", np.array([0], np.int64)), tensor("ends", np.array([4], np.int64)),
        tensor("axes", np.array([3], np.int64)),
        tensor("zero", np.zeros(1, np.float32)), tensor("one", np.ones(1, np.float32)),
        tensor("two", np.full(1, 2.0, np.float32)),
        tensor("dup_a", rng.standard_normal((2, 1, 1)).astype(np.float32)),
        tensor("sq_axes", np.array([0], np.int64)),
        tensor("q_scale", np.array(0.05, np.float32)), tensor("q_zp", np.array(0, np.uint8)),
    ]
    inits.append(tensor("dup_b", numpy_helper.to_array(inits[8])))
    nodes = [
        n("Identity", ["x"], ["i0"]),
        n("Dropout", ["i0"], ["d0"]),
        n("Cast", ["d0"], ["c0"], to=F),
        n("Cast", ["c0"], ["c1"], to=TP.DOUBLE), n("Cast", ["c1"], ["c2"], to=F),
        n("Pad", ["c2", "zero_pads"], ["p0"]) if opset >= 11 else None,
        n("Slice", ["p0", "starts", "ends", "axes"], ["s0"]),
        n("Expand", ["s0", "shape_same"], ["e0"]),
        n("Reshape", ["e0", "shape_same"], ["r0"]),
        n("Transpose", ["r0"], ["t0"], perm=[0, 1, 2, 3]),
        n("Transpose", ["t0"], ["t1"], perm=[0, 2, 3, 1]),
        n("Transpose", ["t1"], ["t2"], perm=[0, 3, 1, 2]),
        n("Add", ["t2", "zero"], ["a0"]), n("Mul", ["a0", "one"], ["a1"]),
        n("Div", ["a1", "two"], ["a2"]),
        n("MaxPool", ["a2"], ["m0"], kernel_shape=[1, 1]),
        n("Concat", ["m0"], ["k0"], axis=1),
        n("Mul", ["k0", "dup_a"], ["u0"]), n("Mul", ["u0", "dup_b"], ["u1"]),
        n("Relu", ["u1"], ["cse0"]), n("Relu", ["u1"], ["cse1"]),
        n("Add", ["cse0", "cse1"], ["sum"]),
        n("Sigmoid", ["sum"], ["dead"]),
        n("QuantizeLinear", ["sum", "q_scale", "q_zp"], ["q"]),
        n("DequantizeLinear", ["q", "q_scale", "q_zp"], ["dq"]),
        n("Constant", [], ["kc"], value=tensor("kc", np.array([1.5], np.float32))),
        n("Mul", ["dq", "kc"], ["y"]),
    ]
    if opset >= 13:
        nodes += [n("Unsqueeze", ["y", "sq_axes"], ["un"]), n("Squeeze", ["un", "sq_axes"], ["y2"]),
                  n("Split", ["y2"], ["y3"], axis=1)]
    else:
        nodes += [n("Unsqueeze", ["y"], ["un"], axes=[0]), n("Squeeze", ["un"], ["y2"], axes=[0]),
                  n("Split", ["y2"], ["y3"], axis=1)]
    return model([x for x in nodes if x], [vi("x", F, [1, 2, 4, 4])], [vi("y3", F, [1, 2, 4, 4])],
                 inits, opset, "nops")


def fusions(opset):
    """Conv+BN, BN+Conv, Conv+Mul/Add, MatMul+Add, Gemm+Relu, auto_pad, Resize,
    DepthToSpace, ReduceMean, dynamic Reshape, LayerNorm and GELU patterns."""
    n = helper.make_node
    rng = np.random.default_rng(8)
    r = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    inits = [
        tensor("w", r(4, 2, 3, 3)), tensor("b", r(4)),
        tensor("bn_s", 1 + 0.1 * r(4)), tensor("bn_b", r(4)), tensor("bn_m", r(4)),
        tensor("bn_v", 1 + np.abs(r(4))),
        tensor("ch_mul", r(1, 4, 1, 1)), tensor("ch_add", r(1, 4, 1, 1)),
        tensor("w2", r(16, 4, 1, 1)),
        tensor("mm", r(4, 3)), tensor("mm_b", r(3)),
        tensor("ln_eps", np.array(1e-5, np.float32)), tensor("half", np.array(0.5, np.float32)),
        tensor("sqrt2", np.array(1.4142135, np.float32)), tensor("one", np.array(1.0, np.float32)),
        tensor("two", np.array(2.0, np.float32)),
        tensor("scales", np.array([1, 1, 1, 1], np.float32)),
        tensor("roi", np.zeros(0, np.float32)),
        tensor("gidx", np.array(0, np.int64)), tensor("minus1", np.array([-1], np.int64)),
    ]
    red = dict(axes=[-1]) if opset < 18 else {}
    nodes = [
        n("BatchNormalization", ["x", "bn_s2", "bn_b2", "bn_m2", "bn_v2"], ["xb"]),
        n("Conv", ["xb", "w", "b"], ["c0"], pads=[1, 1, 1, 1]),
        n("BatchNormalization", ["c0", "bn_s", "bn_b", "bn_m", "bn_v"], ["c1"]),
        n("Mul", ["c1", "ch_mul"], ["c2"]), n("Add", ["c2", "ch_add"], ["c3"]),
        n("Relu", ["c3"], ["c4"]),
        n("Conv", ["c4", "w2"], ["c5"], auto_pad="SAME_UPPER"),
        n("Resize", ["c5", "roi", "scales"], ["c6"], mode="nearest"),
        n("DepthToSpace", ["c6"], ["c7"], blocksize=2),
        n("ReduceMean", ["c7"], ["c8"], axes=[2, 3], keepdims=1),
        n("Shape", ["c8"], ["sh"]), n("Gather", ["sh", "gidx"], ["d0"], axis=0),
        n("Unsqueeze", ["d0", "zero_axes"] if opset >= 13 else ["d0"], ["d0u"],
          **({} if opset >= 13 else {"axes": [0]})),
        n("Concat", ["d0u", "minus1"], ["newshape"], axis=0),
        n("Reshape", ["c8", "newshape"], ["flat"]),
        n("MatMul", ["flat", "mm"], ["g0"]), n("Add", ["g0", "mm_b"], ["g1"]),
        n("Gemm", ["flat", "mm", "mm_b"], ["gg"]), n("Relu", ["gg"], ["gr"]),
        # LayerNorm, decomposed
        n("ReduceMean", ["g1"], ["mu"], **red), n("Sub", ["g1", "mu"], ["xc"]),
        n("Pow", ["xc", "two"], ["sq"]), n("ReduceMean", ["sq"], ["var"], **red),
        n("Add", ["var", "ln_eps"], ["ve"]), n("Sqrt", ["ve"], ["sd"]),
        n("Div", ["xc", "sd"], ["ln"]),
        # GELU, decomposed
        n("Div", ["ln", "sqrt2"], ["ge0"]), n("Erf", ["ge0"], ["ge1"]),
        n("Add", ["ge1", "one"], ["ge2"]), n("Mul", ["ln", "ge2"], ["ge3"]),
        n("Mul", ["ge3", "half"], ["y"]),
    ]
    inits += [tensor("bn_s2", 1 + 0.1 * r(2)), tensor("bn_b2", r(2)), tensor("bn_m2", r(2)),
              tensor("bn_v2", 1 + np.abs(r(2)))]
    if opset >= 13:
        inits.append(tensor("zero_axes", np.array([0], np.int64)))
    return model(nodes, [vi("x", F, ["N", 2, 4, 4])], [vi("y", F, ["N", 3]), vi("gr", F, ["N", 3])],
                 inits, opset, "fusions")


def control_and_types():
    """If with outer-scope uses, int/bool/float16 tensors, typed data fields,
    an opset-17 Split with a sizes input, Einsum, CumSum, Range and Where."""
    n = helper.make_node
    then_g = helper.make_graph([n("Identity", ["xs"], ["t_out"])], "then", [], [vi("t_out", F, [2, 3])])
    else_g = helper.make_graph([n("Neg", ["xs"], ["e_out"])], "else", [], [vi("e_out", F, [2, 3])])
    inits = [
        helper.make_tensor("ints", I64, [3], [1, 2, 3]),
        helper.make_tensor("halfs", TP.FLOAT16, [2], np.array([1.0, -2.0], np.float16).view(np.uint16)),
        helper.make_tensor("flag", B, [], [True]),
        helper.make_tensor("split_sizes", I64, [2], [1, 2]),
        helper.make_tensor("limit", I64, [], [4]), helper.make_tensor("start", I64, [], [0]),
        helper.make_tensor("delta", I64, [], [1]),
        helper.make_tensor("axis0", I64, [], [0]),
        helper.make_tensor("dbl", TP.DOUBLE, [2], [0.5, 0.25]),
    ]
    nodes = [
        n("Relu", ["x"], ["xs"]),
        n("If", ["flag"], ["branch"], then_branch=then_g, else_branch=else_g),
        n("Split", ["branch", "split_sizes"], ["s0", "s1"], axis=1),
        n("Einsum", ["s1", "s1"], ["ein"], equation="ij,ij->i"),
        n("CumSum", ["ints", "axis0"], ["cs"]),
        n("Range", ["start", "limit", "delta"], ["rg"]),
        n("Cast", ["halfs"], ["hf"], to=F),
        n("Greater", ["hf", "s0"], ["gt"]),
        n("Where", ["gt", "hf", "s0"], ["wh"]),
        n("Cast", ["dbl"], ["dblf"], to=F),
    ]
    return model(nodes, [vi("x", F, [2, 3])],
                 [vi("ein", F, [2]), vi("cs", I64, [3]), vi("rg", I64, ["r"]), vi("wh", F, ["w0", "w1"]),
                  vi("dblf", F, [2])], inits, 17, "control")


def nested():
    """Bodies inside bodies: an If in a Loop in a Scan in an If, each using
    values of the scopes around it, with foldable and fusable nodes inside."""
    n = helper.make_node
    inner_if = helper.make_graph(
        [n("Add", ["lx", "one"], ["ti"]), n("Identity", ["ti"], ["ti_out"])], "inner_then", [],
        [vi("ti_out", F, [2])])
    inner_else = helper.make_graph([n("Mul", ["lx", "two"], ["ei_out"])], "inner_else", [],
                                   [vi("ei_out", F, [2])])
    loop_body = helper.make_graph(
        [n("Identity", ["cond_in"], ["cond_out"]),
         n("Relu", ["carry"], ["lx"]),
         n("If", ["flag"], ["lif"], then_branch=inner_if, else_branch=inner_else),
         n("Unsqueeze", ["lif", "axes0"], ["lif2d"]),
         n("Transpose", ["lif2d"], ["lt"], perm=[1, 0]),
         n("Transpose", ["lt"], ["lt2"], perm=[1, 0]),
         n("Reshape", ["lt2", "shape2"], ["carry_out"])],
        "loop_body", [vi("i", I64, []), vi("cond_in", B, []), vi("carry", F, [2])],
        [vi("cond_out", B, []), vi("carry_out", F, [2])])
    scan_body = helper.make_graph(
        [n("Loop", ["trip", "flag"], ["sl"], body=loop_body),
         n("Add", ["sl", "row"], ["srow"]), n("Identity", ["srow"], ["sacc"])],
        "scan_body", [vi("acc", F, [2]), vi("row", F, [2])], [vi("sacc", F, [2]), vi("srow2", F, [2])])
    scan_body.node.append(n("Neg", ["srow"], ["srow2"]))
    scan_body.node[0].input[:] = ["trip", "flag", "acc"]
    outer_then = helper.make_graph(
        [n("Scan", ["init", "xs"], ["final", "ys"], body=scan_body, num_scan_inputs=1)], "outer_then", [],
        [vi("final", F, [2]), vi("ys", F, [3, 2])])
    outer_else = helper.make_graph(
        [n("Identity", ["init"], ["final_e"]), n("Identity", ["xs"], ["ys_e"])], "outer_else", [],
        [vi("final_e", F, [2]), vi("ys_e", F, [3, 2])])
    inits = [tensor("one", np.ones(2, np.float32)), tensor("two", np.full(2, 2, np.float32)),
             helper.make_tensor("flag", B, [], [True]), helper.make_tensor("trip", I64, [], [2]),
             helper.make_tensor("shape2", I64, [1], [2]), helper.make_tensor("axes0", I64, [1], [0]),
             tensor("init", np.zeros(2, np.float32))]
    nodes = [n("If", ["flag"], ["final_out", "ys_out"], then_branch=outer_then, else_branch=outer_else)]
    return model(nodes, [vi("xs", F, [3, 2])], [vi("final_out", F, [2]), vi("ys_out", F, [3, 2])], inits,
                 17, "nested")


def deep_if(depth):
    """Outputs computed `depth` If bodies deep: 31 is the deepest the loader
    reads (its messages then nest 100 deep), 32 is refused before unpacking."""
    n = helper.make_node
    g = helper.make_graph([n("Identity", ["x"], ["y%d" % depth])], "inner", [], [vi("y%d" % depth, F, [1])])
    for level in range(depth - 1, -1, -1):
        e = helper.make_graph([n("Identity", ["x"], ["e%d" % level])], "else", [], [vi("e%d" % level, F, [1])])
        node = n("If", ["c"], ["y%d" % level], then_branch=g, else_branch=e)
        g = helper.make_graph([node], "g%d" % level, [], [vi("y%d" % level, F, [1])])
    g.input.extend([vi("c", B, []), vi("x", F, [1])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="passhost-fuzz-corpus")
    m.ir_version = 8
    return m


def attr(name, kind, value):
    """An AttributeProto of the given type, whatever the operator expects."""
    a = onnx.AttributeProto()
    a.name, a.type = name, kind
    A = onnx.AttributeProto
    if kind == A.STRING:
        a.s = value.encode()
    elif kind == A.STRINGS:
        a.strings.extend(v.encode() for v in value)
    elif kind == A.FLOAT:
        a.f = value
    elif kind == A.FLOATS:
        a.floats.extend(value)
    elif kind == A.INT:
        a.i = value
    elif kind == A.INTS:
        a.ints.extend(value)
    elif kind == A.TENSOR:
        a.t.CopyFrom(value)
    return a


def wrong_attribute_types():
    """Known operators with attributes of the wrong type (each must be
    refused, never read as absent): Transpose perm as STRING, Conv
    kernel_shape as FLOATS and strides as STRINGS, Gemm alpha as INTS, Cast
    to as FLOAT, Concat axis as TENSOR; and the right types beside them."""
    n = helper.make_node
    A = onnx.AttributeProto
    nodes = [n("Transpose", ["x"], ["t"]), n("Conv", ["x", "w"], ["c"]), n("Gemm", ["m", "m"], ["gm"]),
             n("Cast", ["m"], ["cs"]), n("Concat", ["m", "m"], ["cc"]), n("Transpose", ["x"], ["t_ok"], perm=[0, 1, 3, 2])]
    nodes[0].attribute.append(attr("perm", A.STRING, "0,1,3,2"))
    nodes[1].attribute.extend([attr("kernel_shape", A.FLOATS, [3.0, 3.0]), attr("strides", A.STRINGS, ["1", "1"])])
    nodes[2].attribute.append(attr("alpha", A.INTS, [2]))
    nodes[3].attribute.append(attr("to", A.FLOAT, 1.0))
    nodes[4].attribute.append(attr("axis", A.TENSOR, helper.make_tensor("ax", I64, [], [0])))
    inits = [tensor("w", np.ones((2, 3, 3, 3), np.float32)), tensor("m", np.ones((2, 2), np.float32))]
    return model(nodes, [vi("x", F, [1, 3, 4, 4])],
                 [vi("t", F, None), vi("c", F, None), vi("gm", F, None), vi("cs", F, None), vi("cc", F, None),
                  vi("t_ok", F, None)], inits, 17, "wrong_attrs")


def unknown_ops():
    """An operator the default domain does not have, an operator of a domain
    with no opset import, and one of a domain that is imported."""
    n = helper.make_node
    nodes = [n("Relu", ["x"], ["r"]), n("NoSuchOp", ["r"], ["u"]),
             n("Fused", ["r"], ["v"], domain="com.unimported"), n("Fused", ["r"], ["w"], domain="com.imported")]
    g = helper.make_graph(nodes, "unknown", [vi("x", F, [2])], [vi("u", F, None), vi("v", F, None), vi("w", F, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.imported", 1)],
                          producer_name="passhost-fuzz-corpus")
    m.ir_version = 8
    return m


# the files fuzz/support/fuzz_support.c puts beside every input
EXTERNAL_KINDS = ("external_data.bin", "fifo", "folder", "sock", "null", "empty.bin", "link_fifo", "link_data",
                  "link_outside", "model.onnx", "missing")


def external_kinds():
    """One initializer per kind of file an external-data location can name:
    the data file, a FIFO, a folder, a socket, a device, an empty file,
    links inside and outside the folder, the model itself, nothing."""
    n = helper.make_node
    inits, nodes, outs = [], [], []
    for k, loc in enumerate(EXTERNAL_KINDS):
        t = helper.make_tensor("w%d" % k, F, [4], [0.0] * 4)
        t.ClearField("float_data")
        t.data_location = TP.EXTERNAL
        for key, val in (("location", loc), ("offset", str(64 * k)), ("length", "16")):
            e = t.external_data.add()
            e.key, e.value = key, val
        inits.append(t)
        nodes.append(n("Add", ["x", "w%d" % k], ["y%d" % k]))
        outs.append(vi("y%d" % k, F, [4]))
    return model(nodes, [vi("x", F, [4])], outs, inits, 17, "external_kinds")


def load_dict():
    """Words for the model fuzzers: the names of the special files and
    operator and attribute names whose types the loader checks."""
    words = list(EXTERNAL_KINDS) + ["location", "offset", "length", "perm", "kernel_shape", "strides", "alpha",
                                    "then_branch", "else_branch", "body", "Transpose", "Conv", "Gemm", "If",
                                    "Loop", "Scan", "com.microsoft", "ai.onnx.ml"]
    return "".join('"%s"\n' % w for w in words)


# -------------------------------------------------------------------- configs

CONFIGS = {
    "full.ini": """; every key once
[model]
input = model.onnx
output = out.onnx
plugin_dir = plugins
log_path = passhost.log
input_shape = x:1x3x8x8; ids:2x?
infer_shapes = true
write_shapes = no

[optimize]
pass_on = "eliminate_identity;eliminate_nop_pool"
pass_off = fuse_transpose_into_matmul,
    merge_consecutive_transpose
no_integral = false
max_iterations = 4
allow_approximate = off
custom_config = config.ini

[adapt]
target = ort
pass_on = eliminate_qdq_pairs
allow_approximate = true

[pass.constant_folding]
max_output_bytes = 4096

[pass.fuse_bn_conv]
allow_border_change = yes

[verify]
runs = 2
atol = 1e-4
rtol = 0.001
seed = 7
""",
    "ranges.ini": """[model]
input_shape_range = x:1~32x3x8~16x8; ids:1x1~128
[optimize]
no_integral = true
pass_on = constant_folding
[pass.constant_folding]
max_output_bytes = 12
""",
    "errors.ini": """[model]
input = a.onnx
input = b.onnx
[optimize]
pass_on = eliminate_identity
pass_off = eliminate_identity
max_iterations = -3
[nosuch]
key = value
[pass.no_such_pass]
x = 1
[pass.dynamic_reshape_to_static]
allow_minus_one = maybe
""",
    # a file that never ends a line (host/config/config.c once read it until memory ran out)
    "dev_zero.ini": """[optimize]
custom_config = /dev/zero
""",
    "quoted.ini": """[optimize]
pass_off = "eliminate_nop_pool" ; a comment
pass_on = "eliminate_identity;  eliminate_dropout", eliminate_nop_cast
  ; indented comment
  eliminate_nop_pad
[pass.eliminate_identity]
label = "quoted; semicolons are kept"
""",
}

SETS = {
    "sets.ini": ("[model]\ninput = m.onnx\n",
                 "optimize.pass_off=eliminate_identity\nmodel.input_shape=x:1x3x8x8\n"
                 "pass.constant_folding.max_output_bytes=100\nadapt.target=ort\n"
                 "verify.runs=3\noptimize.no_integral=true\n"),
    "badsets.ini": ("", "optimize\nmodel.nokey=1\n=x\npass..k=v\nmodel.input_shape=x:0x-1\n"),
}


def config_dict():
    words = set()
    for s in ("model", "optimize", "adapt", "verify", "pass."):
        words.add(s)
    for k in ("input", "output", "plugin_dir", "log_path", "input_shape", "input_shape_range",
              "infer_shapes", "write_shapes", "pass_on", "pass_off", "no_integral",
              "max_iterations", "allow_approximate", "custom_config", "target", "runs", "atol",
              "rtol", "seed", "true", "false", "yes", "no", "on", "off"):
        words.add(k)
    for d in sorted(glob.glob(os.path.join(ROOT, "plugins", "*"))):
        if os.path.isdir(d):
            words.add(os.path.basename(d))
            words.add("[pass.%s]" % os.path.basename(d))
    # parameter names from the pass catalogue: `name` (default)
    import re
    doc = open(os.path.join(ROOT, "docs", "passes.md")).read()
    for m in re.finditer(r"`([a-z_]+)` \(([^)]*)\)", doc):
        words.add(m.group(1))
    lines = ['"%s"' % w for w in sorted(words)]
    lines += ['"[model]"', '"[optimize]"', '"[adapt]"', '"[verify]"', '" = "', '"\\x0a  "',
              '"~"', '"x"', '"; "', '"\\x00"', '"1e-300"', '"-1"', '"99999999999999999999"']
    return "# Section, key, pass and parameter names for fuzz_config (fuzz/gen_corpus.py).\n" + \
        "\n".join(lines) + "\n"


# ----------------------------------------------------------------------- main

def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def main():
    torch.use_deterministic_algorithms(True)
    models = {
        "cnn_tiny.onnx": cnn_tiny(),
        "transformer_tiny.onnx": transformer_tiny(),
        "convs.onnx": convs(),
        "seq17.onnx": seq17(),
        "nops11.onnx": nops(11).SerializeToString(),
        "nops17.onnx": nops(17).SerializeToString(),
        "fusions11.onnx": fusions(11).SerializeToString(),
        "fusions17.onnx": fusions(17).SerializeToString(),
        "control_types.onnx": control_and_types().SerializeToString(),
        "nested.onnx": nested().SerializeToString(),
        "deep_if31.onnx": deep_if(31).SerializeToString(),
        "deep_if32.onnx": deep_if(32).SerializeToString(),
        "wrong_attribute_types.onnx": wrong_attribute_types().SerializeToString(),
        "unknown_ops.onnx": unknown_ops().SerializeToString(),
        "external_kinds.onnx": external_kinds().SerializeToString(),
    }
    # not valid ONNX on purpose (or beyond what onnx.checker reads)
    unchecked = ("external_data.onnx", "deep_if31.onnx", "deep_if32.onnx", "wrong_attribute_types.onnx",
                 "unknown_ops.onnx", "external_kinds.onnx")
    for name in ("control_flow.onnx", "unknown_fields.onnx", "external_data.onnx"):
        models[name] = open(os.path.join(ROOT, "tests", "models", name), "rb").read()
    for corpus in MODEL_CORPORA:
        for name, data in sorted(models.items()):
            write(os.path.join(FUZZ, "corpus", corpus, name), data)
    for name, data in sorted(models.items()):
        if name in unchecked:
            continue
        try:
            onnx.checker.check_model(onnx.load_from_string(data))
        except Exception as e:  # noqa: BLE001
            print("%s: onnx.checker: %s" % (name, str(e).splitlines()[0]), file=sys.stderr)
            return 1

    cdir = os.path.join(FUZZ, "corpus", "config")
    for p in sorted(glob.glob(os.path.join(ROOT, "configs", "*.ini")) +
                    glob.glob(os.path.join(ROOT, "configs", "targets", "*.ini"))):
        write(os.path.join(cdir, os.path.basename(p)), open(p, "rb").read())
    for name, text in sorted(CONFIGS.items()):
        write(os.path.join(cdir, name), text.encode())
    for name, (text, sets) in sorted(SETS.items()):
        write(os.path.join(cdir, name), text.encode() + b"\0" + sets.encode())
    write(os.path.join(FUZZ, "config.dict"), config_dict().encode())
    for corpus in MODEL_CORPORA:
        write(os.path.join(FUZZ, corpus + ".dict"), load_dict().encode())

    total = 0
    for corpus in sorted(os.listdir(os.path.join(FUZZ, "corpus"))):
        d = os.path.join(FUZZ, "corpus", corpus)
        files = sorted(os.listdir(d))
        size = sum(os.path.getsize(os.path.join(d, f)) for f in files)
        total += size
        print("fuzz/corpus/%-9s %3d files, %7d bytes" % (corpus, len(files), size))
    print("total %d bytes" % total)
    return 0


if __name__ == "__main__":
    sys.exit(main())
