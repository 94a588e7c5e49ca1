#!/usr/bin/python3
"""bench/gen_resnet50.py OUT.onnx - a ResNet-50 for scripts/bench_eval.sh.

torchvision.models.resnet50(weights=None) (Debian: apt-get install -y
python3-torchvision), seeded, in eval mode, exported with torch.onnx.export at
opset 13 with a static 1x3x224x224 input.  Without torchvision, the same
network (bottleneck blocks [3, 4, 6, 3], widths 64..2048, 1000 classes) is
built by hand in torch.  Not committed: generated at bench time.

Prints "torchvision X.Y" or "hand-built" on stdout so the caller can say which.
"""
import sys

import torch
from torch import nn


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, cin, width, stride):
        super().__init__()
        cout = width * self.expansion
        self.conv1 = nn.Conv2d(cin, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, cout, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        idt = x if self.downsample is None else self.downsample(x)
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.relu(self.bn2(self.conv2(y)))
        y = self.bn3(self.conv3(y))
        return self.relu(y + idt)


class ResNet50(nn.Module):
    def __init__(self, classes=1000):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(inplace=True),
                                  nn.MaxPool2d(3, 2, 1))
        layers, cin = [], 64
        for width, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
            for b in range(blocks):
                layers.append(Bottleneck(cin, width, stride if b == 0 else 1))
                cin = width * 4
        self.layers = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.layers(self.stem(x))), 1))


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: bench/gen_resnet50.py OUT.onnx")
    torch.manual_seed(0)
    try:
        import torchvision
        model = torchvision.models.resnet50(weights=None)
        origin = f"torchvision {torchvision.__version__}"
    except ImportError:
        model = ResNet50()
        origin = "hand-built"
    model.eval()
    x = torch.zeros(1, 3, 224, 224)
    torch.onnx.export(model, x, sys.argv[1], opset_version=13, input_names=["input"], output_names=["logits"],
                      training=torch.onnx.TrainingMode.EVAL)
    print(origin)


if __name__ == "__main__":
    main()
