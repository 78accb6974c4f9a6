"""Model / function zoo compiled by TorchScript for the fixture generator.

This file is imported under the top-level module name ``models`` (see
``tools/fixturegen/common.py``) so that TorchScript class types print as
``__torch__.models.<Name>``, and source comments pointing here are rewritten to
``/home/user/models.py:LINE:COL``.  Everything in it must stay TorchScript-compatible.
Editing it shifts line numbers in the generated fixtures: regenerate afterwards.
"""

import math
from enum import Enum
from typing import Any, Dict, List, NamedTuple, Optional, Union

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor

# ---------------------------------------------------------------------------
# Small building blocks
# ---------------------------------------------------------------------------


class ConvRelu(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)

    def forward(self, x):
        return F.relu(self.conv(x))


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


class MyCellGate(nn.Module):
    def __init__(self):
        super().__init__()
        self.dg = DecisionGate()
        self.linear = nn.Linear(4, 4)

    def forward(self, x, h):
        new_h = torch.tanh(self.dg(self.linear(x)) + h)
        return new_h, new_h


class MLP(nn.Module):
    def __init__(self, d_in: int = 8, d_hidden: int = 16, d_out: int = 4):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.fc2 = nn.Linear(d_hidden, d_out)

    def forward(self, x):
        h = F.relu(self.fc1(x))
        return self.fc2(h)


class SeqMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(8, 16),
            nn.ReLU(),
            nn.Linear(16, 16),
            nn.Tanh(),
            nn.Sequential(nn.Linear(16, 4), nn.Sigmoid()),
        )

    def forward(self, x):
        return self.net(x)


class ModuleListNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(6, 6) for _ in range(3)])

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x)) + x
        return x


class ModuleDictNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleDict({"a": nn.Linear(6, 3), "b": nn.Linear(6, 2)})

    def forward(self, x):
        outs: List[Tensor] = []
        for name, head in self.heads.items():
            outs.append(head(x))
        return torch.cat(outs, 1)


class ConvBnPool(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 6, 3, padding=1)
        self.bn = nn.BatchNorm2d(6)
        self.pool = nn.MaxPool2d(2)

    def forward(self, x):
        return self.pool(F.relu(self.bn(self.conv(x))))


class SmallCNN(nn.Module):
    """conv-bn-relu-pool-conv-relu-adaptive pool-flatten-linear."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(2, 4, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(4)
        self.conv2 = nn.Conv2d(4, 6, 3, stride=1, padding=1)
        self.fc = nn.Linear(6, 3)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.relu(self.conv2(x))
        x = F.adaptive_avg_pool2d(x, (1, 1))
        x = torch.flatten(x, 1)
        return self.fc(x)


class ConvBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = nn.Sequential(
            nn.Conv2d(2, 4, 3, padding=1, bias=False),
            nn.BatchNorm2d(4),
            nn.ReLU(),
            nn.AvgPool2d(2),
        )

    def forward(self, x):
        return self.block(x)


class Conv1dNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(3, 5, 3, padding=1)
        self.conv2 = nn.Conv1d(5, 4, 2, stride=2)

    def forward(self, x):
        y = torch.tanh(self.conv(x))
        y = F.avg_pool1d(y, 2)
        return self.conv2(y)


class ConvVariants(nn.Module):
    """conv2d with stride, padding, dilation and groups."""

    def __init__(self):
        super().__init__()
        self.strided = nn.Conv2d(4, 4, 3, stride=2, padding=1)
        self.dilated = nn.Conv2d(4, 4, 3, padding=2, dilation=2)
        self.grouped = nn.Conv2d(4, 6, 3, padding=1, groups=2)
        self.depthwise = nn.Conv2d(4, 4, 3, padding=1, groups=4, bias=False)

    def forward(self, x):
        a = self.strided(x)
        b = self.dilated(x)
        c = self.grouped(x)
        d = self.depthwise(x)
        return a, b + d, c


class ConvTranspose(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1)

    def forward(self, x):
        return torch.sigmoid(self.up(x))


class Pooling(nn.Module):
    def forward(self, x):
        a = F.max_pool2d(x, 2)
        b = F.avg_pool2d(x, 3, stride=1, padding=1)
        c = F.adaptive_avg_pool2d(x, (2, 3))
        d = F.adaptive_max_pool2d(x, 1)
        e = F.max_pool2d(x, kernel_size=3, stride=2, padding=1)
        return a, b, c, d, e


class UpsampleNet(nn.Module):
    def forward(self, x):
        y = F.interpolate(x, scale_factor=2.0, mode="nearest")
        z = F.interpolate(x, size=(5, 5), mode="bilinear", align_corners=False)
        return y, z


# ---------------------------------------------------------------------------
# Recurrent
# ---------------------------------------------------------------------------


class LSTMCellManual(nn.Module):
    def __init__(self, d_in: int = 4, d_h: int = 5):
        super().__init__()
        self.ih = nn.Linear(d_in, 4 * d_h)
        self.hh = nn.Linear(d_h, 4 * d_h)

    def forward(self, x, h, c):
        gates = self.ih(x) + self.hh(h)
        i, f, g, o = gates.chunk(4, 1)
        i = torch.sigmoid(i)
        f = torch.sigmoid(f)
        g = torch.tanh(g)
        o = torch.sigmoid(o)
        c2 = f * c + i * g
        h2 = o * torch.tanh(c2)
        return h2, c2


class GRUCellManual(nn.Module):
    def __init__(self, d_in: int = 4, d_h: int = 5):
        super().__init__()
        self.ih = nn.Linear(d_in, 3 * d_h)
        self.hh = nn.Linear(d_h, 3 * d_h)

    def forward(self, x, h):
        gi = self.ih(x)
        gh = self.hh(h)
        i_r, i_z, i_n = gi.split(gi.size(1) // 3, 1)
        h_r, h_z, h_n = gh.split(gh.size(1) // 3, 1)
        r = torch.sigmoid(i_r + h_r)
        z = torch.sigmoid(i_z + h_z)
        n = torch.tanh(i_n + r * h_n)
        return (1.0 - z) * n + z * h


class LibLSTMCell(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.LSTMCell(4, 5)

    def forward(self, x, h, c):
        h2, c2 = self.cell(x, (h, c))
        return h2, c2


class LibGRUCell(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(4, 5)

    def forward(self, x, h):
        return self.cell(x, h)


class LibRNNCell(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.RNNCell(4, 5, nonlinearity="tanh")

    def forward(self, x, h):
        return self.cell(x, h)


class RNNLoop(nn.Module):
    """Runs an LSTM cell over a sequence: tensor loop-carried values."""

    def __init__(self):
        super().__init__()
        self.cell = LSTMCellManual(3, 4)
        self.out = nn.Linear(4, 2)

    def forward(self, xs, h, c):
        outs: List[Tensor] = []
        for t in range(xs.size(0)):
            h, c = self.cell(xs[t], h, c)
            outs.append(h)
        return self.out(torch.stack(outs, 0)), h


class LibLSTM(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(4, 5, num_layers=1, batch_first=True)

    def forward(self, x):
        out, (h, c) = self.lstm(x)
        return out, h, c


class LibGRU(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(4, 3, num_layers=2, bidirectional=True)

    def forward(self, x):
        out, h = self.gru(x)
        return out, h


# ---------------------------------------------------------------------------
# Attention / normalisation / embedding
# ---------------------------------------------------------------------------


class Attention(nn.Module):
    def __init__(self, d: int = 8, heads: int = 2):
        super().__init__()
        self.heads = heads
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, d)
        self.v = nn.Linear(d, d)
        self.o = nn.Linear(d, d)

    def forward(self, x):
        b, t, d = x.size()
        hd = d // self.heads
        q = self.q(x).view(b, t, self.heads, hd).transpose(1, 2)
        k = self.k(x).view(b, t, self.heads, hd).transpose(1, 2)
        v = self.v(x).view(b, t, self.heads, hd).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / math.sqrt(hd)
        attn = F.softmax(scores, dim=-1)
        out = (attn @ v).transpose(1, 2).contiguous().reshape(b, t, d)
        return self.o(out)


class MaskedAttention(nn.Module):
    def __init__(self, d: int = 6):
        super().__init__()
        self.qkv = nn.Linear(d, 3 * d)
        self.scale = 1.0 / math.sqrt(d)

    def forward(self, x, mask):
        q, k, v = self.qkv(x).chunk(3, -1)
        s = torch.bmm(q, k.transpose(1, 2)) * self.scale
        s = s.masked_fill(mask, float("-inf"))
        return torch.bmm(torch.softmax(s, -1), v)


class LibMHA(nn.Module):
    def __init__(self):
        super().__init__()
        self.mha = nn.MultiheadAttention(8, 2, batch_first=True)

    def forward(self, x):
        out, w = self.mha(x, x, x)
        return out, w


class LibTransformerLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True)

    def forward(self, x):
        return self.layer(x)


class LayerNormNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(6)
        self.fc = nn.Linear(6, 6)

    def forward(self, x):
        return self.ln(self.fc(x) + x)


class Norms(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm([4, 3])
        self.gn = nn.GroupNorm(2, 4)

    def forward(self, x):
        a = self.ln(x)
        b = self.gn(x)
        c = F.layer_norm(x, [3], eps=1e-3)
        d = F.group_norm(x, 4)
        return a + b, c * d


class EmbeddingNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 4)
        self.fc = nn.Linear(4, 2)

    def forward(self, idx):
        e = self.emb(idx)
        return self.fc(e.mean(1))


class BN1dDropout(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 5)
        self.bn = nn.BatchNorm1d(5)
        self.drop = nn.Dropout(0.3)

    def forward(self, x):
        return self.drop(F.relu(self.bn(self.fc(x))))


class BatchNormOnly(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(3)

    def forward(self, x):
        return self.bn(x)


class DropoutEval(nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.5)
        self.fc = nn.Linear(5, 3)

    def forward(self, x):
        y = self.drop(x)
        z = F.dropout(self.fc(y), p=0.2, training=self.training)
        return z


# ---------------------------------------------------------------------------
# Control flow
# ---------------------------------------------------------------------------


class IfElse(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            y = x * 2
        else:
            y = x - 1
        return y


class ForLoop(nn.Module):
    def forward(self, x, n: int):
        acc = torch.zeros_like(x)
        for i in range(n):
            acc = acc + x * i
        return acc


class WhileLoop(nn.Module):
    def forward(self, x, limit: float):
        i = 0
        while float(x.abs().sum()) < limit and i < 20:
            x = x * 1.5 + 0.1
            i += 1
        return x, i


class NestedControl(nn.Module):
    def forward(self, x, flag: bool):
        out = x
        for i in range(3):
            if flag and i % 2 == 0:
                out = out + i
            elif i == 1:
                out = out * 0.5
            else:
                break
        if out.max() > 1.0:
            out = out.clamp(max=1.0)
        return out


class NestedLoops(nn.Module):
    def forward(self, x, n: int, m: int):
        total = 0
        y = x
        for i in range(n):
            j = 0
            while j < m:
                y = y + float(i * m + j) * 0.01
                total += i * j
                j += 1
        return y, total


class EarlyReturn(nn.Module):
    def forward(self, x, k: int):
        if k < 0:
            return x.neg()
        if k == 0:
            return torch.zeros_like(x)
        for i in range(k):
            x = x * 0.9
            if bool(x.abs().max() < 0.1):
                return x
        return x + 1


class BreakContinue(nn.Module):
    def forward(self, xs: List[int], x):
        s = 0
        for v in xs:
            if v < 0:
                continue
            if v > 100:
                break
            s += v
        return x * s, s


# ---------------------------------------------------------------------------
# Containers / scalars / strings
# ---------------------------------------------------------------------------


class Pair(NamedTuple):
    first: Tensor
    second: Tensor


class Stats(NamedTuple):
    mean: Tensor
    count: int
    label: str


class TupleListDict(nn.Module):
    def forward(self, x, y):
        t = (x, y, x + y)
        a, b, c = t
        lst = [a, b, c]
        d: Dict[str, Tensor] = {"sum": a + b, "prod": a * b}
        d["diff"] = a - b
        keys = list(d.keys())
        total = torch.zeros_like(x)
        for k in keys:
            total = total + d[k]
        return lst[1] * 2, total, len(lst), keys


class OptionalArg(nn.Module):
    def forward(self, x, scale: Optional[float] = None, bias: Optional[Tensor] = None):
        if scale is not None:
            x = x * scale
        if bias is None:
            return x
        return x + bias


class OptionalReturn(nn.Module):
    def forward(self, x) -> Optional[Tensor]:
        if x.numel() > 100:
            return None
        return x * 2


class ScalarArith(nn.Module):
    def forward(self, a: int, b: int, c: float, flag: bool):
        s = a + b * 2 - a // 3
        f = c * 1.5 + float(a) / 4.0
        m = a % 5
        p = 2**b
        q = b > a or flag
        r = not flag and (c <= 2.5)
        e = int(f) + abs(a - 10) + min(a, b) - max(b, 1)
        g = math.sqrt(c) + math.exp(0.5) * math.floor(c)
        return s, f, m, p, q, r, e, g


class ListComp(nn.Module):
    def forward(self, x, n: int):
        sizes = [i * 2 for i in range(n)]
        parts = [x * float(s) for s in sizes]
        return torch.stack(parts, 0).sum(0), sizes


class ListOps(nn.Module):
    def forward(self, x: List[int], y: int):
        x.append(y)
        z = x[1:] + [y * 2]
        n = len(z)
        first = z[0]
        has = y in x
        s = sorted(z)
        return z, n, first, has, s


class StringOps(nn.Module):
    def forward(self, x, name: str):
        parts = name.split("_")
        upper = name.upper()
        joined = "-".join(parts)
        msg = "{}:{}".format(joined, len(parts))
        if name.startswith("scale"):
            x = x * float(len(parts))
        tag = upper + "!" if name.endswith("x") else upper.lower()
        return x, msg, tag, name.find("_"), name.replace("_", " ")


class NamedTupleRet(nn.Module):
    def forward(self, x) -> Pair:
        return Pair(x.relu(), x.sigmoid())


class NamedTupleStats(nn.Module):
    def forward(self, x) -> Stats:
        st = Stats(x.mean(), x.numel(), "stats")
        return st


class DictOps(nn.Module):
    def forward(self, x, keys: List[str]):
        d: Dict[str, int] = {}
        for i, k in enumerate(keys):
            d[k] = i * 2
        out = torch.jit.annotate(Dict[str, Tensor], {})
        for k, v in d.items():
            out[k] = x + v
        if "b" in d:
            out["has_b"] = x.neg()
        return out, d.get("a", -1), len(d)


class Inplace(nn.Module):
    def forward(self, x):
        y = x.clone()
        y.add_(1.0)
        y.mul_(2.0)
        y.clamp_(-1.0, 3.0)
        y[0] = 0.0
        y[:, 1].fill_(5.0)
        z = torch.empty_like(y).copy_(y)
        z.relu_()
        return y, z


# ---------------------------------------------------------------------------
# Tensor op collections
# ---------------------------------------------------------------------------


class SliceIndex(nn.Module):
    def forward(self, x, idx):
        a = x[:, 1:3]
        b = x[0]
        c = x[..., None]
        d = x[-1, ::2]
        e = x[idx]
        f = x[:, idx]
        g = x.select(1, 0).unsqueeze(0)
        h = x.narrow(0, 1, 2)
        return a, b, c, d, e, f, g, h


class CatStack(nn.Module):
    def forward(self, x, y):
        c = torch.cat([x, y], 0)
        s = torch.stack([x, y], 1)
        p, q = torch.split(c, [2, 4], 0)
        ch = torch.chunk(y, 2, 1)
        u = torch.unbind(x, 0)
        return c, s, p + 1, q, ch[0], ch[1], u[0]


class WhereClamp(nn.Module):
    def forward(self, x, y):
        m = x > y
        a = torch.where(m, x, y)
        b = torch.clamp(x, -0.5, 0.5)
        c = x.clamp(min=0.0)
        d = x.masked_fill(m, 0.0)
        e = torch.where(x > 0, x, torch.zeros_like(x))
        return a, b, c, d, e, m


class GatherIndex(nn.Module):
    def forward(self, x, idx, gidx):
        a = torch.index_select(x, 0, idx)
        b = torch.gather(x, 1, gidx)
        c = x.index_select(1, idx)
        d = torch.scatter_add(torch.zeros_like(x), 1, gidx, b)
        return a, b, c, d


class Reductions(nn.Module):
    def forward(self, x):
        a = x.sum()
        b = x.sum(1)
        c = x.mean(0, keepdim=True)
        d = x.max()
        e, ei = x.max(1)
        f = x.min(dim=0)[0]
        g = x.argmax()
        h = x.argmax(1, keepdim=True)
        i = x.var()
        j = x.std(1, unbiased=False)
        k = x.norm()
        l = torch.norm(x, 2, 1, True)
        m = x.prod(1)
        n = torch.logsumexp(x, 1)
        return a, b, c, d, e, ei, f, g, h, i, j, k, l, m, n


class Float64Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3).double()

    def forward(self, x):
        return torch.tanh(self.fc(x)) * 2.0 + x.sum(1, keepdim=True)


class IntTensorOps(nn.Module):
    def forward(self, a, b):
        s = a + b
        d = a - 2 * b
        p = a * b
        fd = torch.floor_divide(a, b)
        fd2 = a // 3
        r = torch.remainder(a, b)
        r2 = a % 4
        t = a / b
        bits = (a & 3) | (b ^ 1)
        return s, d, p, fd, fd2, r, r2, t, bits


class TypeConv(nn.Module):
    def forward(self, x, i):
        a = x.to(torch.float64)
        b = i.float()
        c = x.type_as(i)
        d = (x > 0).to(torch.int32)
        e = i.to(x.dtype) + x
        f = x.half().float()
        g = x.long()
        h = d.to(torch.bool)
        return a, b, c, d, e, f, g, h


class Creation(nn.Module):
    def forward(self, x, n: int):
        z = torch.zeros(2, 3)
        o = torch.ones([n, 2], dtype=torch.float64)
        f = torch.full((2, 2), 3.5)
        r = torch.arange(n)
        r2 = torch.arange(1, 7, 2, dtype=torch.float32)
        zl = torch.zeros_like(x)
        ol = torch.ones_like(x, dtype=torch.int64)
        fl = torch.full_like(x, 7.0)
        e = torch.eye(3)
        ls = torch.linspace(0.0, 1.0, 5)
        t = torch.tensor([1.0, 2.0, 3.0])
        return z, o, f, r, r2, zl + x, ol, fl, e, ls, t


class Activations(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.LeakyReLU(0.2)
        self.ht = nn.Hardtanh(-0.5, 0.5)

    def forward(self, x):
        a = F.relu(x)
        b = torch.tanh(x)
        c = torch.sigmoid(x)
        d = F.gelu(x)
        e = F.softmax(x, dim=1)
        f = F.log_softmax(x, dim=-1)
        g = self.act(x)
        h = self.ht(x)
        i = F.elu(x)
        j = F.silu(x)
        k = F.softplus(x)
        m = F.gelu(x, approximate="tanh")
        return a, b, c, d, e, f, g, h, i, j, k, m


class MatOps(nn.Module):
    def forward(self, a, b, c, bias):
        x = torch.mm(a, b)
        y = torch.matmul(a, b)
        z = torch.bmm(c, c.transpose(1, 2))
        w = torch.addmm(bias, a, b)
        v = F.linear(a, b.t(), bias)
        u = c.permute(2, 0, 1)
        return x, y, z, w, v, u, a.t()


class Broadcast(nn.Module):
    def forward(self, x, row, col):
        a = x + row
        b = x * col
        c = (x - row) / (col.abs() + 1.0)
        d = x.expand(2, 3, 4)
        return a, b, c, d


class ShapeOps(nn.Module):
    def forward(self, x):
        a = x.view(6, 4)
        b = x.reshape(-1)
        c = torch.flatten(x, 1)
        d = x.unsqueeze(1)
        e = d.squeeze(1)
        f = x[:, :1].expand(2, 3, 4)
        g = x.transpose(0, 2).contiguous()
        h = x.permute(1, 0, 2).reshape(3, 8)
        return a, b, c, d, e, f, g, h, x.size(0), x.dim(), x.numel(), x.size()


class HelperMethods(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def helper(self, x, k: int):
        return self.fc(x) * k

    @torch.jit.export
    def other(self, x):
        return self.helper(x, 3).sum(1)

    def forward(self, x):
        return self.helper(x, 2) + self.other(x).unsqueeze(1)


class ParamsNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(4, 3))
        self.b = nn.Parameter(torch.zeros(3))
        self.register_buffer("scale", torch.tensor(0.5))
        self.alpha = 0.25
        self.n: int = 2

    def forward(self, x):
        y = x @ self.w + self.b
        for _ in range(self.n):
            y = y * self.scale + self.alpha
        return y


class FinalConst(nn.Module):
    __constants__ = ["k", "names"]

    def __init__(self):
        super().__init__()
        self.k = 3
        self.names = ["a", "b"]

    def forward(self, x):
        return x * self.k, self.names


@torch.jit.script
class Counter(object):
    def __init__(self, start: int):
        self.count = start
        self.history: List[int] = []

    def bump(self, k: int) -> int:
        self.count += k
        self.history.append(self.count)
        return self.count


class UsesClass(nn.Module):
    def forward(self, x, k: int):
        c = Counter(1)
        for i in range(k):
            c.bump(i)
        return x * float(c.count), c.history


class Color(Enum):
    RED = 1
    GREEN = 2


class UsesEnum(nn.Module):
    def forward(self, x, use_red: bool):
        c = Color.RED if use_red else Color.GREEN
        if c == Color.RED:
            return x + c.value
        return x - c.value


@torch.jit.ignore
def python_side_effect(x: Tensor) -> Tensor:
    return x + 1


class UsesIgnore(nn.Module):
    def forward(self, x, flag: bool):
        if flag:
            return python_side_effect(x)
        return x


class UnionTypes(nn.Module):
    def forward(self, x, v: Union[int, Tensor]):
        if isinstance(v, int):
            return x + v
        return x * v


class AnyAndDevice(nn.Module):
    def forward(self, x):
        dev = x.device
        dt = x.dtype
        y = torch.zeros(2, device=dev, dtype=dt)
        cplx = complex(1.0, 2.0)
        info: List[Any] = [dt, dev, x.is_floating_point(), cplx * 2.0]
        return y, x.shape, info, x.requires_grad


class SpecialFloats(nn.Module):
    def forward(self, x):
        a = x.clamp(min=float("-inf"), max=float("inf"))
        b = torch.nan_to_num(x / 0.0, nan=0.0, posinf=1e30, neginf=-1e-30)
        c = x * 1e-8 + 123456789.125
        return a, b, c


class EscapedStrings(nn.Module):
    def forward(self, x, s: str):
        t = 'quote " and \\ backslash\n newline\ttab'
        u = "unicode \u00e9 and \x01 control"
        if s == t:
            x = x + 1
        return x, t + s, u


# ---------------------------------------------------------------------------
# Functions (scripted and traced)
# ---------------------------------------------------------------------------


def fn_pointwise(x, y):
    z = x * y + 1.0
    return torch.tanh(z).sigmoid() * x


def fn_arith(x, y):
    a = x + y
    b = x - 2.0
    c = x * y
    d = x / (y.abs() + 1.0)
    e = 3.0 / (x.abs() + 1.0)
    f = 2 - x
    g = x.sub(y, alpha=0.5)
    h = torch.add(x, y, alpha=2)
    return a, b, c, d, e, f, g, h


def fn_divs(x, y):
    y2 = y.abs() + 0.5
    a = x / y2
    b = torch.div(x, y2, rounding_mode="floor")
    c = torch.div(x, y2, rounding_mode="trunc")
    d = x // y2
    e = torch.remainder(x, y2)
    f = x % 0.75
    g = torch.fmod(x, 0.75)
    return a, b, c, d, e, f, g


def fn_unary(x):
    p = x.abs() + 0.5
    a = torch.pow(p, 2)
    b = p**0.5
    c = torch.pow(p, x)
    d = -x
    e = torch.exp(x)
    f = torch.log(p)
    g = torch.sqrt(p)
    h = torch.rsqrt(p)
    i = x.neg().abs()
    j = torch.sin(x) + torch.cos(x)
    k = torch.floor(x * 3) + torch.ceil(x * 3) + torch.round(x * 3)
    m = torch.reciprocal(p) + torch.log1p(p) + torch.expm1(x)
    n = torch.sign(x) * torch.trunc(x * 3)
    return a, b, c, d, e, f, g, h, i, j, k, m, n


def fn_compare(x, y):
    a = x == y
    b = x != y
    c = x < y
    d = x <= 0.0
    e = x > y
    f = x >= 0.5
    g = torch.logical_and(c, f)
    h = torch.logical_not(a) | b
    i = (x > 0) & (y < 0)
    j = torch.eq(x, x).all()
    k = (x > 10.0).any()
    return a, b, c, d, e, f, g, h, i, j, k


def fn_softmax_attention(q, k, v):
    s = torch.matmul(q, k.transpose(1, 2)) / math.sqrt(q.size(-1))
    return torch.matmul(torch.softmax(s, -1), v)


def fn_layernorm(x, w, b):
    return F.layer_norm(x, [x.size(-1)], w, b, 1e-5)


def fn_if(x, y):
    if bool(x.sum() > y.sum()):
        return x - y
    return x + y


def fn_int_list(xs: List[int], k: int):
    out: List[int] = []
    for v in xs:
        if v % 2 == 0:
            out.append(v * k)
    total = 0
    for v in out:
        total += v
    return out[:3], total


def fn_chain_unary(x):
    return torch.exp(torch.sin(x)).log().relu().neg().abs()


def fn_mul_sum(x, y):
    return (x * y).sum(dim=1)


def fn_many_outputs(x, y):
    a = x + y
    b = a * x
    c = torch.relu(b)
    d = c.sum(0)
    return a, b, c, d


def fn_linear_f(x, w, b):
    return F.relu(F.linear(x, w, b))


def fn_conv_f(x, w, b):
    return F.relu(F.conv2d(x, w, b, stride=1, padding=1))


def fn_type_refine(x, y: Optional[Tensor], k: Optional[int]):
    if y is not None:
        x = x + y
    if k is None:
        k = 2
    return x * k


def fn_loop(x, n: int):
    y = x
    for i in range(n):
        y = torch.tanh(y) + x
    return y


def fn_while(x, n: int):
    i = 0
    acc = x
    while i < n:
        acc = acc * 0.5 + x
        i += 2
    return acc, i


def fn_cat_where(x, y):
    c = torch.cat([x, y], 1)
    return torch.where(c > 0, c, c * 0.1)


def fn_sum_of_squares(x, y):
    return (x * x + y * y).sum()


def fn_mixed_scalar(x, a: float, n: int):
    y = x * a + n
    return y / (n + 1), a * n


def fn_mlp(x, w1, b1, w2, b2):
    h = torch.relu(torch.matmul(x, w1.t()) + b1)
    return torch.matmul(h, w2.t()) + b2


def fn_lstm_cell(x, h, c, w_ih, w_hh, b_ih, b_hh):
    gates = x.mm(w_ih.t()) + h.mm(w_hh.t()) + b_ih + b_hh
    i, f, g, o = gates.chunk(4, 1)
    c2 = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    h2 = torch.sigmoid(o) * torch.tanh(c2)
    return h2, c2


def fn_gelu_chain(x, w):
    y = F.gelu(x @ w)
    return F.layer_norm(y, [y.size(-1)]) * 2.0


def fn_reduce_dims(x):
    a = x.sum(dim=[0, 2])
    b = x.mean(dim=-1, keepdim=True)
    c = x.amax(1)
    d = x.var(dim=1, keepdim=True)
    e = x.std()
    f = torch.norm(x, dim=2)
    g = x.min()
    h = x.argmin(2)
    i = torch.max(x, 0, keepdim=True)[0]
    return a, b, c, d, e, f, g, h, i


def fn_matops(a, b, c):
    x = torch.mm(a, b)
    y = torch.matmul(c, b)
    z = torch.bmm(c, c.transpose(1, 2))
    w = torch.addmm(x, a, b, beta=0.5, alpha=2.0)
    u = a.t().contiguous()
    v = c.permute(0, 2, 1)
    return x, y, z, w, u, v


def fn_slicing(x):
    a = x[:, 1:3]
    b = x[0]
    c = x[..., None]
    d = x[1:, -2:]
    e = x[:, None, 0]
    return a, b, c, d, e


def fn_shapes(x):
    a = x.view(4, 6)
    b = x.reshape(2, -1)
    c = x.flatten()
    d = x.unsqueeze(0).squeeze(0)
    e = x.transpose(1, 2).contiguous().view(-1)
    f = x[:, :1, :].expand(2, 3, 4)
    g = torch.squeeze(x.unsqueeze(-1), -1)
    return a, b, c, d, e, f, g


def fn_size_ops(x):
    n = x.numel()
    d = x.dim()
    s = x.size()
    s1 = x.size(1)
    shape = x.shape
    return x.sum() * n, d, s, s1, shape[0] + s[-1]


def fn_split_chunk(x):
    a, b = x.split(2, 0)
    c = x.split([1, 3], 1)
    d = x.chunk(2, 1)
    e = torch.stack([a, b], 0)
    return a, b, c[0], c[1], d[0], d[1], e


def fn_gather_index(x, idx, gidx):
    a = x.index_select(0, idx)
    b = torch.gather(x, 1, gidx)
    c = x[idx]
    return a + 1.0, b, c


def fn_where_clamp(x, y, m):
    a = torch.where(m, x, y)
    b = x.clamp(-0.3, 0.3)
    c = torch.clamp(y, max=0.1)
    d = x.masked_fill(m, -1.0)
    e = torch.clamp_min(x, 0.0) + torch.clamp_max(y, 0.0)
    return a, b, c, d, e


def fn_creation(x, n: int):
    z = torch.zeros(n, 2)
    o = torch.ones(2, n, dtype=torch.int64)
    f = torch.full([2, 2], 1.5)
    a = torch.arange(n)
    a2 = torch.arange(0.0, 1.0, 0.25)
    zl = torch.zeros_like(x)
    ol = torch.ones_like(x)
    fl = torch.full_like(x, -2.0)
    rl = torch.empty_like(x).fill_(4.0)
    return z, o, f, a, a2, zl + ol + x, fl, rl


def fn_dtype(x, i):
    a = x.to(torch.float64) * 2
    b = i.to(torch.float32) + x
    c = x.type_as(i)
    d = (x > 0).float()
    e = i.double().sum()
    f = x.int()
    g = i.to(dtype=torch.int32) * 2
    return a, b, c, d, e, f, g


def fn_scalar_ops(a: int, b: float, c: bool):
    x = a * 2 + int(b)
    y = b / 2.0 - a
    z = a // 3
    w = a % 3
    v = float(a) ** 2
    q = (a > 2) and c
    r = (b < 1.5) or not c
    m = max(a, 4) + min(b, 0.5)
    return x, y, z, w, v, q, r, m, a == 3, b != 2.0


def fn_strings(a: int, s: str):
    t = s + "_" + str(a)
    parts = t.split("_")
    n = len(parts)
    up = t.upper()
    f = "{} has {} parts".format(t, n)
    return t, n, up, f, parts[0], s.startswith("ab"), t.find("_"), s[1:3]


def fn_tuples(x, y):
    t = (x, y)
    u = (t, x + y)
    (a, b), c = u
    l = [a, b, c]
    l2 = l[::-1]
    return l2[0], len(l), u[0][1], c


def fn_list_tensors(xs: List[Tensor]):
    out: List[Tensor] = []
    for x in xs:
        out.append(x * 2)
    out.insert(0, xs[0] + 1)
    return torch.cat(out, 0), out


def fn_loop_carried(x, n: int):
    acc = x
    k = 1
    s = 0.0
    for i in range(n):
        acc = acc * 0.5 + float(k)
        k = k * 2
        s = s + float(i)
    return acc, k, s


def fn_nested_loops(x, n: int):
    y = x
    for i in range(n):
        for j in range(i):
            y = y + x * float(j)
        if i > 1:
            y = y.relu()
    return y


def fn_early_return(x, k: int):
    if k > 3:
        return x * 3.0
    if k > 1:
        return x * 2.0
    return x


def helper_double(x):
    return x * 2


def fn_calls_fn(x, y):
    return helper_double(x) + helper_double(y).relu()


def fn_calls_fn_fork(x, y):
    fut = torch.jit.fork(fn_chain_unary, x)
    z = fn_chain_unary(y) * 2.0
    return torch.jit.wait(fut) + z


def fn_dict(x, keys: List[str]):
    d: Dict[str, Tensor] = {}
    for i, k in enumerate(keys):
        d[k] = x * float(i)
    return d


def fn_namedtuple(x) -> Pair:
    return Pair(x.exp(), x.neg())


def fn_optional_ret(x, flag: bool) -> Optional[Tensor]:
    if flag:
        return x.relu()
    return None


def fn_normalize(x):
    return F.normalize(x, p=2.0, dim=1), F.cosine_similarity(x, x.flip(0), dim=1)


def fn_embedding_f(idx, w):
    return F.embedding(idx, w).sum(1)


def fn_activations(x):
    return (
        F.leaky_relu(x, 0.1),
        F.hardtanh(x, -0.2, 0.2),
        F.elu(x, 0.5),
        F.silu(x),
        F.gelu(x),
        F.softmax(x, 0),
        F.log_softmax(x, 1),
        F.relu6(x * 4),
        F.hardsigmoid(x),
        F.hardswish(x),
        F.mish(x),
    )


def fn_dropout_eval(x):
    return F.dropout(x, 0.5, False) + F.dropout(x, p=0.1, training=False)


def fn_batchnorm_f(x, rm, rv, w, b, training: bool):
    return F.batch_norm(x, rm, rv, w, b, training, 0.1, 1e-5)


def fn_pool_f(x):
    a = F.max_pool2d(x, 2, 2)
    b = F.avg_pool2d(x, 2)
    c = F.adaptive_avg_pool2d(x, 1)
    d = F.max_pool1d(x.flatten(2), 3)
    return a, b, c, d


def fn_conv_transpose_f(x, w):
    return F.conv_transpose2d(x, w, None, stride=2, padding=1)


def fn_conv1d_f(x, w, b):
    return F.conv1d(x, w, b, stride=2, padding=1, dilation=1, groups=1)


def fn_int_tensor(a, b):
    return a + b, a * 3, a // b, a % b, a / b, (a - b).abs(), a.sum(), a.max()


def fn_float64(x, y):
    return torch.exp(x) * y + x.sum(), (x @ y.t()).tanh()


def fn_misc_tensor_ops(x):
    a = torch.cumsum(x, 1)
    b = torch.flip(x, [0])
    c = torch.roll(x, 1, 1)
    d = torch.tril(x)
    e = torch.triu(x, 1)
    f = torch.sort(x, 1)[0]
    g = torch.topk(x, 2, 1)[0]
    h = x.repeat(1, 2)
    i = torch.einsum("ij,kj->ik", x, x)
    return a, b, c, d, e, f, g, h, i


def fn_trace_consts(x):
    y = x + torch.tensor(0.5)
    z = y * torch.tensor([1.0, 2.0, 3.0])
    w = z - torch.arange(3).float()
    m = torch.tensor([[1.5, -2.0, 0.25], [3.0, 4.0, -0.5]]) * torch.tensor([True, False, True]).float()
    big = torch.linspace(-1.0, 1.0, 24).reshape(2, 3, 4).sum(-1)
    return w.sum(0), y.shape[0] * 2, w * m + big
