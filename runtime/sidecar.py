"""The attribute sidecar: module attributes that an `.npz` cannot hold (strings, None, lists
of tensors, dicts, tuples), read from JSON.

The file is one JSON object mapping dotted attribute paths to values. Strings, numbers,
booleans, `null` (None), lists and objects (dicts with string keys) are taken as they are;
`{"$tensor": "KEY"}` is the array stored under KEY in the params `.npz`, as a Tensor, and
`{"$tuple": [...]}` a tuple, `{"$enum": "__torch__.Color.RED"}` an enum member. For example
`{"mode": "bilinear", "blocks.weights": [{"$tensor": "w0"}, {"$tensor": "w1"}], "bias": null}`.
The entry `"$enums"` gives enum classes' values, which graphs do not print (`prim::EnumValue`
needs them): `{"$enums": {"__torch__.Color": {"RED": 1, "GREEN": 2}}}`. It stays in the
returned attributes under that key, for the Function it is given to (values are per Function).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from irjit.ops.enums import EnumMember
from irjit.ops.errors import IRTypeError
from irjit.ops.tensor import Tensor


def read_attributes(text: str, arrays: dict[str, np.ndarray], where: str) -> tuple[dict, set]:
    """(dotted path -> run-time value, the params keys the file used as tensors)."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise IRTypeError(f"{where}:{e.lineno}:{e.colno}: not valid JSON ({e.msg})") from None
    if not isinstance(doc, dict):
        raise IRTypeError(f"{where}: expected a JSON object mapping attribute paths to values")
    used: set[str] = set()

    def value(x: Any, path: str) -> Any:
        if isinstance(x, list):
            return [value(e, f"{path}[{i}]") for i, e in enumerate(x)]
        if isinstance(x, dict):
            if set(x) == {"$tensor"}:
                key = x["$tensor"]
                if not isinstance(key, str) or key not in arrays:
                    raise IRTypeError(f"{where}: {path}: no array {key!r} in the params file")
                used.add(key)
                return Tensor(np.array(arrays[key]))
            if set(x) == {"$tuple"} and isinstance(x["$tuple"], list):
                return tuple(value(e, f"{path}[{i}]") for i, e in enumerate(x["$tuple"]))
            if set(x) == {"$enum"}:
                enum, _, member = str(x["$enum"]).rpartition(".")
                if not enum or not member:
                    raise IRTypeError(f"{where}: {path}: {x['$enum']!r} is not an enum member "
                                      "(`__torch__.Class.MEMBER`)")
                return EnumMember(enum, member)
            return {k: value(v, f"{path}[{k!r}]") for k, v in x.items()}
        return x

    out = {}
    if "$enums" in doc:
        out["$enums"] = _enum_table(doc.pop("$enums"), where)
    for path, x in doc.items():
        if not path or any(not part for part in path.split(".")):
            raise IRTypeError(f"{where}: {path!r} is not a dotted attribute path")
        out[path] = value(x, path)
    return out, used


def _enum_table(enums: Any, where: str) -> dict:
    """`{"__torch__.Color": {"RED": 1, ...}, ...}`, checked: the enum values of a Function."""
    if not isinstance(enums, dict) or not all(
            isinstance(members, dict) and all(isinstance(v, (int, float, str)) and not isinstance(v, bool)
                                              for v in members.values())
            for members in enums.values()):
        raise IRTypeError(f"{where}: \"$enums\" must map enum class names to objects of member "
                          "values (numbers or strings)")
    return {name: dict(members) for name, members in enums.items()}
