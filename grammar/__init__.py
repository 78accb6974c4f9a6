"""The Lark grammars irjit reads TorchScript IR with (shipped as package data)."""

from pathlib import Path

GRAMMAR_DIR = Path(__file__).resolve().parent


def grammar_text(name: str) -> str:
    """The text of `grammar/<name>.lark`."""
    return (GRAMMAR_DIR / f"{name}.lark").read_text()
