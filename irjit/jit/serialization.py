"""`irjit.jit.save` / `irjit.jit.load`: a scripted function as a zip archive holding, for it
and every function it calls, the graph text, the `.code` and the signature."""

from __future__ import annotations

import json
import os
import zipfile
from typing import Union

from irjit.compiler.parser import parse_ir
from irjit.ops.registry import NO_DEFAULT
from irjit.ops.type_parser import parse_type_text

from .emitter import Parameter, Signature
from .script import ScriptFunction

FORMAT = "irjit.jit/1"


def _functions(fn: ScriptFunction, out: dict[str, ScriptFunction]) -> dict[str, ScriptFunction]:
    out.setdefault(fn.name, fn)
    for callee in fn.callees.values():
        _functions(callee, out)
    return out


def _signature_json(fn: ScriptFunction) -> dict:
    sig = fn.signature
    params = []
    for p in sig.params:
        entry = {"name": p.name, "type": str(p.type)}
        if p.default is not NO_DEFAULT:
            entry["default"] = p.default
        params.append(entry)
    return {"name": sig.name, "qualified_name": fn.qualified_name, "params": params,
            "return_type": str(sig.return_type), "callees": sorted(fn.callees)}


def save(fn: ScriptFunction, path: Union[str, os.PathLike]) -> None:
    """Write `fn` (and the scripted functions it calls) to a zip archive at `path`."""
    if not isinstance(fn, ScriptFunction):
        raise TypeError(f"irjit.jit.save expects a ScriptFunction, got {type(fn).__name__}")
    functions = _functions(fn, {})
    manifest = {"format": FORMAT, "main": fn.name,
                "functions": {name: _signature_json(f) for name, f in functions.items()}}
    tmp = f"{os.fspath(path)}.partial"
    try:
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("manifest.json", json.dumps(manifest, indent=1, sort_keys=True))
            for name, f in functions.items():
                z.writestr(f"graphs/{name}.ir", str(f.graph))
                z.writestr(f"code/{name}.py", f.code)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def load(path: Union[str, os.PathLike]) -> ScriptFunction:
    """Read an archive written by `save` back into a callable ScriptFunction."""
    try:
        z = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as e:
        raise ValueError(f"{os.fspath(path)}: not an irjit.jit archive ({e})") from None
    with z:
        try:
            manifest = json.loads(z.read("manifest.json"))
        except KeyError:
            raise ValueError(f"{os.fspath(path)}: not an irjit.jit archive (no manifest.json)") \
                from None
        if manifest.get("format") != FORMAT:
            raise ValueError(f"{os.fspath(path)}: unsupported archive format "
                             f"{manifest.get('format')!r} (expected {FORMAT!r})")
        texts = {name: z.read(f"graphs/{name}.ir").decode() for name in manifest["functions"]}
    built: dict[str, ScriptFunction] = {}

    def build(name: str) -> ScriptFunction:
        if name in built:
            return built[name]
        info = manifest["functions"][name]
        params = [Parameter(p["name"], parse_type_text(p["type"]), p.get("default", NO_DEFAULT))
                  for p in info["params"]]
        sig = Signature(info["name"], params, parse_type_text(info["return_type"]))
        callees = {c: build(c) for c in info["callees"]}
        built[name] = ScriptFunction(parse_ir(texts[name]), sig, info["qualified_name"], callees)
        return built[name]
    return build(manifest["main"])
