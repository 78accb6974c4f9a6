"""Graph passes by name: run a pipeline string on a graph (`irjit.passes.run(graph,
"dce,cse,autodiff{node-threshold=1}")`) and list what there is."""

from __future__ import annotations

from irjit.compiler import passes as _registered  # noqa: F401  (imports and registers every pass)
from irjit.compiler.ir import Graph
from irjit.compiler.passes.manager import (PassError, PassManager, describe_passes,
                                           parse_pipeline)

__all__ = ["PassError", "PassManager", "describe_passes", "names", "parse_pipeline", "run"]


def run(graph: Graph, pipeline: str, verify: bool = False) -> bool:
    """Run `pipeline` on `graph` in place; whether it changed. Bad names or options raise
    PassError before any pass runs; `verify` lints the graph after each pass."""
    return PassManager(pipeline, verify=verify).run(graph)


def names() -> list[str]:
    """Every pass, pipeline and alias a pipeline string may use."""
    return [name for name, _, _ in describe_passes()]
