"""Before/after pairs of PyTorch's passes on frozen and inference graphs, and of remove_mutation and
create_autodiff_subgraphs on hand-written graphs (torch 2.13): for each
small graph, the text before and after `torch._C._jit_pass_<name>`, plus the values of the
frozen graph's `<Tensor>` constants (keyed by value name) so folding can be checked numerically.

Regenerate (dev venv with torch 2.13.0), then replace `tests/fixtures/passes_frozen` with the
output's `passes_frozen/`::

    .venv-torch/bin/python -m irjit.tools.fixturegen --only pass_pairs_frozen --out tests/fixtures
"""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn

from .common import (NORM_HOME, check_no_leaks, normalize, reset_jit_state, save_npz, seed, write_json,
                     write_text)

# --- hand-written graphs (parse_ir), in the style of PyTorch's own pass tests -------------

HAND = {
    "remove_mutation": {
        "fresh_add": """graph(%x : Tensor):
  %1 : int = prim::Constant[value=1]()
  %2 : Tensor = aten::mul(%x, %x)
  %3 : Tensor = aten::add_(%2, %1, %1)
  %4 : Tensor = aten::relu(%2)
  return (%3, %4)
""",
        "input_mutation_kept": """graph(%x : Tensor):
  %1 : int = prim::Constant[value=1]()
  %2 : Tensor = aten::add_(%x, %1, %1)
  return (%2)
""",
        "view_alias_kept": """graph(%x : Tensor):
  %1 : int = prim::Constant[value=1]()
  %2 : Tensor = aten::mul(%x, %x)
  %3 : Tensor = aten::t(%2)
  %4 : Tensor = aten::mul_(%2, %1)
  return (%3)
""",
        "chain": """graph(%x : Tensor):
  %1 : int = prim::Constant[value=1]()
  %2 : float = prim::Constant[value=2.]()
  %3 : Tensor = aten::mul(%x, %2)
  %4 : Tensor = aten::add_(%3, %x, %1)
  %5 : Tensor = aten::mul_(%3, %2)
  %6 : Tensor = aten::sigmoid_(%3)
  return (%3)
""",        # RemoveListMutation (the list half of _jit_pass_remove_mutation)
        "list_append_set": """graph(%a : Tensor, %b : Tensor, %c : Tensor):
  %0 : int = prim::Constant[value=0]()
  %1 : int = prim::Constant[value=1]()
  %l : Tensor[] = prim::ListConstruct(%a)
  %2 : Tensor[] = aten::append(%l, %b)
  %3 : Tensor[] = aten::append(%l, %c)
  %4 : Tensor[] = aten::_set_item(%l, %1, %a)
  %r : Tensor = aten::cat(%l, %0)
  return (%r)
""",
        "list_read_before_append_kept": """graph(%a : Tensor, %b : Tensor):
  %0 : int = prim::Constant[value=0]()
  %l : Tensor[] = prim::ListConstruct(%a)
  %n : int = aten::len(%l)
  %2 : Tensor[] = aten::append(%l, %b)
  %r : Tensor = aten::cat(%l, %0)
  return (%r, %n)
""",
        "list_append_in_loop_kept": """graph(%a : Tensor, %n : int):
  %0 : int = prim::Constant[value=0]()
  %t : bool = prim::Constant[value=1]()
  %l : Tensor[] = prim::ListConstruct(%a)
  %k : int = prim::Loop(%n, %t, %0)
    block0(%i : int, %j : int):
      %2 : Tensor[] = aten::append(%l, %a)
      -> (%t, %i)
  %r : Tensor = aten::cat(%l, %0)
  return (%r, %k)
""",
        "list_insert_out_of_range_kept": """graph(%a : Tensor, %b : Tensor):
  %0 : int = prim::Constant[value=0]()
  %5 : int = prim::Constant[value=5]()
  %l : Tensor[] = prim::ListConstruct(%a)
  %2 : Tensor[] = aten::_set_item(%l, %5, %b)
  %r : Tensor = aten::cat(%l, %0)
  return (%r)
""",
    },
    # create_autodiff_subgraphs (threshold 2): where constants go, outputs that alias inputs or
    # each other, profiled types whose requires_grad is unknown
    "create_autodiff_subgraphs": {
        "constants_inside_and_outside": """graph(%x : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu), %y : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu)):
  %one : int = prim::Constant[value=1]()
  %two : float = prim::Constant[value=2.]()
  %a : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu) = aten::mul(%x, %two)
  %b : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu) = aten::add(%a, %y, %one)
  %c : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu) = aten::tanh(%b)
  %s : int = aten::size(%c, %one)
  %d : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu) = aten::add(%c, %x, %one)
  %e : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu) = aten::mul(%d, %two)
  %f : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu) = aten::neg(%e)
  return (%f, %s)
""",
        "constant_after_group_use": """graph(%x : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu)):
  %a : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu) = aten::neg(%x)
  %b : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu) = aten::sigmoid(%a)
  %three : float = prim::Constant[value=3.]()
  %c : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu) = aten::mul(%b, %three)
  %d : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu) = aten::exp(%c)
  %n : float = aten::mul(%three, %three)
  return (%d, %n)
""",
        "view_of_input_output": """graph(%x : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu), %y : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu)):
  %a : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu) = aten::mul(%x, %y)
  %b : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu) = aten::t(%x)
  %c : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu) = aten::sigmoid(%a)
  %d : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu) = aten::mul(%c, %b)
  return (%d, %b)
""",
        "view_of_group_output": """graph(%x : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu), %y : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu)):
  %zero : int = prim::Constant[value=0]()
  %a : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu) = aten::mul(%x, %y)
  %c : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu) = aten::sigmoid(%a)
  %b : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu) = aten::t(%c)
  %d : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu) = aten::tanh(%c)
  return (%d, %b)
""",
        "same_output_twice": """graph(%x : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu), %y : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu)):
  %a : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu) = aten::mul(%x, %y)
  %b : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu) = aten::sigmoid(%a)
  %c : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu) = aten::tanh(%b)
  return (%c, %c, %b)
""",
        "input_returned": """graph(%x : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu), %y : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu)):
  %a : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu) = aten::mul(%x, %y)
  %b : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu) = aten::sigmoid(%a)
  %c : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu) = aten::tanh(%b)
  return (%c, %x)
""",
        "profiled_types_unknown_requires_grad": """graph(%x : Float(4, 4, strides=[4, 1], device=cpu), %y : Float(4, 4, strides=[4, 1], requires_grad=0, device=cpu)):
  %one : int = prim::Constant[value=1]()
  %a : Float(4, 4, strides=[4, 1], device=cpu) = aten::mul(%x, %y)
  %b : Float(4, 4, strides=[4, 1], device=cpu) = aten::add(%a, %y, %one)
  %c : Float(4, 4, strides=[4, 1], requires_grad=0, device=cpu) = aten::mul(%y, %y)
  %d : Float(4, 4, strides=[4, 1], requires_grad=0, device=cpu) = aten::neg(%c)
  %e : Float(4, 4, strides=[4, 1], device=cpu) = aten::mul(%b, %d)
  return (%e)
""",
        "two_groups_share_a_constant": """graph(%x : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu), %y : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu)):
  %one : int = prim::Constant[value=1]()
  %two : float = prim::Constant[value=2.]()
  %a : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu) = aten::mul(%x, %two)
  %b : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu) = aten::add(%a, %y, %one)
  %zero : int = prim::Constant[value=0]()
  %none : NoneType = prim::Constant()
  %r : Tensor = aten::cumsum(%b, %zero, %none)
  %c : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu) = aten::mul(%r, %two)
  %d : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu) = aten::add(%c, %b, %one)
  return (%d)
""",
        "group_in_if_constant_outside": """graph(%x : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu), %flag : bool):
  %two : float = prim::Constant[value=2.]()
  %r : Tensor = prim::If(%flag)
    block0():
      %a : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu) = aten::mul(%x, %two)
      %b : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu) = aten::tanh(%a)
      %c : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu) = aten::mul(%b, %two)
      -> (%c)
    block1():
      -> (%x)
  return (%r)
""",
        "inplace_splits": """graph(%x : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu), %y : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu)):
  %one : int = prim::Constant[value=1]()
  %a : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu) = aten::mul(%x, %y)
  %b : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu) = aten::sigmoid(%a)
  %c : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu) = aten::add_(%b, %y, %one)
  %d : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu) = aten::tanh(%c)
  %e : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu) = aten::mul(%d, %x)
  return (%e)
""",
        "chunk_outputs": """graph(%x : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu), %y : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu)):
  %a : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu) = aten::mul(%x, %y)
  %p : Float(4, 2, strides=[4, 1], requires_grad=1, device=cpu), %q : Float(4, 2, strides=[4, 1], requires_grad=1, device=cpu) = prim::ConstantChunk[chunks=2, dim=1](%a)
  %b : Float(4, 2, strides=[2, 1], requires_grad=1, device=cpu) = aten::sigmoid(%p)
  %c : Float(4, 2, strides=[2, 1], requires_grad=1, device=cpu) = aten::mul(%b, %q)
  return (%c, %q)
""",
        "views_between": """graph(%x : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu), %y : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu)):
  %one : int = prim::Constant[value=1]()
  %shape : int[] = prim::Constant[value=[16]]()
  %a : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu) = aten::mul(%x, %y)
  %b : Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu) = aten::sigmoid(%a)
  %v : Float(16, strides=[1], requires_grad=1, device=cpu) = aten::view(%b, %shape)
  %c : Float(16, strides=[1], requires_grad=1, device=cpu) = aten::tanh(%v)
  %d : Float(16, strides=[1], requires_grad=1, device=cpu) = aten::add(%c, %v, %one)
  return (%d)
""",
    },
    "remove_inplace_ops": {
        "zero_fill": """graph(%x : Tensor, %m : Tensor):
  %1 : float = prim::Constant[value=2.]()
  %2 : Tensor = aten::mul(%x, %1)
  %3 : Tensor = aten::zero_(%2)
  %4 : Tensor = aten::fill_(%3, %1)
  %5 : Tensor = aten::masked_fill_(%4, %m, %1)
  %6 : Tensor = aten::div_(%5, %1)
  return (%6)
""",
    },
    "inplace_to_functional_activation": {
        "activations": """graph(%x : Tensor):
  %0 : int = prim::Constant[value=1]()
  %1 : Tensor = aten::mul(%x, %x)
  %2 : Tensor = aten::relu_(%1)
  %3 : Tensor = aten::sigmoid_(%1)
  %4 : Tensor = aten::add_(%1, %x, %0)
  %5 : Tensor = aten::tanh_(%x)
  return (%1, %5)
""",
    },
    "functional_to_inplace_activation": {
        "typed_sigmoid": """graph(%x : Float(2, 3)):
  %1 : Float(2, 3) = aten::mul(%x, %x)
  %2 : Float(2, 3) = aten::sigmoid(%1)
  %3 : Float(2, 3) = aten::relu(%2)
  %4 : Float(2, 3) = aten::silu(%x)
  %5 : Tensor = aten::relu(%1)
  return (%3, %4)
""",
    },
    "refine_tuple_types": {
        "nested": """graph(%x : Float(2, 3), %n : int):
  %t : (Tensor, int) = prim::TupleConstruct(%x, %n)
  %u : (Tensor, (Tensor, int)) = prim::TupleConstruct(%x, %t)
  return (%u)
""",
    },
    "integer_value_refinement": {
        "if_eq": """graph(%x : Tensor, %n : int):
  %c3 : int = prim::Constant[value=3]()
  %one : int = prim::Constant[value=1]()
  %eq : bool = aten::eq(%n, %c3)
  %r : int = prim::If(%eq)
    block0():
      %a : int = aten::add(%n, %one)
      -> (%a)
    block1():
      %b : int = aten::mul(%n, %n)
      -> (%b)
  return (%r)
""",
        "raise_ne": """graph(%n : int, %m : int):
  %c4 : int = prim::Constant[value=4]()
  %msg : str = prim::Constant[value="bad"]()
  %none : NoneType = prim::Constant()
  %ne : bool = aten::ne(%n, %c4)
  prim::If(%ne)
    block0():
      prim::RaiseException(%msg, %none)
      -> ()
    block1():
      -> ()
  %s : int = aten::add(%n, %m)
  return (%s, %n)
""",
        "and_or": """graph(%n : int, %m : int):
  %c2 : int = prim::Constant[value=2]()
  %c5 : int = prim::Constant[value=5]()
  %f : bool = prim::Constant[value=0]()
  %a : bool = aten::eq(%n, %c2)
  %both : bool = prim::If(%a)
    block0():
      %b : bool = aten::eq(%m, %c5)
      -> (%b)
    block1():
      -> (%f)
  %nb : bool = aten::__not__(%both)
  %r : int = prim::If(%nb)
    block0():
      -> (%n)
    block1():
      %t : int = aten::mul(%n, %m)
      -> (%t)
  %u : int = prim::If(%a)
    block0():
      -> (%c2)
    block1():
      -> (%n)
  return (%r, %u, %m)
""",
    },
    "fuse_addmm": {
        "mm_add": """graph(%x : Float(4, 5), %w : Float(5, 3), %b : Float(3)):
  %1 : int = prim::Constant[value=1]()
  %2 : Float(4, 3) = aten::mm(%x, %w)
  %3 : Float(4, 3) = aten::add(%2, %b, %1)
  %4 : Float(4, 3) = aten::mm(%x, %w)
  %5 : Float(4, 3) = aten::add(%b, %4, %1)
  %6 : Float(4, 3) = aten::matmul(%x, %w)
  %7 : Float(4, 3) = aten::add(%6, %b, %1)
  return (%3, %5, %7)
""",
    },
    "fuse_linear": {
        "addmm_matmul": """graph(%x : Tensor, %w : Tensor, %b : Tensor):
  %1 : int = prim::Constant[value=1]()
  %2 : Tensor = aten::t(%w)
  %3 : Tensor = aten::addmm(%b, %x, %2, %1, %1)
  %4 : Tensor = aten::t(%w)
  %5 : Tensor = aten::matmul(%x, %4)
  %6 : Tensor = aten::add_(%5, %b, %1)
  %7 : Tensor = aten::t(%w)
  %8 : Tensor = aten::matmul(%x, %7)
  return (%3, %6, %8)
""",
    },
    "erase_number_types": {
        "scalars": """graph(%x : Tensor, %a : int, %b : float):
  %1 : int = prim::Constant[value=2]()
  %2 : float = prim::Constant[value=0.5]()
  %3 : bool = prim::Constant[value=1]()
  %4 : int = aten::mul(%a, %1)
  %5 : Tensor = prim::NumToTensor(%4)
  %6 : float = aten::Float(%5)
  %7 : Tensor = aten::add(%x, %2, %1)
  %8 : int = aten::Int(%7)
  %9 : float = aten::add(%b, %6)
  return (%7, %8, %9, %3)
""",
    },
}


def _script_fork(x):
    fut = torch.jit.fork(torch.neg, x)
    y = torch.relu(x)
    return torch.jit.wait(fut) + y


def _script_tuples(x: torch.Tensor):
    t = (x, x.size(0))
    return t


def _script_int_refinement(x: torch.Tensor):
    if x.size(0) == 3:
        return x.size(0) + 1
    return 0


SCRIPTED = {
    "inline_fork_wait": {"scripted_fork": _script_fork},
    "integer_value_refinement": {"size_eq": _script_int_refinement},
}


# --- frozen modules ----------------------------------------------------------------------

class ConvBn(nn.Module):
    input_shape = (2, 3, 8, 8)

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.bn = nn.BatchNorm2d(4)
        with torch.no_grad():  # statistics as after training, so folding has work to do
            self.bn.running_mean.uniform_(-0.5, 0.5)
            self.bn.running_var.uniform_(0.5, 2.0)
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))


class ConvAdd(nn.Module):
    input_shape = (2, 3, 8, 8)

    def __init__(self):
        super().__init__()
        # 12 channels: torch prints tensors above 10 elements as `<Tensor>` (the npz has them)
        self.conv = nn.Conv2d(3, 12, 3, bias=False)
        self.register_buffer("shift", torch.randn(1, 12, 1, 1))

    def forward(self, x):
        return self.conv(x) - self.shift + 1.5


class ConvMul(nn.Module):
    input_shape = (2, 3, 8, 8)

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 12, 3)
        self.register_buffer("scale", torch.randn(1, 12, 1, 1))

    def forward(self, x):
        return self.conv(x) * self.scale / 2.0


class LinearBn(nn.Module):
    input_shape = (4, 6)

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 12)
        self.bn = nn.BatchNorm1d(12)
        with torch.no_grad():
            self.bn.running_mean.uniform_(-0.5, 0.5)
            self.bn.running_var.uniform_(0.5, 2.0)

    def forward(self, x):
        return self.bn(self.fc(x))


class ConvChain(nn.Module):
    """conv -> bn -> mul -> add -> dropout: optimize_frozen_graph folds it all into the conv."""
    input_shape = (2, 3, 8, 8)


    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 12, 3)
        self.bn = nn.BatchNorm2d(12)
        self.drop = nn.Dropout(0.1)
        self.register_buffer("scale", torch.randn(1, 12, 1, 1))

    def forward(self, x):
        return self.drop(self.bn(self.conv(x)) * self.scale + 0.5)


class LinearDropout(nn.Module):
    input_shape = (4, 6)

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 5)
        self.drop = nn.Dropout(0.25)

    def forward(self, x):
        return self.drop(self.fc(x))


FROZEN = {
    "fold_frozen_conv_bn": {"conv_bn": ConvBn},
    "fold_frozen_conv_add_or_sub": {"conv_add": ConvAdd},
    "fold_frozen_conv_mul_or_div": {"conv_mul": ConvMul},
    "fold_frozen_linear_bn": {"linear_bn": LinearBn},
    "optimize_frozen_graph": {"conv_bn": ConvBn, "linear_dropout": LinearDropout,
                              "conv_chain": ConvChain, "linear_bn": LinearBn},
    "transpose_frozen_linear": {"linear": LinearDropout},
    "lower_graph": {"conv_mul": ConvMul},
    "remove_dropout": {"linear_dropout": LinearDropout},
}


def _text(graph) -> str:
    """The graph as torch prints it, paths normalised (this file reads `NORM_HOME/<name>`)."""
    here = Path(__file__).resolve()
    text = normalize(str(graph)).replace(str(here), f"{NORM_HOME}/{here.name}")
    check_no_leaks(text, "graph text")
    return text


FREEZE_MODULE = {"conv_bn": ConvBn, "linear_dropout": LinearDropout, "conv_mul": ConvMul}


def _tensor_constants(graph) -> "OrderedDict[str, object]":
    found = OrderedDict()
    for n in graph.findAllNodes("prim::Constant"):
        out = n.output()
        if isinstance(out.type(), torch._C.TensorType) and n.hasAttribute("value"):
            found[out.debugName()] = n.t("value").detach().numpy()
    return found


def _freeze_module_pair(cls, name):
    """(before, after, params) of `torch._C._freeze_module` on the scripted eval module: the
    graph reading attributes through `prim::GetAttr`, then with them inlined as constants."""
    seed(name)
    m = torch.jit.script(cls().eval())
    before = m.forward.graph.copy()
    torch._C._jit_pass_inline(before)
    frozen = torch._C._freeze_module(m._c, preserveParameters=False)
    params = OrderedDict((k, v.detach().numpy()) for k, v in m.state_dict().items())
    for path, sub in m.named_modules():  # the `training` flags the graph reads, as 0-d bools
        params[f"{path}.training" if path else "training"] = np.array(sub.training)
    return before, frozen.forward.graph, params


def _frozen_graph(cls, name):
    seed(name)
    m = torch.jit.script(cls().eval())
    frozen = torch._C._freeze_module(m._c, preserveParameters=False)
    return frozen.forward.graph, frozen


def _run_pass(pass_name: str, graph, module=None):
    if pass_name == "remove_dropout":  # torch binds it on a module: run it on the frozen one
        torch._C._jit_pass_remove_dropout(module)
        return module.forward.graph
    if pass_name == "optimize_frozen_graph":
        torch._C._jit_pass_optimize_frozen_graph(graph, True)
        return graph
    if pass_name == "lower_graph":
        lowered, _params = torch._C._jit_pass_lower_graph(graph, module._c)
        return lowered
    if pass_name == "integer_value_refinement":
        torch._C._jit_pass_refine_integer_values(graph)
        return graph
    getattr(torch._C, f"_jit_pass_{pass_name}")(graph)
    return graph


def generate(out: Path) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    pairs = []

    def emit(pass_name, example, before_graph, module=None, input_shape=None):
        before = _text(before_graph)
        before_consts = _tensor_constants(before_graph)
        in_place = pass_name in ("lower_graph", "remove_dropout")
        work = before_graph if in_place else before_graph.copy()
        after_graph = _run_pass(pass_name, work, module)
        after = _text(after_graph)
        stem = f"{pass_name}__{example}"
        write_text(out / f"{stem}_before.ir", before)
        write_text(out / f"{stem}_after.ir", after)
        entry = {"pass": pass_name, "example": example, "before": f"{stem}_before.ir",
                 "after": f"{stem}_after.ir", "changed": before != after}
        for side, consts in (("before", before_consts), ("after", _tensor_constants(after_graph))):
            if consts:
                save_npz(out / f"{stem}_{side}_constants.npz", consts)
                entry[f"{side}_constants"] = f"{stem}_{side}_constants.npz"
        if input_shape is not None:
            entry["input_shape"] = list(input_shape)
        pairs.append(entry)

    for pass_name, cases in HAND.items():
        for example, text in cases.items():
            reset_jit_state()
            emit(pass_name, example, torch._C.parse_ir(text))
    for pass_name, cases in SCRIPTED.items():
        for example, fn in cases.items():
            reset_jit_state()
            g = torch.jit.script(fn).graph.copy()
            emit(pass_name, example, g)
    for pass_name, cases in FROZEN.items():
        for example, cls in cases.items():
            reset_jit_state()
            if pass_name == "lower_graph":
                seed(example)
                m = torch.jit.script(cls().eval())
                emit(pass_name, example, m.forward.graph.copy(), m, cls.input_shape)
                continue
            g, frozen = _frozen_graph(cls, example)
            emit(pass_name, example, g.copy() if pass_name != "remove_dropout" else g, frozen,
                 cls.input_shape)
    for example, cls in FREEZE_MODULE.items():
        reset_jit_state()
        before_graph, after_graph, params = _freeze_module_pair(cls, example)
        stem = f"freeze_module__{example}"
        before, after = _text(before_graph), _text(after_graph)
        write_text(out / f"{stem}_before.ir", before)
        write_text(out / f"{stem}_after.ir", after)
        save_npz(out / f"{stem}_params.npz", params)
        save_npz(out / f"{stem}_after_constants.npz", _tensor_constants(after_graph))
        pairs.append({"pass": "freeze_module", "example": example, "before": f"{stem}_before.ir",
                      "after": f"{stem}_after.ir", "changed": True, "params": f"{stem}_params.npz",
                      "after_constants": f"{stem}_after_constants.npz",
                      "input_shape": list(cls.input_shape)})
    write_json(out / "manifest.json", {"torch": torch.__version__, "pairs": pairs})
    return {"pairs": len(pairs)}
