"""A group's loop nest run as the epilogue of its last matrix product (gemm_tiled.py): when the
loop nest is element-wise over the product's output (a bias, an activation, the sum of an
LSTM's two gate products), each tile of the product is handed to it straight from the
registers (through a small stack buffer) instead of being written to memory and read back by
a second pass over the whole output.

`fuse_epilogue` decides at lowering; `emit.EpilogueEmitter` emits the loop nest over one tile."""

from __future__ import annotations

import dataclasses
from typing import Optional

from .kernel import Buffer, CheckedIndex, Gather, Kernel, Load, Product, walk


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
    return products[:-1] + [dataclasses.replace(last, epilogue=kernel, epilogue_input=out)], None, buffers
