"""List and dict builtins (ops/containers*.py): in-place mutation, identity of Tensor
elements, TorchScript's error cases, and the schema rewriting the registry needs today."""

import numpy as np
import pytest

import irjit.ops  # noqa: F401  (registers every op)
from irjit.runtime.autograd import run_op
from irjit.ops.containers import ORIGINAL_SCHEMAS, schema_compat
from irjit.ops.registry import parse_schema
from irjit.ops.tensor import Tensor


def test_schema_compat_rewrites_only_what_the_registry_needs():
    text = "aten::append.t(t[](a!) self, t(c -> *) el) -> t[](a!)"
    assert schema_compat(text) == text  # alias annotations stay: the passes read mutation from them
    s = parse_schema(schema_compat("aten::remove.Tensor(Tensor[](a!) self, Tensor el) -> ()"))
    assert [(a.type, a.alias) for a in s.arguments] == [("t[]", "a!"), ("Tensor", None)]
    assert [r.type for r in s.returns] == ["NoneType"]
    assert schema_compat("aten::format(str self, ...) -> str") == "aten::format(...) -> str"
    s = parse_schema(schema_compat("aten::get.Tensor(Dict(Tensor, t) self, Tensor key) -> t(*)?"))
    assert s.arguments[1].type == "t"
    assert ORIGINAL_SCHEMAS["aten::clear.t(t[](a!) self) -> NoneType"] == "aten::clear.t(t[](a!) self) -> ()"


def test_len_and_getitem():
    assert run_op("aten::len", [1, 2, 3]) == 3
    assert run_op("aten::len", Tensor(np.zeros((4, 2)))) == 4
    with pytest.raises(RuntimeError, match="len\\(\\) of a 0-d tensor"):
        run_op("aten::len", Tensor(np.zeros(())))
    assert run_op("aten::__getitem__", [1, 2, 3], -1) == 3
    with pytest.raises(IndexError, match="list index out of range"):
        run_op("aten::__getitem__", [1, 2, 3], 3)


def test_mutation_is_in_place():
    l = [1, 2]
    assert run_op("aten::append", l, 3) is l and l == [1, 2, 3]
    assert run_op("aten::extend", l, [4]) is None and l == [1, 2, 3, 4]
    run_op("aten::insert", l, -1, 9)
    run_op("aten::insert", l, 100, 8)
    run_op("aten::insert", l, -100, 7)
    assert l == [7, 1, 2, 3, 9, 4, 8]
    assert run_op("aten::pop", l) == 8 and run_op("aten::pop", l, 0) == 7
    run_op("aten::remove", l, 9)
    assert l == [1, 2, 3, 4]
    assert run_op("aten::_set_item", l, -1, 0) is l and l == [1, 2, 3, 0]
    run_op("aten::reverse", l)
    assert l == [0, 3, 2, 1]
    run_op("aten::sort", l, True)
    assert l == [3, 2, 1, 0]
    run_op("aten::clear", l)
    assert l == []
    with pytest.raises(IndexError):
        run_op("aten::pop", [1], 10)
    with pytest.raises(ValueError, match="x not in list"):
        run_op("aten::remove", [1], 7)
    with pytest.raises(IndexError):
        run_op("aten::_set_item", [1], 5, 1)


def test_tensor_elements_keep_identity():
    a, b, c = (Tensor(np.array(v)) for v in (3.0, 1.0, 2.0))
    l = [a, b, c]
    assert run_op("aten::__getitem__", l, 0) is a
    s = run_op("aten::sorted", l)
    assert s[0] is b and s[1] is c and s[2] is a and l[0] is a
    run_op("aten::sort", l)
    assert l == [b, c, a]
    run_op("aten::remove", l, c)
    assert l == [b, a]
    assert run_op("aten::index", l, a) == 1
    assert run_op("aten::count", [a, a, b], a) == 2
    assert run_op("aten::list", l)[0] is b


def test_new_lists():
    assert run_op("aten::add", [1], [2, 3]) == [1, 2, 3]
    assert run_op("aten::mul", [1, 2], 2) == [1, 2, 1, 2] and run_op("aten::mul", 2, [0]) == [0, 0]
    assert run_op("aten::mul", [1], -1) == []
    assert run_op("aten::slice", [1, 2, 3, 4], -3, 100, 1) == [2, 3, 4]
    assert run_op("aten::slice", [1, 2, 3, 4, 5], 4, -100, -1) == [5, 4, 3, 2, 1]
    assert run_op("aten::slice", [1, 2, 3], None, None, 2) == [1, 3]
    with pytest.raises(ValueError, match="non-zero step"):
        run_op("aten::slice", [1, 2], 0, 2, 0)
    l = [1]
    assert run_op("aten::copy", l) == l and run_op("aten::copy", l) is not l


def test_search():
    assert run_op("aten::__contains__", [1, 2], 2) is True
    assert run_op("aten::__contains__", ["a"], "b") is False
    assert run_op("aten::count", [1.0, 2.0, 1.0], 1.0) == 2
    assert run_op("aten::index", ["a", "b"], "b") == 1
    with pytest.raises(ValueError, match="'7' is not in list"):
        run_op("aten::index", [1], 7)


def test_range_helpers():
    assert run_op("aten::__range_length", 3, -4, -2) == 4
    assert run_op("aten::__range_length", 0, 10, 3) == 4
    assert run_op("aten::__range_length", 5, 0, 1) == 0
    with pytest.raises(ValueError):
        run_op("aten::__range_length", 0, 1, 0)
    assert run_op("aten::__derive_index", 2, 10, -3) == 4


def test_warn_prints_once(capsys):
    run_op("aten::warn", "careful-xyz", 2)
    run_op("aten::warn", "careful-xyz", 2)
    assert capsys.readouterr().err.count("careful-xyz") == 1


# ---- dicts


def test_dict_basics():
    d = {}
    assert run_op("aten::_set_item", d, "a", 1) is None
    run_op("aten::_set_item", d, "b", 2)
    assert run_op("aten::len", d) == 2 and run_op("aten::__getitem__", d, "b") == 2
    assert run_op("aten::keys", d) == ["a", "b"] and run_op("aten::values", d) == [1, 2]
    assert run_op("aten::items", d) == [("a", 1), ("b", 2)]
    assert run_op("aten::__contains__", d, "a") is True
    assert run_op("aten::get", d, "z") is None and run_op("aten::get", d, "z", 5) == 5
    with pytest.raises(RuntimeError, match="KeyError: zz"):
        run_op("aten::__getitem__", d, "zz")


def test_dict_mutation():
    d = {"a": 1, "b": 2}
    assert run_op("aten::setdefault", d, "c", 3) == 3 and run_op("aten::setdefault", d, "a", 9) == 1
    assert run_op("aten::pop", d, "c") == 3 and run_op("aten::pop", d, "c", 0) == 0
    with pytest.raises(RuntimeError, match="KeyError"):
        run_op("aten::pop", d, "c")
    assert run_op("aten::popitem", d) == ("a", 1) and d == {"b": 2}  # first item, like TorchScript
    run_op("aten::update", d, {"x": 5})
    assert d == {"b": 2, "x": 5}
    c = run_op("aten::copy", d)
    assert c == d and c is not d
    run_op("aten::clear", d)
    assert d == {}
    with pytest.raises(RuntimeError, match="dictionary is empty"):
        run_op("aten::popitem", d)


def test_dict_keys_of_other_types():
    d = {}
    run_op("aten::_set_item", d, 1, "one")
    assert run_op("aten::__getitem__", d, 1) == "one"
    t1, t2 = Tensor(np.zeros(1)), Tensor(np.zeros(1))
    run_op("aten::_set_item", d, t1, "t")
    assert run_op("aten::__getitem__", d, t1) == "t"
    assert run_op("aten::__contains__", d, t2) is False  # tensors hash by identity
    assert run_op("aten::keys", d)[1] is t1


def test_dict_constructors():
    assert run_op("aten::dict") == {}
    assert run_op("aten::dict", [("a", 1), ("b", 2)]) == {"a": 1, "b": 2}
    src = {"a": 1}
    out = run_op("aten::dict", src)
    assert out == src and out is not src
