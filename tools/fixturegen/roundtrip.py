"""Round-trip fixtures: graph texts exactly as ``str(graph)`` prints them.

Writes ``<out>/roundtrip/NNNN_<name>.ir`` + ``manifest.json`` and, as a by-product of the
``_jit_differentiate`` cases, ``<out>/autodiff/<case>/`` in the layout of
``shared/fixtures/autodiff``.
"""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

import torch

from . import zoo
from .common import (
    first_line,
    fresh_function,
    graph_text,
    node_kinds,
    parse_ir_check,
    reset_jit_state,
    write_json,
    write_text,
)


class Collector:
    def __init__(self):
        self.cases = []  # dicts: name, section, origin, text, kinds
        self.skipped = []  # (name, reason)
        self.autodiff = []  # dicts: dir, origin, input, f, df, gradient

    def add(self, name, section, origin, graph, nosrc=False):
        text = graph_text(graph, not nosrc)
        if not text.endswith("\n"):
            text += "\n"
        self.cases.append(
            {"name": name, "section": section, "origin": origin, "text": text, "kinds": node_kinds(graph)}
        )
        return text

    @contextlib.contextmanager
    def attempt(self, name):
        try:
            yield
        except Exception as e:  # noqa: BLE001 - torch failures are recorded and skipped
            self.skipped.append({"name": name, "reason": f"{type(e).__name__}: {first_line(e)}"})


# ---------------------------------------------------------------------------
# static graphs
# ---------------------------------------------------------------------------

# modules for which the without-source-ranges printout is also kept
NOSRC_MODULES = {"lstm_cell", "mlp", "attention", "if_else", "nested_control", "small_cnn", "tuple_list_dict"}
SCOPE_MODULES = {"seq_mlp", "conv_block", "attention", "lstm_cell", "small_cnn", "mycell_gate", "lib_mha", "rnn_loop"}
OPT_FOR_INFERENCE = {"conv_relu", "small_cnn", "conv_bn_pool", "mlp"}
# traced modules whose .graph (prim::CallMethod form) is kept besides .inlined_graph
TRACE_GRAPH_MODULES = {
    "conv_relu", "mycell", "mycell_gate", "seq_mlp", "modulelist", "small_cnn", "conv_block", "lstm_cell",
    "rnn_loop", "lib_lstm", "lib_gru", "attention", "lib_mha", "lib_transformer", "layernorm",
    "helper_methods", "params", "if_else", "slice_index", "type_conv",
}
# scripted modules whose inlined graph is very large (inlined torch.nn.functional code)
HUGE_INLINED = {"lib_transformer", "upsample"}
NOSRC_FUNCTIONS = {"fn_if", "fn_loop", "fn_lstm_cell", "fn_strings"}


def gen_static_modules(col: Collector):
    for s in zoo.MODULES:
        reset_jit_state()
        inputs = zoo.make_inputs(s)
        with col.attempt(f"script_{s.name}"):
            sm = zoo.script_module(s)
            col.add(f"script_{s.name}_graph", "static", "torch.jit.script(module).graph", sm.graph)
            if s.name not in HUGE_INLINED:
                col.add(f"script_{s.name}_inlined", "static", "torch.jit.script(module).inlined_graph", sm.inlined_graph)
            if s.name in NOSRC_MODULES:
                col.add(
                    f"script_{s.name}_inlined_nosrc",
                    "static",
                    "inlined_graph.str(print_source_ranges=False)",
                    sm.inlined_graph,
                    nosrc=True,
                )
            for meth in s.methods:
                col.add(
                    f"script_{s.name}_{meth}_graph",
                    "static",
                    f"torch.jit.script(module).{meth}.graph",
                    getattr(sm, meth).graph,
                )
        if s.name == "batchnorm_only":
            with col.attempt(f"script_{s.name}_train"):
                smt = zoo.script_module(s, train=True)
                col.add(f"script_{s.name}_train_inlined", "static", "torch.jit.script(module.train()).inlined_graph", smt.inlined_graph)
        if s.freeze:
            with col.attempt(f"frozen_{s.name}"):
                fm = zoo.freeze_module(s)
                col.add(f"frozen_{s.name}_graph", "static", "torch.jit.freeze(script(module).eval()).graph", fm.graph)
        if s.name in OPT_FOR_INFERENCE:
            with col.attempt(f"optinf_{s.name}"):
                om = torch.jit.optimize_for_inference(torch.jit.script(s.build(False)))
                col.add(
                    f"optinf_{s.name}_graph",
                    "static",
                    "torch.jit.optimize_for_inference(script(module).eval()).graph",
                    om.graph,
                )
        if s.trace:
            with col.attempt(f"trace_{s.name}"):
                tm = zoo.trace_module(s, inputs)
                if s.name in TRACE_GRAPH_MODULES:
                    col.add(f"trace_{s.name}_graph", "static", "torch.jit.trace(module).graph", tm.graph)
                col.add(f"trace_{s.name}_inlined", "static", "torch.jit.trace(module).inlined_graph", tm.inlined_graph)
                if s.name in SCOPE_MODULES:
                    g = tm.graph.copy()
                    torch._C._jit_pass_inline(g)
                    col.add(
                        f"scopes_trace_{s.name}_pass_inline",
                        "scopes",
                        "traced .graph copy + _jit_pass_inline (scope: annotations)",
                        g,
                    )
                    col.add(
                        f"scopes_trace_{s.name}_inlined_nosrc",
                        "scopes",
                        "traced inlined_graph.str(False)",
                        tm.inlined_graph,
                        nosrc=True,
                    )
    reset_jit_state()


def gen_static_functions(col: Collector):
    for s in zoo.FUNCTIONS:
        reset_jit_state()
        inputs = zoo.make_inputs(s)
        if s.script:
            with col.attempt(f"script_{s.name}"):
                sf = torch.jit.script(fresh_function(s.fn))
                col.add(f"script_{s.name}", "static", "torch.jit.script(function).graph", sf.graph)
                if s.name in NOSRC_FUNCTIONS:
                    col.add(f"script_{s.name}_nosrc", "static", "torch.jit.script(function).graph.str(False)", sf.graph, nosrc=True)
                if s.name in ("fn_calls_fn", "fn_calls_fn_fork"):
                    col.add(f"script_{s.name}_inlined", "static", "torch.jit.script(function).inlined_graph", sf.inlined_graph)
        if s.trace:
            with col.attempt(f"trace_{s.name}"):
                tf = zoo.trace_fn(s, inputs)
                col.add(f"trace_{s.name}", "static", "torch.jit.trace(function).graph", tf.graph)
    reset_jit_state()


# ---------------------------------------------------------------------------
# shape analysis and autodiff
# ---------------------------------------------------------------------------

SHAPE_FNS = [
    "fn_pointwise",
    "fn_layernorm",
    "fn_softmax_attention",
    "fn_sum_of_squares",
    "fn_many_outputs",
    "fn_linear_f",
    "fn_chain_unary",
    "fn_mlp",
    "fn_lstm_cell",
    "fn_divs",
    "fn_arith",
    "fn_unary",
    "fn_gelu_chain",
    "fn_cat_where",
    "fn_matops",
    "fn_conv_f",
    "fn_mul_sum",
    "fn_activations",
]


def _grad_inputs(inputs):
    out = []
    for v in inputs:
        if isinstance(v, torch.Tensor) and v.is_floating_point():
            v = v.detach().clone().requires_grad_(True)
        out.append(v)
    return tuple(out)


def _gradient_info(gd):
    return {
        "df_input_vjps": list(gd.df_input_vjps),
        "df_input_captured_inputs": list(gd.df_input_captured_inputs),
        "df_input_captured_outputs": list(gd.df_input_captured_outputs),
        "df_output_vjps": list(gd.df_output_vjps),
        "f_real_outputs": gd.f_real_outputs,
    }


def _differentiate(col: Collector, base: str, g, input_origin: str, add_input: bool = True):
    """Add input / f / df graphs for ``_jit_differentiate(g)``; lowers tuples on failure."""
    entry = {"dir": base, "origin": input_origin}
    if add_input:
        entry["input"] = col.add(f"autodiff_{base}_input", "autodiff", input_origin, g)
    else:
        entry["input"] = graph_text(g)
    try:
        gd = torch._C._jit_differentiate(g.copy())
    except Exception:  # noqa: BLE001
        g2 = g.copy()
        torch._C._jit_pass_lower_all_tuples(g2)
        gd = torch._C._jit_differentiate(g2)
        base = base + "_lowered"
        entry["dir"] = base
        entry["input"] = graph_text(g2)
    entry["f"] = col.add(f"autodiff_{base}_f", "autodiff", "_jit_differentiate(g).f", gd.f)
    entry["df"] = col.add(f"autodiff_{base}_df", "autodiff", "_jit_differentiate(g).df", gd.df)
    entry["gradient"] = _gradient_info(gd)
    col.autodiff.append(entry)


def _diff_graph_nodes(block_nodes, acc):
    for n in block_nodes:
        if n.kind() == "prim::DifferentiableGraph":
            acc.append(n)
        for b in n.blocks():
            _diff_graph_nodes(b.nodes(), acc)
    return acc


HAND_DIFF = {
    "hand_mul_add": """graph(%a : Float(2, 3, strides=[3, 1], requires_grad=1, device=cpu),
      %b : Float(2, 3, strides=[3, 1], requires_grad=1, device=cpu)):
  %2 : int = prim::Constant[value=1]()
  %3 : Float(2, 3, strides=[3, 1], requires_grad=1, device=cpu) = aten::mul(%a, %b)
  %4 : Float(2, 3, strides=[3, 1], requires_grad=1, device=cpu) = aten::add(%3, %a, %2)
  %5 : Float(2, 3, strides=[3, 1], requires_grad=1, device=cpu) = aten::tanh(%4)
  return (%5)
""",
    "hand_matmul_relu": """graph(%x : Float(2, 4, strides=[4, 1], requires_grad=1, device=cpu),
      %w : Float(4, 3, strides=[3, 1], requires_grad=1, device=cpu)):
  %2 : Float(2, 3, strides=[3, 1], requires_grad=1, device=cpu) = aten::matmul(%x, %w)
  %3 : Float(2, 3, strides=[3, 1], requires_grad=1, device=cpu) = aten::relu(%2)
  return (%3)
""",
    "hand_sigmoid_sub_div": """graph(%x : Float(3, strides=[1], requires_grad=1, device=cpu),
      %y : Float(3, strides=[1], requires_grad=1, device=cpu)):
  %1 : int = prim::Constant[value=1]()
  %2 : Float(3, strides=[1], requires_grad=1, device=cpu) = aten::sigmoid(%x)
  %3 : Float(3, strides=[1], requires_grad=1, device=cpu) = aten::sub(%2, %y, %1)
  %4 : Float(3, strides=[1], requires_grad=1, device=cpu) = aten::div(%3, %y)
  %5 : Float(3, strides=[1], requires_grad=1, device=cpu) = aten::exp(%4)
  return (%5, %2)
""",
    "hand_sum_mean": """graph(%x : Float(2, 3, strides=[3, 1], requires_grad=1, device=cpu)):
  %1 : NoneType = prim::Constant()
  %2 : Float(2, 3, strides=[3, 1], requires_grad=1, device=cpu) = aten::mul(%x, %x)
  %3 : Float(requires_grad=1, device=cpu) = aten::sum(%2, %1)
  %4 : Float(requires_grad=1, device=cpu) = aten::mean(%x, %1)
  %5 : int = prim::Constant[value=1]()
  %6 : Float(requires_grad=1, device=cpu) = aten::add(%3, %4, %5)
  return (%6)
""",
}


def gen_autodiff(col: Collector):
    # a) script graph specialised by complete shape analysis
    for name in SHAPE_FNS:
        reset_jit_state()
        s = zoo.spec(name)
        with col.attempt(f"autodiff_shape_{name}"):
            inputs = _grad_inputs(zoo.make_inputs(s))
            g = torch.jit.script(fresh_function(s.fn)).graph.copy()
            torch._C._jit_pass_inline(g)
            torch._C._jit_pass_complete_shape_analysis(g, inputs, False)
            _differentiate(
                col, f"shape_{name}", g, "script graph + _jit_pass_inline + _jit_pass_complete_shape_analysis (requires_grad inputs)"
            )
    # shape analysis with_grad=True, no differentiation
    for name in ("fn_lstm_cell", "fn_if", "fn_loop", "fn_int_list"):
        reset_jit_state()
        s = zoo.spec(name)
        with col.attempt(f"shape_analysis_{name}"):
            inputs = _grad_inputs(zoo.make_inputs(s))
            g = torch.jit.script(fresh_function(s.fn)).graph.copy()
            torch._C._jit_pass_complete_shape_analysis(g, inputs, True)
            col.add(f"shape_analysis_{name}", "static", "_jit_pass_complete_shape_analysis(graph, inputs, True)", g)
    # b) subgraphs of prim::DifferentiableGraph nodes from profiled graphs
    for name in ("fn_pointwise", "fn_mlp", "fn_lstm_cell", "fn_layernorm", "fn_softmax_attention", "fn_cat_where",
                 "fn_many_outputs", "fn_gelu_chain", "fn_loop"):
        reset_jit_state()
        s = zoo.spec(name)
        with col.attempt(f"autodiff_profiled_{name}"):
            torch._C._debug_set_autodiff_subgraph_inlining(False)
            inputs = _grad_inputs(zoo.make_inputs(s))
            f = torch.jit.script(fresh_function(s.fn))
            for _ in range(3):
                f(*inputs)
            g = f.graph_for(*inputs)
            for i, node in enumerate(_diff_graph_nodes(g.nodes(), [])):
                sub = node.g("Subgraph")
                _differentiate(col, f"profiled_{name}_dg{i}", sub, "Subgraph of prim::DifferentiableGraph from graph_for")
    reset_jit_state()
    # c) hand-written specialised graphs
    for name, src in HAND_DIFF.items():
        with col.attempt(f"autodiff_{name}"):
            g = torch._C.parse_ir(src)
            _differentiate(col, name, g, "torch._C.parse_ir(hand-written, specialised types)")


# ---------------------------------------------------------------------------
# torch._C.parse_ir of hand-written texts
# ---------------------------------------------------------------------------

IRPARSER_TEXTS = {
    "basic": """graph(%0 : Tensor,
      %1 : Tensor):
  %2 : Tensor = foo::add(%0, %1)
  %res, %3 = foo::mul(%0, %2)
  %x, %y = foo::combine(%res, %2, %3)
  return (%x, %y, %res)
""",
    "if_loop": """graph(%a : Tensor, %b : int, %c : bool):
  %d : int = prim::Constant[value=1]()
  %e : Tensor = prim::If(%c)
    block0():
      %f : Tensor = aten::neg(%a)
      -> (%f)
    block1():
      %g : Tensor = aten::relu(%a)
      -> (%g)
  %h : Tensor = prim::Loop(%b, %c, %e)
    block0(%i : int, %acc : Tensor):
      %j : Tensor = aten::add(%acc, %a, %d)
      -> (%c, %j)
  return (%h)
""",
    "attributes": """graph(%0 : Tensor):
  %1 : Tensor = foo::bar[a=1, b=2.5, c="hello", d=[1, 2, 3], e=[1.5, 2.5], f=["x", "y"], g=[]](%0)
  %2 : int = prim::Constant[value=-7]()
  %3 : float = prim::Constant[value=1.0000000000000001e-05]()
  %4 : str = prim::Constant[value="with \\"quotes\\" and \\\\ backslash"]()
  %5 : bool = prim::Constant[value=1]()
  %6 : int[] = prim::Constant[value=[1, 2]]()
  %7 : NoneType = prim::Constant()
  return (%1, %2, %3, %4, %5, %6, %7)
""",
    "shaped_tensor": """graph(%a : Float(4, 5),
      %b : Float(4:5, 5:1),
      %c : Double(*, *),
      %d : Long(2, strides=[1], requires_grad=0, device=cpu),
      %e : Tensor(requires_grad=1)):
  %f : Float(4, 5, strides=[5, 1], requires_grad=0, device=cpu) = aten::mul(%a, %b)
  return (%f, %c, %d, %e)
""",
    "types": """graph(%a : Tensor?,
      %b : int[],
      %c : (Tensor, float),
      %d : Dict(str, Tensor),
      %e : Tensor[],
      %f : str?,
      %g : Device,
      %h : Scalar):
  %i : Tensor, %j : float = prim::TupleUnpack(%c)
  %k : int = aten::len(%b)
  return (%a, %i, %j, %k, %d, %e, %f, %g, %h)
""",
    "tensor_constants": """graph(%x : Tensor):
  %1 : Tensor = prim::Constant[value={2.5}]()
  %2 : Long(requires_grad=0, device=cpu) = prim::Constant[value={3}]()
  %3 : Tensor = aten::mul(%x, %1)
  %4 : int = prim::Constant[value=1]()
  %5 : Tensor = aten::add(%3, %2, %4)
  return (%5)
""",
}


def gen_irparser(col: Collector):
    for name, src in IRPARSER_TEXTS.items():
        with col.attempt(f"irparser_{name}"):
            g = torch._C.parse_ir(src, parse_tensor_constants=True) if name == "tensor_constants" else torch._C.parse_ir(src)
            col.add(f"irparser_{name}", "irparser", f"str(torch._C.parse_ir(<hand-written {name} string>))", g)


# ---------------------------------------------------------------------------
# profiling / legacy executor outputs
# ---------------------------------------------------------------------------


def _mode_fuser():
    torch._C._jit_override_can_fuse_on_cpu(True)
    torch._C._jit_set_te_must_use_llvm_cpu(False)
    torch._C._jit_set_texpr_fuser_enabled(True)


def _set_no_autodiff_inlining():
    torch._C._debug_set_autodiff_subgraph_inlining(False)
    setter = getattr(torch._C, "_jit_set_autodiff_subgraph_inlining", None)
    if setter is not None:
        setter(False)


MODES = {
    # name: (section stem, setup, description)
    "prof": ("profiling", lambda: None, "profiling executor, default settings"),
    "noinl": ("noinline", _set_no_autodiff_inlining, "profiling executor, autodiff subgraph inlining off"),
    "profruns2": ("profiling", lambda: torch._C._jit_set_num_profiled_runs(2), "profiling executor, _jit_set_num_profiled_runs(2)"),
    "fuser": ("fuser", _mode_fuser, "TensorExpr fuser on (can_fuse_on_cpu, no LLVM)"),
    "fuseroff": (
        "fuser",
        lambda: (torch._C._jit_override_can_fuse_on_cpu(True), torch._C._jit_set_texpr_fuser_enabled(False)),
        "can_fuse_on_cpu with the TensorExpr fuser disabled",
    ),
    "fusernoinl": (
        "fuser",
        lambda: (_mode_fuser(), _set_no_autodiff_inlining()),
        "TensorExpr fuser on, autodiff subgraph inlining off",
    ),
    "fusergrpnoinl": (
        "fuser",
        lambda: (_mode_fuser(), torch._C._debug_set_fusion_group_inlining(False)),
        "TensorExpr fuser on, fusion group inlining off",
    ),
    "legacy": (
        "legacy",
        lambda: (torch._C._jit_set_profiling_executor(False), torch._C._jit_set_profiling_mode(False)),
        "legacy executor (_jit_set_profiling_executor(False))",
    ),
    "legacyfuser": (
        "legacyfuser",
        lambda: (
            torch._C._jit_set_profiling_executor(False),
            torch._C._jit_set_profiling_mode(False),
            torch._C._jit_override_can_fuse_on_cpu_legacy(True),
            torch._C._jit_override_can_fuse_on_cpu(True),
        ),
        "legacy executor with the legacy CPU fuser",
    ),
}

PROF_FNS = [
    "fn_pointwise", "fn_mlp", "fn_lstm_cell", "fn_layernorm", "fn_softmax_attention", "fn_if", "fn_loop",
    "fn_while", "fn_cat_where", "fn_many_outputs", "fn_sum_of_squares", "fn_conv_f", "fn_chain_unary",
    "fn_mixed_scalar", "fn_gelu_chain", "fn_calls_fn_fork",
]
PROF_MODS = ["mycell", "mlp", "lstm_cell", "conv_relu", "attention", "if_else", "for_loop", "small_cnn"]
# the modes every target gets; the others only for EXTRA_TARGETS
BASE_MODES = ("prof", "fuser")
EXTRA_MODES = ("noinl", "profruns2", "fusernoinl", "fusergrpnoinl")
EXTRA_TARGETS = {
    "fn_pointwise", "fn_mlp", "fn_lstm_cell", "fn_if", "fn_loop", "fn_cat_where", "fn_many_outputs",
    "fn_gelu_chain", "mlp", "mycell", "for_loop",
}
LEGACY_TARGETS = {
    "fn_pointwise", "fn_layernorm", "fn_loop", "fn_sum_of_squares", "fn_chain_unary", "fn_mlp", "fn_if", "mlp",
    "conv_relu", "lstm_cell", "mycell", "for_loop",
}
FUSEROFF_TARGETS = {"fn_pointwise", "fn_mlp", "fn_loop", "mlp"}
LEGACYFUSER_TARGETS = {"fn_pointwise", "fn_layernorm", "fn_chain_unary", "fn_many_outputs", "mycell", "lstm_cell"}
DYNAMIC_TARGETS = ["fn_pointwise", "fn_chain_unary", "fn_sum_of_squares", "fn_many_outputs", "fn_cat_where", "fn_arith"]


def _prepare(inputs, grad: bool):
    out = []
    for v in inputs:
        if isinstance(v, torch.Tensor):
            v = v.detach().clone()
            if grad and v.is_floating_point():
                v.requires_grad_(True)
        out.append(v)
    return tuple(out)


def _profile_one(col: Collector, target: str, mode: str, grad: bool):
    """last_executed_optimized_graph() after runs 1, 2, 3 of one instance, and graph_for(*inputs)
    after 1, 2, 3 runs of fresh instances (graph_for may itself run the function when the
    executor has no single execution plan, so it gets its own instance each time)."""
    is_mod = target in zoo.MOD_BY_NAME
    s = zoo.spec(target)
    stem, setup, desc = MODES[mode]
    gtag = "grad" if grad else "nograd"
    section = f"{stem}_{gtag}" if stem not in ("legacyfuser",) else stem
    prefix = f"{mode}_{'mod' if is_mod else 'fn'}_{target.removeprefix('fn_')}_{gtag}"

    def fresh():
        reset_jit_state()
        setup()
        inputs = _prepare(zoo.make_inputs(s), grad)
        obj = zoo.script_module(s) if is_mod else torch.jit.script(fresh_function(s.fn))
        if is_mod and not grad:
            for p in obj.parameters():
                p.requires_grad_(False)
        ctx = torch.no_grad() if (is_mod and not grad) else contextlib.nullcontext()
        return obj, inputs, ctx

    with col.attempt(prefix):
        obj, inputs, ctx = fresh()
        with ctx:
            for run in (1, 2, 3):
                obj(*inputs)
                col.add(
                    f"{prefix}_run{run}", section, f"last_executed_optimized_graph() after run {run} [{desc}]",
                    torch.jit.last_executed_optimized_graph(),
                )
    for runs in (1, 2, 3) if target in EXTRA_TARGETS else (3,):
        with col.attempt(f"{prefix}_graph_for_after{runs}"):
            obj, inputs, ctx = fresh()
            with ctx:
                for _ in range(runs):
                    obj(*inputs)
                g = obj.graph_for(*inputs)
            # after 3 runs the file keeps the plain `_graph_for` name of earlier generator versions
            name = f"{prefix}_graph_for" if runs == 3 else f"{prefix}_graph_for_after{runs}"
            col.add(name, section, f"graph_for(*inputs) after {runs} run(s) [{desc}]", g)
    reset_jit_state()


def _double_dim0(inputs):
    return tuple(torch.cat([v, v], 0) if isinstance(v, torch.Tensor) else v for v in inputs)


def _dynamic_one(col: Collector, target: str):
    s = zoo.spec(target)
    prefix = f"dynamic_fn_{target.removeprefix('fn_')}"
    reset_jit_state()
    with col.attempt(prefix):
        _mode_fuser()
        torch._C._jit_set_fusion_strategy([("DYNAMIC", 2)])
        a = _prepare(zoo.make_inputs(s), False)
        b = _double_dim0(a)
        f = torch.jit.script(fresh_function(s.fn))
        for run, inputs in enumerate((a, a, b, b), 1):
            f(*inputs)
            col.add(
                f"{prefix}_run{run}",
                "fuser_nograd",
                f"fusion_strategy [('DYNAMIC', 2)], run {run} (runs 3-4 with a new shape)",
                torch.jit.last_executed_optimized_graph(),
            )
    reset_jit_state()


def gen_profiling(col: Collector):
    for target in PROF_FNS + PROF_MODS:
        modes = list(BASE_MODES)
        if target in EXTRA_TARGETS:
            modes += [m for m in EXTRA_MODES if m != "fusergrpnoinl" or target.startswith("fn_")]
        if target in FUSEROFF_TARGETS:
            modes.append("fuseroff")
        if target in LEGACY_TARGETS:
            modes.append("legacy")
        if target in LEGACYFUSER_TARGETS:
            modes.append("legacyfuser")
        for mode in modes:
            for grad in (True, False):
                _profile_one(col, target, mode, grad)
    for target in DYNAMIC_TARGETS:
        _dynamic_one(col, target)


# ---------------------------------------------------------------------------
# driver
# ---------------------------------------------------------------------------


_NUMBERED = re.compile(r"%\d+\b")


def _canonical(text: str) -> str:
    """The text with numeric value names renumbered in order of first appearance."""
    names: dict = {}
    return _NUMBERED.sub(lambda m: names.setdefault(m.group(0), f"%v{len(names)}"), text)


def generate(out: Path) -> dict:
    col = Collector()
    gen_static_modules(col)
    gen_static_functions(col)
    gen_autodiff(col)
    gen_irparser(col)
    gen_profiling(col)
    reset_jit_state()

    rt = out / "roundtrip"
    rt.mkdir(parents=True, exist_ok=True)
    # drop byte-identical duplicates, keeping the first producer; executor snapshots that
    # differ from an earlier one only in the numbering of %N values are dropped too
    by_text: dict = {}
    by_canon: dict = {}
    kept = []
    renumbered = 0
    for c in col.cases:
        first = by_text.get(c["text"])
        if first is not None:
            first["also"].append(c["name"])
            continue
        canon = _canonical(c["text"])
        first = by_canon.get(canon)
        if first is not None and c["section"] not in ("static", "scopes", "irparser"):
            first["also"].append(c["name"] + " (differs only in %N value numbering)")
            renumbered += 1
            continue
        c["also"] = []
        by_text[c["text"]] = c
        by_canon.setdefault(canon, c)
        kept.append(c)

    manifest = []
    for i, c in enumerate(kept, 1):
        fname = f"{i:04d}_{c['name']}.ir"
        write_text(rt / fname, c["text"])
        accepts, identical, err = parse_ir_check(c["text"])
        manifest.append(
            {
                "file": fname,
                "section": c["section"],
                "origin": c["origin"],
                "torch_parse_ir_accepts": accepts,
                "torch_reprint_identical": identical,
                "torch_parse_error": err,
                "node_kinds": c["kinds"],
                "also_produced_by": c["also"],
            }
        )
    write_json(rt / "manifest.json", manifest)

    # autodiff cases, in the layout of shared/fixtures/autodiff
    ad = out / "autodiff"
    ad.mkdir(parents=True, exist_ok=True)
    ad_manifest = []
    for i, e in enumerate(col.autodiff, 1):
        d = ad / f"{i:03d}_{e['dir']}"
        d.mkdir()
        write_text(d / "input.ir", e["input"])
        write_text(d / "f.ir", e["f"])
        write_text(d / "df.ir", e["df"])
        write_json(d / "gradient.json", e["gradient"])
        ad_manifest.append({"dir": d.name, "origin": e["origin"], "gradient": e["gradient"]})
    write_json(ad / "manifest.json", ad_manifest)

    return {
        "roundtrip_candidates": len(col.cases),
        "roundtrip_files": len(kept),
        "roundtrip_duplicates_dropped": len(col.cases) - len(kept) - renumbered,
        "roundtrip_renumbered_duplicates_dropped": renumbered,
        "autodiff_cases": len(col.autodiff),
        "roundtrip_skipped": col.skipped,
    }
