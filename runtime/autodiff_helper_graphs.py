"""The graphs of symbolic_script's helpers that a `df` calls (`AD_mat_transpose`,
`AD_matmul_bw_size`, `AD_mm_backward_*`, `AD_bmm_backward_*`, `AD_permute_backward`,
`AD_unsqueeze_to_*`, and the reductions' `AD_sum_backward`, `AD_safe_size`,
`AD_unsqueeze_multiple`, `AD_bool_to_int`, `AD_var_backward_*`, `AD_logsumexp_backward`),
written as TorchScript compiles them. The interpreter runs a call of one through its graph
(`library_functions` has Python versions of the matmul ones); a native runner inlines those in
`INLINED`, so once the plan's key fixes the ranks, `aten::dim` folds, the branches fold, and
the products join native units, and folds the others (`fold_helper_calls`) into the ops they
amount to once their list and flag arguments are constants and their tensors' types complete."""

from __future__ import annotations

from functools import lru_cache
from typing import Optional

import numpy as np

from irjit.compiler.codegen.lower import contiguous_strides
from irjit.compiler.ir import Graph, Node, Value
from irjit.compiler.ir.constants import constant_value
from irjit.compiler.parser import parse_ir
from irjit.ops.types import TensorType

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
    "AD_unsqueeze_multiple": """graph(%t : Tensor, %dims : int[], %n_dims : int):
  %true : bool = prim::Constant[value=1]()
  %false : bool = prim::Constant[value=0]()
  %falses : bool[] = prim::ListConstruct(%false)
  %seen : bool[] = aten::mul(%falses, %n_dims)
  %n : int = aten::len(%dims)
   = prim::Loop(%n, %true)
    block0(%i : int):
      %d : int = aten::__getitem__(%dims, %i)
      %set : bool[] = aten::_set_item(%seen, %d, %true)
      -> (%true)
  %out : Tensor = prim::Loop(%n_dims, %true, %t)
    block0(%j : int, %acc : Tensor):
      %reduced : bool = aten::__getitem__(%seen, %j)
      %r : Tensor = prim::If(%reduced)
        block0():
          %u : Tensor = aten::unsqueeze(%acc, %j)
          -> (%u)
        block1():
          -> (%acc)
      -> (%true, %r)
  return (%out)
""",
    "AD_sum_backward": """graph(%grad : Tensor, %sizes : int[], %dims : int[]?, %keepdim : bool):
  %none : NoneType = prim::Constant()
  %false : bool = prim::Constant[value=0]()
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %unsqueeze_multiple : Function = prim::Constant[name="AD_unsqueeze_multiple"]()
  %drop : bool = aten::__not__(%keepdim)
  %n : int = aten::len(%sizes)
  %nonempty : bool = aten::gt(%n, %zero)
  %reinsert : bool = prim::If(%drop)
    block0():
      -> (%nonempty)
    block1():
      -> (%false)
  %out : Tensor = prim::If(%reinsert)
    block0():
      %all : bool = aten::__is__(%dims, %none)
      %r : Tensor = prim::If(%all)
        block0():
          %e0 : Tensor = aten::expand(%grad, %sizes, %false)
          -> (%e0)
        block1():
          %dim_list : int[] = prim::unchecked_cast(%dims)
          %k : int = aten::len(%dim_list)
          %single : bool = aten::eq(%k, %one)
          %r1 : Tensor = prim::If(%single)
            block0():
              %d0 : int = aten::__getitem__(%dim_list, %zero)
              %u : Tensor = aten::unsqueeze(%grad, %d0)
              %e1 : Tensor = aten::expand(%u, %sizes, %false)
              -> (%e1)
            block1():
              %m : Tensor = prim::CallFunction(%unsqueeze_multiple, %grad, %dim_list, %n)
              %e2 : Tensor = aten::expand(%m, %sizes, %false)
              -> (%e2)
          -> (%r1)
      -> (%r)
    block1():
      %e3 : Tensor = aten::expand(%grad, %sizes, %false)
      -> (%e3)
  return (%out)
""",
    "AD_safe_size": """graph(%sizes : int[], %dims : int[]?):
  %none : NoneType = prim::Constant()
  %true : bool = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %n : int = aten::len(%sizes)
  %empty : bool = aten::eq(%n, %zero)
  %out : int = prim::If(%empty)
    block0():
      -> (%one)
    block1():
      %all : bool = aten::__is__(%dims, %none)
      %size : int = prim::If(%all)
        block0():
          %p : int = prim::Loop(%n, %true, %one)
            block0(%i : int, %acc : int):
              %s : int = aten::__getitem__(%sizes, %i)
              %next : int = aten::mul(%acc, %s)
              -> (%true, %next)
          -> (%p)
        block1():
          %dim_list : int[] = prim::unchecked_cast(%dims)
          %k : int = aten::len(%dim_list)
          %q : int = prim::Loop(%k, %true, %one)
            block0(%j : int, %acc2 : int):
              %d : int = aten::__getitem__(%dim_list, %j)
              %s2 : int = aten::__getitem__(%sizes, %d)
              %next2 : int = aten::mul(%acc2, %s2)
              -> (%true, %next2)
          -> (%q)
      -> (%size)
  return (%out)
""",
    "AD_logsumexp_backward": """graph(%grad : Tensor, %self : Tensor, %result : Tensor, %dim : int[], %keepdim : bool):
  %false : bool = prim::Constant[value=0]()
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %unsqueeze_multiple : Function = prim::Constant[name="AD_unsqueeze_multiple"]()
  %drop : bool = aten::__not__(%keepdim)
  %rank : int = aten::dim(%self)
  %not_scalar : bool = aten::ne(%rank, %zero)
  %reinsert : bool = prim::If(%drop)
    block0():
      -> (%not_scalar)
    block1():
      -> (%false)
  %g : Tensor, %r : Tensor = prim::If(%reinsert)
    block0():
      %self_size : int[] = aten::size(%self)
      %n_dims : int = aten::len(%self_size)
      %g1 : Tensor = prim::CallFunction(%unsqueeze_multiple, %grad, %dim, %n_dims)
      %r1 : Tensor = prim::CallFunction(%unsqueeze_multiple, %result, %dim, %n_dims)
      -> (%g1, %r1)
    block1():
      -> (%grad, %result)
  %centered : Tensor = aten::sub(%self, %r, %one)
  %e : Tensor = aten::exp(%centered)
  %out : Tensor = aten::mul(%g, %e)
  return (%out)
""",
    "AD_bool_to_int": """graph(%b : bool):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %i : int = prim::If(%b)
    block0():
      -> (%one)
    block1():
      -> (%zero)
  return (%i)
""",
    "AD_var_backward_0": """graph(%grad : Tensor, %self : Tensor, %correction : Scalar):
  %none : NoneType = prim::Constant()
  %one : int = prim::Constant[value=1]()
  %two : float = prim::Constant[value=2.]()
  %mean : Tensor = aten::mean(%self, %none)
  %centered : Tensor = aten::sub(%self, %mean, %one)
  %p : Tensor = aten::mul(%grad, %centered)
  %p2 : Tensor = aten::mul(%p, %two)
  %numel : int = aten::numel(%self)
  %count : Scalar = aten::sub(%numel, %correction)
  %out : Tensor = aten::div(%p2, %count)
  return (%out)
""",
    "AD_var_backward_1": """graph(%grad : Tensor, %self : Tensor, %dim : int[], %correction : Scalar, %keepdim : bool):
  %none : NoneType = prim::Constant()
  %true : bool = prim::Constant[value=1]()
  %false : bool = prim::Constant[value=0]()
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %two : float = prim::Constant[value=2.]()
  %var_backward_0 : Function = prim::Constant[name="AD_var_backward_0"]()
  %unsqueeze_multiple : Function = prim::Constant[name="AD_unsqueeze_multiple"]()
  %safe_size : Function = prim::Constant[name="AD_safe_size"]()
  %rank : int = aten::dim(%self)
  %scalar : bool = aten::eq(%rank, %zero)
  %out : Tensor = prim::If(%scalar)
    block0():
      %all : Tensor = prim::CallFunction(%var_backward_0, %grad, %self, %correction)
      -> (%all)
    block1():
      %self_size : int[] = aten::size(%self)
      %drop : bool = aten::__not__(%keepdim)
      %matrix : bool = aten::gt(%rank, %one)
      %reinsert : bool = prim::If(%drop)
        block0():
          -> (%matrix)
        block1():
          -> (%false)
      %g : Tensor = prim::If(%reinsert)
        block0():
          %n_dims : int = aten::len(%self_size)
          %g1 : Tensor = prim::CallFunction(%unsqueeze_multiple, %grad, %dim, %n_dims)
          -> (%g1)
        block1():
          -> (%grad)
      %mean : Tensor = aten::mean(%self, %dim, %true, %none)
      %centered : Tensor = aten::sub(%self, %mean, %one)
      %p : Tensor = aten::mul(%g, %centered)
      %p2 : Tensor = aten::mul(%p, %two)
      %n : int = prim::CallFunction(%safe_size, %self_size, %dim)
      %count : Scalar = aten::sub(%n, %correction)
      %some : Tensor = aten::div(%p2, %count)
      -> (%some)
  return (%out)
""",
    "AD_var_backward_2": """graph(%grad : Tensor, %self : Tensor, %dim : int[]?, %correction : Scalar?, %keepdim : bool):
  %none : NoneType = prim::Constant()
  %true : bool = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %var_backward_0 : Function = prim::Constant[name="AD_var_backward_0"]()
  %var_backward_1 : Function = prim::Constant[name="AD_var_backward_1"]()
  %unset : bool = aten::__is__(%correction, %none)
  %c : Scalar = prim::If(%unset)
    block0():
      -> (%one)
    block1():
      %given : Scalar = prim::unchecked_cast(%correction)
      -> (%given)
  %rank : int = aten::dim(%self)
  %scalar : bool = aten::eq(%rank, %zero)
  %whole : bool = prim::If(%scalar)
    block0():
      -> (%true)
    block1():
      %all : bool = aten::__is__(%dim, %none)
      -> (%all)
  %out : Tensor = prim::If(%whole)
    block0():
      %r0 : Tensor = prim::CallFunction(%var_backward_0, %grad, %self, %c)
      -> (%r0)
    block1():
      %dim_list : int[] = prim::unchecked_cast(%dim)
      %r1 : Tensor = prim::CallFunction(%var_backward_1, %grad, %self, %dim_list, %c, %keepdim)
      -> (%r1)
  return (%out)
""",
    "AD_adaptive_avg_pool1d_backward": """graph(%grad : Tensor, %input : Tensor, %output_size : int[]):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %pool2d : Function = prim::Constant[name="AD_adaptive_avg_pool2d_backward"]()
  %o0 : int = aten::__getitem__(%output_size, %zero)
  %output_size_2d : int[] = prim::ListConstruct(%one, %o0)
  %grad_2d : Tensor = aten::unsqueeze(%grad, %two)
  %input_2d : Tensor = aten::unsqueeze(%input, %two)
  %r : Tensor = prim::CallFunction(%pool2d, %grad_2d, %input_2d, %output_size_2d)
  %out : Tensor = aten::squeeze(%r, %two)
  return (%out)
""",
}


def _adaptive_avg_pool_backward_graph(nd: int) -> str:
    """symbolic_script's `AD_adaptive_avg_pool{nd}d_backward`: an output of size 1 in every
    pooled dim is the mean over the window (the gradient expanded and divided by its size),
    any other size the backward op."""
    lines = ["graph(%grad : Tensor, %self : Tensor, %output_size : int[]):",
             "  %false : bool = prim::Constant[value=0]()",
             "  %zero : int = prim::Constant[value=0]()",
             "  %one : int = prim::Constant[value=1]()"]
    lines += [f"  %i{k} : int = prim::Constant[value={k}]()" for k in range(1, nd)]
    lines += [f"  %m{k} : int = prim::Constant[value=-{k}]()" for k in range(1, nd + 1)]
    lines += ["  %o0 : int = aten::__getitem__(%output_size, %zero)",
              "  %c0 : bool = aten::eq(%o0, %one)"]
    cond = "%c0"
    for k in range(1, nd):  # `output_size[0] == 1 and output_size[1] == 1 and ...`
        lines += [f"  %g{k} : bool = prim::If({cond})",
                  "    block0():",
                  f"      %o{k} : int = aten::__getitem__(%output_size, %i{k})",
                  f"      %c{k} : bool = aten::eq(%o{k}, %one)",
                  f"      -> (%c{k})",
                  "    block1():",
                  "      -> (%false)"]
        cond = f"%g{k}"
    lines += [f"  %out : Tensor = prim::If({cond})",
              "    block0():",
              "      %self_size : int[] = aten::size(%self)",
              "      %target : int[] = aten::size(%self)",
              "      %expanded : Tensor = aten::expand(%grad, %target, %false)",
              "      %n1 : int = aten::__getitem__(%self_size, %m1)"]
    for k in range(2, nd + 1):
        lines += [f"      %d{k} : int = aten::__getitem__(%self_size, %m{k})",
                  f"      %n{k} : int = aten::mul(%n{k - 1}, %d{k})"]
    lines += [f"      %global : Tensor = aten::div(%expanded, %n{nd})",
              "      -> (%global)",
              "    block1():",
              f"      %windows : Tensor = aten::_adaptive_avg_pool{nd}d_backward(%grad, %self)",
              "      -> (%windows)",
              "  return (%out)"]
    return "\n".join(lines) + "\n"


_TEXT.update({f"AD_adaptive_avg_pool{nd}d_backward": _adaptive_avg_pool_backward_graph(nd)
                for nd in (2, 3)})

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


def inlined_graphs() -> dict[str, Graph]:
    """Name -> graph of the helpers a native runner inlines: all but those `fold_helper_calls`
    folds, which stay calls (inside the inlined ones too) until their arguments are constants."""
    return {name: _graph(name) for name in _TEXT if name not in _FOLDS}


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
# size lists a df receives; permute's dims and reduction dims are constants already)

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


# (the ops a fold makes get complete types where their operands have them: a native runner
# folds after profiling, so nothing records them; views get PyTorch's strides)

def _layout(v: Value):
    """(sizes, strides) of a complete tensor type, else None."""
    t = v.type
    sizes = t.complete_sizes() if isinstance(t, TensorType) else None
    if sizes is None or t.strides is None or None in t.strides:
        return None
    return list(sizes), list(t.strides)


def _op(graph: Graph, kind: str, *args, like: Optional[Value] = None, sizes=None, strides=None) -> Value:
    """`kind(*args)` at the insertion point (Python numbers and lists as constants), typed as
    `like`'s type with `sizes` (contiguous unless `strides`) when `like` has a complete type."""
    ins = [a if isinstance(a, Value) else graph.insert_constant(a) for a in args]
    out = graph.insert(kind, ins).output
    if like is not None and _layout(like) is not None and sizes is not None:
        out.type = like.type.with_(sizes=tuple(sizes), strides=tuple(
            strides if strides is not None else contiguous_strides(sizes)))
    return out


def _unsqueeze_multiple(graph: Graph, t: Value, dims: list, n_dims: int) -> Value:
    # unsqueeze at each marked position in increasing order (a negative dim marks from the end)
    for d in sorted({d % n_dims for d in dims} if n_dims else ()):
        layout = _layout(t)
        sizes = strides = None
        if layout is not None:
            sizes, strides = layout
            stride = 1 if d >= len(sizes) else sizes[d] * strides[d]
            sizes, strides = sizes[:d] + [1] + sizes[d:], strides[:d] + [stride] + strides[d:]
        t = _op(graph, "aten::unsqueeze", t, d, like=t, sizes=sizes, strides=strides)
    return t


def _sum_backward(graph: Graph, grad: Value, sizes: list, dims, keepdim: bool) -> Value:
    if not keepdim and len(sizes) > 0 and dims is not None:
        grad = _unsqueeze_multiple(graph, grad, dims, len(sizes))
    return _op(graph, "aten::expand", grad, list(sizes), False)  # (typed as the call was)


def _safe_size(graph: Graph, sizes: list, dims) -> Value:
    size = 1
    for s in (() if len(sizes) == 0 else sizes if dims is None else [sizes[d] for d in dims]):
        size *= s
    return graph.insert_constant(size)


def _bool_to_int(graph: Graph, b: bool) -> Value:
    return graph.insert_constant(1 if b else 0)


def _broadcast(*values: Value):
    layouts = [_layout(v) for v in values]
    return None if None in layouts else list(np.broadcast_shapes(*(tuple(s) for s, _ in layouts)))


def _var_backward(graph: Graph, grad: Value, self: Value, sizes: list, dims, correction) -> Value:
    """`grad * (self - self.mean(dims, True)) * 2.0 / (count - correction)` (the whole tensor
    when `dims` is None), with the count a constant."""
    if dims is None:
        mean = _op(graph, "aten::mean", self, None, like=self, sizes=[])
    else:
        axes = {d % len(sizes) for d in dims}
        mean = _op(graph, "aten::mean", self, list(dims), True, None, like=self,
                   sizes=[1 if i in axes else s for i, s in enumerate(sizes)])
    count = 1
    for s in (sizes if dims is None else [sizes[d] for d in dims]):
        count *= s
    centered = _op(graph, "aten::sub", self, mean, 1, like=self, sizes=sizes)
    shape = _broadcast(grad, centered)
    product = _op(graph, "aten::mul", grad, centered, like=self, sizes=shape)
    doubled = _op(graph, "aten::mul", product, 2.0, like=self, sizes=shape)
    return _op(graph, "aten::div", doubled, count - correction, like=self, sizes=shape)


def _var_backward_0(graph: Graph, grad: Value, self: Value, correction) -> Optional[Value]:
    layout = _layout(self)
    return None if layout is None else _var_backward(graph, grad, self, layout[0], None, correction)


def _var_backward_1(graph: Graph, grad: Value, self: Value, dims: list, correction, keepdim: bool):
    layout = _layout(self)
    if layout is None:
        return None
    sizes = layout[0]
    if not sizes:
        return _var_backward(graph, grad, self, sizes, None, correction)
    if not keepdim and len(sizes) > 1:
        grad = _unsqueeze_multiple(graph, grad, dims, len(sizes))
    return _var_backward(graph, grad, self, sizes, dims, correction)


def _var_backward_2(graph: Graph, grad: Value, self: Value, dims, correction, keepdim: bool):
    correction = 1 if correction is None else correction
    if dims is None:
        return _var_backward_0(graph, grad, self, correction)
    return _var_backward_1(graph, grad, self, dims, correction, keepdim)


def _logsumexp_backward(graph: Graph, grad: Value, self: Value, result: Value, dims: list, keepdim: bool):
    layout = _layout(self)
    if layout is None:
        return None
    sizes = layout[0]
    if not keepdim and sizes:
        grad = _unsqueeze_multiple(graph, grad, dims, len(sizes))
        result = _unsqueeze_multiple(graph, result, dims, len(sizes))
    exp = _op(graph, "aten::exp", _op(graph, "aten::sub", self, result, 1, like=self, sizes=sizes),
              like=self, sizes=sizes)
    return _op(graph, "aten::mul", grad, exp, like=self, sizes=_broadcast(grad, exp))


def _expand_strides(grad: Value, sizes: list):
    """The strides of `grad` expanded to `sizes` (0 along new and broadcast dims)."""
    layout = _layout(grad)
    if layout is None:
        return None
    gs, st = layout
    lead = len(sizes) - len(gs)
    return [0 if i < lead or gs[i - lead] != s else st[i - lead] for i, s in enumerate(sizes)]


def _adaptive_avg_pool_backward(nd: int):
    """`AD_adaptive_avg_pool{nd}d_backward` (2-D and 3-D): a global pool's gradient is the
    expanded gradient over the window size, any other the backward op."""
    def rule(graph: Graph, grad: Value, self: Value, output_size: list):
        layout = _layout(self)
        if layout is None:
            return None
        sizes = layout[0]
        if any(o != 1 for o in output_size[:nd]):
            return _op(graph, f"aten::_adaptive_avg_pool{nd}d_backward", grad, self, like=self, sizes=sizes)
        count = 1
        for s in sizes[-nd:]:
            count *= s
        expanded = _op(graph, "aten::expand", grad, sizes, False, like=self, sizes=sizes,
                       strides=_expand_strides(grad, sizes))
        return _op(graph, "aten::div", expanded, count, like=self, sizes=sizes)
    return rule


def _adaptive_avg_pool1d_backward(graph: Graph, grad: Value, self: Value, output_size: list):
    """`AD_adaptive_avg_pool1d_backward`: the 2-D one on the inputs unsqueezed at dim 2."""
    layout = _layout(self)
    if layout is None or len(layout[0]) < 2:
        return None
    sizes = layout[0]
    if output_size[0] == 1:
        count = sizes[-1]  # (the 2-D pool's window: the length and the unsqueezed 1)
        expanded = _op(graph, "aten::expand", grad, sizes, False, like=self, sizes=sizes,
                       strides=_expand_strides(grad, sizes))
        return _op(graph, "aten::div", expanded, count, like=self, sizes=sizes)
    grad2, self2 = (_unsqueeze_multiple(graph, v, [2], len(_layout(v)[0]) + 1) if _layout(v) else None
                    for v in (grad, self))
    if grad2 is None or self2 is None:
        return None
    sizes2 = _layout(self2)[0]
    pooled = _op(graph, "aten::_adaptive_avg_pool2d_backward", grad2, self2, like=self, sizes=sizes2)
    return _op(graph, "aten::squeeze", pooled, 2, like=self, sizes=sizes2[:2] + sizes2[3:])


# name -> (how many leading arguments are values, the rule on those and the constants after;
# a rule that needs a tensor's complete type returns None without it)
_FOLDS = {"AD_permute_backward": (1, _permute_inverse), "AD_unsqueeze_to_0": (1, _unsqueeze_to_0),
          "AD_unsqueeze_to_1": (1, _unsqueeze_to_1), "AD_unsqueeze_multiple": (1, _unsqueeze_multiple),
          "AD_sum_backward": (1, _sum_backward), "AD_safe_size": (0, _safe_size),
          "AD_bool_to_int": (0, _bool_to_int), "AD_var_backward_0": (2, _var_backward_0),
          "AD_var_backward_1": (2, _var_backward_1), "AD_var_backward_2": (2, _var_backward_2),
          "AD_logsumexp_backward": (3, _logsumexp_backward),
          "AD_adaptive_avg_pool1d_backward": (2, _adaptive_avg_pool1d_backward),
          "AD_adaptive_avg_pool2d_backward": (2, _adaptive_avg_pool_backward(2)),
          "AD_adaptive_avg_pool3d_backward": (2, _adaptive_avg_pool_backward(3))}


def fold_helper_calls(graph: Graph) -> bool:
    """Calls of the helpers with loops (`AD_permute_backward`, `AD_unsqueeze_*`,
    `AD_sum_backward`, `AD_safe_size`) and of `AD_bool_to_int` whose list and number arguments
    are constants become the ops they amount to (a permute by the inverse dims; a reshape to
    the unsqueezed sizes; unsqueezes and an expand; a number), so that native code runs them;
    True when one was folded."""
    changed = False
    for n in list(graph.walk()):
        if n.kind != "prim::CallFunction" or not n.inputs:
            continue
        fn = n.inputs[0].node
        fold = _FOLDS.get(fn.attr("name")) if fn.kind == "prim::Constant" and fn.has_attr("name") else None
        if fold is None:
            continue
        n_values, rule = fold
        values, constants = n.inputs[1:1 + n_values], n.inputs[1 + n_values:]
        if any(v.node.kind != "prim::Constant" for v in constants):
            continue
        graph.set_insert_point(n)
        out = rule(graph, *values, *(constant_value(v.node) for v in constants))
        if out is None:
            continue
        if out not in values and (_layout(n.output) is not None or _layout(out) is None):
            out.type = n.output.type  # (the layout a profiling run recorded for the call)
        n.output.replace_all_uses_with(out)
        n.destroy()
        changed = True
    return changed
