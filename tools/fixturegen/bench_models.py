"""Real architectures for the benchmark (tools/bench_native.py --arch): small but complete
ResNet-style, MobileNet-style, ViT-style and 2-layer LSTM networks, scripted by
`bench_archs.py` in eval mode. Kept apart from models.py so that file's line numbers (printed
in the other fixtures' source ranges) do not move."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class BasicBlock(nn.Module):
    def __init__(self, c: int):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(x + self.bn2(self.conv2(y)))


class ResNetBlocks(nn.Module):
    """Stem conv + BN + ReLU, two basic residual blocks, global average pool, classifier."""

    def __init__(self, c: int = 16, classes: int = 10):
        super().__init__()
        self.stem = nn.Conv2d(3, c, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(c)
        self.block1 = BasicBlock(c)
        self.block2 = BasicBlock(c)
        self.fc = nn.Linear(c, classes)

    def forward(self, x):
        x = torch.relu(self.bn(self.stem(x)))
        x = self.block2(self.block1(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class DepthwiseSeparable(nn.Module):
    def __init__(self, c_in: int, c_out: int):
        super().__init__()
        self.dw = nn.Conv2d(c_in, c_in, 3, padding=1, groups=c_in, bias=False)
        self.bn1 = nn.BatchNorm2d(c_in)
        self.pw = nn.Conv2d(c_in, c_out, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(c_out)

    def forward(self, x):
        x = F.relu6(self.bn1(self.dw(x)))
        return F.relu6(self.bn2(self.pw(x)))


class MobileNetDW(nn.Module):
    """Strided stem, two depthwise-separable blocks, global average pool, classifier."""

    def __init__(self, classes: int = 10):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, stride=2, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(16)
        self.block1 = DepthwiseSeparable(16, 32)
        self.block2 = DepthwiseSeparable(32, 32)
        self.fc = nn.Linear(32, classes)

    def forward(self, x):
        x = F.relu6(self.bn(self.stem(x)))
        x = self.block2(self.block1(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class EncoderBlock(nn.Module):
    """Pre-norm transformer block: multi-head self-attention and a GELU MLP, both residual."""

    def __init__(self, d: int, heads: int):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)

    def forward(self, x):
        b, n, d = x.shape
        hd = d // self.heads
        q, k, v = self.qkv(self.ln1(x)).reshape(b, n, 3, self.heads, hd).permute(2, 0, 3, 1, 4).unbind(0)
        att = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(hd), dim=-1)
        x = x + self.proj((att @ v).transpose(1, 2).reshape(b, n, d))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class ViTEncoder(nn.Module):
    """Two encoder blocks over 64 tokens of width 64 and a final LayerNorm."""

    def __init__(self, d: int = 64, heads: int = 4):
        super().__init__()
        self.block1 = EncoderBlock(d, heads)
        self.block2 = EncoderBlock(d, heads)
        self.ln = nn.LayerNorm(d)

    def forward(self, x):
        return self.ln(self.block2(self.block1(x)))


class LSTM2(nn.Module):
    """A 2-layer LSTM over the sequence, cells written out (gates from two Linear layers)."""

    def __init__(self, d_in: int = 32, d_h: int = 64):
        super().__init__()
        self.d_h = d_h
        self.ih1 = nn.Linear(d_in, 4 * d_h)
        self.hh1 = nn.Linear(d_h, 4 * d_h)
        self.ih2 = nn.Linear(d_h, 4 * d_h)
        self.hh2 = nn.Linear(d_h, 4 * d_h)

    def cell(self, gates, c):
        i, f, g, o = gates.chunk(4, 1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c

    def forward(self, xs):
        b = xs.size(1)
        h1 = torch.zeros(b, self.d_h)
        c1 = torch.zeros(b, self.d_h)
        h2 = torch.zeros(b, self.d_h)
        c2 = torch.zeros(b, self.d_h)
        for t in range(xs.size(0)):
            h1, c1 = self.cell(self.ih1(xs[t]) + self.hh1(h1), c1)
            h2, c2 = self.cell(self.ih2(h1) + self.hh2(h2), c2)
        return h2


# name -> (model class, input shape)
ARCHITECTURES = {
    "resnet_blocks": (ResNetBlocks, (8, 3, 32, 32)),
    "mobilenet_dw": (MobileNetDW, (8, 3, 32, 32)),
    "vit_encoder": (ViTEncoder, (4, 64, 64)),
    "lstm2": (LSTM2, (16, 8, 32)),
}
