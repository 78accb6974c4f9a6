"""Loops of the script compiler: `for` over range(), lists, enumerate() and zip(), `while`,
and list comprehensions, as TorchScript emits them. A loop that may break, continue or
return becomes a while-style `prim::Loop` with an explicit counter, carrying a continue flag
(and a did-return flag with the returned value, `prim::Uninitialized` until set)."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Optional

from irjit.compiler.ir import INT, NONE, TENSOR, ListType, Node, Type, Value

from .frames import Frame, assigned_names, has_break, has_continue, has_return, unify

INT64_MAX = 9223372036854775807


@dataclass
class LoopContext:
    """What an exit inside a loop body yields: [continue flag] [did_return, value] carried..."""

    carried: list[str]
    flag: bool
    returns: bool
    return_type: Type
    anchor: Node
    while_test: Optional[ast.expr] = None  # a while loop's test, evaluated to keep going
    uninitialized: dict = field(default_factory=dict)


class LoopEmitter:
    """The loop half of FunctionEmitter (which supplies frames, insertion and expressions)."""

    def loop_values(self, keep_going: bool) -> list[Value]:
        ctx = self.loop
        out = []
        if ctx.flag:
            test = ctx.while_test
            out.append(self.emit_cond(test) if keep_going and test is not None
                       else self.const(keep_going))
        if ctx.returns:
            out += [self.const(False), self.uninitialized(ctx.return_type)]
        return out + [self.frame.lookup(n) for n in ctx.carried]

    def uninitialized(self, t: Type) -> Value:
        ctx = self.loop
        key = str(t)
        if key not in ctx.uninitialized:
            n = self.graph.create("prim::Uninitialized", output_types=[t])
            n.insert_before(ctx.anchor)
            ctx.uninitialized[key] = n.output
        return ctx.uninitialized[key]

    def emit_loop(self, s: ast.stmt) -> tuple[Optional[Value], Optional[Value]]:
        """Emit a for/while loop; returns (did_return, returned value) when it may return."""
        body = s.body
        if s.orelse:
            raise self.error(s, "loops with an else clause are not supported")
        targets: set[str] = set()
        if isinstance(s, ast.For):
            targets = set(assigned_names([ast.Assign(targets=[s.target], value=s.iter)]))
        carried = [n for n in assigned_names(body)
                   if n not in targets and self.frame.lookup(n) is not None]
        breaks, continues, returns = has_break(body), has_continue(body), has_return(body)
        while_form = isinstance(s, ast.While) or breaks or continues or returns
        trip, items = self.iteration(s.iter, s) if isinstance(s, ast.For) else (None, None)
        anchor_holder = self.graph.create("prim::Constant", output_types=[NONE])
        self.graph.insert_node(anchor_holder)
        if while_form:
            max_trip = self.const(INT64_MAX)
            if isinstance(s, ast.While):
                start = self.emit_cond(s.test)
            else:
                start = self.emit_op("aten::gt", [trip, self.const(0)], {}, None)
            limit = max_trip
        else:
            start = self.const(True, s)
            limit = trip
        ctx = LoopContext(carried, breaks or returns, returns, self.return_type or TENSOR,
                          anchor_holder, s.test if isinstance(s, ast.While) else None)
        init = []
        if returns:
            init += [self.const(False), None]
        init += [self.frame.lookup(n) for n in carried]
        counter = isinstance(s, ast.For) and while_form
        if counter:
            init.append(self.const(0))
        outer_loop, self.loop = self.loop, ctx
        if returns:
            init[1] = self.uninitialized(ctx.return_type)
        self.loop = outer_loop
        loop = self.insert("prim::Loop", [limit, start] + init, [v.type for v in init], s)
        block = loop.add_block()
        trip_param = block.add_input(INT)
        params = [block.add_input(v.type) for v in init]
        outer = self.frame
        self.frame = Frame(outer)
        self.loop = ctx
        self.graph.set_insert_point(block)
        flags = params[:2] if returns else []
        for n, p in zip(carried, params[len(flags):]):
            p.set_debug_name(n)
            self.frame.vars[n] = p
        index = params[-1] if counter else trip_param
        if items is not None:
            self.bind_loop_target(s.target, items(index))
        result = self.emit_stmts(body)
        if result is None:
            result = self.fallthrough()
        flag = result[0] if ctx.flag else None
        rest = result[1:] if ctx.flag else result
        if isinstance(s, ast.While):
            cond = self.emit_cond(s.test) if flag is None else flag
            extra = []
        elif while_form:
            nxt = self.emit_op("aten::add", [index, self.const(1)], {}, None)
            more = self.emit_op("aten::lt", [nxt, trip], {}, None)
            cond = self.emit_op("aten::__and__", [more, flag if flag is not None else
                                                  self.const(True)], {}, None)
            extra = [nxt]
        else:
            cond = self.const(True, s)
            extra = []
        for v in [cond] + rest + extra:
            block.register_output(v)
        self.frame = outer
        self.loop = outer_loop
        self.graph.set_insert_point(loop.next)
        anchor_holder.destroy()
        outs = loop.outputs
        for n, o in zip(carried, outs[len(flags):]):
            o.set_debug_name(n)
            outer.vars[n] = o
        for o, t in zip(outs, [v.type for v in rest + extra]):
            if t != o.type and unify(t, o.type) != o.type:
                raise self.error(s, f"a loop-carried variable changes type from {o.type} to {t}")
        return (outs[0], outs[1]) if returns else (None, None)

    def iteration(self, it: ast.expr, at: ast.AST):
        """What a for loop or comprehension runs over: (trip count, index -> the target's
        value or values). range(), a list, a dict's keys, enumerate(list) and zip(lists...), as
        TorchScript."""
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and \
                it.func.id in ("range", "enumerate", "zip") and self.frame.lookup(it.func.id) is None:
            if it.keywords:
                raise self.error(it, f"{it.func.id}() takes no keyword arguments here")
            if it.func.id == "range":
                if not 1 <= len(it.args) <= 3:
                    raise self.error(it, f"range() takes 1 to 3 arguments, got {len(it.args)}")
                bounds = [self.emit_expr(a) for a in it.args]
                for a, v in zip(it.args, bounds):
                    if v.type != INT:
                        raise self.error(a, f"range() expects ints, got {v.type}")
                if len(bounds) == 1:
                    return bounds[0], lambda i: i
                start, end = bounds[0], bounds[1]
                step = bounds[2] if len(bounds) == 3 else self.const(1)
                trip = self.emit_op("aten::__range_length", [start, end, step], {}, at)
                return trip, lambda i: self.emit_op("aten::__derive_index", [i, start, step], {}, at)
            lists = [self.list_operand(a) for a in it.args]
            if it.func.id == "enumerate" and len(lists) != 1:
                raise self.error(it, "enumerate() takes one list here")
            lengths = [self.emit_op("aten::len", [v], {}, at) for v in lists]
            if it.func.id == "enumerate":
                lengths = [self.const(INT64_MAX, it)] + lengths
            bound = self.insert("prim::ListConstruct", lengths, [ListType(INT)]).output
            trip = self.emit_op("prim::min", [bound], {}, at)

            def items(i):
                got = [self.emit_op("aten::__getitem__", [v, i], {}, at) for v in lists]
                return [i] + got if it.func.id == "enumerate" else got
            return trip, items
        iterable = self.emit_expr(it)
        if str(iterable.type).startswith("Dict("):  # a dict iterates over its keys
            iterable = self.emit_op("aten::keys", [iterable], {}, at)
        if not isinstance(iterable.type, ListType):
            raise self.error(it, f"for loops run over range(), a list, a dict, enumerate() or "
                             f"zip(), not {iterable.type}")
        trip = self.emit_op("aten::len", [iterable], {}, at)
        return trip, lambda i: self.emit_op("aten::__getitem__", [iterable, i], {}, at)

    def list_operand(self, e: ast.expr) -> Value:
        v = self.emit_expr(e)
        if not isinstance(v.type, ListType):
            raise self.error(e, f"for loops run over range(), a list, enumerate() or zip(), "
                             f"not {v.type}")
        return v

    def bind_loop_target(self, target: ast.expr, value) -> None:
        if isinstance(value, Value):
            if isinstance(target, ast.Name) and value.node.kind == "prim::Param":
                if target.id != "_":
                    value.set_debug_name(target.id)
                self.frame.vars[target.id] = value
            else:
                self.bind(target, value)
            return
        if not isinstance(target, (ast.Tuple, ast.List)) or len(target.elts) != len(value):
            raise self.error(target, f"the loop target must unpack {len(value)} values")
        for t, v in zip(target.elts, value):
            self.bind_loop_target(t, v)

    def emit_list_comprehension(self, e: ast.ListComp) -> Value:
        """`[elt for target in iterable]` as TorchScript emits it: an empty list, then a loop
        appending to it."""
        if len(e.generators) != 1 or e.generators[0].ifs or e.generators[0].is_async:
            raise self.error(e, "only comprehensions with one `for` and no `if` are supported")
        gen = e.generators[0]
        result = self.insert("prim::ListConstruct", [], [ListType(TENSOR)]).output
        trip, items = self.iteration(gen.iter, e)
        loop = self.insert("prim::Loop", [trip, self.const(True, e)], [], e)
        block = loop.add_block()
        index = block.add_input(INT)
        outer = self.frame
        self.frame = Frame(outer)
        self.graph.set_insert_point(block)
        self.bind_loop_target(gen.target, items(index))
        elt = self.emit_expr(e.elt)
        result.type = ListType(elt.type)
        self.emit_op("aten::append", [result, elt], {}, e)
        block.register_output(loop.inputs[1])
        self.frame = outer
        self.graph.set_insert_point(loop.next)
        return result
