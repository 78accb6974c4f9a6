"""One code library per compiled unit, as numba's `CodeLibrary`: it owns an LLVM module,
is finalized once (verify, optimize for the host CPU, compile to object code, link into the
one MCJIT engine; or link object code from the disk cache) and hands out function addresses;
its optimized LLVM IR and assembly are kept for dumps, the CPU time of each step in `phases`."""

from __future__ import annotations

import ctypes
import os
import threading
import time
from functools import lru_cache
from typing import Callable, Optional

import llvmlite.binding as llvm
from llvmlite import ir

from .disk_cache import DiskCache, cache_root

_LOCK = threading.RLock()


@lru_cache(maxsize=None)
def _host() -> tuple[str, str]:
    """The host CPU's name and features (asked once: each call costs ~0.3 ms)."""
    return llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten()


def target_machine(opt: int = 3) -> llvm.TargetMachine:
    """The host's target machine: its CPU name and every feature it has (AVX2/AVX-512); `opt`
    is code generation's optimization level (0: fast instruction selection and register
    allocation, for code whose speed does not matter). One per level and process (keyed by the
    level alone: `target_machine()` and `target_machine(3)` are the same machine)."""
    return _target_machine(opt)


@lru_cache(maxsize=None)
def _target_machine(opt: int) -> llvm.TargetMachine:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    target = llvm.Target.from_default_triple()
    cpu, features = _host()
    return target.create_target_machine(cpu=cpu, features=features, opt=opt, codemodel="jitdefault")


# symbol -> what makes it resolvable, called before a module that declares it is linked (the
# thread pool's entry, which `thread_pool.start` may still be compiling on another thread)
_BEFORE_LINKING: dict[str, Callable[[], None]] = {}


def before_linking(symbol: str, make: Callable[[], None]) -> None:
    """Call `make()` before linking any module that declares `symbol` (and does not define it)."""
    _BEFORE_LINKING[symbol] = make


# symbol -> what begins making it, called as a module that declares it starts optimizing
_WHILE_OPTIMIZING: dict[str, Callable[[], None]] = {}


def while_optimizing(symbol: str, begin: Callable[[], None]) -> None:
    """Call `begin()` when a module that declares `symbol` starts its optimization pipeline,
    its longest LLVM call, which releases the GIL: work for `symbol` on another thread (the
    pool's compile) then runs its Python meanwhile instead of making this thread wait for the
    GIL (~5 ms at a time, the interpreter's switch interval)."""
    _WHILE_OPTIMIZING[symbol] = begin


# object code handed to MCJIT, by module name, while a library is linked
_OBJECTS_IN: dict[str, bytes] = {}
_BACKING = "irjit_engine_backing"  # the engine's own empty module: never a library's name


@lru_cache(maxsize=None)
def _engine() -> llvm.ExecutionEngine:
    """The one MCJIT engine every library is linked into. Libraries bring their object code
    (compiled by `target_machine().emit_object`, or read from disk): its object cache hook hands
    MCJIT that code, so MCJIT only links. Its own empty module, compiled at the first link
    (~1.3 ms of a process's first unit), is kept in the disk cache too."""
    tm = target_machine()
    backing = llvm.parse_assembly("")
    backing.name = _BACKING
    backing.triple = tm.triple
    cache = disk_cache()
    digest = cache.digest(f"{_BACKING}|{tm.triple}") if cache is not None else None
    stored = cache.load(digest) if cache is not None else None
    if stored is not None:
        _OBJECTS_IN[_BACKING] = stored[0]

    def compiled(mod: llvm.ModuleRef, obj: bytes) -> None:  # only the backing module ever is
        if mod.name == _BACKING and cache is not None:
            cache.store(digest, obj, "")
    engine = llvm.create_mcjit_compiler(backing, tm)
    engine.set_object_cache(compiled, lambda mod: _OBJECTS_IN.pop(mod.name, None))
    return engine


@lru_cache(maxsize=None)
def disk_cache() -> Optional[DiskCache]:
    root = cache_root()
    return DiskCache(root, host_key()) if root is not None else None


def host_key() -> str:
    """What object code depends on besides the IR: CPU, features and llvmlite version."""
    import llvmlite
    cpu, features = _host()
    return f"{cpu}|{features}|{llvmlite.__version__}"


def optimize(mod: llvm.ModuleRef) -> None:
    """The optimization pipeline: O3 with loop and SLP vectorization for the host CPU, without
    loop unrolling but for loops marked `llvm.loop.unroll.full` (innermost kernel loops of a
    few iterations, emit.UNROLL_MAX_TRIP). Unrolling fully unrolled short inner loops (16
    columns, 3x3 kernel taps) before the loop vectorizer saw them, which made element-wise and
    depthwise kernels 2-8x slower and multiplied the vectorizer's work (units took up to 260 ms
    to optimize); the vectorizer still interleaves vector loops (`python -m
    irjit.tools.bench_compile`)."""
    pto = llvm.create_pipeline_tuning_options(speed_level=3)
    pto.loop_vectorization = True
    pto.slp_vectorization = True
    pto.loop_unrolling = False
    pb = llvm.create_pass_builder(target_machine(), pto)
    pb.getModulePassManager().run(mod, pb)


def new_module(name: str) -> ir.Module:
    """An empty llvmlite module for the host triple and data layout."""
    module = ir.Module(name=name)
    module.triple, module.data_layout = host_layout()
    return module


@lru_cache(maxsize=None)
def host_layout() -> tuple[str, str]:
    """The host's target triple and data layout (asked of LLVM once: a thread compiling apart
    makes no call that waits for llvmlite's lock)."""
    tm = target_machine()
    return tm.triple, str(tm.target_data)


def dump_library(library: "CodeLibrary") -> None:
    """`IRJIT_DUMP=llvm,asm` writes each finalized library's optimized LLVM IR (`.ll`) and
    assembly (`.s`) into `IRJIT_DUMP_DIR` (default: the current directory)."""
    wanted = {w.strip() for w in os.environ.get("IRJIT_DUMP", "").split(",") if w.strip()}
    if not wanted:
        return
    unknown = wanted - {"llvm", "asm"}
    if unknown:
        raise ValueError(f"IRJIT_DUMP: unknown {', '.join(sorted(unknown))} (use llvm, asm)")
    folder = os.environ.get("IRJIT_DUMP_DIR", ".")
    os.makedirs(folder, exist_ok=True)
    base = os.path.join(folder, f"irjit_{library.name}")
    if "llvm" in wanted:
        with open(base + ".ll", "w") as f:
            f.write(library.llvm_ir)
    if "asm" in wanted:
        with open(base + ".s", "w") as f:
            f.write(library.asm)


class _PhaseClock:
    """Adds the CPU time of this thread since the previous lap to `phases[name]` (ms)."""

    def __init__(self, phases: dict[str, float]):
        self.phases = phases
        self.last = time.thread_time()

    def lap(self, name: str) -> None:
        now = time.thread_time()
        self.phases[name] = self.phases.get(name, 0.0) + (now - self.last) * 1000.0
        self.last = now


class CodeLibrary:
    """One compiled unit's LLVM module: `finalize()` once, then `address(name)`. With
    `optimized=False` the module is neither optimized nor given code generation's optimizations
    (for code that waits, such as the thread pool: ~4 ms instead of ~40 ms as a process's first
    library)."""

    def __init__(self, module: Optional[ir.Module], name: Optional[str] = None, optimized: bool = True,
                 context: Optional[llvm.context.ContextRef] = None, more_ir: str = ""):
        self.module = module  # until finalized; None for a library loaded from disk
        self.more_ir = more_ir  # IR text of the module's other definitions (a unit's entries),
        # or of the whole module when `module` is None (printed already)
        self.optimized = optimized
        self.context = context  # an LLVM context of its own to compile in, without llvmlite's
        # lock (`_compile_apart`), for unoptimized code compiled on a thread of its own (the
        # thread pool's); None: the global context
        assert context is None or not optimized, "a library compiled apart is not optimized"
        self.ir_chars = 0  # the size of the module's text, when compiled here
        self.name = module.name if module is not None else name
        self._llvm_ir: Optional[str] = None  # optimized, after finalize
        self._llvm_ir_path = None  # or where the disk cache keeps it
        self._asm: Optional[str] = None
        self._binding: Optional[llvm.ModuleRef] = None
        self.compile_ms = 0.0
        self.from_disk = False  # object code reused from the disk cache
        self.disk_digest: Optional[str] = None  # its disk entry's, once finalized with a disk cache
        self.phases: dict[str, float] = {}  # step -> CPU ms of this thread (see finalize)

    @property
    def llvm_ir(self) -> Optional[str]:
        """The optimized LLVM IR (for a library loaded by `load_library`, read on request)."""
        if self._llvm_ir is None and self._llvm_ir_path is not None:
            try:
                self._llvm_ir = self._llvm_ir_path.read_text()
            except OSError:
                self._llvm_ir = "; the optimized IR is no longer in the disk cache\n"
        return self._llvm_ir

    def finalize(self, cache_key: Optional[str] = None, metadata: Optional[str] = None) -> None:
        """Verify, optimize (`optimize`) and compile the module to object code, then link it;
        or link the object code the disk cache holds for it, without parsing the module. With
        `cache_key` (what the module is made from, for `load_library` to find it without
        building the module), the disk entry is keyed by it and stores `metadata`; else it is
        keyed by the module's IR. `phases` records the CPU time of each step."""
        assert self._binding is None, "a code library is finalized once"
        start = time.perf_counter()
        clock = _PhaseClock(self.phases)
        cache = disk_cache()
        module, more_ir = self.module, self.more_ir
        # (a module calling the thread pool links once the pool is made: `before_linking`)
        declares = lambda symbol: module is not None and getattr(  # noqa: E731
            module.globals.get(symbol), "is_declaration", False)
        makes = [make for symbol, make in _BEFORE_LINKING.items() if declares(symbol)]
        begins = [begin for symbol, begin in _WHILE_OPTIMIZING.items() if declares(symbol)]
        printed = lambda: (str(module) if module is not None else "") + more_ir  # noqa: E731
        text = printed() if cache_key is None or cache is None else None
        key = text if cache_key is None else cache_key
        if not self.optimized:  # the same IR makes other code
            key = "unoptimized\n" + key if key is not None else None
        digest = self.disk_digest = cache.digest(key) if cache is not None else None
        cached = cache.load(digest) if cache is not None else None
        clock.lap("print")
        self.module, self.more_ir = None, ""  # its objects (cyclic) go with the next young collection
        if cached is not None:
            obj, self._llvm_ir = cached
            self.from_disk = True
            mod = _empty_module(self.name)  # MCJIT loads `obj` for it
        else:
            if text is None:
                text = printed()
                clock.lap("print")
            self.ir_chars = len(text)
            if self.context is not None:
                mod, obj = _compile_apart(text, self.name, self.context)
                self._llvm_ir = text  # (not optimized: the IR it compiled)
                clock.lap("codegen")
            else:
                mod, obj = self._compile(text, clock, begins)
        for make in makes:
            make()
            clock.lap("wait for the pool")
        self._link(mod, obj)
        clock.lap("link")
        if cached is None and cache is not None:
            cache.store(digest, obj, self._llvm_ir, metadata)
            clock.lap("store")
        self.compile_ms = (time.perf_counter() - start) * 1000.0
        dump_library(self)

    def _compile(self, text: str, clock: _PhaseClock, begins: list[Callable[[], None]]
                 ) -> tuple[llvm.ModuleRef, bytes]:
        """(the module of `text`, its object code): parsed, verified, optimized (when
        `optimized`; `begins` called as it starts: see `while_optimizing`), printed optimized
        (kept for dumps and the disk cache) and compiled."""
        mod = llvm.parse_assembly(text)
        mod.name = self.name  # the object cache hook finds this module's object code by name
        clock.lap("parse")
        mod.verify()
        clock.lap("verify")
        for begin in begins:
            begin()
        if self.optimized:
            optimize(mod)
        clock.lap("optimize")
        self._llvm_ir = str(mod)
        clock.lap("print optimized")
        obj = target_machine(3 if self.optimized else 0).emit_object(mod)
        clock.lap("codegen")
        return mod, obj

    def _link(self, mod: llvm.ModuleRef, obj: bytes) -> None:
        """Add `mod` to the engine with `obj`, its object code (MCJIT compiles nothing)."""
        with _LOCK:
            engine = _engine()
            _OBJECTS_IN[mod.name] = obj
            engine.add_module(mod)
            engine.finalize_object()
            _OBJECTS_IN.pop(mod.name, None)
        self._binding = mod

    @property
    def asm(self) -> str:
        """The assembly of the optimized module (generated on first request)."""
        assert self.llvm_ir is not None, "finalize the library first"
        if self._asm is None:
            self._asm = target_machine().emit_assembly(llvm.parse_assembly(self.llvm_ir))
        return self._asm

    def global_address(self, name: str) -> int:
        assert self._binding is not None, "finalize the library first"
        with _LOCK:
            addr = _engine().get_global_value_address(name)
        assert addr, f"no global {name} in the library"
        return addr

    def address(self, name: str) -> int:
        assert self._binding is not None, "finalize the library first"
        with _LOCK:
            addr = _engine().get_function_address(name)
        assert addr, f"no function {name} in the library"
        return addr


def _unlocked(fn):
    """The ctypes function under llvmlite's wrapper of an LLVM call, which takes the one lock
    llvmlite holds around every call into LLVM; the wrapper itself where llvmlite has none."""
    return getattr(fn, "_cfn", fn)


def _compile_apart(text: str, name: str, context: llvm.context.ContextRef
                   ) -> tuple[llvm.ModuleRef, bytes]:
    """(the module of `text` named `name`, its object code at -O0), parsed, verified and
    compiled in `context`, a context of its own, by `target_machine(0)`, which only such
    libraries use, without llvmlite's global lock: LLVM lets threads work at once in different
    contexts, while under that lock a library compiled on its own thread (the thread pool) made
    the unit compiling on the main thread wait for each of its calls (~10 ms of a process's
    first threaded unit); a ctypes call releases the GIL, so the two compile on two cores."""
    lib, tm = llvm.ffi.lib, target_machine(0)
    call = lambda name, *args: _unlocked(getattr(lib, name))(*args)  # noqa: E731
    error = ctypes.c_char_p(None)

    def failed(what: str) -> RuntimeError:
        message = (error.value or b"").decode(errors="replace")
        call("LLVMPY_DisposeString", error)
        return RuntimeError(f"{what}\n{message}")
    mod = llvm.ModuleRef(call("LLVMPY_ParseAssembly", context, text.encode(), ctypes.byref(error)), context)
    if error.value is not None:
        mod.close()
        raise failed("LLVM IR parsing error")
    call("LLVMPY_SetModuleName", mod, name.encode())
    if call("LLVMPY_VerifyModule", mod, ctypes.byref(error)):
        raise failed("LLVM IR verification error")
    buffer = call("LLVMPY_TargetMachineEmitToMemory", tm, mod, 1, ctypes.byref(error))
    if not buffer:
        raise failed("LLVM code generation error")
    try:
        start, size = call("LLVMPY_GetBufferStart", buffer), call("LLVMPY_GetBufferSize", buffer)
        return mod, ctypes.string_at(start, size)
    finally:
        call("LLVMPY_DisposeMemoryBuffer", buffer)


def _empty_module(name: str) -> llvm.ModuleRef:
    """An empty module named `name`, linked with object code that stands for it."""
    mod = llvm.parse_assembly("")
    mod.name = name
    mod.triple = target_machine().triple
    mod.data_layout = str(target_machine().target_data)
    return mod


def load_library(name: str, cache_key: str,
                 before_linking: Callable[[str], None]) -> Optional[tuple[CodeLibrary, str]]:
    """(the library named `name` that `finalize(cache_key, metadata)` stored on disk, its
    metadata), linked from its object code alone: no module is built, printed, parsed or
    optimized. `before_linking(metadata)` registers the symbols the code calls (which
    emitting would have registered). None when the disk cache has no such entry."""
    cache = disk_cache()
    if cache is None:
        return None
    start = time.perf_counter()
    digest = cache.digest(cache_key)
    entry = cache.load_with_metadata(digest)
    if entry is None:
        return None
    obj, metadata = entry
    before_linking(metadata)
    return _linked_from_disk(name, digest, obj, start), metadata


def remember_library(reference: str, library: CodeLibrary) -> None:
    """Note in the disk cache that `reference` (what `library`'s module is made from, e.g. the
    digest of its generator's source) gives `library`, whose entry stays keyed by its IR text:
    `load_remembered(reference)` then links it without building the module."""
    cache = disk_cache()
    if cache is not None and library.disk_digest is not None:
        cache.remember(cache.digest(reference), library.disk_digest)


def load_remembered(name: str, reference: str) -> Optional[CodeLibrary]:
    """The library `remember_library(reference, ...)` noted, linked from its disk entry as
    `name`; None when the cache has no such note or entry."""
    cache = disk_cache()
    if cache is None:
        return None
    start = time.perf_counter()
    digest = cache.recall(cache.digest(reference))
    entry = cache.load(digest) if digest is not None else None
    if entry is None:
        return None
    return _linked_from_disk(name, digest, entry[0], start)


def _linked_from_disk(name: str, digest: str, obj: bytes, start: float) -> CodeLibrary:
    library = CodeLibrary(None, name)
    library._link(_empty_module(name), obj)
    library._llvm_ir_path = disk_cache().ir_path(digest)
    library.disk_digest = digest
    library.from_disk = True
    library.compile_ms = (time.perf_counter() - start) * 1000.0
    dump_library(library)
    return library
