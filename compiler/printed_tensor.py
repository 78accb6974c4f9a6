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


# ---- printing: at::print (ATen/core/Formatting.cpp) with its newlines turned into spaces

_LINE_SIZE = 80


def format_printed_tensor(array: np.ndarray) -> str:
    """`array` as PyTorch prints a tensor attribute of two to ten elements: `operator<<` of
    at::Tensor (per-matrix scale and width, `Columns a to b` chunks past 80 characters, rank
    >= 3 as `(i,j,.,.) =` blocks with the first index fastest), newlines as spaces."""
    from irjit.ops.dtypes import scalar_type_name

    values = np.real(array).astype(np.float64)
    out: list[str] = []
    if values.ndim == 1 and values.size:
        scale, width, fmt = _print_format(values)
        if scale != 1:
            out.append(_scale_text(scale))
        out.extend(_cell(x / scale, width, fmt) + "\n" for x in values)
    elif values.ndim == 2 and values.size:
        _print_matrix(out, values, 0)
    elif values.ndim > 2 and values.size:
        for k, index in enumerate(_block_indices(values.shape[:-2])):
            if k:
                out.append("\n")
            out.append("(" + "".join(f"{i + 1}," for i in index) + ".,.) = \n")
            _print_matrix(out, values[index], 1)
    sizes = ",".join(str(s) for s in array.shape)
    out.append(f"[ CPU{scalar_type_name(array.dtype)}Type{{{sizes}}} ]")
    return "".join(out).replace("\n", " ")


def _block_indices(shape: tuple[int, ...]):
    """The leading indices of the matrices in PyTorch's order: the first index varies fastest."""
    for index in np.ndindex(*reversed(shape)):
        yield tuple(reversed(index))


def _print_format(values: np.ndarray) -> tuple[float, int, str]:
    """`__printFormat`: (scale, cell width, number format) for a set of values."""
    finite = values[np.isfinite(values)]
    int_mode = bool(np.all(finite == np.ceil(finite)))
    exp_min = exp_max = 1.0
    if finite.size:
        magnitudes = np.abs(finite)
        lo, hi = float(magnitudes.min()), float(magnitudes.max())
        exp_min = np.floor(np.log10(lo)) + 1 if lo != 0 else 1
        exp_max = np.floor(np.log10(hi)) + 1 if hi != 0 else 1
    if int_mode:
        if exp_max > 9:
            return 1.0, 11, "%.4e"
        return 1.0, int(exp_max) + 1, "%g"
    if exp_max - exp_min > 4:
        wide = abs(exp_max) > 99 or abs(exp_min) > 99
        return 1.0, 12 if wide else 11, "%.4e"
    if exp_max > 5 or exp_max < 0:
        return float(10.0 ** (exp_max - 1)), 7, "%.4f"
    return 1.0, 7 if exp_max == 0 else int(exp_max) + 6, "%.4f"


def _scale_text(scale: float) -> str:
    return "%.16g *\n" % scale


def _cell(x: float, width: int, fmt: str) -> str:
    if np.isnan(x):
        text = "nan"
    elif np.isinf(x):
        text = "inf" if x > 0 else "-inf"
    else:
        text = fmt % x
    return text.rjust(width)


def _print_matrix(out: list[str], m: np.ndarray, indent: int) -> None:
    """`__printMatrix`: rows of one matrix, split into column chunks that fit the line."""
    scale, width, fmt = _print_format(m.reshape(-1))
    rows, cols = m.shape
    per_line = (_LINE_SIZE - indent) // (width + 1)
    first = 0
    while first < cols:
        last = min(first + per_line, cols) - 1
        if per_line < cols:
            if first:
                out.append("\n")
            out.append(f"Columns {first + 1} to {last + 1}" + " " * indent)
        if scale != 1:
            out.append(_scale_text(scale) + " " * indent)
        for r in range(rows):
            for c in range(first, last + 1):
                out.append(_cell(m[r, c] / scale, width, fmt))
                if c == last:
                    out.append("\n")
                    if r != rows - 1:
                        out.append(" " * indent + (" " if scale != 1 else ""))
                else:
                    out.append(" ")
        first = last + 1
