"""Write `<name>.torch.ir` beside each hand-written `<name>.ir` of
tests/fixtures/torch_tests_style: what PyTorch 2.13 prints after `torch._C.parse_ir` reads it.

A dev-only tool (needs torch)::

    .venv-torch/bin/python -m irjit.tools.fixturegen.torch_tests_style tests/fixtures/torch_tests_style
"""

from __future__ import annotations

import sys
from pathlib import Path


def main(folder: str) -> int:
    import torch
    for path in sorted(Path(folder).glob("*.ir")):
        if path.name.endswith(".torch.ir"):
            continue
        graph = torch._C.parse_ir(path.read_text())
        path.with_suffix(".torch.ir").write_text(str(graph))
        print(f"{path.name}: {len(list(graph.nodes()))} nodes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
