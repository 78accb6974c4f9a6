"""Loop unrolling, mirroring PyTorch's UnrollLoops (loop_unrolling.cpp): for-loops with small
bodies are unrolled completely when their trip count is a constant below 64, otherwise by a
factor of 8 followed by an epilogue loop for the remaining iterations; then DCE."""

from __future__ import annotations

from irjit.compiler.ir import Block, Graph, Node
from irjit.ops import facts
from irjit.ops.types import INT

from .eliminate_dead_code import eliminate_dead_code, eliminate_dead_code_in_block
from .peephole_helpers import const_bool, const_int
from .registry import register_pass

UNROLL_FACTOR = 8
MAX_BODY_SIZE = 32
MAX_BODY_REPEATS = 64


def _is_for_loop(n: Node) -> bool:
    return n.kind == "prim::Loop" and const_bool(n.inputs[1]) is True and \
        const_bool(n.blocks[0].outputs[0]) is True


def _limited_block_size(block: Block, limit: int) -> int:
    i = 0
    for n in list(block.nodes()) + [block.return_node]:
        if i >= limit:
            return limit
        for b in n.blocks:
            i += _limited_block_size(b, limit - i)
        if not facts.has_tag(n.kind, "no_cost"):
            i += 1
    return i


def _is_small_block(block: Block) -> bool:
    return _limited_block_size(block, MAX_BODY_SIZE + 1) <= MAX_BODY_SIZE


def _insert_block_copy(graph: Graph, body: Block, inputs: list) -> list:
    vmap = dict(zip(body.inputs, inputs))

    def get(v):
        return vmap.get(v, v)

    for n in body.nodes():
        c = graph.insert_node(graph.clone_node(n, get))
        vmap.update(zip(n.outputs, c.outputs))
    return [get(v) for v in body.outputs]


def _repeat_body(body: Block, times: int, dest: Block) -> None:
    graph = body.owning_node.graph
    graph.set_insert_point(dest)
    for v in body.inputs:
        dest.add_input(v.type).copy_metadata(v)
    io = list(dest.inputs)
    for _ in range(times):
        io[0] = body.inputs[0]
        io = _insert_block_copy(graph, body, io)
    for v in io:
        dest.register_output(v)
    eliminate_dead_code_in_block(dest)


def _inline_body(loop: Node) -> None:
    """Replace a loop known to run exactly once by its body."""
    graph, body = loop.graph, loop.blocks[0]
    vmap = {body.inputs[i - 1]: loop.inputs[i] for i in range(2, len(loop.inputs))}

    def get(v):
        return vmap.get(v, v)

    graph.set_insert_point(loop)
    for n in body.nodes():
        c = graph.insert_node(graph.clone_node(n, get))
        vmap.update(zip(n.outputs, c.outputs))
    for i, out in enumerate(loop.outputs):
        out.replace_all_uses_with(get(body.outputs[i + 1]))
    loop.destroy()


def _replace_loop_counter(loop: Node) -> None:
    graph, body = loop.graph, loop.blocks[0]
    graph.set_insert_point(loop)
    init = graph.insert_constant(0)
    loop.insert_input(2, init)
    loop.insert_output(0, INT)
    internal = body.insert_input(1, INT)
    body.inputs[0].replace_all_uses_with(internal)
    graph.set_insert_point(body)
    one = graph.insert_constant(1)
    result = graph.insert("aten::add", [internal, one], output_types=[INT]).output
    body.insert_output(1, result)


def _insert_int_op(graph: Graph, kind: str, a, b: int):
    c = graph.insert_constant(b)
    return graph.insert(kind, [a, c], output_types=[INT]).output


def unroll(loop: Node) -> None:
    graph, body = loop.graph, loop.blocks[0]
    if body.inputs[0].uses:
        _replace_loop_counter(loop)
    n = const_int(loop.inputs[0])
    if n is not None and n < MAX_BODY_REPEATS:
        dest = loop.add_block()
        _repeat_body(body, n, dest)
        loop.erase_block(0)
        _inline_body(loop)
        return
    epilogue = graph.clone_node(loop, lambda v: v).insert_after(loop)
    for i, out in enumerate(loop.outputs):
        out.replace_all_uses_with(epilogue.outputs[i])
        epilogue.replace_input(i + 2, out)
    dest = loop.add_block()
    _repeat_body(body, UNROLL_FACTOR, dest)
    loop.erase_block(0)
    graph.set_insert_point(loop)
    count = loop.inputs[0]
    unrolled = _insert_int_op(graph, "aten::__round_to_zero_floordiv", count, UNROLL_FACTOR)
    loop.replace_input(0, unrolled)
    done = _insert_int_op(graph, "aten::mul", unrolled, UNROLL_FACTOR)
    rest = graph.insert("aten::sub", [count, done], output_types=[INT]).output
    epilogue.replace_input(0, rest)


def unroll_block(block: Block, constant_only: bool) -> bool:
    changed = False
    for node in list(block.nodes()):
        if not node.is_inserted():
            continue
        for b in node.blocks:
            changed |= unroll_block(b, constant_only)
        if not _is_for_loop(node):
            continue
        if constant_only:
            if node.inputs[0].node.kind != "prim::Constant":
                continue
        elif not _is_small_block(node.blocks[0]):
            continue
        unroll(node)
        changed = True
    return changed


def unroll_completely(block: Block, max_nodes: int) -> bool:
    """Unroll completely every for-loop (its condition constant true, as `_is_for_loop`) whose
    trip count is a `prim::Constant` below MAX_BODY_REPEATS and whose repeated body (nested
    loops unrolled first) counts at most `max_nodes` nodes, as UnrollConstantLoops unrolls
    them; other loops (while-loops, run-time or large trip counts, big bodies) stay as they
    are, never unrolled by a factor. Whether every loop went: `not any_loop(block)`."""
    changed = False
    for node in list(block.nodes()):
        if not node.is_inserted():
            continue
        for b in node.blocks:
            changed |= unroll_completely(b, max_nodes)
        if not _is_for_loop(node) or node.inputs[0].node.kind != "prim::Constant":
            continue
        n = const_int(node.inputs[0])
        if n is None or n >= MAX_BODY_REPEATS or \
                n * _limited_block_size(node.blocks[0], max_nodes + 1) > max_nodes:
            continue
        unroll(node)
        changed = True
    return changed


def any_loop(block: Block) -> bool:
    """Whether a `prim::Loop` is left in `block` (in any nested block)."""
    return any(n.kind == "prim::Loop" or any(any_loop(b) for b in n.blocks) for n in block.nodes())


@register_pass("unroll_loops")
def run(graph: Graph) -> bool:
    """PyTorch's UnrollLoops: unroll small for-loops (fully when the trip count is a small constant)."""
    changed = unroll_block(graph.block, False)
    if changed:
        eliminate_dead_code(graph)
    return changed
