"""torch contenders of the benchmark (dev only: imported when torch is importable): the
functional forms the six bench graphs were scripted from, run as torch eager, TorchScript's
profiling executor (`torch.jit.script`) and `torch.compile` (inductor), each forward
(no grad) and forward+backward (loss = sum of all outputs' sums, gradients w.r.t. every input
the workload says requires grad).

`same_graph(name)` checks a definition against its bench graph: the node kinds of
`torch.jit.script(fn).graph` equal those of tests/fixtures/bench/<name>.ir."""

from __future__ import annotations

from collections import Counter
from typing import Callable, Optional, Sequence

import torch
import torch.nn.functional as F


def elementwise_chain(x, a, b):
    return torch.tanh(x * a + b) * torch.sigmoid(x) + x * x


def lstm_cell(x, h, c, w_ih, w_hh, b_ih, b_hh):
    gates = x @ w_ih.t() + b_ih + h @ w_hh.t() + b_hh
    i, f, g, o = gates.chunk(4, 1)
    i = torch.sigmoid(i)
    f = torch.sigmoid(f)
    g = torch.tanh(g)
    o = torch.sigmoid(o)
    c2 = f * c + i * g
    h2 = o * torch.tanh(c2)
    return h2, c2


def mlp(x, w1, b1, w2, b2):
    hid = torch.relu(F.linear(x, w1, b1))
    return F.linear(hid, w2, b2)


def rnn_loop(x, h, W, U):
    for i in range(16):
        h = torch.tanh(x[i] @ W + h @ U)
    return h


def seed_conv_relu(x, w):
    return torch.relu(F.conv2d(x, w))


def tiny_linear_tanh(x, h, W, b):
    new_h = torch.tanh(x @ W.t() + b + h)
    return new_h, new_h


DEFINITIONS: dict[str, Callable] = {f.__name__: f for f in (
    elementwise_chain, lstm_cell, mlp, rnn_loop, seed_conv_relu, tiny_linear_tanh)}


def node_kinds(graph) -> Counter:
    """Node kinds of a torch graph, nested blocks included."""
    kinds: Counter = Counter()

    def visit(block):
        for n in block.nodes():
            kinds[n.kind()] += 1
            for b in n.blocks():
                visit(b)
    visit(graph)
    return kinds


def same_graph(name: str, bench_kinds: Counter) -> bool:
    """Whether scripting the definition gives the bench graph's node kinds."""
    return node_kinds(torch.jit.script(DEFINITIONS[name]).graph) == bench_kinds


def _outputs(result) -> tuple:
    return result if isinstance(result, tuple) else (result,)


class TorchContender:
    """One way of running a definition: `forward()` and `forward_backward()` on fixed inputs
    (copies of the numpy inputs irjit gets, each requiring grad as `requires_grad` says, by
    default all); `error` says why it could not be built."""

    def __init__(self, label: str, fn: Optional[Callable], arrays, error: str = "",
                 requires_grad: Optional[Sequence[bool]] = None):
        self.label = label
        self.fn = fn
        self.error = error
        self.inputs = [torch.from_numpy(a.copy()) for a in arrays]
        flags = [True] * len(arrays) if requires_grad is None else list(requires_grad)
        self.grad_inputs = [t.clone().requires_grad_(flag) for t, flag in zip(self.inputs, flags)]

    def forward(self):
        with torch.no_grad():
            return self.fn(*self.inputs)

    def forward_backward(self):
        loss = sum(o.sum() for o in _outputs(self.fn(*self.grad_inputs)))
        loss.backward()
        grads = [t.grad for t in self.grad_inputs]
        for t in self.grad_inputs:
            t.grad = None
        return grads


def contenders(name: str, arrays, requires_grad: Optional[Sequence[bool]] = None
               ) -> list[TorchContender]:
    """Eager, TorchScript (profiling executor) and torch.compile of the workload, their inputs
    requiring grad as `requires_grad` says; a contender whose construction fails carries the
    reason instead of a function."""
    fn = DEFINITIONS[name]
    torch._C._jit_set_profiling_executor(True)
    out = [TorchContender("torch eager", fn, arrays, requires_grad=requires_grad)]
    try:
        out.append(TorchContender("torchscript", torch.jit.script(fn), arrays,
                                  requires_grad=requires_grad))
    except Exception as e:  # noqa: BLE001 - recorded in the table instead of failing the run
        out.append(TorchContender("torchscript", None, arrays, f"{type(e).__name__}: {e}"))
    compiled = torch.compile(fn)
    contender = TorchContender("torch.compile", compiled, arrays, requires_grad=requires_grad)
    try:  # inductor compiles on first call: a missing C++ compiler shows up here
        contender.forward()
        contender.forward_backward()
    except Exception as e:  # noqa: BLE001
        first_line = str(e).strip().splitlines()[0] if str(e).strip() else ""
        contender = TorchContender("torch.compile", None, arrays, f"{type(e).__name__}: {first_line}")
    out.append(contender)
    return out
