"""irjit.nn: each module, given PyTorch's weights and inputs, gives PyTorch's outputs,
gradients and updated buffers (fixtures from tools/fixturegen/eager_cases.py); initialisation
matches torch's distributions; state dicts round-trip through .npz; Module bookkeeping and
repr behave as torch.nn's."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import irjit
from irjit import nn

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "eager"
CASES = json.loads((FIXTURES / "modules.json").read_text())
INIT = json.loads((FIXTURES / "init.json").read_text())


def _build(meta: dict) -> nn.Module:
    if meta["class"] == "Sequential":
        return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2), nn.Tanh())
    return getattr(nn, meta["class"])(*meta["args"], **meta["kwargs"])


def _inputs(meta: dict, arrays: dict) -> list:
    args = []
    for i, spec in enumerate(meta["inputs"]):
        if spec == ["tuple"]:
            args.append(tuple(irjit.tensor(arrays[f"input.{i}.{j}"], requires_grad=True) for j in range(2)))
        elif spec == ["int"]:
            args.append(irjit.tensor(arrays[f"input.{i}"]))
        else:
            args.append(irjit.tensor(arrays[f"input.{i}"], requires_grad=True))
    return args


def _flat(args: list) -> list:
    out = []
    for i, a in enumerate(args):
        if isinstance(a, tuple):
            out += [(f"{i}.{j}", t) for j, t in enumerate(a)]
        elif a.requires_grad:
            out.append((str(i), a))
    return out


@pytest.mark.parametrize("meta", CASES, ids=[c["case"] for c in CASES])
def test_module_matches_pytorch(meta):
    with np.load(FIXTURES / "modules" / f"{meta['case']}.npz") as npz:
        arrays = {k: npz[k] for k in npz.files}
    m = _build(meta)
    assert repr(m) == meta["repr"]
    assert m.qualified_name == meta["qualified_name"]
    state = {k[len("state."):]: v for k, v in arrays.items() if k.startswith("state.")}
    assert list(m.state_dict()) == list(state)
    m.load_state_dict(state)
    m.train(meta["train"])
    args = _inputs(meta, arrays)
    out = m(*args)
    outs = list(out) if isinstance(out, tuple) else [out]
    assert len(outs) == meta["outputs"]
    loss = None
    for i, o in enumerate(outs):
        np.testing.assert_allclose(o.numpy(), arrays[f"output.{i}"], rtol=1e-5, atol=1e-5)
        term = (o * irjit.tensor(arrays[f"cotangent.{i}"])).sum()
        loss = term if loss is None else loss + term
    loss.backward()
    for name, p in m.named_parameters():
        got = np.zeros_like(p.numpy()) if p.grad is None else p.grad
        np.testing.assert_allclose(got, arrays[f"grad.param.{name}"], rtol=1e-4, atol=1e-5, err_msg=name)
    for key, t in _flat(args):
        np.testing.assert_allclose(t.grad, arrays[f"grad.input.{key}"], rtol=1e-4, atol=1e-5, err_msg=key)
    for name, b in m.named_buffers():
        np.testing.assert_allclose(b.numpy(), arrays[f"after.{name}"], rtol=1e-5, atol=1e-6, err_msg=name)


def _init_module(ctor: str) -> nn.Module:
    return eval(ctor, {k: getattr(nn, k) for k in nn.__all__})  # noqa: S307 - "Linear(256, 128)"


@pytest.mark.parametrize("stat", INIT, ids=[f"{s['module']}.{s['name']}" for s in INIT])
def test_initialisation_matches_pytorch(stat):
    irjit.manual_seed(0)
    t = _init_module(stat["module"]).state_dict()[stat["name"]]
    a = t.numpy().astype(np.float64)
    assert list(a.shape) == stat["shape"]
    if stat["std"] == 0:  # constants: ones, zeros, a zero step count
        assert a.min() == stat["min"] and a.max() == stat["max"]
        return
    scale = max(abs(stat["min"]), abs(stat["max"]))
    n = a.size  # both are samples of n draws: allow five standard errors
    assert abs(a.mean() - stat["mean"]) < 5 * stat["std"] * math.sqrt(2 / n)
    assert abs(a.std() - stat["std"]) < 5 * stat["std"] * math.sqrt(1 / n)
    if stat["name"] != "weight" or "Embedding" not in stat["module"]:  # uniform(-b, b), same b
        assert scale * (1 - 10 / n) <= np.abs(a).max() <= scale * (1 + 5 / n)


def test_linear_and_conv_bounds_follow_kaiming_uniform_a_sqrt5():
    lin, conv = nn.Linear(50, 7), nn.Conv2d(4, 6, (3, 2))
    assert np.abs(lin.weight.numpy()).max() <= 1 / math.sqrt(50)
    assert np.abs(lin.bias.numpy()).max() <= 1 / math.sqrt(50)
    assert np.abs(conv.weight.numpy()).max() <= 1 / math.sqrt(4 * 3 * 2)


def test_state_dict_round_trips_through_npz(tmp_path):
    irjit.manual_seed(1)
    a = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU())
    a.train()
    a(irjit.randn(2, 2, 5, 5))  # moves the running statistics
    path = tmp_path / "state.npz"
    nn.save_state_dict(a, path)
    b = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU())
    missing, unexpected = b.load_state_dict(str(path))
    assert missing == [] and unexpected == []
    for (ka, va), (kb, vb) in zip(a.state_dict().items(), b.state_dict().items()):
        assert ka == kb and va.dtype == vb.dtype
        np.testing.assert_array_equal(va.numpy(), vb.numpy())
    x = irjit.randn(1, 2, 5, 5)
    a.eval(), b.eval()
    np.testing.assert_array_equal(a(x).numpy(), b(x).numpy())


def test_load_state_dict_errors_name_the_keys_and_shapes(tmp_path):
    m = nn.Linear(3, 2)
    with pytest.raises(KeyError, match=r"missing keys \['bias'\], unexpected keys \['b'\]"):
        m.load_state_dict({"weight": np.zeros((2, 3)), "b": np.zeros(2)})
    assert m.load_state_dict({"weight": np.zeros((2, 3))}, strict=False) == (["bias"], [])
    with pytest.raises(ValueError, match=r"size mismatch for weight: .*\(3, 3\).*\(2, 3\)"):
        m.load_state_dict({"weight": np.zeros((3, 3)), "bias": np.zeros(2)})
    bad = tmp_path / "bad.npz"
    bad.write_text("not a zip")
    with pytest.raises(ValueError, match="not a state dict .npz"):
        m.load_state_dict(bad)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(4, 8), nn.ReLU())
        self.head = nn.Linear(8, 2)
        self.register_buffer("scale", irjit.tensor(2.0))
        self.label = "net"

    def forward(self, x):
        return self.head(self.features(x)) * self.scale


def test_module_registration_traversal_and_modes():
    net = Net()
    assert [n for n, _ in net.named_parameters()] == ["features.0.weight", "features.0.bias",
                                                      "head.weight", "head.bias"]
    assert len(list(net.parameters())) == 4 and [n for n, _ in net.named_buffers()] == ["scale"]
    assert [type(c).__name__ for c in net.children()] == ["Sequential", "Linear"]
    assert [type(c).__name__ for c in net.modules()] == ["Net", "Sequential", "Linear", "ReLU", "Linear"]
    assert list(net.state_dict()) == ["scale", "features.0.weight", "features.0.bias", "head.weight",
                                      "head.bias"]  # a module's own state first, as torch
    assert net.training and not any(m.training for m in net.eval().modules())
    assert net.qualified_name == f"__torch__.{__name__}.Net"
    assert net.label == "net" and net.get("label") == "net"
    net.set("label", "renamed")  # as a graph's prim::SetAttr writes it
    assert net.label == "renamed" and net.get("head") is net.head
    assert repr(net) == ("Net(\n  (features): Sequential(\n    (0): Linear(in_features=4, out_features=8, "
                         "bias=True)\n    (1): ReLU()\n  )\n  (head): Linear(in_features=8, out_features=2, "
                         "bias=True)\n)")
    out = net(irjit.randn(3, 4))
    out.sum().backward()
    assert net.head.weight.grad.shape == (2, 8) and net.features[0].bias.grad.shape == (8,)
    seen = []
    assert net.apply(lambda m: seen.append(type(m).__name__)) is net
    assert seen == ["Linear", "ReLU", "Sequential", "Linear", "Net"]  # children first, as torch
    net.zero_grad()
    assert net.head.weight.grad is None
    with pytest.raises(TypeError, match="cannot assign 'int' as 'scale'"):
        net.scale = 3
    with pytest.raises(AttributeError, match="'Net' object has no attribute 'tail'"):
        net.tail  # noqa: B018


def test_batchnorm_training_updates_running_statistics_as_torch():
    bn = nn.BatchNorm2d(2)
    x = irjit.randn(4, 2, 3, 3)
    bn(x)
    mean = x.numpy().mean(axis=(0, 2, 3))
    var = x.numpy().var(axis=(0, 2, 3), ddof=1)
    np.testing.assert_allclose(bn.running_mean.numpy(), 0.1 * mean, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(bn.running_var.numpy(), 0.9 + 0.1 * var, rtol=1e-5)
    assert bn.num_batches_tracked.item() == 1
    bn.eval()
    before = bn.running_mean.numpy().copy()
    bn(x)
    np.testing.assert_array_equal(bn.running_mean.numpy(), before)


def test_dropout_in_training_zeroes_and_scales():
    irjit.manual_seed(0)
    d = nn.Dropout(0.25)
    y = d(irjit.ones(1000)).numpy()
    assert set(np.unique(y)) <= {0.0, np.float32(1 / 0.75)} and 150 < (y == 0).sum() < 350
    assert d.eval()(irjit.ones(3)).tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(1.5)


def test_functional_matches_modules():
    irjit.manual_seed(2)
    x = irjit.randn(2, 3, 6, 6)
    conv = nn.Conv2d(3, 4, 3)
    F = nn.functional
    np.testing.assert_array_equal(conv(x).numpy(), F.conv2d(x, conv.weight, conv.bias).numpy())
    np.testing.assert_array_equal(nn.MaxPool2d(2)(x).numpy(), F.max_pool2d(x, 2).numpy())
    lin = nn.Linear(6, 2)
    np.testing.assert_array_equal(lin(x).numpy(), F.linear(x, lin.weight, lin.bias).numpy())
    ln = nn.LayerNorm(6)
    np.testing.assert_array_equal(ln(x).numpy(), F.layer_norm(x, [6], ln.weight, ln.bias).numpy())
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        F.mse_loss(x, x, reduction="avg")


# ---- eager modules equal the interpreter running PyTorch's scripted graphs of the same models

class MyModule(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 32, 3)

    def forward(self, x):
        return irjit.relu(self.conv(x))


class MyCell(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 4)

    def forward(self, x, h):
        new_h = irjit.tanh(self.linear(x) + h)
        return new_h, new_h


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(8, 16), nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(nn.functional.relu(self.fc1(x)))


class LSTMCellManual(nn.Module):
    def __init__(self):
        super().__init__()
        self.ih, self.hh = nn.Linear(4, 20), nn.Linear(5, 20)

    def forward(self, x, h, c):
        i, f, g, o = (self.ih(x) + self.hh(h)).chunk(4, 1)
        c2 = f.sigmoid() * c + i.sigmoid() * g.tanh()
        return o.sigmoid() * c2.tanh(), c2


RUN = Path(__file__).resolve().parents[1] / "fixtures" / "run"


@pytest.mark.parametrize("case,model", [("conv_relu_script", MyModule), ("mycell_script", MyCell),
                                        ("mlp_script", MLP), ("lstm_cell_script", LSTMCellManual)])
def test_eager_module_equals_the_interpreter_on_its_scripted_graph(case, model):
    fn = irjit.load(str(RUN / case / "graph.ir"), params=str(RUN / case / "params.npz"))
    with np.load(RUN / case / "inputs.npz") as npz:
        inputs = [npz[f"arg{i}"] for i in range(len(npz.files))]
    want = fn(*inputs)
    want_grads = fn.backward()
    m = model()
    m.load_state_dict(str(RUN / case / "params.npz"))
    args = [irjit.tensor(a, requires_grad=True) for a in inputs]
    out = m(*args)
    outs = list(out) if isinstance(out, tuple) else [out]
    wants = list(want) if isinstance(want, tuple) else [want]
    sum(o.sum() for o in outs).backward()
    for o, w in zip(outs, wants):
        np.testing.assert_allclose(o.numpy(), w, rtol=1e-6, atol=1e-6)
    for i, a in enumerate(args):
        np.testing.assert_allclose(a.grad, want_grads[f"arg{i}"], rtol=1e-5, atol=1e-6)
    for name, p in m.named_parameters():
        np.testing.assert_allclose(p.grad, want_grads[name], rtol=1e-5, atol=1e-6, err_msg=name)
