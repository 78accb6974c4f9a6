"""Models written once for both PyTorch and irjit: the fixture generator (model_pairs.py) imports
this file with `torch` bound to PyTorch (IRJIT_CASES_TORCH=1), the tests with `torch` bound to
irjit. Each model is traced and scripted by both frameworks, and run eagerly; `MODELS` lists the
classes with their example inputs. Line numbers matter: fixtures carry them."""

import importlib
import os
from typing import Tuple

torch = importlib.import_module("torch" if os.environ.get("IRJIT_CASES_TORCH") else "irjit")
Tensor = torch.Tensor
nn = torch.nn


class MyCell(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 4)

    def forward(self, x, h):
        new_h = torch.tanh(self.linear(x) + h)
        return new_h, new_h


class DecisionGate(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x
        else:
            return -x


class GatedCell(nn.Module):
    def __init__(self):
        super().__init__()
        self.dg = DecisionGate()
        self.linear = nn.Linear(4, 4)

    def forward(self, x, h):
        new_h = torch.tanh(self.dg(self.linear(x)) + h)
        return new_h, new_h


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.seq = nn.Sequential(nn.Linear(4, 5), nn.ReLU())
        self.out = nn.Linear(5, 2)

    def forward(self, x):
        return self.out(self.seq(x))


class ConvRelu(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 32, bias=False, kernel_size=3, stride=1)
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.relu(self.conv(x))


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8), nn.Tanh(),
                                    nn.Linear(8, 2))

    def forward(self, x):
        return torch.sigmoid(self.layers(x)) * 2.0 - 1.0


class ScaledResidual(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 4)
        self.repeats = 2

    def forward(self, x):
        for _ in range(self.repeats):
            x = x + self.linear.bias * self.helper(x)
        return x

    def helper(self, x):
        return torch.relu(x)


class SmallCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 6, 3, padding=1)
        self.bn = nn.BatchNorm2d(6)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(6 * 3 * 3, 5)

    def forward(self, x):
        x = self.pool(self.relu(self.bn(self.conv(x))))
        return self.fc(x.view(x.size(0), -1))


class ResidualBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(4, 4, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(4)
        self.conv2 = nn.Conv2d(4, 4, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(4)

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return torch.relu(y + x)


class NormMlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 8)
        self.norm = nn.LayerNorm(8)
        self.act = nn.Tanh()
        self.drop = nn.Dropout(0.25)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc2(self.drop(self.act(self.norm(self.fc1(x)))))


class EmbeddingMean(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 4)
        self.fc = nn.Linear(4, 2)

    def forward(self, idx):
        return self.fc(self.emb(idx).mean(1))


class LstmStep(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.LSTMCell(4, 6)

    def forward(self, x, h, c):
        h2, c2 = self.cell(x, (h, c))
        return h2 * 2.0, c2


class LstmFromZero(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.LSTMCell(3, 5)

    def forward(self, x):
        h, c = self.cell(x)
        return h + c


class GruStep(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(4, 6)

    def forward(self, x, h):
        return self.cell(x, h).sigmoid()


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.q = nn.Linear(8, 8)
        self.k = nn.Linear(8, 8)
        self.v = nn.Linear(8, 8)
        self.out = nn.Linear(8, 8)
        self.heads = 2

    def forward(self, x):
        b = x.size(0)
        t = x.size(1)
        q = self.q(x).view(b, t, self.heads, -1).transpose(1, 2)
        k = self.k(x).view(b, t, self.heads, -1).transpose(1, 2)
        v = self.v(x).view(b, t, self.heads, -1).transpose(1, 2)
        scores = torch.softmax(q @ k.transpose(-2, -1) / 2.0, -1)
        y = (scores @ v).transpose(1, 2).reshape(b, t, -1)
        return self.out(y)


class FlattenHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 3, 3, stride=2)
        self.act = nn.Sigmoid()
        self.fc = nn.Linear(12, 4)

    def forward(self, x):
        return self.fc(torch.flatten(self.act(self.conv(x)), 1))


class ShapeOps(nn.Module):
    def forward(self, x):
        y = x.view(x.size(0) * x.size(1), -1)
        z = x.reshape(-1, x.shape[2]).t()
        return y.sum(1) + z.sum(0), x.permute(2, 0, 1).contiguous()


class Branches(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 6)
        self.b = nn.Linear(4, 6)

    def forward(self, x):
        y = torch.cat([self.a(x), torch.relu(self.b(x))], 1)
        p, q = y.chunk(2, 1)
        return p * q


class ScaleShift(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(4) * 0.5)
        self.register_buffer("shift", torch.arange(4).float())

    def forward(self, x):
        return x * self.scale + self.shift


class SharedLinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(5, 5)

    def forward(self, x):
        return self.lin(torch.relu(self.lin(x)))


class Normalize(nn.Module):
    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        std = x.std(-1, keepdim=True)
        return (x - mean) / (std + 1e-5)


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 4)

    def forward(self, x):
        return torch.log_softmax(self.fc(x), 1)


class PoolNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 3, padding=1)
        self.pool = nn.MaxPool2d(2, stride=2)

    def forward(self, x):
        return torch.tanh(self.pool(self.conv(x))).sum([2, 3])


class ThreeOutputs(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x) -> Tuple[Tensor, Tensor, Tensor]:
        y = self.fc(x)
        return torch.relu(y), torch.sigmoid(y), y.tanh().sum(1)


class Stacked(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.Sequential(MyCellBlock(), MyCellBlock())

    def forward(self, x):
        return self.blocks(x) + 1


class MyCellBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return x + torch.tanh(self.fc(x))


# (model class, example inputs: a shape is a float32 normal tensor, ("int64", shape, high) an
# index tensor), run in eval mode when listed in EVAL
MODELS = [
    (MyCell, [(3, 4), (3, 4)]),
    (DecisionGate, [(3, 4)]),
    (GatedCell, [(3, 4), (3, 4)]),
    (Net, [(2, 4)]),
    (ConvRelu, [(1, 3, 8, 8)]),
    (Mlp, [(3, 4)]),
    (ScaledResidual, [(3, 4)]),
    (SmallCnn, [(2, 3, 6, 6)]),
    (ResidualBlock, [(2, 4, 5, 5)]),
    (NormMlp, [(3, 6)]),
    (EmbeddingMean, [("int64", (2, 5), 10)]),
    (LstmStep, [(2, 4), (2, 6), (2, 6)]),
    (LstmFromZero, [(2, 3)]),
    (GruStep, [(2, 4), (2, 6)]),
    (Attention, [(2, 3, 8)]),
    (FlattenHead, [(2, 2, 6, 6)]),
    (ShapeOps, [(2, 3, 4)]),
    (Branches, [(3, 4)]),
    (ScaleShift, [(2, 4)]),
    (SharedLinear, [(2, 5)]),
    (Normalize, [(3, 5)]),
    (Classifier, [(4, 6)]),
    (PoolNet, [(2, 1, 6, 6)]),
    (ThreeOutputs, [(2, 3)]),
    (Stacked, [(2, 4)]),
]
EVAL = {SmallCnn, ResidualBlock, NormMlp}
