#!/usr/bin/env python3
"""Export torchvision CNNs with random weights to ONNX, BatchNormalization
kept as its own node (TrainingMode.PRESERVE on a model in eval mode), for the
ONNX Runtime cross-check of the fusion passes (scripts/test_ort.sh).

    scripts/gen_torch_models.py OUTDIR

Writes OUTDIR/resnet18_bn.onnx and OUTDIR/mobilenet_v2_bn.onnx (opset 13,
batch dim symbolic), and for the target-ort adapt passes (com.microsoft
fusions):
  OUTDIR/bert_encoder_op17.onnx  a BERT-style encoder: 2 post-norm
      TransformerEncoderLayers (d_model 64, 4 heads, GELU feed-forward 128),
      input [1, 16, 64], outputs the hidden states and their token-to-token
      products (h @ h^T); opset 17, so LayerNormalization is one node;
  OUTDIR/bert_encoder_op13.onnx  the same at opset 13 (decomposed layer norm);
  OUTDIR/cnn_act.onnx            a small CNN: Conv + ReLU / ReLU6 (Clip) /
      Sigmoid / LeakyReLU / Hardsigmoid / Tanh, a Linear + ReLU head (opset 13,
      batch dim symbolic);
  OUTDIR/cnn_act_op10.onnx       the same at opset 10 (Clip bounds as attributes);
  OUTDIR/mlp_act.onnx            Linear + every activation ORT's FusedGemm takes,
      and GELU in its tanh form (opset 17, batch dim symbolic).
Needs Debian's python3-torch and python3-torchvision; nothing is downloaded
(weights=None).  Exits 3 when torch is missing.
"""
import os
import sys

try:
    import torch
    import torchvision
except ImportError:
    print("gen_torch_models: python3-torch / python3-torchvision not installed", file=sys.stderr)
    sys.exit(3)


def export(model, path, opset=13):
    torch.manual_seed(0)
    model.eval()
    # give BatchNormalization non-trivial statistics, as a trained net has
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            with torch.no_grad():
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2.0)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)
    x = torch.randn(1, 3, 224, 224)
    torch.onnx.export(model, x, path, opset_version=opset, input_names=["input"],
                      output_names=["logits"], dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}},
                      training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=False)


class BertEncoder(torch.nn.Module):
    """Two post-norm encoder layers (residual Add + LayerNorm, GELU FFN)."""

    def __init__(self):
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, dropout=0.0,
                                                 activation="gelu", batch_first=True, norm_first=False)
        self.encoder = torch.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)

    def forward(self, x):
        h = self.encoder(x)
        # token-to-token similarity: a MatMul reading a last-two-dims Transpose
        return h, torch.matmul(h, h.transpose(1, 2))


def export_bert(path, opset):
    torch.manual_seed(1)
    model = BertEncoder()
    # TransformerEncoder clones one layer: draw every layer's weights anew (so
    # no weight is shared, as in a trained net) and give LayerNorm
    # non-trivial parameters
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.MultiheadAttention):
                m._reset_parameters()
                m.in_proj_bias.uniform_(-0.1, 0.1)
            elif isinstance(m, torch.nn.Linear):
                m.reset_parameters()
            elif isinstance(m, torch.nn.LayerNorm):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)
    model.eval()
    x = torch.randn(1, 16, 64)
    # eval mode with gradients on keeps torch off its fused inference kernel
    # (aten::_transformer_encoder_layer_fwd has no ONNX export)
    with torch.enable_grad():
        torch.onnx.export(model, x, path, opset_version=opset, input_names=["tokens"],
                          output_names=["hidden", "scores"], do_constant_folding=True)


class SmallCNN(torch.nn.Module):
    """Conv + every activation ORT's FusedConv takes, then a Linear + ReLU head."""

    def __init__(self):
        super().__init__()
        conv = lambda i, o, s=1: torch.nn.Conv2d(i, o, 3, stride=s, padding=1)
        self.features = torch.nn.Sequential(
            conv(3, 8), torch.nn.ReLU(),
            conv(8, 16, 2), torch.nn.ReLU6(),
            conv(16, 16), torch.nn.Sigmoid(),
            conv(16, 16), torch.nn.LeakyReLU(0.1),
            conv(16, 16, 2), torch.nn.Hardsigmoid(),
            conv(16, 16), torch.nn.Tanh(),
            torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten())
        self.head = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 10))

    def forward(self, x):
        return self.head(self.features(x))


def export_cnn(path, opset):
    torch.manual_seed(2)
    model = SmallCNN().eval()
    x = torch.randn(1, 3, 32, 32)
    torch.onnx.export(model, x, path, opset_version=opset, input_names=["input"], output_names=["logits"],
                      dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}})


def export_mlp(path):
    torch.manual_seed(3)
    acts = [torch.nn.Tanh(), torch.nn.Sigmoid(), torch.nn.LeakyReLU(0.2), torch.nn.ELU(0.5), torch.nn.SELU(),
            torch.nn.Hardsigmoid(), torch.nn.Softplus(), torch.nn.Softsign(), torch.nn.GELU(approximate="tanh")]
    layers = []
    for act in acts:
        layers += [torch.nn.Linear(24, 24), act]
    model = torch.nn.Sequential(torch.nn.Linear(12, 24), *layers, torch.nn.Linear(24, 4)).eval()
    x = torch.randn(2, 12)
    torch.onnx.export(model, x, path, opset_version=17, input_names=["input"], output_names=["out"],
                      dynamic_axes={"input": {0: "batch"}, "out": {0: "batch"}})


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    export(torchvision.models.resnet18(weights=None), os.path.join(out, "resnet18_bn.onnx"))
    export(torchvision.models.mobilenet_v2(weights=None), os.path.join(out, "mobilenet_v2_bn.onnx"))
    for opset in (17, 13):
        export_bert(os.path.join(out, "bert_encoder_op%d.onnx" % opset), opset)
    export_cnn(os.path.join(out, "cnn_act.onnx"), 13)
    export_cnn(os.path.join(out, "cnn_act_op10.onnx"), 10)
    export_mlp(os.path.join(out, "mlp_act.onnx"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
