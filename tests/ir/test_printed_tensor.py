"""Tensor constants as PyTorch 2.13 prints them (tests/fixtures/printed_tensors, written by
tools/fixturegen/printed_tensors.py): they parse into the right values and print back exactly."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from irjit import parse_ir
from irjit.compiler.printed_tensor import parse_printed_tensor

FOLDER = Path(__file__).resolve().parents[1] / "fixtures" / "printed_tensors"
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
