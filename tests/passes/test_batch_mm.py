"""batch_mm: PyTorch's BatchMM. Numerics before/after on random inputs through the runtime,
the conditions of batch_mm.cpp (tree size, single uses, independence, side effects,
mutation), the static shape requirements of the default (aten::cat/mm) form, and torch
2.13's own output for `pytorch_ops=True`, up to value numbering."""

from __future__ import annotations

import numpy as np
import pytest

import irjit
from irjit.compiler.ir import TensorType
from irjit.compiler.passes import get_pass

from . import parse, renumber

BATCH_MM = get_pass("batch_mm").run


def _kinds(g) -> list[str]:
    return [n.kind for n in g.walk() if n.kind != "prim::Constant"]


def _inputs(g, seed: int = 0, shapes=None) -> list:
    """Random inputs: tensors of the shapes in `shapes` (default: the input types')."""
    rng = np.random.default_rng(seed)
    out = []
    for i, v in enumerate(g.inputs):
        if isinstance(v.type, TensorType):
            shape = shapes[i] if shapes is not None else v.type.sizes
            out.append(rng.standard_normal(shape).astype(np.float32))
        elif str(v.type) == "bool":
            out.append(np.array(True))
        else:
            raise AssertionError(f"no random input for {v.type}")
    return out


def _run(g, inputs) -> list[np.ndarray]:
    outs = irjit.load(g).run(*inputs, requires_grad=False)
    return [o.data for o in outs]


def check_numerics(text: str, expect_change: bool = True, seeds=(0, 1), shapes=None):
    """Run batch_mm on `text`; the result must lint, parse again and compute the same."""
    before, after = parse(text), parse(text)
    changed = BATCH_MM(after)
    after.lint()
    parse(str(after)).lint()
    assert changed == expect_change
    for seed in seeds:
        xs = _inputs(before, seed, shapes)
        for a, b in zip(_run(before, xs), _run(after, xs), strict=True):
            assert a.shape == b.shape
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    return after


def _chain(n: int, lhs: str = "Float(3, 4)", rhs: str = "Float(4, 5)", alpha: str = "1") -> str:
    """((mm0 + mm1) + mm2) + ... over distinct operands."""
    ins = ", ".join(f"%a{i} : {lhs}, %b{i} : {rhs}" for i in range(n))
    lines = [f"graph({ins}):", f"  %one : int = prim::Constant[value={alpha}]()"]
    lines += [f"  %m{i} : Tensor = aten::mm(%a{i}, %b{i})" for i in range(n)]
    acc = "%m0"
    for i in range(1, n):
        lines.append(f"  %s{i} : Tensor = aten::add({acc}, %m{i}, %one)")
        acc = f"%s{i}"
    lines.append(f"  return ({acc})")
    return "\n".join(lines) + "\n"


def _side(n: int, side: str = "lhs", w: str = "Float(3, 4)", x: str = "Float(4, 5)",
          between: str = "") -> str:
    """n mms sharing %w as their left (right) operand, `between` after each."""
    ins = ", ".join(f"%x{i} : {x}" for i in range(n))
    lines = [f"graph(%w : {w}, {ins}):"]
    for i in range(n):
        args = f"%w, %x{i}" if side == "lhs" else f"%x{i}, %w"
        lines.append(f"  %m{i} : Tensor = aten::mm({args})")
        if between:
            lines.append("  " + between.format(i=i))
    outs = ", ".join(f"%r{i}" if between else f"%m{i}" for i in range(n))
    lines.append(f"  return ({outs})")
    return "\n".join(lines) + "\n"


# ---- tree reduction

def test_chain_of_four_becomes_one_mm():
    g = check_numerics(_chain(4))
    assert _kinds(g) == ["prim::ListConstruct", "aten::cat", "prim::ListConstruct", "aten::cat",
                         "aten::mm"]
    assert renumber(str(g)) == renumber("""graph(%a0 : Float(3, 4),
      %b0 : Float(4, 5),
      %a1 : Float(3, 4),
      %b1 : Float(4, 5),
      %a2 : Float(3, 4),
      %b2 : Float(4, 5),
      %a3 : Float(3, 4),
      %b3 : Float(4, 5)):
  %1 : Tensor[] = prim::ListConstruct(%a3, %a2, %a1, %a0)
  %2 : int = prim::Constant[value=1]()
  %3 : Float(3, 16, strides=[16, 1]) = aten::cat(%1, %2)
  %4 : Tensor[] = prim::ListConstruct(%b3, %b2, %b1, %b0)
  %5 : int = prim::Constant[value=0]()
  %6 : Float(16, 5, strides=[5, 1]) = aten::cat(%4, %5)
  %7 : Tensor = aten::mm(%3, %6)
  return (%7)
""")


def test_long_chain_and_float_alpha():
    g = check_numerics(_chain(9, alpha="1."))
    assert _kinds(g).count("aten::mm") == 1


def test_balanced_tree_with_transposes():
    # (A B)^T joins the tree as mm(t(B), t(A)), so every leaf has the same shapes
    g = check_numerics("""graph(%a : Float(3, 4), %b : Float(4, 3), %c : Float(4, 3), %d : Float(3, 4),
      %e : Float(3, 4), %f : Float(4, 3), %g : Float(3, 4), %h : Float(4, 3)):
  %one : int = prim::Constant[value=1]()
  %1 : Tensor = aten::mm(%a, %b)
  %2 : Tensor = aten::mm(%d, %c)
  %3 : Tensor = aten::mm(%e, %f)
  %4 : Tensor = aten::mm(%g, %h)
  %t2 : Tensor = aten::t(%2)
  %5 : Tensor = aten::add(%1, %t2, %one)
  %6 : Tensor = aten::add(%3, %4, %one)
  %7 : Tensor = aten::add(%5, %6, %one)
  return (%7)
""")
    assert _kinds(g) == ["aten::t", "aten::t", "prim::ListConstruct", "aten::cat",
                         "prim::ListConstruct", "aten::cat", "aten::mm"]


def test_tree_inside_loop_and_if():
    body = "\n".join(f"      %m{i} : Tensor = aten::mm(%acc, %x{i})" for i in range(4))
    check_numerics(f"""graph(%w : Float(4, 4), %c : bool, %x0 : Float(4, 4), %x1 : Float(4, 4),
      %x2 : Float(4, 4), %x3 : Float(4, 4)):
  %n : int = prim::Constant[value=3]()
  %true : bool = prim::Constant[value=1]()
  %one : int = prim::Constant[value=1]()
  %out : Tensor = prim::If(%c)
    block0():
      %l : Float(4, 4) = prim::Loop(%n, %true, %w)
        block0(%i : int, %acc : Float(4, 4)):
{body.replace("      ", "          ")}
          %s1 : Tensor = aten::add(%m0, %m1, %one)
          %s2 : Tensor = aten::add(%m2, %m3, %one)
          %s3 : Float(4, 4) = aten::add(%s1, %s2, %one)
          -> (%true, %s3)
      -> (%l)
    block1():
      -> (%w)
  return (%out)
""")


CHAIN4_SHAPES = [(3, 4), (4, 5)] * 4


@pytest.mark.parametrize("why,text", [
    ("three leaves are below min_fusion_size", _chain(3)),
    ("alpha is not 1 (PyTorch would ignore it)", _chain(4, alpha="2")),
    ("shapes are not known", _chain(4, "Tensor", "Tensor")),
    ("sizes are not known", _chain(4, "Float(*, *)", "Float(*, *)")),
    ("not the fast shape for a reduce (m >= 512, l < 256 < r)",
     _chain(4, "Float(2, 512)", "Float(512, 300)")),
])
def test_tree_conditions(why, text):
    shapes = CHAIN4_SHAPES if "Float(3, 4)" not in text and "512" not in text else None
    g = check_numerics(text, expect_change=False, shapes=shapes)
    assert "aten::cat" not in str(g), why


def test_differing_shapes_are_not_batched():
    text = _chain(4).replace("%a3 : Float(3, 4), %b3 : Float(4, 5)",
                             "%a3 : Float(3, 2), %b3 : Float(2, 5)")
    assert "aten::cat" not in str(check_numerics(text, expect_change=False))


def test_intermediate_with_a_second_use_stops_the_tree():
    text = _chain(5).replace("return (%s4)", "return (%s4, %s1)")
    g = check_numerics(text, expect_change=False)
    assert _kinds(g).count("aten::mm") == 5


def test_intermediate_use_splits_off_a_smaller_tree():
    # %s2 = (m0 + m1) + m2 has a second use, so it cannot join the tree above it; the
    # leaves m3..m6 still form a tree of four
    text = _chain(7).replace("return (%s6)", "return (%s6, %s2)")
    text = text.replace("%s3 : Tensor = aten::add(%s2, %m3, %one)",
                        "%s3 : Tensor = aten::add(%m3, %m4, %one)")
    text = text.replace("%s4 : Tensor = aten::add(%s3, %m4, %one)",
                        "%s4 : Tensor = aten::add(%s3, %m5, %one)")
    text = text.replace("%s5 : Tensor = aten::add(%s4, %m5, %one)",
                        "%s5 : Tensor = aten::add(%s4, %m6, %one)")
    text = text.replace("%s6 : Tensor = aten::add(%s5, %m6, %one)",
                        "%s6 : Tensor = aten::add(%s5, %s2, %one)")
    g = check_numerics(text)
    assert _kinds(g).count("aten::cat") == 2 and _kinds(g).count("aten::mm") == 4


# ---- side batching

def test_shared_lhs():
    g = check_numerics(_side(8))
    assert _kinds(g) == ["prim::ListConstruct", "aten::cat", "aten::mm", "prim::ConstantChunk"]
    assert "prim::ConstantChunk[chunks=8, dim=1](" in str(g)


def test_shared_rhs_with_users_in_between():
    g = check_numerics(_side(9, "rhs", w="Float(5, 6)", x="Float(4, 5)",
                             between="%r{i} : Tensor = aten::relu(%m{i})"))
    assert "prim::ConstantChunk[chunks=9, dim=0](" in str(g)
    assert _kinds(g)[:4] == ["prim::ListConstruct", "aten::cat", "aten::mm",
                             "prim::ConstantChunk"]  # the relus moved after the batch


def test_dependent_mms_are_left_out():
    # mm(%w, relu(mm(%w, %x0))) depends on the first one
    text = _side(9, w="Float(4, 4)", x="Float(4, 4)")
    text = text.replace("%m1 : Tensor = aten::mm(%w, %x1)",
                        "%q : Tensor = aten::relu(%m0)\n  %m1 : Tensor = aten::mm(%w, %q)")
    g = check_numerics(text)
    assert "prim::ConstantChunk[chunks=8, dim=1](" in str(g)
    assert _kinds(g).count("aten::mm") == 2


@pytest.mark.parametrize("why,text", [
    ("seven are not many", _side(7)),
    ("unknown shapes", _side(8, w="Tensor", x="Tensor")),
    ("other side too large (shape_is_fast_for_side)", _side(8, w="Float(2, 1025)",
                                                             x="Float(1025, 2048)")),
    ("a side effect splits the group", _side(8).replace(
        "%m4 : Tensor", " = prim::Print(%m0)\n  %m4 : Tensor")),
])
def test_side_conditions(why, text):
    if "2048" in text:  # too large to run twice quickly: check the structure only
        g = parse(text)
        BATCH_MM(g)
        g.lint()
        assert "aten::cat" not in str(g), why
        return
    shapes = [(3, 4)] + [(4, 5)] * 8 if "Float" not in text else None
    g = check_numerics(text, expect_change=False, shapes=shapes)
    assert "aten::cat" not in str(g), why


def test_side_inside_a_loop_with_outer_operands():
    # the shared value is the loop-carried %acc (defined in the body): batched; mms
    # sharing the outer %w are not (PyTorch only looks at uses in the value's own block)
    mms = "\n".join(f"      %m{i} : Tensor = aten::mm(%acc, %x{i})\n"
                    f"      %k{i} : Tensor = aten::mm(%x{i}, %w)" for i in range(8))
    adds = "\n".join(f"      %s{i} : Float(4, 4) = aten::add(%s{i - 1}, %m{i}, %one)\n"
                     f"      %u{i} : Float(4, 4) = aten::add(%u{i - 1}, %k{i}, %one)"
                     for i in range(1, 8))
    xs = ", ".join(f"%x{i} : Float(4, 4)" for i in range(8))
    g = check_numerics(f"""graph(%w : Float(4, 4), {xs}):
  %n : int = prim::Constant[value=2]()
  %true : bool = prim::Constant[value=1]()
  %one : int = prim::Constant[value=1]()
  %zero : float = prim::Constant[value=0.]()
  %out : Float(4, 4), %out2 : Float(4, 4) = prim::Loop(%n, %true, %w, %w)
    block0(%i : int, %acc : Float(4, 4), %acc2 : Float(4, 4)):
{mms}
      %s0 : Float(4, 4) = aten::mul(%m0, %zero)
      %u0 : Float(4, 4) = aten::add(%acc2, %k0, %one)
{adds}
      -> (%true, %s7, %u7)
  return (%out, %out2)
""")
    assert "prim::ConstantChunk[chunks=8, dim=1](" in str(g)


def test_mixed_tree_and_side_batch():
    # four of the twelve mms sharing %w form a tree; PyTorch's side batching then still sees
    # their (now dead) mms, so the batch has twelve chunks of which eight are used
    xs = ", ".join(f"%x{i} : Float(4, 4)" for i in range(12))
    mms = "\n".join(f"  %m{i} : Tensor = aten::mm(%x{i}, %w)" for i in range(12))
    g = check_numerics(f"""graph(%w : Float(4, 4), {xs}):
  %one : int = prim::Constant[value=1]()
{mms}
  %s1 : Tensor = aten::add(%m0, %m1, %one)
  %s2 : Tensor = aten::add(%s1, %m2, %one)
  %s3 : Tensor = aten::add(%s2, %m3, %one)
  %ww : Tensor = aten::mm(%w, %w)
  return (%s3, %m4, %m5, %m6, %m7, %m8, %m9, %m10, %m11, %ww)
""")
    assert "prim::ConstantChunk[chunks=12, dim=0](" in str(g)
    assert _kinds(g).count("aten::cat") == 3


# ---- mutation

def test_graph_with_mutation_is_left_alone():
    text = _chain(4).replace("  return (%s3)", "  %z : Tensor = aten::relu_(%a0)\n  return (%s3)")
    g = parse(text)
    assert not BATCH_MM(g)
    assert str(g) == str(parse(text))


def test_mutation_in_a_nested_block_counts():
    text = _side(8).replace("graph(%w : Float(3, 4),", "graph(%c : bool, %w : Float(3, 4),")
    text = text.replace("  return (", """  %z : Tensor = prim::If(%c)
    block0():
      %y : Tensor = aten::add_(%x0, %x1, %c)
      -> (%y)
    block1():
      -> (%x0)
  return (%z, """)
    g = parse(text)
    assert not BATCH_MM(g)


# ---- PyTorch's own output (torch 2.13, torch._C._jit_pass_batch_mm), pytorch_ops=True

TORCH_CASES = {
    "tree_with_transposes": ("""graph(%a : Tensor,
      %b : Tensor,
      %c : Tensor,
      %d : Tensor,
      %e : Tensor,
      %f : Tensor,
      %g : Tensor,
      %h : Tensor):
  %16 : int = prim::Constant[value=1]()
  %1 : Tensor = aten::mm(%a, %b)
  %2 : Tensor = aten::mm(%c, %d)
  %3 : Tensor = aten::mm(%e, %f)
  %4 : Tensor = aten::mm(%g, %h)
  %17 : Tensor = aten::t(%2)
  %18 : Tensor = aten::t(%4)
  %5 : Tensor = aten::add(%1, %17, %16)
  %6 : Tensor = aten::add(%3, %18, %16)
  %7 : Tensor = aten::add(%5, %6, %16)
  return (%7)
""", """graph(%a : Tensor,
      %b : Tensor,
      %c : Tensor,
      %d : Tensor,
      %e : Tensor,
      %f : Tensor,
      %g : Tensor,
      %h : Tensor):
  %21 : Tensor = aten::t(%c)
  %22 : Tensor = aten::t(%d)
  %18 : Tensor = aten::t(%g)
  %19 : Tensor = aten::t(%h)
  %24 : Tensor = prim::MMTreeReduce(%19, %e, %22, %a, %18, %f, %21, %b)
  return (%24)
"""),
    "side_rhs_interleaved": ("""graph(%w : Float(5, 6),
      %x0 : Float(4, 5),
      %x1 : Float(4, 5),
      %x2 : Float(4, 5),
      %x3 : Float(4, 5),
      %x4 : Float(4, 5),
      %x5 : Float(4, 5),
      %x6 : Float(4, 5),
      %x7 : Float(4, 5),
      %x8 : Float(4, 5)):
  %10 : Tensor = aten::mm(%x0, %w)
  %11 : Tensor = aten::relu(%10)
  %12 : Tensor = aten::mm(%x1, %w)
  %13 : Tensor = aten::relu(%12)
  %14 : Tensor = aten::mm(%x2, %w)
  %15 : Tensor = aten::relu(%14)
  %16 : Tensor = aten::mm(%x3, %w)
  %17 : Tensor = aten::relu(%16)
  %18 : Tensor = aten::mm(%x4, %w)
  %19 : Tensor = aten::relu(%18)
  %20 : Tensor = aten::mm(%x5, %w)
  %21 : Tensor = aten::relu(%20)
  %22 : Tensor = aten::mm(%x6, %w)
  %23 : Tensor = aten::relu(%22)
  %24 : Tensor = aten::mm(%x7, %w)
  %25 : Tensor = aten::relu(%24)
  return (%11, %13, %15, %17, %19, %21, %23, %25)
""", """graph(%w : Float(5, 6),
      %x0 : Float(4, 5),
      %x1 : Float(4, 5),
      %x2 : Float(4, 5),
      %x3 : Float(4, 5),
      %x4 : Float(4, 5),
      %x5 : Float(4, 5),
      %x6 : Float(4, 5),
      %x7 : Float(4, 5),
      %x8 : Float(4, 5)):
  %26 : Tensor, %27 : Tensor, %28 : Tensor, %29 : Tensor, %30 : Tensor, %31 : Tensor, %32 : Tensor, %33 : Tensor = prim::MMBatchSide[side=1](%w, %x0, %x1, %x2, %x3, %x4, %x5, %x6, %x7)
  %11 : Tensor = aten::relu(%26)
  %13 : Tensor = aten::relu(%27)
  %15 : Tensor = aten::relu(%28)
  %17 : Tensor = aten::relu(%29)
  %19 : Tensor = aten::relu(%30)
  %21 : Tensor = aten::relu(%31)
  %23 : Tensor = aten::relu(%32)
  %25 : Tensor = aten::relu(%33)
  return (%11, %13, %15, %17, %19, %21, %23, %25)
"""),
    "tree_and_dead_mms_in_side_batch": ("""graph(%w : Float(4, 4),
      %x0 : Float(4, 4),
      %x1 : Float(4, 4),
      %x2 : Float(4, 4),
      %x3 : Float(4, 4),
      %x4 : Float(4, 4),
      %x5 : Float(4, 4),
      %x6 : Float(4, 4),
      %x7 : Float(4, 4),
      %x8 : Float(4, 4),
      %x9 : Float(4, 4),
      %x10 : Float(4, 4),
      %x11 : Float(4, 4)):
  %13 : int = prim::Constant[value=1]()
  %14 : Tensor = aten::mm(%x0, %w)
  %15 : Tensor = aten::mm(%x1, %w)
  %16 : Tensor = aten::mm(%x2, %w)
  %17 : Tensor = aten::mm(%x3, %w)
  %18 : Tensor = aten::mm(%x4, %w)
  %19 : Tensor = aten::mm(%x5, %w)
  %20 : Tensor = aten::mm(%x6, %w)
  %21 : Tensor = aten::mm(%x7, %w)
  %22 : Tensor = aten::mm(%x8, %w)
  %23 : Tensor = aten::mm(%x9, %w)
  %24 : Tensor = aten::mm(%x10, %w)
  %25 : Tensor = aten::mm(%x11, %w)
  %26 : Tensor = aten::add(%14, %15, %13)
  %27 : Tensor = aten::add(%26, %16, %13)
  %28 : Tensor = aten::add(%27, %17, %13)
  %29 : Tensor = aten::mm(%w, %w)
  return (%28, %18, %19, %20, %21, %22, %23, %24, %25, %29)
""", """graph(%w : Float(4, 4),
      %x0 : Float(4, 4),
      %x1 : Float(4, 4),
      %x2 : Float(4, 4),
      %x3 : Float(4, 4),
      %x4 : Float(4, 4),
      %x5 : Float(4, 4),
      %x6 : Float(4, 4),
      %x7 : Float(4, 4),
      %x8 : Float(4, 4),
      %x9 : Float(4, 4),
      %x10 : Float(4, 4),
      %x11 : Float(4, 4)):
  %31 : Tensor, %32 : Tensor, %33 : Tensor, %34 : Tensor, %35 : Tensor, %36 : Tensor, %37 : Tensor, %38 : Tensor, %39 : Tensor, %40 : Tensor, %41 : Tensor, %42 : Tensor = prim::MMBatchSide[side=1](%w, %x0, %x1, %x2, %x3, %x4, %x5, %x6, %x7, %x8, %x9, %x10, %x11)
  %30 : Tensor = prim::MMTreeReduce(%x3, %x2, %x1, %x0, %w, %w, %w, %w)
  %29 : Tensor = aten::mm(%w, %w)
  return (%30, %35, %36, %37, %38, %39, %40, %41, %42, %29)
"""),
}


@pytest.mark.parametrize("name", sorted(TORCH_CASES))
def test_pytorch_ops_match_torch(name):
    before, want = TORCH_CASES[name]
    g = parse(before)
    assert BATCH_MM(g, pytorch_ops=True)
    g.lint()
    assert renumber(str(g)) == renumber(want)


@pytest.mark.parametrize("name", ["side_rhs_interleaved", "tree_and_dead_mms_in_side_batch"])
def test_static_form_agrees_with_torch(name):
    """The default form batches the same operands, in the same order, as PyTorch's ops
    (these two cases have complete shapes), and computes the same values."""
    before, want = TORCH_CASES[name]
    g = check_numerics(before)
    want_g = parse(want)
    for op in [n for n in want_g.walk() if n.kind.startswith("prim::MM")]:
        if op.kind == "prim::MMTreeReduce":
            k = len(op.inputs) // 2
            halves = [op.inputs[:k], op.inputs[k:]]
        else:
            halves = [op.inputs[1:]]
        for operands in halves:
            names = [v.name for v in operands]
            assert any([v.name for v in n.inputs] == names for n in g.walk()
                       if n.kind == "prim::ListConstruct"), names


def test_pytorch_ops_alpha_is_checked():
    # torch 2.13 would emit prim::MMTreeReduce here and drop the alpha
    g = parse(_chain(4, "Tensor", "Tensor", alpha="2"))
    BATCH_MM(g, pytorch_ops=True)
    assert "MMTreeReduce" not in str(g)
