"""Graphviz pictures of graphs: `to_dot(graph)` gives DOT text (written with the `graphviz`
package, which quotes and escapes it), `render(dot_text, "out.svg")` lays it out with the
system's Graphviz `dot` (Debian: `apt-get install graphviz`).

Clusters follow `irjit.graph_picture`: scopes (grey, nested as the module hierarchy),
autodiff and fusion subgraphs (purple), native units (green), If/Loop nodes and their blocks
(blue). Every box and cluster carries an SVG id and classes naming its role and the clusters
around it, which `irjit.html_view` uses to fold scopes in a page.
"""

from __future__ import annotations

import html
import os
import shutil
import subprocess
from typing import Optional, Union

from irjit.compiler.ir import Graph

from .graph_picture import PCluster, Picture, PNode, picture

FONT = "Helvetica"
FORMATS = ("svg", "png", "pdf", "dot")
LARGE = 300  # boxes; larger pictures get cheaper layout settings

# Fill and border colours per cluster role; scopes alternate two greys by depth.
CLUSTER_STYLE = {
    "scope": ("#f5f5f5", "#9e9e9e", "rounded,filled"),
    "group": ("#f6eefa", "#7b1fa2", "rounded,filled,bold"),
    "native": ("#e6f4ea", "#188038", "rounded,filled,bold"),
    "control": ("#eef3fd", "#1a73e8", "rounded,filled,dashed"),
    "block": ("#ffffff", "#1a73e8", "rounded,dotted"),
}
NODE_STYLE = {  # shape, fill
    "op": ("box", "#ffffff"),
    "input": ("ellipse", "#e8f0fe"),
    "output": ("ellipse", "#e8f0fe"),
    "param": ("box", "#fff4d6"),
    "collapsed": ("box3d", "#e0e0e0"),
    "block_param": ("box", "#eef3fd"),
    "block_return": ("box", "#eef3fd"),
}


class DotNotFound(RuntimeError):
    """Graphviz's `dot` program is not installed."""


class DotFailed(RuntimeError):
    """`dot` ran and failed (its message says why)."""


def _html_label(node: PNode) -> str:
    """A Graphviz HTML-like label: the title in bold, details small and grey, one per line."""
    title = html.escape(node.title)
    lines = [f"<b>{title}</b>" if node.role in ("op", "collapsed") else title]
    lines += [f'<font point-size="8" color="#555555">{html.escape(d)}</font>'
              for d in _wrapped(node.details)]
    return "<" + "<br/>".join(lines) + ">"


def _wrapped(details: list[str], width: int = 40) -> list[str]:
    """Detail items joined by commas into lines of about `width` characters."""
    lines: list[str] = []
    for d in details:
        if d and lines and len(lines[-1]) + 2 + len(d) <= width:
            lines[-1] += ", " + d
        elif d:
            lines.append(d)
    return lines


def _tooltip(text: str) -> str:
    import graphviz
    return "\\n".join(graphviz.escape(line) for line in text.split("\n"))


def to_dot(source: Union[Graph, Picture], depth: Optional[int] = None, title: str = "",
           id_prefix: str = "", tooltips: bool = True, fold_constants: bool = True) -> str:
    """The DOT text of a graph's picture (see `irjit.graph_picture.picture` for `depth` and
    `fold_constants`). `id_prefix` keeps ids apart when several pictures share a page;
    `tooltips` puts each node's printed line, types, source and scope on hover in SVG."""
    import graphviz
    pic = source if isinstance(source, Picture) else picture(source, depth, fold_constants)
    boxes = sum(1 for _ in pic.root.all_nodes())
    # network simplex (x placement) dominates dot's time on big graphs; cap its iterations
    limits = {"nslimit": "2", "nslimit1": "2"} if boxes > LARGE else {}
    dot = graphviz.Digraph(name=f"{id_prefix}graph", graph_attr={
        "rankdir": "TB", "fontname": FONT, "fontsize": "11", "nodesep": "0.25",
        "ranksep": "0.35", "labeljust": "l", "newrank": "true", **limits,
        **({"label": graphviz.escape(title), "labelloc": "t"} if title else {})},
        node_attr={"fontname": FONT, "fontsize": "10", "style": "rounded,filled",
                   "color": "#5f6368", "height": "0.3", "margin": "0.08,0.03"},
        edge_attr={"fontname": FONT, "fontsize": "8", "color": "#5f6368",
                   "fontcolor": "#3c4043", "arrowsize": "0.6"})
    owner: dict[str, list[str]] = {}  # node id -> ids of the clusters around it

    def add_nodes(target, cluster: PCluster, around: list[str]) -> None:
        for node in cluster.nodes:
            owner[node.id] = around
            shape, fill = NODE_STYLE[node.role]
            attrs = {"id": id_prefix + node.id, "label": _html_label(node), "shape": shape,
                     "fillcolor": fill,
                     "class": " ".join(["irn", f"role-{node.role}"]
                                       + [f"in-{id_prefix}{c}" for c in around])}
            if node.role in ("block_param", "block_return"):
                attrs.update(fontsize="8", color="#1a73e8")
            if tooltips and node.info:
                attrs["tooltip"] = _tooltip(node.info)
            target.node(id_prefix + node.id, **attrs)
        for depth_index, child in enumerate(cluster.clusters):
            fill, border, style = CLUSTER_STYLE[child.role]
            if child.role == "scope" and len(child.scope_path) % 2 == 0:
                fill = "#ebebeb"
            attrs = {"id": id_prefix + child.id, "label": graphviz.escape(child.label),
                     "style": style, "fillcolor": fill, "color": border, "fontsize": "10",
                     "fontcolor": border if child.role != "scope" else "#424242",
                     "class": " ".join(["irc", f"role-{child.role}"]
                                       + [f"in-{id_prefix}{c}" for c in around])}
            if tooltips and child.info:
                attrs["tooltip"] = _tooltip(child.info)
            with target.subgraph(name=f"cluster_{id_prefix}{child.id}",
                                 graph_attr=attrs) as sub:
                add_nodes(sub, child, around + [child.id])

    add_nodes(dot, pic.root, [])
    for i, e in enumerate(pic.edges):
        shared = [c for c in owner.get(e.tail, []) if c in owner.get(e.head, [])]
        attrs = {"id": f"{id_prefix}e{i}",
                 "class": " ".join(["ire"] + [f"in-{id_prefix}{c}" for c in shared]
                                   + [f"to-{id_prefix}{c}" for c in owner.get(e.head, [])
                                      if c not in shared]
                                   + [f"from-{id_prefix}{c}" for c in owner.get(e.tail, [])
                                      if c not in shared])}
        if e.label:
            attrs["label"] = graphviz.escape(e.label)
        if e.style == "flow":
            attrs.update(style="dashed", color="#1a73e8", arrowhead="open")
        if tooltips and e.info:
            attrs["tooltip"] = _tooltip(e.info)
            attrs["labeltooltip"] = attrs["tooltip"]
        dot.edge(id_prefix + e.tail, id_prefix + e.head, **attrs)
    return dot.source


def dot_program() -> Optional[str]:
    """The path of Graphviz's `dot`, or None when it is not installed."""
    return shutil.which("dot")


def render(dot_text: str, fmt: str = "svg", timeout: Optional[float] = None) -> bytes:
    """Lay out DOT text with Graphviz's `dot` and return the picture (`svg`, `png`, `pdf`)."""
    if fmt not in FORMATS or fmt == "dot":
        raise ValueError(f"unknown picture format {fmt!r} (one of svg, png, pdf)")
    program = dot_program()
    if program is None:
        raise DotNotFound("Graphviz's `dot` is not installed (Debian/Ubuntu: apt-get install "
                          "graphviz; macOS: brew install graphviz)")
    try:
        done = subprocess.run([program, f"-T{fmt}"], input=dot_text.encode("utf-8"),
                              capture_output=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        boxes = dot_text.count(' class="irn ')
        raise DotFailed(f"Graphviz's dot did not finish laying out {boxes:,} boxes in "
                        f"{timeout:g} s (collapse scopes with --depth N, raise --timeout, or "
                        "write the DOT text with -o FILE.dot)") from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise DotFailed(f"dot failed: {message[-1] if message else f'exit {done.returncode}'}")
    return done.stdout


def write_picture(graph: Graph, path: Union[str, os.PathLike], depth: Optional[int] = None,
                  fmt: Optional[str] = None) -> str:
    """Write the picture of `graph` to `path` in the format its suffix names (`.svg`, `.png`,
    `.pdf`, `.dot`); the format written (DOT when Graphviz is missing and the suffix is
    `.dot`; otherwise DotNotFound)."""
    fmt = fmt or os.path.splitext(os.fspath(path))[1].lstrip(".").lower() or "dot"
    if fmt == "gv":
        fmt = "dot"
    text = to_dot(graph, depth)
    data = text.encode("utf-8") if fmt == "dot" else render(text, fmt)
    with open(path, "wb") as f:
        f.write(data)
    return fmt
