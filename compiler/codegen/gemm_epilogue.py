"""A group's loop nest run as the epilogue of its last matrix product (gemm_tiled.py): when the
loop nest is element-wise over the product's output (a bias, an activation, the sum of an
LSTM's two gate products), each tile of the product is handed to it straight from the
registers (through a small stack buffer) instead of being written to memory and read back by
a second pass over the whole output.

`fuse_epilogue` decides at lowering; `emit.EpilogueEmitter` emits the loop nest over one tile."""

from __future__ import annotations

import dataclasses
from typing import Optional

from collections import Counter

from .kernel import Buffer, CheckedIndex, Gather, Kernel, Load, Op, Product, expr_children, walk


def epilogue_applies(kernel: Kernel, product: Product, results: list, views: dict) -> bool:
    """Whether `kernel` can run on `product`'s tiles: a tiled 2-D product whose output only
    the kernel reads, element-wise (no reductions, no run-time indices), over exactly the
    product's output shape, reading that output at the same position it computes."""
    if product.algorithm != "tiled" or kernel.inner or product.a.dynamic or product.b.dynamic:
        return False
    out = product.out
    if out in results or any(v.buffer == out for v in views.values()):
        return False
    shape = kernel.buffers[out].sizes
    if len(shape) != 2 or tuple(kernel.outer) != tuple(shape) or \
            len(product.a.sizes) != 2 or len(product.b.sizes) != 2:
        return False
    identity = (shape[1], 1)
    for st in kernel.stores:
        if st.access.buffer == out or st.access.dynamic or st.access.clamped:
            return False
    for e in walk(st.value for st in kernel.stores):
        if isinstance(e, (Gather, CheckedIndex)):
            return False
        if isinstance(e, Load) and e.access.buffer == out and (
                e.access.strides != identity or e.access.offset or e.access.dynamic or e.access.clamped):
            return False
    return True


def fuse_epilogue(products: list, kernel: Optional[Kernel], buffers: list, results: list,
                  views: dict) -> tuple[list, Optional[Kernel], list]:
    """(products, kernel, buffers) with the kernel moved into the last product as its epilogue
    when it applies (that product's output buffer then shrinks to nothing: it is never
    written); else as they are."""
    if kernel is None or not products or not epilogue_applies(kernel, products[-1], results, views):
        return products, kernel, buffers
    last = products[-1]
    out = buffers[last.out]
    buffers = list(buffers)
    buffers[last.out] = Buffer(out.position, out.dtype, (), (), True)
    kernel = dataclasses.replace(kernel, buffers=buffers)
    products = products[:-1] + [dataclasses.replace(last, epilogue=kernel, epilogue_input=out)]
    products, buffers = merge_segments(products, buffers, results, views)
    return products, None, buffers


def merge_segments(products: list, buffers: list, results: list, views: dict) -> tuple[list, list]:
    """(products, buffers) with the last two products made one over two K segments when the
    last one's epilogue only adds the other's output to its tile: `C1 = A1 B1; epilogue(C1 + b
    + tile)` becomes one product whose tiles sum A1 B1 and then A2 B2 (each segment in its
    blocks of K_BLOCK terms, added) and an epilogue without C1 (an LSTM's gates, x W_ih^T + b_ih
    + h W_hh^T + b_hh: one tile body instead of a product function, an epilogue through a
    pointer and a store path, and no 256 KB round trip of C1 through memory). The sum is
    reassociated (C1 + tile first), as the BLAS's own blocking of K would; C1's buffer shrinks
    to nothing. Else as they are."""
    if len(products) < 2:
        return products, buffers
    first, last = products[-2], products[-1]
    if not _segment_of(first, last, products, results, views, buffers):
        return products, buffers
    epilogue = _without_term(last.epilogue, first.out, last.out)
    if epilogue is None:
        return products, buffers
    out = buffers[first.out]
    buffers = list(buffers)
    buffers[first.out] = Buffer(out.position, out.dtype, (), (), True)
    epilogue = dataclasses.replace(epilogue, buffers=buffers)
    merged = dataclasses.replace(last, epilogue=epilogue, first=first)
    return products[:-2] + [merged], buffers


def _segment_of(first, last: Product, products: list, results: list, views: dict, buffers: list) -> bool:
    """Whether `first` can be `last`'s first K segment: both tiled 2-D products of one dtype
    and output shape, with the same tiling but for K (gemm_tiled.segments_agree), `first`
    without an epilogue and its output read by nothing but `last`'s epilogue."""
    from .gemm_tiled import segments_agree
    if not isinstance(first, Product) or first.algorithm != "tiled" or first.epilogue is not None or \
            first.first is not None or last.epilogue is None or first.dtype != last.dtype:
        return False
    if first.a.dynamic or first.b.dynamic or len(first.a.sizes) != 2 or len(first.b.sizes) != 2:
        return False
    if first.out in results or any(v.buffer == first.out for v in views.values()):
        return False
    if any(first.out in (p.a.buffer, p.b.buffer) for p in products if isinstance(p, Product)):
        return False
    if buffers[first.out].sizes != last.epilogue_input.sizes:
        return False
    return segments_agree(first, last)


def _without_term(kernel: Kernel, term_buffer: int, tile_buffer: int) -> Optional[Kernel]:
    """`kernel` with its one load of `term_buffer` taken out of the sum that also adds the
    tile (the load of `tile_buffer`), or None unless: each is loaded once, at the tile's
    position, and both are terms of one tree of `add`s whose inner nodes nothing else uses."""
    roots = [st.value for st in kernel.stores]
    nodes = list(dict.fromkeys(walk(roots)))  # distinct by equality
    loads = {b: [e for e in nodes if isinstance(e, Load) and e.access.buffer == b]
             for b in (term_buffer, tile_buffer)}
    if any(len(found) != 1 for found in loads.values()):
        return None
    term, tile = loads[term_buffer][0], loads[tile_buffer][0]
    if term.access != dataclasses.replace(tile.access, buffer=term_buffer):
        return None
    uses: Counter = Counter(roots)
    parent: dict = {}
    for e in nodes:
        for c in expr_children(e):
            uses[c] += 1
            parent[c] = e

    def adds_above(e) -> list:
        """The `add`s from e's parent up, while each below the top is used once."""
        chain = []
        while uses[e] == 1 and isinstance(parent.get(e), Op) and parent[e].name == "add":
            e = parent[e]
            chain.append(e)
        return chain
    above_term, above_tile = adds_above(term), adds_above(tile)
    if not above_term or not above_tile or not set(above_term) & set(above_tile):
        return None
    joined = above_term[0]  # add(term, rest) or add(rest, term): becomes rest
    rest = joined.args[1] if joined.args[0] == term else joined.args[0]
    if rest == term:
        return None
    memo: dict = {}

    def rebuilt(e):
        if e == joined:
            return rebuilt(rest)
        if e not in memo:
            memo[e] = dataclasses.replace(e, args=tuple(rebuilt(c) for c in e.args)) \
                if isinstance(e, Op) else e
        return memo[e]
    if any(not isinstance(e, (Op, Load)) and expr_children(e) for e in nodes):
        return None  # (reductions, gathers: epilogue_applies leaves none; rebuilt keeps Ops and leaves)
    stores = [dataclasses.replace(st, value=rebuilt(st.value)) for st in kernel.stores]
    return dataclasses.replace(kernel, stores=stores)
