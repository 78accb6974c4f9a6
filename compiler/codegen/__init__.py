"""Native code generation: partition specialized graphs into native units, lower each to a
kernel (loop nest over buffers with views and broadcasts as index arithmetic), emit LLVM IR
with llvmlite and JIT it behind guarded entries (see README, Architecture)."""
