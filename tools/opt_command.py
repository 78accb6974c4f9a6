"""`irtool opt`: run a pipeline of passes over a graph and print the result in PyTorch's format."""

from __future__ import annotations

import sys
from typing import Optional

from irjit.ops.errors import IRTypeError

from .sources import lint_parsed, read_source


class OptUsageError(IRTypeError):
    """Bad pass names, options, input types or files for `irtool opt` (an IRTypeError so that
    irtool's main prints it as `irtool: error: ...`)."""


def cmd_opt(args) -> int:
    import irjit.compiler.passes  # noqa: F401  (registers every pass)
    from irjit.compiler.passes.manager import describe_passes
    if args.list:
        for name, what, desc in describe_passes():
            print(f"{name:<40} {what:<8} {desc}")
        return 0
    if args.file is None or (args.passes is None and args.emit is None):
        raise OptUsageError("opt needs --passes=NAME[,NAME...] (or --emit) and a FILE (or --list)")
    passes = args.passes if args.passes is not None else "propagate_input_shapes"
    graph, manager = prepared_graph(args.file, passes, args.input_types, verify=args.verify,
                                    print_after_all=args.print_after_all)
    if args.emit is not None:
        sys.stdout.write(emit_native(graph, args.emit))
    else:
        sys.stdout.write(str(graph))
    if args.time_passes:
        sys.stderr.write(manager.timing_table())
    return 0


def pipeline_manager(passes: Optional[str], verify: bool = False,
                     print_after_all: bool = False):
    """The PassManager for a `--passes` pipeline (None without one); bad names or options
    are a usage error, raised before any file is read."""
    import irjit.compiler.passes  # noqa: F401  (registers every pass)
    import irjit.compiler.codegen.partition  # noqa: F401  (registers native_partition)
    from irjit.compiler.passes.manager import PassError, PassManager
    if passes is None:
        return None
    try:
        return PassManager(passes, verify=verify, print_after_all=print_after_all,
                           stream=sys.stderr)
    except PassError as e:
        raise OptUsageError(str(e)) from None


def parsed_graph(text: str, name: str, input_types: Optional[str] = None):
    """The graph of `text`, linted and specialized to `--input-types`."""
    from irjit.compiler import parse_ir
    from irjit.compiler.passes.specialize_input_types import (InputTypeError, parse_input_types,
                                                              specialize_input_types)
    graph = parse_ir(text, name)
    lint_parsed(graph, name)
    if input_types is not None:
        try:
            specialize_input_types(graph, parse_input_types(input_types))
        except InputTypeError as e:
            raise OptUsageError(f"--input-types: {e}") from None
    return graph


def run_pipeline(manager, graph) -> None:
    from irjit.compiler.passes.manager import PassError
    if manager is not None:
        try:
            manager.run(graph)
        except PassError as e:
            raise OptUsageError(str(e)) from None


def prepared_graph(path: str, passes: Optional[str], input_types: Optional[str] = None,
                   verify: bool = False, print_after_all: bool = False):
    """The graph in `path` (or stdin), linted, specialized to `input_types` and rewritten by
    the `passes` pipeline, with the PassManager that ran it (None without passes)."""
    manager = pipeline_manager(passes, verify, print_after_all)
    text, name = read_source(path)
    graph = parsed_graph(text, name, input_types)
    run_pipeline(manager, graph)
    return graph, manager


def emit_native(graph, what: str) -> str:
    """The optimized LLVM IR or assembly of every native unit of the (partitioned) graph."""
    from irjit.compiler.codegen.cache import get_unit
    from irjit.compiler.codegen.partition import GROUP, native_partition
    if not any(n.kind == GROUP for n in graph.walk()):
        native_partition(graph)
    groups = [n for n in graph.walk() if n.kind == GROUP]
    if not groups:
        raise OptUsageError("no node of the graph lowers to native code (do its values have "
                            "complete types? pass --input-types)")
    parts = []
    for n in groups:
        unit, _ = get_unit(n.attr("Subgraph"))
        if unit is not None:
            text = unit.library.llvm_ir if what == "llvm" else unit.library.asm
            parts.append(f"; native unit {unit.name}: {n.outputs[0].name if n.outputs else ''}\n{text}")
    return "\n".join(parts)


def register(sub) -> None:
    sp = sub.add_parser("opt", help="run passes over a graph and print the result")
    sp.add_argument("file", nargs="?", help=".ir file ('-' for stdin)")
    sp.add_argument("--passes", help="comma-separated passes/pipelines, e.g. "
                    "'dce,cse,autodiff{node-threshold=1}'")
    sp.add_argument("--input-types", help="one type per graph input after %%self, e.g. "
                    "'Float(1, 3, 8, 8, requires_grad=1), int'")
    sp.add_argument("--verify", action="store_true", help="lint the graph after every pass")
    sp.add_argument("--print-after-all", action="store_true",
                    help="print the graph to stderr after every pass")
    sp.add_argument("--time-passes", action="store_true", help="print pass timings to stderr")
    sp.add_argument("--list", action="store_true", help="list the passes and pipelines")
    sp.add_argument("--emit", choices=("llvm", "asm"),
                    help="print the optimized LLVM IR or assembly of the graph's native units "
                         "(partitioning the typed graph after the passes)")
    sp.set_defaults(func=cmd_opt)
