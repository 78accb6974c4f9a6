"""irjit: read, run, rewrite and compile PyTorch's TorchScript IR without PyTorch."""

from pathlib import Path as _Path

# In a source checkout the layers live in sibling folders (compiler/, runtime/, ...), mapped
# under `irjit` by pyproject's package-dir; make the same names resolve without installing.
_root = _Path(__file__).resolve().parent.parent
if (_root / "pyproject.toml").is_file() and (_root / "compiler" / "__init__.py").is_file():
    __path__.append(str(_root))  # noqa: F821  (a package's __path__)
