"""irjit.jit.CompilationUnit: functions compiled from a source string, calling each other."""

from __future__ import annotations

import numpy as np
import pytest

import irjit.jit
from irjit.jit import ScriptError

SOURCE = '''
def double(x: Tensor) -> Tensor:
    return x * 2

def gate(x: Tensor, n: int) -> Tensor:
    for i in range(n):
        if x.sum() > 0:
            return double(x)
        x = x + 1
    return -x
'''


def test_functions_compile_call_each_other_and_run():
    cu = irjit.jit.CompilationUnit(SOURCE)
    assert dir(cu) == ["double", "gate"]
    kinds = [n.kind for n in cu.gate.graph.walk()]
    assert "prim::CallFunction" in kinds and "prim::Loop" in kinds
    x = np.full((2, 2), -1.5)
    np.testing.assert_allclose(cu.gate(x, 3).data, 1.0)   # two steps to 0.5, then doubled
    np.testing.assert_allclose(cu.gate(x, 1).data, 0.5)   # never positive: -(x + 1)
    assert "__torch__.double(x0, )" in cu.gate.code


def test_errors_name_the_string_line_and_column():
    with pytest.raises(ScriptError, match=r"^<string>:3:11: error: undefined value y"):
        irjit.jit.CompilationUnit("\ndef f(x):\n    return y\n")
    with pytest.raises(ScriptError, match=r"^<string>:1:0: error: a compilation unit holds"):
        irjit.jit.CompilationUnit("x = 1\n")
    with pytest.raises(AttributeError, match="no function 'h'"):
        irjit.jit.CompilationUnit(SOURCE).h
