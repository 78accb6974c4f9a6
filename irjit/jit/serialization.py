"""`irjit.jit.save` / `irjit.jit.load`: a scripted function or module as a zip archive holding,
for it and every function or method it calls, the graph text, the `.code` and the signature;
for a module also its attribute tree (`module.json`) and its tensors (`params.npz`)."""

from __future__ import annotations

import io
import json
import os
import zipfile
from typing import Any, Optional, Union

import numpy as np

from irjit.compiler.parser import parse_ir
from irjit.ops.registry import NO_DEFAULT
from irjit.ops.tensor import Tensor
from irjit.ops.type_parser import parse_type_text
from irjit.runtime.module import Module as RuntimeModule

from .signature import Parameter, Signature
from .module import ScriptModule
from .script import ScriptFunction

FORMAT = "irjit.jit/1"


def _functions(fn: ScriptFunction, out: dict[str, ScriptFunction]) -> dict[str, ScriptFunction]:
    """Every function reachable from `fn`, keyed by qualified name."""
    if fn.qualified_name not in out:
        out[fn.qualified_name] = fn
        for callee in fn.callees.values():
            _functions(callee, out)
    return out


def _module_paths(module: RuntimeModule, path: str, out: dict[int, str]) -> dict[int, str]:
    out.setdefault(id(module), path)
    for name, value in module.attributes.items():
        if isinstance(value, RuntimeModule):
            _module_paths(value, f"{path}.{name}" if path else name, out)
    return out


def _function_json(fn: ScriptFunction, paths: dict[int, str]) -> dict:
    sig = fn.signature
    params = []
    for p in sig.params:
        entry = {"name": p.name, "type": str(p.type)}
        if p.default is not NO_DEFAULT:
            entry["default"] = p.default
        params.append(entry)
    return {"name": sig.name, "params": params, "return_type": str(sig.return_type),
            "callees": {k: f.qualified_name for k, f in sorted(fn.callees.items())},
            "module": None if fn.module is None else paths[id(fn.module)]}


def _attributes_read(functions: dict[str, ScriptFunction]) -> dict[str, list[str]]:
    """Per class, the attribute names the saved graphs read with `prim::GetAttr`."""
    out: dict[str, list[str]] = {}
    for f in functions.values():
        for n in f.graph.walk():
            if n.kind == "prim::GetAttr":
                names = out.setdefault(str(n.inputs[0].type), [])
                if n.attr("name") not in names:
                    names.append(n.attr("name"))
    return out


def _module_json(module: RuntimeModule, path: str, arrays: dict[str, np.ndarray],
                 read: dict[str, list[str]]) -> dict:
    """The module's attribute tree: its registered attributes plus any plain attribute the
    graphs read (a module class may keep those outside `attributes`)."""
    attributes: dict[str, Any] = {}
    names = list(module.attributes)
    names += [n for n in read.get(module.qualified_name, []) if n not in names]
    for name in names:
        value = module.get(name)
        where = f"{path}.{name}" if path else name
        if isinstance(value, RuntimeModule):
            attributes[name] = {"module": _module_json(value, where, arrays, read)}
        elif isinstance(value, (Tensor, np.ndarray)):
            tensor = value if isinstance(value, Tensor) else Tensor(value)
            arrays[where] = np.asarray(tensor.data)
            attributes[name] = {"tensor": where, "requires_grad": bool(tensor.requires_grad)}
        elif value is None or isinstance(value, (bool, int, float, str)):
            attributes[name] = {"value": value}
        else:
            raise TypeError(f"irjit.jit.save: attribute {where!r} of type "
                            f"{type(value).__name__} cannot be saved")
    return {"qualified_name": module.qualified_name, "attributes": attributes}


def save(obj: Union[ScriptFunction, ScriptModule], path: Union[str, os.PathLike]) -> None:
    """Write a scripted function or module (and what it calls) to a zip archive at `path`;
    the file appears only once complete."""
    if isinstance(obj, ScriptModule):
        main, root = obj.forward, obj._module
    elif isinstance(obj, ScriptFunction):
        main, root = obj, None
    else:
        raise TypeError(f"irjit.jit.save expects a ScriptFunction or ScriptModule, "
                        f"got {type(obj).__name__}")
    functions = _functions(main, {})
    paths = _module_paths(root, "", {}) if root is not None else {}
    arrays: dict[str, np.ndarray] = {}
    manifest = {"format": FORMAT, "main": main.qualified_name,
                "functions": {q: _function_json(f, paths) for q, f in functions.items()},
                "module": _module_json(root, "", arrays, _attributes_read(functions))
                if root is not None else None}
    tmp = f"{os.fspath(path)}.partial"
    try:
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("manifest.json", json.dumps(manifest, indent=1, sort_keys=True))
            for q, f in functions.items():
                z.writestr(f"graphs/{q}.ir", str(f.graph))
                z.writestr(f"code/{q}.py", f.code)
            if arrays:
                buf = io.BytesIO()
                np.savez(buf, **arrays)
                z.writestr("params.npz", buf.getvalue())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _build_module(info: dict, path: str, arrays, modules: dict[str, RuntimeModule]) -> RuntimeModule:
    m = RuntimeModule(info["qualified_name"], path)
    modules[path] = m
    for name, entry in info["attributes"].items():
        where = f"{path}.{name}" if path else name
        if "module" in entry:
            m.set(name, _build_module(entry["module"], where, arrays, modules))
        elif "tensor" in entry:
            m.set(name, Tensor(arrays[entry["tensor"]], requires_grad=entry["requires_grad"]))
        else:
            m.set(name, entry["value"])
    return m


def load(path: Union[str, os.PathLike]) -> Union[ScriptFunction, ScriptModule]:
    """Read an archive written by `save` back into a callable ScriptFunction or ScriptModule."""
    where = os.fspath(path)
    try:
        z = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as e:
        raise ValueError(f"{where}: not an irjit.jit archive ({e})") from None
    with z:
        try:
            manifest = json.loads(z.read("manifest.json"))
        except KeyError:
            raise ValueError(f"{where}: not an irjit.jit archive (no manifest.json)") from None
        if manifest.get("format") != FORMAT:
            raise ValueError(f"{where}: unsupported archive format {manifest.get('format')!r} "
                             f"(expected {FORMAT!r})")
        texts = {q: z.read(f"graphs/{q}.ir").decode() for q in manifest["functions"]}
        arrays = {}
        if "params.npz" in z.namelist():
            with np.load(io.BytesIO(z.read("params.npz"))) as npz:
                arrays = {k: npz[k] for k in npz.files}
    modules: dict[str, RuntimeModule] = {}
    root: Optional[RuntimeModule] = None
    if manifest["module"] is not None:
        root = _build_module(manifest["module"], "", arrays, modules)
    built: dict[str, ScriptFunction] = {}

    def build(q: str) -> ScriptFunction:
        if q in built:
            return built[q]
        info = manifest["functions"][q]
        params = [Parameter(p["name"], parse_type_text(p["type"]), p.get("default", NO_DEFAULT))
                  for p in info["params"]]
        sig = Signature(info["name"], params, parse_type_text(info["return_type"]))
        callees = {k: build(c) for k, c in info["callees"].items()}
        module = None if info["module"] is None else modules[info["module"]]
        built[q] = ScriptFunction(parse_ir(texts[q]), sig, q, callees, module)
        return built[q]
    main = build(manifest["main"])
    return ScriptModule(root, main) if root is not None else main
