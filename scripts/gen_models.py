#!/usr/bin/python3
"""Generate the small, real ONNX models bundled with passhost.

What it makes (all deterministic: fixed seeds, no timestamps):

  models/cnn_small.onnx            ResNet-like CNN exported with torch.onnx.export
  models/transformer_block.onnx    hand-written transformer encoder block (torch export)
  tests/models/cnn_small.onnx          byte-identical copy of the above
  tests/models/transformer_block.onnx  byte-identical copy of the above
  tests/models/control_flow.onnx   onnx.helper graph: If + Loop with outer-scope refs,
                                   model-local function, doc strings, metadata,
                                   value_info, float_data and raw_data initializers
  tests/models/external_data.onnx  MatMul + Add whose weights live in ...
  tests/models/external_data.bin   ... this external data file (relative location)
  tests/models/unknown_fields.onnx model whose bytes carry fields unknown to onnx.proto
                                   in ModelProto, GraphProto and NodeProto
  tests/models/speech_vad.onnx     onnx.helper graph shaped like a voice-activity
                                   detector: Conv1d, LSTM with state in and out,
                                   an If on the sample rate reading outer weights
  tests/models/quantized_mlp.onnx  onnx.helper graph shaped like ONNX Runtime's
                                   dynamic quantization: DynamicQuantizeLinear,
                                   MatMulInteger, QuantizeLinear/DequantizeLinear
  tests/models/ort_contrib.onnx    onnx.helper graph of the com.microsoft ops
                                   passhost's target-ort passes emit

How to run (from the repository root; needs Debian's python3-torch, python3-onnx,
python3-numpy -- use the system interpreter, not a pyenv one):

  /usr/bin/python3 scripts/gen_models.py

Running it twice produces byte-identical files.  After writing, every model is
checked with onnx.checker.check_model and a per-model op-type histogram is
printed.
"""

import collections
import io
import os
import struct
import sys
import warnings

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
MODELS = os.path.join(ROOT, "models")
TEST_MODELS = os.path.join(ROOT, "tests", "models")

OPSET = 13
PRODUCER = "passhost-gen_models"
PRODUCER_VERSION = "1.0"


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------

class _IdentityFn(torch.autograd.Function):
    """Identity that survives tracing: exports as an ONNX Identity node.

    torch traces nn.Identity (and clone/detach/eval-mode Dropout) away, so
    this Function gives the exported graph a real Identity op.
    """

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def symbolic(g, x):
        return g.op("Identity", x)


class ExportedIdentity(torch.nn.Identity):
    """nn.Identity whose ONNX export is an Identity node."""

    def forward(self, x):
        return _IdentityFn.apply(x)


class _PinFn(torch.autograd.Function):
    """Keeps torch's ONNX peephole from fusing a Transpose pair.

    torch.onnx always runs an ONNX peephole pass (even with
    do_constant_folding=False) whose fuseConsecutiveTransposes step merges
    Transpose->Transpose (re-rooting the second one when the first has other
    uses) and drops pairs that cancel out.  This function exports as
    prim::ListConstruct -> prim::ListUnpack; a later step of the same
    peephole (fuseListConstructListUnpack) removes that pair, so the
    Transposes around it end up adjacent in the exported model.
    Numerically it is the identity.
    """

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def symbolic(g, x):
        lst = g.op("prim::ListConstruct", x)
        lst.setType(torch._C.ListType.ofTensors())
        out = g.op("prim::ListUnpack", lst, outputs=1)
        out.setType(x.type())
        return out


def pin(x):
    return _PinFn.apply(x)


def export_torch(model, args, input_names, output_names, dynamic_axes,
                 training=torch.onnx.TrainingMode.EVAL):
    model.eval()
    buf = io.BytesIO()
    with torch.no_grad(), warnings.catch_warnings():
        # g.op() in custom symbolics warns about a 1.14 deprecation
        warnings.simplefilter("ignore", FutureWarning)
        # _PinFn's prim::ListUnpack has no shape inference; it is erased anyway
        warnings.filterwarnings("ignore", message=".*prim::ListUnpack.*")
        torch.onnx.export(
            model,
            args,
            buf,
            export_params=True,
            opset_version=OPSET,
            do_constant_folding=False,
            training=training,
            input_names=input_names,
            output_names=output_names,
            dynamic_axes=dynamic_axes,
        )
    return buf.getvalue()


def randomize_bn(module, gen):
    """Give BatchNorm layers non-trivial (but deterministic) statistics."""
    for m in module.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            c = m.num_features
            with torch.no_grad():
                m.weight.copy_(1.0 + 0.1 * torch.randn(c, generator=gen))
                m.bias.copy_(0.1 * torch.randn(c, generator=gen))
                m.running_mean.copy_(0.1 * torch.randn(c, generator=gen))
                m.running_var.copy_(1.0 + 0.2 * torch.rand(c, generator=gen))


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


# ---------------------------------------------------------------------------
# 1. ResNet-like CNN
# ---------------------------------------------------------------------------

class BasicBlock(torch.nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(cout)
        self.relu = torch.nn.ReLU()
        self.conv2 = torch.nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = torch.nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = torch.nn.Sequential(
                torch.nn.Conv2d(cin, cout, 1, stride, 0, bias=False),
                torch.nn.BatchNorm2d(cout),
            )

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return self.relu(y + identity)


class CnnSmall(torch.nn.Module):
    def __init__(self, width=64, classes=10):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, width, 3, 1, 1, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(width)
        self.relu = torch.nn.ReLU()
        self.maxpool = torch.nn.MaxPool2d(3, 2, 1)
        self.trace_identity = torch.nn.Identity()   # traced away by torch
        self.identity = ExportedIdentity()          # exported as Identity
        self.layer1 = BasicBlock(width, width, 1)
        self.layer2 = BasicBlock(width, 2 * width, 2)
        self.noop_pool = torch.nn.MaxPool2d(kernel_size=1, stride=1)
        self.post_identity = ExportedIdentity()
        self.avgpool = torch.nn.AdaptiveAvgPool2d(1)
        self.fc = torch.nn.Linear(2 * width, classes)

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.maxpool(x)
        x = self.identity(self.trace_identity(x))
        x = self.layer1(x)
        x = self.layer2(x)
        x = self.noop_pool(x)
        x = self.post_identity(x)
        x = self.avgpool(x)
        x = torch.flatten(x, 1)
        return self.fc(x)


def make_cnn():
    torch.manual_seed(1234)
    gen = torch.Generator().manual_seed(4321)
    net = CnnSmall()
    randomize_bn(net, gen)
    x = torch.randn(1, 3, 64, 64, generator=gen)
    # TrainingMode.EVAL would make torch 1.13 run _jit_pass_onnx_eval_peephole,
    # which folds every BatchNorm into the preceding Conv even with
    # do_constant_folding=False.  The module is in eval() mode, so PRESERVE
    # exports exactly the same inference graph but keeps the
    # BatchNormalization nodes (single output, no training_mode) for
    # passhost's Conv+BN folding to work on.
    return export_torch(net, (x,), ["input"], ["logits"],
                        {"input": {0: "batch"}, "logits": {0: "batch"}},
                        training=torch.onnx.TrainingMode.PRESERVE)


# ---------------------------------------------------------------------------
# 2. Transformer encoder block (hand-written)
# ---------------------------------------------------------------------------

class TransformerBlock(torch.nn.Module):
    def __init__(self, d=64, heads=4, hidden=128, classes=10):
        super().__init__()
        self.d, self.h, self.hd = d, heads, d // heads
        self.q = torch.nn.Linear(d, d)
        self.k = torch.nn.Linear(d, d)
        self.v = torch.nn.Linear(d, d)
        self.o = torch.nn.Linear(d, d)
        self.ln1 = torch.nn.LayerNorm(d)
        self.fc1 = torch.nn.Linear(d, hidden)
        self.act = torch.nn.GELU()
        self.fc2 = torch.nn.Linear(hidden, d)
        self.ln2 = torch.nn.LayerNorm(d)
        # plain 2-D head: cls @ W.t()
        self.head_w = torch.nn.Parameter(torch.randn(classes, d) * 0.1)

    def forward(self, x):
        b, s = x.shape[0], x.shape[1]
        h, hd = self.h, self.hd
        q = self.q(x).reshape(b, s, h, hd).permute(0, 2, 1, 3)   # [b,h,s,hd]
        # k is also returned (KV-cache style); torch re-roots k.transpose(-2,-1)
        # onto the Reshape as a second Transpose(0,2,3,1).
        k = self.k(x).reshape(b, s, h, hd).permute(0, 2, 1, 3)   # [b,h,s,hd]
        # single-use Transpose pair composing to perm (0,2,1,3)
        v = pin(self.v(x).reshape(b, s, h, hd).permute(0, 2, 3, 1)).transpose(-2, -1)
        att = (q @ k.transpose(-2, -1)) * (1.0 / float(hd) ** 0.5)
        att = torch.softmax(att, dim=-1)
        ctx = (att @ v).permute(0, 2, 1, 3).reshape(b, s, self.d)
        # residual through a single-use Transpose pair that cancels out
        res = pin(x.transpose(1, 2)).transpose(1, 2)
        y = self.ln1(res + self.o(ctx))
        y = self.ln2(y + self.fc2(self.act(self.fc1(y))))
        # plain 2-D matmul paths
        cls = y[:, 0, :]                     # [b, d]
        pooled = y.mean(dim=1)               # [b, d]
        logits = cls @ self.head_w.t()       # Transpose(initializer) -> MatMul
        gram = cls.t() @ logits              # Transpose(activation) as MatMul A
        sim = logits @ (pooled @ self.head_w.t()).t()   # Transpose(activation) as B
        return y, logits, gram, sim, k


def make_transformer():
    torch.manual_seed(5678)
    gen = torch.Generator().manual_seed(8765)
    net = TransformerBlock()
    x = torch.randn(1, 16, 64, generator=gen)
    return export_torch(
        net, (x,), ["tokens"], ["hidden", "logits", "gram", "sim", "present_k"],
        {"tokens": {0: "batch", 1: "seq"},
         "present_k": {0: "batch", 2: "seq"},
         "hidden": {0: "batch", 1: "seq"},
         "logits": {0: "batch"},
         "sim": {0: "batch", 1: "batch"}})


# ---------------------------------------------------------------------------
# 3. control flow / metadata / functions (onnx.helper)
# ---------------------------------------------------------------------------

def make_control_flow():
    F, B, I64 = TensorProto.FLOAT, TensorProto.BOOL, TensorProto.INT64

    # initializers
    w = helper.make_tensor("w", F, [2, 3], [0.5, -1.0, 1.5, 2.0, -0.25, 0.75])
    assert not w.raw_data and len(w.float_data) == 6          # typed field
    step = helper.make_tensor("step", F, [3], [0.1, 0.2, 0.3])
    keep_going = helper.make_tensor("keep_going", B, [], [True])
    flat_shape = helper.make_tensor(
        "flat_shape", I64, [1], np.array([-1], dtype="<i8").tobytes(), raw=True)
    assert flat_shape.raw_data and not flat_shape.int64_data  # raw_data

    # If branches: reference outer-scope values fn_out / xw
    then_g = helper.make_graph(
        [helper.make_node("Relu", ["fn_out"], ["then_out"], name="then_relu",
                          doc_string="then branch: Relu of outer fn_out")],
        "then_branch", [],
        [helper.make_tensor_value_info("then_out", F, [2, 3])],
        doc_string="If then-branch")
    else_g = helper.make_graph(
        [helper.make_node("Neg", ["xw"], ["else_out"], name="else_neg",
                          doc_string="else branch: Neg of outer xw")],
        "else_branch", [],
        [helper.make_tensor_value_info("else_out", F, [2, 3])],
        doc_string="If else-branch")

    # Loop body: acc <- acc + step  (step is an outer-scope initializer)
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"], name="body_cond"),
         helper.make_node("Add", ["acc_in", "step"], ["acc_out"], name="body_add",
                          doc_string="uses outer-scope initializer 'step'")],
        "loop_body",
        [helper.make_tensor_value_info("iter", I64, []),
         helper.make_tensor_value_info("cond_in", B, []),
         helper.make_tensor_value_info("acc_in", F, [2, 3])],
        [helper.make_tensor_value_info("cond_out", B, []),
         helper.make_tensor_value_info("acc_out", F, [2, 3])],
        doc_string="Loop body")

    nodes = [
        helper.make_node("Add", ["x", "w"], ["xw"], name="add_w",
                         doc_string="x + w (w stored in float_data)"),
        helper.make_node("ScaleAdd", ["xw", "w"], ["fn_out"], name="call_fn",
                         domain="custom.fn",
                         doc_string="call of model-local function custom.fn::ScaleAdd"),
        helper.make_node("If", ["flag"], ["if_out"], name="branch",
                         then_branch=then_g, else_branch=else_g,
                         doc_string="If with outer-scope references"),
        helper.make_node("Loop", ["trip", "keep_going", "if_out"], ["loop_out"],
                         name="accumulate", body=body,
                         doc_string="Loop: max trip count + cond + one carried value"),
        helper.make_node("Reshape", ["loop_out", "flat_shape"], ["y"], name="flatten",
                         doc_string="flat_shape is an int64 initializer in raw_data"),
    ]
    graph = helper.make_graph(
        nodes, "control_flow",
        [helper.make_tensor_value_info("x", F, [2, 3]),
         helper.make_tensor_value_info("flag", B, []),
         helper.make_tensor_value_info("trip", I64, [])],
        [helper.make_tensor_value_info("y", F, [6])],
        initializer=[w, step, keep_going, flat_shape],
        doc_string="passhost round-trip test: control flow, functions, metadata",
        value_info=[helper.make_tensor_value_info(n, F, [2, 3])
                    for n in ("xw", "fn_out", "if_out", "loop_out")])

    # model-local function: ScaleAdd(a, b) = a * b + a
    fn = helper.make_function(
        "custom.fn", "ScaleAdd", ["a", "b"], ["y"],
        [helper.make_node("Mul", ["a", "b"], ["t"], name="fn_mul"),
         helper.make_node("Add", ["t", "a"], ["y"], name="fn_add")],
        [helper.make_opsetid("", OPSET)],
        doc_string="a * b + a")

    model = helper.make_model(
        graph,
        ir_version=8,
        opset_imports=[helper.make_opsetid("", OPSET),
                       helper.make_opsetid("custom.fn", 1)],
        producer_name=PRODUCER, producer_version=PRODUCER_VERSION,
        domain="org.passhost.tests", model_version=3,
        doc_string="Control-flow round-trip test model",
        functions=[fn])
    helper.set_model_props(model, {"author": "passhost", "purpose": "round-trip"})
    return model.SerializeToString()


# ---------------------------------------------------------------------------
# 4. external data
# ---------------------------------------------------------------------------

EXT_BIN = "external_data.bin"


def make_external_data():
    rng = np.random.RandomState(42)
    n = 32
    W = (rng.standard_normal((n, n)) * 0.1).astype("<f4")
    Bv = (rng.standard_normal((n,)) * 0.1).astype("<f4")
    wbytes, bbytes = W.tobytes(), Bv.tobytes()
    boff = 4096                                   # page-aligned like onnx does
    assert len(wbytes) <= boff
    blob = wbytes + b"\0" * (boff - len(wbytes)) + bbytes

    def ext(name, dims, offset, length):
        t = TensorProto()
        t.name = name
        t.data_type = TensorProto.FLOAT
        t.dims.extend(dims)
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", EXT_BIN), ("offset", str(offset)),
                     ("length", str(length))):
            e = t.external_data.add()
            e.key, e.value = k, v
        return t

    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["xW"], name="matmul"),
         helper.make_node("Add", ["xW", "B"], ["y"], name="add_bias")],
        "external_data",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, n])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, n])],
        initializer=[ext("W", [n, n], 0, len(wbytes)),
                     ext("B", [n], boff, len(bbytes))])
    model = helper.make_model(graph, ir_version=8,
                              opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name=PRODUCER,
                              producer_version=PRODUCER_VERSION)
    return model.SerializeToString(), blob, (W, Bv)


# ---------------------------------------------------------------------------
# 5. unknown fields
# ---------------------------------------------------------------------------

def _varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _key(field, wire):
    return _varint((field << 3) | wire)


def _len_field(field, payload):
    return _key(field, 2) + _varint(len(payload)) + payload


UNKNOWN_FIELD = 1000


def make_unknown_fields():
    F = TensorProto.FLOAT
    scale = numpy_helper.from_array(np.array([1.0, 2.0, 3.0, 4.0], dtype="<f4"), "scale")
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"], name="relu"),
         helper.make_node("Mul", ["r", "scale"], ["y"], name="mul")],
        "unknown_fields",
        [helper.make_tensor_value_info("x", F, [1, 4])],
        [helper.make_tensor_value_info("y", F, [1, 4])],
        initializer=[scale])
    model = helper.make_model(graph, ir_version=8,
                              opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name=PRODUCER,
                              producer_version=PRODUCER_VERSION)

    # NodeProto: known fields + varint field 1000 (value = 1 + node index)
    node_bytes = [n.SerializeToString() + _key(UNKNOWN_FIELD, 0) + _varint(i + 1)
                  for i, n in enumerate(graph.node)]
    # GraphProto: nodes (field 1) + remaining known fields + unknown varint 1000
    # and an unknown fixed64 field 1002
    g_rest = onnx.GraphProto()
    g_rest.CopyFrom(graph)
    del g_rest.node[:]
    graph_bytes = (b"".join(_len_field(1, nb) for nb in node_bytes)
                   + g_rest.SerializeToString()
                   + _key(UNKNOWN_FIELD, 0) + _varint(300)
                   + _key(1002, 1) + struct.pack("<Q", 0x0123456789ABCDEF))
    # ModelProto: known fields, graph (field 7), unknown varint 1000 and an
    # unknown length-delimited field 1001
    m_rest = onnx.ModelProto()
    m_rest.CopyFrom(model)
    m_rest.ClearField("graph")
    raw = (m_rest.SerializeToString()
           + _len_field(7, graph_bytes)
           + _key(UNKNOWN_FIELD, 0) + _varint(150000)
           + _len_field(1001, b"passhost-unknown-bytes"))
    # Re-serialize through protobuf so the bytes are in canonical order (known
    # fields by number, unknown fields last), as any protobuf writer emits them.
    return onnx.ModelProto.FromString(raw).SerializeToString()


# ---------------------------------------------------------------------------
# checks
# ---------------------------------------------------------------------------

def histogram(graph):
    c = collections.Counter(n.op_type for n in graph.node)
    return ", ".join("%s=%d" % kv for kv in sorted(c.items()))


def shape_str(vi):
    dims = []
    for d in vi.type.tensor_type.shape.dim:
        dims.append(d.dim_param if d.HasField("dim_param") else str(d.dim_value))
    return "%s[%s]" % (vi.name, ",".join(dims))


def check(path, expect_ops=()):
    # Path form resolves external data.  Do NOT pass full_check=True here: in
    # onnx 1.12 that runs infer_shapes_path(), which rewrites the file in place.
    before = open(path, "rb").read()
    onnx.checker.check_model(path)
    m = onnx.load(path)
    onnx.checker.check_model(m, full_check=True)     # strict shape inference, in memory
    assert open(path, "rb").read() == before, "checker modified " + path
    ops = {n.op_type for n in m.graph.node}
    for op in expect_ops:
        assert op in ops, "%s: missing %s node" % (path, op)
    rel = os.path.relpath(path, ROOT)
    print("%-38s %8d B  in: %s  out: %s" % (
        rel, os.path.getsize(path),
        " ".join(shape_str(v) for v in m.graph.input),
        " ".join(shape_str(v) for v in m.graph.output)))
    print("    ops (%d): %s" % (len(m.graph.node), histogram(m.graph)))
    return m


def check_unknown_fields(path):
    data = open(path, "rb").read()
    m = onnx.load_from_string(data)
    # protobuf keeps unknown fields; re-serializing must keep them too
    again = m.SerializeToString()
    assert len(again) == len(data), "unknown fields were dropped"
    marker = _key(UNKNOWN_FIELD, 0)
    assert data.count(marker) >= 4, "expected field 1000 in model, graph and nodes"
    for n in m.graph.node:
        nb = n.SerializeToString()
        assert marker in nb, "node lost its unknown field"


# ---------------------------------------------------------------------------
# 6. models of deployed shapes for the evaluator (ONNX Runtime reference data
#    in tests/models/reference/, made by scripts/ort_reference.js)
# ---------------------------------------------------------------------------

def _weights(rng, name, shape, scale=0.5):
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


def _model(graph, opsets):
    model = helper.make_model(graph, ir_version=8, opset_imports=opsets,
                              producer_name=PRODUCER, producer_version=PRODUCER_VERSION)
    return model.SerializeToString()


def make_speech_vad():
    """Conv1d + Relu over an audio chunk, an LSTM carrying its state between
    calls (h and c in and out), and an If on the sample rate whose branches
    read the classifier weights of the main graph (as Silero-style VADs)."""
    F, I64 = TensorProto.FLOAT, TensorProto.INT64
    rng = np.random.default_rng(11)
    H = 16
    inits = [_weights(rng, "conv_w", [4, 1, 8]), _weights(rng, "conv_b", [4]),
             _weights(rng, "lstm_w", [1, 4 * H, 4]), _weights(rng, "lstm_r", [1, 4 * H, H], 0.3),
             _weights(rng, "lstm_b", [1, 8 * H], 0.1), _weights(rng, "head_a", [H, 1]),
             _weights(rng, "head_b", [H, 1]),
             numpy_helper.from_array(np.array(5, np.int64), "rate_split"),
             numpy_helper.from_array(np.array([1], np.int64), "axis1")]
    branch = lambda name, w: helper.make_graph(  # noqa: E731
        [helper.make_node("MatMul", ["h_last", w], [name + "_logit"]),
         helper.make_node("Sigmoid", [name + "_logit"], [name + "_out"])],
        name, [], [helper.make_tensor_value_info(name + "_out", F, [1, 1])])
    nodes = [
        helper.make_node("Conv", ["audio", "conv_w", "conv_b"], ["feat"], strides=[4]),
        helper.make_node("Relu", ["feat"], ["feat_r"]),
        helper.make_node("Transpose", ["feat_r"], ["seq"], perm=[2, 0, 1]),
        helper.make_node("LSTM", ["seq", "lstm_w", "lstm_r", "lstm_b", "", "h0", "c0"],
                         ["y", "hn", "cn"], hidden_size=H),
        helper.make_node("Squeeze", ["hn", "axis1"], ["h_sq"]),
        helper.make_node("Identity", ["h_sq"], ["h_last"]),
        helper.make_node("Greater", ["sr", "rate_split"], ["wide"]),
        helper.make_node("If", ["wide"], ["prob"], then_branch=branch("wide_band", "head_a"),
                         else_branch=branch("narrow_band", "head_b")),
    ]
    graph = helper.make_graph(
        nodes, "speech_vad",
        [helper.make_tensor_value_info("audio", F, [1, 1, 64]),
         helper.make_tensor_value_info("h0", F, [1, 1, H]),
         helper.make_tensor_value_info("c0", F, [1, 1, H]),
         helper.make_tensor_value_info("sr", I64, [])],
        [helper.make_tensor_value_info("prob", F, [1, 1]),
         helper.make_tensor_value_info("hn", F, [1, 1, H]),
         helper.make_tensor_value_info("cn", F, [1, 1, H])],
        initializer=inits)
    return _model(graph, [helper.make_opsetid("", 13)])


def make_quantized_mlp():
    """x -> DynamicQuantizeLinear -> MatMulInteger with a uint8 weight and its
    zero point -> Cast -> times both scales -> + bias -> Relu ->
    QuantizeLinear / DequantizeLinear (a QDQ pair) -> MatMul with a weight
    stored per axis as int8 and dequantized per output column."""
    F, U8, I8 = TensorProto.FLOAT, TensorProto.UINT8, TensorProto.INT8
    rng = np.random.default_rng(12)
    inits = [numpy_helper.from_array(rng.integers(0, 256, (16, 8), dtype=np.uint8), "w1_q"),
             numpy_helper.from_array(np.array(131, np.uint8), "w1_zp"),
             numpy_helper.from_array(np.array(0.01, np.float32), "w1_scale"),
             _weights(rng, "b1", [8], 0.1),
             numpy_helper.from_array(np.array(0.02, np.float32), "act_scale"),
             numpy_helper.from_array(np.array(10, np.uint8), "act_zp"),
             numpy_helper.from_array(rng.integers(-127, 128, (8, 4), dtype=np.int8), "w2_q"),
             numpy_helper.from_array(np.array([0.01, 0.02, 0.015, 0.005], np.float32), "w2_scale"),
             numpy_helper.from_array(np.zeros(4, np.int8), "w2_zp")]
    nodes = [
        helper.make_node("DynamicQuantizeLinear", ["x"], ["x_q", "x_scale", "x_zp"]),
        helper.make_node("MatMulInteger", ["x_q", "w1_q", "x_zp", "w1_zp"], ["acc"]),
        helper.make_node("Cast", ["acc"], ["acc_f"], to=F),
        helper.make_node("Mul", ["x_scale", "w1_scale"], ["scale"]),
        helper.make_node("Mul", ["acc_f", "scale"], ["h_raw"]),
        helper.make_node("Add", ["h_raw", "b1"], ["h_b"]),
        helper.make_node("Relu", ["h_b"], ["h"]),
        helper.make_node("QuantizeLinear", ["h", "act_scale", "act_zp"], ["h_q"]),
        helper.make_node("DequantizeLinear", ["h_q", "act_scale", "act_zp"], ["h_dq"]),
        helper.make_node("DequantizeLinear", ["w2_q", "w2_scale", "w2_zp"], ["w2"], axis=1),
        helper.make_node("MatMul", ["h_dq", "w2"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "quantized_mlp", [helper.make_tensor_value_info("x", F, [2, 16])],
        [helper.make_tensor_value_info("y", F, [2, 4])], initializer=inits)
    return _model(graph, [helper.make_opsetid("", 13)])


def make_ort_contrib():
    """The com.microsoft ops of passhost's target-ort passes in one graph:
    FusedConv (Relu), FusedGemm (LeakyRelu), SkipLayerNormalization with a
    bias, FastGelu with a bias, FusedMatMul (transB, alpha) and Gelu."""
    F, MS = TensorProto.FLOAT, "com.microsoft"
    rng = np.random.default_rng(13)
    inits = [_weights(rng, "cw", [4, 3, 3, 3]), _weights(rng, "cb", [4], 0.1),
             _weights(rng, "gw", [4, 16]), _weights(rng, "gb", [16], 0.1),
             numpy_helper.from_array(np.array([1, 2, 8], np.int64), "shape3"),
             _weights(rng, "skip", [1, 2, 8]), _weights(rng, "gamma", [8], 1.0),
             _weights(rng, "beta", [8], 0.1), _weights(rng, "sbias", [8], 0.1),
             _weights(rng, "fbias", [8], 0.1), _weights(rng, "mw", [5, 8])]
    nodes = [
        helper.make_node("FusedConv", ["x", "cw", "cb"], ["c"], domain=MS, activation="Relu",
                         pads=[1, 1, 1, 1]),
        helper.make_node("GlobalAveragePool", ["c"], ["p"]),
        helper.make_node("Flatten", ["p"], ["f"]),
        helper.make_node("FusedGemm", ["f", "gw", "gb"], ["g"], domain=MS, activation="LeakyRelu",
                         activation_alpha=0.1, alpha=1.0, beta=1.0),
        helper.make_node("Reshape", ["g", "shape3"], ["g3"]),
        helper.make_node("SkipLayerNormalization", ["g3", "skip", "gamma", "beta", "sbias"],
                         ["ln", "", "", "sum"], domain=MS, epsilon=1e-5),
        helper.make_node("FastGelu", ["ln", "fbias"], ["fg"], domain=MS),
        helper.make_node("FusedMatMul", ["fg", "mw"], ["mm"], domain=MS, transB=1, alpha=0.5),
        helper.make_node("Gelu", ["mm"], ["y"], domain=MS),
    ]
    # the types of the contrib ops' outputs, as the passes that emit them set
    # them (shape inference knows no com.microsoft op)
    vi = [helper.make_tensor_value_info(n, F, d) for n, d in
          (("c", [1, 4, 6, 6]), ("g", [1, 16]), ("ln", [1, 2, 8]), ("fg", [1, 2, 8]), ("mm", [1, 2, 5]))]
    graph = helper.make_graph(
        nodes, "ort_contrib", [helper.make_tensor_value_info("x", F, [1, 3, 6, 6])],
        [helper.make_tensor_value_info("y", F, [1, 2, 5]),
         helper.make_tensor_value_info("sum", F, [1, 2, 8])], initializer=inits, value_info=vi)
    return _model(graph, [helper.make_opsetid("", 13), helper.make_opsetid(MS, 1)])


def main():
    os.makedirs(MODELS, exist_ok=True)
    os.makedirs(TEST_MODELS, exist_ok=True)
    torch.use_deterministic_algorithms(True)

    cnn = make_cnn()
    tfm = make_transformer()
    for d in (MODELS, TEST_MODELS):
        write(os.path.join(d, "cnn_small.onnx"), cnn)
        write(os.path.join(d, "transformer_block.onnx"), tfm)

    write(os.path.join(TEST_MODELS, "control_flow.onnx"), make_control_flow())
    ext_model, ext_blob, _ = make_external_data()
    write(os.path.join(TEST_MODELS, "external_data.onnx"), ext_model)
    write(os.path.join(TEST_MODELS, EXT_BIN), ext_blob)
    write(os.path.join(TEST_MODELS, "unknown_fields.onnx"), make_unknown_fields())
    write(os.path.join(TEST_MODELS, "speech_vad.onnx"), make_speech_vad())
    write(os.path.join(TEST_MODELS, "quantized_mlp.onnx"), make_quantized_mlp())
    write(os.path.join(TEST_MODELS, "ort_contrib.onnx"), make_ort_contrib())

    for d in (MODELS, TEST_MODELS):
        check(os.path.join(d, "cnn_small.onnx"),
              ("Identity", "MaxPool", "GlobalAveragePool", "Flatten", "Gemm"))
        check(os.path.join(d, "transformer_block.onnx"),
              ("Transpose", "MatMul", "Softmax"))
    check(os.path.join(TEST_MODELS, "control_flow.onnx"), ("If", "Loop", "ScaleAdd"))
    m = check(os.path.join(TEST_MODELS, "external_data.onnx"), ("MatMul", "Add"))
    for t in m.graph.initializer:   # onnx.load resolved the external data
        assert t.data_location == TensorProto.DEFAULT and t.raw_data
    check(os.path.join(TEST_MODELS, "unknown_fields.onnx"), ("Relu", "Mul"))
    check_unknown_fields(os.path.join(TEST_MODELS, "unknown_fields.onnx"))
    check(os.path.join(TEST_MODELS, "speech_vad.onnx"), ("LSTM", "If", "Conv"))
    check(os.path.join(TEST_MODELS, "quantized_mlp.onnx"), ("DynamicQuantizeLinear", "MatMulInteger"))
    check(os.path.join(TEST_MODELS, "ort_contrib.onnx"), ("FusedConv", "SkipLayerNormalization"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
