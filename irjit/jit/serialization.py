"""`irjit.jit.save` / `irjit.jit.load`: a scripted or traced function or module as a zip archive
holding, for it and every function or method it calls, the graph text, the `.code`, the
signature and the exact data of its tensor constants (`constants.npz`; the graph text prints
them rounded); for a module also its attribute tree with its types as the graphs name them and
the hyper-parameters built-in forwards read (in the manifest) and its tensors (`params.npz`).
A loaded module is a ScriptModule with every method the archive holds."""

from __future__ import annotations

import io
import json
import os
import zipfile
from typing import Any, Optional, Union

import numpy as np

from irjit.compiler.ir import Graph
from irjit.compiler.ir.attributes import TensorData
from irjit.compiler.parser import parse_ir
from irjit.ops.registry import NO_DEFAULT
from irjit.ops.tensor import Tensor
from irjit.ops.type_parser import parse_type_text
from irjit.runtime.module import Module as RuntimeModule

from .signature import Parameter, Signature
from .module import ScriptModule
from .script import ScriptFunction

FORMAT = "irjit.jit/2"
_PLAIN = (bool, int, float, str, type(None))


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


def _hyper_parameters(module: RuntimeModule) -> list[str]:
    """Plain instance attributes of a built-in torch.nn module (`eps`, `stride`, `training`),
    which the runtime's built-in forwards read when a graph calls the module."""
    if not module.qualified_name.startswith("__torch__.torch.nn.") or not hasattr(module, "__dict__"):
        return []
    return [k for k, v in vars(module).items() if not k.startswith("_") and k != "path" and
            (isinstance(v, _PLAIN) or isinstance(v, (tuple, list)) and all(isinstance(x, _PLAIN) for x in v))]


def _module_json(module: RuntimeModule, path: str, arrays: dict[str, np.ndarray],
                 read: dict[str, list[str]], types: dict[int, str]) -> dict:
    """The module's attribute tree: its registered attributes, any plain attribute the graphs
    read (a module class may keep those outside `attributes`) and a built-in module's
    hyper-parameters; its type as the graphs name it."""
    qualified = types.get(id(module), module.qualified_name)
    attributes: dict[str, Any] = {}
    names = list(module.attributes)
    names += [n for n in read.get(qualified, []) + _hyper_parameters(module) if n not in names]
    for name in names:
        value = module.get(name)
        where = f"{path}.{name}" if path else name
        if isinstance(value, RuntimeModule):
            attributes[name] = {"module": _module_json(value, where, arrays, read, types)}
        elif isinstance(value, (Tensor, np.ndarray)):
            tensor = value if isinstance(value, Tensor) else Tensor(value)
            arrays[where] = np.asarray(tensor.data)
            attributes[name] = {"tensor": where, "requires_grad": bool(tensor.requires_grad)}
        elif isinstance(value, _PLAIN):
            attributes[name] = {"value": value}
        elif isinstance(value, tuple) and all(isinstance(x, _PLAIN) for x in value):
            attributes[name] = {"value": list(value), "tuple": True}
        elif isinstance(value, list) and all(isinstance(x, _PLAIN) for x in value):
            attributes[name] = {"value": value}
        else:
            raise TypeError(f"irjit.jit.save: attribute {where!r} of type "
                            f"{type(value).__name__} cannot be saved")
    return {"qualified_name": qualified, "attributes": attributes}


def _tensor_constants(graph: Graph) -> list:
    return [n for n in graph.walk() if n.kind == "prim::Constant" and n.attr_kind("value") == "t"]


def _module_types(obj: ScriptModule, out: dict[int, str]) -> dict[int, str]:
    """The type each module of a traced (or loaded) module tree has in its graphs."""
    name = obj.__dict__.get("type_name")
    if name is not None:
        out[id(obj._module)] = name
    for child in (obj.__dict__.get("_children") or {}).values():
        _module_types(child, out)
    return out


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
    types = _module_types(obj, {}) if isinstance(obj, ScriptModule) else {}
    manifest = {"format": FORMAT, "main": main.qualified_name,
                "functions": {q: _function_json(f, paths) for q, f in functions.items()},
                "module": _module_json(root, "", arrays, _attributes_read(functions), types)
                if root is not None else None}
    constants = {f"{q}/{i}": np.asarray(n.attr("value").array)
                 for q, f in functions.items()
                 for i, n in enumerate(_tensor_constants(f.graph))}
    tmp = f"{os.fspath(path)}.partial"
    try:
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("manifest.json", json.dumps(manifest, indent=1, sort_keys=True))
            for q, f in functions.items():
                z.writestr(f"graphs/{q}.ir", str(f.graph))
                z.writestr(f"code/{q}.py", f.code)
            for name, data in (("params.npz", arrays), ("constants.npz", constants)):
                if data:
                    buf = io.BytesIO()
                    np.savez(buf, **data)
                    z.writestr(name, buf.getvalue())
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
            m.set(name, tuple(entry["value"]) if entry.get("tuple") else entry["value"])
    return m


def _npz(z: zipfile.ZipFile, name: str) -> dict[str, np.ndarray]:
    if name not in z.namelist():
        return {}
    with np.load(io.BytesIO(z.read(name))) as npz:
        return {k: npz[k] for k in npz.files}


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
        arrays, constants = _npz(z, "params.npz"), _npz(z, "constants.npz")
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
        graph = parse_ir(texts[q])
        for i, n in enumerate(_tensor_constants(graph)):  # exact data for the rounded text
            n.set_attr("value", "t", TensorData(constants[f"{q}/{i}"], n.attr("value").text))
        built[q] = ScriptFunction(graph, sig, q, callees, module)
        return built[q]
    main = build(manifest["main"])
    if root is None:
        return main
    for q in manifest["functions"]:
        build(q)
    methods: dict[str, dict[str, ScriptFunction]] = {}  # by module type (instances of one
    for q, info in manifest["functions"].items():       # scripted class share its methods)
        if info["module"] is not None:
            methods.setdefault(modules[info["module"]].qualified_name, {})[info["name"]] = built[q]

    def wrap(path: str) -> ScriptModule:
        m = modules[path]
        children = {k: wrap(f"{path}.{k}" if path else k) for k, v in m.attributes.items()
                    if isinstance(v, RuntimeModule)}
        return ScriptModule(m, None, methods.get(m.qualified_name, {}), children)
    return wrap("")
