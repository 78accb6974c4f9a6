"""`irtool run`: execute a graph on inputs from an `.npz` (or random ones made from its
input types), print a summary, and optionally write outputs and gradients to an `.npz`."""

from __future__ import annotations

import zipfile
from typing import Any

import numpy as np

from irjit.compiler.ir import ListType, NamedType, OptionalType, TensorType
from irjit.ops.types import SCALAR_TYPES

from . import sources
from .sources import UsageError, lint_parsed, read_source


class RunUsageError(UsageError):
    """Bad files or options for `irtool run`."""


def read_npz(path: str | None, what: str) -> dict[str, np.ndarray] | None:
    if path is None:
        return None
    try:
        loaded = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise RunUsageError(f"{path}: no such {what} file") from None
    except IsADirectoryError:
        raise RunUsageError(f"{path}: is a directory, not an .npz {what} file") from None
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as e:
        raise RunUsageError(f"{path}: not a readable .npz file ({e})") from None
    if not isinstance(loaded, np.lib.npyio.NpzFile):
        raise RunUsageError(f"{path}: a .npy file holds one unnamed array; give the {what} as an "
                            ".npz (np.savez(path, arg0=..., arg1=...))")
    try:
        with loaded as f:
            return {k: f[k] for k in f.files}
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as e:
        raise RunUsageError(f"{path}: not a readable .npz file ({e})") from None


def check_output_path(path: str) -> None:
    """Fail before running if `--out` cannot be written (see sources.check_output_path)."""
    try:
        sources.check_output_path(path, "--out")
    except UsageError as e:
        raise RunUsageError(str(e)) from None


def check_counts(args) -> None:
    """Run counts, thresholds and seeds are whole numbers in their range."""
    if args.runs < 1:
        raise RunUsageError("--runs must be at least 1")
    for flag, value in (("--seed", args.seed), ("--profiled-runs", args.profiled_runs),
                        ("--autodiff-node-threshold", args.autodiff_node_threshold),
                        ("--autodiff-inline-threshold", args.autodiff_inline_threshold)):
        if value is not None and value < 0:
            raise RunUsageError(f"{flag} must not be negative (got {value})")


def _allocation_error(v, sizes, dtype) -> RunUsageError:
    nbytes = int(np.prod([int(s) for s in sizes], dtype=object)) * dtype.itemsize
    return RunUsageError(f"input %{v.name} of type {v.type} needs {nbytes:,} bytes, more than "
                         "can be allocated; pass smaller inputs with --inputs FILE.npz")


def read_attribute_sidecar(path: str | None, params: dict | None) -> dict | None:
    """Module attributes from a JSON sidecar (see runtime/sidecar.py); the params arrays it
    uses as tensors are taken out of `params`."""
    if path is None:
        return None
    from irjit.ops.errors import IRTypeError
    from irjit.runtime.sidecar import read_attributes
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        raise RunUsageError(f"{path}: no such attributes file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise RunUsageError(f"{path}: not a readable JSON file ({e})") from None
    try:
        attributes, used = read_attributes(text, params or {}, path)
    except IRTypeError as e:
        raise RunUsageError(str(e)) from None
    for key in used:
        params.pop(key, None)
    return attributes


def random_inputs(fn, rng: np.random.Generator) -> list:
    """Inputs made from the graph's input types, when those say enough (dtype and shape)."""
    out = []
    for v in fn.input_values:
        t = v.type.elem if isinstance(v.type, OptionalType) else v.type
        if isinstance(t, TensorType):
            sizes = t.complete_sizes()
            if sizes is None:
                raise RunUsageError(f"input %{v.name} has type {v.type}, which gives no complete "
                                    "shape; pass --inputs FILE.npz (keys arg0, arg1, ...)")
            dtype = np.dtype(SCALAR_TYPES.get(t.scalar_type or "Float") or "float32")
            try:
                if dtype.kind == "f":
                    out.append(rng.standard_normal(sizes).astype(dtype))
                elif dtype.kind == "b":
                    out.append(rng.random(sizes) < 0.5)
                else:
                    out.append(rng.integers(0, 10, sizes).astype(dtype))
            except (MemoryError, ValueError):  # numpy: "array is too big" or no memory
                raise _allocation_error(v, sizes, dtype) from None
        elif isinstance(t, NamedType) and t.name in ("int", "float", "bool"):
            out.append({"int": np.array(1), "float": np.array(0.5), "bool": np.array(True)}[t.name])
        elif isinstance(v.type, OptionalType):
            out.append(None)
        elif isinstance(t, ListType) and getattr(t.elem, "name", None) == "int":
            raise RunUsageError(f"input %{v.name} is an int[]: pass --inputs FILE.npz")
        else:
            raise RunUsageError(f"cannot make a random value of type {v.type} for input "
                                f"%{v.name}; pass --inputs FILE.npz")
    return out


def _summary(name: str, value: Any) -> str:
    a = np.asarray(value)
    if a.dtype.kind in "fciub":
        checksum = float(np.asarray(a, dtype=np.float64).sum()) if a.size else 0.0
        return f"{name}: {a.dtype} {list(a.shape)} sum={checksum:.6g}"
    return f"{name}: {a!r}"


def write_npz_atomically(path: str, arrays: dict[str, np.ndarray]) -> None:
    """Write all arrays or nothing: a temporary file in the same folder, then a rename."""
    sources.write_atomically(path, lambda f: np.savez(f, **arrays))


def cmd_run(args) -> int:
    check_counts(args)
    if args.out:
        check_output_path(args.out)
    text, name = read_source(args.file)
    inputs = read_npz(args.inputs, "inputs")
    params = read_npz(args.params, "params")
    constants = read_npz(args.constants, "constants")
    attributes = read_attribute_sidecar(args.attributes, params)
    from irjit.compiler import parse_ir
    from irjit.runtime.executor import get_settings, update_settings
    from irjit.runtime.executor.plan import runner_factory
    graph = parse_ir(text, name)
    lint_parsed(graph, name)
    changes = {k: v for k, v in (("autodiff_node_threshold", args.autodiff_node_threshold),
                                 ("autodiff_inline_threshold", args.autodiff_inline_threshold),
                                 ("num_profiled_runs", args.profiled_runs),
                                 ("guard_style", args.guard_style)) if v is not None}
    backend = args.backend or ("interp" if args.executor == "interp" else get_settings().backend)
    try:
        runner_factory(backend)
    except ValueError as e:  # IRJIT_BACKEND names no registered backend
        raise RunUsageError(str(e)) from None
    previous = update_settings(backend=backend, **changes)
    try:
        return _run(args, name, graph, params, constants, inputs, backend, attributes)
    finally:
        update_settings(backend=previous.backend)


def _run(args, name, graph, params, constants, inputs, backend, attributes=None) -> int:
    from irjit import runtime
    from irjit.runtime.executor import COUNTERS
    from irjit.runtime.native import TOTALS
    from irjit.runtime.values import flatten_value, to_numpy
    stats_before = TOTALS.copy()
    COUNTERS.reset()
    fn = runtime.load(graph, params=params, constants=constants, executor=args.executor,
                      attributes=attributes)
    fn.filename = fn.interpreter.filename = name
    if backend == "native" and args.executor == "interp":
        from irjit.runtime.native import NativeRunner
        interp = fn.interpreter
        fn.interpreter = NativeRunner(interp.graph, interp.constants, interp.functions, name)
    if args.seed is not None:
        runtime.manual_seed(args.seed)
    if inputs is None:
        values = random_inputs(fn, np.random.default_rng(args.seed or 0))
    else:
        missing = [f"arg{i}" for i, v in enumerate(fn.input_values)
                   if f"arg{i}" not in inputs and not isinstance(v.type, OptionalType)]
        if missing:
            raise RunUsageError(f"{args.inputs}: missing {', '.join(missing)} "
                                f"(the graph takes {len(fn.input_values)} inputs)")
        # an Optional input left out of the file is None
        values = [inputs.get(f"arg{i}") for i in range(len(fn.input_values))]
    for _ in range(args.runs):
        outs = fn.run(*values, requires_grad=args.grad)
    results: dict[str, np.ndarray] = {}
    for i, (path, leaf) in enumerate(flatten_value(tuple(outs))):
        results[f"out{i}"] = to_numpy(leaf)
        print(_summary(f"out{i}" + ("" if path == "<root>" else f" {path}"), results[f"out{i}"]))
    if args.grad:
        for key, g in fn.backward().items():
            results[f"grad.{key}"] = g
            print(_summary(f"grad.{key}", g))
    if args.executor != "interp":
        counters = " ".join(f"{k}={v}" for k, v in COUNTERS.as_dict().items())
        print(f"executor: {args.executor}, runs: {args.runs}; {counters}")
        if args.show_graph:
            print(f"# the graph the last run executed\n{fn.executor.last_graph}", end="")
    elif args.show_graph:
        print(f"# executed graph\n{graph}", end="")
    if args.stats:
        print(TOTALS.since(stats_before).line())
    if args.out:
        write_npz_atomically(args.out, results)
    return 0


def register(sub) -> None:
    sp = sub.add_parser("run", help="run a graph with the interpreter")
    sp.add_argument("file", help=".ir file ('-' for stdin)")
    sp.add_argument("--inputs", help=".npz with arg0, arg1, ... (default: random, from input types)")
    sp.add_argument("--params", help=".npz of module attributes by dotted path (conv.weight)")
    sp.add_argument("--constants", help=".npz of tensor constants by value name (frozen graphs)")
    sp.add_argument("--attributes", help=".json of other module attributes by dotted path: "
                    "strings, numbers, null, lists, dicts; {\"$tensor\": KEY} is a params array")
    sp.add_argument("--grad", action="store_true",
                    help="also compute gradients of the sum of all floating-point outputs")
    sp.add_argument("--out", help="write outputs (out0, ...) and gradients (grad.*) to this .npz")
    sp.add_argument("--seed", type=int, help="seed for random inputs and random ops (dropout)")
    sp.add_argument("--executor", choices=("interp", "legacy", "profiling"), default="interp",
                    help="plain interpreter (default), or a graph executor as TorchScript runs graphs")
    sp.add_argument("--backend", choices=("interp", "native"),
                    help="interpret every node, or run native units compiled with LLVM (the "
                         "default under --executor legacy|profiling)")
    sp.add_argument("--stats", action="store_true",
                    help="print one line of native-code statistics (units, nodes, compile ms, ...)")
    sp.add_argument("--runs", type=int, default=1,
                    help="run this many times (executors profile and specialize on early runs)")
    sp.add_argument("--show-graph", action="store_true",
                    help="print the graph that ran last (the optimized one under an executor)")
    sp.add_argument("--autodiff-node-threshold", type=int, help="smallest DifferentiableGraph kept (2)")
    sp.add_argument("--autodiff-inline-threshold", type=int,
                    help="DifferentiableGraphs smaller than this are inlined back (5)")
    sp.add_argument("--profiled-runs", type=int, help="runs profiled before specializing (1)")
    sp.add_argument("--guard-style", choices=("typecheck", "bailout"),
                    help="2.x RequiresGradCheck/TypeCheck guards (default) or 1.x prim::BailOut")
    sp.set_defaults(func=cmd_run)
