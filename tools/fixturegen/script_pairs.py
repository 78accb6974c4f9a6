"""Write PyTorch 2.13's `torch.jit.script(f).graph` and `.code` for every function of
`script_cases.py` (a dev-only tool; irjit never imports torch; modules: model_pairs.py):

    IRJIT_CASES_TORCH=1 .venv-torch/bin/python tools/fixturegen/script_pairs.py tests/fixtures/script

Each case gives `<name>.graph.ir` and `<name>.code`; the cases file's path is normalised to
`/home/user/script_cases.py`."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
CASES_PATH = HERE / "script_cases.py"
NORM_PATH = "/home/user/script_cases.py"
NORM_SITE = "/usr/local/lib/python3.11/site-packages/"  # as tools/fixturegen/common.py writes it


def load_cases():
    """script_cases.py imported as the top-level module `script_cases` (so qualified names
    print as `__torch__.script_cases.f` in both frameworks)."""
    spec = importlib.util.spec_from_file_location("script_cases", CASES_PATH)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["script_cases"] = mod
    spec.loader.exec_module(mod)
    return mod


def main(out: Path) -> None:
    import torch
    assert os.environ.get("IRJIT_CASES_TORCH"), "set IRJIT_CASES_TORCH=1"
    torch.manual_seed(0)
    out.mkdir(parents=True, exist_ok=True)
    cases = load_cases()
    scripted = [(f.__name__, torch.jit.script(f)) for f in cases.CASES]
    site = os.path.dirname(os.path.dirname(os.path.abspath(torch.__file__))) + "/"

    def normalized(text: str) -> str:
        """Source paths as every fixture spells them (no machine's paths)."""
        return text.replace(str(CASES_PATH), NORM_PATH).replace(site, NORM_SITE)
    for name, s in scripted:
        graph = normalized(str(s.graph))
        (out / f"{name}.graph.ir").write_text(graph)
        (out / f"{name}.code").write_text(s.code)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
