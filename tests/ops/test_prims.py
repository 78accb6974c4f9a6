"""The op layer's pure prim evaluators, on plain values (as constant folding calls them) and on
run-time Tensors (as the interpreter does)."""

from types import SimpleNamespace

import numpy as np
import pytest

from irjit.ops.prims import PURE_PRIMS, is_instance_of
from irjit.ops.tensor import Tensor
from irjit.ops.types import FLOAT, INT, Device, ListType, NamedType, TensorType


def node(kind, n_outputs=1, output_types=None, **attrs):
    types = output_types or [None] * n_outputs
    return SimpleNamespace(kind=kind, outputs=[SimpleNamespace(type=t) for t in types],
                           attr=lambda name: attrs[name])


def run(kind, args, **kw):
    return PURE_PRIMS[kind](node(kind, **kw), list(args))


def test_containers():
    assert run("prim::TupleConstruct", [1, 2]) == (1, 2)
    assert run("prim::ListConstruct", [1, 2]) == [1, 2]
    assert run("prim::ListUnpack", [[3, 4]], n_outputs=2) == [3, 4]
    assert run("prim::TupleUnpack", [(5,)]) == 5
    assert run("prim::TupleIndex", [(5, 6), 1]) == 6
    assert run("prim::TupleSlice", [(1, 2, 3, 4)], beg=1, end=3) == (2, 3)
    assert run("prim::DictConstruct", ["a", 1, "b", 2]) == {"a": 1, "b": 2}
    with pytest.raises(ValueError, match="expected 3 elements"):
        run("prim::ListUnpack", [[1, 2]], n_outputs=3)


def test_metadata_queries_read_arrays_and_tensors_alike():
    for x in (np.zeros((2, 3), np.float32), Tensor(np.zeros((2, 3), np.float32))):
        assert run("prim::dtype", [x]) == 6
        assert run("prim::shape", [x]) == [2, 3]
        assert run("prim::device", [x]) == Device("cpu") and isinstance(run("prim::device", [x]), Device)
        assert run("prim::is_cuda", [x]) is False
    assert run("prim::requires_grad", [Tensor(np.zeros(1), requires_grad=True)]) is True
    assert run("prim::requires_grad", [np.zeros(1)]) is False


def test_number_tensor_conversions():
    assert run("prim::NumToTensor", [3]).dtype == np.int64
    assert run("prim::NumToTensor", [True]).dtype == np.bool_
    assert run("prim::NumToTensor", [0.5]).dtype == np.float64
    assert run("prim::ImplicitTensorToNum", [np.array(2.0)], output_types=[INT]) == 2
    assert type(run("prim::ImplicitTensorToNum", [Tensor(np.array(2))], output_types=[FLOAT])) is float


def test_numbers_broadcasts_and_chunks():
    assert run("prim::max", [3, 7]) == 7 and run("prim::min", [[4, 2, 9]]) == 2
    assert run("prim::abs", [-3]) == 3
    assert run("prim::BroadcastSizes", [[2, 1], [1, 3]]) == [2, 3]
    a, b = run("prim::ConstantChunk", [np.arange(4.0)], n_outputs=2, chunks=2, dim=0)
    assert a.tolist() == [0.0, 1.0] and b.tolist() == [2.0, 3.0]
    assert run("prim::AutogradAnyNonZero", [None, 1]) is True
    assert run("prim::AutogradAllZero", [None, None]) is True


def test_isinstance_of_value_types():
    assert is_instance_of(3, [INT]) and not is_instance_of(True, [INT])
    assert is_instance_of(np.zeros(1), [TensorType()])
    assert is_instance_of([1], [ListType(INT)])
    assert is_instance_of(None, [NamedType("NoneType")]) and not is_instance_of(1.0, [INT])


def test_interpreter_prims_are_not_pure():
    for kind in ("prim::If", "prim::Loop", "prim::CallFunction", "prim::GetAttr", "prim::profile",
                 "prim::BailOut", "prim::RaiseException", "prim::Print", "prim::AutogradAdd"):
        assert kind not in PURE_PRIMS
