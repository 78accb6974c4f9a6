"""pyproject lists every package folder under its `irjit.*` name, so an install misses none."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEV_ONLY = {"irjit.tools.fixturegen", "irjit.tools.dev"}  # need torch or are run from a checkout


def _config() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def test_every_package_folder_is_listed():
    config = _config()
    found = set()
    for package, folder in config["package-dir"].items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder).parts
            found.add(".".join((package,) + rel))
    assert found - DEV_ONLY - set(config["packages"]) == set()


def test_listed_packages_exist():
    config = _config()
    dirs = config["package-dir"]
    for package in config["packages"]:
        base = max((p for p in dirs if package == p or package.startswith(p + ".")), key=len)
        folder = ROOT / dirs[base] / Path(*package[len(base) + 1:].split(".")) \
            if package != base else ROOT / dirs[base]
        assert (folder / "__init__.py").is_file(), package
