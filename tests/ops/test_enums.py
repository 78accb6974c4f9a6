"""Enum members as run-time values: comparison, name, and value once the enum is registered."""

from __future__ import annotations

import pytest

from irjit.ops import enums
from irjit.ops.enums import EnumMember, register_enum
from irjit.ops.errors import IRRuntimeError
from irjit.runtime.autograd import run_op

RED, GREEN = EnumMember("__torch__.Color", "RED"), EnumMember("__torch__.Color", "GREEN")


@pytest.fixture(autouse=True)
def no_enums(monkeypatch):
    monkeypatch.setattr(enums, "_VALUES", {})


def test_compare_and_name():
    assert run_op("aten::eq", RED, EnumMember("__torch__.Color", "RED")) is True
    assert run_op("aten::ne", RED, GREEN) is True
    assert run_op("prim::EnumName", GREEN) == "GREEN"


def test_value_needs_the_registered_enum():
    with pytest.raises(IRRuntimeError, match=r"value of __torch__\.Color\.RED is not printed"):
        run_op("prim::EnumValue", RED)
    register_enum("__torch__.Color", {"RED": 1, "GREEN": "g"})
    assert run_op("prim::EnumValue", RED) == 1 and run_op("prim::EnumValue", GREEN) == "g"
