"""Handlers for the `prim::` nodes that need the interpreter: constants, module attributes,
calls, control flow, guards, profiling, the tape and subgraph nodes; the pure ones (containers,
metadata queries) run the op layer's evaluators (`ops.prims`).

A handler is `handler(interp, node, args, env) -> outputs` (one value, or a sequence for
multi-output nodes).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from irjit.compiler.ir import Node
from irjit.ops import facts
from irjit.ops.errors import IRRuntimeError, IRTypeError
from irjit.ops.prims import PURE_PRIMS, is_instance_of
from irjit.ops.tensor import Tensor
from irjit.ops.types import SCALAR_TYPES, ClassType, OptionalType, TensorType, Type

from .autograd import is_grad_enabled, run_op
from .autodiff_helper_graphs import helper_graph
from .library_functions import LIBRARY_FUNCTIONS
from .module import Module
from .values import from_array

PRIM_HANDLERS: dict[str, Any] = {}


def prim(*kinds: str):
    def wrap(fn):
        for k in kinds:
            PRIM_HANDLERS[k] = fn
        return fn
    return wrap


class Future:
    """A completed `prim::fork` result (forks run eagerly, in order)."""

    def __init__(self, value: Any):
        self.value = value


class Uninitialized:
    """The value of `prim::Uninitialized`: a placeholder that must never be used."""

    def __repr__(self) -> str:
        return "<uninitialized>"


UNINITIALIZED = Uninitialized()


_NOT_CACHED = object()


@prim("prim::Constant")
def _constant(interp, node: Node, args, env):
    cache = interp.__dict__.setdefault("_constant_cache", {})
    value = cache.get(node, _NOT_CACHED)
    if value is _NOT_CACHED:  # (a None constant is cached too)
        value = interp.constant(node)
        if not isinstance(value, (Tensor, list, dict)):
            cache[node] = value
        elif isinstance(value, Tensor):
            cache[node] = value  # constants are never written in place by well-formed graphs
    return value


@prim("prim::GetAttr")
def _get_attr(interp, node: Node, args, env):
    obj = args[0]
    name = node.attr("name")
    if not isinstance(obj, Module):
        raise TypeError(f"prim::GetAttr on a {type(obj).__name__}")
    try:
        value = obj.get(name)
    except KeyError as e:
        if isinstance(node.outputs[0].type, OptionalType):
            return None  # an Optional attribute left out of the params file is None (bias=False)
        path = e.args[0]
        raise KeyError(f"parameter or attribute '{path}' (add it to the params file)") from None
    if isinstance(value, np.ndarray):
        # params files hold arrays; the attribute's type in the graph says what they are
        where = f"{obj.path}.{name}" if obj.path else name
        try:
            value = from_array(value, node.outputs[0].type)
        except IRTypeError as e:
            raise IRTypeError(f"parameter or attribute '{where}': {e}") from None
        _check_attribute_dtype(where, node.outputs[0].type, value)
        obj.set(name, value)
    return value


def _check_attribute_dtype(where: str, declared: Type, value: Any) -> None:
    """A tensor attribute whose graph type names a dtype must have it (never cast)."""
    t = declared.elem if isinstance(declared, OptionalType) else declared
    if isinstance(t, TensorType) and t.scalar_type is not None and isinstance(value, Tensor):
        want = SCALAR_TYPES.get(t.scalar_type)
        if want is not None and str(value.dtype) != want:
            raise IRTypeError(f"parameter or attribute '{where}' has type {t}, got a tensor of "
                              f"dtype {value.dtype}")


@prim("prim::SetAttr")
def _set_attr(interp, node: Node, args, env):
    args[0].set(node.attr("name"), args[1])
    return None


@prim("prim::CallMethod")
def _call_method(interp, node: Node, args, env):
    module, rest = args[0], args[1:]
    name = node.attr("name")
    cls = node.inputs[0].type
    qualname = str(cls)
    for key in (f"{qualname}.{name}", f"{getattr(module, 'class_name', '')}.{name}"):
        g = interp.functions.get(key)
        if g is not None:
            return _results(node, interp.sub_interpreter(g).run([module] + rest))
    if name == "forward" and isinstance(module, Module):
        from .nn_modules import call_module
        try:
            return call_module(module, *rest)
        except KeyError as e:
            if str(e.args[0]) != module.class_name:
                raise
    raise IRRuntimeError(
        f"{interp.filename}:{node.text_line}: prim::CallMethod: no graph for method "
        f"'{name}' of {qualname}, and it is not a built-in torch.nn module; use the module's "
        "inlined graph (m.inlined_graph or torch._C._jit_pass_inline)")


@prim("prim::CallFunction")
def _call_function(interp, node: Node, args, env):
    fn, rest = args[0], args[1:]
    name = getattr(fn, "name", None)
    if getattr(fn, "fallback", False) and interp.fallback is not None:
        return _results(node, interp.fallback(fn, rest))
    g = interp.functions.get(name)
    if g is None and name in LIBRARY_FUNCTIONS:
        return LIBRARY_FUNCTIONS[name](*rest)
    if g is None:
        g = helper_graph(name)  # symbolic_script's AD_ helpers that a df calls
    if g is None:
        raise IRRuntimeError(f"{interp.filename}:{node.text_line}: prim::CallFunction: the graph of "
                             f"function '{name}' is not available; inline it or pass it as a function")
    return _results(node, interp.sub_interpreter(g).run(rest))


def _results(node: Node, outs: list):
    return outs[0] if len(node.outputs) == 1 else outs


@prim("aten::is_grad_enabled")
def _is_grad_enabled(interp, node: Node, args, env):
    return is_grad_enabled()


@prim("aten::is_leaf")
def _is_leaf(interp, node: Node, args, env):
    """A tensor no recorded op produced (PyTorch: grad_fn is None)."""
    return args[0].grad_fn is None


@prim("aten::is_autocast_enabled", "aten::is_autocast_cpu_enabled")
def _is_autocast_enabled(interp, node: Node, args, env):
    """irjit never autocasts (modules such as nn.TransformerEncoderLayer ask)."""
    return False


@prim("prim::VarConcat")
def _var_concat(interp, node: Node, args, env):
    """use_variadic_cat's `prim::VarConcat(%t0, ..., %tn, %dim)`: `aten::cat` of the tensors."""
    return run_op("aten::cat", list(args[:-1]), args[-1])


@prim("prim::VarStack")
def _var_stack(interp, node: Node, args, env):
    """use_variadic_stack's `prim::VarStack(%t0, ..., %tn, %dim)`: `aten::stack` of the tensors."""
    return run_op("aten::stack", list(args[:-1]), args[-1])


@prim("prim::IfThenElse")
def _if_then_else(interp, node: Node, args, env):
    """add_if_then_else's `prim::IfThenElse(%cond, %a, %b)`: `%a` if `%cond` else `%b`."""
    cond = args[0]
    if isinstance(cond, Tensor):
        cond = bool(cond.data)
    return args[1] if cond else args[2]


@prim("prim::If")
def _if(interp, node: Node, args, env):
    cond = args[0]
    if isinstance(cond, Tensor):
        cond = bool(cond.data)
    block = node.blocks[0] if cond else node.blocks[1] if len(node.blocks) > 1 else None
    if block is None:
        return None
    return _results(node, interp.run_block(block, [], env)) if node.outputs else \
        (interp.run_block(block, [], env) and None)


@prim("prim::Loop")
def _loop(interp, node: Node, args, env):
    max_trips, cond, carried = args[0], args[1], list(args[2:])
    if isinstance(cond, Tensor):
        cond = bool(cond.data)
    body = node.blocks[0]
    i = 0
    limit = max_trips if max_trips is not None else float("inf")
    while cond and i < limit:
        out = interp.run_block(body, [i] + carried, env)
        cond = out[0]
        if isinstance(cond, Tensor):
            cond = bool(cond.data)
        carried = out[1:]
        i += 1
    if not node.outputs:
        return None
    return carried[0] if len(node.outputs) == 1 else carried


@prim("prim::profile", "prim::profile_ivalue")
def _profile(interp, node, args, env):
    """Outside a profiling run a profile node passes its value through."""
    return args[0] if args else None


@prim("prim::RaiseException")
def _raise(interp, node, args, env):
    msg = args[0] if args else "Exception"
    cls = args[1] if len(args) > 1 and args[1] else "Exception"
    raise IRRuntimeError(f"{interp.filename}:{node.text_line}: prim::RaiseException: {cls}: {msg}")


@prim("prim::Uninitialized")
def _uninitialized(interp, node, args, env):
    return UNINITIALIZED


@prim("prim::Print")
def _print(interp, node, args, env):
    print(*[a.data if isinstance(a, Tensor) else a for a in args])
    return None


@prim("prim::fork")
def _fork(interp, node, args, env):
    return Future(interp.sub_interpreter(node.attr("Subgraph")).run(list(args))[0])


@prim("aten::wait")
def _wait(interp, node, args, env):
    return args[0].value


@prim(*sorted(facts.kinds_with("subgraph")))
def _subgraph(interp, node, args, env):
    runner = interp.subgraph_runner
    if runner is not None:
        return _results(node, runner(interp, node, list(args)))
    return _results(node, interp.sub_interpreter(node.attr("Subgraph")).run(list(args)))


# ---- guards: checks that an optimized graph's assumptions hold

def type_matches(t: Type, x: Any) -> bool:
    """Whether run-time value `x` has the (specialized) type `t`, as PyTorch's guards check
    tensors: dtype, sizes, strides, requires_grad and device where `t` states them."""
    if isinstance(t, OptionalType):
        return x is None or type_matches(t.elem, x)
    if not isinstance(t, TensorType):
        return True
    if not isinstance(x, Tensor):
        return False
    if t.undefined:
        return False
    if t.scalar_type is not None and SCALAR_TYPES.get(t.scalar_type) != str(x.dtype):
        return False
    if t.sizes is not None:
        if len(t.sizes) != x.dim():
            return False
        if any(s is not None and s != d for s, d in zip(t.sizes, x.shape)):
            return False
        if t.strides is not None and x.dim() > 0:
            item = x.data.itemsize
            actual = tuple(s // item for s in x.data.strides)
            if any(w is not None and (w != a and d != 1) for w, a, d in zip(t.strides, actual, x.shape)):
                return False
    if t.requires_grad is not None:
        if bool(t.requires_grad) != (bool(x.requires_grad) and is_grad_enabled()):
            return False
    return True



def _guards_enforced(interp) -> bool:
    """Outside an executor there is no fallback to go to; the guarded code computes the same
    function for any inputs (guards only select specialized code), so it just runs."""
    return interp.fallback is not None or "fallback_function" in interp.functions


@prim("prim::TypeCheck")
def _type_check(interp, node, args, env):
    ok = all(type_matches(out.type, x) for out, x in zip(node.outputs[:-1], args))
    return list(args) + [ok or not _guards_enforced(interp)]


@prim("prim::RequiresGradCheck")
def _requires_grad_check(interp, node, args, env):
    ok = all(type_matches(t, x) for t, x in zip(node.attr("types"), args))
    return list(args) + [ok or not _guards_enforced(interp)]


@prim("prim::BailOut")
def _bailout(interp, node, args, env):
    if node.inputs[0].node.kind != "prim::BailoutTemplate":
        return args[0]  # inside a BailoutTemplate graph: where execution resumes, no check
    value = args[1]
    if not type_matches(node.outputs[0].type, value) and interp.bailout is not None:
        return interp.bailout(interp, node, args, env)
    return value  # no executor to bail out to: the guarded code is still correct


@prim("prim::BailoutTemplate")
def _bailout_template(interp, node, args, env):
    return 0


@prim("prim::Guard")
def _guard(interp, node, args, env):
    if not type_matches(node.outputs[0].type, args[0]) and interp.bailout is not None:
        return interp.bailout(interp, node, [None] + list(args), env)
    return args[0]


# ---- autograd bookkeeping nodes in differentiated graphs

@prim("prim::AutogradZero")
def _autograd_zero(interp, node, args, env):
    return None


@prim("prim::AutogradAdd")
def _autograd_add(interp, node, args, env):
    a, b = args
    if a is None:
        return b
    if b is None:
        return a
    return run_op("aten::add", a, b)


@prim("prim::GradOf")
def _grad_of(interp, node, args, env):
    return _results(node, interp.run_block(node.blocks[0], [], env))


# ---- nodes whose value is a function of their inputs: the op layer's pure evaluators

def _pure(evaluator):
    return lambda interp, node, args, env: evaluator(node, args)


@prim("prim::NumToTensor", "aten::scalar_tensor_from_number")
def _num_to_tensor(interp, node, args, env):
    return Tensor(PURE_PRIMS["prim::NumToTensor"](node, args))


@prim("prim::ConstantChunk")
def _constant_chunk(interp, node, args, env):
    parts = run_op("aten::chunk", args[0], node.attr("chunks"), node.attr("dim"))
    return parts[0] if len(node.outputs) == 1 else parts


@prim("prim::isinstance")
def _isinstance(interp, node, args, env):
    types = node.attr("types") or ()
    return is_instance_of(args[0], types) or (
        isinstance(args[0], Module) and any(isinstance(t, ClassType) for t in types))


for _kind, _evaluator in PURE_PRIMS.items():
    PRIM_HANDLERS.setdefault(_kind, _pure(_evaluator))
