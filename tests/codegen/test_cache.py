"""Native units are cached in memory by (structural hash, specialization): group graphs that
differ only in value names share a unit; another input layout gets its own."""

from irjit.compiler import parse_ir
from irjit.compiler.codegen.cache import get_unit, unit_key

GROUP = """graph(%{a} : Float(3, 4, strides=[4, 1], device=cpu), %{b} : Float(3, 4, strides=[4, 1], device=cpu)):
  %{c} : Float(3, 4, strides=[4, 1], device=cpu) = aten::mul(%{a}, %{b})
  return (%{c})"""


def test_value_names_do_not_split_the_cache_but_layouts_do():
    first = parse_ir(GROUP.format(a="x", b="y", c="z"))
    renamed = parse_ir(GROUP.format(a="p", b="q", c="r"))
    other = parse_ir(GROUP.format(a="x", b="y", c="z").replace("(3, 4, strides=[4, 1]", "(4, 3, strides=[3, 1]"))
    assert unit_key(first) == unit_key(renamed) != unit_key(other)
    unit, _ = get_unit(first)
    again, hit = get_unit(renamed)
    assert unit is not None and again is unit and hit


def test_requires_grad_does_not_split_the_cache():
    """No lowering reads `requires_grad`: a group run with and without grad is one unit."""
    plain = parse_ir(GROUP.format(a="x", b="y", c="z"))
    grad = parse_ir(GROUP.format(a="x", b="y", c="z").replace("strides=[4, 1], device", "strides=[4, 1], requires_grad=1, device"))
    assert "requires_grad=1" in str(grad.inputs[0].type)
    assert unit_key(plain) == unit_key(grad)
    unit, _ = get_unit(plain)
    again, hit = get_unit(grad)
    assert unit is not None and again is unit and hit


def test_units_are_made_with_the_collector_paused(monkeypatch):
    """A full collection of the process's heap (14-42 ms in a bench process) fell inside
    whichever unit's allocations set it off, a unit loaded from the disk cache included: the
    collector is off while any unit is made, and on again afterwards, also when the group
    cannot be lowered."""
    import gc

    from irjit.compiler.codegen import cache
    from irjit.ops.lowering_common import NotLowerable
    seen = []

    def made(graph, name, cache_key=None):
        seen.append(gc.isenabled())
        if len(seen) == 2:
            raise NotLowerable("not this one")
        return "unit"
    monkeypatch.setattr(cache, "tensor_unit", made)
    graph = parse_ir(GROUP.format(a="x", b="y", c="z").replace("aten::mul", "aten::sub"))
    other = parse_ir(GROUP.format(a="x", b="y", c="z").replace("aten::mul", "aten::div"))
    assert gc.isenabled()
    try:
        assert get_unit(graph) == ("unit", False)
        assert get_unit(other) == (None, False)
    finally:
        cache.clear()
    assert seen == [False, False] and gc.isenabled()
