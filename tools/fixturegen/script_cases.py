"""Functions written once for both `torch.jit.script` and `irjit.jit.script`: the fixture
generator imports this file with `torch` bound to PyTorch, the tests with `torch` bound to irjit
(set IRJIT_CASES_TORCH=1 to get PyTorch). Line numbers matter: fixtures carry them. Modules
written for both frameworks are in model_cases.py."""

import importlib
import os
from typing import Dict, List, Optional, Tuple

torch = importlib.import_module("torch" if os.environ.get("IRJIT_CASES_TORCH") else "irjit")
Tensor = torch.Tensor


def add_mul(x: Tensor, y: Tensor) -> Tensor:
    return x * y + x


def tanh_linear(x: Tensor, w: Tensor, b: Tensor) -> Tensor:
    return torch.tanh(x @ w + b)


def decision_gate(x: Tensor) -> Tensor:
    if x.sum() > 0:
        return x
    else:
        return -x


def elif_chain(x: Tensor, n: int) -> Tensor:
    if n == 0:
        y = x
    elif n == 1:
        y = x * 2
    else:
        y = x * 3
    return y


def for_range(x: Tensor, n: int) -> Tensor:
    for i in range(n):
        x = x * 2 + i
    return x


def for_list(xs: List[Tensor]) -> Tensor:
    s = xs[0]
    for t in xs:
        s = s + t
    return s


def while_loop(x: Tensor, n: int) -> Tensor:
    i = 0
    while i < n:
        x = x + 1
        i += 1
    return x


def break_loop(x: Tensor, n: int) -> Tensor:
    for i in range(n):
        if i > 2:
            break
        x = x + 1
    return x


def continue_loop(x: Tensor, n: int) -> Tensor:
    for i in range(n):
        if i % 2 == 0:
            continue
        x = x * 2
    return x


def early_return_loop(x: Tensor, n: int) -> Tensor:
    for i in range(n):
        if i == 3:
            return x
        x = x * 2
    return x + 1


def tuple_return(x: Tensor, y: Tensor) -> Tuple[Tensor, Tensor]:
    return x + y, x - y


def tuple_unpack(x: Tensor) -> Tensor:
    a, b = torch.relu(x), torch.sigmoid(x)
    return a * b


def list_cat(x: Tensor) -> Tensor:
    parts = [x, x * 2]
    parts.append(x * 3)
    return torch.cat(parts, 0)


def dict_lookup(x: Tensor) -> Tensor:
    d = {"a": x, "b": x * 2}
    return d["a"] + d["b"]


def index_slice(x: Tensor) -> Tensor:
    return x[0] + x[1:3].sum() + x[:, 1]


def methods(x: Tensor) -> Tensor:
    return x.sum(1).mean() + x.relu().max()


def optional_scale(x: Tensor, scale: Optional[float] = None) -> Tensor:
    if scale is None:
        return x
    return x * scale


def helper(x: Tensor) -> Tensor:
    return torch.tanh(x) + 1


def call_helper(x: Tensor) -> Tensor:
    return helper(x) * helper(x + 1)


def aug_assign(x: Tensor, y: Tensor) -> Tensor:
    z = x * 1
    z += y
    z *= 2
    return z


def int_float_math(x: Tensor, n: int, f: float) -> Tensor:
    k = n * 2 + f
    return x * k


def nested_if_in_loop(x: Tensor, n: int) -> Tensor:
    for i in range(n):
        if i < 2:
            x = x + 1
        elif i < 4:
            x = x * 2
        else:
            x = x - 1
    return x


def keyword_args(x: Tensor) -> Tensor:
    return torch.clamp(x, min=0.0, max=1.0) + torch.softmax(x, dim=1)


def bool_flag(x: Tensor, flag: bool) -> Tensor:
    if flag and x.dim() == 2:
        x = x.t()
    return torch.matmul(x, x)


def list_int_arg(x: Tensor) -> Tensor:
    return x.view([-1]).sum(0) + x.permute(1, 0).sum(dim=[0, 1], keepdim=False)


def ternary(x: Tensor, n: int) -> Tensor:
    k = 2 if n > 0 else 3
    return x * k


CASES = [add_mul, tanh_linear, decision_gate, elif_chain, for_range, for_list, while_loop,
         break_loop, continue_loop, early_return_loop, tuple_return, tuple_unpack, list_cat,
         dict_lookup, index_slice, methods, optional_scale, call_helper, aug_assign, int_float_math,
         nested_if_in_loop, keyword_args, bool_flag, list_int_arg, ternary]


def shapes_and_sizes(x: Tensor) -> Tensor:
    n = x.shape[0]
    m = x.size(1)
    return x.view(-1, m) * n + x.dim()


def asserts_and_raises(x: Tensor, n: int) -> Tensor:
    assert n >= 0, "n must not be negative"
    if n > 10:
        raise ValueError("n is too large")
    return x * n


def list_comprehension(xs: List[int]) -> List[int]:
    return [v * 2 for v in xs]


def enumerate_zip(xs: List[Tensor], ys: List[float]) -> Tensor:
    acc = xs[0] * 0
    for i, x in enumerate(xs):
        acc = acc + x * i
    for x, y in zip(xs, ys):
        acc = acc + x * y
    return acc


def while_true_break(x: Tensor) -> Tensor:
    while True:
        x = x * 2
        if x.sum() > 100:
            break
    return x


def negative_index_and_list_slice(xs: List[int], x: Tensor) -> int:
    ys = xs[1:]
    return ys[-1] + xs[0] + int(x[-1].sum().item())


def min_max_builtins(a: int, b: float) -> float:
    return min(a, 3) + max(b, 1.5) + float(abs(a))


def set_list_item(xs: List[int]) -> List[int]:
    ys = xs[:]
    ys[0] = 7
    return ys


def dict_loop(d: Dict[str, Tensor]) -> Tensor:
    keys = d.keys()
    out = d["a"]
    for k in keys:
        out = out + d[k]
    return out


def power_and_floordiv(x: Tensor, n: int) -> Tensor:
    return x ** 2 + x // 3 + n ** 2 + n // 2


def string_format(x: Tensor, name: str) -> str:
    if name == "x":
        return "got x"
    return "got " + name


def cat_dim_keyword(x: Tensor, y: Tensor) -> Tensor:
    return torch.cat([x, y], dim=1).t() @ x


CASES += [shapes_and_sizes, asserts_and_raises, list_comprehension, enumerate_zip,
          while_true_break, negative_index_and_list_slice, min_max_builtins, set_list_item,
          dict_loop, power_and_floordiv, string_format, cat_dim_keyword]

