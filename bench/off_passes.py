#!/usr/bin/python3
"""Run every pass that is off by default on a small model that has its pattern.

    /usr/bin/python3 bench/off_passes.py [OUTDIR] [--build DIR] [--only A,B] [-v]
    make bench-off-passes                   (BUILD=... selects the build tree)

Passes that are off by default never run in `make test-ort` on the bundled
models unless those happen to hold their pattern.  This script builds, for each
of them, a small but realistic ONNX model with random weights that holds the
pattern (a ShuffleNet channel shuffle, an ESPCN pixel shuffle, a ResNeXt grouped
conv, a ViT patch embedding and fused-QKV attention, a QDQ CNN, ...: see the
CASES table below; most come from torch.onnx.export, the rest from
onnx.helper), and rewrites it twice with passhost:

  1. the defaults only:        passhost -i M -o M.defaults.onnx
  2. the defaults + the pass:  passhost -i M -o M.out.onnx
                                 --set STAGE.pass_on=NAME
                                 [--set STAGE.allow_approximate=true]   (approx)
                                 [--set pass.NAME.PARAM=VALUE ...]      (params)

STAGE is the pass's stage from `passhost --list-passes` (the first one when it
has both).  The node counts and the pass's rewrite count come from passhost's
per-pass report (--report-json).  The rewritten model is then run beside the
original in ONNX Runtime:

  node scripts/ort_check.js REF M.out.onnx -q --symbolic 1,3 --atol 1e-4 --rtol 1e-3

(3 runs of seeded random inputs; symbolic dims such as the batch are 1, 3, 1.)

REF is the original model, except for the passes that change the interface by
design: for fold_constant_inputs it is the original with the folded input bound
to the .npy file's values (as an initializer), for set_output_layout the
original with the requested Transpose appended to the output.

It prints a markdown table: pass, stage, exactness, model, nodes of the
original, after the defaults, after the defaults + the pass, the pass's
rewrites, the max abs difference in ONNX Runtime, and the verdict.

Exit status 1 when, for some case: the pass made fewer rewrites than the model
has instances of its pattern (every case below says how many it has; 0 means
it did not fire), passhost failed, ONNX Runtime cannot load or run the output,
or an exact/fp pass's output differs beyond the tolerance (approx passes are
reported, never failed on their difference); also when an off-by-default pass
has no case here (add one).  A case whose plugin is not in the build is
skipped with a line saying so; so is a case whose pass is now on by default.
Exit 2 on a usage error or a missing tool (passhost, node, onnx, torch).

Models and outputs are written to OUTDIR (default build/off_passes), one set
per case: NAME.onnx, NAME.defaults.onnx, NAME.out.onnx, NAME.*.json (the
reports), NAME.ref.onnx when REF is not the original, and any data files.

Needs /usr/bin/python3 with Debian's python3-onnx, python3-numpy and
python3-torch, node with onnxruntime-node (npm install --ignore-scripts), and a
built passhost (make BUILD=DIR all).  Nothing is downloaded.
"""
import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper as oh, numpy_helper
except ImportError as e:
    print(f"off_passes: {e}: install python3-onnx and python3-numpy", file=sys.stderr)
    sys.exit(2)

ATOL, RTOL = 1e-4, 1e-3
F32 = TensorProto.FLOAT
I64 = TensorProto.INT64


# ----------------------------------------------------------------- model helpers

class Graph:
    """A small onnx.helper graph builder with seeded random weights."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.inputs, self.outputs = [], [], [], []
        self.count = 0

    def _name(self, prefix):
        self.count += 1
        return f"{prefix}{self.count}"

    def input(self, name, shape, dtype=F32):
        self.inputs.append(oh.make_tensor_value_info(name, dtype, shape))
        return name

    def output(self, name, dtype=F32, shape=None):
        self.outputs.append(oh.make_tensor_value_info(name, dtype, shape))

    def const(self, array, prefix="c"):
        name = self._name(prefix)
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def weight(self, *shape, scale=None):
        """Uniform random float32 weight, scaled like a fan-in initialisation."""
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
        s = scale if scale is not None else 1.0 / np.sqrt(max(fan_in, 1))
        return self.const(self.rng.uniform(-s, s, shape).astype(np.float32), "w")

    def ints(self, values):
        return self.const(np.array(values, dtype=np.int64), "i")

    def op(self, op_type, inputs, outputs=1, name=None, **attrs):
        """Add a node; outputs is a count (fresh names) or a list of names."""
        outs = [self._name(op_type.lower()) for _ in range(outputs)] if isinstance(outputs, int) else list(outputs)
        self.nodes.append(oh.make_node(op_type, list(inputs), outs, name=name or self._name(op_type + "_"), **attrs))
        return outs[0] if len(outs) == 1 else outs

    def conv(self, x, cin, cout, k, bias=True, **attrs):
        ks = [k, k] if isinstance(k, int) else list(k)
        group = attrs.get("group", 1)
        ins = [x, self.weight(cout, cin // group, *ks)]
        if bias:
            ins.append(self.const(self.rng.uniform(-0.1, 0.1, cout).astype(np.float32), "b"))
        return self.op("Conv", ins, kernel_shape=ks, **attrs)

    def model(self, opset=13):
        g = oh.make_graph(self.nodes, "off_passes", self.inputs, self.outputs, initializer=self.inits)
        m = oh.make_model(g, opset_imports=[oh.make_opsetid("", opset)], producer_name="off_passes")
        m.ir_version = 8
        # give the outputs their inferred shapes (graph outputs need a shape field)
        bare = onnx.ModelProto()
        bare.CopyFrom(m)
        del bare.graph.output[:]
        inferred = {v.name: v for v in onnx.shape_inference.infer_shapes(bare).graph.value_info}
        for o in m.graph.output:
            if not o.type.tensor_type.HasField("shape") and o.name in inferred:
                o.type.CopyFrom(inferred[o.name].type)
        onnx.checker.check_model(m)
        return m


def torch_model(module, args, path, opset=13, inputs=("input",), outputs=("output",), dynamic=None):
    """Export a torch module in eval mode (random weights) to path; return the ModelProto."""
    import torch
    module.eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, args, path, opset_version=opset, input_names=list(inputs),
                          output_names=list(outputs), dynamic_axes=dynamic or {}, do_constant_folding=True)
    return onnx.load(path)


def randomize(module, seed):
    """Random parameters and BatchNorm statistics, so no affine part is trivial."""
    import torch
    torch.manual_seed(seed)
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, (torch.nn.LayerNorm, torch.nn.BatchNorm1d, torch.nn.BatchNorm2d, torch.nn.BatchNorm3d)):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)
            if isinstance(m, (torch.nn.BatchNorm1d, torch.nn.BatchNorm2d, torch.nn.BatchNorm3d)):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2.0)
    return module


# ------------------------------------------------------------------------ the cases
#
# Each builder gets the case's folder prefix (OUTDIR/NAME) and returns
# (model, params, reference): the ModelProto to rewrite, the pass's parameters
# ({} for the defaults), and the model ONNX Runtime compares the output with
# (None: the original).

class Case:
    def __init__(self, pass_name, label, what, build, instances, stage=None):
        self.pass_name, self.label, self.what, self.build = pass_name, label, what, build
        self.instances = instances  # pattern instances in the model: the pass must make at least this many rewrites
        self.stage = stage          # None: the pass's (first) stage from --list-passes

    @property
    def name(self):
        return self.pass_name + (f"-{self.label}" if self.label else "")


CASES = []


def case(pass_name, what, instances, label=None, stage=None):
    def register(build):
        CASES.append(Case(pass_name, label, what, build, instances, stage))
        return build
    return register


@case("batchnorm_to_mul_add", "pre-activation ResNet block: Add -> BN -> Relu -> Conv(pad 1)", 1)
def _(prefix):
    g = Graph(1)
    x = g.input("input", [1, 16, 16, 16])
    c = g.op("Relu", [g.conv(x, 16, 16, 3, pads=[1, 1, 1, 1])])
    s = g.op("Add", [x, g.conv(c, 16, 16, 3, pads=[1, 1, 1, 1])])
    bn = g.op("BatchNormalization", [s, g.const(g.rng.uniform(0.5, 1.5, 16).astype(np.float32)),
                                     g.const(g.rng.uniform(-0.2, 0.2, 16).astype(np.float32)),
                                     g.const(g.rng.uniform(-0.5, 0.5, 16).astype(np.float32)),
                                     g.const(g.rng.uniform(0.5, 2.0, 16).astype(np.float32))], epsilon=1e-5)
    g.op("Conv", [g.op("Relu", [bn]), g.weight(16, 16, 3, 3)], ["output"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    g.output("output")
    return g.model(), {}, None


@case("conv1d_to_conv2d", "TCN block (torch): Conv1d -> ReLU -> dilated Conv1d -> ReLU, residual Add", 1)
def _(prefix):
    import torch

    class TCN(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = torch.nn.Conv1d(16, 16, 3, padding=1)
            self.c2 = torch.nn.Conv1d(16, 16, 3, padding=2, dilation=2)

        def forward(self, x):
            return torch.relu(x + torch.relu(self.c2(torch.relu(self.c1(x)))))

    m = torch_model(randomize(TCN(), 2), torch.randn(1, 16, 64), prefix + ".onnx",
                    dynamic={"input": {0: "batch"}, "output": {0: "batch"}})
    return m, {}, None


@case("conv_after_gap_to_gemm", "squeeze-and-excitation block (torch): GAP -> 1x1 Conv -> ReLU -> 1x1 Conv -> Sigmoid", 1)
def _(prefix):
    import torch

    class SE(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 32, 3, padding=1)
            self.pool = torch.nn.AdaptiveAvgPool2d(1)
            self.fc1 = torch.nn.Conv2d(32, 8, 1)
            self.fc2 = torch.nn.Conv2d(8, 32, 1)

        def forward(self, x):
            f = torch.relu(self.conv(x))
            return f * torch.sigmoid(self.fc2(torch.relu(self.fc1(self.pool(f)))))

    return torch_model(randomize(SE(), 3), torch.randn(1, 3, 32, 32), prefix + ".onnx"), {}, None


@case("eliminate_qdq_pairs", "QDQ CNN: Q/DQ on the input and between two Convs (int8 weights through DequantizeLinear)", 2)
def _(prefix):
    g = Graph(4)
    x = g.input("input", [1, 8, 16, 16])

    def qdq(t, scale, zp):
        s, z = g.const(np.float32(scale)), g.const(np.uint8(zp))
        return g.op("DequantizeLinear", [g.op("QuantizeLinear", [t, s, z]), s, z])

    def qweight(*shape):
        w = g.rng.integers(-127, 128, shape).astype(np.int8)
        return g.op("DequantizeLinear", [g.const(w), g.const(np.float32(0.002)), g.const(np.int8(0))])

    # scales calibrated to the value ranges: the input in [-1, 1), the ReLU output in [0, 6]
    h = g.op("Relu", [g.op("Conv", [qdq(x, 2 / 255, 128), qweight(16, 8, 3, 3)], kernel_shape=[3, 3], pads=[1] * 4)])
    g.op("Conv", [qdq(h, 6 / 255, 0), qweight(16, 16, 3, 3)], ["output"], kernel_shape=[3, 3], pads=[1] * 4)
    g.output("output")
    return g.model(), {}, None


@case("fold_constant_inputs", "BERT embeddings: word + position Gathers, LayerNorm; position_ids folded from an .npy", 1)
def _(prefix):
    g = Graph(5)
    ids = g.input("input_ids", [1, 16], I64)
    pos = g.input("position_ids", [1, 16], I64)
    e = g.op("Add", [g.op("Gather", [g.weight(100, 32, scale=0.5), ids]),
                     g.op("Gather", [g.weight(64, 32, scale=0.5), pos])])
    g.op("LayerNormalization", [e, g.const(g.rng.uniform(0.5, 1.5, 32).astype(np.float32)),
                                g.const(g.rng.uniform(-0.2, 0.2, 32).astype(np.float32))], ["output"], axis=-1)
    g.output("output")
    m = g.model(opset=17)
    values = np.arange(16, dtype=np.int64).reshape(1, 16)
    npy = os.path.abspath(prefix + ".position_ids.npy")
    np.save(npy, values)
    ref = onnx.ModelProto()
    ref.CopyFrom(m)
    keep = [i for i in ref.graph.input if i.name != "position_ids"]
    del ref.graph.input[:]
    ref.graph.input.extend(keep)
    ref.graph.initializer.append(numpy_helper.from_array(values, "position_ids"))
    return m, {"inputs": f"position_ids={npy}"}, ref


@case("gathers_to_split", "box decoding (torch): cx, cy, w, h = b[..., 0..3] -> corners, stacked", 1)
def _(prefix):
    import torch

    class Decode(torch.nn.Module):
        def forward(self, b):
            cx, cy, w, h = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
            return torch.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], dim=-1)

    return torch_model(Decode(), torch.randn(1, 100, 4), prefix + ".onnx"), {}, None


@case("gathers_to_split", "YOLO head: xy, wh, obj, cls = p[..., [0,1]], [2,3], [4], [5..9] (1-D index runs)", 1,
      label="runs")
def _(prefix):
    g = Graph(6)
    p = g.input("input", [1, 300, 10])
    parts = [g.op("Gather", [p, g.ints(idx)], axis=2) for idx in ([0, 1], [2, 3], [4], list(range(5, 10)))]
    xy = g.op("Mul", [g.op("Sigmoid", [parts[0]]), g.const(np.float32(2.0))])
    wh = g.op("Exp", [parts[1]])
    score = g.op("Mul", [g.op("Sigmoid", [parts[2]]), g.op("Sigmoid", [parts[3]])])
    g.op("Concat", [xy, wh, score], ["output"], axis=2)
    g.output("output")
    return g.model(), {}, None


@case("reducemean_to_pool", "EfficientNet-style SE (torch): x.mean((2,3), keepdim) gate, mean((2,3)) head", 2)
def _(prefix):
    import torch

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 16, 3, padding=1)
            self.se1 = torch.nn.Conv2d(16, 4, 1)
            self.se2 = torch.nn.Conv2d(4, 16, 1)
            self.fc = torch.nn.Linear(16, 10)

        def forward(self, x):
            f = torch.nn.functional.silu(self.conv(x))
            f = f * torch.sigmoid(self.se2(torch.nn.functional.silu(self.se1(f.mean((2, 3), keepdim=True)))))
            return self.fc(f.mean((2, 3)))

    return torch_model(randomize(Net(), 7), torch.randn(1, 3, 32, 32), prefix + ".onnx"), {}, None


@case("resize_to_nearest", "FPN top-down path (torch): bilinear 2x upsampling + lateral 1x1 Convs", 2)
def _(prefix):
    import torch
    import torch.nn.functional as F

    class FPN(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lat = torch.nn.ModuleList([torch.nn.Conv2d(c, 16, 1) for c in (8, 16, 32)])

        def forward(self, c3, c4, c5):
            p5 = self.lat[2](c5)
            p4 = self.lat[1](c4) + F.interpolate(p5, scale_factor=2.0, mode="bilinear", align_corners=False)
            return self.lat[0](c3) + F.interpolate(p4, scale_factor=2.0, mode="bilinear", align_corners=False)

    args = (torch.randn(1, 8, 32, 32), torch.randn(1, 16, 16, 16), torch.randn(1, 32, 8, 8))
    return torch_model(randomize(FPN(), 8), args, prefix + ".onnx", inputs=("c3", "c4", "c5")), {}, None


class _Attention:
    """timm-style ViT attention: qkv Linear -> reshape(B, N, 3, heads, dh) -> permute(2, 0, 3, 1, 4)."""

    @staticmethod
    def module(unbind):
        import torch

        class Attention(torch.nn.Module):
            def __init__(self, dim=64, heads=4):
                super().__init__()
                self.heads, self.scale = heads, (dim // heads) ** -0.5
                self.qkv = torch.nn.Linear(dim, dim * 3)
                self.proj = torch.nn.Linear(dim, dim)

            def forward(self, x):
                B, N, C = x.shape
                qkv = self.qkv(x).reshape(B, N, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
                q, k, v = qkv.unbind(0) if unbind else (qkv[0], qkv[1], qkv[2])
                attn = ((q @ k.transpose(-2, -1)) * self.scale).softmax(dim=-1)
                return self.proj((attn @ v).transpose(1, 2).reshape(B, N, C))

        return Attention()


SEQ_DYNAMIC = {"input": {0: "batch", 1: "seq"}, "output": {0: "batch", 1: "seq"}}


@case("split_qkv_matmul", "ViT attention (torch, batch and seq symbolic): fused qkv Linear, reshape, permute, "
      "q, k, v = qkv[0], qkv[1], qkv[2]", 3)
def _(prefix):
    import torch
    return torch_model(randomize(_Attention.module(False), 9), torch.randn(2, 16, 64), prefix + ".onnx",
                       dynamic=SEQ_DYNAMIC), {}, None


@case("split_qkv_matmul", "the same attention with q, k, v = qkv.unbind(0) (Split + Squeeze)", 1, label="unbind")
def _(prefix):
    import torch
    return torch_model(randomize(_Attention.module(True), 9), torch.randn(2, 16, 64), prefix + ".onnx",
                       dynamic=SEQ_DYNAMIC), {}, None


@case("channel_shuffle_to_conv", "ShuffleNetV2 unit (torch): chunk, branch, cat, channel_shuffle(2), batch symbolic", 1)
def _(prefix):
    import torch

    class Unit(torch.nn.Module):
        def __init__(self, c=32):
            super().__init__()
            h = c // 2
            self.branch = torch.nn.Sequential(
                torch.nn.Conv2d(h, h, 1), torch.nn.ReLU(),
                torch.nn.Conv2d(h, h, 3, padding=1, groups=h),
                torch.nn.Conv2d(h, h, 1), torch.nn.ReLU())

        def forward(self, x):
            x1, x2 = x.chunk(2, dim=1)
            out = torch.cat((x1, self.branch(x2)), dim=1)
            n, c, hh, w = out.shape
            return out.view(n, 2, c // 2, hh, w).transpose(1, 2).contiguous().view(n, c, hh, w)

    return torch_model(randomize(Unit(), 10), torch.randn(1, 32, 16, 16), prefix + ".onnx",
                       dynamic={"input": {0: "batch"}, "output": {0: "batch"}}), {}, None


@case("compare_to_zero", "detection post-processing: class max > conf threshold, boxes x1 < x2 check, Where", 2)
def _(prefix):
    g = Graph(11)
    scores = g.input("scores", [1, 100, 8])
    boxes = g.input("boxes", [1, 100, 4])
    best = g.op("ReduceMax", [scores], axes=[2], keepdims=0)
    keep = g.op("Greater", [best, g.const(np.float32(0.25))])
    x1 = g.op("Gather", [boxes, g.ints(0)], axis=2)
    x2 = g.op("Gather", [boxes, g.ints(2)], axis=2)
    valid = g.op("And", [keep, g.op("Less", [x1, x2])])
    g.op("Where", [valid, best, g.const(np.float32(0.0))], ["output"])
    g.output("output")
    return g.model(), {}, None


@case("conv3d_to_conv2d", "C3D block (torch): Conv3d 3x3x3 -> ReLU -> Conv3d 3x3x3 stride (2,1,1)", 2)
def _(prefix):
    import torch
    net = torch.nn.Sequential(torch.nn.Conv3d(3, 8, 3, padding=1), torch.nn.ReLU(),
                              torch.nn.Conv3d(8, 8, 3, stride=(2, 1, 1), padding=1))
    return torch_model(randomize(net, 12), torch.randn(1, 3, 8, 16, 16), prefix + ".onnx",
                       dynamic={"input": {0: "batch"}, "output": {0: "batch"}}), {}, None


@case("conv_to_matmul", "ViT patch embedding (torch): Conv 16x16 stride 16 -> flatten -> transpose -> LayerNorm", 1)
def _(prefix):
    import torch

    class PatchEmbed(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = torch.nn.Conv2d(3, 64, 16, stride=16)
            self.norm = torch.nn.LayerNorm(64)

        def forward(self, x):
            return self.norm(self.proj(x).flatten(2).transpose(1, 2))

    return torch_model(randomize(PatchEmbed(), 13), torch.randn(1, 3, 64, 64), prefix + ".onnx", opset=17), {}, None


class _MLPBlock:
    @staticmethod
    def module():
        import torch

        class Block(torch.nn.Module):
            """pre-norm transformer MLP block: x + fc2(gelu(fc1(LayerNorm(x))))"""

            def __init__(self, d=64):
                super().__init__()
                self.norm = torch.nn.LayerNorm(d)
                self.fc1, self.fc2 = torch.nn.Linear(d, 4 * d), torch.nn.Linear(4 * d, d)

            def forward(self, x):
                return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.norm(x))))

        return Block()


@case("decompose_layernorm", "pre-norm transformer MLP block (torch, opset 17): LayerNorm with random scale and bias", 1)
def _(prefix):
    import torch
    return torch_model(randomize(_MLPBlock.module(), 14), torch.randn(1, 16, 64), prefix + ".onnx", opset=17), {}, None


@case("decompose_layernorm", "the same block, primitive = true (ReduceMean/Sub/Mul/Sqrt/Div)", 1, label="primitive")
def _(prefix):
    import torch
    m = torch_model(randomize(_MLPBlock.module(), 14), torch.randn(1, 16, 64), prefix + ".onnx", opset=17)
    return m, {"primitive": "true"}, None


@case("demerge_transpose", "YOLOv5 Detect head (torch): 1x1 Conv -> view(bs, na, no, ny, nx).permute(0, 1, 3, 4, 2)", 1)
def _(prefix):
    import torch

    class Detect(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = torch.nn.Conv2d(32, 3 * 9, 1)

        def forward(self, x):
            bs, _, ny, nx = x.shape
            return torch.sigmoid(self.m(x).view(bs, 3, 9, ny, nx).permute(0, 1, 3, 4, 2).contiguous())

    return torch_model(randomize(Detect(), 15), torch.randn(1, 32, 8, 8), prefix + ".onnx"), {}, None


@case("depth_to_space_to_transpose", "ESPCN super-resolution (torch): Conv, Tanh, Conv, PixelShuffle(3)", 1)
def _(prefix):
    import torch
    net = torch.nn.Sequential(torch.nn.Conv2d(1, 32, 5, padding=2), torch.nn.Tanh(),
                              torch.nn.Conv2d(32, 9, 3, padding=1), torch.nn.PixelShuffle(3))
    return torch_model(randomize(net, 16), torch.randn(1, 1, 24, 24), prefix + ".onnx",
                       dynamic={"input": {0: "batch"}, "output": {0: "batch"}}), {}, None


@case("depth_to_space_to_transpose", "space-to-depth stem: SpaceToDepth(2) -> Conv 3x3", 1, label="s2d")
def _(prefix):
    g = Graph(17)
    x = g.input("input", [1, 3, 32, 32])
    g.op("Relu", [g.conv(g.op("SpaceToDepth", [x], blocksize=2), 12, 16, 3, pads=[1] * 4)], ["output"])
    g.output("output")
    return g.model(), {}, None


@case("gemm_to_conv", "CNN classifier (torch): Conv -> ReLU -> AdaptiveAvgPool(1) -> flatten -> Linear", 1)
def _(prefix):
    import torch
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1),
                              torch.nn.Flatten(), torch.nn.Linear(32, 10))
    return torch_model(randomize(net, 18), torch.randn(1, 3, 32, 32), prefix + ".onnx",
                       dynamic={"input": {0: "batch"}, "output": {0: "batch"}}), {}, None


@case("mul_add_to_batchnorm", "residual block with an affine channel (per-channel Mul, Add) after the sum", 1)
def _(prefix):
    g = Graph(19)
    x = g.input("input", [1, 16, 16, 16])
    s = g.op("Add", [x, g.conv(g.op("Relu", [g.conv(x, 16, 16, 3, pads=[1] * 4)]), 16, 16, 3, pads=[1] * 4)])
    a = g.const(g.rng.uniform(0.5, 1.5, (1, 16, 1, 1)).astype(np.float32))
    b = g.const(g.rng.uniform(-0.2, 0.2, (1, 16, 1, 1)).astype(np.float32))
    g.op("Relu", [g.op("Add", [g.op("Mul", [s, a]), b])], ["output"])
    g.output("output")
    return g.model(), {}, None


@case("set_output_layout", "segmentation head (torch): Conv -> ReLU -> 1x1 Conv, logits asked for as NHWC", 1)
def _(prefix):
    import torch
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.Conv2d(16, 5, 1))
    m = torch_model(randomize(net, 20), torch.randn(1, 3, 32, 32), prefix + ".onnx", outputs=("logits",))
    ref = onnx.ModelProto()
    ref.CopyFrom(m)
    for n in ref.graph.node:
        n.output[:] = ["logits_nchw" if o == "logits" else o for o in n.output]
    ref.graph.node.append(oh.make_node("Transpose", ["logits_nchw"], ["logits"], perm=[0, 2, 3, 1]))
    ref.graph.output[0].type.tensor_type.ClearField("shape")
    return m, {"layouts": "logits:NHWC"}, ref


class _ResNeXt:
    @staticmethod
    def module(groups, width):
        import torch

        class Block(torch.nn.Module):
            """bottleneck: 1x1 -> BN -> ReLU -> 3x3 grouped -> BN -> ReLU -> 1x1 -> BN, residual"""

            def __init__(self, c=32):
                super().__init__()
                self.body = torch.nn.Sequential(
                    torch.nn.Conv2d(c, width, 1, bias=False), torch.nn.BatchNorm2d(width), torch.nn.ReLU(),
                    torch.nn.Conv2d(width, width, 3, padding=1, groups=groups, bias=False),
                    torch.nn.BatchNorm2d(width), torch.nn.ReLU(),
                    torch.nn.Conv2d(width, c, 1, bias=False), torch.nn.BatchNorm2d(c))

            def forward(self, x):
                return torch.relu(x + self.body(x))

        return Block()


@case("split_group_conv", "ResNeXt bottleneck (torch): 3x3 Conv with 4 groups, BN folded", 1)
def _(prefix):
    import torch
    return torch_model(randomize(_ResNeXt.module(4, 32), 21), torch.randn(1, 32, 16, 16), prefix + ".onnx",
                       dynamic={"input": {0: "batch"}, "output": {0: "batch"}}), {}, None


@case("split_group_conv", "MobileNet-style block (torch): depthwise 3x3 over 32 channels, depthwise = true", 1,
      label="depthwise")
def _(prefix):
    import torch
    m = torch_model(randomize(_ResNeXt.module(32, 32), 22), torch.randn(1, 32, 16, 16), prefix + ".onnx")
    return m, {"depthwise": "true"}, None


@case("squeeze_to_reshape", "attention with a padding mask: mask Unsqueeze(axes 1, 2) -> (1 - m) * -1e4 added; "
      "pooled token Squeeze", 2)
def _(prefix):
    g = Graph(23)
    x = g.input("input", [1, 16, 32])
    mask = g.input("mask", [1, 16])
    q = g.op("Transpose", [g.op("Reshape", [g.op("MatMul", [x, g.weight(32, 32)]), g.ints([1, 16, 4, 8])])],
             perm=[0, 2, 1, 3])
    k = g.op("Transpose", [g.op("Reshape", [g.op("MatMul", [x, g.weight(32, 32)]), g.ints([1, 16, 4, 8])])],
             perm=[0, 2, 3, 1])
    v = g.op("Transpose", [g.op("Reshape", [g.op("MatMul", [x, g.weight(32, 32)]), g.ints([1, 16, 4, 8])])],
             perm=[0, 2, 1, 3])
    m4 = g.op("Unsqueeze", [mask, g.ints([1, 2])])
    bias = g.op("Mul", [g.op("Sub", [g.const(np.float32(1.0)), m4]), g.const(np.float32(-1e4))])
    scores = g.op("Add", [g.op("Mul", [g.op("MatMul", [q, k]), g.const(np.float32(8 ** -0.5))]), bias])
    ctx = g.op("MatMul", [g.op("Softmax", [scores], axis=-1), v])            # [1, 4, 16, 8]
    first = g.op("Slice", [ctx, g.ints([0]), g.ints([1]), g.ints([2])])      # [1, 4, 1, 8]
    g.op("Squeeze", [first, g.ints([2])], ["output"])                       # [1, 4, 8]
    g.output("output")
    return g.model(), {}, None


@case("stack_unstack_to_reshape", "per-frame video CNN (torch): x.unbind(1), shared Conv per frame, torch.stack(dim=1)", 5)
def _(prefix):
    import torch

    class PerFrame(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)

        def forward(self, x):
            return torch.stack([torch.relu(self.conv(f)) for f in x.unbind(1)], dim=1)

    return torch_model(randomize(PerFrame(), 24), torch.randn(1, 4, 3, 16, 16), prefix + ".onnx"), {}, None


@case("transpose_large_input_conv", "audio front end on [1, 1, 8, 24000]: Conv (3, 9) -> ReLU -> Conv (3, 9) stride (1, 4)", 1)
def _(prefix):
    g = Graph(25)
    x = g.input("input", [1, 1, 8, 24000])
    h = g.op("Relu", [g.conv(x, 1, 4, [3, 9], pads=[1, 4, 1, 4])])
    g.conv(h, 4, 8, [3, 9], pads=[1, 4, 1, 4], strides=[1, 4])
    g.nodes[-1].output[0] = "output"
    g.output("output")
    return g.model(), {}, None


# -------------------------------------------------------------------------- running

def list_passes(passhost, plugin_dir):
    """{name: (stages, default_on, exactness)} from passhost --list-passes."""
    cmd = [passhost, "--list-passes"] + (["--plugin-dir", plugin_dir] if plugin_dir else [])
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"off_passes: {' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()}")
    passes = {}
    for line in p.stdout.splitlines()[1:]:
        f = line.split()
        if len(f) >= 4 and not line.startswith(" ") and f[2] in ("on", "off"):
            passes[f[0]] = (f[1].split(","), f[2] == "on", f[3])
    return passes


def run_passhost(passhost, plugin_dir, src, dst, report, sets, verbose):
    cmd = [passhost, "-i", src, "-o", dst, "-q", "--report-json", report]
    if plugin_dir:
        cmd += ["--plugin-dir", plugin_dir]
    for s in sets:
        cmd += ["--set", s]
    if verbose:
        print("+ " + " ".join(cmd), file=sys.stderr)
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return None, f"passhost exit {p.returncode}: {(p.stderr.strip().splitlines() or [''])[-1]}"
    with open(report) as f:
        return json.load(f), None


def rewrites_of(report, name):
    return sum(p["rewrites"] for s in report["stages"] for p in s["passes"] if p["name"] == name)


def ort_check(ref, out, verbose):
    cmd = ["node", os.path.join(ROOT, "scripts", "ort_check.js"), ref, out, "-q", "--symbolic", "1,3",
           "--atol", str(ATOL), "--rtol", str(RTOL)]
    if verbose:
        print("+ " + " ".join(cmd), file=sys.stderr)
    p = subprocess.run(cmd, capture_output=True, text=True)
    m = re.search(r"max abs (\S+),", p.stdout)
    text = (p.stdout + p.stderr).strip().splitlines()
    return p.returncode, (m.group(1) if m else None), (text[-1] if text else "")


def run_case(c, info, passhost, plugin_dir, outdir, verbose):
    """Build c's model, rewrite it with the defaults and with the pass, check it in ORT.

    Returns (table row, list of problems: empty when the case passed)."""
    stages, _, exactness = info
    stage = c.stage or stages[0]
    prefix = os.path.join(outdir, c.name)
    for ext in (".onnx", ".ref.onnx", ".defaults.onnx", ".out.onnx", ".defaults.json", ".out.json"):
        if os.path.exists(prefix + ext):
            os.remove(prefix + ext)
    row = [c.name, stage, exactness, c.what]
    try:
        model, params, ref = c.build(prefix)
        src = prefix + ".onnx"
        onnx.save(model, src)
        ref_path = src
        if ref is not None:
            ref_path = prefix + ".ref.onnx"
            onnx.save(ref, ref_path)
    except Exception as e:  # a model that cannot be built is this case's failure, not the script's
        return row + [""] * 6 + ["FAIL"], [f"cannot build the model: {type(e).__name__}: {e}"]

    sets = [f"{stage}.pass_on={c.pass_name}"]
    if exactness == "approx":
        sets.append(f"{stage}.allow_approximate=true")
    sets += [f"pass.{c.pass_name}.{k}={v}" for k, v in params.items()]
    base, err = run_passhost(passhost, plugin_dir, src, prefix + ".defaults.onnx", prefix + ".defaults.json", [],
                             verbose)
    if err:
        return row + [""] * 6 + ["FAIL"], [f"defaults only: {err}"]
    rep, err = run_passhost(passhost, plugin_dir, src, prefix + ".out.onnx", prefix + ".out.json", sets, verbose)
    if err:
        return row + [str(base["summary"]["nodes_loaded"]), str(base["summary"]["nodes_saved"])] + [""] * 4 + \
            ["FAIL"], [f"with the pass: {err}"]

    problems = []
    n = rewrites_of(rep, c.pass_name)
    if n < c.instances:
        problems.append(f"{n} rewrites, the model has {c.instances} instance(s) of the pattern"
                        + (" (the pass did not fire)" if n == 0 else ""))
    rc, maxabs, last = ort_check(ref_path, prefix + ".out.onnx", verbose)
    approx_off = False
    if rc == 2 or maxabs is None:
        problems.append(f"ONNX Runtime: {last}")
    elif rc != 0:
        if exactness == "approx":
            approx_off = True
        else:
            problems.append(f"the output differs beyond atol {ATOL}, rtol {RTOL}: {last}")
    verdict = "FAIL" if problems else "ok (approx: beyond tolerance)" if approx_off else "ok"
    return row + [str(rep["summary"]["nodes_loaded"]), str(base["summary"]["nodes_saved"]),
                  str(rep["summary"]["nodes_saved"]), str(c.instances), str(n), maxabs or "?", verdict], problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir", nargs="?", default=os.path.join("build", "off_passes"),
                    help="folder for the models and outputs (default build/off_passes)")
    ap.add_argument("--build", default=os.environ.get("BUILD", "build"),
                    help="build tree with bin/passhost and plugins/ (default $BUILD or build)")
    ap.add_argument("--passhost", help="passhost binary (default BUILD/bin/passhost)")
    ap.add_argument("--plugin-dir", help="plugin folder (default BUILD/plugins)")
    ap.add_argument("--only", help="comma-separated pass names: run only their cases")
    ap.add_argument("-v", "--verbose", action="store_true", help="print each command run")
    a = ap.parse_args()

    passhost = a.passhost or os.path.join(a.build, "bin", "passhost")
    plugin_dir = a.plugin_dir or os.path.join(a.build, "plugins")
    if not os.access(passhost, os.X_OK):
        print(f"off_passes: no passhost at {passhost}: build it (make BUILD={a.build} all)", file=sys.stderr)
        return 2
    if importlib.util.find_spec("torch") is None:  # most cases need it: fail early and clearly
        print("off_passes: python3-torch is not installed", file=sys.stderr)
        return 2
    if shutil.which("node") is None:
        print("off_passes: node is not installed (apt-get install nodejs npm; npm install --ignore-scripts)",
              file=sys.stderr)
        return 2
    os.makedirs(a.outdir, exist_ok=True)
    passes = list_passes(passhost, plugin_dir)
    only = set(a.only.split(",")) if a.only else None
    if only:
        unknown = only - {c.pass_name for c in CASES} - set(passes)
        if unknown:
            print(f"off_passes: --only: unknown pass {', '.join(sorted(unknown))}", file=sys.stderr)
            return 2

    failures, notes, rows = [], [], []
    covered = {c.pass_name for c in CASES}
    for name, (stages, on, exactness) in sorted(passes.items()):
        if not on and name not in covered and (not only or name in only):
            failures.append(f"{name}: off by default, but this script has no model for it (add a case)")
            rows.append([name, "/".join(stages), exactness, "(no model)"] + [""] * 6 + ["FAIL"])

    for c in CASES:
        if only and c.pass_name not in only:
            continue
        if c.pass_name not in passes:
            notes.append(f"skipped {c.name}: plugin {c.pass_name} is not in {plugin_dir}")
            continue
        if passes[c.pass_name][1]:
            notes.append(f"skipped {c.name}: {c.pass_name} is on by default now")
            continue
        row, problems = run_case(c, passes[c.pass_name], passhost, plugin_dir, a.outdir, a.verbose)
        rows.append(row)
        failures += [f"{c.name}: {p}" for p in problems]

    head = ["pass", "stage", "exact", "model", "nodes", "defaults", "+pass", "instances", "rewrites", "max abs",
            "verdict"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        print("| " + " | ".join(f"`{x}`" if i == 0 else x for i, x in enumerate(r)) + " |")
    print()
    print(f"nodes: of the original; defaults: after the default passes; +pass: after the defaults and the pass; "
          f"instances: of the pattern in the model (the least number of rewrites expected); max abs: ONNX Runtime, "
          f"original (or reference) vs defaults + pass, tolerance atol {ATOL}, rtol {RTOL} (approx passes: "
          f"reported only).  Models in {a.outdir}.")
    for line in notes:
        print(line)
    for line in failures:
        print(f"FAIL {line}")
    print(f"off_passes: {len(rows) - sum(r[-1] == 'FAIL' for r in rows)} cases ok, "
          f"{sum(r[-1] == 'FAIL' for r in rows)} failed, {len(notes)} skipped")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
