"""`_jit_differentiate` of one op at a time, for each function of PyTorch 2.13's symbolic_script
(runtime/symbolic_script.cpp): how PyTorch spells each derivative formula, where it puts the
formula's constants and what the forward graph captures.

Writes ``<out>/<NNN_name>_{shaped,unshaped}/`` with ``input.ir``, ``f.ir``,
``df.ir`` and ``gradient.json`` (the layout of ``autodiff/``), plus ``manifest.json`` (origin
and the cases torch itself refused). ``shaped`` inputs carry complete types
(``_jit_pass_complete_shape_analysis`` types every value, as profiling would); ``unshaped`` ones
are plain ``Tensor``s, as in a DifferentiableGraph whose profiled types were erased. Committed
as ``tests/fixtures/autodiff/symbolic_script``::

    .venv-torch/bin/python -m irjit.tools.fixturegen --out tests/fixtures/generated --only symbolic_script
    cp -r tests/fixtures/generated/symbolic_script tests/fixtures/autodiff/
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import torch

from .common import graph_text, reset_jit_state, seed, write_json, write_text

# Input specs: `f2x3` a float tensor of sizes (2, 3) (`f` scalar: 0-d), `l2x3:5` an int64 tensor
# with values in [0, 5), `b2x3` bool, `L[f2x3,f2x4]` a Tensor[] of those, `int`/`float`/`bool`
# for numbers. In the op lines, `$v` is a constant (`$2`, `$0.5`, `$True`, `$None`, `$[0, 1]`,
# `$"none"`); every line names its outputs (typed `Tensor` unless the line ends in `:: <type>`)
# and the last line's outputs are returned.
CASES: list[tuple[str, str, str]] = [
    # --- string 1: reductions, tanh, mm, permute, squeeze, bmm
    ("mean", "x:f2x3", "%r = aten::mean(%x, $None)"),
    ("mean_dim", "x:f2x3x4", "%r = aten::mean(%x, $[1], $False, $None)"),
    ("mean_dim_keepdim", "x:f2x3x4", "%r = aten::mean(%x, $[0, 2], $True, $None)"),
    ("logsumexp", "x:f2x3", "%r = aten::logsumexp(%x, $[1], $False)"),
    ("std", "x:f2x3", "%r = aten::std(%x, $True)"),
    ("std_dim", "x:f2x3", "%r = aten::std(%x, $[1], $True, $False)"),
    ("std_correction", "x:f2x3", "%r = aten::std(%x, $[1], $1, $False)"),
    ("var", "x:f2x3", "%r = aten::var(%x, $True)"),
    ("var_dim", "x:f2x3", "%r = aten::var(%x, $[1], $True, $True)"),
    ("var_correction", "x:f2x3", "%r = aten::var(%x, $[1], $0, $False)"),
    ("tanh", "x:f2x3", "%r = aten::tanh(%x)"),
    ("mm", "x:f2x3 y:f3x4", "%r = aten::mm(%x, %y)"),
    ("permute", "x:f2x3x4", "%r = aten::permute(%x, $[2, 0, 1])"),
    ("squeeze", "x:f2x1x3", "%r = aten::squeeze(%x)"),
    ("squeeze_dim", "x:f2x1x3", "%r = aten::squeeze(%x, $1)"),
    ("bmm", "x:f2x3x4 y:f2x4x5", "%r = aten::bmm(%x, %y)"),
    # --- string 2: matmul, linear
    ("matmul", "x:f2x3 y:f3x4", "%r = aten::matmul(%x, %y)"),
    ("matmul_batched", "x:f2x3x4 y:f4x5", "%r = aten::matmul(%x, %y)"),
    ("matmul_vector", "x:f2x3 y:f3", "%r = aten::matmul(%x, %y)"),
    ("linear", "x:f2x3 w:f4x3 b:f4", "%r = aten::linear(%x, %w, %b)"),
    ("linear_no_bias", "x:f2x3 w:f4x3", "%r = aten::linear(%x, %w, $None)"),
    # --- string 3
    ("addcmul", "x:f2x3 a:f2x3 b:f3", "%r = aten::addcmul(%x, %a, %b, $2)"),
    ("contiguous", "x:f2x3", "%r = aten::contiguous(%x, $0)"),
    ("dot", "x:f3 y:f3", "%r = aten::dot(%x, %y)"),
    ("erf", "x:f2x3", "%r = aten::erf(%x)"),
    ("expand", "x:f3", "%r = aten::expand(%x, $[2, 3], $False)"),
    ("expand_as", "x:f3 y:f2x3", "%r = aten::expand_as(%x, %y)"),
    ("lerp_scalar", "x:f2x3 y:f2x3", "%r = aten::lerp(%x, %y, $0.25)"),
    ("lerp_tensor", "x:f2x3 y:f2x3 w:f3", "%r = aten::lerp(%x, %y, %w)"),
    ("reshape", "x:f2x3", "%r = aten::reshape(%x, $[3, 2])"),
    ("split", "x:f4x3", "%r = aten::split(%x, $2, $0) :: Tensor[]"),
    ("split_with_sizes", "x:f4x3", "%r = aten::split_with_sizes(%x, $[1, 3], $0) :: Tensor[]"),
    ("stack", "xs:L[f2x3,f2x3]", "%r = aten::stack(%xs, $0)"),
    ("unbind", "x:f2x3", "%r = aten::unbind(%x, $0) :: Tensor[]"),
    ("cat", "xs:L[f2x3,f2x4]", "%r = aten::cat(%xs, $1)"),
    ("index", "x:f4x3 i:l2:4", "%l = prim::ListConstruct(%i) :: Tensor?[]\n%r = aten::index(%x, %l)"),
    ("meshgrid", "xs:L[f2,f3]", "%r = aten::meshgrid(%xs) :: Tensor[]"),
    ("mv", "x:f2x3 y:f3", "%r = aten::mv(%x, %y)"),
    ("pow_scalar", "x:f2x3", "%r = aten::pow(%x, $2.5)"),
    ("pow_tensor", "x:f2x3 y:f3", "%r = aten::pow(%x, %y)"),
    ("pow_scalar_base", "y:f2x3", "%r = aten::pow($2.0, %y)"),
    ("rsub", "x:f2x3 y:f3", "%r = aten::rsub(%x, %y, $1)"),
    ("rsub_scalar", "x:f2x3", "%r = aten::rsub(%x, $2.0, $1)"),
    ("sqrt", "x:f2x3", "%r = aten::sqrt(%x)"),
    ("t", "x:f2x3", "%r = aten::t(%x)"),
    ("to_dtype", "x:f2x3", "%r = aten::to(%x, $7, $False, $False, $None)"),
    ("to_other", "x:f2x3 y:d2x3", "%r = aten::to(%x, %y, $False, $False, $None)"),
    ("transpose", "x:f2x3x4", "%r = aten::transpose(%x, $0, $2)"),
    ("view", "x:f2x3", "%r = aten::view(%x, $[6])"),
    # --- string 4: arithmetic and pointwise
    ("mul", "x:f2x3 y:f3", "%r = aten::mul(%x, %y)"),
    ("mul_scalar", "x:f2x3", "%r = aten::mul(%x, $2.5)"),
    ("div", "x:f2x3 y:f3", "%r = aten::div(%x, %y)"),
    ("div_scalar", "x:f2x3", "%r = aten::div(%x, $2.5)"),
    ("div_mode", "x:f2x3 y:f3", "%r = aten::div(%x, %y, $\"floor\")"),
    ("div_mode_none", "x:f2x3 y:f3", "%r = aten::div(%x, %y, $None)"),
    ("div_scalar_mode", "x:f2x3", "%r = aten::div(%x, $2.5, $\"trunc\")"),
    ("maximum", "x:f2x3 y:f3", "%r = aten::max(%x, %y)"),
    ("minimum", "x:f2x3 y:f3", "%r = aten::min(%x, %y)"),
    ("sigmoid", "x:f2x3", "%r = aten::sigmoid(%x)"),
    ("relu", "x:f2x3", "%r = aten::relu(%x)"),
    ("relu6", "x:f2x3", "%r = aten::relu6(%x)"),
    ("leaky_relu", "x:f2x3", "%r = aten::leaky_relu(%x, $0.2)"),
    ("gelu", "x:f2x3", "%r = aten::gelu(%x, $\"none\")"),
    ("gelu_tanh", "x:f2x3", "%r = aten::gelu(%x, $\"tanh\")"),
    ("silu", "x:f2x3", "%r = aten::silu(%x)"),
    ("hardswish", "x:f2x3", "%r = aten::hardswish(%x)"),
    ("hardsigmoid", "x:f2x3", "%r = aten::hardsigmoid(%x)"),
    ("erfc", "x:f2x3", "%r = aten::erfc(%x)"),
    ("exp", "x:f2x3", "%r = aten::exp(%x)"),
    ("neg", "x:f2x3", "%r = aten::neg(%x)"),
    ("where", "c:b2x3 x:f2x3 y:f3", "%r = aten::where(%c, %x, %y)"),
    ("type_as", "x:f2x3 y:d2x3", "%r = aten::type_as(%x, %y)"),
    ("unsqueeze", "x:f2x3", "%r = aten::unsqueeze(%x, $1)"),
    ("abs", "x:f2x3", "%r = aten::abs(%x)"),
    ("acos", "x:f2x3", "%r = aten::acos(%x)"),
    ("asin", "x:f2x3", "%r = aten::asin(%x)"),
    ("atan", "x:f2x3", "%r = aten::atan(%x)"),
    ("ceil", "x:f2x3", "%r = aten::ceil(%x)"),
    ("cos", "x:f2x3", "%r = aten::cos(%x)"),
    ("cosh", "x:f2x3", "%r = aten::cosh(%x)"),
    ("expm1", "x:f2x3", "%r = aten::expm1(%x)"),
    ("floor", "x:f2x3", "%r = aten::floor(%x)"),
    ("frac", "x:f2x3", "%r = aten::frac(%x)"),
    ("log", "x:f2x3", "%r = aten::log(%x)"),
    ("log10", "x:f2x3", "%r = aten::log10(%x)"),
    ("log1p", "x:f2x3", "%r = aten::log1p(%x)"),
    ("log2", "x:f2x3", "%r = aten::log2(%x)"),
    ("reciprocal", "x:f2x3", "%r = aten::reciprocal(%x)"),
    ("round", "x:f2x3", "%r = aten::round(%x)"),
    ("rsqrt", "x:f2x3", "%r = aten::rsqrt(%x)"),
    ("sin", "x:f2x3", "%r = aten::sin(%x)"),
    ("sinh", "x:f2x3", "%r = aten::sinh(%x)"),
    ("tan", "x:f2x3", "%r = aten::tan(%x)"),
    ("trunc", "x:f2x3", "%r = aten::trunc(%x)"),
    ("grad_sum_to_size", "x:f2x3", "%r = aten::_grad_sum_to_size(%x, $[1, 3])"),
    # --- string 5: nn
    ("batch_norm", "x:f2x3x4 w:f3 b:f3 m:f3 v:f3",
     "%r = aten::batch_norm(%x, %w, %b, %m, %v, $True, $0.1, $1e-05, $True)"),
    ("layer_norm", "x:f2x3 w:f3 b:f3", "%r = aten::layer_norm(%x, $[3], %w, %b, $1e-05, $True)"),
    ("layer_norm_no_affine", "x:f2x3", "%r = aten::layer_norm(%x, $[3], $None, $None, $1e-05, $True)"),
    ("dropout", "x:f2x3", "%r = aten::dropout(%x, $0.5, $True)"),
    ("embedding", "w:f5x3 i:l2x2:5", "%r = aten::embedding(%w, %i, $-1, $False, $False)"),
    ("log_softmax", "x:f2x3", "%r = aten::log_softmax(%x, $1, $None)"),
    ("nll_loss", "x:f2x3 t:l2:3", "%r = aten::nll_loss(%x, %t, $None, $1, $-100)"),
    ("softmax", "x:f2x3", "%r = aten::softmax(%x, $1, $None)"),
    # --- string 6: pooling
    ("adaptive_avg_pool1d", "x:f1x2x6", "%r = aten::adaptive_avg_pool1d(%x, $[3])"),
    ("adaptive_avg_pool2d", "x:f1x2x4x4", "%r = aten::adaptive_avg_pool2d(%x, $[2, 2])"),
    ("adaptive_avg_pool2d_global", "x:f1x2x4x4", "%r = aten::adaptive_avg_pool2d(%x, $[1, 1])"),
    ("adaptive_avg_pool3d", "x:f1x2x2x4x4", "%r = aten::adaptive_avg_pool3d(%x, $[1, 2, 2])"),
    ("avg_pool2d", "x:f1x2x4x4", "%r = aten::avg_pool2d(%x, $[2, 2], $[2, 2], $[0, 0], $False, $True, $None)"),
    ("max_pool2d", "x:f1x2x4x4", "%r = aten::max_pool2d(%x, $[2, 2], $[2, 2], $[0, 0], $[1, 1], $False)"),
    ("max_pool2d_with_indices", "x:f1x2x4x4",
     "%r, %i = aten::max_pool2d_with_indices(%x, $[2, 2], $[2, 2], $[0, 0], $[1, 1], $False)"),
    # --- string 7: add, sub, threshold, softplus, fmod, remainder, addmm, comparisons, clamps
    ("add", "x:f2x3 y:f3", "%r = aten::add(%x, %y, $1)"),
    ("add_alpha", "x:f2x3 y:f3", "%r = aten::add(%x, %y, $2)"),
    ("add_scalar", "x:f2x3", "%r = aten::add(%x, $2.5, $1)"),
    ("sub", "x:f2x3 y:f3", "%r = aten::sub(%x, %y, $1)"),
    ("sub_scalar", "x:f2x3", "%r = aten::sub(%x, $2.5, $1)"),
    ("threshold", "x:f2x3", "%r = aten::threshold(%x, $0.5, $0.0)"),
    ("softplus", "x:f2x3", "%r = aten::softplus(%x, $1, $20)"),
    ("fmod", "x:f2x3", "%r = aten::fmod(%x, $1.5)"),
    ("remainder", "x:f2x3", "%r = aten::remainder(%x, $1.5)"),
    ("addmm", "x:f4 a:f2x3 b:f3x4", "%r = aten::addmm(%x, %a, %b, $1, $1)"),
    ("addmm_scaled", "x:f2x4 a:f2x3 b:f3x4", "%r = aten::addmm(%x, %a, %b, $0.5, $2.0)"),
    ("gt_scalar", "x:f2x3", "%r = aten::gt(%x, $0.5)"),
    ("hardshrink", "x:f2x3", "%r = aten::hardshrink(%x, $0.5)"),
    ("hardtanh", "x:f2x3", "%r = aten::hardtanh(%x, $-0.5, $0.5)"),
    ("clamp", "x:f2x3", "%r = aten::clamp(%x, $-0.5, $0.5)"),
    ("clamp_min", "x:f2x3", "%r = aten::clamp(%x, $-0.5, $None)"),
    ("clamp_tensor", "x:f2x3 lo:f3 hi:f3", "%r = aten::clamp(%x, %lo, %hi)"),
    # --- ops symbolic_script does not define (buildSymbolicGradient refuses): none expected
]

_DTYPES = {"f": torch.float32, "d": torch.float64, "l": torch.int64, "b": torch.bool}
_IR_DTYPE = {"f": "Float", "d": "Double", "l": "Long", "b": "Bool"}


def _tensor(spec: str, name: str):
    kind, rest = spec[0], spec[1:]
    rest, _, bound = rest.partition(":")
    sizes = [int(s) for s in rest.split("x")] if rest else []
    seed(name)
    if kind == "l":
        return torch.randint(0, int(bound or 3), sizes, dtype=torch.int64)
    if kind == "b":
        return torch.rand(sizes) > 0.5
    return torch.randn(sizes, dtype=_DTYPES[kind]).requires_grad_(True)


def _parse_inputs(spec: str, case: str):
    """[(name, IR type for the unshaped graph, example value)]."""
    out = []
    for item in spec.split():
        name, _, t = item.partition(":")
        if t.startswith("L["):
            parts = t[2:-1].split(",")
            out.append((name, "Tensor[]", [_tensor(p, f"{case}.{name}.{i}") for i, p in enumerate(parts)]))
        elif t in ("int", "float", "bool"):
            out.append((name, t, {"int": 2, "float": 0.5, "bool": True}[t]))
        else:
            out.append((name, "Tensor", _tensor(t, f"{case}.{name}")))
    return out


_CONST = re.compile(r"\$(\"[^\"]*\"|\[[^\]]*\]|[^,)\s]+)")


def _constant(text: str) -> tuple[str, str]:
    """(IR type, attribute text) of a `$` constant."""
    if text == "None":
        return "NoneType", ""
    if text in ("True", "False"):
        return "bool", f"[value={int(text == 'True')}]"
    if text.startswith('"'):
        return "str", f"[value={text}]"
    if text.startswith("["):
        return "int[]", f"[value={text}]"
    if re.fullmatch(r"-?\d+", text):
        return "int", f"[value={text}]"
    return "float", f"[value={float(text)!r}]"


def graph_source(spec: str, body: str, case: str):
    """The unshaped IR text of a case and its example inputs."""
    inputs = _parse_inputs(spec, case)
    params = ",\n      ".join(f"%{n} : {t}" for n, t, _ in inputs)
    consts, lines, count = [], [], [0]

    def const(m):
        t, attr = _constant(m.group(1))
        count[0] += 1
        consts.append(f"  %c{count[0]} : {t} = prim::Constant{attr}()")
        return f"%c{count[0]}"

    outs = []
    for line in body.splitlines():
        line, _, typ = line.partition(" :: ")
        line = _CONST.sub(const, line)
        lhs, rhs = line.split(" = ", 1)
        outs = [o.strip() for o in lhs.split(",")]
        types = [typ or "Tensor"] * len(outs)
        lines.append("  " + ", ".join(f"{o} : {t}" for o, t in zip(outs, types)) + " = " + rhs)
    text = (f"graph({params}):\n" + "\n".join(consts + lines) +
            f"\n  return ({', '.join(outs)})\n")
    return text, [v for _, _, v in inputs]


def _gradient_info(gd):
    return {"df_input_vjps": list(gd.df_input_vjps),
            "df_input_captured_inputs": list(gd.df_input_captured_inputs),
            "df_input_captured_outputs": list(gd.df_input_captured_outputs),
            "df_output_vjps": list(gd.df_output_vjps),
            "f_real_outputs": gd.f_real_outputs}


def _write_case(folder: Path, g) -> None:
    folder.mkdir(parents=True)
    write_text(folder / "input.ir", graph_text(g))
    gd = torch._C._jit_differentiate(g)
    write_text(folder / "f.ir", graph_text(gd.f))
    write_text(folder / "df.ir", graph_text(gd.df))
    write_json(folder / "gradient.json", _gradient_info(gd))


def generate(root: Path) -> dict:
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    manifest, skipped = [], []
    for i, (name, spec, body) in enumerate(CASES, 1):
        reset_jit_state()
        text, example = graph_source(spec, body, name)
        for variant in ("shaped", "unshaped"):
            case = f"{i:03d}_{name}_{variant}"
            try:
                g = torch._C.parse_ir(text)
                if variant == "shaped":
                    torch._C._jit_pass_complete_shape_analysis(g, tuple(example), False)
                _write_case(root / case, g)
            except Exception as e:  # noqa: BLE001 - torch's refusals are recorded
                shutil.rmtree(root / case, ignore_errors=True)
                skipped.append({"case": case, "reason": f"{type(e).__name__}: {str(e).splitlines()[0]}"})
                continue
            manifest.append({"dir": case, "origin": (
                "torch._C.parse_ir + " + ("_jit_pass_complete_shape_analysis (requires_grad inputs) + "
                                          if variant == "shaped" else "") + "_jit_differentiate")})
    write_json(root / "manifest.json", {"cases": manifest, "skipped": skipped})
    return {"symbolic_script": len(manifest), "symbolic_script_skipped": len(skipped)}


if __name__ == "__main__":  # pragma: no cover - dev entry point
    import sys
    print(json.dumps(generate(Path(sys.argv[1]))))
