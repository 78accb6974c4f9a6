"""Models traced by both PyTorch (trace_pairs.py) and irjit (tests/frontend/test_trace*.py),
written against a torch-shaped namespace `t` (the `torch` or the `irjit` package) so the two
sides build the same module classes; `build(t)` gives {case: (module or function, input shapes)}.
"""

from __future__ import annotations


def build(t) -> dict:
    nn = t.nn

    class MyCell(nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = nn.Linear(4, 4)

        def forward(self, x, h):
            new_h = t.tanh(self.linear(x) + h)
            return new_h, new_h

    class MyDecisionGate(nn.Module):
        def forward(self, x):
            if x.sum() > 0:
                return x
            return -x

    class GatedCell(nn.Module):
        def __init__(self):
            super().__init__()
            self.dg = MyDecisionGate()
            self.linear = nn.Linear(4, 4)

        def forward(self, x, h):
            new_h = t.tanh(self.dg(self.linear(x)) + h)
            return new_h, new_h

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.seq = nn.Sequential(nn.Linear(4, 5), nn.ReLU())
            self.out = nn.Linear(5, 2)

        def forward(self, x):
            return self.out(self.seq(x))

    class Mlp(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8), nn.Tanh(),
                                        nn.Linear(8, 2))

        def forward(self, x):
            return t.sigmoid(self.layers(x)) * 2.0 - 1.0

    class ConvRelu(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3, padding=1)

        def forward(self, x):
            return t.relu(self.conv(x)).sum(1)

    def pointwise(x, y):
        return t.sin(x) * y + x.exp() / (y * y + 1.0)

    def matmul_chain(a, b):
        return (a @ b).relu().mean(0)

    return {
        "my_cell": (MyCell(), [(3, 4), (3, 4)]),
        "decision_gate": (GatedCell(), [(3, 4), (3, 4)]),
        "net_sequential": (Net(), [(2, 4)]),
        "mlp": (Mlp(), [(3, 4)]),
        "conv_relu": (ConvRelu(), [(2, 3, 5, 5)]),
        "fn_pointwise": (pointwise, [(3, 4), (3, 4)]),
        "fn_matmul_chain": (matmul_chain, [(3, 5), (5, 2)]),
        "eager_linear": (nn.Linear(4, 3), [(2, 4)]),
        "eager_relu": (nn.ReLU(), [(3, 4)]),
        "eager_tanh": (nn.Tanh(), [(3, 4)]),
        "eager_sigmoid": (nn.Sigmoid(), [(3, 4)]),
        "eager_conv2d": (nn.Conv2d(3, 4, 3, padding=1), [(2, 3, 6, 6)]),
        "eager_layernorm": (nn.LayerNorm(5), [(2, 3, 5)]),
        "eager_maxpool2d": (nn.MaxPool2d(2), [(1, 2, 6, 6)]),
        "eager_sequential_mlp": (nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2),
                                               nn.Tanh()), [(2, 4)]),
    }
