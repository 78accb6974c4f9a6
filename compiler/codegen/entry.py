"""The native entry of a unit: takes every array as a `PyObject*`, reads numpy's public
`PyArrayObject_fields` layout natively (as numba unboxes arrays) and checks type, dtype, rank,
sizes, strides, alignment and writeability against the specialization before any kernel
touches memory. A failed check returns `kind + 16 * argument`; 0 means the kernels ran."""

from __future__ import annotations

import ctypes
from functools import lru_cache
from typing import Optional

import numpy as np
from llvmlite import binding as llvm
from llvmlite import ir

from .emit import I32, I64, PTR, STATUS_OUT_OF_BOUNDS
from .scalar_ops import STATUS_DIVISION_BY_ZERO
from .kernel import Buffer

# PyArrayObject_fields: PyObject_HEAD (refcount, type), data, nd, dimensions, strides, base,
# descr, flags
OFFSET_TYPE, OFFSET_DATA, OFFSET_ND, OFFSET_DIMS, OFFSET_STRIDES = 8, 16, 24, 32, 40
OFFSET_DESCR, OFFSET_FLAGS = 56, 64
NPY_ARRAY_WRITEABLE = 0x0400

GUARD_KINDS = {1: "not an ndarray", 2: "dtype", 3: "rank", 4: "size", 5: "stride",
               6: "alignment", 7: "not writeable", STATUS_DIVISION_BY_ZERO: "integer division by zero",
               STATUS_OUT_OF_BOUNDS: "out of bounds"}


def describe_status(status: int) -> str:
    kind, arg = status % 16, status // 16
    return f"argument {arg}: {GUARD_KINDS.get(kind, f'status {kind}')}"


@lru_cache(maxsize=None)
def check_array_layout() -> bool:
    """Whether this numpy lays arrays out as the offsets above say (checked once)."""
    a = np.zeros((3, 5), np.float32)[:, 1:]
    base = id(a)

    def word(off, ctype=ctypes.c_ssize_t):
        return ctype.from_address(base + off).value

    dims = ctypes.cast(word(OFFSET_DIMS), ctypes.POINTER(ctypes.c_ssize_t))
    strides = ctypes.cast(word(OFFSET_STRIDES), ctypes.POINTER(ctypes.c_ssize_t))
    return (word(OFFSET_TYPE) == id(np.ndarray) and word(OFFSET_DATA) == a.__array_interface__["data"][0]
            and word(OFFSET_ND, ctypes.c_int) == 2 and (dims[0], dims[1]) == (3, 4)
            and (strides[0], strides[1]) == (20, 4) and word(OFFSET_DESCR) == id(a.dtype))


# the C functions of the Python runtime a fast entry calls
_PYTHON_API = {"PyLong_FromLong": (PTR, [I64]), "PyEval_SaveThread": (PTR, []),
               "PyEval_RestoreThread": (ir.VoidType(), [PTR])}
METH_FASTCALL = 0x0080
STATUS_ARGUMENT_COUNT = 15  # a fast entry called with another number of arguments


@lru_cache(maxsize=None)
def register_symbols() -> None:
    """Make the Python runtime's functions a fast entry calls resolvable by the JIT linker."""
    for name in _PYTHON_API:
        llvm.add_symbol(name, ctypes.cast(getattr(ctypes.pythonapi, name), ctypes.c_void_p).value)


def process_address(what: str) -> int:
    """The address an entry's global `<entry>.<what>` must hold in this process: numpy's
    ndarray type for "ndarray", None for "None", else the singleton of the dtype named `what`."""
    if what == "None":
        return id(None)
    return id(np.ndarray) if what == "ndarray" else id(np.dtype(what))


class ArrayGuards:
    """Checks of numpy arrays passed as `PyObject*`, emitted into one entry function."""

    def __init__(self, builder: ir.IRBuilder, fn: ir.Function):
        self.b = builder
        self.fn = fn
        self.addresses: dict[str, int] = {}  # global name -> the address it must hold
        self.fail: Optional[ir.Block] = None  # returns the status of the failed check
        self.failed: Optional[ir.PhiInstr] = None

    def process_address(self, what: str) -> ir.Value:
        """A process-specific address (`process_address(what)`: a type object, a dtype
        singleton, None), read from a global that the unit fills in after loading (or after
        loading it from disk, by the global's name), so object code is the same in every
        process."""
        name = f"{self.fn.name}.{what}"
        gv = self.fn.module.globals.get(name)
        if gv is None:
            gv = ir.GlobalVariable(self.fn.module, I64, name=name)
            gv.initializer = ir.Constant(I64, 0)
            self.addresses[name] = process_address(what)
        return self.b.load(gv, typ=I64)

    def field(self, obj: ir.Value, offset: int, ty: ir.Type) -> ir.Value:
        p = self.b.gep(obj, [ir.Constant(I64, offset)], source_etype=ir.IntType(8))
        return self.b.load(p, typ=ty)

    def require(self, checks: list[tuple[ir.Value, int]]) -> None:
        """Return the status of the first failing (condition, status) check, else continue:
        one branch for all of them (the status a select chain), to one return block per
        function, so an entry stays small to optimize and compile."""
        b = self.b
        status = ir.Constant(I32, 0)
        for ok, code in reversed(checks):
            status = b.select(ok, status, ir.Constant(I32, code))
        if self.fail is None:
            self.fail = self.fn.append_basic_block("guard_failed")
            with b.goto_block(self.fail):
                self.failed = b.phi(I32, "status")
                b.ret(self.failed)
        cont = self.fn.append_basic_block("guard_ok")
        self.failed.add_incoming(status, b.block)
        b.cbranch(b.icmp_unsigned("==", status, ir.Constant(I32, 0)), cont, self.fail)
        b.position_at_end(cont)

    def array(self, obj: ir.Value, buf: Buffer, arg: int) -> ir.Value:
        """Check one array argument; returns its data pointer. Three branches: the type
        (nothing else of a non-array may be read), dtype and rank (the sizes and strides are
        read only at the expected rank), then sizes, strides, alignment and writeability."""
        b = self.b
        code = 16 * arg
        const = lambda v: ir.Constant(I64, v)  # noqa: E731
        typ = self.field(obj, OFFSET_TYPE, I64)
        self.require([(b.icmp_unsigned("==", typ, self.process_address("ndarray")), code + 1)])
        descr = self.field(obj, OFFSET_DESCR, I64)
        nd = self.field(obj, OFFSET_ND, I32)
        self.require([(b.icmp_unsigned("==", descr, self.process_address(np.dtype(buf.dtype).name)), code + 2),
                      (b.icmp_signed("==", nd, ir.Constant(I32, len(buf.sizes))), code + 3)])
        dims = self.field(obj, OFFSET_DIMS, PTR)
        strides = self.field(obj, OFFSET_STRIDES, PTR)
        checks = []
        for k, (size, stride) in enumerate(zip(buf.sizes, buf.strides)):
            d = b.load(b.gep(dims, [const(k)], source_etype=I64), typ=I64)
            checks.append((b.icmp_signed("==", d, const(size)), code + 4))
            if size != 1:
                s = b.load(b.gep(strides, [const(k)], source_etype=I64), typ=I64)
                checks.append((b.icmp_signed("==", s, const(stride * buf.dtype.itemsize)), code + 5))
        data = self.field(obj, OFFSET_DATA, PTR)
        misaligned = b.and_(b.ptrtoint(data, I64), const(buf.dtype.itemsize - 1))
        checks.append((b.icmp_unsigned("==", misaligned, const(0)), code + 6))
        if buf.is_output:
            flags = self.field(obj, OFFSET_FLAGS, I32)
            writeable = b.and_(flags, ir.Constant(I32, NPY_ARRAY_WRITEABLE))
            checks.append((b.icmp_unsigned("!=", writeable, ir.Constant(I32, 0)), code + 7))
        self.require(checks)
        return data


def emit_entry(module: ir.Module, name: str, buffers: list[Buffer],
               kernels: list[ir.Function]) -> dict[str, int]:
    """`i32 name(PyObject*...)`: guard every buffer, then run the kernels in order. Returns
    the globals to fill in before the first call (name -> address)."""
    fn = ir.Function(module, ir.FunctionType(I32, [PTR] * len(buffers)), name=name)
    # The guards are loads, compares and selects that optimizing barely shortens, but O3 and
    # instruction selection took half of a small unit's compile time on them; the kernels
    # it calls are optimized as before (`python -m irjit.tools.bench_compile`).
    fn.attributes.add("noinline")
    fn.attributes.add("optnone")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    guards = ArrayGuards(b, fn)
    data = [guards.array(obj, buf, i) for i, (obj, buf) in enumerate(zip(fn.args, buffers))]
    for i, k in enumerate(kernels):  # a kernel's own status (out of bounds, division by zero)
        status = b.call(k, data)
        failed, ran = fn.append_basic_block(f"kernel{i}_failed"), fn.append_basic_block(f"kernel{i}_ok")
        b.cbranch(b.icmp_unsigned("!=", status, ir.Constant(I32, 0)), failed, ran)
        with b.goto_block(failed):
            b.ret(status)
        b.position_at_end(ran)
    b.ret(ir.Constant(I32, 0))
    return guards.addresses


def emit_fast_entry(module: ir.Module, entry: ir.Function, release_gil: bool) -> None:
    """`PyObject* <entry>_fast(PyObject* self, PyObject* const* args, Py_ssize_t nargs)`: the
    entry as a METH_FASTCALL C function, so Python calls it as it calls a builtin (no ctypes
    conversion of each argument), returning the status as a Python int. With `release_gil`
    (kernels long enough to pay for it) the GIL is released around the entry, as a ctypes call
    releases it, so other threads run meanwhile. Linking needs `register_symbols()`."""
    def api(name: str) -> ir.Function:
        found = module.globals.get(name)
        if found is None:
            result, params = _PYTHON_API[name]
            found = ir.Function(module, ir.FunctionType(result, params), name=name)
        return found

    n = len(entry.args)
    fn = ir.Function(module, ir.FunctionType(PTR, [PTR, PTR, I64]), name=f"{entry.name}_fast")
    # a compare, a load per argument and three calls: O3 made it no faster to call, and cost
    # ~1-2 ms a unit to run (tools/bench_compile.py)
    fn.attributes.add("noinline")
    fn.attributes.add("optnone")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    wrong = fn.append_basic_block("wrong_count")
    run = fn.append_basic_block("run")
    b.cbranch(b.icmp_signed("==", fn.args[2], ir.Constant(I64, n)), run, wrong)
    with b.goto_block(wrong):
        b.ret(b.call(api("PyLong_FromLong"), [ir.Constant(I64, STATUS_ARGUMENT_COUNT)]))
    b.position_at_end(run)
    args = [b.load(b.gep(fn.args[1], [ir.Constant(I64, k)], source_etype=PTR), typ=PTR)
            for k in range(n)]
    if release_gil:
        state = b.call(api("PyEval_SaveThread"), [])
        status = b.call(entry, args)
        b.call(api("PyEval_RestoreThread"), [state])
    else:
        status = b.call(entry, args)
    b.ret(b.call(api("PyLong_FromLong"), [b.sext(status, I64)]))


class _MethodDef(ctypes.Structure):
    _fields_ = [("ml_name", ctypes.c_char_p), ("ml_meth", ctypes.c_void_p),
                ("ml_flags", ctypes.c_int), ("ml_doc", ctypes.c_char_p)]


_NEW_BUILTIN = ctypes.pythonapi.PyCFunction_NewEx
_NEW_BUILTIN.restype = ctypes.py_object
_NEW_BUILTIN.argtypes = [ctypes.c_void_p, ctypes.py_object, ctypes.py_object]


def builtin_function(name: str, address: int) -> tuple:
    """(a Python builtin calling the METH_FASTCALL C function at `address` (`emit_fast_entry`),
    its method definition): the builtin reads the definition on every call, so whoever holds
    the builtin holds the definition too."""
    definition = _MethodDef(name.encode(), address, METH_FASTCALL, None)
    return _NEW_BUILTIN(ctypes.addressof(definition), None, None), definition


def builtin_with_self(definition: _MethodDef, self_object: object) -> object:
    """Another builtin of a method definition `builtin_function` made (whoever made it keeps
    it), passing `self_object` to the C function as its `self`."""
    return _NEW_BUILTIN(ctypes.addressof(definition), self_object, None)
