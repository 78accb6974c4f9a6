"""Eager-mode reference fixtures from PyTorch 2.13 (dev-only: needs torch) for irjit's eager
tensors and irjit.nn: each module with its weights, inputs, outputs, gradients and buffers
after the call; tensor expressions with their values and gradients; initialisation statistics.

    .venv-torch/bin/python -m irjit.tools.fixturegen.eager_cases --out tests/fixtures/eager

Writes `modules.json` + `modules/<case>.npz`, `exprs.json` + `exprs.npz`, `init.json`.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F  # noqa: N812 - the expressions use torch's own spelling
from torch import nn

# (case, class, constructor args, kwargs, input shapes (or ("int", shape, high)), train mode,
#  hidden-state shapes passed after the input)
MODULES = [
    ("linear", "Linear", [4, 3], {}, [(2, 4)], False),
    ("linear_nobias", "Linear", [4, 3], {"bias": False}, [(5, 4)], False),
    ("linear_3d", "Linear", [4, 2], {}, [(2, 3, 4)], False),
    ("conv2d", "Conv2d", [3, 4, 3], {"padding": 1}, [(2, 3, 6, 6)], False),
    ("conv2d_strided_groups", "Conv2d", [2, 4, 3], {"stride": 2, "groups": 2, "bias": False},
     [(1, 2, 7, 7)], False),
    ("conv2d_reflect", "Conv2d", [1, 2, 3], {"padding": 1, "padding_mode": "reflect"},
     [(1, 1, 5, 5)], False),
    ("relu", "ReLU", [], {}, [(3, 4)], False),
    ("tanh", "Tanh", [], {}, [(3, 4)], False),
    ("sigmoid", "Sigmoid", [], {}, [(3, 4)], False),
    ("batchnorm2d_train", "BatchNorm2d", [3], {}, [(4, 3, 5, 5)], True),
    ("batchnorm2d_eval", "BatchNorm2d", [3], {}, [(2, 3, 4, 4)], False),
    ("batchnorm2d_cumulative", "BatchNorm2d", [2], {"momentum": None}, [(3, 2, 2, 2)], True),
    ("layernorm", "LayerNorm", [5], {}, [(2, 3, 5)], False),
    ("layernorm_2d", "LayerNorm", [[3, 5]], {"eps": 1e-3}, [(2, 3, 5)], False),
    ("embedding", "Embedding", [10, 4], {"padding_idx": 1}, [("int", (2, 3), 10)], False),
    ("dropout_eval", "Dropout", [0.3], {}, [(3, 4)], False),
    ("maxpool2d", "MaxPool2d", [2], {}, [(1, 2, 6, 6)], False),
    ("maxpool2d_padded", "MaxPool2d", [3], {"stride": 2, "padding": 1}, [(1, 1, 7, 7)], False),
    ("lstmcell", "LSTMCell", [4, 6], {}, [(3, 4)], False),
    ("lstmcell_state", "LSTMCell", [4, 6], {}, [(3, 4), ("tuple", (3, 6), (3, 6))], False),
    ("grucell", "GRUCell", [4, 6], {}, [(3, 4), (3, 6)], False),
    ("grucell_nobias", "GRUCell", [4, 6], {"bias": False}, [(3, 4)], False),
    ("sequential_mlp", "Sequential", [], {}, [(2, 4)], False),
]


def _sequential() -> nn.Module:
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2), nn.Tanh())


def _inputs(specs, rng) -> tuple[list, dict]:
    """Torch inputs and their arrays (`input.<i>`, `input.<i>.<j>` for tuple members)."""
    args, arrays = [], {}
    for i, spec in enumerate(specs):
        if spec[0] == "int":
            a = rng.integers(0, spec[2], spec[1]).astype(np.int64)
            arrays[f"input.{i}"] = a
            args.append(torch.from_numpy(a))
        elif spec[0] == "tuple":
            parts = [rng.standard_normal(s).astype(np.float32) for s in spec[1:]]
            arrays.update({f"input.{i}.{j}": p for j, p in enumerate(parts)})
            args.append(tuple(torch.from_numpy(p).requires_grad_() for p in parts))
        else:
            a = rng.standard_normal(spec).astype(np.float32)
            arrays[f"input.{i}"] = a
            args.append(torch.from_numpy(a).requires_grad_())
    return args, arrays


def _flat_tensors(args) -> list[tuple[str, torch.Tensor]]:
    out = []
    for i, a in enumerate(args):
        if isinstance(a, tuple):
            out += [(f"{i}.{j}", t) for j, t in enumerate(a)]
        elif a.dtype.is_floating_point:
            out.append((str(i), a))
    return out


def module_case(case, cls, args, kwargs, specs, train, seed) -> tuple[dict, dict]:
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    m = _sequential() if cls == "Sequential" else getattr(nn, cls)(*args, **kwargs)
    m.train(train)
    if cls == "BatchNorm2d" and not train:  # non-trivial running statistics
        with torch.no_grad():
            m.running_mean.copy_(torch.from_numpy(rng.standard_normal(args[0]).astype(np.float32)))
            m.running_var.copy_(torch.from_numpy(rng.uniform(0.5, 2, args[0]).astype(np.float32)))
    arrays = {f"state.{k}": v.detach().numpy().copy() for k, v in m.state_dict().items()}
    inputs, in_arrays = _inputs(specs, rng)
    arrays.update(in_arrays)
    out = m(*inputs)
    outs = list(out) if isinstance(out, tuple) else [out]
    loss = 0
    for i, o in enumerate(outs):
        cot = rng.standard_normal(tuple(o.shape)).astype(np.float32)
        arrays[f"output.{i}"] = o.detach().numpy()
        arrays[f"cotangent.{i}"] = cot
        loss = loss + (o * torch.from_numpy(cot)).sum()
    loss.backward()
    for name, p in m.named_parameters():
        arrays[f"grad.param.{name}"] = np.zeros_like(p.detach().numpy()) if p.grad is None else p.grad.numpy()
    for key, t in _flat_tensors(inputs):
        arrays[f"grad.input.{key}"] = t.grad.numpy()
    arrays.update({f"after.{k}": v.numpy().copy() for k, v in m.named_buffers()})
    meta = {"case": case, "class": cls, "args": args, "kwargs": kwargs, "train": train,
            "inputs": [list(s) if s[0] not in ("int", "tuple") else [s[0]] for s in specs],
            "outputs": len(outs), "repr": repr(m),
            "qualified_name": f"__torch__.{type(m).__module__}.{type(m).__name__}"}
    return meta, arrays


# Each expression is evaluated with `t` as the tensor namespace (torch / irjit), `F` its
# functional module and x, y (3x4, float, requiring grad), m (bool mask), i (int64 indices).
EXPRS = [
    "x + y * 2 - 1", "(x - y) / 3", "2 - x", "1 / (x * x + 1)", "x ** 2", "2 ** x", "-x", "abs(x)",
    "x // 0.5", "x % 0.7", "x @ y.t()", "t.matmul(x, y.t())", "x.sum()", "x.sum(1)",
    "x.sum(dim=0, keepdim=True)", "x.mean(1)", "x.relu()", "t.tanh(x)", "t.sigmoid(x) * y",
    "t.exp(x).log()", "x.t()", "x.T", "x.view(6, 2)", "x.reshape(2, -1)", "x.permute(1, 0)",
    "x.unsqueeze(0).expand(2, 3, 4)", "x.flatten()", "x.transpose(0, 1).contiguous()",
    "x[1]", "x[:, 1:3]", "x[..., -1]", "x[None, :, 0]", "x[0, ::2]", "x[m]", "x[i]", "x[:, i]",
    "x[i, 1:]", "t.cat([x, y], 1)", "t.cat([x, y])", "t.stack([x, y], dim=2)", "t.where(m, x, y)",
    "x.max(1)[0]", "x.max(0)[1]", "t.max(x, y)", "x.clamp(-0.5, 0.5)",
    "x.clamp(min=0)", "x > y", "x <= 0", "x == y", "x.softmax(1)", "F.softmax(x, dim=0)",
    "F.log_softmax(x, 1)", "F.relu(x)", "F.gelu(x)", "F.leaky_relu(x, 0.2)", "F.linear(x, y[:2])",
    "F.linear(x, y, y[:, 0])", "F.dropout(x, 0.5, False)", "F.layer_norm(x, [4])",
    "F.mse_loss(x, y)", "F.cross_entropy(x, i)", "F.pad(x, [1, 2])", "x.to(t.float64) * 2",
    "x.float() + x.double()", "t.zeros_like(x) + x", "t.ones(3, 4) * x", "t.full((3, 4), 2.0) * x",
    "t.arange(4) * x", "x.chunk(2, 1)[1]", "x.split(1)[2]", "x.squeeze().norm()", "x.var(1)",
    "x.std()", "t.addmm(y[:, 0:3], x, y.t())", "t.einsum('ij,kj->ik', x, y)", "x.cumsum(1)",
    "x.flip(0)", "x.roll(1, 1)", "x.tril()", "x.repeat(2, 1)", "x.gather(1, i.view(3, 1).abs() % 4)",
    "x.masked_fill(m, 0.0)", "x.sort(1)[0]", "x.topk(2)[0]", "x.argmax(1)", "x.abs().sqrt()",
    "x.sin() + x.cos()", "x.pow(3)", "x.neg().exp()", "x.sign() * x",
]


def expr_cases(seed: int = 0) -> tuple[list, dict]:
    rng = np.random.default_rng(seed)
    xa = rng.standard_normal((3, 4)).astype(np.float32)
    ya = rng.standard_normal((3, 4)).astype(np.float32)
    ma = rng.random((3, 4)) > 0.5
    ia = np.array([2, 0, 1], np.int64)
    arrays = {"x": xa, "y": ya, "m": ma, "i": ia}
    metas = []
    for k, src in enumerate(EXPRS):
        x = torch.from_numpy(xa.copy()).requires_grad_()
        y = torch.from_numpy(ya.copy()).requires_grad_()
        env = {"t": torch, "F": F, "x": x, "y": y, "m": torch.from_numpy(ma), "i": torch.from_numpy(ia)}
        out = eval(src, env)  # noqa: S307 - our own expression table
        arrays[f"{k}.out"] = out.detach().numpy()
        meta = {"expr": src, "dtype": str(out.dtype).replace("torch.", ""), "grad": False}
        if out.requires_grad:
            cot = rng.standard_normal(tuple(out.shape)).astype(np.float32)
            try:
                (out * torch.from_numpy(cot)).sum().backward()
            except RuntimeError as e:  # torch has no derivative (floor_divide)
                meta["no_grad_reason"] = str(e)
                metas.append(meta)
                continue
            arrays[f"{k}.cot"] = cot
            for name, v in (("x", x), ("y", y)):
                arrays[f"{k}.grad.{name}"] = np.zeros_like(xa) if v.grad is None else v.grad.numpy()
            meta["grad"] = True
        metas.append(meta)
    return metas, arrays


def init_stats() -> list[dict]:
    """Per parameter of large default-constructed modules: shape, min, max, mean, std."""
    torch.manual_seed(0)
    modules = {"Linear(256, 128)": nn.Linear(256, 128), "Conv2d(16, 32, 3)": nn.Conv2d(16, 32, 3),
               "Embedding(300, 64)": nn.Embedding(300, 64), "LSTMCell(64, 96)": nn.LSTMCell(64, 96),
               "GRUCell(64, 96)": nn.GRUCell(64, 96), "BatchNorm2d(8)": nn.BatchNorm2d(8),
               "LayerNorm(16)": nn.LayerNorm(16)}
    out = []
    for ctor, m in modules.items():
        for name, t in m.state_dict().items():
            a = t.detach().numpy().astype(np.float64)
            out.append({"module": ctor, "name": name, "shape": list(a.shape), "min": a.min(),
                        "max": a.max(), "mean": a.mean(), "std": a.std()})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", type=Path, default=Path("tests/fixtures/eager"))
    out = ap.parse_args().out
    torch.set_num_threads(1)
    (out / "modules").mkdir(parents=True, exist_ok=True)
    metas = []
    for seed, spec in enumerate(MODULES):
        meta, arrays = module_case(*spec, seed=seed)
        np.savez(out / "modules" / f"{meta['case']}.npz", **arrays)
        metas.append(meta)
    (out / "modules.json").write_text(json.dumps(metas, indent=1) + "\n")
    exprs, arrays = expr_cases()
    np.savez(out / "exprs.npz", **arrays)
    (out / "exprs.json").write_text(json.dumps(exprs, indent=1) + "\n")
    (out / "init.json").write_text(json.dumps(init_stats(), indent=1) + "\n")
    print(f"{len(metas)} module cases, {len(exprs)} expressions -> {out}")


if __name__ == "__main__":
    main()
