"""unroll_constant_loops: PyTorch's UnrollConstantLoops pair and unit cases."""

import re
from pathlib import Path

import pytest

from compiler import parse_ir
from compiler.passes import get_pass

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "passes"


def renumber(text: str) -> str:
    """Numeric value names renumbered in order of appearance, per graph section."""
    out = []
    for part in re.split(r"(?m)^(?=with )", text):
        names: dict = {}
        out.append(re.sub(r"%(\d+)\b", lambda m: "%" + names.setdefault(m.group(1), str(len(names))), part))
    return "".join(out).strip()


def run_pair(pass_name: str, example: str, **options) -> None:
    before = (FIXTURES / f"pass_{example}_before.ir").read_text()
    after = (FIXTURES / f"pass_{example}_after.ir").read_text()
    g = parse_ir(before)
    get_pass(pass_name).run(g, **options)
    g.lint()
    assert renumber(str(g)) == renumber(after)


def run(pass_name: str, text: str, **options):
    g = parse_ir(text)
    changed = get_pass(pass_name).run(g, **options)
    g.lint()
    return g, changed


def test_pytorch_pair():
    run_pair("unroll_constant_loops", "constant_loop_unrolling__hand_const_loop")


def test_non_constant_trip_count_is_kept():
    src = """graph(%x : Tensor, %n : int):
  %t : bool = prim::Constant[value=1]()
  %r : Tensor = prim::Loop(%n, %t, %x)
    block0(%i : int, %a : Tensor):
      %b : Tensor = aten::neg(%a)
      -> (%t, %b)
  return (%r)
"""
    g, changed = run("unroll_constant_loops", src)
    assert not changed and "prim::Loop" in str(g)


def test_big_body_with_constant_trip_is_unrolled():
    body = "\n".join(f"      %a{i + 1} : Tensor = aten::neg(%a{i})" for i in range(40))
    src = f"""graph(%x : Tensor):
  %t : bool = prim::Constant[value=1]()
  %k : int = prim::Constant[value=2]()
  %r : Tensor = prim::Loop(%k, %t, %x)
    block0(%i : int, %a0 : Tensor):
{body}
      -> (%t, %a40)
  return (%r)
"""
    g, changed = run("unroll_constant_loops", src)
    assert changed and str(g).count("aten::neg") == 80
