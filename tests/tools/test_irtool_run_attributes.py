"""`irtool run` with module attributes an `.npz` cannot hold (a JSON sidecar: strings, lists
of tensors, dicts) and `None` for Optional inputs left out of the inputs file."""

from pathlib import Path

import numpy as np
import pytest

from irjit.tools.irtool import main

CASE = Path(__file__).resolve().parents[1] / "fixtures" / "runtime" / "attributes"


def _run(tmp_path, inputs, *extra):
    np.savez(tmp_path / "in.npz", **inputs)
    return main(["run", str(CASE / "graph.ir"), "--params", str(CASE / "params.npz"),
                 "--inputs", str(tmp_path / "in.npz"), "--out", str(tmp_path / "out.npz"), *extra])


@pytest.mark.parametrize("executor", ["interp", "legacy", "profiling"])
def test_string_list_of_tensors_and_dict_attributes_from_the_sidecar(tmp_path, capsys, executor):
    x = np.ones((2, 3), np.float32)
    rc = _run(tmp_path, {"arg0": x}, "--attributes", str(CASE / "attributes.json"),
              "--executor", executor, "--runs", "2")
    assert rc == 0
    with np.load(tmp_path / "out.npz") as f:
        # x * cat([ones(2, 1), 2 * ones(2, 2)], 1) + table["shift"]; scale is None: no scaling
        np.testing.assert_array_equal(f["out0"], [[11, 12, 12], [11, 12, 12]])
        assert str(f["out1"]) == "bilinear"


def test_optional_input_left_out_is_none_and_given_is_used(tmp_path, capsys):
    x = np.ones((2, 3), np.float32)
    assert _run(tmp_path, {"arg0": x, "arg1": np.array(0.5)},
                "--attributes", str(CASE / "attributes.json")) == 0
    with np.load(tmp_path / "out.npz") as f:
        np.testing.assert_array_equal(f["out0"], [[5.5, 6, 6], [5.5, 6, 6]])


def test_missing_required_input_is_still_an_error(tmp_path, capsys):
    assert _run(tmp_path, {"arg1": np.array(0.5)}, "--attributes",
                str(CASE / "attributes.json")) == 1
    assert "missing arg0" in capsys.readouterr().err


@pytest.mark.parametrize("text, message", [
    ('{"weights": [{"$tensor": "nope"}]}', "no array 'nope' in the params file"),
    ('{"mode": ', "attrs.json:1:10: not valid JSON"),
    ('["mode"]', "expected a JSON object"),
    ('{"a..b": 1}', "is not a dotted attribute path"),
])
def test_bad_sidecar_is_a_one_line_error_and_nothing_is_written(tmp_path, capsys, text, message):
    (tmp_path / "attrs.json").write_text(text)
    assert _run(tmp_path, {"arg0": np.ones((2, 3), np.float32)},
                "--attributes", str(tmp_path / "attrs.json")) == 1
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out.npz").exists()


ENUM_GRAPH = Path(__file__).resolve().parents[1] / "fixtures" / "generated" / "roundtrip" / \
    "0294_script_uses_enum_inlined.ir"


@pytest.mark.parametrize("use_red, want", [(True, [2, 2]), (False, [-1, -1])])
def test_enum_values_come_from_the_sidecar(tmp_path, capsys, use_red, want):
    """`prim::EnumValue` of an enum constant (printed by name only) reads `"$enums"`."""
    (tmp_path / "attrs.json").write_text('{"$enums": {"__torch__.models.Color": {"RED": 1, "GREEN": 2}}}')
    np.savez(tmp_path / "in.npz", arg0=np.ones(2, np.float32), arg1=np.array(use_red))
    assert main(["run", str(ENUM_GRAPH), "--inputs", str(tmp_path / "in.npz"),
                 "--attributes", str(tmp_path / "attrs.json"), "--out", str(tmp_path / "out.npz")]) == 0
    with np.load(tmp_path / "out.npz") as f:
        np.testing.assert_array_equal(f["out0"], want)


@pytest.mark.parametrize("attrs, message", [
    (None, 'give the enum\'s values in the attributes file as {"$enums": {"__torch__.models.Color"'),
    ('{"$enums": {"__torch__.models.Color": [1, 2]}}', '"$enums" must map enum class names'),
])
def test_enum_value_unknown_or_malformed_is_a_one_line_error(tmp_path, capsys, attrs, message):
    np.savez(tmp_path / "in.npz", arg0=np.ones(2, np.float32), arg1=np.array(True))
    extra = []
    if attrs is not None:
        (tmp_path / "attrs.json").write_text(attrs)
        extra = ["--attributes", str(tmp_path / "attrs.json")]
    assert main(["run", str(ENUM_GRAPH), "--inputs", str(tmp_path / "in.npz"), *extra]) == 1
    err = capsys.readouterr().err
    assert err.startswith("irtool: error: ") and message in err and err.count("\n") == 1


def test_enum_attribute_from_the_sidecar():
    """An enum-valued module attribute is `{"$enum": "__torch__.Class.MEMBER"}`."""
    from irjit.ops.enums import EnumMember
    from irjit.runtime.sidecar import read_attributes
    attrs, _ = read_attributes('{"mode": {"$enum": "__torch__.models.Color.GREEN"}}', {}, "a.json")
    assert attrs == {"mode": EnumMember("__torch__.models.Color", "GREEN")}


def test_enum_values_belong_to_each_function_not_to_the_process():
    """Two Functions of the same graph with different values for `__torch__.models.Color`
    (one sidecar each) do not interfere, interleaved or in two threads; one without a table
    reports the missing value."""
    import threading

    import irjit
    from irjit.ops.errors import IRRuntimeError
    from irjit.runtime.sidecar import read_attributes
    a = irjit.load(ENUM_GRAPH, attributes=read_attributes(
        '{"$enums": {"__torch__.models.Color": {"RED": 1, "GREEN": 2}}}', {}, "a.json")[0])
    b = irjit.load(ENUM_GRAPH, attributes={"$enums": {"__torch__.models.Color": {"RED": 10, "GREEN": 20}}})
    x = np.ones(2, np.float32)
    np.testing.assert_array_equal(a(x, True), [2, 2])
    np.testing.assert_array_equal(b(x, True), [11, 11])
    np.testing.assert_array_equal(a(x, True), [2, 2])
    results = {}

    def run(name, fn):
        results[name] = [fn(x, True).tolist() for _ in range(20)]
    threads = [threading.Thread(target=run, args=(n, f)) for n, f in (("a", a), ("b", b))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {"a": [[2, 2]] * 20, "b": [[11, 11]] * 20}
    with pytest.raises(IRRuntimeError, match="give the enum's values"):
        irjit.load(ENUM_GRAPH)(x, True)
