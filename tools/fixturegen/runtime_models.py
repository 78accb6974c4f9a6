"""Models for the runtime fixtures (`runtime_cases.py`): graphs that once ran wrong under
irjit's executors. Scripted by PyTorch 2.13; kept apart from models.py so that file's line
numbers (printed in the other fixtures' source ranges) do not move."""

from typing import List

import torch
import torch.nn as nn


def fn_cast_int_double(x):
    """Casts to int64 and float64 and adds them back as float32: only the float64 branch
    carries a gradient."""
    a = x.to(torch.int64)
    b = x.to(torch.float64)
    return (a + b).to(torch.float32) * x


class AppendInLoop(nn.Module):
    """EdgeNeXt's SplitTransposeBlock pattern with a real loop: chunk, accumulate, append in
    the loop, append the last chunk, cat."""

    def forward(self, x, n: int):
        spx = x.chunk(4, dim=1)
        spo: List[torch.Tensor] = []
        sp = spx[0]
        for i in range(n):
            if i > 0:
                sp = sp + spx[i]
            sp = torch.tanh(sp * 2.0)
            spo.append(sp)
        spo.append(spx[-1])
        return torch.relu(torch.cat(spo, 1))


class SplitTransposeConvs(nn.Module):
    """EdgeNeXt's SplitTransposeBlock split-conv part as scripted (the ModuleList loop
    unrolled into appends)."""

    def __init__(self, dim: int = 8, scales: int = 4):
        super().__init__()
        width = dim // scales
        self.convs = nn.ModuleList([nn.Conv2d(width, width, 3, padding=1, groups=width)
                                    for _ in range(scales - 1)])

    def forward(self, x):
        spx = x.chunk(len(self.convs) + 1, dim=1)
        spo = []
        sp = spx[0]
        for i, conv in enumerate(self.convs):
            if i > 0:
                sp = sp + spx[i]
            sp = conv(sp)
            spo.append(sp)
        spo.append(spx[-1])
        return torch.relu(torch.cat(spo, 1))


class ExtendInLoop(nn.Module):
    """A list filled in a loop by `append` on one branch and `+=` (aten::add_.t) on the
    other, then concatenated."""

    def forward(self, x):
        spx = torch.split(x, 2, 1)
        out: List[torch.Tensor] = []
        for i in range(len(spx)):
            if i % 2 == 0:
                out.append(torch.sigmoid(spx[i]) * 2.0)
            else:
                out += [spx[i] * 3.0]
        return torch.cat(out, 1).sum(0)
