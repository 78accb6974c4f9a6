"""use_variadic_cat / use_variadic_stack / add_if_then_else, which torch 2.13 has no Python
binding for (their goldens follow PyTorch's own C++ tests, test_concat_opt.cpp and
test_add_if_then_else.cpp): as those tests do, the rewritten graph computes what the original
did, here through the interpreter, and the variadic nodes it makes run."""

from __future__ import annotations

import numpy as np
import pytest

from irjit import parse_ir
from irjit.ops.tensor import Tensor
from irjit.runtime.interpreter import Interpreter

from .test_golden import GOLDEN, load, run_golden

FILES = sorted(p for d in ("use_variadic_cat", "use_variadic_stack", "add_if_then_else")
               for p in (GOLDEN / d).glob("*.ir"))


def _inputs(graph, rng):
    out = []
    for v in graph.inputs:
        t = str(v.type)
        if t == "bool":
            out.append(True)
        elif t == "int":
            out.append(3)
        else:
            sizes = v.type.complete_sizes() if hasattr(v.type, "complete_sizes") else None
            shape = tuple(s // 8 for s in sizes) if sizes else (2, 3)
            out.append(Tensor(rng.standard_normal(shape).astype(np.float32)))
    return out


def _arrays(values):
    out = []
    for v in values:
        out.extend(_arrays(v) if isinstance(v, (list, tuple)) else [v.data if isinstance(v, Tensor) else v])
    return out


@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}/{p.name}" for p in FILES])
def test_the_rewritten_graph_computes_what_the_original_did(path):
    _, _, text = load(path)
    before = parse_ir(text)
    # shapes along dim 0 shrink by 8 in the inputs (the cat tests' 64/32 become 8/4)
    for v in before.inputs:
        if hasattr(v.type, "complete_sizes") and v.type.complete_sizes():
            v.type = v.type.with_(sizes=tuple(s // 8 for s in v.type.complete_sizes()), strides=None)
    after = parse_ir(run_golden(path))
    for v, w in zip(after.inputs, before.inputs):
        v.type = w.type
    rng = np.random.default_rng(0)
    args = _inputs(before, rng)
    want = _arrays(Interpreter(before).run(list(args)))
    got = _arrays(Interpreter(after).run(list(args)))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_the_variadic_nodes_are_made_and_an_if_with_a_node_in_a_block_stays():
    kinds = {p.name: run_golden(p) for p in FILES}
    assert "prim::VarConcat" in kinds["replace_one.ir"]
    assert "prim::VarStack" in kinds["replace_and_keep.ir"]
    assert kinds["simple.ir"].count("prim::IfThenElse") == 1
