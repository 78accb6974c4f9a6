"""What passes need to know about an op kind besides running it: its tags (pointwise,
comparison, reduction, view, fusible, differentiable, random, side effects, ...), its fusion
patterns and PyTorch's symbolic-script coverage. This module is the one place kinds are listed
by category; registry entries expose the same facts (`OpEntry.tags`, `OpEntry.has_side_effects`).

Kinds with no registry entry (most `prim::` nodes, a few builtins the interpreter handles
itself) are listed here too, so every question about a node has one answer, asked by kind.
"""

from __future__ import annotations

from typing import Optional

from .registry import OpEntry, all_entries, overloads

# ---- side effects (PyTorch's `Node::hasSideEffects`, ir.cpp) plus irjit's guard nodes, which
# must stay where they are even when their outputs look unused.
_SIDE_EFFECTS = frozenset({
    "prim::PythonOp", "prim::IgnoredPythonOp", "prim::Print", "prim::RaiseException",
    "prim::SetAttr", "aten::warn", "aten::save", "aten::manual_seed", "prim::AddStatValue",
    "prim::TimePoint", "prim::CallFunction", "prim::CallMethod", "prim::BailoutTemplate",
    "prim::BailOut", "prim::rpc_async", "prim::rpc_sync", "prim::rpc_remote", "aten::wait",
    "cuda::set_stream", "cuda::_set_device", "cuda::_current_device", "cuda::synchronize",
    "prim::Enter", "prim::Exit",
    # guards
    "prim::Guard", "prim::TypeCheck", "prim::RequiresGradCheck",
})

# ---- random ops (`Node::isNondeterministic`), besides registry entries flagged nondeterministic
_RANDOM = frozenset({
    "aten::dropout", "aten::_fused_dropout", "aten::_standard_gamma", "aten::bernoulli",
    "aten::multinomial", "aten::native_dropout", "aten::normal", "aten::poisson",
    "aten::binomial", "aten::rrelu", "aten::rrelu_with_noise", "aten::rand", "aten::rand_like",
    "aten::randint", "aten::randint_like", "aten::randn", "aten::randn_like", "aten::randperm",
})

# ---- container builtins that write their first input, for kinds without a schema in the
# registry (registered ones say so in their schema: `t[](a!) self`)
_WRITES_FIRST_INPUT = frozenset({
    "aten::append", "aten::insert", "aten::pop", "aten::clear", "aten::extend", "aten::remove",
    "aten::_set_item", "aten::reverse", "aten::sort", "aten::update", "aten::popitem",
    "aten::setdefault", "aten::Delete", "aten::__setitem__", "aten::delete", "aten::__delitem__",
})

# ---- alias analysis: outputs are (elements of) the inputs at run time
_PASS_THROUGH = frozenset({
    "prim::profile", "prim::profile_ivalue", "prim::unchecked_cast", "prim::annotate",
    "prim::unchecked_unwrap_optional", "prim::TypeCheck", "prim::RequiresGradCheck",
    "prim::Guard", "prim::BailOut", "prim::TupleUnpack", "prim::ListUnpack", "prim::TupleIndex",
    "prim::TupleSlice", "aten::__getitem__", "prim::ListIndex", "prim::DictIndex",
    "aten::list", "prim::data", "aten::detach", "prim::TupleConstruct", "prim::ListConstruct",
    "prim::DictConstruct", "aten::values", "aten::items", "aten::get", "prim::BroadcastSizes",
})
# return their one input unchanged at run time (profiling records, annotations): native units
# read through them
_IDENTITY = frozenset({"prim::profile", "prim::annotate"})
# ops whose result aliases their first input only when it keeps that input's dtype (a cast copies)
_ALIASES_ONLY_SAME_DTYPE = frozenset({"aten::to"})
# `is` / `is not`: compare their operands' identity (against None, known from whether one is None)
_IDENTITY_TEST = frozenset({"aten::__is__", "aten::__isnot__"})
# calls into unknown code: may read and write anything reachable from their inputs
_OPAQUE = frozenset({"prim::CallFunction", "prim::CallMethod", "prim::PythonOp", "prim::fork",
                     "prim::rpc_async", "prim::rpc_sync", "prim::rpc_remote"})
# nodes constant propagation never folds (PyTorch's skip list, plus nodes whose value is not a
# function of their inputs)
_NOT_FOLDABLE = frozenset({
    "prim::If", "prim::Loop", "prim::Closure", "prim::Constant", "prim::AutogradZero",
    "prim::Uninitialized", "prim::Guard", "prim::profile", "prim::profile_ivalue",
    "prim::unchecked_unwrap_optional", "aten::dequantize", "prim::GetAttr", "prim::CreateObject",
    "prim::TypeCheck", "prim::RequiresGradCheck", "prim::BailOut", "prim::fork", "prim::wait",
    "prim::DifferentiableGraph", "prim::FusionGroup", "prim::TensorExprGroup",
    "prim::CudaFusionGroup", "prim::Enter", "prim::Exit",
    # queries of the run-time mode (torch.is_grad_enabled(), torch.is_autocast_enabled())
    "aten::is_grad_enabled", "aten::is_autocast_enabled", "aten::is_autocast_cpu_enabled",
})

# ---- shapes and dtypes
# result shape depends on tensor data, or the op must never be run speculatively
_DATA_DEPENDENT = frozenset({
    "aten::nonzero", "aten::masked_select", "aten::unique", "aten::_unique", "aten::_unique2",
    "aten::unique_consecutive", "aten::unique_dim", "aten::repeat_interleave", "aten::item",
    "aten::Bool", "aten::Int", "aten::Float", "aten::tolist", "aten::nonzero_numpy",
    "aten::bincount", "aten::histc", "aten::where", "aten::to_dense",
})
# non-tensor result that depends only on tensor metadata (safe to evaluate on dummies)
_METADATA = frozenset({"aten::size", "aten::dim", "aten::numel", "prim::dtype", "prim::device",
                       "aten::is_floating_point", "aten::is_complex", "aten::len", "prim::shape"})
# output shape = first input's shape
_SHAPE_PRESERVING = frozenset({
    "aten::relu", "aten::sigmoid", "aten::tanh", "aten::exp", "aten::log", "aten::neg",
    "aten::sqrt", "aten::rsqrt", "aten::abs", "aten::reciprocal", "aten::sin", "aten::cos",
    "aten::gelu", "aten::silu", "aten::hardtanh", "aten::leaky_relu", "aten::elu",
    "aten::softplus", "aten::clamp", "aten::erf", "aten::floor", "aten::ceil", "aten::round",
    "aten::log1p", "aten::expm1", "aten::dropout", "aten::contiguous", "aten::clone",
    "aten::detach", "aten::softmax", "aten::log_softmax", "aten::relu6", "aten::hardsigmoid",
    "aten::hardswish", "aten::sign", "aten::trunc", "aten::frac", "aten::sigmoid_",
    "aten::relu_", "aten::tanh_", "aten::layer_norm", "aten::batch_norm", "aten::type_as",
    "aten::hardshrink",
})
# output shape = broadcast of the tensor inputs' shapes
_BROADCASTING = frozenset({
    "aten::add", "aten::sub", "aten::mul", "aten::div", "aten::pow", "aten::rsub",
    "aten::gt", "aten::lt", "aten::ge", "aten::le", "aten::eq", "aten::ne", "aten::maximum",
    "aten::minimum", "aten::remainder", "aten::fmod", "aten::atan2", "aten::__and__",
    "aten::__or__", "aten::__xor__", "aten::logical_and", "aten::logical_or",
    "aten::floor_divide", "aten::where", "aten::addcmul", "aten::addcdiv", "aten::lerp",
})
_COMPARISON = frozenset({"aten::lt", "aten::le", "aten::gt", "aten::ge", "aten::eq", "aten::ne"})
_LOGICAL = frozenset({"aten::logical_and", "aten::logical_or"})
# integer inputs give a floating result
_FLOAT_RESULT = frozenset({
    "aten::sigmoid", "aten::tanh", "aten::exp", "aten::log", "aten::sqrt", "aten::rsqrt",
    "aten::reciprocal", "aten::sin", "aten::cos", "aten::div", "aten::softmax",
    "aten::log_softmax", "aten::erf", "aten::log1p", "aten::expm1", "aten::gelu",
})
# `op(x)` (or `op(x, dtype)`) reduces everything to a scalar
_FULL_REDUCTION = frozenset({"aten::sum", "aten::mean", "aten::prod", "aten::max", "aten::min"})
# `op(x, dims, keepdim)` reduces the listed dimensions
_DIM_REDUCTION = frozenset({"aten::sum", "aten::mean", "aten::amax", "aten::amin"})
# view ops kept out of DifferentiableGraphs (create_autodiff_subgraphs' isViewOp)
_VIEW = frozenset({"aten::view", "aten::view_as", "aten::reshape", "aten::reshape_as",
                   "aten::transpose", "aten::expand", "aten::expand_as"})

# ---- fusion: PyTorch's legacy fuser's simple-map list, kind -> input patterns ("T" tensor,
# "S" scalar that must be a constant or a float)
_FUSION_PATTERNS: dict[str, tuple[str, ...]] = {
    **{k: ("T",) for k in (
        "aten::abs", "aten::acos", "aten::asin", "aten::atan", "aten::ceil", "aten::cos",
        "aten::cosh", "aten::erf", "aten::erfc", "aten::exp", "aten::expm1", "aten::floor",
        "aten::frac", "aten::lgamma", "aten::log", "aten::log10", "aten::log1p", "aten::log2",
        "aten::neg", "aten::reciprocal", "aten::relu", "aten::round", "aten::rsqrt",
        "aten::sigmoid", "aten::sin", "aten::sinh", "aten::sqrt", "aten::tan", "aten::tanh",
        "aten::trunc", "aten::rand_like")},
    **{k: ("TT", "TS") for k in (
        "aten::mul", "aten::div", "aten::eq", "aten::ne", "aten::ge", "aten::gt", "aten::le",
        "aten::lt", "aten::fmod", "aten::remainder", "aten::pow", "aten::atan2",
        "aten::max", "aten::min", "aten::type_as", "aten::_sigmoid_backward",
        "aten::_tanh_backward")},
    "aten::add": ("TTS", "TSS"), "aten::sub": ("TTS", "TSS"),
    "aten::clamp": ("TSS",), "aten::threshold": ("TSS",), "aten::lerp": ("TTS", "TTT"),
    "aten::addcmul": ("TTTS",), "aten::where": ("TTT",),
}

# ---- profiling: inputs the optimizer specializes on (PyTorch: tensorexpr-supported ops plus the
# ops read by specialize_autogradzero and the shape peepholes), besides the fusible ones
_PROFILED = frozenset({
    "aten::t", "aten::mm", "aten::matmul", "aten::conv2d", "aten::conv1d", "aten::conv3d",
    "aten::cat", "aten::softmax", "aten::log_softmax", "aten::where", "aten::masked_fill",
    "aten::clamp", "aten::to", "aten::type_as", "aten::linear", "aten::addmm", "aten::bmm",
    "aten::max_pool2d", "aten::adaptive_avg_pool2d", "aten::avg_pool2d", "aten::batch_norm",
    "aten::layer_norm", "aten::hardtanh", "aten::gelu", "aten::silu", "aten::leaky_relu",
    "aten::elu", "aten::softplus", "aten::erf", "aten::sum", "aten::mean", "aten::flatten",
    "aten::view", "aten::reshape", "aten::permute", "aten::transpose", "aten::squeeze",
    "aten::unsqueeze", "aten::expand", "aten::slice", "aten::select", "aten::chunk",
    "prim::ConstantChunk", "aten::dim", "aten::size", "prim::dtype", "prim::device",
    "prim::is_cuda", "aten::is_floating_point", "aten::_grad_sum_to_size",
    "prim::AutogradAdd", "prim::AutogradAnyNonZero", "prim::AutogradAllNonZero",
    "prim::AutogradAllZero", "prim::AutogradZero", "aten::relu6", "aten::hardswish",
    "aten::hardsigmoid", "aten::rsub", "aten::sub", "aten::add", "aten::mul", "aten::div",
    "aten::max", "aten::min", "aten::maximum", "aten::minimum", "aten::pow",
}) | frozenset(_FUSION_PATTERNS)
# reductions profiled only in their per-dimension overloads (`sum(x, None)` is not)
_PROFILED_WITH_DIMS_ONLY = frozenset({"aten::sum", "aten::mean"})
# produce values whose uses are profiled (autodiff bookkeeping)
_PROFILED_PRODUCER = frozenset({"prim::AutogradAdd", "prim::AutogradZero"})

# ---- autodiff: schemas with a TorchScript formula in PyTorch's symbolic_script.cpp (plus the
# special cases of autodiff.cpp), kind -> overload names ("" the default); None = all overloads.
# Deliberately narrower than the registry's derivative formulas: PyTorch keeps ops such as
# aten::conv2d outside DifferentiableGraphs (they run under eager autograd), and so do we.
_SYMBOLIC_SCRIPT: dict[str, Optional[frozenset]] = {
    "aten::mean": None, "aten::logsumexp": None, "aten::std": None, "aten::var": None,
    "aten::tanh": None, "aten::mm": None, "aten::permute": None, "aten::squeeze": frozenset({"", "dim"}),
    "aten::bmm": None, "aten::matmul": None, "aten::linear": None, "aten::addcmul": None,
    "aten::_dim_arange": None, "aten::contiguous": None, "aten::dot": None, "aten::erf": None,
    "aten::expand": None, "aten::expand_as": None, "aten::full_like": None, "aten::lerp": None,
    "aten::reshape": None, "aten::split": None, "aten::split_with_sizes": None, "aten::stack": None,
    "aten::unbind": None, "aten::cat": None, "aten::index": None, "aten::meshgrid": None,
    "aten::mv": None, "aten::nonzero": None, "aten::ones_like": None, "aten::pow": None,
    "aten::rsub": None, "aten::sqrt": None, "aten::t": None, "aten::to": None,
    "aten::transpose": frozenset({"int"}), "aten::view": frozenset({""}),
    "aten::mul": frozenset({"Tensor", "Scalar"}), "aten::div": None,
    "aten::max": frozenset({"other"}), "aten::min": frozenset({"other"}),
    "aten::sigmoid": None, "aten::relu": None, "aten::relu6": None, "aten::leaky_relu": None,
    "aten::gelu": None, "aten::hardswish": None, "aten::hardsigmoid": None, "aten::erfc": None,
    "aten::exp": None, "aten::neg": None, "aten::where": frozenset({"self"}), "aten::type_as": None,
    "aten::unsqueeze": None, "aten::abs": None, "aten::acos": None, "aten::asin": None,
    "aten::atan": None, "aten::ceil": None, "aten::cos": None, "aten::cosh": None,
    "aten::expm1": None, "aten::floor": None, "aten::frac": None, "aten::log": None,
    "aten::log10": None, "aten::log1p": None, "aten::log2": None, "aten::rand_like": None,
    "aten::reciprocal": None, "aten::round": None, "aten::rsqrt": None, "aten::sin": None,
    "aten::sinh": None, "aten::tan": None, "aten::trunc": None, "aten::_grad_sum_to_size": None,
    "aten::batch_norm": None, "aten::embedding": None, "aten::log_softmax": None,
    "aten::nll_loss": None, "aten::softmax": None, "aten::adaptive_avg_pool1d": None,
    "aten::adaptive_avg_pool2d": None, "aten::adaptive_avg_pool3d": None, "aten::avg_pool2d": None,
    "aten::max_pool2d": None, "aten::max_pool2d_with_indices": None,
    "aten::add": frozenset({"Tensor", "Scalar"}), "aten::sub": frozenset({"Tensor", "Scalar"}),
    "aten::threshold": None, "aten::fmod": frozenset({"Scalar"}), "aten::remainder": frozenset({"Scalar"}),
    "aten::addmm": None, "aten::lt": frozenset({"Scalar"}), "aten::le": frozenset({"Scalar"}),
    "aten::gt": frozenset({"Scalar"}), "aten::ge": frozenset({"Scalar"}), "aten::eq": frozenset({"Scalar"}),
    "aten::ne": frozenset({"Scalar"}), "aten::hardshrink": None, "aten::hardtanh": None,
    "aten::clamp": None,
    # autodiff.cpp's hand-written cases
    "aten::_slow_conv2d_forward": None, "aten::native_batch_norm": None,
    # `aten::dropout` only when train is a constant True (checked by the autodiff)
    "aten::dropout": None,
}
# autodiff.cpp's needTrimGrad: ops with several outputs of which only the first gets a
# gradient (its GradOf takes that one vjp only)
_TRIM_GRAD = frozenset({"aten::kthvalue", "aten::topk", "aten::max_pool2d",
                        "aten::max_pool2d_with_indices"})
# ops whose symbolic_script backward takes the vjp of their `Tensor[]` result whole
# (`grads: List[Tensor]`): their formulas may receive it as one list value
_LIST_VJP = frozenset({"aten::split", "aten::split_with_sizes", "aten::unbind", "aten::chunk",
                       "aten::meshgrid"})
# nodes PyTorch's autodiff always treats as differentiable (autodiff.cpp)
_ALWAYS_DIFFERENTIABLE = frozenset({"prim::Constant", "prim::AutogradZero", "prim::AutogradAdd",
                                    "prim::ConstantChunk"})

# ---- smaller categories the passes match on
_ARITHMETIC = frozenset({"aten::add", "aten::sub", "aten::mul", "aten::div"})
# `aten::Int(t)`-like conversions of a (NumToTensor'd) tensor back to a number
_TENSOR_TO_NUMBER = frozenset({"aten::Float", "aten::Int", "aten::FloatImplicit",
                               "aten::IntImplicit", "aten::ScalarImplicit"})
# `x op 1 == x` for numbers (peephole's arithmetic identities)
_RIGHT_IDENTITY_ONE = frozenset({"aten::mul", "aten::floordiv", "aten::div"})
_CONVOLUTION = frozenset({"aten::conv1d", "aten::conv2d", "aten::conv3d"})
# outputs may alias an input (views, containers, unpacking), for has-writers approximations
_MAY_ALIAS_INPUT = frozenset({
    "prim::ListConstruct", "prim::TupleConstruct", "prim::DictConstruct", "aten::view", "aten::t",
    "aten::transpose", "aten::reshape", "aten::expand", "aten::slice", "aten::select",
    "aten::squeeze", "aten::unsqueeze", "aten::permute", "aten::flatten", "aten::detach",
    "prim::unchecked_cast", "aten::__getitem__", "prim::ListUnpack", "prim::TupleUnpack",
    "aten::contiguous", "aten::alias", "prim::TupleIndex",
})
_CONTROL_FLOW = frozenset({"prim::If", "prim::Loop"})
# nodes whose `Subgraph` the runtime runs as one unit (the executor's DifferentiableGraphOp,
# a fusion group, a backward graph's fallback): through the plan's subgraph runner
_SUBGRAPH = frozenset({"prim::DifferentiableGraph", "prim::FusionGroup", "prim::TensorExprGroup",
                       "prim::CudaFusionGroup", "prim::TensorExprDynamicGroup",
                       "prim::StaticSubgraph", "prim::oneDNNFusionGroup", "prim::FallbackGraph"})
_CALL = frozenset({"prim::CallFunction", "prim::CallMethod"})
# do no work at run time (not counted in loop-body sizes)
_NO_COST = frozenset({"prim::Constant", "prim::profile", "prim::profile_ivalue"})
# read a tuple's elements
_TUPLE_ACCESS = frozenset({"prim::TupleUnpack", "prim::TupleIndex", "prim::TupleSlice"})
# may take or give tuples when tuples are lowered away (lower_tuples)
_TUPLE_FORWARDING = frozenset({"prim::If", "prim::Loop", "prim::TupleConstruct", "prim::Param",
                               "prim::Return", "prim::PythonOp", "aten::format"}) | _TUPLE_ACCESS
# only present in backward graphs (specialize_autograd_zero looks for them)
_BACKWARD_ONLY = frozenset({"prim::AutogradAnyNonZero", "prim::AutogradAdd",
                            "aten::_grad_sum_to_size"})

# removable in inference when their `train` argument is false (remove_dropout.cpp)
_DROPOUT = frozenset({"aten::dropout", "aten::dropout_", "aten::feature_dropout",
                      "aten::feature_dropout_"})
# the in-place ops RemoveInplaceOps rewrites, with their out-of-place replacement and the
# input count the replacement takes (None-padded): remove_inplace_ops.cpp
_INPLACE_TO_OUT_OF_PLACE: dict[str, tuple[str, int]] = {
    "aten::add_": ("aten::add", 3), "aten::sub_": ("aten::sub", 3),
    "aten::div_": ("aten::div", 2), "aten::mul_": ("aten::mul", 2),
    "aten::masked_fill_": ("aten::masked_fill", 3), "aten::zero_": ("aten::zeros_like", 6),
    "aten::fill_": ("aten::full_like", 7),
}
# activations with an in-place twin `<kind>_`, and whether the op may promote its input's
# dtype (so the in-place form needs equal known dtypes): restore_mutation.h
_ACTIVATION_PROMOTES: dict[str, bool] = {
    "aten::celu": False, "aten::elu": False, "aten::gelu": False, "aten::glu": False,
    "aten::hardshrink": False, "aten::hardsigmoid": False, "aten::hardswish": False,
    "aten::hardtanh": False, "aten::leaky_relu": False, "aten::mish": False,
    "aten::relu": False, "aten::relu6": False, "aten::rrelu": False, "aten::selu": False,
    "aten::sigmoid": True, "aten::silu": False, "aten::tanh": True, "aten::threshold": False,
}
# fused or guarded groups that only run without the tape (inline_autodiff_subgraphs keeps
# DifferentiableGraphs that hold them: PyTorch's canRunWithAutograd)
_NO_AUTOGRAD = frozenset({"prim::FusionGroup", "prim::CudaFusionGroup", "prim::TypeCheck",
                          "prim::TensorExprGroup", "prim::CudaFusionGuard",
                          "prim::oneDNNFusionGroup", "prim::oneDNNFusionGuard"})

# alias analysis of containers (PyTorch's analyzeContainerConstruct / analyzeExtractor): what
# builds one, what takes elements out of one (the elements may be anything put in: wildcards),
# and the ops that read a list built for them without keeping it or its elements
# (functionalNonEscapingListUse)
_CONTAINER_CONSTRUCT = frozenset({"prim::ListConstruct", "prim::TupleConstruct", "prim::DictConstruct"})
_EXTRACTOR = frozenset({"prim::TupleUnpack", "prim::ListUnpack", "prim::TupleIndex", "prim::TupleSlice",
                        "prim::DictIndex", "prim::ListIndex", "aten::__getitem__", "aten::get"})
_NON_ESCAPING_LIST_USER = frozenset({"aten::cat", "aten::broadcast_tensors", "aten::stack",
                                     "aten::vstack", "aten::hstack", "aten::dstack"})
# list writes RemoveListMutation folds into the ListConstruct that built the list
_LIST_MUTATION = frozenset({"aten::append", "aten::insert", "aten::_set_item"})

_TAG_TABLES: dict[str, frozenset] = {
    "side_effects": _SIDE_EFFECTS, "random": _RANDOM, "writes_first_input": _WRITES_FIRST_INPUT,
    "pass_through": _PASS_THROUGH, "opaque": _OPAQUE, "not_foldable": _NOT_FOLDABLE,
    "data_dependent": _DATA_DEPENDENT, "metadata": _METADATA,
    "shape_preserving": _SHAPE_PRESERVING, "broadcasting": _BROADCASTING,
    "pointwise": _SHAPE_PRESERVING | _BROADCASTING, "comparison": _COMPARISON,
    "logical": _LOGICAL, "float_result": _FLOAT_RESULT,
    "reduction": _FULL_REDUCTION | _DIM_REDUCTION, "full_reduction": _FULL_REDUCTION,
    "dim_reduction": _DIM_REDUCTION, "view": _VIEW,
    "fusible": frozenset(_FUSION_PATTERNS), "profiled": _PROFILED,
    "profiled_with_dims_only": _PROFILED_WITH_DIMS_ONLY, "profiled_producer": _PROFILED_PRODUCER,
    "differentiable": frozenset(_SYMBOLIC_SCRIPT) | _ALWAYS_DIFFERENTIABLE,
    "always_differentiable": _ALWAYS_DIFFERENTIABLE, "trim_grad": _TRIM_GRAD, "list_vjp": _LIST_VJP,
    "arithmetic": _ARITHMETIC, "right_identity_one": _RIGHT_IDENTITY_ONE,
    "tensor_to_number": _TENSOR_TO_NUMBER,
    "convolution": _CONVOLUTION, "may_alias_input": _MAY_ALIAS_INPUT,
    "control_flow": _CONTROL_FLOW, "call": _CALL, "no_cost": _NO_COST, "subgraph": _SUBGRAPH,
    "tuple_access": _TUPLE_ACCESS, "tuple_forwarding": _TUPLE_FORWARDING,
    "backward_only": _BACKWARD_ONLY, "no_autograd": _NO_AUTOGRAD, "identity": _IDENTITY,
    "aliases_only_same_dtype": _ALIASES_ONLY_SAME_DTYPE, "identity_test": _IDENTITY_TEST,
    "dropout": _DROPOUT, "inplace_with_out_of_place": frozenset(_INPLACE_TO_OUT_OF_PLACE),
    "activation": frozenset(_ACTIVATION_PROMOTES),
    "container_construct": _CONTAINER_CONSTRUCT, "extractor": _EXTRACTOR,
    "non_escaping_list_user": _NON_ESCAPING_LIST_USER, "list_mutation": _LIST_MUTATION,
}
TAGS = frozenset(_TAG_TABLES)

_KIND_TAGS: dict[str, frozenset] = {}
for _tag, _kinds in _TAG_TABLES.items():
    for _kind in _kinds:
        _KIND_TAGS[_kind] = _KIND_TAGS.get(_kind, frozenset()) | {_tag}


def tags(kind: str) -> frozenset:
    """Every tag of the kind (`aten::add`), whichever overload a node resolves to."""
    found = _KIND_TAGS.get(kind, frozenset())
    if "random" not in found and any(e.nondeterministic for e in overloads(kind)):
        found = found | {"random"}
    return found


def has_tag(kind: str, tag: str) -> bool:
    assert tag in TAGS, f"unknown tag {tag!r}"
    if tag == "random":
        return tag in tags(kind)
    return tag in _KIND_TAGS.get(kind, ())


def kinds_with(tag: str) -> frozenset:
    """The kinds listed with `tag` (registry entries flagged random included for "random")."""
    assert tag in TAGS, f"unknown tag {tag!r}"
    kinds = frozenset(k for k, t in _KIND_TAGS.items() if tag in t)
    if tag == "random":
        kinds |= {e.schema.name for e in all_entries() if e.nondeterministic}
    return kinds


def has_side_effects(kind: str) -> bool:
    """`Node::hasSideEffects` by kind: acts on the world, so never removed, moved or folded."""
    return kind in _SIDE_EFFECTS


def fusion_patterns(kind: str) -> tuple[str, ...]:
    """The input patterns ("TT", "TS", ...) under which the legacy fuser fuses `kind`."""
    return _FUSION_PATTERNS.get(kind, ())


# PyTorch's symbolic_script formulas that compute the broadcast sizes of two tensor inputs up
# front, through `AD_sizes_if_not_equal_multi` (a tuple built and unpacked): kind -> positions
_SIZES_UP_FRONT: dict[str, tuple[int, int]] = {
    "aten::add": (0, 1), "aten::sub": (0, 1), "aten::mul": (0, 1), "aten::div": (0, 1),
    "aten::max": (0, 1), "aten::where": (1, 2),
}


def sizes_up_front(kind: str) -> tuple[int, ...]:
    """The inputs whose `_size_if_not_equal` sizes PyTorch's formula for `kind` computes first,
    in that order, when both are tensors; () for other kinds."""
    return _SIZES_UP_FRONT.get(kind, ())


def convolution_input_rank(kind: str) -> Optional[int]:
    """The input rank of a convolution kind (`aten::conv2d` -> 4), None for other kinds."""
    return int(kind[-2]) + 2 if kind in _CONVOLUTION else None


def in_symbolic_script(kind: str, overload: str) -> bool:
    """Whether PyTorch has an autodiff formula for this overload."""
    if kind not in _SYMBOLIC_SCRIPT:
        return False
    allowed = _SYMBOLIC_SCRIPT[kind]
    return allowed is None or overload in allowed


def entry_tags(entry: OpEntry) -> frozenset:
    """The tags of one schema: its kind's, with "differentiable" only for the overloads PyTorch
    differentiates symbolically and "random" for entries flagged nondeterministic."""
    schema = entry.schema
    found = set(_KIND_TAGS.get(schema.name, ()))
    if schema.name in _SYMBOLIC_SCRIPT and not in_symbolic_script(schema.name, schema.overload):
        found.discard("differentiable")
    if entry.nondeterministic:
        found.add("random")
    return frozenset(found)


def attach() -> None:
    """Put each registered schema's tags on its entry (`OpEntry.tags`)."""
    for entry in all_entries():
        entry.tags = entry_tags(entry)


def out_of_place_variant(kind: str) -> Optional[tuple[str, int]]:
    """RemoveInplaceOps' replacement of an in-place kind: (out-of-place kind, its input count)."""
    return _INPLACE_TO_OUT_OF_PLACE.get(kind)


def activation_may_promote(kind: str) -> bool:
    """Whether the activation `kind` may change its input's dtype (sigmoid, tanh)."""
    return _ACTIVATION_PROMOTES[kind]


# ---- TorchScript's Python spelling of ops: the builtins a scripted function may call (and
# the op each one compiles to), and the ops `.code` prints as a Python builtin call.
_PYTHON_BUILTIN_CALLS = {"len": "aten::len", "float": "aten::Float", "int": "aten::Int",
                         "bool": "aten::Bool", "str": "aten::str", "min": "prim::min",
                         "max": "prim::max", "abs": "prim::abs", "print": "prim::Print"}
_PRINTED_AS_BUILTIN = {"aten::Int": "int", "aten::Float": "float", "aten::Bool": "bool",
                       "aten::str": "str", "prim::Print": "print", "aten::sorted": "sorted"}


def builtin_call_op(name: str) -> Optional[str]:
    """The op a call of the Python builtin `name` compiles to in a scripted function."""
    return _PYTHON_BUILTIN_CALLS.get(name)


def printed_as_builtin(kind: str) -> Optional[str]:
    """The Python builtin PyTorch's `.code` writes for this op (`aten::Int` -> `int`), if any."""
    return _PRINTED_AS_BUILTIN.get(kind)
