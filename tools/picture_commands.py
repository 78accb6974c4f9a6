"""`irtool dot` and `irtool view`: pictures of a graph (Graphviz DOT, SVG, PNG, PDF) and a
self-contained HTML page showing it before and after a pipeline."""

from __future__ import annotations

import math
import os
import sys

from .opt_command import parsed_graph, pipeline_manager, run_pipeline
from .sources import UsageError, check_output_path, read_source, write_atomically

PICTURE_SUFFIXES = {".svg": "svg", ".png": "png", ".pdf": "pdf", ".dot": "dot", ".gv": "dot"}
INSTALL_HINT = "install Graphviz: apt-get install graphviz (Debian/Ubuntu), brew install graphviz"


class PictureUsageError(UsageError):
    """Bad options or files for `irtool dot` / `irtool view`."""


def _check_options(args) -> None:
    if args.depth is not None and args.depth < 0:
        raise PictureUsageError(f"--depth must not be negative (got {args.depth})")
    if not (args.timeout > 0 and math.isfinite(args.timeout)):
        raise PictureUsageError(f"--timeout must be a positive number of seconds (got "
                                f"{args.timeout:g})")


def _render(dot_text: str, fmt: str, timeout: float) -> bytes:
    """`dot -T<fmt>`, with Graphviz's failures as one-line errors."""
    from irjit.graph_dot import DotFailed, DotNotFound, render
    from .progress import activity
    try:
        with activity(f"laying out with Graphviz ({fmt})"):
            return render(dot_text, fmt, timeout=timeout)
    except (DotFailed, DotNotFound) as e:
        raise PictureUsageError(str(e)) from None


def cmd_dot(args) -> int:
    from irjit.graph_dot import dot_program, to_dot
    _check_options(args)
    fmt = "dot"
    if args.output is not None:
        suffix = os.path.splitext(args.output)[1].lower()
        fmt = PICTURE_SUFFIXES.get(suffix)
        if fmt is None:
            raise PictureUsageError(f"-o {args.output}: unknown picture format {suffix or '(none)'!r}"
                                    " (name the file .svg, .png, .pdf or .dot)")
        check_output_path(args.output)
    manager = pipeline_manager(args.passes, args.verify)
    text, name = read_source(args.file)
    graph = parsed_graph(text, name, args.input_types)
    run_pipeline(manager, graph)
    title = os.path.basename(name) + (f"  (after {args.passes})" if args.passes else "")
    dot_text = to_dot(graph, args.depth, title=title, fold_constants=not args.draw_constants)
    if args.output is None:
        sys.stdout.write(dot_text)
        return 0
    path = args.output
    if fmt != "dot" and dot_program() is None:
        path = os.path.splitext(args.output)[0] + ".dot"
        check_output_path(path)
        print(f"irtool: warning: Graphviz's `dot` is not installed, so {args.output} was not "
              f"drawn; wrote the DOT text to {path} instead ({INSTALL_HINT}; then: dot -T{fmt} "
              f"{path} -o {args.output})", file=sys.stderr)
        fmt = "dot"
    data = dot_text.encode("utf-8") if fmt == "dot" else _render(dot_text, fmt, args.timeout)
    write_atomically(path, lambda f: f.write(data))
    return 0


def cmd_view(args) -> int:
    from irjit.graph_dot import DotFailed, dot_program
    from irjit.html_view import Pane, to_html
    _check_options(args)
    if not args.output.lower().endswith((".html", ".htm")):
        raise PictureUsageError(f"-o {args.output}: the page is HTML; name it .html")
    check_output_path(args.output)
    if dot_program() is None:
        raise PictureUsageError(f"view lays the graphs out with Graphviz's `dot`, which is not "
                                f"installed ({INSTALL_HINT}); `irtool dot` writes DOT text "
                                "without it")
    manager = pipeline_manager(args.passes, args.verify)
    text, name = read_source(args.file)
    before = parsed_graph(text, name, args.input_types)
    panes = [Pane("before" if args.passes else os.path.basename(name), before)]
    if args.passes:
        after = parsed_graph(text, name, args.input_types)
        run_pipeline(manager, after)
        panes.append(Pane(f"after {args.passes}", after))
    from .progress import activity
    try:
        with activity("laying out with Graphviz (svg)"):
            page = to_html(panes, title=os.path.basename(name), depth=args.depth,
                           timeout=args.timeout)
    except DotFailed as e:
        raise PictureUsageError(str(e)) from None
    write_atomically(args.output, lambda f: f.write(page.encode("utf-8")))
    return 0


def _common(sp) -> None:
    sp.add_argument("file", help=".ir file ('-' for stdin)")
    sp.add_argument("--passes", help="run this pipeline first, e.g. "
                    "'autodiff{node-threshold=1}' or 'propagate_input_shapes,native_partition'")
    sp.add_argument("--input-types", help="one type per graph input after %%self, e.g. "
                    "'Float(1, 3, 8, 8, requires_grad=1)'")
    sp.add_argument("--depth", type=int, help="collapse scopes nested deeper than N levels "
                    "into one box each (0: each top-level module is one box)")
    sp.add_argument("--verify", action="store_true", help="lint the graph after every pass")
    sp.add_argument("--timeout", type=float, default=120.0,
                    help="give up on a Graphviz layout after this many seconds (120)")


def register(sub) -> None:
    sp = sub.add_parser("dot", help="draw a graph with Graphviz (DOT, SVG, PNG or PDF)")
    _common(sp)
    sp.add_argument("-o", "--output", help="write here; the suffix picks the format: .svg, "
                    ".png, .pdf (drawn by Graphviz's dot) or .dot (default: DOT to stdout)")
    sp.add_argument("--draw-constants", action="store_true",
                    help="draw constants and GetAttr chains as boxes instead of writing "
                         "constant arguments into the boxes that read them")
    sp.set_defaults(func=cmd_dot)

    sp = sub.add_parser("view", help="write an HTML page showing a graph before and after "
                                     "a pipeline")
    _common(sp)
    sp.add_argument("-o", "--output", required=True, help="the .html page to write")
    sp.set_defaults(func=cmd_view)
