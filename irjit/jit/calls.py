"""Calls in the script compiler: ops (`torch.x`/`irjit.x`, tensor methods, builtins) matched
against the registry's schemas, other scripted functions (`prim::CallFunction`), module
attributes (`prim::GetAttr`) and submodule or method calls (`prim::CallMethod`)."""

from __future__ import annotations

import ast
import types
from typing import Any, Optional

import numpy as np

from irjit.compiler.ir import (BOOL, FLOAT, FUNCTION, INT, STR, TENSOR, ClassType, ListType,
                               TupleType, Type, Value, make_constant)
from irjit.compiler.schema_match import MatchError, fixed_size_lists, match, schema_type
from irjit.ops.facts import builtin_call_op
from irjit.ops.registry import NO_DEFAULT
from irjit.ops.tensor import Tensor
from irjit.runtime.module import Module as RuntimeModule

from .builtin_modules import builtin_signature
from .frames import unify
from .signature import Signature

_OP_NAMESPACES = ("torch", "irjit")


class CallEmitter:
    """The call half of FunctionEmitter (which supplies frames, insertion and expressions)."""

    def get_attr(self, module_value: Value, name: str, at: ast.AST) -> Value:
        """`prim::GetAttr` of a module attribute, typed by the attribute's current value."""
        module = self.modules[module_value]
        try:
            value = module.get(name)
        except KeyError:
            raise self.error(at, f"module {module.qualified_name} has no attribute {name!r}") \
                from None
        t = attribute_type(value)
        if t is None:
            raise self.error(at, f"attribute {name!r} of type {type(value).__name__} cannot be "
                             "used in a scripted method")
        out = self.insert("prim::GetAttr", [module_value], [t]).set_attr("name", "s", name).output
        out.set_debug_name(name)
        if isinstance(t, ClassType):
            self.modules[out] = value
        return out

    def call_method(self, module_value: Value, name: str, e: ast.Call) -> Value:
        """`prim::CallMethod[name=...]` on a module value, its method compiled on first use."""
        module = self.modules[module_value]
        method = self.compile_method(module, name, e)
        args, kwargs = self.emit_args(e)
        # a built-in torch.nn module without a graph here: the runtime has its forward
        signature = builtin_signature(module) if method is None else method.signature
        bound, rtype = self.bind_call(signature, args, kwargs, e), signature.return_type
        n = self.insert("prim::CallMethod", [module_value] + bound, [rtype], e)
        n.set_attr("name", "s", name)
        return n.output

    def emit_call(self, e: ast.Call) -> Value:
        func = e.func
        if isinstance(func, ast.Attribute) and self.is_op_namespace(func.value):
            args, kwargs = self.emit_args(e)
            return self.emit_op(f"aten::{func.attr}", args, kwargs, e)
        if isinstance(func, ast.Attribute):
            self_value = self.emit_expr(func.value)
            if self_value in self.modules:
                member = self.modules[self_value].get(func.attr, None)
                if isinstance(member, RuntimeModule):
                    return self.call_method(self.get_attr(self_value, func.attr, func), "forward", e)
                return self.call_method(self_value, func.attr, e)
            args, kwargs = self.emit_args(e)
            return self.emit_op(f"aten::{func.attr}", [self_value] + args, kwargs, e)
        if isinstance(func, ast.Name) and self.frame.lookup(func.id) in self.modules:
            return self.call_method(self.frame.lookup(func.id), "forward", e)
        if isinstance(func, ast.Name) and self.frame.lookup(func.id) is None:
            target = self.globals.get(func.id)
            builtin = builtin_call_op(func.id)
            if target is None and builtin is not None:
                args, kwargs = self.emit_args(e)
                if builtin == "prim::Print":  # any number of values of any type
                    if kwargs:
                        raise self.error(e, "print() takes no keyword arguments here")
                    self.insert(builtin, args, [], e)
                    return self.const(None)
                return self.emit_op(builtin, args, kwargs, e)
            if isinstance(target, types.FunctionType) or hasattr(target, "signature"):
                return self.emit_function_call(target, e)
        raise self.error(e, f"cannot call {ast.unparse(func)!r}: only ops (torch.x / irjit.x), "
                         "tensor methods, builtins and other scripted functions can be called")

    def is_op_namespace(self, e: ast.expr) -> bool:
        if not isinstance(e, ast.Name) or self.frame.lookup(e.id) is not None:
            return False
        g = self.globals.get(e.id)
        return isinstance(g, types.ModuleType) and g.__name__ in _OP_NAMESPACES

    def emit_args(self, e: ast.Call) -> tuple[list[Value], dict[str, Value]]:
        args = []
        for a in e.args:
            if isinstance(a, ast.Starred):
                raise self.error(a, "starred arguments are not supported")
            args.append(self.emit_expr(a))
        kwargs = {}
        for k in e.keywords:
            if k.arg is None:
                raise self.error(k, "**kwargs are not supported")
            kwargs[k.arg] = self.emit_expr(k.value)
        return args, kwargs

    def emit_op(self, kind: str, args: list[Value], kwargs: dict[str, Value],
                at: Optional[ast.AST]) -> Value:
        def pack(values, elem):
            return self.insert("prim::ListConstruct", values, [ListType(elem)]).output
        try:
            m = match(kind, args, kwargs, pack)
        except MatchError as err:
            raise self.error(at or self.fn_def, str(err)) from None
        inputs = []
        for arg, v in zip(m.entry.schema.arguments, m.inputs):
            if v is None:
                v = self.const(arg.default, type=self.default_type(arg))
            elif v.type == INT and arg.name in fixed_size_lists(m.entry.schema):
                v = pack([v], INT)
            inputs.append(v)
        n = self.insert(kind, inputs, m.output_types, at)
        if len(n.outputs) == 1:
            return n.output
        return self.insert("prim::TupleConstruct", list(n.outputs),
                           [TupleType(tuple(o.type for o in n.outputs))]).output

    @staticmethod
    def default_type(arg) -> Optional[Type]:
        t = schema_type(arg.type)
        if arg.default is None:
            return None
        if isinstance(t, ListType):
            return t
        return None

    def emit_function_call(self, target: Any, e: ast.Call) -> Value:
        callee = self.compile_callee(target, e)
        args, kwargs = self.emit_args(e)
        bound = self.bind_call(callee.signature, args, kwargs, e)
        fn = make_constant(self.graph, None, FUNCTION)
        fn.attrs.clear()
        fn.set_attr("name", "s", callee.signature.name)
        self.graph.insert_node(fn)
        return self.insert("prim::CallFunction", [fn.output] + bound,
                           [callee.signature.return_type], e).output

    def bind_call(self, sig: Signature, args: list[Value], kwargs: dict[str, Value],
                  e: ast.Call) -> list[Value]:
        """The arguments of a call of a scripted function in parameter order, defaults filled."""
        kwargs = dict(kwargs)
        if len(args) > len(sig.params):
            raise self.error(e, f"{sig.name}() takes {len(sig.params)} arguments but "
                             f"{len(args)} were given")
        bound = list(args)
        for p in sig.params[len(args):]:
            if p.name in kwargs:
                bound.append(kwargs.pop(p.name))
            elif p.default is not NO_DEFAULT:
                bound.append(self.const(p.default))
            else:
                raise self.error(e, f"{sig.name}() is missing argument {p.name!r}")
        if kwargs:
            raise self.error(e, f"{sig.name}() got an unexpected keyword argument "
                             f"{next(iter(kwargs))!r}")
        for p, v in zip(sig.params, bound):
            if unify(p.type, v.type) != p.type and not (p.type == FLOAT and v.type == INT):
                raise self.error(e, f"{sig.name}() expects {p.name} of type {p.type}, "
                                 f"got {v.type}")
        return bound


def attribute_type(value: Any) -> Optional[Type]:
    """The IR type of a module attribute's value (None: not usable from scripted code)."""
    if isinstance(value, (Tensor, np.ndarray)):
        return TENSOR
    if isinstance(value, RuntimeModule):
        return ClassType(value.qualified_name)
    if isinstance(value, bool):
        return BOOL
    if isinstance(value, int):
        return INT
    if isinstance(value, float):
        return FLOAT
    if isinstance(value, str):
        return STR
    if isinstance(value, (list, tuple)) and value:
        inner = {attribute_type(v) for v in value}
        if len(inner) == 1 and None not in inner:
            elem = inner.pop()
            return ListType(elem) if isinstance(value, list) else TupleType((elem,) * len(value))
    return None
