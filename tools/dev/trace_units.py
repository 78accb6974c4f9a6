"""Where a fresh process's native unit time goes, as a call tree: runs one bench workload (as
`bench_native --process-report` does: forward, then forward+backward, five times) with the
code generator's set-up and compile steps wrapped, and prints, per unit the cache makes, each
wrapped step's wall and CPU ms and page faults (minor/major), nested as they were called.
Steps outside a unit (before the first) are listed under "(before the first unit)".

    IRJIT_CACHE_DIR=... python -m irjit.tools.dev.trace_units NAME... [--units N] [--threads] [--from K]

Run it twice with the same cache directory to see a cold and a cached process; `--units N`
prints the first N units (default 2); `--threads` also prints steps other threads ran (the
pool's compile), marked with their thread's name."""

from __future__ import annotations

import argparse
import resource
import sys
import threading
import time

# (module, attribute) of the steps to time; a class attribute as "Class.method"
STEPS = [
    ("irjit.compiler.codegen.cache", "unit_key"),
    ("irjit.compiler.codegen.cache", "disk_key"),
    ("irjit.compiler.codegen.cache", "tensor_unit"),
    ("irjit.compiler.codegen.cache", "ScalarProgramUnit"),
    ("irjit.compiler.codegen.unit", "lower_group"),
    ("irjit.compiler.codegen.unit", "load_library"),
    ("irjit.compiler.codegen.unit", "_register_symbols"),
    ("irjit.compiler.codegen.unit", "entries_text"),
    ("irjit.compiler.codegen.unit", "emit_kernel_on_threads"),
    ("irjit.compiler.codegen.unit", "emit_product"),
    ("irjit.compiler.codegen.unit", "builtin_function"),
    ("irjit.compiler.codegen.unit", "new_module"),
    ("irjit.compiler.codegen.unit", "NativeUnit._plan_calls"),
    ("irjit.compiler.codegen.unit", "NativeUnit._read_metadata"),
    ("irjit.compiler.codegen.library", "_target_machine"),
    ("irjit.compiler.codegen.library", "_host"),
    ("irjit.compiler.codegen.library", "_engine"),
    ("irjit.compiler.codegen.library", "disk_cache"),
    ("irjit.compiler.codegen.library", "optimize"),
    ("irjit.compiler.codegen.library", "_empty_module"),
    ("irjit.compiler.codegen.library", "_linked_from_disk"),
    ("irjit.compiler.codegen.library", "load_remembered"),
    ("irjit.compiler.codegen.library", "CodeLibrary.finalize"),
    ("irjit.compiler.codegen.library", "CodeLibrary._link"),
    ("irjit.compiler.codegen.disk_cache", "DiskCache.load"),
    ("irjit.compiler.codegen.disk_cache", "DiskCache.load_with_metadata"),
    ("irjit.compiler.codegen.disk_cache", "DiskCache.store"),
    ("irjit.compiler.codegen.thread_pool", "start"),
    ("irjit.compiler.codegen.thread_pool", "register_symbols"),
    ("irjit.compiler.codegen.thread_pool", "_libc_symbols"),
    ("irjit.compiler.codegen.thread_pool", "_compile"),
    ("irjit.compiler.codegen.blas_library", "default_library"),
    ("irjit.compiler.codegen.blas", "register_symbols"),
    ("irjit.compiler.codegen.entry", "register_symbols"),
    ("llvmlite.binding", "parse_assembly"),
    ("llvmlite.binding", "initialize_native_target"),
    ("llvmlite.binding", "initialize_native_asmprinter"),
    ("llvmlite.binding", "get_host_cpu_name"),
    ("llvmlite.binding", "get_host_cpu_features"),
    ("llvmlite.binding", "create_mcjit_compiler"),
    ("llvmlite.binding", "add_symbol"),
    ("llvmlite.binding", "create_context"),
    ("llvmlite.binding", "TargetMachine.emit_object"),
    ("llvmlite.binding", "ModuleRef.verify"),
]

_local = threading.local()
_records: list[tuple] = []  # (unit index, thread name, depth, step, wall ms, cpu ms, minflt, majflt)
_unit = [-1]


def _faults() -> tuple[int, int]:
    r = resource.getrusage(resource.RUSAGE_THREAD)
    return r.ru_minflt, r.ru_majflt


def _wrap(label: str, fn):
    if getattr(fn, "_traced", False):
        return fn

    def traced(*a, **k):
        depth = getattr(_local, "depth", 0)
        if depth == 0 and label in ("cache.tensor_unit", "cache.ScalarProgramUnit") \
                and threading.current_thread() is threading.main_thread():
            _unit[0] += 1
        slot = len(_records)
        _records.append(None)
        _local.depth = depth + 1
        w, c, (mi, ma) = time.perf_counter(), time.thread_time(), _faults()
        try:
            return fn(*a, **k)
        finally:
            mi2, ma2 = _faults()
            _records[slot] = (_unit[0], threading.current_thread().name, depth, label,
                              (time.perf_counter() - w) * 1e3, (time.thread_time() - c) * 1e3,
                              mi2 - mi, ma2 - ma)
            _local.depth = depth
    traced._traced = True
    return traced


def install() -> None:
    import importlib
    for module_name, attr in STEPS:
        module = importlib.import_module(module_name)
        label = f"{module_name.rsplit('.', 1)[-1]}.{attr}"
        if "." in attr:
            cls_name, meth = attr.split(".")
            cls = getattr(module, cls_name)
            setattr(cls, meth, _wrap(label, getattr(cls, meth)))
            continue
        original = getattr(module, attr)
        traced = _wrap(label, original)
        # every irjit module that imported it by name
        for other in list(sys.modules.values()):
            if getattr(other, "__name__", "").startswith(("irjit", "llvmlite")) and \
                    getattr(other, attr, None) is original:
                setattr(other, attr, traced)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m irjit.tools.dev.trace_units")
    ap.add_argument("names", nargs="+", help="workloads, run in turn in this process")
    ap.add_argument("--units", type=int, default=2)
    ap.add_argument("--from", dest="skip", type=int, default=0, help="print from unit K on")
    ap.add_argument("--threads", action="store_true")
    args = ap.parse_args(argv)
    start = time.perf_counter()
    import irjit  # noqa: F401
    import irjit.runtime.native  # noqa: F401
    import irjit.compiler.codegen.unit  # noqa: F401
    import irjit.compiler.codegen.blas  # noqa: F401
    imported = (time.perf_counter() - start) * 1e3
    install()
    from irjit.tools.bench_workloads import load_workload
    first = time.perf_counter()
    for name in args.names:
        workload = load_workload(name)
        inputs = workload.inputs()
        infer, train = (irjit.load(workload.ir_path, executor="profiling", backend="native") for _ in range(2))
        for _ in range(5):
            infer.run(*inputs, requires_grad=False)
            train.run(*inputs, requires_grad=list(workload.requires_grad))
            train.backward()
    print(f"{' '.join(args.names)}: irjit imported in {imported:.1f} ms; five calls each "
          f"{(time.perf_counter() - first) * 1e3:.1f} ms")
    print(f"  {'step':48} {'wall':>7} {'cpu':>7} {'minflt':>7} {'majflt':>6}")
    shown = -2
    for unit, thread, depth, label, wall, cpu, mi, ma in _records:
        if unit >= args.skip + args.units:
            break
        if 0 <= unit < args.skip:
            continue
        if thread != "MainThread" and not args.threads:
            continue
        if unit != shown:
            shown = unit
            print("  (before the first unit)" if unit < 0 else f"  unit {unit}:")
        tag = "" if thread == "MainThread" else f" [{thread}]"
        print(f"  {'  ' * depth + label + tag:48} {wall:7.2f} {cpu:7.2f} {mi:7d} {ma:6d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
