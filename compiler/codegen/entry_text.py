"""A unit's guarded entry and fast entry (see entry.py) written as LLVM IR text rather than
built with llvmlite's IR builder: the guards are a few hundred loads, compares and selects
(536 lines for lstm_cell's 11-array gate unit) that LLVM compiles unoptimized (`optnone`),
and llvmlite spent ~2 ms building and ~6-9 ms printing them; formatted as text they cost
well under a millisecond. The checks and statuses are `entry.ArrayGuards`' (scalar programs
build theirs into their own function with it)."""

from __future__ import annotations

import numpy as np
from llvmlite import ir

from .entry import (_PYTHON_API, NPY_ARRAY_WRITEABLE, OFFSET_DATA, OFFSET_DESCR, OFFSET_DIMS,
                    OFFSET_FLAGS, OFFSET_ND, OFFSET_STRIDES, OFFSET_TYPE, STATUS_ARGUMENT_COUNT,
                    process_address)
from .kernel import Buffer


def _quoted(name: str) -> str:
    return '@"' + name + '"'


class _Entry:
    """The lines of the guarded entry: `%vN` values, blocks, and the phi of the statuses."""

    def __init__(self, name: str, n_args: int):
        self.name = name
        self.lines = [f"define i32 {_quoted(name)}("
                      + ", ".join(f"ptr %a{i}" for i in range(n_args)) + ") noinline optnone {", "entry:"]
        self.count = 0
        self.block = "entry"
        self.blocks = 0
        self.failed: list[tuple[str, str]] = []  # (status value, its block) for the phi
        self.globals: dict[str, int] = {}  # global name -> the process address it holds

    def value(self, text: str) -> str:
        self.count += 1
        self.lines.append(f"  %v{self.count} = {text}")
        return f"%v{self.count}"

    def field(self, obj: str, offset: int, ty: str) -> str:
        p = self.value(f"getelementptr i8, ptr {obj}, i64 {offset}")
        return self.value(f"load {ty}, ptr {p}")

    def address(self, what: str) -> str:
        name = f"{self.name}.{what}"
        self.globals[name] = process_address(what)
        return self.value(f"load i64, ptr {_quoted(name)}")

    def require(self, checks: list[tuple[str, int]]) -> None:
        """Go on when every (i1 condition) holds, else return the first failing one's status
        (a select chain and one branch, as `ArrayGuards.require`)."""
        status = "0"
        for ok, code in reversed(checks):
            status = self.value(f"select i1 {ok}, i32 {status}, i32 {code}")
        passed = self.value(f"icmp eq i32 {status}, 0")
        self.blocks += 1
        label = f"guard_ok{self.blocks}"
        self.failed.append((status, self.block))
        self.lines.append(f"  br i1 {passed}, label %{label}, label %guard_failed")
        self.lines.append(f"{label}:")
        self.block = label

    def array(self, arg: int, buf: Buffer) -> str:
        """`ArrayGuards.array`'s checks of argument `arg`; returns its data pointer."""
        obj, code = f"%a{arg}", 16 * arg
        typ = self.field(obj, OFFSET_TYPE, "i64")
        self.require([(self.value(f"icmp eq i64 {typ}, {self.address('ndarray')}"), code + 1)])
        descr = self.field(obj, OFFSET_DESCR, "i64")
        nd = self.field(obj, OFFSET_ND, "i32")
        dtype = self.address(np.dtype(buf.dtype).name)
        self.require([(self.value(f"icmp eq i64 {descr}, {dtype}"), code + 2),
                      (self.value(f"icmp eq i32 {nd}, {len(buf.sizes)}"), code + 3)])
        dims = self.field(obj, OFFSET_DIMS, "ptr")
        strides = self.field(obj, OFFSET_STRIDES, "ptr")
        checks = []
        for k, (size, stride) in enumerate(zip(buf.sizes, buf.strides)):
            d = self.value(f"load i64, ptr {self.value(f'getelementptr i64, ptr {dims}, i64 {k}')}")
            checks.append((self.value(f"icmp eq i64 {d}, {size}"), code + 4))
            if size != 1:
                s = self.value(f"load i64, ptr {self.value(f'getelementptr i64, ptr {strides}, i64 {k}')}")
                checks.append((self.value(f"icmp eq i64 {s}, {stride * buf.dtype.itemsize}"), code + 5))
        data = self.field(obj, OFFSET_DATA, "ptr")
        low = self.value(f"and i64 {self.value(f'ptrtoint ptr {data} to i64')}, {buf.dtype.itemsize - 1}")
        checks.append((self.value(f"icmp eq i64 {low}, 0"), code + 6))
        if buf.is_output:
            flags = self.field(obj, OFFSET_FLAGS, "i32")
            writeable = self.value(f"and i32 {flags}, {NPY_ARRAY_WRITEABLE}")
            checks.append((self.value(f"icmp ne i32 {writeable}, 0"), code + 7))
        self.require(checks)
        return data


def entries_text(module: ir.Module, name: str, buffers: list[Buffer], kernels: list[ir.Function],
                 release_gil: bool) -> tuple[str, dict[str, int]]:
    """(the text to append to `module`'s: `i32 name(PyObject*...)`, which guards every buffer
    and runs `kernels` in order, returning the first non-zero status, and `name_fast`, its
    METH_FASTCALL form as `entry.emit_fast_entry` describes it; the globals to fill in before
    the first call, name -> address)."""
    e = _Entry(name, len(buffers))
    data = [e.array(i, buf) for i, buf in enumerate(buffers)]
    args = ", ".join(f"ptr {d}" for d in data)
    for i, k in enumerate(kernels):  # a kernel's own status (out of bounds, division by zero)
        assert len(k.args) == len(data), k.name
        status = e.value(f"call i32 {_quoted(k.name)}({args})")
        ok = e.value(f"icmp eq i32 {status}, 0")
        e.lines += [f"  br i1 {ok}, label %kernel{i}_ok, label %kernel{i}_failed",
                    f"kernel{i}_failed:", f"  ret i32 {status}", f"kernel{i}_ok:"]
    e.lines.append("  ret i32 0")
    if e.failed:
        incoming = ", ".join(f"[ {status}, %{block} ]" for status, block in e.failed)
        e.lines += ["guard_failed:", f"  %status = phi i32 {incoming}", "  ret i32 %status"]
    e.lines.append("}")
    lines = [f"{_quoted(g)} = global i64 0" for g in e.globals] + e.lines
    lines += _fast_entry(name, len(buffers), release_gil)
    lines += [f"declare {_declaration(api)}" for api in _PYTHON_API if api not in module.globals]
    return "\n".join(lines) + "\n", e.globals


def _declaration(api: str) -> str:
    result, params = _PYTHON_API[api]
    return f"{result} @{api}({', '.join(str(p) for p in params)})"


def _fast_entry(name: str, n: int, release_gil: bool) -> list[str]:
    lines = [f"define ptr {_quoted(name + '_fast')}(ptr %self, ptr %args, i64 %n) noinline optnone {{",
             "entry:", f"  %right = icmp eq i64 %n, {n}", "  br i1 %right, label %run, label %wrong_count",
             "wrong_count:", f"  %wrong = call ptr @PyLong_FromLong(i64 {STATUS_ARGUMENT_COUNT})",
             "  ret ptr %wrong", "run:"]
    for k in range(n):
        lines += [f"  %p{k} = getelementptr ptr, ptr %args, i64 {k}", f"  %x{k} = load ptr, ptr %p{k}"]
    call = f"call i32 {_quoted(name)}({', '.join(f'ptr %x{k}' for k in range(n))})"
    if release_gil:
        lines += ["  %state = call ptr @PyEval_SaveThread()", f"  %status = {call}",
                  "  call void @PyEval_RestoreThread(ptr %state)"]
    else:
        lines.append(f"  %status = {call}")
    return lines + ["  %wide = sext i32 %status to i64", "  %result = call ptr @PyLong_FromLong(i64 %wide)",
                    "  ret ptr %result", "}"]
