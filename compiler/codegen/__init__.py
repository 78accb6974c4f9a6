"""Native code generation with llvmlite."""
