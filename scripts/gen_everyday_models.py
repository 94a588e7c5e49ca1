#!/usr/bin/env python3
"""Models with the shapes of real exports that passhost met in public
packages (speech, OCR, segmentation), made here with torch and onnx.helper
(random weights, nothing downloaded):

    scripts/gen_everyday_models.py OUTDIR [NAME ...]

  vad_like          a Silero-VAD-like voice detector, torch.jit.script'ed so
                    its control flow is exported as If nodes: shape checks
                    whose conditions fold to constants (`if x.dim() == 1`,
                    `if x.size(1) % 8 == 0`, `if h.size(2) == 32`), a nested
                    If in each model branch, and an If on the sample-rate
                    input `sr` choosing a 16 kHz or an 8 kHz model (two
                    Conv STFT + 2-layer LSTM cores); opset 16
  if_in_loop        onnx.helper: a Loop whose body holds an If with a
                    constant condition, whose taken branch holds another
                    (nested) one; opset 17
  seg_fp16_unordered a small segmentation net (Conv/BatchNorm/ReLU encoder,
                    Resize decoder) exported in fp32 and converted to fp16
                    the way onnxconverter-common's float16 converter does it
                    with keep_io_types: initializers in fp16, float inputs and
                    outputs kept float32 through Cast nodes, and Resize kept
                    in float32 between Casts -- every Cast appended at the
                    END of the node list, so the list is out of order; opset 13
  reshape_chain     an OCR-recognizer-like CRNN head: CNN features reshaped
                    with x.reshape(b, c * h, w) and a softmax over
                    reshape(b * n, -1), with batch and width dynamic, so torch
                    computes the Reshape targets with Shape -> Gather ->
                    Unsqueeze -> Concat chains; opset 13
  int64_index_math  index arithmetic in int64 as torch exports it: argmax
                    indices, a position ramp (torch.arange of a dynamic
                    length), Mul/Add/Mod on them, a gather with the result;
                    sequence length dynamic; opset 13

Needs Debian's python3-torch and python3-onnx; exits 3 without them.
"""
import os
import sys

try:
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    import numpy as np
    import torch
    from torch import nn
    import torch.nn.functional as F
except ImportError as e:
    print(f"gen_everyday_models: {e.name} is not installed", file=sys.stderr)
    sys.exit(3)


# ---------------------------------------------------------------- vad_like

class VadCore(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.stft = nn.Conv1d(1, 2 * width, 16, stride=8, bias=False)
        self.enc = nn.Conv1d(width, 32, 3, padding=1)
        self.enc2 = nn.Conv1d(32, 32, 3, padding=1, stride=2)
        self.lstm = nn.LSTM(32, 32, num_layers=2)
        self.dec = nn.Conv1d(32, 1, 1)
        self.width = width

    def forward(self, x, h, c):
        x = F.pad(x.unsqueeze(1), (8, 8), mode="reflect")
        y = self.stft(x)
        re = y[:, :self.width]
        im = y[:, self.width:]
        mag = torch.sqrt(re * re + im * im)
        z = torch.relu(self.enc2(torch.relu(self.enc(mag))))
        out, (hn, cn) = self.lstm(z.permute(2, 0, 1), (h, c))
        out = torch.sigmoid(self.dec(out.permute(1, 2, 0)))
        if out.dim() == 3:
            out = out.squeeze(1)
        return out.mean(1, keepdim=True), hn, cn


class VadLike(nn.Module):
    def __init__(self):
        super().__init__()
        self.m16 = VadCore(8)
        self.m8 = VadCore(4)

    def forward(self, x, sr: int, h, c):
        if x.dim() == 1:
            x = x.unsqueeze(0)
        if x.size(1) % 8 == 0:
            x = x * 1.0
        else:
            x = x[:, : x.size(1) - x.size(1) % 8]
        if h.size(2) == 32:
            h = h + 0.0
        if sr == 16000:
            out, h2, c2 = self.m16(x, h, c)
        else:
            out, h2, c2 = self.m8(x, h, c)
        return out, h2, c2


def export_vad_like(path):
    torch.manual_seed(0)
    m = torch.jit.script(VadLike().eval())
    args = (torch.randn(1, 512), 16000, torch.zeros(2, 1, 32), torch.zeros(2, 1, 32))
    torch.onnx.export(m, args, path, opset_version=16,
                      input_names=["input", "sr", "h", "c"], output_names=["output", "hn", "cn"],
                      dynamic_axes={"input": {0: "batch", 1: "samples"}, "h": {1: "batch"},
                                    "c": {1: "batch"}})


# -------------------------------------------------------------- if_in_loop

def export_if_in_loop(path):
    f = TensorProto.FLOAT
    d = [2, 3]
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.uniform(-1, 1, d).astype(np.float32), "w")

    def const_bool(name, value):
        return helper.make_node("Constant", [], [name], name=name + "_node",
                                value=helper.make_tensor(name + "_t", TensorProto.BOOL, [], [value]))

    # inner If (in the taken branch): true -> Relu(v_sum), else Neg(v_sum)
    inner_then = helper.make_graph([helper.make_node("Relu", ["v_sum"], ["in_t"], name="in_relu")],
                                   "inner_then", [], [helper.make_tensor_value_info("in_t", f, d)])
    inner_else = helper.make_graph([helper.make_node("Neg", ["v_sum"], ["in_e"], name="in_neg")],
                                   "inner_else", [], [helper.make_tensor_value_info("in_e", f, d)])
    # outer If in the body: false -> else branch (Add + the inner If), then: Mul
    then_b = helper.make_graph([helper.make_node("Mul", ["v", "w"], ["o_t"], name="o_mul")],
                               "outer_then", [], [helper.make_tensor_value_info("o_t", f, d)])
    else_b = helper.make_graph(
        [helper.make_node("Add", ["v", "w"], ["v_sum"], name="o_add"),
         const_bool("inner_cond", True),
         helper.make_node("If", ["inner_cond"], ["o_e"], name="inner_if",
                          then_branch=inner_then, else_branch=inner_else)],
        "outer_else", [], [helper.make_tensor_value_info("o_e", f, d)])
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"], name="keep"),
         const_bool("outer_cond", False),
         helper.make_node("If", ["outer_cond"], ["v_next"], name="outer_if",
                          then_branch=then_b, else_branch=else_b),
         helper.make_node("Tanh", ["v_next"], ["v_out"], name="squash")],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v", f, d)],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_out", f, d)])
    trip = numpy_helper.from_array(np.array(3, dtype=np.int64), "trip")
    go = numpy_helper.from_array(np.array(True), "go")
    graph = helper.make_graph(
        [helper.make_node("Loop", ["trip", "go", "x"], ["y"], name="loop", body=body)],
        "if_in_loop", [helper.make_tensor_value_info("x", f, d)],
        [helper.make_tensor_value_info("y", f, d)], [w, trip, go])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


# ------------------------------------------------------ seg_fp16_unordered

class SegNet(nn.Module):
    def __init__(self):
        super().__init__()

        def block(i, o, s):
            return nn.Sequential(nn.Conv2d(i, o, 3, stride=s, padding=1, bias=False),
                                 nn.BatchNorm2d(o), nn.ReLU())
        self.enc1 = block(3, 16, 2)
        self.enc2 = block(16, 32, 2)
        self.enc3 = block(32, 32, 1)
        self.head = nn.Conv2d(48, 1, 1)

    def forward(self, x):
        a = self.enc1(x)
        b = self.enc3(self.enc2(a))
        up = F.interpolate(b, scale_factor=2.0, mode="bilinear", align_corners=False)
        y = self.head(torch.cat([up[:, :32], a], 1))
        y = F.interpolate(y, scale_factor=2.0, mode="bilinear", align_corners=False)
        return torch.sigmoid(y)


def to_fp16_unordered(model):
    """float32 -> float16 as onnxconverter-common's converter does with
    keep_io_types=True and Resize in its block list: new Casts at the end."""
    g = model.graph
    f32, f16 = TensorProto.FLOAT, TensorProto.FLOAT16
    keep32 = set()  # names of values that stay float32: Resize scales/roi
    for n in g.node:
        if n.op_type == "Resize":
            keep32.update(n.input[1:])
    for t in g.initializer:
        if t.data_type == f32 and t.name not in keep32:
            arr = numpy_helper.to_array(t).astype(np.float16)
            t.CopyFrom(numpy_helper.from_array(arr, t.name))
    for n in g.node:
        if n.op_type == "Constant":
            for a in n.attribute:
                if a.name == "value" and a.t.data_type == f32 and n.output[0] not in keep32:
                    a.t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(a.t).astype(np.float16)))
        for a in n.attribute:
            if n.op_type == "Cast" and a.name == "to" and a.i == f32:
                a.i = f16
    g.ClearField("value_info")
    tail = []
    # inputs: x (float32) -> Cast -> x_fp16 read by the nodes
    for vi in g.input:
        if vi.type.tensor_type.elem_type != f32:
            continue
        new = vi.name + "_fp16"
        for n in g.node:
            n.input[:] = [new if i == vi.name else i for i in n.input]
        tail.append(helper.make_node("Cast", [vi.name], [new], name=vi.name + "_cast_fp16", to=f16))
    # outputs stay float32: the producer writes NAME_fp16, a Cast makes NAME
    for vi in g.output:
        if vi.type.tensor_type.elem_type != f32:
            continue
        new = vi.name + "_fp16"
        for n in g.node:
            n.output[:] = [new if o == vi.name else o for o in n.output]
        tail.append(helper.make_node("Cast", [new], [vi.name], name=vi.name + "_cast_fp32", to=f32))
    # Resize runs in float32: Casts around it
    for k, n in enumerate(g.node):
        if n.op_type != "Resize":
            continue
        x32, y16 = n.input[0] + "_fp32_" + str(k), n.output[0]
        y32 = y16 + "_fp32"
        tail.append(helper.make_node("Cast", [n.input[0]], [x32], name=f"resize{k}_in_fp32", to=f32))
        tail.append(helper.make_node("Cast", [y32], [y16], name=f"resize{k}_out_fp16", to=f16))
        n.input[0] = x32
        n.output[0] = y32
    g.node.extend(tail)
    return model


def export_seg_fp16(path):
    torch.manual_seed(0)
    net = SegNet().eval()
    g = torch.Generator().manual_seed(1)
    for m in net.modules():
        if isinstance(m, nn.BatchNorm2d):
            with torch.no_grad():
                m.running_mean.copy_(torch.rand(m.running_mean.shape, generator=g) - 0.5)
                m.running_var.copy_(torch.rand(m.running_var.shape, generator=g) + 0.5)
    tmp = path + ".fp32"
    torch.onnx.export(net, torch.randn(1, 3, 64, 64), tmp, opset_version=13,
                      input_names=["image"], output_names=["mask"],
                      training=torch.onnx.TrainingMode.PRESERVE)
    model = to_fp16_unordered(onnx.load(tmp))
    os.unlink(tmp)
    onnx.save(model, path)


# ----------------------------------------------------------- reshape_chain

class RecHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                  nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d((4, 1)))
        self.fc = nn.Linear(64, 40)

    def forward(self, x):
        y = self.conv(x)
        b, c, h, w = y.shape
        y = y.reshape(b, c * h, w).permute(0, 2, 1)
        z = self.fc(y)
        n = z.shape[1]
        return z.reshape(b * n, -1).softmax(-1).reshape(b, n, 40)


def export_reshape_chain(path):
    torch.manual_seed(0)
    torch.onnx.export(RecHead().eval(), torch.randn(1, 3, 16, 64), path, opset_version=13,
                      input_names=["x"], output_names=["probs"],
                      dynamic_axes={"x": {0: "batch", 3: "width"}, "probs": {0: "batch", 1: "seq"}})


class IndexMath(torch.nn.Module):
    def forward(self, x):
        i = x.argmax(-1)
        pos = torch.arange(x.shape[1]).unsqueeze(0)
        j = (i * 3 + pos + 1) % x.shape[2]
        picked = torch.gather(x, 2, j.unsqueeze(-1)).squeeze(-1)
        return picked, (i + pos).float()


def export_int64_index_math(path):
    torch.onnx.export(IndexMath().eval(), torch.randn(2, 5, 8), path, opset_version=13,
                      input_names=["x"], output_names=["picked", "where"],
                      dynamic_axes={"x": {1: "seq"}, "picked": {1: "seq"}, "where": {1: "seq"}})


MODELS = {
    "vad_like": export_vad_like,
    "if_in_loop": export_if_in_loop,
    "seg_fp16_unordered": export_seg_fp16,
    "reshape_chain": export_reshape_chain,
    "int64_index_math": export_int64_index_math,
}


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = sys.argv[1]
    names = sys.argv[2:] or list(MODELS)
    os.makedirs(out, exist_ok=True)
    import warnings
    warnings.filterwarnings("ignore")
    for name in names:
        if name not in MODELS:
            print(f"gen_everyday_models: no model {name} (have {', '.join(MODELS)})", file=sys.stderr)
            return 2
        path = os.path.join(out, name + ".onnx")
        MODELS[name](path)
        print(f"gen_everyday_models: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
