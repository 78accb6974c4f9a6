"""String builtins (ops/strings.py), including TorchScript's printing of values and
the places where TorchScript's str methods differ from Python's."""

import math

import numpy as np
import pytest

import irjit.ops  # noqa: F401  (registers every op)
from irjit.runtime.autograd import run_op
from irjit.ops.strings import format_float
from irjit.ops.tensor import Tensor


@pytest.mark.parametrize("value,text", [
    (1.0, "1."), (0.1, "0.10000000000000001"), (1e20, "1e+20"), (1e-5, "1.0000000000000001e-05"),
    (1.5e16, "15000000000000000."), (-2.0, "-2."), (-0.0, "0."), (1.5, "1.5"),
    (math.inf, "inf"), (math.nan, "nan"), (3.14159265358979, "3.14159265358979"),
])
def test_float_printing(value, text):
    assert format_float(value) == text


def test_str_of_values():
    assert run_op("aten::str", [1, 2]) == "[1, 2]"
    assert run_op("aten::str", [1.0, 0.5]) == "[1., 0.5]"
    assert run_op("aten::str", ["a", "b"]) == "[a, b]"
    assert run_op("aten::str", {"a": 1}) == "{a: 1}"
    assert run_op("aten::str", (1, "a", 2.0)) == "(1, a, 2.)"
    assert run_op("aten::str", (1,)) == "(1,)"
    assert run_op("aten::str", None) == "None" and run_op("aten::str", True) == "True"
    assert run_op("aten::str", Tensor(np.array([1.0, 2.0], dtype=np.float32))) == " 1\n 2\n[ CPUFloatType{2} ]"


def test_format():
    assert run_op("aten::format", "{} {} {} {} {}", 1.0, 2, "c", [1, 2], False) == "1. 2 c [1, 2] False"
    assert run_op("aten::format", "{}+{}", "x", 1) == "x+1"
    assert run_op("aten::format", "a{{b}}{}", "x") == "a{{b}}x"  # no brace escapes
    assert run_op("aten::format", "{}", 1, 2) == "1"  # extra arguments are ignored
    with pytest.raises(RuntimeError, match="Too few arguments for format string: \\{\\}\\+\\{\\}"):
        run_op("aten::format", "{}+{}", "x")


def test_basic_methods():
    assert run_op("aten::add", "ab", "c") == "abc"
    assert run_op("aten::len", "abc") == 3
    assert run_op("aten::__getitem__", "abc", -1) == "c"
    with pytest.raises(IndexError):
        run_op("aten::__getitem__", "abc", 5)
    assert run_op("aten::slice", "abcdef", -1, 0, -2) == "fdb"
    assert run_op("aten::list", "ab") == ["a", "b"]
    assert run_op("aten::join", "-", ["a", "b"]) == "a-b"
    assert run_op("aten::lower", "AbC") == "abc" and run_op("aten::upper", "a") == "A"
    assert run_op("aten::title", "hello wORLD 1a_b") == "Hello World 1A_B"
    assert run_op("aten::capitalize", "1hELLO") == "1hello"
    assert run_op("aten::isdigit", "123") is True and run_op("aten::isdigit", "") is False
    assert run_op("aten::isalpha", "ab1") is False
    assert run_op("aten::ord", "a") == 97 and run_op("aten::chr", 97) == "a"
    with pytest.raises(ValueError, match="must be 1 character, found 2"):
        run_op("aten::ord", "ab")


def test_split_strip_replace():
    assert run_op("aten::split", " a  b ", None, -1) == ["a", "b"]
    assert run_op("aten::split", "a,b,,c", ",", 1) == ["a", "b,,c"]
    with pytest.raises(ValueError, match="empty separator"):
        run_op("aten::split", "abc", "", -1)
    assert run_op("aten::strip", " \t a \n") == "a"  # the schema default
    assert run_op("aten::strip", "xxaxyx", "xy") == "a"
    assert run_op("aten::rstrip", "a  ") == "a" and run_op("aten::lstrip", "  a") == "a"
    assert run_op("aten::replace", "aaaa", "a", "b", 2) == "bbaa"
    assert run_op("aten::partition", "k=v=w", "=") == ("k", "=", "v=w")


def test_search_uses_torchscript_end_convention():
    assert run_op("aten::find", "abcb", "b", 2, -1) == 3  # -1 means the end of the string
    assert run_op("aten::find", "abcb", "b", -2, 4) == 3
    assert run_op("aten::find", "abc", "z") == -1
    assert run_op("aten::rfind", "abcb", "b") == 3
    assert run_op("aten::count", "abcbb", "b", 0, -1) == 3
    assert run_op("aten::count", "aaaa", "aa") == 2
    assert run_op("aten::startswith", "abc", "b", 1, -1) is True
    assert run_op("aten::endswith", "abc", "b", 0, 2) is True
    with pytest.raises(ValueError, match="substring not found"):
        run_op("aten::index", "abc", "z")


def test_torchscript_quirks():
    assert run_op("aten::zfill", "-12", 6) == "000-12"
    assert run_op("aten::zfill", "12345", 3) == "12345"
    assert run_op("aten::splitlines", "a\nb\r\n\nc\n") == ["a", "b", "", "", "c"]
    assert run_op("aten::splitlines", "a\nb", True) == ["a", "\n", "b"]
    assert run_op("aten::splitlines", "") == []
