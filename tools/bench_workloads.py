"""The six benchmark workloads (tests/fixtures/bench): their inputs from a fixed seed, which of
them require grad, their minimal byte and flop counts, and hand-written numpy forwards and
forward+backwards (the gradient of the sum of all outputs' sums w.r.t. every input that
requires grad, as `Function.backward` gives; None for the others, which are not computed)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

BENCH = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "bench"
NAMES = ("elementwise_chain", "lstm_cell", "mlp", "rnn_loop", "seed_conv_relu", "tiny_linear_tanh")


@dataclass(frozen=True)
class Workload:
    name: str
    ir_path: Path
    meta: dict

    def inputs(self, seed: int = 0) -> list[np.ndarray]:
        """Standard-normal inputs of the shapes and dtypes the metadata gives."""
        rng = np.random.default_rng(seed)
        return [rng.standard_normal(i["shape"]).astype(i["dtype"]) for i in self.meta["inputs"]]

    @property
    def requires_grad(self) -> tuple[bool, ...]:
        """Per input, whether the workload differentiates w.r.t. it (the metadata's flag)."""
        return tuple(bool(i.get("requires_grad", True)) for i in self.meta["inputs"])

    def bytes_moved(self, backward: bool) -> int:
        """Compulsory traffic of a perfectly fused kernel (see the metadata's bytes_note)."""
        return self.meta["bytes_fwdbwd" if backward else "bytes_fwd"]

    def flops(self, backward: bool) -> int:
        return self.meta["flops_fwdbwd" if backward else "flops_fwd"]


def load_workload(name: str) -> Workload:
    if name not in NAMES:
        raise ValueError(f"unknown workload {name!r} (one of {', '.join(NAMES)})")
    return Workload(name, BENCH / f"{name}.ir", json.loads((BENCH / f"{name}.json").read_text()))


def _sigmoid(x):
    with np.errstate(over="ignore"):  # exp(-x) overflows to inf for very negative x: sigmoid 0
        return 1.0 / (1.0 + np.exp(-x))


def _windows(x, kh: int, kw: int):
    from numpy.lib.stride_tricks import sliding_window_view
    return sliding_window_view(x, (kh, kw), axis=(2, 3))  # N, C, H', W', kh, kw


# ---- forwards

def _conv_relu(x, w):
    return np.maximum(np.einsum("nchwij,ocij->nohw", _windows(x, *w.shape[2:]), w, optimize=True), 0)


def _lstm(x, h, c, w_ih, w_hh, b_ih, b_hh):
    i, f, g, o = np.split(x @ w_ih.T + b_ih + h @ w_hh.T + b_hh, 4, axis=1)
    c2 = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
    return _sigmoid(o) * np.tanh(c2), c2


def _rnn(x, h, W, U):
    for i in range(x.shape[0]):
        h = np.tanh(x[i] @ W + h @ U)
    return h


NUMPY_FORWARD = {
    "elementwise_chain": lambda x, a, b: np.tanh(x * a + b) * _sigmoid(x) + x * x,
    "lstm_cell": _lstm,
    "mlp": lambda x, w1, b1, w2, b2: np.maximum(x @ w1.T + b1, 0) @ w2.T + b2,
    "rnn_loop": _rnn,
    "seed_conv_relu": _conv_relu,
    "tiny_linear_tanh": lambda x, h, W, b: np.tanh(x @ W.T + b + h),
}


# ---- forward + backward: (outputs, gradients in input order); `needs` says per input whether
# its gradient is wanted (the workload's requires_grad): one not wanted is None and, where it
# costs work of its own (the MLP's dx), not computed

def _wanted(grads: list, needs) -> list:
    return grads if needs is None else [g if need else None for g, need in zip(grads, needs)]


def _chain_grad(x, a, b, needs=None):
    t, s = np.tanh(x * a + b), _sigmoid(x)
    y = t * s + x * x
    du = (1 - t * t) * s
    return [y], _wanted([du * a + t * s * (1 - s) + 2 * x, du * x, du], needs)


def _lstm_grad(x, h, c, w_ih, w_hh, b_ih, b_hh, needs=None):
    gi, gf, gg, go = np.split(x @ w_ih.T + b_ih + h @ w_hh.T + b_hh, 4, axis=1)
    i, f, g, o = _sigmoid(gi), _sigmoid(gf), np.tanh(gg), _sigmoid(go)
    c2 = f * c + i * g
    tc = np.tanh(c2)
    h2 = o * tc
    dc2 = 1 + o * (1 - tc * tc)  # d(sum h2 + sum c2)/dc2
    dgates = np.concatenate([dc2 * g * i * (1 - i), dc2 * c * f * (1 - f),
                             dc2 * i * (1 - g * g), tc * o * (1 - o)], axis=1)
    db = dgates.sum(0)
    return [h2, c2], _wanted([dgates @ w_ih, dgates @ w_hh, dc2 * f, dgates.T @ x, dgates.T @ h, db, db],
                             needs)


def _mlp_grad(x, w1, b1, w2, b2, needs=None):
    z = x @ w1.T + b1
    r = np.maximum(z, 0)
    y = r @ w2.T + b2
    dy = np.ones_like(y)
    dz = (dy @ w2) * (z > 0)
    dx = dz @ w1 if needs is None or needs[0] else None  # (the workload's x needs none)
    return [y], _wanted([dx, dz.T @ x, dz.sum(0), dy.T @ r, dy.sum(0)], needs)


def _rnn_grad(x, h, W, U, needs=None):
    hs = [h]
    for i in range(x.shape[0]):
        hs.append(np.tanh(x[i] @ W + hs[-1] @ U))
    dh, dx = np.ones_like(h), np.empty_like(x)
    dW, dU = np.zeros_like(W), np.zeros_like(U)
    for i in reversed(range(x.shape[0])):
        dpre = dh * (1 - hs[i + 1] * hs[i + 1])
        dx[i] = dpre @ W.T
        dW += x[i].T @ dpre
        dU += hs[i].T @ dpre
        dh = dpre @ U.T
    return [hs[-1]], _wanted([dx, dh, dW, dU], needs)


def _conv_relu_grad(x, w, needs=None):
    kh, kw = w.shape[2:]
    pre = np.einsum("nchwij,ocij->nohw", _windows(x, kh, kw), w, optimize=True)
    dpre = (pre > 0).astype(x.dtype)
    dw = np.einsum("nohw,nchwij->ocij", dpre, _windows(x, kh, kw), optimize=True)
    dx = np.zeros_like(x)
    oh, ow = dpre.shape[2:]
    for i in range(kh):
        for j in range(kw):
            dx[:, :, i:i + oh, j:j + ow] += np.einsum("nohw,oc->nchw", dpre, w[:, :, i, j])
    return [np.maximum(pre, 0)], _wanted([dx, dw], needs)


def _tiny_grad(x, h, W, b, needs=None):
    y = np.tanh(x @ W.T + b + h)
    dpre = 2 * (1 - y * y)  # the output is returned twice
    return [y, y], _wanted([dpre @ W, dpre, dpre.T @ x, dpre.sum(0)], needs)


NUMPY_FORWARD_BACKWARD = {
    "elementwise_chain": _chain_grad,
    "lstm_cell": _lstm_grad,
    "mlp": _mlp_grad,
    "rnn_loop": _rnn_grad,
    "seed_conv_relu": _conv_relu_grad,
    "tiny_linear_tanh": _tiny_grad,
}
