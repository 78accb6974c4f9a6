"""Eager tensors: operators, methods and torch-namespace functions bound to the registry's
schemas give PyTorch's values and gradients (fixtures from tools/fixturegen/eager_cases.py),
the same as the interpreter running the same ops, and clear errors for calls no schema takes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import irjit
from irjit.eager_binding import ArgumentError
from irjit.nn import functional as F  # noqa: N812

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "eager"
EXPRS = json.loads((FIXTURES / "exprs.json").read_text())


@pytest.fixture(scope="module")
def expr_arrays():
    with np.load(FIXTURES / "exprs.npz") as npz:
        return {k: npz[k] for k in npz.files}


@pytest.mark.parametrize("k", range(len(EXPRS)), ids=[e["expr"] for e in EXPRS])
def test_expression_matches_pytorch(k, expr_arrays):
    case = EXPRS[k]
    x = irjit.tensor(expr_arrays["x"], requires_grad=True)
    y = irjit.tensor(expr_arrays["y"], requires_grad=True)
    env = {"t": irjit, "F": F, "x": x, "y": y, "m": irjit.tensor(expr_arrays["m"]),
           "i": irjit.tensor(expr_arrays["i"])}
    out = eval(case["expr"], env)  # noqa: S307 - the fixture's expression table
    want = expr_arrays[f"{k}.out"]
    assert isinstance(out, irjit.Tensor)
    assert out.dtype == np.dtype(case["dtype"]), case["expr"]
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-5)
    if case["grad"]:
        (out * irjit.tensor(expr_arrays[f"{k}.cot"])).sum().backward()
        for name, v in (("x", x), ("y", y)):
            got = np.zeros_like(v.numpy()) if v.grad is None else v.grad
            np.testing.assert_allclose(got, expr_arrays[f"{k}.grad.{name}"], rtol=1e-4, atol=1e-5,
                                       err_msg=f"d/d{name} of {case['expr']}")


# (IR body on %x, %y : Tensor, eager expression) pairs: the same op run both ways
AGAINST_INTERPRETER = [
    ("%r : Tensor = aten::tanh(%x)", lambda x, y: irjit.tanh(x)),
    ("%one : int = prim::Constant[value=1]()\n  %r : Tensor = aten::add(%x, %y, %one)",
     lambda x, y: x + y),
    ("%r : Tensor = aten::matmul(%x, %y)", lambda x, y: x @ y),
    ("%d : int = prim::Constant[value=1]()\n  %n : NoneType = prim::Constant()\n"
     "  %r : Tensor = aten::softmax(%x, %d, %n)", lambda x, y: x.softmax(1)),
    ("%d : int[] = prim::Constant[value=[1]]()\n  %k : bool = prim::Constant[value=0]()\n"
     "  %n : NoneType = prim::Constant()\n  %r : Tensor = aten::sum(%x, %d, %k, %n)",
     lambda x, y: x.sum(1)),
    ("%r : Tensor = aten::mul(%x, %y)\n  %s : Tensor = aten::sigmoid(%r)",
     lambda x, y: irjit.sigmoid(x * y)),
]


@pytest.mark.parametrize("body,fn", AGAINST_INTERPRETER, ids=[b.split("aten::")[-1].split("(")[0]
                                                              for b, _ in AGAINST_INTERPRETER])
def test_eager_equals_the_interpreter(body, fn):
    rng = np.random.default_rng(1)
    xa = rng.standard_normal((3, 3)).astype(np.float32)
    ya = rng.standard_normal((3, 3)).astype(np.float32)
    result = body.splitlines()[-1].split()[0][1:]
    text = f"graph(%x : Tensor, %y : Tensor):\n  {body}\n  return (%{result})\n"
    graph_fn = irjit.load(text)
    want = graph_fn(xa, ya)
    want_grads = irjit.grad(graph_fn, [xa, ya])
    x, y = irjit.tensor(xa, requires_grad=True), irjit.tensor(ya, requires_grad=True)
    out = fn(x, y)
    np.testing.assert_array_equal(out.numpy(), want)
    out.backward(irjit.ones_like(out))
    for name, got in (("arg0", x.grad), ("arg1", y.grad)):
        expect = want_grads.get(name)
        if got is None or expect is None:  # an input the result does not use
            assert not np.any(got) and not np.any(expect)
        else:
            np.testing.assert_allclose(got, expect, rtol=1e-6)


def test_factories_dtypes_and_requires_grad():
    assert irjit.zeros(2, 3).shape == (2, 3) and irjit.zeros(2, 3).dtype == irjit.float32
    assert irjit.ones((2, 3), dtype=irjit.float64).dtype == np.float64
    assert irjit.arange(5).dtype == irjit.int64 and irjit.arange(5).tolist() == [0, 1, 2, 3, 4]
    assert irjit.full((2,), 7.0).tolist() == [7.0, 7.0]
    assert irjit.empty(4, 1).shape == (4, 1)
    assert irjit.tensor([[1, 2]]).dtype == irjit.int64 and irjit.tensor([1.5]).dtype == irjit.float32
    assert irjit.tensor(True).dtype == irjit.bool
    r = irjit.randn(3, 4, requires_grad=True)
    assert r.requires_grad and r.is_leaf and r.shape == (3, 4)
    irjit.manual_seed(3)
    a = irjit.rand(5)
    irjit.manual_seed(3)
    assert a.tolist() == irjit.rand(5).tolist() and 0 <= a.min().item() and a.max().item() < 1
    assert irjit.zeros_like(r).shape == r.shape and not irjit.zeros_like(r).requires_grad
    assert irjit.full_like(r, 2.0).sum().item() == 24.0
    with pytest.raises(RuntimeError, match="floating point"):
        irjit.tensor([1, 2], requires_grad=True)
    with pytest.raises(ValueError, match="CPU"):
        irjit.tensor([1.0], device="cuda")


def test_tensor_basics_as_torch():
    x = irjit.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert x.size() == (2, 3) and x.size(1) == 3 and x.dim() == 2 and x.ndim == 2
    assert len(x) == 2 and [r.tolist() for r in x] == [[1, 2, 3], [4, 5, 6]]
    assert x[1, 2].item() == 6.0 and float(x[0, 0]) == 1.0 and int(x[1, 0]) == 4
    assert bool(x[0, 0] > 0) and x.numpy().dtype == np.float32
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(x > 0)
    with pytest.raises(IndexError, match="too many indices"):
        x[0, 0, 0]
    assert x.detach().requires_grad is False
    w = irjit.tensor([1.0, 2.0]).requires_grad_()
    assert w.requires_grad and w.grad is None
    assert {x: 1}[x] == 1  # hashable by identity, as torch


def test_numbers_on_the_left_keep_torch_dtypes():
    i = irjit.tensor([1, 2, 4])
    assert (7 // i).tolist() == [7, 3, 1] and (7 // i).dtype == irjit.int64
    assert (7 % i).tolist() == [0, 1, 3] and (2 ** i).dtype == irjit.int64
    assert (1 / i).dtype == irjit.float32 and (0.5 * i).dtype == irjit.float32
    assert (1.5 - irjit.ones(2, dtype=irjit.float64)).dtype == irjit.float64
    assert 4 in i and 3 not in i


def test_setitem_writes_in_place_and_differentiates():
    x = irjit.zeros(3, 4)
    x[0] = 1.0
    x[:, 1] = irjit.tensor([5.0, 6.0, 7.0])
    x[x > 5.5] = -1.0
    x[irjit.tensor([2]), 3] = 9.0
    assert x.tolist() == [[1, 5, 1, 1], [0, -1, 0, 0], [0, -1, 0, 9]]
    w = irjit.ones(3, requires_grad=True)
    h = w * 2
    h[1] = 0.0
    (h * irjit.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert w.grad.tolist() == [2.0, 0.0, 6.0]


def test_backward_rules_as_torch():
    x = irjit.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="only for scalar outputs"):
        (x * 2).backward()
    with pytest.raises(RuntimeError, match="does not require grad"):
        irjit.ones(2).sum().backward()
    (x * 3).sum().backward()
    (x * 3).sum().backward()
    assert x.grad.tolist() == [6.0, 6.0]  # accumulates
    with irjit.no_grad():
        assert not (x * 2).requires_grad

    @irjit.no_grad()
    def doubled(t):
        return t * 2
    assert not doubled(x).requires_grad and (x * 2).requires_grad


def test_every_registry_op_with_a_tensor_self_is_a_method():
    from irjit.ops.registry import all_entries
    for e in all_entries():
        s = e.schema
        if s.name.startswith("aten::") and not s.name.startswith("aten::__") and s.arguments \
                and s.arguments[0].name == "self" and s.arguments[0].type == "Tensor":
            attr = getattr(irjit.Tensor, s.name[6:])
            assert callable(attr) or isinstance(attr, property), s.name
            assert callable(getattr(irjit, s.name[6:])), s.name


def test_keyword_arguments_defaults_and_int_list_varargs():
    x = irjit.arange(12).view(3, 4).float()
    assert x.sum(dim=1, keepdim=True).shape == (3, 1)
    assert irjit.sum(input=x, dim=0).shape == (4,)
    assert x.permute(1, 0).shape == (4, 3) and x.reshape(2, -1).shape == (2, 6)
    assert x.flatten().shape == (12,) and irjit.cat([x, x], dim=1).shape == (3, 8)
    assert x.sum(1, dtype=irjit.float64).dtype == np.float64
    assert x.transpose(dim0=0, dim1=1).shape == (4, 3)


def test_a_call_no_schema_accepts_names_the_op_and_its_schemas():
    x = irjit.ones(2, 2)
    with pytest.raises(ArgumentError) as e:
        irjit.add(x, "a")
    assert "add() received an invalid combination of arguments (Tensor, str)" in str(e.value)
    assert "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor" in str(e.value)
    with pytest.raises(TypeError, match=r"(?s)Tensor.view\(\).*\(float\).*aten::view\(Tensor\(a\) self, SymInt\[\] size\)"):
        x.view(2.5)
    with pytest.raises(TypeError, match=r"transpose\(\).*\(int\)"):  # missing an argument
        x.transpose(0)
    with pytest.raises(TypeError, match=r"softmax\(\).*dimm=int"):  # unknown keyword
        x.softmax(dimm=1)
    with pytest.raises(AttributeError, match="no attribute 'tanhh'"):
        irjit.tanhh  # noqa: B018


def test_graph_outputs_are_eager_tensors():
    ex = irjit.GraphExecutor(irjit.parse_ir("graph(%x : Tensor):\n  %r : Tensor = aten::relu(%x)\n"
                                            "  return (%r)\n"))
    (r,) = ex.run(np.array([-1.0, 3.0], np.float32))
    assert isinstance(r, irjit.Tensor) and (r + 1).tolist() == [1.0, 4.0]
