"""Scripted control flow runs as Python does: each function here uses only operators, so
calling it directly on numpy arrays is the reference for the scripted graph's result."""

from __future__ import annotations

from typing import Dict, List, Optional

import numpy as np
import pytest

import irjit
import irjit.jit


def early_return_in_loop(x, n: int):
    for i in range(n):
        if i == 2:
            return x * 10
        x = x + 1
    return x - 1


def early_return_in_nested_loops(x, n: int):
    for i in range(n):
        for j in range(n):
            if i * n + j == 5:
                return x * float(j)
            x = x + 1
    return x


def break_and_continue(x, n: int):
    for i in range(n):
        if i % 3 == 0:
            continue
        if i > 7:
            break
        x = x * 2
    return x


def nested_if_in_while(x, n: int):
    i = 0
    total = 0
    while i < n:
        if i % 2 == 0:
            if i % 4 == 0:
                total += 3
            else:
                total -= 1
        else:
            x = x + float(total)
        i += 1
    return x + total


def while_with_break(x, n: int):
    i = 0
    while i < 100:
        if i >= n:
            break
        x = x + 1
        i += 1
    return x


def early_return_from_if(x, flag: bool):
    if flag:
        y = x + 1
        if y.sum() > 0:
            return y
    else:
        y = x - 1
    return y * 3


def loop_over_list(xs: List[float], scale: float):
    total = 0.0
    for v in xs:
        if v < 0:
            continue
        total = total + v * scale
    return total


def optional_default(x, bias: Optional[float] = None):
    if bias is not None:
        x = x + bias
    return x * 2


def ternary_and_boolean_ops(x, a: int, b: int):
    k = 1 if a > 0 and b > 0 else 2
    if a < 0 or not b > 0:
        k = k + 10
    return x * k


def while_true_with_break(x):
    while True:
        x = x * 2
        if (x * x).sum() > 100:
            break
    return x


def checked_scale(x, n: int):
    assert n >= 0, "n must not be negative"
    if n > 10:
        raise ValueError("n is too large")
    return x * n


def squares_by_position(xs: List[float], ys: List[float]) -> float:
    squares = [v * v for v in xs]
    total = 0.0
    for i, s in enumerate(squares):
        total = total + s * i
    for a, b in zip(xs, ys):
        total = total - a * b
    return total


def ranges_and_dicts(x, lo: int, hi: int, d: Dict[str, float]):
    for i in range(lo, hi):
        x = x + i
    for j in range(hi, lo, -2):
        x = x * 0.5 + j
    for k in d:
        x = x + d[k]
    print("x is", x, lo)
    return x


CASES = [
    (early_return_in_loop, [(0,), (2,), (5,)]),
    (early_return_in_nested_loops, [(1,), (3,), (4,)]),
    (break_and_continue, [(0,), (5,), (12,)]),
    (nested_if_in_while, [(0,), (3,), (9,)]),
    (while_with_break, [(0,), (7,)]),
    (early_return_from_if, [(True,), (False,)]),
    (optional_default, [(), (1.5,)]),
    (ternary_and_boolean_ops, [(1, 1), (-1, 1), (1, 0), (1, -3)]),
    (while_true_with_break, [()]),
    (checked_scale, [(0,), (3,)]),
    (ranges_and_dicts, [(0, 4, {"a": 1.5}), (2, 9, {}), (5, 1, {"a": 1.0, "b": -2.0})]),
]


@pytest.mark.parametrize("fn,arg_sets", CASES,
                         ids=[(c.values[0] if hasattr(c, "values") else c[0]).__name__ for c in CASES])
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_scripted_control_flow_matches_python(fn, arg_sets, sign):
    scripted = irjit.jit.script(fn)
    x = sign * np.arange(1.0, 7.0).reshape(2, 3)
    for args in arg_sets:
        want = fn(x.copy(), *args)
        for _ in range(3):  # profiled, then specialized runs
            got = scripted(x.copy(), *args)
            np.testing.assert_allclose(np.asarray(got.data), want, err_msg=f"{fn.__name__}{args}")


@pytest.mark.parametrize("xs", [[1.0, -2.0, 3.0], [], [-1.0]])
def test_loop_over_a_list_of_floats(xs):
    scripted = irjit.jit.script(loop_over_list)
    assert scripted(xs, 2.0) == loop_over_list(xs, 2.0)


def test_early_return_in_a_loop_carries_a_did_return_flag():
    kinds = [n.kind for n in irjit.jit.script(early_return_in_loop).graph.walk()]
    assert kinds.count("prim::Loop") == 1 and kinds.count("prim::Uninitialized") == 1
    assert kinds[-1] == "aten::sub"  # the code after the loop runs only when it did not return


@pytest.mark.parametrize("xs,ys", [([1.0, -2.0, 3.0], [0.5, 2.0]), ([], [1.0]), ([2.0], [])])
def test_comprehensions_enumerate_and_zip(xs, ys):
    assert irjit.jit.script(squares_by_position)(xs, ys) == squares_by_position(xs, ys)


@pytest.mark.parametrize("n,message", [(-1, "AssertionError: n must not be negative"),
                                       (11, "builtins.ValueError: n is too large")])
def test_failed_asserts_and_raises_are_runtime_errors(n, message):
    with pytest.raises(irjit.IRRuntimeError, match=message):
        irjit.jit.script(checked_scale)(np.ones(2), n)


def test_dtypes_are_scalar_type_constants():
    from irjit.jit.emitter import dtype_code
    assert [dtype_code(n) for n in ("float32", "float", "double", "int64", "bool", "e", "tanh")] \
        == [6, 6, 7, 4, 11, None, None]
    cu = irjit.jit.CompilationUnit("def f(x):\n    return x.to(torch.float64) + x.to(dtype=torch.int64)\n")
    out = cu.f(np.full(3, 1.5, np.float32))
    assert out.dtype == np.float64
    np.testing.assert_allclose(out.data, [2.5, 2.5, 2.5])
