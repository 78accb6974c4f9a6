"""Enum members as run-time values: comparison, name, and value from the enum table of what is
running (`enum_values`)."""

from __future__ import annotations

import pytest

from irjit.ops.enums import EnumMember, enum_values
from irjit.ops.errors import IRRuntimeError
from irjit.runtime.autograd import run_op

RED, GREEN = EnumMember("__torch__.Color", "RED"), EnumMember("__torch__.Color", "GREEN")


def test_compare_and_name():
    assert run_op("aten::eq", RED, EnumMember("__torch__.Color", "RED")) is True
    assert run_op("aten::ne", RED, GREEN) is True
    assert run_op("prim::EnumName", GREEN) == "GREEN"


def test_value_needs_the_enum_in_the_active_table():
    with pytest.raises(IRRuntimeError, match=r"value of __torch__\.Color\.RED is not printed"):
        run_op("prim::EnumValue", RED)
    with enum_values({"__torch__.Color": {"RED": 1, "GREEN": "g"}}):
        assert run_op("prim::EnumValue", RED) == 1 and run_op("prim::EnumValue", GREEN) == "g"
        with enum_values({"__torch__.Color": {"RED": 7}}):
            assert run_op("prim::EnumValue", RED) == 7
        assert run_op("prim::EnumValue", RED) == 1
    with pytest.raises(IRRuntimeError):
        run_op("prim::EnumValue", RED)
