#!/usr/bin/env python3
"""Export torchvision CNNs with random weights to ONNX, BatchNormalization
kept as its own node (TrainingMode.PRESERVE on a model in eval mode), for the
ONNX Runtime cross-check of the fusion passes (scripts/test_ort.sh).

    scripts/gen_torch_models.py OUTDIR

Writes OUTDIR/resnet18_bn.onnx and OUTDIR/mobilenet_v2_bn.onnx (opset 13,
batch dim symbolic).  Needs Debian's python3-torch and python3-torchvision;
nothing is downloaded (weights=None).  Exits 3 when torch is missing.
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


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    export(torchvision.models.resnet18(weights=None), os.path.join(out, "resnet18_bn.onnx"))
    export(torchvision.models.mobilenet_v2(weights=None), os.path.join(out, "mobilenet_v2_bn.onnx"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
