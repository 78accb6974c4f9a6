"""TorchScript's dict builtins on Python dicts (insertion-ordered, like c10::Dict): len,
indexing, get/setdefault/pop/popitem, keys/values/items, update, clear, copy, membership
and the `dict(...)` constructors. Tensor keys hash by identity, as in TorchScript."""

from __future__ import annotations

from .containers import cop

KEY_TYPES = ("str", "int", "bool", "float", "complex", "Tensor")


def _each(template: str) -> list[str]:
    """The schema `template` for every dict key type ({K} -> key type)."""
    return [template.format(K=k) for k in KEY_TYPES]


def _key_error(key):
    return RuntimeError(f"KeyError: {key}")


@cop(*_each("aten::len.Dict_{K}(Dict({K}, t) self) -> int"))
def len_dict(self):
    return len(self)


@cop(*_each("aten::__getitem__.Dict_{K}(Dict({K}, t) self, {K} key) -> t(*)"))
def getitem(self, key):
    if key not in self:
        raise _key_error(key)
    return self[key]


@cop(*_each("aten::_set_item.{K}(Dict({K}, t)(a!) l, {K}(b -> *) idx, t(c -> *) v) -> ()"))
def set_item(l, idx, v):
    l[idx] = v


@cop(*_each("aten::__contains__.{K}(Dict({K}, t) dict, {K} key) -> bool"))
def contains(dict, key):
    return key in dict


@cop(*[s for k in KEY_TYPES for s in (
    f"aten::get.{k}(Dict({k}, t) self, {k} key) -> t(*)?",
    f"aten::get.default_{k}(Dict({k}, t) self, {k} key, t default_value) -> t(*)")])
def get(self, key, default_value=None):
    return self.get(key, default_value)


@cop(*_each("aten::setdefault.{K}(Dict({K}, t)(a!) self, {K}(b -> *) key, t(c -> *) default_value) -> t(*)"))
def setdefault(self, key, default_value):
    return self.setdefault(key, default_value)


_MISSING = object()


def _pop(self, key, default_value=_MISSING):
    if key in self:
        return self.pop(key)
    if default_value is _MISSING:
        raise _key_error(key)
    return default_value


@cop(*_each("aten::pop.Dict_{K}(Dict({K}, t)(a!) self, {K} key) -> t(*)"))
def pop(self, key):
    return _pop(self, key)


@cop(*_each("aten::pop.Dict_default_{K}(Dict({K}, t)(a!) self, {K} key, t default_value) -> t(*)"))
def pop_default(self, key, default_value):
    return _pop(self, key, default_value)


@cop(*_each("aten::popitem.{K}(Dict({K}, t)(a!) self) -> (({K}, t))"))
def popitem(self):
    """Removes and returns the FIRST item, as TorchScript's dictPopItem does."""
    if not self:
        raise RuntimeError("popitem(): dictionary is empty")
    key = next(iter(self))
    return (key, self.pop(key))


@cop(*_each("aten::keys.{K}(Dict({K}, t) self) -> {K}[](*)"))
def keys(self):
    return list(self.keys())


@cop(*_each("aten::values.{K}(Dict({K}, t) self) -> t[](*)"))
def values(self):
    return list(self.values())


@cop(*_each("aten::items.{K}(Dict({K}, t) self) -> (({K}, t)[])"))
def items(self):
    return [(k, v) for k, v in self.items()]


@cop(*_each("aten::clear.{K}(Dict({K}, t)(a!) self) -> ()"))
def clear(self):
    self.clear()


@cop(*_each("aten::update.{K}(Dict({K}, t)(a!) self, Dict({K}, t)(a!) to_add) -> ()"))
def update(self, to_add):
    self.update(to_add)


@cop(*_each("aten::copy.Dict_{K}(Dict({K}, t)(a) self) -> Dict({K}, t)"))
def copy(self):
    return dict(self)


@cop("aten::dict() -> Dict(str, Tensor)")
def empty_dict():
    return {}


@cop(*[s for k in KEY_TYPES for s in (
    f"aten::dict.{k}(({k}, tVal)[] inputs) -> Dict({k}, tVal)",
    f"aten::dict.Dict_{k}(Dict({k}, t)(a) self) -> Dict({k}, t)")])
def make_dict(inputs):
    """dict(list of (key, value) tuples) or a shallow copy of a dict."""
    if isinstance(inputs, dict):
        return dict(inputs)
    return {k: v for k, v in inputs}
