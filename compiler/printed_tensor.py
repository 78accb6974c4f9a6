"""Reading a tensor constant as `at::Tensor`'s ostream prints it inside an attribute list.

PyTorch prints tensors of up to ten elements with `operator<<` and turns its newlines into
spaces: `0.01 * 3.6 -4.6 [ CPUFloatType{2} ]`, matrices split into `Columns 1 to 6 ...`
chunks when a row is wider than 80 characters, and rank >= 3 tensors as one block per
matrix, `(i,j,.,.) = ...` with 1-based indices and the first index varying fastest, each
block with its own scale factor.  The printout rounds to a few digits, so the values read
back are approximate; the attribute keeps the text so that printing is exact.
"""

from __future__ import annotations

import re

import numpy as np

from irjit.ops.dtypes import SCALAR_TYPE_BY_NAME

_TRAILER = re.compile(r"\[ (?:CPU|CUDA)?([A-Za-z0-9]+?)Type\{([0-9,]*)\} \]\s*$")
_BLOCK_HEADER = re.compile(r"\(((?:[0-9]+,)+)\.,\.\) =")
_COLUMNS_HEADER = re.compile(r"Columns ([0-9]+) to ")
_SCALE = re.compile(r"\s*([-+0-9.eE]+)\s*\*")
_NUMBER = re.compile(r"-?(?:[0-9]+\.?[0-9]*(?:e[-+]?[0-9]+)?|inf|nan)")


def parse_printed_tensor(text: str) -> np.ndarray | None:
    """The array a printed tensor stands for (approximate: the print rounds), or None when the
    text is not a printout this reader understands."""
    m = _TRAILER.search(text)
    if m is None:
        return None
    scalar_type = SCALAR_TYPE_BY_NAME.get(m.group(1))
    if scalar_type is None:
        return None
    shape = tuple(int(s) for s in m.group(2).split(",") if s)
    values = _values(text[: m.start()], shape)
    if values is None:
        return None
    with np.errstate(invalid="ignore", over="ignore"):
        return values.astype(scalar_type.numpy)


def _values(body: str, shape: tuple[int, ...]) -> np.ndarray | None:
    if 0 in shape:
        return np.zeros(shape) if body.strip() == "" else None
    if len(shape) <= 2:
        rows, cols = (shape[0], shape[1]) if len(shape) == 2 else (1, shape[0] if shape else 1)
        matrix = _matrix(body, rows, cols, columns_chunks=len(shape) == 2)
        return None if matrix is None else matrix.reshape(shape)
    out = np.full(shape, np.nan)
    seen = set()
    headers = list(_BLOCK_HEADER.finditer(body))
    if not headers or body[: headers[0].start()].strip():
        return None
    for k, header in enumerate(headers):
        index = tuple(int(i) - 1 for i in header.group(1).rstrip(",").split(","))
        if len(index) != len(shape) - 2 or index in seen or \
                any(not 0 <= i < n for i, n in zip(index, shape)):
            return None
        seen.add(index)
        end = headers[k + 1].start() if k + 1 < len(headers) else len(body)
        matrix = _matrix(body[header.end():end], shape[-2], shape[-1], columns_chunks=True)
        if matrix is None:
            return None
        out[index] = matrix
    return out if len(seen) == int(np.prod(shape[:-2])) else None


def _matrix(text: str, rows: int, cols: int, columns_chunks: bool) -> np.ndarray | None:
    """One printed matrix: an optional `scale *`, then its rows, maybe in column chunks."""
    scale = 1.0
    sm = _SCALE.match(text)
    if sm:
        scale, text = float(sm.group(1)), text[sm.end():]
    headers = list(_COLUMNS_HEADER.finditer(text)) if columns_chunks else []
    if not headers:
        numbers = _numbers(text, rows * cols)
        return None if numbers is None else numbers.reshape(rows, cols) * scale
    if text[: headers[0].start()].strip():
        return None
    out = np.empty((rows, cols))
    first = 1
    for k, header in enumerate(headers):
        start = int(header.group(1))
        # `Columns a to b` runs straight into the first number in some printouts
        # (`Columns 1 to 81.23457e+06`): b is known from where the next chunk starts
        last = int(headers[k + 1].group(1)) - 1 if k + 1 < len(headers) else cols
        chunk = text[header.end():headers[k + 1].start() if k + 1 < len(headers) else len(text)]
        if start != first or not first <= last <= cols or not chunk.startswith(str(last)):
            return None
        numbers = _numbers(chunk[len(str(last)):], rows * (last - start + 1))
        if numbers is None:
            return None
        out[:, start - 1:last] = numbers.reshape(rows, last - start + 1)
        first = last + 1
    return out * scale if first == cols + 1 else None


def _numbers(text: str, count: int) -> np.ndarray | None:
    tokens = text.split()
    if len(tokens) != count or not all(_NUMBER.fullmatch(t) for t in tokens):
        return None
    return np.array([float(t) for t in tokens])
