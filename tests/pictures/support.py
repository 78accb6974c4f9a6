"""What the picture tests share: external programs (Graphviz's `dot`, Chromium) that CI
installs — a test needing one is skipped on a machine without it, but fails under CI, where
.ci/run installs them — the structure Graphviz reads from our DOT, and the traced models."""

from __future__ import annotations

import importlib
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "tests" / "fixtures" / "seed"
MODELS = ROOT / "tests" / "fixtures" / "models"
LEGACY = ROOT / "tests" / "fixtures" / "legacy"


def require(program: str) -> str:
    """The path of `program`; skips the test without it, except under CI (CI=true), where
    .ci/run has installed it and its absence is a failure."""
    path = shutil.which(program)
    if path is None:
        if os.environ.get("CI"):
            pytest.fail(f"{program} is not installed, but .ci/run installs it")
        pytest.skip(f"{program} is not installed")
    return path


def require_module(name: str):
    """`import name`, skipped (or failed under CI) as `require` does."""
    try:
        return importlib.import_module(name)
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail(f"the Python package {name} is missing, but the test extra installs it")
        pytest.skip(f"the Python package {name} is not installed")


def _title(label: str) -> str:
    """A node's first line, without HTML tags: its op, input or parameter name."""
    first = re.split(r"<br/>|\\n", label, maxsplit=1)[0]
    return re.sub(r"<[^>]+>", "", first).replace("&amp;", "&").replace("&lt;", "<") \
        .replace("&gt;", ">")


class DotStructure:
    """Clusters, boxes and arrows as Graphviz itself reads them (`dot -Tjson`)."""

    def __init__(self, dot_text: str):
        out = subprocess.run([require("dot"), "-Tjson"], input=dot_text.encode(),
                             capture_output=True, check=True).stdout
        d = json.loads(out)
        objects = d.get("objects", [])
        self.nodes = {o["_gvid"]: o for o in objects
                      if not o.get("name", "").startswith("cluster")}
        self.clusters = {o["_gvid"]: o for o in objects if o.get("name", "").startswith("cluster")}
        self.edges = [(self.title(e["tail"]), self.title(e["head"]), e.get("label", ""))
                      for e in d.get("edges", [])]

    def title(self, gvid: int) -> str:
        return _title(self.nodes[gvid].get("label", ""))

    def cluster(self, label: str) -> dict:
        found = [c for c in self.clusters.values() if c.get("label") == label]
        assert len(found) == 1, f"{len(found)} clusters labelled {label!r}: " \
            f"{sorted(c.get('label') for c in self.clusters.values())}"
        return found[0]

    def cluster_labels(self) -> list[str]:
        return sorted(c.get("label", "") for c in self.clusters.values())

    def members(self, label: str) -> list[str]:
        """Titles of the boxes inside a cluster (nested clusters' boxes included)."""
        return sorted(self.title(i) for i in self.cluster(label).get("nodes", []))

    def children(self, label: str) -> list[str]:
        """Labels of the clusters directly inside a cluster."""
        return sorted(self.clusters[i].get("label", "") for i in
                      self.cluster(label).get("subgraphs", []))

    def titles(self) -> list[str]:
        return sorted(self.title(i) for i in self.nodes)

    def has_edge(self, tail: str, head: str, label: str | None = None) -> bool:
        return any(t == tail and h == head and (label is None or lab == label)
                   for t, h, lab in self.edges)


def traced_fixture(name: str) -> str:
    """The inlined graph PyTorch 2.13 traced for one of tests/fixtures/models' models."""
    return (MODELS / name / "trace.inlined.ir").read_text()


def nested_traced_model():
    """A model traced by irjit.jit.trace with scopes three levels deep:
    layer1 (Sequential) > layer1.0 (Block) > layer1.0.fc1 (Linear)."""
    import irjit
    import irjit.jit
    from irjit import nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(8, 16)
            self.act = nn.Tanh()
            self.fc2 = nn.Linear(16, 8)

        def forward(self, x):
            return self.fc2(self.act(self.fc1(x))) + x

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.layer1 = nn.Sequential(Block(), Block())
            self.head = nn.Linear(8, 2)

        def forward(self, x):
            return irjit.sigmoid(self.head(self.layer1(x)))

    irjit.manual_seed(0)
    return irjit.jit.trace(Net(), (irjit.rand(4, 8),))
