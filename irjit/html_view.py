"""One self-contained HTML page showing graphs side by side (typically before and after a
pipeline): each laid out by Graphviz as inline SVG, scopes and subgraphs foldable by a click,
each node's printed line, types, source location and scope on hover, native units
highlighted, and nodes made from the same source line lit up in every pane together.

The page fetches nothing: styles, script and pictures are inline, and its Content Security
Policy forbids any request.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass
from typing import Optional, Sequence, Union

from irjit.compiler.ir import Graph

from .graph_dot import render, to_dot
from .graph_picture import Picture, picture

_SVG_PREAMBLE = re.compile(r"\A.*?(?=<svg\b)", re.S)
_SVG_TITLE = re.compile(r"<title>.*?</title>\n?", re.S)
_SVG_COMMENT = re.compile(r"<!--.*?-->\n?", re.S)


@dataclass
class Pane:
    """One graph of the page, under a heading (`before`, `after autodiff`)."""
    heading: str
    graph: Graph


def pane_data(pic: Picture, prefix: str) -> dict:
    """What the script shows on hover and counts, by SVG id."""
    items: dict[str, dict] = {}
    for cluster in pic.root.walk():
        if cluster.role == "root":
            continue
        size = sum(1 for n in cluster.all_nodes() if n.role in ("op", "collapsed"))
        items[prefix + cluster.id] = {"kind": cluster.role, "title": cluster.label,
                                      "info": cluster.info, "size": size}
    for node in pic.root.all_nodes():
        items[prefix + node.id] = {"kind": node.role, "title": node.title, "info": node.info,
                                   "source": node.source, "scope": node.scope}
    for i, e in enumerate(pic.edges):
        if e.info:
            items[f"{prefix}e{i}"] = {"kind": "edge", "title": e.label, "info": e.info}
    return items


def summary(pic: Picture) -> str:
    """`12 nodes · 2 native units (5 nodes) · 1 DifferentiableGraph` for a pane's header."""
    ops = sum(1 for n in pic.root.all_nodes() if n.role == "op")
    parts = [f"{ops} node{'s' if ops != 1 else ''}"]
    native = [c for c in pic.root.walk() if c.role == "native"]
    if native:
        inside = sum(1 for c in native for n in c.all_nodes() if n.role == "op")
        parts.append(f"{len(native)} native unit{'s' if len(native) != 1 else ''} "
                     f"({inside} nodes)")
    groups: dict[str, int] = {}
    for c in pic.root.walk():
        if c.role == "group":
            kind = c.label.rsplit("_", 1)[0].replace("prim::", "")
            groups[kind] = groups.get(kind, 0) + 1
    parts += [f"{k} {name}{'s' if k != 1 else ''}" for name, k in sorted(groups.items())]
    return " · ".join(parts)


def inline_svg(dot_text: str, timeout: Optional[float] = None) -> str:
    """Graphviz's SVG without its XML preamble, comments and `<title>`s (the page shows its
    own tooltips), ready to sit inside HTML."""
    svg = render(dot_text, "svg", timeout=timeout).decode("utf-8")
    svg = _SVG_PREAMBLE.sub("", svg, count=1)
    svg = _SVG_COMMENT.sub("", svg)
    return _SVG_TITLE.sub("", svg)


def to_html(panes: Sequence[Union[Pane, tuple[str, Graph], Graph]], title: str = "graph",
            depth: Optional[int] = None, timeout: Optional[float] = None) -> str:
    """The page for `panes` (each a Pane, a `(heading, graph)` pair or a graph), side by
    side, laid out with Graphviz's `dot` (DotNotFound without it); `depth` collapses deeper
    scopes before layout, as in `irjit.graph_dot.to_dot`; `timeout` bounds each layout."""
    sections, data = [], {}
    for i, pane in enumerate(panes):
        if isinstance(pane, Graph):
            pane = Pane(f"graph {i}", pane)
        elif not isinstance(pane, Pane):
            pane = Pane(*pane)
        prefix = "ab"[i] + "-" if i < 2 else f"p{i}-"
        pic = picture(pane.graph, depth)
        svg = inline_svg(to_dot(pic, id_prefix=prefix, tooltips=False), timeout)
        data.update(pane_data(pic, prefix))
        sections.append(
            f'<section class="pane" id="pane-{prefix[:-1]}" data-prefix="{prefix}">\n'
            f'<div class="bar"><h2>{html.escape(pane.heading)}</h2>'
            f'<span class="sum">{html.escape(summary(pic))}</span>'
            '<span class="tools"><button data-act="fold">fold all</button>'
            '<button data-act="unfold">unfold all</button>'
            '<button data-act="out" title="zoom out">−</button>'
            '<button data-act="fit" title="fit the width">fit</button>'
            '<button data-act="in" title="zoom in">+</button></span></div>\n'
            f'<div class="canvas">{svg}</div>\n</section>')
    payload = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
    return _PAGE.format(title=html.escape(title), panes="\n".join(sections),
                        columns=len(panes), data=payload, script=_SCRIPT, style=_STYLE)


_STYLE = """
* { box-sizing: border-box; }
body { margin: 0; font: 13px/1.4 Helvetica, Arial, sans-serif; color: #202124; }
header { padding: 6px 12px; border-bottom: 1px solid #dadce0; display: flex; gap: 16px;
  align-items: baseline; flex-wrap: wrap; }
header h1 { font-size: 16px; margin: 0; }
.legend span { display: inline-block; padding: 0 6px; margin-right: 4px; border-radius: 4px;
  border: 1px solid; font-size: 12px; }
main { display: grid; gap: 8px; padding: 8px; height: calc(100vh - 40px); }
.pane { display: flex; flex-direction: column; min-width: 0; border: 1px solid #dadce0;
  border-radius: 6px; }
.bar { display: flex; gap: 10px; align-items: baseline; padding: 4px 8px;
  border-bottom: 1px solid #dadce0; flex-wrap: wrap; }
.bar h2 { font-size: 14px; margin: 0; }
.sum { color: #5f6368; font-size: 12px; }
.tools { margin-left: auto; }
.tools button { font-size: 12px; margin-left: 2px; }
.canvas { overflow: auto; flex: 1; }
.canvas svg { display: block; }
g.irc > text:first-of-type { cursor: pointer; }
g.irc.folded > path, g.irc.folded > polygon { fill: #dadce0 !important; }
g.irc text.fold-note { font-size: 11px; fill: #3c4043; }
.hidden { display: none; }
g.irn.linked > path, g.irn.linked > polygon, g.irn.linked > ellipse {
  stroke: #e37400; stroke-width: 3px; }
#tip { position: fixed; z-index: 10; max-width: 640px; padding: 6px 8px; background: #202124;
  color: #fff; border-radius: 4px; font: 12px/1.35 Menlo, Consolas, monospace;
  white-space: pre-wrap; pointer-events: none; }
"""

_SCRIPT = r"""
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("irjit-data").textContent);
  const tip = document.getElementById("tip");
  const folded = new Set();

  function ancestors(el) {
    return Array.from(el.classList).filter(c => c.startsWith("in-")).map(c => c.slice(3));
  }

  function refresh(svg) {
    svg.querySelectorAll("g.irn, g.ire, g.irc").forEach(el => {
      el.classList.toggle("hidden", ancestors(el).some(id => folded.has(id)));
    });
    svg.querySelectorAll("g.irc").forEach(el => {
      const isFolded = folded.has(el.id);
      el.classList.toggle("folded", isFolded);
      const label = el.querySelector("text");
      if (label) {
        label.textContent = (isFolded ? "\u25b8 " : "\u25be ") + label.dataset.name;
      }
      let note = el.querySelector("text.fold-note");
      if (isFolded && !note) {
        const box = (el.querySelector("path, polygon")).getBBox();
        note = document.createElementNS("http://www.w3.org/2000/svg", "text");
        note.setAttribute("class", "fold-note");
        note.setAttribute("x", box.x + box.width / 2);
        note.setAttribute("y", box.y + box.height / 2);
        note.setAttribute("text-anchor", "middle");
        const info = data[el.id] || {};
        note.textContent = "folded: " + (info.size || 0) + " nodes (click the label to unfold)";
        el.appendChild(note);
      } else if (!isFolded && note) {
        note.remove();
      }
    });
  }

  function toggle(cluster) {
    if (folded.has(cluster.id)) folded.delete(cluster.id); else folded.add(cluster.id);
    refresh(cluster.ownerSVGElement);
  }

  function show(ev, el) {
    const info = data[el.id];
    if (!info || !info.info) return;
    tip.textContent = info.info;
    tip.hidden = false;
    move(ev);
  }

  function move(ev) {
    const pad = 14, w = tip.offsetWidth, h = tip.offsetHeight;
    let x = ev.clientX + pad, y = ev.clientY + pad;
    if (x + w > window.innerWidth) x = Math.max(0, ev.clientX - w - pad);
    if (y + h > window.innerHeight) y = Math.max(0, ev.clientY - h - pad);
    tip.style.left = x + "px";
    tip.style.top = y + "px";
  }

  function link(el, on) {
    const info = data[el.id];
    if (!info || !info.source) return;
    document.querySelectorAll("g.irn").forEach(other => {
      const o = data[other.id];
      if (o && o.source === info.source) other.classList.toggle("linked", on);
    });
  }

  function zoom(pane, how) {
    const svg = pane.querySelector("svg");
    const canvas = pane.querySelector(".canvas");
    if (!svg.dataset.width) {
      svg.dataset.width = parseFloat(svg.getAttribute("width"));
      svg.dataset.height = parseFloat(svg.getAttribute("height"));
      svg.dataset.scale = "1";
    }
    let scale = parseFloat(svg.dataset.scale);
    if (how === "in") scale *= 1.25;
    else if (how === "out") scale /= 1.25;
    else scale = Math.min(1, (canvas.clientWidth - 4) / (svg.dataset.width * 4 / 3));
    svg.dataset.scale = String(scale);
    svg.setAttribute("width", (svg.dataset.width * scale) + "pt");
    svg.setAttribute("height", (svg.dataset.height * scale) + "pt");
  }

  document.querySelectorAll("section.pane").forEach(pane => {
    const svg = pane.querySelector("svg");
    svg.querySelectorAll("g.irc").forEach(cluster => {
      const label = cluster.querySelector("text");
      if (!label) return;
      label.dataset.name = label.textContent;
      label.textContent = "\u25be " + label.dataset.name;
      label.addEventListener("click", ev => { ev.stopPropagation(); toggle(cluster); });
    });
    svg.querySelectorAll("g.irn, g.ire, g.irc").forEach(el => {
      el.addEventListener("mouseenter", ev => { show(ev, el); link(el, true); });
      el.addEventListener("mousemove", move);
      el.addEventListener("mouseleave", () => { tip.hidden = true; link(el, false); });
    });
    pane.querySelectorAll(".tools button").forEach(button => {
      button.addEventListener("click", () => {
        const act = button.dataset.act;
        if (act === "fold" || act === "unfold") {
          svg.querySelectorAll("g.irc").forEach(c => {
            if (act === "fold" && !ancestors(c).length) folded.add(c.id);
            if (act === "unfold") folded.delete(c.id);
          });
          refresh(svg);
        } else {
          zoom(pane, act);
        }
      });
    });
    zoom(pane, "fit");
  });
  document.body.dataset.ready = "1";
})();
"""

_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<title>irjit: {title}</title>
<style>{style}</style>
</head>
<body>
<header><h1>{title}</h1>
<span class="legend"><span style="background:#f5f5f5;border-color:#9e9e9e">scope</span><span style="background:#e6f4ea;border-color:#188038">native unit</span><span style="background:#f6eefa;border-color:#7b1fa2">autodiff / fusion subgraph</span><span style="background:#eef3fd;border-color:#1a73e8">If / Loop</span><span style="background:#fff4d6;border-color:#5f6368">parameter</span></span>
<span class="sum">click a cluster's label to fold it; hover a node for its line, types and source</span>
</header>
<main style="grid-template-columns: repeat({columns}, minmax(0, 1fr))">
{panes}
</main>
<div id="tip" role="tooltip" hidden></div>
<script type="application/json" id="irjit-data">{data}</script>
<script>{script}</script>
</body>
</html>
"""
