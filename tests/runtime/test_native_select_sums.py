"""stack_select_sums (runtime/native_select_sums.py): a sum of select_backwards filling every
index of a dim becomes one stack; anything else stays."""

from __future__ import annotations

import numpy as np

from irjit.compiler import parse_ir
from irjit.ops.tensor import Tensor
from irjit.runtime.interpreter import Interpreter
from irjit.runtime.native_select_sums import stack_select_sums


def _sum_of_selects(indices, dim=0, sizes="[3, 2, 4]", alpha=1, kind="aten::add"):
    grads = ", ".join(f"%g{i} : Float(2, 4)" for i in range(len(indices)))
    lines = [f"graph({grads}):",
             f"  %sizes : int[] = prim::Constant[value={sizes}]()",
             f"  %dim : int = prim::Constant[value={dim}]()",
             f"  %alpha : int = prim::Constant[value={alpha}]()"]
    for i, index in enumerate(indices):
        lines.append(f"  %k{i} : int = prim::Constant[value={index}]()")
        lines.append(f"  %s{i} : Float(3, 2, 4) = aten::select_backward(%g{i}, %sizes, %dim, %k{i})")
    acc = "%s0"
    for i in range(1, len(indices)):
        args = f"{acc}, %s{i}, %alpha" if kind == "aten::add" else f"{acc}, %s{i}"
        lines.append(f"  %a{i} : Float(3, 2, 4) = {kind}({args})")
        acc = f"%a{i}"
    lines.append(f"  return ({acc})")
    return "\n".join(lines)


def _grads(n):
    rng = np.random.default_rng(0)
    return [Tensor(rng.standard_normal((2, 4)).astype(np.float32)) for _ in range(n)]


def test_a_sum_filling_every_index_becomes_a_stack_in_index_order():
    for kind in ("aten::add", "prim::AutogradAdd"):
        text = _sum_of_selects([2, 0, 1], kind=kind)
        g = parse_ir(text)
        assert stack_select_sums(g)
        g.lint()
        kinds = [n.kind for n in g.nodes() if n.kind != "prim::Constant" and n.output.uses]
        assert kinds == ["prim::ListConstruct", "aten::stack"]
        grads = _grads(3)
        want = Interpreter(parse_ir(text)).run(grads)[0].data
        got = Interpreter(g).run(grads)[0].data
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(got[2], grads[0].data)


def test_sums_that_do_not_fill_the_dim_or_repeat_an_index_or_scale_stay():
    for text in (_sum_of_selects([0, 1]),              # index 2 missing
                 _sum_of_selects([0, 1, 1]),           # index 1 twice, 2 missing
                 _sum_of_selects([0, 1, 2], alpha=2),  # not a plain sum
                 _sum_of_selects([0, 1, 2], dim=1, sizes="[2, 3, 4]")):  # shapes do not match
        g = parse_ir(text)
        assert not stack_select_sums(g)
        assert str(g) == str(parse_ir(text))
