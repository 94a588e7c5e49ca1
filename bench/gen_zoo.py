#!/usr/bin/env python3
"""Export the real-model zoo used by bench/zoo.sh: torchvision-style CNNs and
transformer encoders with random weights, as users export them.

    bench/gen_zoo.py OUTDIR [NAME ...]

Models (opset 13 unless the name says 17):
  resnet18_bn        torchvision ResNet-18, BatchNormalization kept
                     (TrainingMode.PRESERVE), no constant folding at export
  resnet18_folded    the same net exported as usual (BN folded by the exporter)
  mobilenet_v2_bn    torchvision MobileNetV2, BN kept
  shufflenet_v2_bn   torchvision ShuffleNetV2 x1.0, BN kept (channel shuffle)
  densenet121_bn     torchvision DenseNet-121, BN kept (long Concat chains)
  efficientnet_b0_bn torchvision EfficientNet-B0, BN kept (SiLU, squeeze-excite)
  vit_17             a small torchvision VisionTransformer (4 layers, width 256),
                     opset 17 (LayerNormalization nodes)
  bert_13, bert_17   a BERT-style encoder (embeddings, 4 layers of self-attention
                     written as BERT does, erf GELU, residual + LayerNorm,
                     pooler), batch and sequence dynamic, at opsets 13 and 17

Needs Debian's python3-torch and python3-torchvision; nothing is downloaded
(weights=None).  Exits 3 when torch is missing.
"""
import math
import os
import sys

try:
    import torch
    import torchvision
except ImportError:
    print("gen_zoo: python3-torch / python3-torchvision not installed", file=sys.stderr)
    sys.exit(3)

from torch import nn


def randomize_norms(model):
    """Give BatchNorm non-trivial statistics, as a trained net has."""
    g = torch.Generator().manual_seed(1)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            with torch.no_grad():
                m.running_mean.copy_(torch.rand(m.running_mean.shape, generator=g) - 0.5)
                m.running_var.copy_(torch.rand(m.running_var.shape, generator=g) * 1.5 + 0.5)
                m.weight.copy_(torch.rand(m.weight.shape, generator=g) + 0.5)
                m.bias.copy_(torch.rand(m.bias.shape, generator=g) * 0.4 - 0.2)


def export_cnn(model, path, keep_bn=True, opset=13):
    model.eval()
    randomize_norms(model)
    x = torch.randn(1, 3, 224, 224)
    kw = {}
    if keep_bn:
        kw = dict(training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=False)
    torch.onnx.export(model, x, path, opset_version=opset, input_names=["input"],
                      output_names=["logits"],
                      dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}}, **kw)


class BertSelfAttention(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)

    def split(self, x):
        b, s, _ = x.shape
        return x.view(b, s, self.heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, x, mask):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim) + mask
        ctx = torch.matmul(scores.softmax(-1), v).permute(0, 2, 1, 3).contiguous()
        b, s = ctx.shape[0], ctx.shape[1]
        return ctx.view(b, s, self.heads * self.head_dim)


class BertLayer(nn.Module):
    def __init__(self, hidden, heads, inter):
        super().__init__()
        self.attn = BertSelfAttention(hidden, heads)
        self.attn_out = nn.Linear(hidden, hidden)
        self.attn_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.inter = nn.Linear(hidden, inter)
        self.out = nn.Linear(inter, hidden)
        self.out_norm = nn.LayerNorm(hidden, eps=1e-12)

    def forward(self, x, mask):
        a = self.attn_norm(self.attn_out(self.attn(x, mask)) + x)
        h = nn.functional.gelu(self.inter(a))
        return self.out_norm(self.out(h) + a)


class Bert(nn.Module):
    def __init__(self, vocab=1000, hidden=128, heads=4, layers=4, inter=512, max_pos=128):
        super().__init__()
        self.word = nn.Embedding(vocab, hidden)
        self.pos = nn.Embedding(max_pos, hidden)
        self.token_type = nn.Embedding(2, hidden)
        self.norm = nn.LayerNorm(hidden, eps=1e-12)
        self.layers = nn.ModuleList([BertLayer(hidden, heads, inter) for _ in range(layers)])
        self.pool = nn.Linear(hidden, hidden)

    def forward(self, input_ids, attention_mask):
        s = input_ids.shape[1]
        pos = torch.arange(s, dtype=torch.long).unsqueeze(0)
        x = self.norm(self.word(input_ids) + self.pos(pos) + self.token_type(torch.zeros_like(input_ids)))
        mask = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * -10000.0
        for layer in self.layers:
            x = layer(x, mask)
        return x, torch.tanh(self.pool(x[:, 0]))


def export_bert(path, opset):
    torch.manual_seed(0)
    model = Bert().eval()
    ids = torch.randint(0, 1000, (1, 16))
    mask = torch.ones(1, 16, dtype=torch.long)
    torch.onnx.export(model, (ids, mask), path, opset_version=opset,
                      input_names=["input_ids", "attention_mask"],
                      output_names=["last_hidden_state", "pooled"],
                      dynamic_axes={"input_ids": {0: "batch", 1: "seq"},
                                    "attention_mask": {0: "batch", 1: "seq"},
                                    "last_hidden_state": {0: "batch", 1: "seq"},
                                    "pooled": {0: "batch"}})


def export_vit(path, opset):
    torch.manual_seed(0)
    model = torchvision.models.VisionTransformer(image_size=224, patch_size=16, num_layers=4,
                                                 num_heads=4, hidden_dim=256, mlp_dim=1024,
                                                 num_classes=1000)
    model.eval()
    torch.onnx.export(model, torch.randn(1, 3, 224, 224), path, opset_version=opset,
                      input_names=["input"], output_names=["logits"])


def models():
    tv = torchvision.models
    return {
        "resnet18_bn": lambda p: export_cnn(tv.resnet18(weights=None), p),
        "resnet18_folded": lambda p: export_cnn(tv.resnet18(weights=None), p, keep_bn=False),
        "mobilenet_v2_bn": lambda p: export_cnn(tv.mobilenet_v2(weights=None), p),
        "shufflenet_v2_bn": lambda p: export_cnn(tv.shufflenet_v2_x1_0(weights=None), p),
        "densenet121_bn": lambda p: export_cnn(tv.densenet121(weights=None), p),
        "efficientnet_b0_bn": lambda p: export_cnn(tv.efficientnet_b0(weights=None), p),
        "vit_17": lambda p: export_vit(p, 17),
        "bert_13": lambda p: export_bert(p, 13),
        "bert_17": lambda p: export_bert(p, 17),
    }


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    table = models()
    names = sys.argv[2:] or list(table)
    for name in names:
        if name not in table:
            print(f"gen_zoo: unknown model {name}; known: {', '.join(table)}", file=sys.stderr)
            return 2
        path = os.path.join(out, name + ".onnx")
        if os.path.exists(path):
            continue
        torch.manual_seed(0)
        table[name](path)
        print(f"gen_zoo: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
