"""Specialization-time folds of a native runner's plan. A plan is keyed by its inputs' layouts
(dtype, sizes, strides of each tensor), the values of its int-list inputs and which inputs are
None; whatever that key determines becomes a constant, so the shape bookkeeping of backward
graphs (`aten::size`, `_size_if_not_equal`, `_grad_sum_to_size`) folds away or fuses."""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from irjit.compiler.codegen.lower import contiguous_strides, entry_of, is_candidate
from irjit.compiler.codegen.partition import make_group
from irjit.compiler.ir import Block, Graph, Node, Value
from irjit.compiler.ir.constants import constant_value
from irjit.compiler.passes.constant_propagation import run as constant_propagation
from irjit.compiler.passes.eliminate_dead_code import run as eliminate_dead_code
from irjit.compiler.passes.inline import inline_call, run as inline
from irjit.compiler.passes.insert_guards import remove_profile_nodes
from irjit.ops import facts
from irjit.ops.dtypes import code_of
from irjit.ops.registry import is_registered, overloads
from irjit.ops.tensor import Tensor
from irjit.ops.types import DTYPE_TO_SCALAR_TYPE, NONE, SCALAR_TYPES, ListType, NamedType, OptionalType, TensorType

from .autodiff_helper_graphs import calls_any_helper, calls_helper, fold_helper_calls, inlined_graphs


_SHAPE_UNKNOWN_TAGS = ("data_dependent", "tensor_to_number", "opaque", "side_effects", "call",
                       "control_flow")
_MUTATING_TAGS = ("side_effects", "writes_first_input", "opaque", "call")


def is_size_list(x: Any) -> bool:
    return isinstance(x, list) and all(type(i) is int for i in x)


def _mutates(node: Node) -> bool:
    """Whether the node may write one of its inputs (an op the registry does not know may)."""
    if node.kind.startswith("aten::") and not is_registered(node.kind):
        return True
    if calls_any_helper(node):
        return False  # symbolic_script's AD_ helpers read their arguments only
    return any(facts.has_tag(node.kind, t) for t in _MUTATING_TAGS) or \
        any(e.schema.is_inplace for e in overloads(node.kind))


def _never_mutated(v: Value) -> bool:
    """No use of `v` may change it in place (an in-place op could change a tensor's shape,
    `append` a list's value), nor hand out an alias of a list that could be."""
    for u in v.uses:
        if _mutates(u.user):
            return False
        if facts.has_tag(u.user.kind, "may_alias_input") and isinstance(v.type, ListType) and \
                not all(_never_mutated(o) for o in u.user.outputs):
            return False
    return True


def is_dtype_code(v: Value) -> bool:
    """An `int` graph input used only as a dtype (a `ScalarType` argument, such as the
    `self.dtype` a forward graph hands its backward for `grad.to(self_scalar_type)`): the
    plan's key records its value (few occur), so the casts it sets have a known dtype."""
    if v.type != NamedType("int") or not v.uses:
        return False
    for u in v.uses:
        if u.user.kind == "prim::FallbackGraph":  # the same graph, run interpreted on a guard's failure
            if is_dtype_code(u.user.attr("Subgraph").inputs[u.offset]):
                continue
            return False
        entry = entry_of(u.user) if u.user.kind.startswith("aten::") else None
        args = entry.schema.arguments if entry is not None else ()
        if u.offset >= len(args) or args[u.offset].type.rstrip("?") != "ScalarType":
            return False
    return True


def _determined_input(v: Value) -> bool:
    """Tensors by their layout, int lists and bools by value, None: what the plan's key
    records (a number or a module is keyed by its type only)."""
    t = v.type
    if isinstance(t, OptionalType):
        t = t.elem
    return (isinstance(t, TensorType) or t == NamedType("bool") or
            isinstance(t, ListType) and t.elem == NamedType("int")) and _never_mutated(v) or \
        is_dtype_code(v)


def _determines_outputs(node: Node) -> bool:
    """Whether the node's output shapes (tensors) and values (everything else) follow from
    its inputs' shapes and values alone (not from data, the grad mode, a module, chance)."""
    if facts.has_tag(node.kind, "identity") or _pointwise_tensors(node):
        return True  # (`aten::where` is data-dependent only in its one-argument form)
    if node.blocks or any(facts.has_tag(node.kind, t) for t in _SHAPE_UNKNOWN_TAGS + ("not_foldable",)):
        return False
    return not (facts.has_tag(node.kind, "random") and
                any(not isinstance(o.type, TensorType) for o in node.outputs))


def attribute_reads(graph: Graph) -> dict[Value, tuple[int, tuple[str, ...]]]:
    """The `prim::GetAttr` results reached from the graph's inputs: value -> (input position,
    attribute path). None of them when the graph writes attributes (`prim::SetAttr`): then
    what one read sees is no fact about the call's arguments."""
    if any(n.kind == "prim::SetAttr" for n in graph.walk()):
        return {}
    paths: dict[Value, tuple[int, tuple[str, ...]]] = {v: (i, ()) for i, v in enumerate(graph.inputs)}
    reads = {}
    for n in graph.walk():
        if n.kind == "prim::GetAttr" and n.inputs and n.inputs[0] in paths:
            i, path = paths[n.inputs[0]]
            paths[n.output] = reads[n.output] = (i, path + (n.attr("name"),))
    return reads


def _sizes_a_list(v: Value) -> bool:
    """Whether the number `v` reaches an int list (`prim::ListConstruct`, such as a reshape's
    sizes) directly or through number arithmetic (`floordiv`, `mul`, ...)."""
    seen, todo = set(), [v]
    while todo:
        w = todo.pop()
        for u in w.uses:
            user = u.user
            if user.kind == "prim::ListConstruct" and user.output.type == ListType(NamedType("int")):
                return True
            if user not in seen and not user.blocks and user.outputs and all(
                    o.type in (NamedType("int"), NamedType("float")) for o in user.outputs):
                seen.add(user)
                todo.extend(user.outputs)
    return False


def sizing_attributes(graph: Graph) -> frozenset:
    """The (input position, path) of the int attribute reads that size a list (`_sizes_a_list`:
    a head count in a reshape's sizes): the plan's key records them by value, so those sizes
    fold; other numbers (a step counter, say) stay keyed by type, so a changing one never
    makes a plan per value."""
    return frozenset(read for v, read in attribute_reads(graph).items()
                     if v.type == NamedType("int") and _sizes_a_list(v))


def determined_values(graph: Graph, keyed: frozenset = frozenset()) -> set[Value]:
    """Values whose shape (tensors) or value (anything else) is the same in every call of a
    plan: determined inputs, constants, and outputs of nodes that compute them from such
    values. Inside a prim::If branch that holds whenever the branch runs; inside a loop body
    only for loop-invariant values (the body's inputs change between iterations); the
    outputs of prim::If and prim::Loop are never determined. `keyed` adds module attributes
    the plan's key records (`attribute_reads`)."""
    known = {v for v in list(graph.inputs) + list(keyed) if _determined_input(v)}
    _visit(graph.block, known)
    return known


def _visit(block: Block, known: set) -> None:
    for n in block.nodes():
        if n.kind == "prim::Constant":
            known.update(n.outputs)
        elif n.kind in ("prim::If", "prim::Loop"):
            for b in n.blocks:
                _visit(b, known)
            if n.kind == "prim::If" and n.inputs[0] in known:
                # the same branch runs in every call: what it returns is determined when
                # what either branch would return is (an inlined helper's branch on a rank)
                known.update(o for j, o in enumerate(n.outputs) if _never_mutated(o) and
                             all(b.outputs[j] in known for b in n.blocks))
        elif _determines_outputs(n) and all(v in known for v in _shape_inputs(n)) and \
                all(_never_mutated(o) for o in n.outputs):
            known.update(n.outputs)


def _pointwise_tensors(node: Node) -> bool:
    """A pointwise op making one tensor: its shape is its tensor inputs' broadcast."""
    return facts.has_tag(node.kind, "pointwise") and len(node.outputs) == 1 and \
        isinstance(node.output.type, TensorType) and not node.blocks


def _shape_inputs(node: Node) -> list[Value]:
    """The inputs the node's outputs depend on: for a pointwise op making a tensor, its tensor
    inputs (numbers broadcast as scalars, so their values never change a shape); else all."""
    if _pointwise_tensors(node):
        return [v for v in node.inputs if _is_tensor(v.type)]
    return list(node.inputs)


def _is_tensor(t) -> bool:
    return isinstance(t.elem if isinstance(t, OptionalType) else t, TensorType)


def _static_sizes(v: Value):
    t = v.type
    return t.complete_sizes() if isinstance(t, TensorType) else None


def _replace_by_constant(node: Node, value) -> None:
    g = node.graph
    g.set_insert_point(node)
    node.output.replace_all_uses_with(g.insert_constant(value))
    node.destroy()


def _metadata(node: Node):
    """The value of a metadata query (`aten::size`, `aten::dim`, `aten::numel`,
    `prim::dtype`) about a tensor of complete type, or None when it is not one of those."""
    sizes = _static_sizes(node.inputs[0])
    t = node.inputs[0].type
    if sizes is None:
        return None
    if node.kind == "aten::size" and len(node.inputs) == 1:
        return list(sizes)
    if node.kind == "aten::size" and len(node.inputs) == 2 and node.inputs[1].node.kind == "prim::Constant":
        dim = constant_value(node.inputs[1].node)
        return sizes[dim] if isinstance(dim, int) and -len(sizes) <= dim < len(sizes) else None
    if node.kind == "aten::dim" and len(node.inputs) == 1:
        return len(sizes)
    if node.kind == "aten::numel" and len(node.inputs) == 1:
        return int(np.prod(sizes, dtype=np.int64))
    if node.kind == "prim::dtype" and t.scalar_type in SCALAR_TYPES:
        return code_of(np.dtype(SCALAR_TYPES[t.scalar_type]))
    return None


def fold_metadata(graph: Graph, known: set) -> bool:
    """Sizes, rank, element count and dtype of a tensor whose shape the key determines become
    constants (its complete type says them)."""
    changed = False
    for n in list(graph.walk()):
        if not facts.has_tag(n.kind, "metadata") or not n.inputs or n.inputs[0] not in known \
                or len(n.outputs) != 1:
            continue
        value = _metadata(n)
        if value is not None:
            _replace_by_constant(n, value)
            changed = True
    return changed


def fold_size_if_not_equal(graph: Graph) -> bool:
    """`_size_if_not_equal(a, b)` of constant sizes is the constant None (equal) or `a`
    (constant propagation leaves the list result, typed `int[]?`, alone)."""
    changed = False
    for n in list(graph.walk()):
        if n.kind != "aten::_size_if_not_equal" or len(n.inputs) != 2 or \
                any(v.node.kind != "prim::Constant" for v in n.inputs):
            continue
        a, b = (constant_value(v.node) for v in n.inputs)
        _replace_by_constant(n, None if list(a) == list(b) else list(a))
        changed = True
    return changed


def fold_identity_sum_to_size(graph: Graph, known: set) -> bool:
    """`_grad_sum_to_size(%g, None)` is `%g` (always), and so is `_grad_sum_to_size(%g, sizes)`
    when %g's shape is determined and equals the constant sizes: the op returns its input
    then, so nothing is left to run (nor to keep out of a fused group)."""
    changed = False
    for n in list(graph.walk()):
        if n.kind != "aten::_grad_sum_to_size" or len(n.inputs) != 2:
            continue
        g, size = n.inputs
        if size.node.kind != "prim::Constant":
            continue
        target = constant_value(size.node)
        if target is not None and (g not in known or _static_sizes(g) is None
                                   or list(_static_sizes(g)) != list(target)):
            continue
        n.output.replace_all_uses_with(g)
        n.destroy()
        changed = True
    return changed


def _returns_defined(node: Node, defined: set) -> bool:
    """An aten op whose results are all `Tensor`s, given defined tensors, returns defined
    tensors (a backward op with an `output_mask` only when the mask is a constant of all
    True); a pass-through returns its input. When the node's overload cannot be told (a
    size list built at run time, a tensor of unknown dtype), every overload must be so."""
    if facts.has_tag(node.kind, "identity"):
        return bool(node.inputs) and node.inputs[0] in defined
    if not node.kind.startswith("aten::"):
        return False
    entry = entry_of(node)
    entries = [entry] if entry is not None else overloads(node.kind)
    if not entries or any(not e.schema.returns or any(r.type != "Tensor" for r in e.schema.returns)
                          for e in entries):
        return False
    for e in entries:
        for arg, v in zip(e.schema.arguments, node.inputs):
            if arg.name == "output_mask" and not (
                    v.node.kind == "prim::Constant" and all(constant_value(v.node) or [False])):
                return False
    return all(v in defined for v in node.inputs if isinstance(v.type, TensorType))


def _is_zero_gradient(v: Value) -> bool:
    """An undefined gradient: `prim::AutogradZero`, or the None constant a plan's key made
    of an input that was None (a captured temporary's vjp)."""
    n = v.node
    return n.kind == "prim::AutogradZero" or n.kind == "prim::Constant" and \
        v.type == NONE and not n.has_attr("value")


def fold_defined_gradients(block: Block, defined: set) -> bool:
    """What specializeAutogradZero does with known states, where definedness follows from
    the graph: `prim::AutogradAdd` of two defined tensors is `aten::add`, of a
    `prim::AutogradZero` the other side; a branch on `prim::AutogradAnyNonZero` of a defined
    tensor is its first block, of zeros only its second. `defined` (tensors that are never
    None: inputs the plan's key records as tensors, and what ops make of them) grows; True
    when anything changed."""
    changed = False
    for n in list(block.nodes()):
        if n.kind == "prim::AutogradAdd":
            a, b = n.inputs
            if _is_zero_gradient(a) or _is_zero_gradient(b):
                n.output.replace_all_uses_with(b if _is_zero_gradient(a) else a)
                n.destroy()
                changed = True
            elif a in defined and b in defined:
                graph = n.graph
                graph.set_insert_point(n)
                add = graph.insert("aten::add", [a, b, graph.insert_constant(1)],
                                   output_types=[n.output.type])
                n.output.replace_all_uses_with(add.output)
                n.destroy()
                defined.add(add.output)
                changed = True
            elif a in defined or b in defined:
                defined.add(n.output)
        elif n.kind == "prim::If" and n.inputs[0].node.kind == "prim::AutogradAnyNonZero":
            checked = n.inputs[0].node.inputs
            if any(v in defined for v in checked):
                taken = n.blocks[0]
            elif all(_is_zero_gradient(v) for v in checked):
                taken = n.blocks[1]
            else:
                for b in n.blocks:
                    changed |= fold_defined_gradients(b, set(defined))
                continue
            fold_defined_gradients(taken, defined)
            changed = True
            for m in list(taken.nodes()):
                m.move_before(n)
            for o, inner in zip(n.outputs, taken.outputs):
                o.replace_all_uses_with(inner)
            n.destroy()
        elif n.kind in ("prim::AutogradAllNonZero", "prim::AutogradAllZero") and n.inputs and \
                all(v in defined for v in n.inputs):
            # specializeAutogradZero's guard on the vjps it assumed defined: defined here
            _replace_by_constant(n, n.kind == "prim::AutogradAllNonZero")
            changed = True
        elif n.blocks:
            inner = [set(defined) for _ in n.blocks]
            for b, d in zip(n.blocks, inner):
                changed |= fold_defined_gradients(b, d)
            if n.kind == "prim::If":  # (a tensor whichever branch runs)
                defined.update(o for j, o in enumerate(n.outputs)
                               if all(b.outputs[j] in d for b, d in zip(n.blocks, inner)))
        elif _returns_defined(n, defined):
            defined.update(n.outputs)
    return changed


def fold_fixed_inputs(graph: Graph, inputs: list) -> bool:
    """Inputs that are None, bools, int lists or dtype codes in this call have that value in
    every call of the plan (the key records the type of each non-tensor input and the value of
    each bool, int list and dtype code): they become constants, so `_grad_sum_to_size(%g,
    %sizes)` in backward graphs is the identity or a sum, which fuses."""
    changed = False
    for v, x in zip(graph.inputs, inputs):
        if isinstance(x, Tensor) or not v.uses or not (
                x is None or type(x) is bool or is_size_list(x) and _never_mutated(v) or
                type(x) is int and is_dtype_code(v)):
            continue
        graph.set_insert_point(graph.block.first_node)
        v.replace_all_uses_with(graph.insert_constant(list(x) if isinstance(x, list) else x))
        changed = True
    return changed


def prepare_copy(graph: Graph, inputs: list, functions: Optional[dict] = None) -> None:
    """Before a runner's copy of its graph is profiled: its `prim::profile` records go (out
    of a profiling run they pass their value through, and between a view and its user they
    would keep the view out of the user's unit), leaving the complete layouts they recorded
    as their values' types when this call's inputs have the recorded layouts (then the plan
    needs no profiling call), and the helpers with loops whose lists are constants fold
    (`fold_helper_calls`; the matmul helpers are inlined after profiling,
    `inline_autodiff_helpers`)."""
    recorded = _recorded_layouts(graph)
    if all(_has_layout(x, recorded[v]) for v, x in zip(graph.inputs, inputs) if v in recorded):
        for v, t in recorded.items():
            v.type = t
    remove_profile_nodes(graph.block)
    fold_helper_calls(graph)


def _has_layout(x: Any, t: TensorType) -> bool:
    """Whether run-time value `x` is a tensor of exactly `t`'s dtype, sizes and strides."""
    if not isinstance(x, Tensor):
        return False
    a = x.data
    return SCALAR_TYPES.get(t.scalar_type) == str(a.dtype) and tuple(a.shape) == t.complete_sizes() \
        and tuple(s // a.itemsize for s in a.strides) == tuple(t.strides)


def _recorded_layouts(graph: Graph) -> dict[Value, TensorType]:
    """Tensor values whose `prim::profile` records all hold one complete type."""
    seen: dict[Value, set] = {}
    for n in graph.walk():
        if n.kind == "prim::profile" and n.inputs and isinstance(n.inputs[0].type, TensorType):
            t = n.attr("profiled_type") if n.has_attr("profiled_type") else None
            seen.setdefault(n.inputs[0], set()).add(
                t.with_(requires_grad=n.inputs[0].type.requires_grad)
                if isinstance(t, TensorType) and t.complete_sizes() is not None and
                t.strides is not None and None not in t.strides and t.scalar_type else None)
    return {v: next(iter(ts)) for v, ts in seen.items() if len(ts) == 1 and None not in ts}


def helper_calls(graph: Graph, functions: Optional[dict] = None) -> list[Node]:
    """The calls of symbolic_script's matmul helpers a native runner inlines (those
    `functions` does not define)."""
    inlined = set(inlined_graphs()) - set(functions or {})
    return [n for n in graph.walk() if calls_helper(n) and n.inputs[0].node.attr("name") in inlined]


def inline_autodiff_helpers(graph: Graph, functions: Optional[dict] = None,
                            values: Optional[dict] = None) -> bool:
    """Calls of symbolic_script's matmul helpers (`AD_matmul_bw_size`, `AD_mat_transpose`)
    become their graphs, unless `functions` defines a graph of that name (then the call runs
    interpreted as a whole). With `values` (what a profiling run of `graph` computed, by
    Value), a call whose arguments it recorded becomes its helper's graph specialized for
    them (`_specialized_helper`: the ops of the branches their ranks pick, typed), a few
    nodes where the whole graph, nested calls and branches on ranks included, is ~90
    (rnn_loop's unrolled backward grew from ~900 nodes to ~7,300, and folding it back took
    most of its first calls); other calls become the whole graph, whose branches the ranks
    the plan's key fixes fold (`specialize_shapes`) so that the products they pick fuse."""
    fold_helper_calls(graph)
    calls = helper_calls(graph, functions)
    if not calls:
        return False
    graphs = {k: g for k, g in inlined_graphs().items() if k not in (functions or {})}
    if values is not None:
        made: dict = {}
        recorded = [([values.get(v, _UNRECORDED) for v in n.inputs[1:]], values.get(n.output, _UNRECORDED))
                    for n in calls]
        for n, (args, result) in zip(calls, recorded):  # (recorded first: inlining replaces values)
            if any(a is _UNRECORDED for a in args) or not isinstance(result, Tensor):
                continue  # (a branch the run did not take)
            body = _specialized_helper(n.inputs[0].node.attr("name"), args, result, graphs, made)
            inline_call(n, body.copy(), list(n.inputs[1:]))
    inline(graph, functions=graphs)
    return True


_UNRECORDED = object()


def _argument_key(x: Any) -> Any:
    if isinstance(x, Tensor):
        return x.data.dtype.str, x.data.shape, x.data.strides
    return ("int[]", tuple(x)) if is_size_list(x) else (type(x).__name__, x)


def _specialized_helper(name: str, args: list, result: Tensor, graphs: dict, made: dict) -> Graph:
    """Helper `name`'s graph (its nested calls inlined) for arguments of `args`' layouts and
    values: what the key of a plan that receives them determines folded (`specialize_shapes`:
    the ranks, so the branches, and the size lists), its tensors typed by running it on
    `args` up to the node that makes its result, which has the type of the recorded `result`
    (that node is the product: the run computed it already); matrices' directly
    (`_matrix_helper`). One per layout: `made` holds those made so far."""
    key = (name, tuple(_argument_key(x) for x in args))
    body = made.get(key)
    if body is None:
        body = made[key] = _matrix_helper(name, args, result) or \
            _specialized_helper_graph(name, args, result, graphs)
    return body


def _matrix_helper(name: str, args: list, result: Tensor) -> Optional[Graph]:
    """The branch the helpers take for matrices (linear layers' products), made directly:
    `AD_mat_transpose` of a matrix is `aten::t`, `AD_matmul_bw_size` of two matrices to a
    matrix is `aten::matmul` (what specializing their graphs leaves); None for other ranks."""
    tensors = [x for x in args if isinstance(x, Tensor)]
    if any(x.data.ndim != 2 for x in tensors) or tensor_type(result) is None or \
            any(tensor_type(x) is None for x in tensors):
        return None
    if name == "AD_mat_transpose" and len(args) == 1:
        kind, value = "aten::t", "t"  # (named as in the helpers' graphs)
    elif name == "AD_matmul_bw_size" and len(tensors) == 2 and len(args) == 3 and \
            is_size_list(args[2]) and len(args[2]) == 2:
        kind, value = "aten::matmul", "p"
    else:
        return None
    g = Graph()
    inputs = [g.add_input(type=tensor_type(x) if isinstance(x, Tensor) else ListType(NamedType("int")))
              for x in args]
    node = g.block.append_node(g.create(kind, inputs[:len(tensors)]))
    node.output.type = tensor_type(result)
    node.output.set_debug_name(value)
    g.register_output(node.output)
    return g


def _specialized_helper_graph(name: str, args: list, result: Tensor, graphs: dict) -> Graph:
    """`_specialized_helper`'s graph for any ranks: the helper's graph specialized, typed by a
    run up to its last node."""
    from .interpreter import Interpreter
    body = graphs[name].copy()
    inline(body, functions=graphs)
    for v, x in zip(body.inputs, args):
        if isinstance(x, Tensor):
            v.type = tensor_type(x) or v.type
    specialize_shapes(body, args)
    last = body.outputs[0].node
    if last.owning_block is body.block:  # (not an input returned as it is)
        last.output.type = tensor_type(result) or last.output.type
        probe = body.copy()  # returning that node's inputs instead: what they are
        pairs = dict(zip(probe.walk(), body.walk()))
        probe_last = probe.outputs[0].node
        probe.erase_output(0)
        for v in probe_last.inputs:
            probe.register_output(v)
        eliminate_dead_code(probe)
        env: dict = {}
        Interpreter(probe).run_block(probe.block, list(args), env)
        for n in probe.walk():
            for w, v in zip(n.outputs, pairs[n].outputs):
                x = env.get(w)
                if isinstance(x, Tensor) and isinstance(v.type, TensorType):
                    v.type = tensor_type(x) or v.type
    return body


def tensor_type(x: Tensor) -> Optional[TensorType]:
    """The complete type of run-time tensor `x` (None for a dtype or strides types cannot say)."""
    a = x.data
    name = DTYPE_TO_SCALAR_TYPE.get(str(a.dtype))
    if name is None or any(s % a.itemsize for s in a.strides):
        return None
    return TensorType(name, tuple(a.shape), tuple(s // a.itemsize for s in a.strides), None, "cpu")


def specialize_shapes(graph: Graph, inputs: list, keyed: frozenset = frozenset()) -> None:
    """Fold everything the plan's key determines: gradient bookkeeping on defined tensors and
    shapes, to a fixed point (folded sizes make `_size_if_not_equal` constant, which makes
    `_grad_sum_to_size` foldable; folded ranks pick the inlined matmul helpers' branches,
    whose products are defined tensors)."""
    tensors = {v for v, x in zip(graph.inputs, inputs) if isinstance(x, Tensor)}
    folded = fold_fixed_inputs(graph, inputs) | fold_defined_gradients(graph.block, set(tensors))
    if folded:
        constant_propagation(graph)
    while True:
        known = determined_values(graph, keyed)
        if not (fold_metadata(graph, known) | fold_size_if_not_equal(graph) |
                fold_identity_sum_to_size(graph, known) | fold_helper_calls(graph) |
                fold_defined_gradients(graph.block, set(tensors))):
            break
        folded = True
        constant_propagation(graph)
    if folded:
        eliminate_dead_code(graph)


def _batched_matrix_type(v: Value):
    """A complete tensor type of rank two or more (strides known), else None."""
    t = v.type
    sizes = t.complete_sizes() if isinstance(t, TensorType) else None
    return t if sizes is not None and len(sizes) >= 2 and t.strides is not None and \
        None not in t.strides else None


def _swaps_last_two_dims(node: Node) -> bool:
    """`aten::t` of a matrix, or `aten::transpose` of the last two dims."""
    t = _batched_matrix_type(node.inputs[0]) if node.inputs else None
    if t is None:
        return False
    rank = len(t.complete_sizes())
    if node.kind == "aten::t":
        return rank == 2 and len(node.inputs) == 1
    if node.kind != "aten::transpose" or len(node.inputs) != 3 or \
            any(v.node.kind != "prim::Constant" for v in node.inputs[1:]):
        return False
    dims = [constant_value(v.node) for v in node.inputs[1:]]
    return all(isinstance(d, int) and -rank <= d < rank for d in dims) and \
        sorted(d % rank for d in dims) == [rank - 2, rank - 1]


def _transposed(graph: Graph, v: Value, before: Node) -> Value:
    """The view of `v` with its last two dims swapped (`aten::t` of a matrix)."""
    t = _batched_matrix_type(v)
    graph.set_insert_point(before)
    if len(t.complete_sizes()) == 2:
        node = graph.insert("aten::t", [v])
    else:
        node = graph.insert("aten::transpose", [v, graph.insert_constant(-2), graph.insert_constant(-1)])
    sizes, strides = list(t.complete_sizes()), list(t.strides)
    sizes[-2:], strides[-2:] = sizes[:-3:-1], strides[:-3:-1]
    node.output.type = t.with_(sizes=tuple(sizes), strides=tuple(strides))
    return node.output


def transpose_products(graph: Graph) -> bool:
    """The last two dims of a matmul swapped (`t(a @ b)`, `(a @ b).transpose(-2, -1)`), the
    matmul used only there and both operands of rank two or more, become the product of the
    swapped operands (`t(b) @ t(a)`): the same sums, computed into a tensor rather than
    returned as a view of one (the weight gradient of a linear layer, `t(tᵀ(x) @ g)`), so it
    fuses into the product's unit instead of staying an interpreted view."""
    changed = False
    for n in list(graph.walk()):
        if not (n.kind in ("aten::t", "aten::transpose") and _swaps_last_two_dims(n)):
            continue
        product = n.inputs[0].node
        if product.kind != "aten::matmul" or len(product.output.uses) != 1 or \
                _batched_matrix_type(n.output) is None or \
                not all(_batched_matrix_type(v) is not None for v in product.inputs):
            continue
        a, b = product.inputs
        new = graph.create("aten::matmul", [_transposed(graph, b, n), _transposed(graph, a, n)])
        new.insert_before(n)
        new.output.type = n.output.type.with_(strides=contiguous_strides(n.output.type.complete_sizes()))
        n.output.replace_all_uses_with(new.output)
        n.destroy()
        product.destroy()
        changed = True
    return changed


def hoist_loop_products(graph: Graph) -> bool:
    """In a loop of T trips whose body multiplies `x[i]` (`select(x, 0, i)`, i the trip) by
    a matrix or vector `w` defined before the loop, the T products become one before it:
    `matmul(x, w)`, whose row i the body selects. The same sums, each output element a dot
    product of the same operands, as one large product that BLAS runs on every core instead of
    T small ones (an RNN's input projection, rnn_loop's `x[i] @ W`). Only loops whose trip
    count is a constant equal to x's first size (every row is used) and tensors of complete
    types."""
    changed = False
    for loop in [n for n in graph.walk() if n.kind == "prim::Loop"]:
        trips = loop.inputs[0]
        if trips.node.kind != "prim::Constant" or not isinstance(constant_value(trips.node), int):
            continue
        body = loop.blocks[0]
        counter = body.inputs[0]
        for sel in list(body.nodes()):
            if sel.kind != "aten::select" or len(sel.inputs) != 3 or sel.inputs[2] is not counter \
                    or sel.inputs[1].node.kind != "prim::Constant" or constant_value(sel.inputs[1].node) != 0:
                continue
            x = sel.inputs[0]
            sizes = _static_sizes(x)
            if sizes is None or len(sizes) < 2 or sizes[0] != constant_value(trips.node) or \
                    _defined_in(x, body):
                continue
            for use in list(sel.output.uses):
                product = use.user
                if product.kind != "aten::matmul" or use.offset != 0 or product.owning_block is not body:
                    continue
                w = product.inputs[1]
                w_sizes = _static_sizes(w)
                out = product.output.type
                if w_sizes is None or len(w_sizes) > 2 or _defined_in(w, body) or \
                        not isinstance(out, TensorType) or out.complete_sizes() is None:
                    continue
                graph.set_insert_point(loop)
                whole = graph.create("aten::matmul", [x, w])
                whole.insert_before(loop)
                whole_sizes = (sizes[0],) + tuple(out.complete_sizes())
                whole.output.type = out.with_(sizes=whole_sizes, strides=contiguous_strides(whole_sizes))
                row = graph.create("aten::select", [whole.output, sel.inputs[1], counter])
                row.insert_before(product)
                row.output.type = out.with_(strides=contiguous_strides(out.complete_sizes()))
                product.output.replace_all_uses_with(row.output)
                product.destroy()
                changed = True
            if not sel.output.uses:
                sel.destroy()
    return changed


def _defined_in(v: Value, block: Block) -> bool:
    """Whether `v` is an input of `block` or made by one of its nodes (nested ones too)."""
    return v in block.inputs or (v.node is not None and _in_block(v.node, block) is not None)


def _in_block(node: Node, block: Block) -> Node:
    """The node of `block` that is `node` or holds it in a nested block (None: outside)."""
    while node is not None and node.owning_block is not block:
        owner = node.owning_block.owning_node if node.owning_block is not None else None
        node = owner
    return node


def _is_pure_view(node: Node) -> bool:
    entry = entry_of(node) if node.kind.startswith("aten::") else None
    return entry is not None and entry.schema.is_view and not entry.schema.is_inplace and \
        len(node.outputs) == 1 and not node.blocks


def _moving_view(node: Node, bases) -> bool:
    """A view of one of `bases` at a run-time position (x[i] at a loop's counter)."""
    return _is_pure_view(node) and bool(node.inputs) and node.inputs[0] in bases and any(
        v.node.kind != "prim::Constant" for v in node.inputs[1:])


def views_an_input(graph: Graph) -> bool:
    """Whether a node of the graph (in any block) is a view of a graph input at a run-time
    position (x[i] in a loop)."""
    inputs = set(graph.inputs)
    return any(_moving_view(n, inputs) for n in graph.walk())


def isolate_input_views(graph: Graph, inputs: list) -> bool:
    """For calls that need gradients: a view of an input that requires grad at a run-time
    position (x[i] in a loop) becomes a native group of its own, before the partition could
    fuse it into its consumers' group. Its gradient is then added into a window of the
    input's gradient (a ViewGroupOp) and its consumers' group is differentiated w.r.t. the
    view, where the fused group's backward would capture the whole input and scatter each
    call's gradient into a tensor of zeros of its size (select_backward). Views at fixed
    positions (`t(W)`) stay fused: their groups' backward recomputes them."""
    wanted = {v for v, x in zip(graph.inputs, inputs) if isinstance(x, Tensor) and x.requires_grad}
    views = [n for n in graph.walk() if _moving_view(n, wanted) and is_candidate(n)]
    for n in views:
        make_group([n])
    return bool(views)


def sink_views(graph: Graph) -> bool:
    """A view moves down to just before its first user when nothing in between may write
    memory: it reads no data, so the value is the same there, and next to its consumers it
    joins their native group instead of being cut off as a view no unit may output."""
    changed = False
    for block in [graph.block] + [b for n in graph.walk() for b in n.blocks]:
        for n in reversed(list(block.nodes())):
            if not _is_pure_view(n) or not n.output.uses:
                continue
            users = {_in_block(u.user, block) for u in n.output.uses}
            if None in users:
                continue
            between, m = [], n.next
            while m not in users and m is not block.return_node:
                between.append(m)
                m = m.next
            if not between or any(_mutates(m) or m.blocks for m in between):
                continue
            n.move_before(m)
            changed = True
    return changed
