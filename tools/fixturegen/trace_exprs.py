"""One-line functions of a (3, 4) float tensor `x`, written once for both frameworks
(`torch`/`F` are PyTorch's or irjit's namespace), and what PyTorch 2.13's tracer records for
each: how operators, Python numbers, indexing, sizes, defaults and the functional API are
recorded. A dev-only tool (irjit never imports torch):

    .venv-torch/bin/python tools/fixturegen/trace_exprs.py tests/fixtures/trace/exprs.json

writes {"x": the input's values, "cases": {expression: {"graph": traced graph text, "code": its
.code}}, "layers": {case: {"inlined": the traced layer's inlined graph, "code": its .code}}}
(source comments dropped). LAYERS traces every torch.nn layer irjit.nn has, alone, in the
configurations listed.
"""

from __future__ import annotations

import json
import re
import sys
import warnings
from pathlib import Path

EXPRESSIONS = [
    # operators and Python numbers
    "x + 2", "x + 2.5", "2 + x", "x - 2", "2 - x", "x * 2", "2 * x", "x / 2", "2 / x",
    "x // 2", "x % 2", "x ** 2", "2 ** x", "x ** 0.5", "-x", "abs(x)",
    "x == 1", "x != 1", "x < 1", "x <= 1", "x > 1", "x >= 1", "(x > 0) & (x < 1)",
    "x @ x.t()", "x.t() @ x",
    # tensor methods and functions with defaults
    "torch.add(x, 2)", "torch.sub(x, 2, alpha=2)", "torch.mul(x, x)", "torch.div(x, 2)",
    "torch.true_divide(x, 2)", "torch.remainder(x, 2)", "torch.fmod(x, 2)", "torch.pow(x, 3)",
    "x.add(1)", "x.mul(2.0)", "x.clone().add_(1)", "x.clone().mul_(2)", "x.clone().sub_(2)",
    "torch.maximum(x, x)", "torch.where(x > 0, x, 0.0)", "torch.clamp(x, 0, 1)",
    "x.clamp(min=0.1)", "x.masked_fill(x > 0, 1.0)", "x.lerp(x, 0.5)",
    "x.sum()", "x.sum(1)", "x.sum(dim=1, keepdim=True)", "x.mean((0, 1))",
    "x.mean(-1, keepdim=True)", "x.var(1)", "x.std(1, keepdim=True)", "x.max()", "x.max(1)",
    "x.argmax(1)", "x.amax(0)", "x.prod(1)", "x.cumsum(1)", "x.logsumexp(1)",
    "torch.softmax(x, 1)", "x.softmax(-1)", "torch.log_softmax(x, 1)", "torch.relu(x)",
    "torch.tanh(x)", "torch.sigmoid(x)", "x.exp().log()", "torch.sqrt(x.abs())", "x.rsqrt()",
    "x.sin() + x.cos()", "x.floor() + x.ceil() + x.round()", "x.sign()", "x.reciprocal()",
    # shapes and views
    "x.t()", "x.transpose(0, 1)", "x.permute(1, 0)", "x.view(-1)", "x.view(2, 6)",
    "x.reshape(4, 3)", "x.flatten()", "x.unsqueeze(0)", "x.unsqueeze(0).squeeze()",
    "x.expand(2, 3, 4)", "x.repeat(2, 1)", "x.contiguous()", "x.chunk(2, 1)", "x.split(1, 1)",
    "x.unbind(0)", "torch.cat([x, x], 1)", "torch.stack([x, x])", "x.narrow(1, 0, 2)",
    "x.flip(0)", "x.roll(1, 1)", "x.tril()", "x.triu(1)",
    # indexing
    "x[0]", "x[:, 1:]", "x[1:3]", "x[..., 0]", "x[None]", "x[:, None]", "x[-1]", "x[:, ::2]",
    "x[x > 0]", "x[torch.tensor([0, 2])]",
    # sizes
    "x.view(x.size(0), -1)", "x.reshape(-1, x.shape[1] // 2)", "x.view(x.size(0) // 3, -1)",
    "x.sum() / x.size(0)", "x.new_zeros(x.size(0), 2)", "torch.zeros(x.size(1), 3)",
    "x.expand(2, x.size(0), x.size(1))", "x.view(x.shape[0] * x.shape[1])",
    # creation and conversion
    "torch.zeros_like(x)", "torch.ones_like(x) * 2", "x.new_ones(2)", "torch.ones(3, 4) + x",
    "torch.arange(4) * x", "torch.full((3, 4), 3.0) * x", "x.to(torch.float64)", "x.float()",
    "x.long()", "x.type_as(x)", "x.detach()", "x.clone()",
    # torch.nn.functional
    "F.relu(x)", "F.gelu(x)", "F.silu(x)", "F.leaky_relu(x, 0.2)", "F.elu(x)", "F.softplus(x)",
    "F.softmax(x, dim=1)", "F.log_softmax(x, 1)", "F.layer_norm(x, (4,))",
    "F.dropout(x, 0.5, False)", "F.linear(x, x)", "F.normalize(x)", "F.hardtanh(x)",
    "F.mse_loss(x, x * 2)", "F.pad(x, (1, 1))",
]


# every irjit.nn layer traced alone: (constructor, input shape or ("int64", shape, high), train)
LAYERS = [
    ("nn.Linear(4, 3)", (2, 4), True), ("nn.Linear(4, 3, bias=False)", (2, 4), True),
    ("nn.Conv2d(3, 4, 3, padding=1)", (1, 3, 5, 5), True),
    ("nn.Conv2d(3, 4, 3, stride=2, dilation=1, groups=1, bias=False)", (1, 3, 7, 7), True),
    ("nn.Conv2d(4, 4, 3, padding=1, groups=2)", (1, 4, 5, 5), True),
    ("nn.Conv2d(3, 4, 3, padding=1, padding_mode='reflect')", (1, 3, 5, 5), True),
    ("nn.ReLU()", (3, 4), True), ("nn.ReLU(inplace=True)", (3, 4), True), ("nn.Tanh()", (3, 4), True),
    ("nn.Sigmoid()", (3, 4), True),
    ("nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))", (2, 4), True),
    ("nn.BatchNorm2d(3)", (2, 3, 4, 4), True), ("nn.BatchNorm2d(3)", (2, 3, 4, 4), False),
    ("nn.BatchNorm2d(3, momentum=None)", (2, 3, 4, 4), True),
    ("nn.BatchNorm2d(3, affine=False)", (2, 3, 4, 4), False),
    ("nn.LayerNorm(5)", (2, 3, 5), True), ("nn.LayerNorm([3, 5], elementwise_affine=False)", (2, 3, 5), True),
    ("nn.Embedding(10, 3)", ("int64", (2, 4), 10), True),
    ("nn.Embedding(10, 3, padding_idx=0)", ("int64", (2, 4), 10), True),
    ("nn.Dropout(0.3)", (3, 4), True), ("nn.Dropout(0.3)", (3, 4), False),
    ("nn.MaxPool2d(2)", (1, 2, 6, 6), True), ("nn.MaxPool2d(3, stride=2, padding=1)", (1, 2, 7, 7), True),
    ("nn.MaxPool2d(2, ceil_mode=True)", (1, 2, 5, 5), True),
    ("nn.LSTMCell(3, 4)", (2, 3), True), ("nn.LSTMCell(3, 4, bias=False)", (2, 3), True),
    ("nn.LSTMCell(3, 4)", (3,), True), ("nn.GRUCell(3, 4)", (2, 3), True),
    ("nn.GRUCell(3, 4)", (3,), True),
]


def layer_input(spec, torch):
    """A layer case's input: values 0..n-1 scaled (indices below `high` for int64)."""
    if isinstance(spec[0], str):
        _, shape, high = spec
        n = 1
        for d in shape:
            n *= d
        return (torch.arange(n) % high).view(*shape)
    n = 1
    for d in spec:
        n *= d
    return torch.arange(n).float().sin().view(*spec)


def canonical(text: str) -> str:
    return re.sub(r" # [^\n]*", "", text)


def function(expr: str, torch, F):
    """`def f(x): return <expr>`, with `torch` and `F` bound to the given namespaces."""
    scope = {"torch": torch, "F": F, "__name__": "__main__"}
    exec(f"def f(x):\n    return {expr}\n", scope)  # noqa: S102
    return scope["f"]


def main(out: Path) -> None:
    import torch
    import torch.nn.functional as F
    torch.manual_seed(0)
    x = torch.randn(3, 4)
    cases = {}
    for expr in EXPRESSIONS:
        fn = function(expr, torch, F)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            traced = torch.jit.trace(fn, (x,), check_trace=False)
        cases[expr] = {"graph": canonical(str(traced.graph)), "code": traced.code}
    layers = {}
    for ctor, spec, train in LAYERS:
        torch.manual_seed(0)
        module = eval(ctor, {"nn": torch.nn})  # noqa: S307
        module.train(train)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            traced = torch.jit.trace(module, (layer_input(spec, torch),), check_trace=False)
        layers[f"{ctor} train={train} input={list(spec)}"] = {
            "inlined": canonical(str(traced.inlined_graph)), "code": traced.code}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"x": x.tolist(), "cases": cases, "layers": layers}, indent=1) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
