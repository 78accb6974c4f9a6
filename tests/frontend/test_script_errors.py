"""Python that irjit.jit.script cannot compile is a ScriptError naming the user's file, line
and column (the line is found here by the marker comment at its end)."""

from __future__ import annotations

from pathlib import Path

import pytest

import irjit as torch
import irjit.jit
from irjit.jit import ScriptError

THIS = Path(__file__).resolve()


def undefined_name(x):
    return x + y  # noqa: F821  MARK:undefined_name


def bad_op_arguments(x):
    return torch.tanh(x, "no")  # MARK:bad_op_arguments


def unknown_op(x):
    return torch.not_an_op(x)  # MARK:unknown_op


def unsupported_statement(x):
    with open("f"):  # MARK:unsupported_statement
        pass
    return x


def wrong_return_type(x) -> int:  # MARK:wrong_return_type
    return x


def unscriptable_call(x):
    return sorted_by_python(x)  # MARK:unscriptable_call


sorted_by_python = object()


def lambda_expression(x):
    f = lambda v: v  # noqa: E731  MARK:lambda_expression
    return x


def bad_annotation(x: set):  # MARK:bad_annotation
    return x


def loop_changes_type(x, n: int):
    k = 0
    for i in range(n):  # MARK:loop_changes_type
        k = 0.5
    return x


def _line_of(mark: str) -> tuple[int, str]:
    for i, line in enumerate(THIS.read_text().splitlines(), 1):
        if line.endswith(f"MARK:{mark}"):
            return i, line
    raise AssertionError(mark)


CASES = [
    (undefined_name, "undefined value y", "y"),
    (bad_op_arguments, "no overload of aten::tanh accepts (Tensor, str)", "torch.tanh"),
    (unknown_op, "unknown builtin op: aten::not_an_op", "torch.not_an_op"),
    (unsupported_statement, "with statements are not supported", "with"),
    (wrong_return_type, "is annotated to return int", "def"),
    (unscriptable_call, "cannot call 'sorted_by_python'", "sorted_by_python"),
    (lambda_expression, "Lambda expressions are not supported", "lambda"),
    (bad_annotation, "unknown type annotation: 'set'", "set"),
    (loop_changes_type, "changes type from int to float", "for"),
]


@pytest.mark.parametrize("fn,message,at", CASES, ids=[c[0].__name__ for c in CASES])
def test_errors_point_at_the_users_file_line_and_column(fn, message, at):
    with pytest.raises(ScriptError) as info:
        irjit.jit.script(fn)
    line, text = _line_of(fn.__name__)
    col = text.index(at)
    assert message in str(info.value)
    assert str(info.value).startswith(f"{THIS}:{line}:{col}: error: ")


def test_non_functions_are_a_type_error():
    with pytest.raises(TypeError, match="expects a Python function"):
        irjit.jit.script(42)
