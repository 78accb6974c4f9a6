"""The graphs of symbolic_script's helpers that a `df` calls (`AD_mat_transpose`,
`AD_matmul_bw_size`, `AD_mm_backward_*`, `AD_bmm_backward_*`, `AD_permute_backward`,
`AD_unsqueeze_to_*`), written
as TorchScript compiles them. The interpreter runs a call of one through its graph
(`library_functions` has Python versions of the matmul ones); a native runner inlines those in
`INLINED`, so once the plan's key fixes the ranks, `aten::dim` folds, the branches fold, and
the products join native units."""

from __future__ import annotations

from functools import lru_cache

from irjit.compiler.ir import Graph, Node, Value
from irjit.compiler.ir.constants import constant_value
from irjit.compiler.parser import parse_ir

_TEXT = {
    "AD_mat_transpose": """graph(%mat : Tensor):
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %m2 : int = prim::Constant[value=-2]()
  %m1 : int = prim::Constant[value=-1]()
  %dim : int = aten::dim(%mat)
  %is_vector : bool = aten::eq(%dim, %one)
  %out : Tensor = prim::If(%is_vector)
    block0():
      -> (%mat)
    block1():
      %is_matrix : bool = aten::eq(%dim, %two)
      %swapped : Tensor = prim::If(%is_matrix)
        block0():
          %t : Tensor = aten::t(%mat)
          -> (%t)
        block1():
          %batched : Tensor = aten::transpose(%mat, %m2, %m1)
          -> (%batched)
      -> (%swapped)
  return (%out)
""",
    "AD_mm_backward_self": """graph(%grad : Tensor, %mat2 : Tensor):
  %mat2_t : Tensor = aten::t(%mat2)
  %out : Tensor = aten::mm(%grad, %mat2_t)
  return (%out)
""",
    "AD_mm_backward_mat2": """graph(%grad : Tensor, %self : Tensor):
  %self_t : Tensor = aten::t(%self)
  %out : Tensor = aten::mm(%self_t, %grad)
  return (%out)
""",
    "AD_bmm_backward_self": """graph(%grad : Tensor, %mat2 : Tensor):
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %mat2_t : Tensor = aten::transpose(%mat2, %one, %two)
  %out : Tensor = aten::bmm(%grad, %mat2_t)
  return (%out)
""",
    "AD_bmm_backward_mat2": """graph(%grad : Tensor, %self : Tensor):
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %self_t : Tensor = aten::transpose(%self, %one, %two)
  %out : Tensor = aten::bmm(%self_t, %grad)
  return (%out)
""",
    "AD_permute_backward": """graph(%grad : Tensor, %fwd_dims : int[]):
  %zero : int = prim::Constant[value=0]()
  %true : bool = prim::Constant[value=1]()
  %ndims : int = aten::len(%fwd_dims)
  %zeros : int[] = prim::ListConstruct(%zero)
  %dims : int[] = aten::mul(%zeros, %ndims)
   = prim::Loop(%ndims, %true)
    block0(%i : int):
      %d : int = aten::__getitem__(%fwd_dims, %i)
      %set : int[] = aten::_set_item(%dims, %d, %i)
      -> (%true)
  %out : Tensor = aten::permute(%grad, %dims)
  return (%out)
""",
    "AD_unsqueeze_to_0": """graph(%self : Tensor, %sizes : int[]):
  %true : bool = prim::Constant[value=1]()
  %one : int = prim::Constant[value=1]()
  %ndims : int = aten::len(%sizes)
  %out : Tensor = prim::Loop(%ndims, %true, %self)
    block0(%i : int, %t : Tensor):
      %s : int = aten::__getitem__(%sizes, %i)
      %is_one : bool = aten::eq(%s, %one)
      %r : Tensor = prim::If(%is_one)
        block0():
          %u : Tensor = aten::unsqueeze(%t, %i)
          -> (%u)
        block1():
          -> (%t)
      -> (%true, %r)
  return (%out)
""",
    "AD_unsqueeze_to_1": """graph(%self : Tensor, %dim : int, %sizes : int[]):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %n : int = aten::len(%sizes)
  %nonempty : bool = aten::gt(%n, %zero)
  %out : Tensor = prim::If(%nonempty)
    block0():
      %s : int = aten::__getitem__(%sizes, %dim)
      %is_one : bool = aten::eq(%s, %one)
      %r : Tensor = prim::If(%is_one)
        block0():
          %u : Tensor = aten::unsqueeze(%self, %dim)
          -> (%u)
        block1():
          -> (%self)
      -> (%r)
    block1():
      -> (%self)
  return (%out)
""",
    "AD_matmul_bw_special_fold": """graph(%mat1 : Tensor, %mat2 : Tensor):
  %m1 : int = prim::Constant[value=-1]()
  %transpose : Function = prim::Constant[name="AD_mat_transpose"]()
  %mat1_t : Tensor = prim::CallFunction(%transpose, %mat1)
  %n1 : int = aten::size(%mat1_t, %m1)
  %shape1 : int[] = prim::ListConstruct(%m1, %n1)
  %mat1_fold : Tensor = aten::reshape(%mat1_t, %shape1)
  %n2 : int = aten::size(%mat2, %m1)
  %shape2 : int[] = prim::ListConstruct(%m1, %n2)
  %mat2_fold : Tensor = aten::reshape(%mat2, %shape2)
  %mat1_fold_t : Tensor = aten::t(%mat1_fold)
  %out : Tensor = aten::mm(%mat1_fold_t, %mat2_fold)
  return (%out)
""",
    "AD_matmul_bw_size": """graph(%mat1 : Tensor, %mat2 : Tensor, %out_size : int[]):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %three : int = prim::Constant[value=3]()
  %m2 : int = prim::Constant[value=-2]()
  %m1 : int = prim::Constant[value=-1]()
  %fold : Function = prim::Constant[name="AD_matmul_bw_special_fold"]()
  %dim1 : int = aten::dim(%mat1)
  %dim2 : int = aten::dim(%mat2)
  %dim_out : int = aten::len(%out_size)
  %scalar1 : bool = aten::eq(%dim1, %zero)
  %scalar2 : bool = aten::eq(%dim2, %zero)
  %scalar : bool = aten::__or__(%scalar1, %scalar2)
  %out_matrix : bool = aten::eq(%dim_out, %two)
  %same_rank : bool = aten::eq(%dim1, %dim2)
  %batched1 : bool = aten::ge(%dim1, %three)
  %fold_a : bool = aten::__and__(%out_matrix, %same_rank)
  %fold_both : bool = aten::__and__(%fold_a, %batched1)
  %out_vector : bool = aten::eq(%dim_out, %one)
  %diff12 : int = aten::sub(%dim1, %dim2)
  %one_more : bool = aten::eq(%diff12, %one)
  %fold_b : bool = aten::__and__(%out_vector, %one_more)
  %fold_vector : bool = aten::__and__(%fold_b, %batched1)
  %sum12 : int = aten::add(%dim1, %dim2)
  %outer : bool = aten::eq(%sum12, %dim_out)
  %drops2 : bool = aten::eq(%dim_out, %diff12)
  %diff21 : int = aten::sub(%dim2, %dim1)
  %drops1 : bool = aten::eq(%dim_out, %diff21)
  %out : Tensor = prim::If(%scalar)
    block0():
      %product : Tensor = aten::mul(%mat1, %mat2)
      -> (%product)
    block1():
      %r1 : Tensor = prim::If(%fold_both)
        block0():
          %folded : Tensor = prim::CallFunction(%fold, %mat1, %mat2)
          -> (%folded)
        block1():
          %r2 : Tensor = prim::If(%fold_vector)
            block0():
              %mat2_column : Tensor = aten::unsqueeze(%mat2, %m1)
              %folded_column : Tensor = prim::CallFunction(%fold, %mat1, %mat2_column)
              %folded_vector : Tensor = aten::squeeze(%folded_column, %m1)
              -> (%folded_vector)
            block1():
              %r3 : Tensor = prim::If(%outer)
                block0():
                  %vector2 : bool = aten::eq(%dim2, %one)
                  %target_dim2 : int = prim::If(%vector2)
                    block0():
                      -> (%zero)
                    block1():
                      -> (%m2)
                  %mat1_u : Tensor = aten::unsqueeze(%mat1, %dim1)
                  %mat2_u : Tensor = aten::unsqueeze(%mat2, %target_dim2)
                  %outer_product : Tensor = aten::matmul(%mat1_u, %mat2_u)
                  -> (%outer_product)
                block1():
                  %r4 : Tensor = prim::If(%drops2)
                    block0():
                      %mat2_u2 : Tensor = aten::unsqueeze(%mat2, %dim2)
                      %p2 : Tensor = aten::matmul(%mat1, %mat2_u2)
                      %s2 : Tensor = aten::squeeze(%p2, %m1)
                      -> (%s2)
                    block1():
                      %r5 : Tensor = prim::If(%drops1)
                        block0():
                          %mat1_u1 : Tensor = aten::unsqueeze(%mat1, %m2)
                          %p1 : Tensor = aten::matmul(%mat1_u1, %mat2)
                          %s1 : Tensor = aten::squeeze(%p1, %m2)
                          -> (%s1)
                        block1():
                          %p : Tensor = aten::matmul(%mat1, %mat2)
                          -> (%p)
                      -> (%r5)
                  -> (%r4)
              -> (%r3)
          -> (%r2)
      -> (%r1)
  return (%out)
""",
}

# what a native runner inlines (the fold is internal); the helpers with loops are folded
# (`fold_helper_calls`) once their list arguments are constants
INLINED = ("AD_mat_transpose", "AD_matmul_bw_size", "AD_mm_backward_self", "AD_mm_backward_mat2",
           "AD_bmm_backward_self", "AD_bmm_backward_mat2", "AD_unsqueeze_to_1")


@lru_cache(maxsize=None)
def _graph(name: str) -> Graph:
    return parse_ir(_TEXT[name])


def helper_graphs() -> dict[str, Graph]:
    """Name -> graph of every helper (callers copy what they inline)."""
    return {name: _graph(name) for name in _TEXT}


def helper_graph(name: str):
    """The graph of helper `name`, or None."""
    return _graph(name) if name in _TEXT else None


def calls_any_helper(node: Node) -> bool:
    """A `prim::CallFunction` of any of these helpers (none writes its arguments)."""
    if node.kind != "prim::CallFunction" or not node.inputs:
        return False
    fn = node.inputs[0].node
    return fn.kind == "prim::Constant" and fn.has_attr("name") and fn.attr("name") in _TEXT


def calls_helper(node: Node) -> bool:
    """A `prim::CallFunction` of one of the helpers a df calls."""
    if node.kind != "prim::CallFunction" or not node.inputs:
        return False
    fn = node.inputs[0].node
    return fn.kind == "prim::Constant" and fn.has_attr("name") and fn.attr("name") in INLINED


# ---- folding the helpers with loops once their lists are constants (a plan's key fixes the
# size lists a df receives; permute's dims are constants already)

def _permute_inverse(graph: Graph, grad: Value, dims: list) -> Value:
    inverse = [0] * len(dims)
    for i, d in enumerate(dims):
        inverse[d] = i  # (TorchScript list indexing: a negative dim counts from the end)
    return graph.insert("aten::permute", [grad, graph.insert_constant(inverse)]).output


def _unsqueeze_to_0(graph: Graph, grad: Value, sizes: list) -> Value:
    # unsqueezing grad (sizes without its 1s) at every 1 of `sizes` gives exactly `sizes`
    return graph.insert("aten::reshape", [grad, graph.insert_constant(list(sizes))]).output


def _unsqueeze_to_1(graph: Graph, grad: Value, dim: int, sizes: list) -> Value:
    if len(sizes) > 0 and sizes[dim] == 1:
        return graph.insert("aten::reshape", [grad, graph.insert_constant(list(sizes))]).output
    return grad


_FOLDS = {"AD_permute_backward": _permute_inverse, "AD_unsqueeze_to_0": _unsqueeze_to_0,
          "AD_unsqueeze_to_1": _unsqueeze_to_1}


def fold_helper_calls(graph: Graph) -> bool:
    """Calls of `AD_permute_backward` / `AD_unsqueeze_to_*` whose list and number arguments are
    constants become the ops they amount to (a permute by the inverse dims; a reshape to the
    unsqueezed sizes), so that native code runs them; True when one was folded."""
    changed = False
    for n in list(graph.walk()):
        if n.kind != "prim::CallFunction" or len(n.inputs) < 2:
            continue
        fn = n.inputs[0].node
        rule = _FOLDS.get(fn.attr("name")) if fn.kind == "prim::Constant" and fn.has_attr("name") else None
        if rule is None or any(v.node.kind != "prim::Constant" for v in n.inputs[2:]):
            continue
        graph.set_insert_point(n)
        out = rule(graph, n.inputs[1], *(constant_value(v.node) for v in n.inputs[2:]))
        if out is not n.inputs[1]:
            out.type = n.output.type  # (the layout a profiling run recorded for the call)
        n.output.replace_all_uses_with(out)
        n.destroy()
        changed = True
    return changed

