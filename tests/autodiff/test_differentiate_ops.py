"""differentiate() on one small graph per op family, checked against the interpreter's tape.

Each graph is IR text whose inputs have complete types (intermediates are untyped: the
formulas that need static shapes get them from the inputs' types). For each: differentiate,
check that `f` and `df` lint and print/parse back, run `f` then `df` (run_gradient) on random
inputs and random output gradients, and compare the outputs and the input gradients with
`irjit.load(...).run(...)` + `.backward(...)`.
"""

import numpy as np
import pytest

import irjit
from irjit.compiler.autodiff import differentiate, is_differentiable
from irjit.compiler.autodiff.differentiate import DifferentiationError
from irjit.runtime.run_gradient import run_backward, run_forward
from irjit.ops.types import SCALAR_TYPES
from irjit.ops.tensor import Tensor


def T(*sizes, rg=1, dtype="Float"):
    """A complete tensor type: `Float(2, 3, strides=[3, 1], requires_grad=1, device=cpu)`."""
    strides, acc = [], 1
    for s in reversed(sizes):
        strides.insert(0, acc)
        acc *= s
    dims = "".join(f"{s}, " for s in sizes)
    return f"{dtype}({dims}strides=[{', '.join(map(str, strides))}], requires_grad={rg}, device=cpu)"


def _flat(values):
    out = []
    for v in values:
        out.extend(_flat(v) if isinstance(v, (list, tuple)) else [v])
    return out


def _random_like(rng, out, undefined):
    if isinstance(out, list):
        return [_random_like(rng, o, undefined) for o in out]
    if undefined:
        return None
    return rng.standard_normal(np.shape(out.data)).astype(out.data.dtype)


def check(text, domain=None, undefined=(), seed=0, rtol=1e-4, atol=1e-5):
    """Differentiate `text` and compare f/df with the tape; `domain[i]` maps input i's random
    values into the op's domain; outputs listed in `undefined` get no gradient."""
    g = irjit.parse_ir(text)
    grad = differentiate(irjit.parse_ir(text))
    for graph in (grad.f, grad.df):
        graph.lint()
        again = irjit.parse_ir(str(graph))
        again.lint()
        assert str(again) == str(graph)
    assert grad.df.outputs[0].node.kind == "prim::TupleConstruct"

    rng = np.random.default_rng(seed)
    inputs = []
    for i, v in enumerate(g.inputs):
        dtype = SCALAR_TYPES[v.type.scalar_type]
        x = rng.standard_normal(v.type.sizes).astype(np.float32)
        if domain and i in domain:
            x = domain[i](x)
        inputs.append(np.asarray(x, dtype=dtype))
    outs = run_forward(grad, [Tensor(x) for x in inputs])
    real = outs[:grad.f_real_outputs]
    ogs = [_random_like(rng, o, i in undefined) for i, o in enumerate(real)]
    got = run_backward(grad, [Tensor(x) for x in inputs], outs, ogs)

    fn = irjit.load(irjit.parse_ir(text))
    ref = fn.run(*inputs)
    assert len(ref) == len(real)
    for o, r in zip(_flat(real), _flat(ref)):
        np.testing.assert_allclose(o.data, r.data, rtol=1e-5, atol=1e-6)
    want = fn.backward(_flat(ogs))
    checked = 0
    for i, v in enumerate(g.inputs):
        if not v.type.requires_grad:
            assert i not in got or got[i] is None
            continue
        expected = want[f"arg{i}"]
        actual = got.get(i)
        if actual is None:
            actual = np.zeros_like(expected)
        np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, err_msg=f"input {i}")
        checked += 1
    assert checked
    return grad


def kinds(graph):
    return [n.kind for n in graph.walk()]


# ---- linear algebra, convolution, normalization

def test_matmul_broadcasting():
    check(f"""graph(%x : {T(2, 3, 4)}, %w : {T(4, 5)}):
  %y : Tensor = aten::matmul(%x, %w)
  return (%y)""")


def test_matmul_vector():
    check(f"""graph(%x : {T(3, 4)}, %v : {T(4)}):
  %y : Tensor = aten::matmul(%x, %v)
  return (%y)""")


def test_linear_with_and_without_bias():
    check(f"""graph(%x : {T(2, 3)}, %w : {T(4, 3)}, %b : {T(4)}, %w2 : {T(2, 4)}):
  %none : NoneType = prim::Constant()
  %y : Tensor = aten::linear(%x, %w, %b)
  %z : Tensor = aten::linear(%y, %w2, %none)
  return (%z)""")


def test_conv2d():
    check(f"""graph(%x : {T(2, 2, 5, 5)}, %w : {T(3, 2, 3, 3)}, %b : {T(3)}):
  %s : int[] = prim::Constant[value=[2, 1]]()
  %p : int[] = prim::Constant[value=[1, 0]]()
  %d : int[] = prim::Constant[value=[1, 1]]()
  %g : int = prim::Constant[value=1]()
  %y : Tensor = aten::conv2d(%x, %w, %b, %s, %p, %d, %g)
  return (%y)""")


def test_softmax_and_log_softmax():
    check(f"""graph(%x : {T(2, 3, 4)}):
  %d : int = prim::Constant[value=-1]()
  %d1 : int = prim::Constant[value=1]()
  %none : NoneType = prim::Constant()
  %y : Tensor = aten::softmax(%x, %d, %none)
  %z : Tensor = aten::log_softmax(%x, %d1, %none)
  return (%y, %z)""")


def test_layer_norm():
    check(f"""graph(%x : {T(2, 3, 4)}, %w : {T(3, 4)}, %b : {T(3, 4)}):
  %shape : int[] = prim::Constant[value=[3, 4]]()
  %eps : float = prim::Constant[value=1.0000000000000001e-05]()
  %cudnn : bool = prim::Constant[value=1]()
  %y : Tensor = aten::layer_norm(%x, %shape, %w, %b, %eps, %cudnn)
  return (%y)""", rtol=1e-3, atol=1e-4)


# ---- reductions

def test_sum_and_mean_with_dims():
    check(f"""graph(%x : {T(2, 3, 4)}):
  %dims : int[] = prim::Constant[value=[0, -1]]()
  %dim1 : int[] = prim::Constant[value=[1]]()
  %true : bool = prim::Constant[value=1]()
  %false : bool = prim::Constant[value=0]()
  %none : NoneType = prim::Constant()
  %a : Tensor = aten::sum(%x, %dims, %true, %none)
  %b : Tensor = aten::mean(%x, %dims, %false, %none)
  %c : Tensor = aten::sum(%x, %dim1, %false, %none)
  %d : Tensor = aten::mean(%x, %dim1, %true, %none)
  %e : Tensor = aten::sum(%x, %none)
  %f : Tensor = aten::mean(%x, %none)
  return (%a, %b, %c, %d, %e, %f)""")


def test_reductions_over_dims_the_graph_computes():
    """mean/var/std/logsumexp over a dim list built at run time (`[x.dim() - 1]`): as in
    symbolic_script, the backward takes the node's own list (and sizes, dtype, count captured
    in the forward), so neither the dims nor the shapes need be static."""
    text = f"""graph(%x : {T(2, 3, 4)}):
  %one : int = prim::Constant[value=1]()
  %true : bool = prim::Constant[value=1]()
  %false : bool = prim::Constant[value=0]()
  %none : NoneType = prim::Constant()
  %n : int = aten::dim(%x)
  %last : int = aten::sub(%n, %one)
  %dims : int[] = prim::ListConstruct(%last)
  %a : Tensor = aten::mean(%x, %dims, %false, %none)
  %b : Tensor = aten::var(%x, %dims, %true, %true)
  %c : Tensor = aten::std(%x, %dims, %one, %false)
  %d : Tensor = aten::logsumexp(%x, %dims, %false)
  return (%a, %b, %c, %d)"""
    grad = check(text)
    calls = [n.inputs[0].node.attr("name") for n in grad.df.walk() if n.kind == "prim::CallFunction"]
    assert {"AD_sum_backward", "AD_safe_size", "AD_var_backward_2", "AD_logsumexp_backward"} <= set(calls)
    untyped = irjit.parse_ir(text.replace(T(2, 3, 4), "Tensor"))
    assert all(is_differentiable(n) for n in untyped.nodes() if n.kind in (
        "aten::mean", "aten::var", "aten::std", "aten::logsumexp"))
    differentiate(untyped)


def test_clamp_with_bounds_that_require_grad_is_left_to_the_tape():
    """symbolic_script's clamp gives tensor bounds no gradient (df returns self's only); eager
    autograd gives them one, so a clamp whose bounds require grad is not differentiable here,
    and the executors leave it to the tape."""
    text = f"""graph(%x : {T(2, 3)}, %lo : {T(3)}, %hi : {T(3)}):
  %y : Tensor = aten::clamp(%x, %lo, %hi)
  return (%y)"""
    g = irjit.parse_ir(text)
    assert not is_differentiable(next(iter(g.nodes())))
    frozen = irjit.parse_ir(text.replace(f"%lo : {T(3)}, %hi : {T(3)}", f"%lo : {T(3, rg=0)}, %hi : {T(3, rg=0)}"))
    assert is_differentiable(next(iter(frozen.nodes())))
    assert differentiate(frozen).df_output_vjps == [0]

    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3)).astype(np.float32)
    lo, hi = np.full(3, -0.5, np.float32), np.array([0.5, 0.2, 0.1], np.float32)
    want = irjit.load(irjit.parse_ir(text))
    want.run(x, lo, hi)
    expected = want.backward()
    for executor in ("profiling", "legacy"):
        fn = irjit.load(irjit.parse_ir(text), executor=executor)
        for _ in range(3):
            fn.run(x, lo, hi)
            got = fn.backward()
        assert sorted(got) == sorted(expected) == ["arg0", "arg1", "arg2"]
        for k in expected:
            np.testing.assert_allclose(got[k], expected[k], err_msg=f"{executor} {k}")


def test_formulas_that_build_tensor_lists():
    # prod's formula concatenates pieces ([one, cumprod...]): the emitter builds the list
    grad = check(f"""graph(%x : {T(3, 4)}):
  %d : int = prim::Constant[value=1]()
  %f : bool = prim::Constant[value=0]()
  %n : NoneType = prim::Constant()
  %y : Tensor = aten::cumprod(%x, %d, %n)
  %z : Tensor = aten::prod(%x, %d, %f, %n)
  return (%y, %z)""")
    assert "prim::ListConstruct" in kinds(grad.df)


# ---- views

def test_views():
    check(f"""graph(%x : {T(2, 3, 4)}):
  %s : int[] = prim::Constant[value=[6, 4]]()
  %s2 : int[] = prim::Constant[value=[4, -1]]()
  %perm : int[] = prim::Constant[value=[1, 0]]()
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %five : int = prim::Constant[value=5]()
  %a : Tensor = aten::view(%x, %s)
  %b : Tensor = aten::reshape(%a, %s2)
  %c : Tensor = aten::transpose(%b, %zero, %one)
  %d : Tensor = aten::permute(%c, %perm)
  %e : Tensor = aten::unsqueeze(%d, %one)
  %f : Tensor = aten::squeeze(%e, %one)
  %g : Tensor = aten::select(%f, %zero, %two)
  %h : Tensor = aten::slice(%f, %one, %one, %five, %two)
  %i : Tensor = aten::squeeze(%e)
  return (%g, %h, %i)""")


# ---- joins: cat / stack / chunk / split / unbind

def test_cat():
    grad = check(f"""graph(%x : {T(2, 3)}, %y : {T(2, 2)}, %z : {T(2, 1)}):
  %d : int = prim::Constant[value=-1]()
  %l : Tensor[] = prim::ListConstruct(%x, %y, %z)
  %c : Tensor = aten::cat(%l, %d)
  return (%c)""")
    assert grad.df_output_vjps == [0, 1, 2]
    assert "prim::ListConstruct" not in kinds(grad.df)  # gradients flow element-wise


def test_cat_of_computed_values_and_repeated_element():
    # the list holds intermediates (static shapes come from the inputs' types) and %x twice
    check(f"""graph(%x : {T(2, 3)}, %y : {T(3, 3)}):
  %d : int = prim::Constant[value=0]()
  %a : Tensor = aten::tanh(%y)
  %l : Tensor[] = prim::ListConstruct(%x, %a, %x)
  %c : Tensor = aten::cat(%l, %d)
  %m : Tensor = aten::mul(%c, %c)
  return (%m)""")


def test_list_used_by_two_ops():
    check(f"""graph(%x : {T(2, 3)}, %y : {T(2, 3)}):
  %d : int = prim::Constant[value=0]()
  %d1 : int = prim::Constant[value=1]()
  %l : Tensor[] = prim::ListConstruct(%x, %y)
  %c : Tensor = aten::cat(%l, %d)
  %s : Tensor = aten::stack(%l, %d1)
  return (%c, %s)""")


def test_stack():
    check(f"""graph(%x : {T(2, 3)}, %y : {T(2, 3)}):
  %d : int = prim::Constant[value=-1]()
  %l : Tensor[] = prim::ListConstruct(%x, %y)
  %c : Tensor = aten::stack(%l, %d)
  return (%c)""")


def test_chunk_list_unpack():
    grad = check(f"""graph(%x : {T(5, 3)}):
  %n : int = prim::Constant[value=3]()
  %d : int = prim::Constant[value=0]()
  %l : Tensor[] = aten::chunk(%x, %n, %d)
  %a : Tensor, %b : Tensor, %c : Tensor = prim::ListUnpack(%l)
  %m : Tensor = aten::mul(%a, %b)
  %e : Tensor = aten::exp(%c)
  return (%m, %e)""")
    assert "aten::cat" in kinds(grad.df)


def test_chunk_with_unused_piece_gets_zeros():
    # %b gets no gradient at all: the formula sees a statically undefined gradient and uses zeros
    grad = check(f"""graph(%x : {T(6, 2)}):
  %n : int = prim::Constant[value=3]()
  %d : int = prim::Constant[value=0]()
  %l : Tensor[] = aten::chunk(%x, %n, %d)
  %a : Tensor, %b : Tensor, %c : Tensor = prim::ListUnpack(%l)
  %m : Tensor = aten::sin(%a)
  return (%m, %c)""")
    assert "aten::zeros_like" in kinds(grad.df)


def test_split_and_split_with_sizes():
    check(f"""graph(%x : {T(2, 5)}):
  %two : int = prim::Constant[value=2]()
  %d : int = prim::Constant[value=1]()
  %sizes : int[] = prim::Constant[value=[1, 4]]()
  %l : Tensor[] = aten::split(%x, %two, %d)
  %a : Tensor, %b : Tensor, %c : Tensor = prim::ListUnpack(%l)
  %l2 : Tensor[] = aten::split_with_sizes(%x, %sizes, %d)
  %p : Tensor, %q : Tensor = prim::ListUnpack(%l2)
  %y : Tensor = aten::mul(%a, %b)
  return (%y, %c, %q)""")


def test_unbind():
    check(f"""graph(%x : {T(3, 2)}):
  %d : int = prim::Constant[value=0]()
  %l : Tensor[] = aten::unbind(%x, %d)
  %a : Tensor, %b : Tensor, %c : Tensor = prim::ListUnpack(%l)
  %y : Tensor = aten::mul(%a, %c)
  return (%y)""")


def test_chunk_without_list_unpack():
    # the list goes straight into cat: its elements come from a ListUnpack added to f
    grad = check(f"""graph(%x : {T(4, 3)}):
  %n : int = prim::Constant[value=2]()
  %d : int = prim::Constant[value=0]()
  %d1 : int = prim::Constant[value=1]()
  %l : Tensor[] = aten::chunk(%x, %n, %d)
  %c : Tensor = aten::cat(%l, %d1)
  return (%c)""")
    assert "prim::ListUnpack" in kinds(grad.f)


def test_list_output():
    # a Tensor[] output of the graph: its vjp is a list, unpacked element-wise in df
    grad = check(f"""graph(%x : {T(4, 3)}):
  %n : int = prim::Constant[value=2]()
  %d : int = prim::Constant[value=0]()
  %l : Tensor[] = aten::chunk(%x, %n, %d)
  return (%l)""")
    assert str(grad.df.inputs[0].type) == "Tensor[]"


def test_constant_chunk():
    grad = check(f"""graph(%x : {T(4, 6)}):
  %a : Tensor, %b : Tensor, %c : Tensor = prim::ConstantChunk[chunks=3, dim=1](%x)
  %y : Tensor = aten::mul(%a, %c)
  return (%y)""")
    assert "aten::cat" in kinds(grad.df)


def test_cat_of_a_list_graph_input_splits_by_sizes_computed_in_f():
    """A `Tensor[]` graph input (what a DifferentiableGraph gets when the ListConstruct stays
    outside it) is differentiated as symbolic_script's cat does: f fills the split sizes in a
    loop, df splits the gradient with them and returns one `Tensor[]` gradient."""
    g = irjit.parse_ir("""graph(%l : Tensor[]):
  %d : int = prim::Constant[value=1]()
  %c : Tensor = aten::cat(%l, %d)
  %y : Tensor = aten::tanh(%c)
  return (%y)""")
    grad = differentiate(g)
    assert "prim::Loop" in kinds(grad.f) and "aten::_set_item" in kinds(grad.f)
    assert "aten::split_with_sizes" in kinds(grad.df)
    for graph in (grad.f, grad.df):
        graph.lint()
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((2, n)).astype(np.float32) for n in (3, 1, 4)]
    outs = run_forward(grad, [[Tensor(x) for x in xs]])
    gy = rng.standard_normal((2, 8)).astype(np.float32)
    got = run_backward(grad, [[Tensor(x) for x in xs]], outs, [gy])
    want = gy * (1 - np.tanh(np.concatenate(xs, axis=1)) ** 2)
    np.testing.assert_allclose(np.concatenate(got[0], axis=1), want, rtol=1e-5, atol=1e-6)


def test_list_ops_are_differentiable_with_their_lists_outside():
    """PyTorch's isDifferentiable takes the ops symbolic_script has a formula for, list-taking
    and -returning ones included (the slicer leaves ListConstruct/ListUnpack outside the
    DifferentiableGraph, whose `Tensor[]` inputs and outputs the formulas take whole); chunk
    has none (prim::ConstantChunk does)."""
    g = irjit.parse_ir(f"""graph(%x : {T(4, 3)}, %y : {T(4, 3)}):
  %n : int = prim::Constant[value=2]()
  %d : int = prim::Constant[value=0]()
  %l : Tensor[] = prim::ListConstruct(%x, %y)
  %c : Tensor = aten::cat(%l, %d)
  %t : Tensor = aten::stack(%l, %d)
  %s : Tensor[] = aten::split(%c, %n, %d)
  %u : Tensor[] = aten::unbind(%c, %d)
  %k : Tensor[] = aten::chunk(%c, %n, %d)
  %a : Tensor, %b : Tensor = prim::ListUnpack(%s)
  %m : Tensor = aten::mul(%x, %y)
  return (%s, %k, %m, %t, %u, %a)""")
    got = {n.kind: is_differentiable(n) for n in g.nodes()}
    assert got["aten::cat"] and got["aten::stack"] and got["aten::split"] and got["aten::unbind"]
    assert got["aten::mul"]
    assert not got["aten::chunk"] and not got["prim::ListConstruct"] and not got["prim::ListUnpack"]


# ---- pointwise ops

UNARY = {
    "tanh": None, "sigmoid": None, "relu": None, "exp": None, "neg": None, "erf": None,
    "erfc": None, "abs": None, "sin": None, "cos": None, "tan": None, "sinh": None, "cosh": None,
    "atan": None, "expm1": None, "frac": None, "floor": None, "ceil": None, "round": None,
    "trunc": None, "hardswish": None, "hardsigmoid": None, "relu6": None,
    "asin": lambda x: np.tanh(x) * 0.9, "acos": lambda x: np.tanh(x) * 0.9,
    "log": lambda x: np.abs(x) + 0.5, "log10": lambda x: np.abs(x) + 0.5,
    "log1p": lambda x: np.abs(x) + 0.5, "log2": lambda x: np.abs(x) + 0.5,
    "sqrt": lambda x: np.abs(x) + 0.5, "rsqrt": lambda x: np.abs(x) + 0.5,
    "reciprocal": lambda x: np.abs(x) + 0.5,
}


@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_pointwise(op):
    dom = UNARY[op]
    grad = check(f"""graph(%x : {T(2, 3)}):
  %y : Tensor = aten::{op}(%x)
  return (%y)""", domain={0: dom} if dom else None)
    assert f"aten::{op}" in kinds(grad.f)


@pytest.mark.parametrize("op,args,consts", [
    ("gelu", "%x, %approx", '%approx : str = prim::Constant[value="tanh"]()'),
    ("leaky_relu", "%x, %slope", "%slope : float = prim::Constant[value=0.10000000000000001]()"),
    ("hardtanh", "%x, %lo, %hi", "%lo : float = prim::Constant[value=-0.5]()\n"
                                 "  %hi : float = prim::Constant[value=0.5]()"),
    ("clamp", "%x, %lo, %hi", "%lo : float = prim::Constant[value=-0.5]()\n"
                              "  %hi : float = prim::Constant[value=0.5]()"),
    ("threshold", "%x, %lo, %hi", "%lo : float = prim::Constant[value=0.10000000000000001]()\n"
                                  "  %hi : float = prim::Constant[value=2.]()"),
    ("pow", "%x, %e", "%e : float = prim::Constant[value=3.]()"),
    ("mul", "%x, %e", "%e : float = prim::Constant[value=3.]()"),
    ("add", "%x, %e, %e", "%e : float = prim::Constant[value=3.]()"),
    ("rsub", "%x, %e, %e", "%e : float = prim::Constant[value=3.]()"),
])
def test_pointwise_with_scalars(op, args, consts):
    check(f"""graph(%x : {T(2, 3)}):
  {consts}
  %y : Tensor = aten::{op}({args})
  return (%y)""")


def test_binary_pointwise_with_broadcasting():
    check(f"""graph(%x : {T(2, 3)}, %y : {T(3)}, %z : {T(2, 1)}, %p : {T(2, 3)}):
  %alpha : int = prim::Constant[value=2]()
  %a : Tensor = aten::add(%x, %y, %alpha)
  %b : Tensor = aten::sub(%a, %z, %alpha)
  %c : Tensor = aten::mul(%b, %y)
  %d : Tensor = aten::div(%c, %p)
  %e : Tensor = aten::max(%d, %z)
  %f : Tensor = aten::min(%e, %y)
  %g : Tensor = aten::pow(%p, %z)
  %h : Tensor = aten::addcmul(%f, %g, %x, %alpha)
  %i : Tensor = aten::lerp(%h, %x, %z)
  return (%i)""", domain={3: lambda x: np.abs(x) + 0.5})


def test_where_and_comparison():
    check(f"""graph(%x : {T(2, 3)}, %y : {T(2, 3)}):
  %zero : float = prim::Constant[value=0.]()
  %c : Tensor = aten::gt(%x, %zero)
  %w : Tensor = aten::where(%c, %x, %y)
  %t : Tensor = aten::tanh(%w)
  return (%t)""")


# ---- undefined gradients

def test_only_some_outputs_get_a_gradient():
    grad = check(f"""graph(%x : {T(2, 3)}, %y : {T(2, 3)}):
  %a : Tensor = aten::mul(%x, %y)
  %b : Tensor = aten::sin(%x)
  %c : Tensor = aten::exp(%y)
  return (%a, %b, %c)""", undefined=(0, 2))
    assert grad.df_input_vjps[:3] == [0, 1, 2]


def test_undefined_list_element_gradients():
    # the unpacked pieces' vjps: one given, one missing; and a cat of outputs without gradients
    check(f"""graph(%x : {T(4, 2)}, %y : {T(4, 2)}):
  %n : int = prim::Constant[value=2]()
  %d : int = prim::Constant[value=0]()
  %l : Tensor[] = aten::chunk(%x, %n, %d)
  %a : Tensor, %b : Tensor = prim::ListUnpack(%l)
  %k : Tensor[] = prim::ListConstruct(%a, %y)
  %c : Tensor = aten::cat(%k, %d)
  return (%a, %b, %c)""", undefined=(1, 2))


def test_outputs_that_do_not_require_grad():
    grad = check(f"""graph(%x : {T(2, 3)}, %y : {T(2, 3, rg=0)}):
  %a : Tensor = aten::mul(%x, %y)
  %d : int = prim::Constant[value=0]()
  %l : Tensor[] = prim::ListConstruct(%a, %y)
  %c : Tensor = aten::cat(%l, %d)
  return (%c)""")
    assert grad.df_output_vjps == [0]


def test_a_model_like_graph():
    # linear -> layer_norm -> relu -> chunk -> cat -> log_softmax -> mean over dims
    check(f"""graph(%x : {T(2, 4)}, %w : {T(6, 4)}, %b : {T(6)}, %g : {T(6)}, %beta : {T(6)}):
  %shape : int[] = prim::Constant[value=[6]]()
  %eps : float = prim::Constant[value=1.0000000000000001e-05]()
  %true : bool = prim::Constant[value=1]()
  %false : bool = prim::Constant[value=0]()
  %none : NoneType = prim::Constant()
  %two : int = prim::Constant[value=2]()
  %one : int = prim::Constant[value=1]()
  %dims : int[] = prim::Constant[value=[1]]()
  %h : Tensor = aten::linear(%x, %w, %b)
  %n : Tensor = aten::layer_norm(%h, %shape, %g, %beta, %eps, %true)
  %r : Tensor = aten::relu(%n)
  %l : Tensor[] = aten::chunk(%r, %two, %one)
  %p : Tensor, %q : Tensor = prim::ListUnpack(%l)
  %pq : Tensor = aten::mul(%p, %q)
  %k : Tensor[] = prim::ListConstruct(%pq, %q)
  %c : Tensor = aten::cat(%k, %one)
  %s : Tensor = aten::log_softmax(%c, %one, %none)
  %m : Tensor = aten::mean(%s, %dims, %false, %none)
  return (%m)""", rtol=1e-3, atol=1e-4)


# ---- more list shapes

def test_meshgrid_list_in_list_out():
    check(f"""graph(%x : {T(3)}, %y : {T(2)}):
  %l : Tensor[] = prim::ListConstruct(%x, %y)
  %m : Tensor[] = aten::meshgrid(%l)
  %a : Tensor, %b : Tensor = prim::ListUnpack(%m)
  %c : Tensor = aten::mul(%a, %b)
  return (%c)""")


def test_hstack_and_vstack():
    check(f"""graph(%x : {T(2, 3)}, %y : {T(2, 1)}, %z : {T(3)}):
  %l : Tensor[] = prim::ListConstruct(%x, %y)
  %h : Tensor = aten::hstack(%l)
  %k : Tensor[] = prim::ListConstruct(%x, %z)
  %v : Tensor = aten::vstack(%k)
  return (%h, %v)""")


def test_unpack_of_a_constructed_list():
    check(f"""graph(%x : {T(2, 3)}, %y : {T(2, 3)}):
  %l : Tensor[] = prim::ListConstruct(%x, %y)
  %a : Tensor, %b : Tensor = prim::ListUnpack(%l)
  %c : Tensor = aten::mul(%a, %b)
  return (%c)""")


def test_unpack_of_a_list_input():
    # the gradient of a Tensor[] input is a list (df returns it in its tuple)
    text = f"""graph(%l : Tensor[], %y : {T(2, 3)}):
  %one : int = prim::Constant[value=1]()
  %a : Tensor, %b : Tensor = prim::ListUnpack(%l)
  %c : Tensor = aten::mul(%a, %y)
  %d : Tensor = aten::add(%c, %b, %one)
  return (%d)"""
    grad = differentiate(irjit.parse_ir(text))
    grad.df.lint()
    assert grad.df_output_vjps == [0, 1]
    rng = np.random.default_rng(1)
    a, b, y = (rng.standard_normal((2, 3)).astype(np.float32) for _ in range(3))
    args = [[Tensor(a), Tensor(b)], Tensor(y)]
    outs = run_forward(grad, args)
    og = rng.standard_normal((2, 3)).astype(np.float32)
    got = run_backward(grad, args, outs, [og])
    np.testing.assert_allclose(got[0][0], og * y, rtol=1e-6)
    np.testing.assert_allclose(got[0][1], og, rtol=1e-6)
    np.testing.assert_allclose(got[1], og * a, rtol=1e-6)


def test_df_specialized_on_undefined_vjps():
    # as an executor would: LowerGradOf + specializeAutogradZero on df with the missing vjps
    # typed undefined, then run with None for them (PyTorch's AutogradZero handling)
    from irjit.compiler.passes.lower_grad_of import run as lower_grad_of
    from irjit.compiler.passes.specialize_autograd_zero import run as specialize_autograd_zero
    from irjit.runtime.autograd import no_grad
    from irjit.runtime.interpreter import Interpreter

    text = f"""graph(%x : {T(4, 3)}, %y : {T(2, 3)}):
  %n : int = prim::Constant[value=2]()
  %d : int = prim::Constant[value=0]()
  %l : Tensor[] = aten::chunk(%x, %n, %d)
  %a : Tensor, %b : Tensor = prim::ListUnpack(%l)
  %m : Tensor = aten::mul(%a, %b)
  %s : Tensor = aten::sin(%y)
  %t : Tensor = aten::add(%m, %s, %n)
  return (%m, %s, %t)"""
    grad = differentiate(irjit.parse_ir(text))
    undefined = {1}
    df = grad.df
    for k, i in enumerate(grad.df_input_vjps):
        if i < grad.f_real_outputs:
            df.inputs[k].type = df.inputs[k].type.with_(undefined=i in undefined)
    lower_grad_of(df)
    specialize_autograd_zero(df, profiling=False)
    df.lint()
    assert "aten::cos" in kinds(df)  # %s also gets %t's gradient: its GradOf stays

    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((4, 3)).astype(np.float32), rng.standard_normal((2, 3)).astype(np.float32)
    outs = run_forward(grad, [Tensor(x), Tensor(y)])
    ogs = [None if i in undefined else rng.standard_normal((2, 3)).astype(np.float32) for i in range(3)]
    args = [(Tensor(ogs[i]) if ogs[i] is not None else None) if i < grad.f_real_outputs else None
            for i in grad.df_input_vjps]
    args += [[Tensor(x), Tensor(y)][i] for i in grad.df_input_captured_inputs]
    args += [outs[i] for i in grad.df_input_captured_outputs]
    with no_grad():
        (result,) = Interpreter(df).run_block(df.block, args, {})
    got = dict(zip(grad.df_output_vjps, result))

    fn = irjit.load(irjit.parse_ir(text))
    fn.run(x, y)
    want = fn.backward(ogs)
    np.testing.assert_allclose(got[0].data, want["arg0"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[1].data, want["arg1"], rtol=1e-5, atol=1e-6)


def test_symbolic_emitter_passes_and_returns_tensor_lists():
    from irjit.compiler.autodiff.symbolic_emitter import SymbolicEmitter
    g = irjit.parse_ir(f"""graph(%x : {T(4, 3)}, %y : {T(2, 3)}):
  return (%x)""")
    x, y = g.inputs
    g.set_insert_point(g.return_node)
    e = SymbolicEmitter(g)
    c = e.op("aten::cat", [x, y], 0)  # a Python list of values: prim::ListConstruct
    assert c.node.inputs[0].node.kind == "prim::ListConstruct"
    assert str(c.node.inputs[0].type) == "Tensor[]"
    pieces = e.op("aten::chunk", x, 2, 0)  # static length: a Python list (prim::ListUnpack)
    assert isinstance(pieces, list) and len(pieces) == 2
    assert pieces[0].node.kind == "prim::ListUnpack"
    unknown = e.op("aten::chunk", c, 2, 0)  # %c's shape is unknown: the list value itself
    assert str(unknown.type) == "Tensor[]"
    g.register_output(e.op("aten::stack", pieces + [y], 1))
    g.lint()
    x_in, y_in = Tensor(np.ones((4, 3), np.float32)), Tensor(np.zeros((2, 3), np.float32))
    from irjit.runtime.interpreter import Interpreter
    outs = Interpreter(g).run([x_in, y_in])
    assert outs[1].data.shape == (2, 3, 3)


# ---- more of PyTorch's symbolic_script ops

LONG4 = "Long(4, strides=[1], requires_grad=0, device=cpu)"
MORE = {
    "batch_norm": (f"""graph(%x : {T(4, 3, 2)}, %w : {T(3)}, %b : {T(3)}):
  %n : NoneType = prim::Constant()
  %t : bool = prim::Constant[value=1]()
  %m : float = prim::Constant[value=0.10000000000000001]()
  %e : float = prim::Constant[value=1.0000000000000001e-05]()
  %y : Tensor = aten::batch_norm(%x, %w, %b, %n, %n, %t, %m, %e, %t)
  return (%y)""", None),
    "batch_norm_eval": (f"""graph(%x : {T(4, 3, 2)}, %w : {T(3)}, %b : {T(3)}, %rm : {T(3, rg=0)}, %rv : {T(3, rg=0)}):
  %f : bool = prim::Constant[value=0]()
  %m : float = prim::Constant[value=0.10000000000000001]()
  %e : float = prim::Constant[value=1.0000000000000001e-05]()
  %y : Tensor = aten::batch_norm(%x, %w, %b, %rm, %rv, %f, %m, %e, %f)
  return (%y)""", {4: lambda x: np.abs(x) + 0.5}),
    "max_pool2d": (f"""graph(%x : {T(1, 2, 4, 4)}):
  %k : int[] = prim::Constant[value=[2, 2]]()
  %p : int[] = prim::Constant[value=[0, 0]]()
  %d : int[] = prim::Constant[value=[1, 1]]()
  %f : bool = prim::Constant[value=0]()
  %y : Tensor = aten::max_pool2d(%x, %k, %k, %p, %d, %f)
  return (%y)""", None),
    "avg_pool2d_adaptive_avg_pool2d": (f"""graph(%x : {T(1, 2, 4, 4)}):
  %k : int[] = prim::Constant[value=[2, 2]]()
  %o : int[] = prim::Constant[value=[1, 1]]()
  %p : int[] = prim::Constant[value=[0, 0]]()
  %f : bool = prim::Constant[value=0]()
  %t : bool = prim::Constant[value=1]()
  %n : NoneType = prim::Constant()
  %y : Tensor = aten::avg_pool2d(%x, %k, %k, %p, %f, %t, %n)
  %z : Tensor = aten::adaptive_avg_pool2d(%x, %o)
  return (%y, %z)""", None),
    "nll_loss": (f"""graph(%x : {T(4, 3)}, %t : {LONG4}):
  %n : NoneType = prim::Constant()
  %r : int = prim::Constant[value=1]()
  %i : int = prim::Constant[value=-100]()
  %s : Tensor = aten::log_softmax(%x, %r, %n)
  %y : Tensor = aten::nll_loss(%s, %t, %n, %r, %i)
  return (%y)""", {1: lambda x: np.array([0, 2, 1, 1])}),
    "embedding": (f"""graph(%w : {T(5, 3)}, %i : {LONG4}):
  %m : int = prim::Constant[value=-1]()
  %f : bool = prim::Constant[value=0]()
  %y : Tensor = aten::embedding(%w, %i, %m, %f, %f)
  return (%y)""", {1: lambda x: np.array([0, 4, 1, 1])}),
    "expand_t_bmm_addmm": (f"""graph(%x : {T(3, 1)}, %a : {T(2, 3, 4)}, %b : {T(2, 4, 3)}, %c : {T(3, 3)}):
  %s : int[] = prim::Constant[value=[3, 3]]()
  %f : bool = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %e : Tensor = aten::expand(%x, %s, %f)
  %t : Tensor = aten::t(%e)
  %m : Tensor = aten::bmm(%a, %b)
  %z : Tensor = aten::addmm(%c, %t, %e, %one, %one)
  return (%z, %m)""", None),
    "grad_sum_to_size": (f"""graph(%x : {T(2, 3)}, %y : {T(2, 3)}):
  %s : int[] = prim::Constant[value=[1, 3]]()
  %same : int[] = prim::Constant[value=[2, 3]]()
  %a : Tensor = aten::_grad_sum_to_size(%x, %s)
  %b : Tensor = aten::_grad_sum_to_size(%y, %same)
  return (%a, %b)""", None),
    "logsumexp_var_std": (f"""graph(%x : {T(3, 4)}):
  %d : int[] = prim::Constant[value=[1]]()
  %t : bool = prim::Constant[value=1]()
  %f : bool = prim::Constant[value=0]()
  %a : Tensor = aten::logsumexp(%x, %d, %f)
  %b : Tensor = aten::var(%x, %d, %t, %t)
  %c : Tensor = aten::std(%x, %d, %t, %f)
  return (%a, %b, %c)""", None),
}


@pytest.mark.parametrize("name", sorted(MORE))
def test_more_symbolic_script_ops(name):
    text, domain = MORE[name]
    check(text, domain=domain)


@pytest.mark.parametrize("p,train", [(0.5, 0), (0.0, 1)])
def test_dropout_that_keeps_everything(p, train):
    """symbolic_script's dropout (native_dropout in f, its mask and scale captured): in eval
    mode or with p=0 the mask keeps every element and the scale is 1."""
    grad = check(f"""graph(%x : {T(3, 4)}):
  %p : float = prim::Constant[value={p}]()
  %t : bool = prim::Constant[value={train}]()
  %y : Tensor = aten::dropout(%x, %p, %t)
  %z : Tensor = aten::tanh(%y)
  return (%z)""")
    assert "aten::native_dropout" in kinds(grad.f)
    assert "aten::native_dropout_backward" in kinds(grad.df)


def test_dropout_in_training_mode_scales_the_kept_elements():
    """p and train are graph inputs: the scale `1 / (float(p1m == 0.) + p1m)` is computed when
    f runs; df's gradient is the vjp where the forward kept an element, times 1 / (1 - p)."""
    text = f"""graph(%x : {T(40, 50)}, %p : float, %t : bool):
  %y : Tensor = aten::dropout(%x, %p, %t)
  return (%y)"""
    grad = differentiate(irjit.parse_ir(text))
    rng = np.random.default_rng(0)
    x = rng.standard_normal((40, 50)).astype(np.float32) + 10  # no element is 0
    for p, train in [(0.25, True), (0.25, False), (1.0, True)]:
        outs = run_forward(grad, [Tensor(x), p, train])
        y = outs[0].data
        kept = y != 0
        if train and p < 1:
            assert 0.6 < kept.mean() < 0.9
        og = rng.standard_normal(y.shape).astype(np.float32)
        got = run_backward(grad, [Tensor(x), p, train], outs, [og])[0].data
        scale = (1 / (1 - p) if p < 1 else 0.0) if train else 1.0
        np.testing.assert_allclose(y, np.where(kept, x * scale, 0), rtol=1e-6)
        np.testing.assert_allclose(got, np.where(kept, og * scale, 0), rtol=1e-6)


@pytest.mark.parametrize("op,args", [("split", "%n, %d"), ("split_with_sizes", "%s, %d"),
                                     ("chunk", "%n, %d"), ("unbind", "%d")])
def test_list_results_of_unknown_length(op, args):
    """Without static shapes the length of split's (chunk's, unbind's) result is unknown: as
    symbolic_script, df's GradOf takes the list's vjp whole and cats (stacks) it."""
    text = f"""graph(%x : Tensor):
  %n : int = prim::Constant[value=2]()
  %s : int[] = prim::Constant[value=[1, 3]]()
  %d : int = prim::Constant[value=0]()
  %l : Tensor[] = aten::{op}(%x, {args})
  return (%l)"""
    grad = differentiate(irjit.parse_ir(text))
    (gof,) = [n for n in grad.df.walk() if n.kind == "prim::GradOf"]
    assert gof.inputs == [grad.df.inputs[0]] and str(gof.inputs[0].type) == "Tensor[]"
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    outs = run_forward(grad, [Tensor(x)])
    ogs = [rng.standard_normal(p.data.shape).astype(np.float32) for p in outs[0]]
    got = run_backward(grad, [Tensor(x)], outs, [ogs])[0]
    fn = irjit.load(irjit.parse_ir(text))
    fn.run(x)
    np.testing.assert_allclose(got.data, fn.backward(ogs)["arg0"], rtol=1e-6)


def test_meshgrid_of_a_list_of_unknown_length():
    """symbolic_script's meshgrid: f records each input's length in a loop (0 for a 0-dim
    input), df sums each output's gradient back to its input's shape in another, appending
    to a list (kept by the backward's dead code elimination, as in PyTorch)."""
    text = """graph(%xs : Tensor[]):
  %l : Tensor[] = aten::meshgrid(%xs)
  return (%l)"""
    grad = differentiate(irjit.parse_ir(text))
    assert "aten::append" in kinds(grad.df)
    rng = np.random.default_rng(2)
    xs = [rng.standard_normal(3).astype(np.float32), np.float32(rng.standard_normal()),
          rng.standard_normal(4).astype(np.float32)]
    outs = run_forward(grad, [[Tensor(np.asarray(x)) for x in xs]])
    ogs = [rng.standard_normal(o.data.shape).astype(np.float32) for o in outs[0]]
    got = run_backward(grad, [[Tensor(np.asarray(x)) for x in xs]], outs, [ogs])[0]
    want = [og.sum(axis=tuple(d for d in range(3) if d != i)) for i, og in enumerate(ogs)]
    want[1] = np.asarray(want[1].sum(), np.float32)  # a 0-dim input: its gradient is 0-dim
    assert [np.shape(g) for g in got] == [(3,), (), (4,)]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
