"""irjit.jit.save / irjit.jit.load round-trip scripted functions and scripted and traced
modules: the same graph text, code and results, callees and every traced method included."""

from __future__ import annotations

import zipfile

import numpy as np
import pytest

import irjit.jit

from .model_support import Case, load_models
from .script_support import load_cases

M = load_cases()
K = load_models()


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
    assert {"manifest.json", "graphs/__torch__.script_cases.call_helper.ir",
            "graphs/__torch__.script_cases.helper.ir", "code/__torch__.script_cases.call_helper.py",
            "code/__torch__.script_cases.helper.py"} <= names


def test_loading_something_else_is_an_error_naming_the_file(tmp_path):
    path = tmp_path / "not.zip"
    path.write_text("hello")
    with pytest.raises(ValueError, match="not.zip: not an irjit.jit archive"):
        irjit.jit.load(path)


@pytest.mark.parametrize("cls", [K.MyCell, K.GatedCell, K.ScaledResidual], ids=lambda c: c.__name__)
def test_module_round_trip_keeps_graph_code_parameters_and_results(cls, tmp_path):
    scripted = irjit.jit.script(cls())
    path = tmp_path / "m.zip"
    irjit.jit.save(scripted, path)
    loaded = irjit.jit.load(path)
    assert str(loaded.graph) == str(scripted.graph)
    assert loaded.code == scripted.code
    assert repr(loaded) == repr(scripted)
    assert "params.npz" in zipfile.ZipFile(path).namelist()
    x = np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(3, 4)
    args = (x,) if cls is K.ScaledResidual else (x, x)
    want, got = scripted(*args), loaded(*args)
    for a, b in zip(want if isinstance(want, tuple) else (want,),
                    got if isinstance(got, tuple) else (got,)):
        np.testing.assert_allclose(a.data, b.data)


@pytest.mark.parametrize("name", ["GatedCell", "Mlp", "SmallCnn", "Attention", "SharedLinear",
                                  "LstmFromZero"])
@pytest.mark.parametrize("how", ["trace", "script"])
def test_model_round_trip_keeps_graphs_code_and_pytorchs_results(name, how, tmp_path):
    """Traced sizes, tensor constants (exact, though printed rounded), a submodule called
    twice (`forward1`), BatchNorm run by the built-in forward (its hyper-parameters saved)."""
    case = Case(name)
    obj = case.traced() if how == "trace" else irjit.jit.script(case.model())
    irjit.jit.save(obj, tmp_path / "m.zip")
    loaded = irjit.jit.load(tmp_path / "m.zip")
    assert str(loaded.graph) == str(obj.graph) and loaded.code == obj.code
    assert str(loaded.inlined_graph) == str(obj.inlined_graph)
    assert repr(loaded).startswith(f"RecursiveScriptModule(\n  original_name={name}\n")
    out = loaded(*case.inputs())
    for i, o in enumerate(out if isinstance(out, tuple) else (out,)):
        np.testing.assert_allclose(o.numpy(), case.arrays[f"output.{i}"], rtol=1e-4, atol=1e-5)
    if name == "SharedLinear" and how == "trace":
        assert loaded.lin.forward1.code == obj.lin.forward1.code


def test_tensor_constants_keep_their_exact_values(tmp_path):
    scale = irjit.tensor([0.123456789, 1.0 / 3.0], dtype=irjit.float64)

    def f(x):
        return x * scale

    x = irjit.randn(3, 2, dtype=irjit.float64)
    traced = irjit.jit.trace(f, x)
    irjit.jit.save(traced, tmp_path / "f.zip")
    loaded = irjit.jit.load(tmp_path / "f.zip")
    assert " 0.1235  0.3333 [ CPUDoubleType{2} ]" in str(loaded.graph)  # rounded, as PyTorch prints it
    np.testing.assert_array_equal(loaded(x).numpy(), f(x).numpy())
