"""Pytest configuration: the repository root is on sys.path, so `import irjit` reads this checkout."""
