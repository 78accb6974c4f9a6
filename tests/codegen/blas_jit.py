"""A minimal JIT for the BLAS and convolution tests: build one function into an llvmlite module,
optimize it at O3 for the host and call it through ctypes on numpy arrays."""

from __future__ import annotations

import ctypes
from functools import lru_cache
from typing import Callable

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir

from irjit.compiler.codegen.ir_loops import I64

_ENGINES = []  # engines own the machine code; keep them alive


@lru_cache(maxsize=None)
def _target_machine() -> llvm.TargetMachine:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(cpu=llvm.get_host_cpu_name(),
                                        features=llvm.get_host_cpu_features().flatten(), opt=3)


def compile_function(build: Callable[[ir.IRBuilder, list], None], params: list[str]) -> Callable:
    """JIT `void f(params...)` whose body `build(builder, args)` emits (params: "f32*", "f64*",
    "i64*", "i64", "f32", "f64"); returns a Python callable taking numpy arrays and numbers."""
    types = {"f32*": ir.FloatType().as_pointer(), "f64*": ir.DoubleType().as_pointer(),
             "i64*": I64.as_pointer(), "i64": I64, "f32": ir.FloatType(), "f64": ir.DoubleType()}
    ctypes_of = {"i64": ctypes.c_int64, "f32": ctypes.c_float, "f64": ctypes.c_double}
    tm = _target_machine()
    module = ir.Module("test")
    module.triple, module.data_layout = tm.triple, str(tm.target_data)
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [types[p] for p in params]), "entry")
    builder = ir.IRBuilder(fn.append_basic_block())
    build(builder, list(fn.args))
    builder.ret_void()
    mod = llvm.parse_assembly(str(module))
    mod.verify()
    pto = llvm.create_pipeline_tuning_options(speed_level=3)
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(mod, pb)
    engine = llvm.create_mcjit_compiler(mod, tm)
    engine.finalize_object()
    _ENGINES.append(engine)
    cfunc = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p if p.endswith("*") else ctypes_of[p]
                                     for p in params])(engine.get_function_address("entry"))

    def call(*args):
        cfunc(*[a.ctypes.data if isinstance(a, np.ndarray) else a for a in args])
    call.llvm_ir = str(mod)
    return call
