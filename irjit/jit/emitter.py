"""The script compiler: one Python function's `ast` to a TorchScript graph.

Variables become SSA values directly (If outputs are the variables both branches define, in
name order; Loop-carried values the variables the body assigns that exist before the loop).
Early exits follow TorchScript's exit transform: statements after an `if` that may return,
break or continue are emitted into that `if`'s branches, and a loop that may break or return
becomes a while-style loop carrying a continue flag (and a did-return flag with the value)."""

from __future__ import annotations

import ast
import builtins
from typing import Any, Callable, Optional

import numpy as np

from irjit.compiler.ir import (BOOL, FLOAT, INT, STR, TENSOR, ClassType, DictType, Graph,
                               ListType, Node, OptionalType, SourceLocation, TensorType,
                               TupleType, Type, Value, make_constant)
from irjit.compiler.passes import get_pass
from irjit.ops.dtypes import code_of
from irjit.ops.registry import NO_DEFAULT

from .annotations import annotation_type
from .calls import CallEmitter
from .errors import ScriptError
from .frames import Frame, exits_loop_or_function, has_return, unify
from .loops import LoopContext, LoopEmitter
from .signature import Parameter, Signature
_BINARY = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div",
           ast.FloorDiv: "floordiv", ast.Mod: "remainder", ast.Pow: "pow",
           ast.MatMult: "matmul", ast.BitAnd: "__and__", ast.BitOr: "__or__",
           ast.BitXor: "__xor__", ast.LShift: "__lshift__", ast.RShift: "__rshift__"}
_INPLACE = {"add": "add_", "sub": "sub_", "mul": "mul_", "div": "div_"}
_COMPARE = {ast.Lt: "lt", ast.Gt: "gt", ast.LtE: "le", ast.GtE: "ge", ast.Eq: "eq",
            ast.NotEq: "ne", ast.Is: "__is__", ast.IsNot: "__isnot__"}


class FunctionEmitter(LoopEmitter, CallEmitter):
    """Compiles one `def` (its `ast`, the file and first line it came from, its globals)."""

    def __init__(self, fn_def: ast.FunctionDef, filename: str, line_offset: int, col_offset: int,
                 globals_: dict, compile_callee: Callable[[Any, ast.AST], Any],
                 self_module: Any = None,
                 compile_method: Optional[Callable[[Any, str, ast.AST], Any]] = None):
        self.fn_def = fn_def
        self.filename = filename
        self.line_offset = line_offset
        self.col_offset = col_offset
        self.globals = globals_
        self.compile_callee = compile_callee
        self.self_module = self_module
        self.compile_method = compile_method
        self.modules: dict[Value, Any] = {}  # values that are modules: the module objects
        self.graph = Graph()
        self.frame = Frame(None)
        self.loop: Optional[LoopContext] = None
        self.return_type: Optional[Type] = None
        self.signature: Optional[Signature] = None

    # ---- errors, locations, insertion
    def location(self, node: ast.AST) -> SourceLocation:
        return SourceLocation(self.filename, node.lineno + self.line_offset,
                              node.col_offset + self.col_offset)

    def error(self, node: ast.AST, message: str) -> ScriptError:
        return ScriptError(message, self.location(node))

    def insert(self, kind: str, inputs: list[Value], types: list[Type],
               at: Optional[ast.AST] = None) -> Node:
        n = self.graph.insert(kind, inputs, output_types=types)
        if at is not None:
            n.source = self.location(at)
        return n

    def const(self, value: Any, at: Optional[ast.AST] = None, type: Optional[Type] = None) -> Value:
        n = make_constant(self.graph, value, type)
        if at is not None:
            n.source = self.location(at)
        return self.graph.insert_node(n).output

    # ---- the function
    def emit(self) -> tuple[Graph, Signature]:
        args = self.fn_def.args
        if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
            raise self.error(self.fn_def, "only positional parameters are supported")
        params = args.args
        if self.self_module is not None:
            if not params:
                raise self.error(self.fn_def, "a method needs a `self` parameter")
            me = self.graph.add_input("self", ClassType(self.self_module.qualified_name))
            self.modules[me] = self.self_module
            self.frame.vars[params[0].arg] = me
            params = params[1:]
        defaults = [NO_DEFAULT] * (len(args.args) - len(args.defaults)) + list(args.defaults)
        defaults = defaults[len(args.args) - len(params):]
        signature = []
        for a, d in zip(params, defaults):
            t = TENSOR if a.annotation is None else annotation_type(a.annotation, self.error)
            value = NO_DEFAULT
            if d is not NO_DEFAULT:
                try:
                    value = ast.literal_eval(d)
                except ValueError:
                    raise self.error(d, "default values must be constants") from None
            signature.append(Parameter(a.arg, t, value))
            self.frame.vars[a.arg] = self.graph.add_input(a.arg, t)
        if self.fn_def.returns is not None:
            self.return_type = annotation_type(self.fn_def.returns, self.error)
        body = [s for s in self.fn_def.body]
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            body = body[1:]
        result = self.emit_stmts(body)
        if result is None:
            result = self.fallthrough()
        out = result[0]
        if self.return_type is not None and unify(self.return_type, out.type) != self.return_type:
            raise self.error(self.fn_def, f"return value has type {out.type}, but the function "
                             f"is annotated to return {self.return_type}")
        self.graph.register_output(out)
        get_pass("constant_pooling").run(self.graph)
        rtype = self.return_type or out.type
        self.signature = Signature(self.fn_def.name, signature, rtype)
        return self.graph, self.signature

    # ---- statement lists and exits
    def emit_stmts(self, stmts: list[ast.stmt]) -> Optional[list[Value]]:
        """Emit statements; None when control falls off the end, otherwise the values the
        enclosing function or loop body ends with (see `exit_values`)."""
        for i, s in enumerate(stmts):
            rest = stmts[i + 1:]
            if isinstance(s, ast.Return):
                if s.value is None:
                    return self.exit_values("return", self.const(None))
                return self.exit_values("return", self.emit_expr(s.value))
            if isinstance(s, ast.Break):
                return self.exit_values("break")
            if isinstance(s, ast.Continue):
                return self.exit_values("continue")
            if isinstance(s, ast.If) and exits_loop_or_function(s):
                cond = self.emit_cond(s.test)
                return self.emit_if_blocks(
                    s, cond, lambda: self.emit_stmts(s.body + rest) or self.fallthrough(),
                    lambda: self.emit_stmts(s.orelse + rest) or self.fallthrough(),
                    refine=self.refinements(s.test))
            if isinstance(s, (ast.For, ast.While)) and has_return([s]):
                did_return, value = self.emit_loop(s)
                return self.emit_if_blocks(
                    None, did_return, lambda: self.exit_values("return", value),
                    lambda: self.emit_stmts(rest) or self.fallthrough())
            self.emit_stmt(s)
        return None

    def fallthrough(self) -> list[Value]:
        if self.loop is None:
            return [self.const(None)]
        return self.loop_values(True)

    def exit_values(self, how: str, value: Optional[Value] = None) -> list[Value]:
        """What the innermost function or loop body yields when it returns, breaks or continues."""
        if self.loop is None:
            return [value]
        if how == "return":
            ctx = self.loop
            out = [self.const(False)] if ctx.flag else []
            out += [self.const(True), value]
            return out + [self.uninitialized(self.frame.lookup(n).type) for n in ctx.carried]
        return self.loop_values(how == "continue")

    def emit_if_blocks(self, at: Optional[ast.AST], cond: Value, then, else_,
                       refine: Optional[tuple] = None) -> list[Value]:
        """A prim::If whose branches end their enclosing body; its outputs are what they yield."""
        n = self.insert("prim::If", [cond], [], at)
        results = []
        outer = self.frame
        for i, emit in enumerate((then, else_)):
            block = n.add_block()
            self.frame = Frame(outer)
            self.graph.set_insert_point(block)
            if refine is not None and refine[1] == i:
                self.refine(refine[0])
            results.append((block, emit()))
        self.frame = outer
        self.graph.set_insert_point(n.next)
        outs = []
        for k, (a, b) in enumerate(zip(results[0][1], results[1][1])):
            if a is b:  # unchanged in both branches: no If output
                outs.append(a)
                continue
            t = unify(a.type, b.type)
            if t is None:
                raise self.error(at or self.fn_def, f"branches yield {a.type} and {b.type}")
            outs.append(n.add_output(t))
            results[0][0].register_output(a)
            results[1][0].register_output(b)
        return outs

    # ---- statements
    def emit_stmt(self, s: ast.stmt) -> None:
        if isinstance(s, ast.Assign):
            if len(s.targets) != 1:
                raise self.error(s, "chained assignment is not supported")
            self.assign(s.targets[0], s.value)
        elif isinstance(s, ast.AnnAssign):
            declared = annotation_type(s.annotation, self.error)
            if s.value is None:
                raise self.error(s, "a variable annotation needs a value")
            v = self.emit_expr(s.value, declared)
            self.bind(s.target, v)
        elif isinstance(s, ast.AugAssign):
            self.emit_aug_assign(s)
        elif isinstance(s, ast.Expr):
            if not (isinstance(s.value, ast.Constant) and isinstance(s.value.value, str)):
                self.emit_expr(s.value)
        elif isinstance(s, ast.If):
            self.emit_if(s)
        elif isinstance(s, (ast.For, ast.While)):
            self.emit_loop(s)
        elif isinstance(s, ast.Pass):
            pass
        elif isinstance(s, ast.Assert):
            self.emit_assert(s)
        elif isinstance(s, ast.Raise):
            self.emit_raise(s)
        else:
            raise self.error(s, f"{type(s).__name__.lower()} statements are not supported "
                             "in scripted functions")

    def emit_assert(self, s: ast.Assert) -> None:
        """`assert c, "msg"`: an If raising AssertionError in its else branch, as TorchScript."""
        if s.msg is not None and not (isinstance(s.msg, ast.Constant) and isinstance(s.msg.value, str)):
            raise self.error(s.msg, "assert messages must be string constants")
        cond = self.emit_cond(s.test)
        n = self.insert("prim::If", [cond], [], s)
        n.add_block()
        self.graph.set_insert_point(n.add_block())
        message = self.const("AssertionError: " + (s.msg.value if s.msg is not None else ""))
        self.insert("prim::RaiseException", [message, self.const(None)], [], s)
        self.graph.set_insert_point(n.next)

    def emit_raise(self, s: ast.Raise) -> None:
        """`raise SomeError("msg")`: prim::RaiseException(msg, "builtins.SomeError")."""
        exc = s.exc
        if isinstance(exc, ast.Call) and isinstance(exc.func, ast.Name) and not exc.keywords \
                and len(exc.args) <= 1 and isinstance(getattr(builtins, exc.func.id, None), type):
            message = self.emit_expr(exc.args[0]) if exc.args else self.const("")
            if message.type != STR:
                raise self.error(exc.args[0], "exception messages must be strings")
            cls = self.const(f"builtins.{exc.func.id}", exc)
            self.insert("prim::RaiseException", [message, cls], [], s)
            return
        raise self.error(s, "only `raise BuiltinError(message)` is supported")

    def assign(self, target: ast.expr, value: ast.expr) -> None:
        if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)) \
                and len(target.elts) == len(value.elts):
            values = [self.emit_expr(e) for e in value.elts]
            for t, v in zip(target.elts, values):
                self.bind(t, v)
            return
        if isinstance(target, ast.Subscript):
            container = self.emit_expr(target.value)
            key = self.emit_expr(target.slice)
            self.emit_op("aten::_set_item", [container, key, self.emit_expr(value)], {}, target)
            return
        self.bind(target, self.emit_expr(value))

    def bind(self, target: ast.expr, v: Value) -> None:
        if isinstance(target, ast.Name):
            if v.debug_name is None and v.node.owning_block is self.graph.insert_point.owning_block:
                v.set_debug_name(target.id)
            self.frame.vars[target.id] = v
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            if isinstance(v.type, TupleType):
                kind, types = "prim::TupleUnpack", list(v.type.elems)
            elif isinstance(v.type, ListType):
                kind, types = "prim::ListUnpack", [v.type.elem] * len(target.elts)
            else:
                raise self.error(target, f"cannot unpack a value of type {v.type}")
            if len(types) != len(target.elts):
                raise self.error(target, f"cannot unpack {len(types)} values into "
                                 f"{len(target.elts)} names")
            n = self.insert(kind, [v], types, target)
            for t, o in zip(target.elts, n.outputs):
                self.bind(t, o)
            return
        raise self.error(target, f"cannot assign to {ast.unparse(target)!r}")

    def emit_aug_assign(self, s: ast.AugAssign) -> None:
        if not isinstance(s.target, ast.Name):
            raise self.error(s, "augmented assignment is supported on names only")
        op = _BINARY.get(type(s.op))
        if op is None:
            raise self.error(s, "unsupported augmented assignment")
        lhs = self.lookup(s.target.id, s.target)
        rhs = self.emit_expr(s.value)
        if isinstance(lhs.type, TensorType) and op in _INPLACE:
            op = _INPLACE[op]
        self.bind(s.target, self.emit_op(f"aten::{op}", [lhs, rhs], {}, s))

    def emit_if(self, s: ast.If) -> None:
        cond = self.emit_cond(s.test)
        n = self.insert("prim::If", [cond], [], s)
        outer = self.frame
        refine = self.refinements(s.test)
        frames = []
        for i, body in enumerate((s.body, s.orelse)):
            block = n.add_block()
            self.frame = Frame(outer)
            self.graph.set_insert_point(block)
            if refine is not None and refine[1] == i:
                self.refine(refine[0])
            self.emit_stmts(body)
            frames.append((block, self.frame))
        self.frame = outer
        self.graph.set_insert_point(n.next)
        names = sorted(set(frames[0][1].vars) | set(frames[1][1].vars))
        for name in names:
            a, b = frames[0][1].lookup(name), frames[1][1].lookup(name)
            if a is None or b is None:
                continue
            t = unify(a.type, b.type)
            if t is None:
                continue
            frames[0][0].register_output(a)
            frames[1][0].register_output(b)
            out = n.add_output(t)
            out.set_debug_name(name)
            outer.vars[name] = out

    def refinements(self, test: ast.expr) -> Optional[tuple[str, int]]:
        """(name, branch) when `test` is `name is None` / `name is not None` on an Optional:
        the branch where it is not None sees it as the contained type."""
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and \
                isinstance(test.left, ast.Name) and isinstance(test.comparators[0], ast.Constant) \
                and test.comparators[0].value is None:
            v = self.frame.lookup(test.left.id)
            if v is not None and isinstance(v.type, OptionalType):
                if isinstance(test.ops[0], ast.Is):
                    return test.left.id, 1
                if isinstance(test.ops[0], ast.IsNot):
                    return test.left.id, 0
        return None

    def refine(self, name: str) -> None:
        v = self.frame.lookup(name)
        cast = self.insert("prim::unchecked_cast", [v], [v.type.elem])
        cast.output.set_debug_name(name)
        self.frame.refined[name] = cast.output

    # ---- loops

    # ---- expressions
    def lookup(self, name: str, node: ast.AST) -> Value:
        v = self.frame.lookup(name)
        if v is None:
            raise self.error(node, f"undefined value {name}")
        return v

    def emit_cond(self, test: ast.expr) -> Value:
        v = self.emit_expr(test)
        if v.type == BOOL:
            return v
        if isinstance(v.type, TensorType) or v.type in (INT, FLOAT):
            return self.emit_op("aten::Bool", [v], {}, test)
        raise self.error(test, f"a condition must be a bool, not {v.type}")

    def emit_expr(self, e: ast.expr, declared: Optional[Type] = None) -> Value:
        if isinstance(e, ast.Constant):
            if isinstance(e.value, (bool, int, float, str)) or e.value is None:
                return self.const(e.value, e)
            raise self.error(e, f"unsupported constant {e.value!r}")
        if isinstance(e, ast.Name):
            return self.emit_name(e)
        if isinstance(e, ast.BinOp):
            return self.emit_binop(e)
        if isinstance(e, ast.UnaryOp):
            return self.emit_unary(e)
        if isinstance(e, ast.Compare):
            return self.emit_compare(e)
        if isinstance(e, ast.BoolOp):
            return self.emit_boolop(e)
        if isinstance(e, ast.IfExp):
            cond = self.emit_cond(e.test)
            return self.emit_if_blocks(e, cond, lambda: [self.emit_expr(e.body)],
                                       lambda: [self.emit_expr(e.orelse)])[0]
        if isinstance(e, ast.Call):
            return self.emit_call(e)
        if isinstance(e, ast.Subscript):
            return self.emit_subscript(e)
        if isinstance(e, ast.Attribute):
            return self.emit_attribute(e)
        if isinstance(e, (ast.List, ast.Tuple)):
            values = [self.emit_expr(x) for x in e.elts]
            if isinstance(e, ast.Tuple):
                return self.insert("prim::TupleConstruct", values,
                                   [TupleType(tuple(v.type for v in values))]).output
            return self.list_value(values, e, declared)
        if isinstance(e, ast.ListComp):
            return self.emit_list_comprehension(e)
        if isinstance(e, ast.Dict):
            if any(k is None for k in e.keys):
                raise self.error(e, "dict unpacking is not supported")
            flat = []
            for k, v in zip(e.keys, e.values):
                flat += [self.emit_expr(k), self.emit_expr(v)]
            if declared is not None and str(declared).startswith("Dict("):
                t = declared
            elif flat:
                t = DictType(flat[0].type, self.element_type(flat[1::2], e))
            else:
                raise self.error(e, "empty dicts need a type annotation: "
                                 "`d: Dict[str, Tensor] = {}`")
            return self.insert("prim::DictConstruct", flat, [t]).output
        raise self.error(e, f"{type(e).__name__} expressions are not supported")

    def element_type(self, values: list[Value], at: ast.AST) -> Type:
        t = values[0].type
        for v in values[1:]:
            u = unify(t, v.type)
            if u is None:
                raise self.error(at, f"list elements have different types: {t} and {v.type}")
            t = u
        return t

    def list_value(self, values: list[Value], at: ast.AST, declared: Optional[Type] = None) -> Value:
        if isinstance(declared, ListType):
            t = declared
        elif values:
            t = ListType(self.element_type(values, at))
        else:
            raise self.error(at, "empty lists need a type annotation: `xs: List[int] = []`")
        return self.insert("prim::ListConstruct", values, [t]).output

    def emit_name(self, e: ast.Name) -> Value:
        v = self.frame.lookup(e.id)
        if v is not None:
            return v
        g = self.globals.get(e.id, getattr(builtins, e.id, None))
        if isinstance(g, (bool, int, float, str)):
            return self.const(g, e)
        if e.id == "None":
            return self.const(None, e)
        raise self.error(e, f"undefined value {e.id}")

    def emit_binop(self, e: ast.BinOp) -> Value:
        op = _BINARY.get(type(e.op))
        if op is None:
            raise self.error(e, f"unsupported operator {type(e.op).__name__}")
        lhs, rhs = self.emit_expr(e.left), self.emit_expr(e.right)
        if not isinstance(lhs.type, TensorType) and isinstance(rhs.type, TensorType):
            if op in ("add", "mul"):
                lhs, rhs = rhs, lhs
            elif op == "sub":
                return self.emit_op("aten::rsub", [rhs, lhs], {}, e)
        if op == "floordiv" and isinstance(lhs.type, TensorType):
            op = "floor_divide"
        return self.emit_op(f"aten::{op}", [lhs, rhs], {}, e)

    def emit_unary(self, e: ast.UnaryOp) -> Value:
        if isinstance(e.op, ast.USub) and isinstance(e.operand, ast.Constant) and \
                type(e.operand.value) in (int, float):
            return self.const(-e.operand.value, e)
        v = self.emit_expr(e.operand)
        if isinstance(e.op, ast.UAdd):
            return v
        kind = {ast.USub: "aten::neg", ast.Not: "aten::__not__",
                ast.Invert: "aten::bitwise_not"}[type(e.op)]
        if kind == "aten::__not__" and v.type != BOOL:
            v = self.emit_op("aten::Bool", [v], {}, e)
        return self.emit_op(kind, [v], {}, e)

    def emit_compare(self, e: ast.Compare) -> Value:
        if len(e.ops) != 1:
            raise self.error(e, "chained comparisons are not supported")
        lhs, rhs = self.emit_expr(e.left), self.emit_expr(e.comparators[0])
        op = e.ops[0]
        if isinstance(op, (ast.In, ast.NotIn)):
            v = self.emit_op("aten::__contains__", [rhs, lhs], {}, e)
            return self.emit_op("aten::__not__", [v], {}, e) if isinstance(op, ast.NotIn) else v
        return self.emit_op(f"aten::{_COMPARE[type(op)]}", [lhs, rhs], {}, e)

    def emit_boolop(self, e: ast.BoolOp) -> Value:
        first = self.emit_cond(e.values[0])
        if len(e.values) > 2:
            rest = ast.BoolOp(op=e.op, values=e.values[1:])
            ast.copy_location(rest, e.values[1])
        else:
            rest = e.values[1]
        second = lambda: [self.emit_cond(rest)]  # noqa: E731
        if isinstance(e.op, ast.And):
            return self.emit_if_blocks(e, first, second, lambda: [self.const(False, e)])[0]
        return self.emit_if_blocks(e, first, lambda: [self.const(True, e)], second)[0]

    def emit_attribute(self, e: ast.Attribute) -> Value:
        if self.is_op_namespace(e.value):
            code = dtype_code(e.attr)
            if code is None:
                raise self.error(e, f"unsupported attribute {ast.unparse(e)!r} (only dtypes "
                                 "such as torch.float32 are values)")
            return self.const(code, e)
        base = self.emit_expr(e.value)
        if base in self.modules:
            return self.get_attr(base, e.attr, e)
        if isinstance(base.type, TensorType):
            if e.attr == "shape":
                return self.emit_op("aten::size", [base], {}, e)
            if e.attr == "T":
                return self.emit_op("aten::numpy_T", [base], {}, e)
        raise self.error(e, f"unsupported attribute {e.attr!r} of a value of type {base.type}")

    def emit_subscript(self, e: ast.Subscript) -> Value:
        base = self.emit_expr(e.value)
        if isinstance(base.type, TensorType):
            return self.emit_tensor_index(base, e)
        if isinstance(e.slice, ast.Slice):
            s = e.slice
            if s.step is not None:
                raise self.error(s, "list slices with a step are not supported")
            lo = self.emit_expr(s.lower) if s.lower is not None else self.const(None)
            hi = self.emit_expr(s.upper) if s.upper is not None else self.const(None)
            return self.emit_op("aten::slice", [base, lo, hi, self.const(1)], {}, e)
        if isinstance(base.type, TupleType):
            if not (isinstance(e.slice, ast.Constant) and isinstance(e.slice.value, int)):
                raise self.error(e.slice, "tuples are indexed by integer constants")
            i = e.slice.value
            if base.node.kind == "prim::TupleConstruct":
                return base.node.inputs[i]
            return self.insert("prim::TupleIndex", [base, self.const(i, e.slice)],
                               [base.type.elems[i]], e).output
        return self.emit_op("aten::__getitem__", [base, self.emit_expr(e.slice)], {}, e)

    def emit_tensor_index(self, base: Value, e: ast.Subscript) -> Value:
        items = e.slice.elts if isinstance(e.slice, ast.Tuple) else [e.slice]
        dim = 0
        v = base
        for item in items:
            if isinstance(item, ast.Slice):
                if item.step is not None:
                    step = self.emit_expr(item.step)
                else:
                    step = None
                lo = self.emit_expr(item.lower) if item.lower is not None else None
                hi = self.emit_expr(item.upper) if item.upper is not None else None
                d = self.const(dim, item)
                lo = lo if lo is not None else self.const(None)
                hi = hi if hi is not None else self.const(None)
                v = self.emit_op("aten::slice", [v, d, lo, hi, step or self.const(1)], {}, e)
                dim += 1
            elif isinstance(item, ast.Constant) and item.value is None:
                v = self.emit_op("aten::unsqueeze", [v, self.const(dim, item)], {}, e)
                dim += 1
            else:
                index = self.emit_expr(item)
                if index.type != INT:
                    raise self.error(item, f"tensors are indexed by ints and slices here, "
                                     f"not {index.type}")
                v = self.emit_op("aten::select", [v, self.const(dim, item), index], {}, e)
        return v

    # ---- calls

__all__ = ["FunctionEmitter", "Parameter", "Signature"]


_DTYPE_ALIASES = {"float": "float32", "double": "float64", "half": "float16", "long": "int64",
                  "int": "int32", "short": "int16", "bool": "bool"}


def dtype_code(name: str) -> Optional[int]:
    """The ScalarType number TorchScript uses for `torch.<name>` (`float32` -> 6), if a dtype."""
    name = _DTYPE_ALIASES.get(name, name)
    try:
        dtype = np.dtype(name)
        return code_of(dtype) if dtype.name == name else None  # not numpy's codes ("e", "f")
    except (TypeError, KeyError):
        return None
