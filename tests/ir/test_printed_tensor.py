"""Tensor constants as PyTorch 2.13 prints them (tests/fixtures/generated/printed_tensors, the
`printed_tensors` section of tools/fixturegen): they parse into the right values and print back
exactly, and values we compute print as torch printed them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from irjit import parse_ir
from irjit.compiler.printed_tensor import format_printed_tensor, parse_printed_tensor

FOLDER = Path(__file__).resolve().parents[1] / "fixtures" / "generated" / "printed_tensors"
PATHS = sorted(FOLDER.glob("*.ir"))
VALUES = np.load(FOLDER / "values.npz")


def _tensor_constant(graph):
    (node,) = [n for n in graph.walk() if n.kind == "prim::Constant" and n.attr_kind("value") == "t"]
    return node.attr("value")


def test_fixture_folder_is_complete():
    assert len(PATHS) == 20 and {p.stem for p in PATHS} == set(VALUES.files)


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_printed_tensor_round_trips_with_its_values(path: Path):
    text = path.read_bytes().decode("utf-8")
    graph = parse_ir(text, str(path))
    graph.lint()
    assert str(graph) == text
    expected = VALUES[path.stem]
    array = _tensor_constant(graph).array
    assert array is not None, "the printout was not understood"
    assert array.dtype == expected.dtype and array.shape == expected.shape
    # the printout keeps five significant digits (four decimals after a scale factor)
    np.testing.assert_allclose(array.astype(np.float64), expected.astype(np.float64),
                               rtol=5e-4, equal_nan=True)


def test_blocks_are_placed_by_their_printed_index():
    """`(2,1,.,.)` comes before `(1,2,.,.)`: the first index varies fastest in the printout."""
    array = parse_printed_tensor("(2,1,.,.) =   3  (1,1,.,.) =   1  (1,2,.,.) =   2  "
                                 "(2,2,.,.) =   4 [ CPULongType{2,2,1,1} ]")
    assert array.reshape(2, 2).tolist() == [[1, 2], [3, 4]]


@pytest.mark.parametrize("text", [
    "(1,.,.) =   1  2 [ CPUFloatType{2,1,2} ]",                    # a block is missing
    "(1,.,.) =   1  2  (1,.,.) =   3  4 [ CPUFloatType{2,1,2} ]",  # a block given twice
    "(3,.,.) =   1  2  (1,.,.) =   3  4 [ CPUFloatType{2,1,2} ]",  # an index out of range
    "(1,.,.) =   1  2  3 [ CPUFloatType{1,1,2} ]",                 # too many numbers
    "Columns 1 to 2 1 2  Columns 4 to 4 3 [ CPUFloatType{1,4} ]",  # a column chunk skipped
    "(1,.,.) =   1  x [ CPUFloatType{1,1,2} ]",                    # not a number
])
def test_unreadable_printouts_give_none(text: str):
    assert parse_printed_tensor(text) is None


@pytest.mark.parametrize("path", [p for p in PATHS if "empty" not in p.stem],
                         ids=[p.stem for p in PATHS if "empty" not in p.stem])
def test_computed_tensor_prints_as_pytorch_printed_it(path: Path):
    """A tensor we hold the exact values of (e.g. one constant propagation computed) prints
    the text torch printed for the same values."""
    printed = _tensor_constant(parse_ir(path.read_text(), str(path))).text
    assert format_printed_tensor(VALUES[path.stem]) == printed


def test_tuple_constant_with_printed_tensors_round_trips():
    """PyTorch prints a tuple constant's tensors with the same printout (`(1, (1,.,.) = ...)`)."""
    text = ("graph():\n  %0 : (int, Float(2, 1, 2, strides=[2, 2, 1], requires_grad=0, device=cpu), int)"
            " = prim::Constant[value=(1, (1,.,.) =  -3.2536 -4.1958  (2,.,.) =   1.2100  2.5141"
            " [ CPUFloatType{2,1,2} ], 2)]()\n  return (%0)\n")
    graph = parse_ir(text)
    assert str(graph) == text
    (node,) = graph.nodes()
    first, tensor, last = node.attr("value")
    assert (first, last) == (1, 2)
    np.testing.assert_allclose(tensor.array.reshape(-1), [-3.2536, -4.1958, 1.21, 2.5141], rtol=1e-6)
