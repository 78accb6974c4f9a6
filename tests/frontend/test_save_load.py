"""irjit.jit.save / irjit.jit.load round-trip scripted functions: the same graph text, code
and results, callees included."""

from __future__ import annotations

import zipfile

import numpy as np
import pytest

import irjit.jit

from .script_support import load_cases

M = load_cases()


@pytest.mark.parametrize("fn", [M.call_helper, M.optional_scale, M.early_return_loop,
                                M.tuple_return], ids=lambda f: f.__name__)
def test_round_trip_keeps_graph_code_and_results(fn, tmp_path):
    scripted = irjit.jit.script(fn)
    path = tmp_path / "f.zip"
    irjit.jit.save(scripted, path)
    loaded = irjit.jit.load(path)
    assert str(loaded.graph) == str(scripted.graph)
    assert loaded.code == scripted.code
    assert str(loaded.inlined_graph) == str(scripted.inlined_graph)
    x = np.linspace(-1.0, 1.0, 6).reshape(2, 3)
    args = {"call_helper": (x,), "optional_scale": (x, 2.0), "early_return_loop": (x, 4),
            "tuple_return": (x, x)}[fn.__name__]
    want, got = scripted(*args), loaded(*args)
    for a, b in zip(want if isinstance(want, tuple) else (want,),
                    got if isinstance(got, tuple) else (got,)):
        np.testing.assert_allclose(a.data, b.data)


def test_archive_holds_graph_text_and_code(tmp_path):
    path = tmp_path / "f.zip"
    irjit.jit.save(irjit.jit.script(M.call_helper), path)
    names = set(zipfile.ZipFile(path).namelist())
    assert {"manifest.json", "graphs/call_helper.ir", "graphs/helper.ir",
            "code/call_helper.py", "code/helper.py"} <= names


def test_loading_something_else_is_an_error_naming_the_file(tmp_path):
    path = tmp_path / "not.zip"
    path.write_text("hello")
    with pytest.raises(ValueError, match="not.zip: not an irjit.jit archive"):
        irjit.jit.load(path)
