"""One native call that runs several units' fast entries in order (`sequence(units)`), so a
program's straight run of units (a DifferentiableGraph's df, say) costs one call from Python,
not one per unit. The loop is one small function compiled once per process; what it runs is
the table it is given as its `self`: a read-only int64 array of the argument count, the unit
count, then per unit its fast entry, its first argument and its number of arguments. It
returns the first non-zero status (or NULL, an exception) as that unit's entry returned it,
else the last unit's status: the caller then knows only that some unit refused."""

from __future__ import annotations

import ctypes
import threading
from typing import Optional, Sequence

import numpy as np
from llvmlite import binding as llvm
from llvmlite import ir

from .emit import I64, PTR
from .entry import STATUS_ARGUMENT_COUNT, builtin_function, builtin_with_self

SYMBOL = "irjit_unit_sequence"
_API = {"PyLong_FromLong": (PTR, [I64]), "PyLong_AsLong": (I64, [PTR]),
        "Py_DecRef": (ir.VoidType(), [PTR])}
_ROW = 3  # table words per unit: fast entry, first argument, number of arguments
_lock = threading.Lock()
_address: list[int] = []  # the compiled function's, once
_definition: list = []  # the method definition every sequence's builtin reads


def _text() -> str:
    """The loop as LLVM IR text (an indirect call is plain in text)."""
    declares = [f"declare {ret} @{name}({', '.join(str(a) for a in args)})" for name, (ret, args) in _API.items()]
    return "\n".join(declares + [
        f"define ptr @{SYMBOL}(ptr %self, ptr %args, i64 %n) {{",
        "entry:",
        "  %data.at = getelementptr i8, ptr %self, i64 16",  # (the table array's data)
        "  %data = load ptr, ptr %data.at",
        "  %total = load i64, ptr %data",
        "  %right = icmp eq i64 %n, %total",
        "  br i1 %right, label %start, label %wrong_count",
        "wrong_count:",
        f"  %wrong = call ptr @PyLong_FromLong(i64 {STATUS_ARGUMENT_COUNT})",
        "  ret ptr %wrong",
        "start:",
        "  %count.at = getelementptr i64, ptr %data, i64 1",
        "  %count = load i64, ptr %count.at",
        "  br label %unit",
        "unit:",
        "  %i = phi i64 [ 0, %start ], [ %following, %ran ]",
        f"  %row.start = mul i64 %i, {_ROW}",
        "  %row = add i64 %row.start, 2",
        "  %entry.at = getelementptr i64, ptr %data, i64 %row",
        "  %fast = load ptr, ptr %entry.at",
        "  %first.at = getelementptr i64, ptr %entry.at, i64 1",
        "  %first = load i64, ptr %first.at",
        "  %m.at = getelementptr i64, ptr %entry.at, i64 2",
        "  %m = load i64, ptr %m.at",
        "  %its = getelementptr ptr, ptr %args, i64 %first",
        "  %status = call ptr %fast(ptr null, ptr %its, i64 %m)",
        "  %following = add i64 %i, 1",
        "  %last = icmp eq i64 %following, %count",
        "  br i1 %last, label %done, label %check",
        "check:",  # (NULL, an exception, or a non-zero status: return it)
        "  %null = icmp eq ptr %status, null",
        "  br i1 %null, label %done, label %value",
        "value:",
        "  %code = call i64 @PyLong_AsLong(ptr %status)",
        "  %ok = icmp eq i64 %code, 0",
        "  br i1 %ok, label %ran, label %done",
        "ran:",
        "  call void @Py_DecRef(ptr %status)",
        "  br label %unit",
        "done:",
        "  ret ptr %status",
        "}"]) + "\n"


def _sequence_address() -> int:
    """The compiled loop's address (made on first use, from the disk cache when it has it)."""
    with _lock:
        if not _address:
            from .library import CodeLibrary, new_module
            for name in _API:
                llvm.add_symbol(name, ctypes.cast(getattr(ctypes.pythonapi, name), ctypes.c_void_p).value)
            library = CodeLibrary(None, SYMBOL, optimized=False, more_ir=str(new_module(SYMBOL)) + _text())
            library.finalize()
            _, definition = builtin_function(SYMBOL, library.address(SYMBOL))
            _definition.append((definition, library))  # (kept for every sequence's builtin)
            _address.append(library.address(SYMBOL))
        return _address[0]


def sequence(units: Sequence, arguments: Sequence[int]) -> Optional[object]:
    """A builtin `call(*args)` running `units` (NativeUnits, at least two) in order on their
    arguments laid end to end (`arguments[k]` of them for unit k, as its entry takes them):
    0 when every unit ran, else the status of the first that refused (the units after it did
    not run; those before it did)."""
    if len(units) < 2 or len(units) != len(arguments):
        return None
    _sequence_address()
    table, first = [sum(arguments), len(units)], 0
    for unit, m in zip(units, arguments):
        table += [unit.fast_address, first, m]
        first += m
    table = np.array(table, np.int64)
    table.flags.writeable = False
    return builtin_with_self(_definition[0][0], table)
