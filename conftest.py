"""Pytest configuration: the repository root is importable (compiler, runtime, tools, grammar)."""
