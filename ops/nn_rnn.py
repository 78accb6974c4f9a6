"""Recurrent cells (LSTM, GRU, tanh/ReLU RNN), the fused gate ops their derivatives use
(`_thnn_fused_*`), and the multi-layer, bidirectional, batch_first sequence ops
(`aten::lstm.input`, `aten::gru.input`, `aten::rnn_tanh.input`, `aten::rnn_relu.input`) as
torch.nn.LSTM/GRU/RNN call them. Sequence derivatives re-run the cells through the emitter
and back-propagate through time with the cells' own derivative formulas."""

from __future__ import annotations

import numpy as np

from .nn_dropout import _dropout
from .nn_linear import linear_grads
from .registry import derivative, get, op


def _sig(x):
    return 1.0 / (1.0 + np.exp(-x))


def _gates(x, h, w_ih, w_hh, b_ih, b_hh):
    ig = x @ w_ih.T + (b_ih if b_ih is not None else 0)
    hg = h @ w_hh.T + (b_hh if b_hh is not None else 0)
    return ig, hg


# ---- fused gate ops

@op("aten::_thnn_fused_lstm_cell(Tensor input_gates, Tensor hidden_gates, Tensor cx, Tensor? input_bias=None, Tensor? hidden_bias=None) -> (Tensor, Tensor, Tensor)")
def fused_lstm_cell(input_gates, hidden_gates, cx, input_bias=None, hidden_bias=None):
    """(hy, cy, workspace): the workspace holds the activated gates [i, f, g, o]."""
    gates = input_gates + hidden_gates
    if input_bias is not None:
        gates = gates + input_bias + hidden_bias
    i, f, g, o = np.split(gates, 4, axis=-1)
    i, f, g, o = _sig(i), _sig(f), np.tanh(g), _sig(o)
    cy = f * cx + i * g
    hy = o * np.tanh(cy)
    return hy.astype(cx.dtype), cy.astype(cx.dtype), np.concatenate([i, f, g, o], axis=-1).astype(cx.dtype)


@op("aten::_thnn_fused_lstm_cell_backward_impl(Tensor? grad_hy, Tensor? grad_cy, Tensor cx, Tensor cy, Tensor workspace, bool has_bias) -> (Tensor, Tensor, Tensor)")
def fused_lstm_cell_backward(grad_hy, grad_cy, cx, cy, workspace, has_bias):
    i, f, g, o = np.split(workspace, 4, axis=-1)
    ghy = grad_hy if grad_hy is not None else np.zeros_like(cy)
    gcy = grad_cy if grad_cy is not None else np.zeros_like(cy)
    tcy = np.tanh(cy)
    gc = gcy + ghy * o * (1 - tcy * tcy)
    gates = np.concatenate([gc * g * i * (1 - i), gc * cx * f * (1 - f), gc * i * (1 - g * g),
                            ghy * tcy * o * (1 - o)], axis=-1)
    return gates, gc * f, gates.sum(axis=0) if has_bias else None


@op("aten::_thnn_fused_gru_cell(Tensor input_gates, Tensor hidden_gates, Tensor hx, Tensor? input_bias=None, Tensor? hidden_bias=None) -> (Tensor, Tensor)")
def fused_gru_cell(input_gates, hidden_gates, hx, input_bias=None, hidden_bias=None):
    """(hy, workspace): the workspace holds [r, z, n, hx, hidden n-gate]."""
    if input_bias is not None:
        input_gates = input_gates + input_bias
        hidden_gates = hidden_gates + hidden_bias
    ir, iz, in_ = np.split(input_gates, 3, axis=-1)
    hr, hz, hn = np.split(hidden_gates, 3, axis=-1)
    r, z = _sig(ir + hr), _sig(iz + hz)
    n = np.tanh(in_ + r * hn)
    hy = (1 - z) * n + z * hx
    return hy.astype(hx.dtype), np.concatenate([r, z, n, hx, hn], axis=-1).astype(hx.dtype)


@op("aten::_thnn_fused_gru_cell_backward(Tensor grad_hy, Tensor workspace, bool has_bias) -> (Tensor, Tensor, Tensor, Tensor, Tensor)")
def fused_gru_cell_backward(grad_hy, workspace, has_bias):
    r, z, n, hx, hn = np.split(workspace, 5, axis=-1)
    g = grad_hy
    gn = g * (1 - z) * (1 - n * n)
    gz = g * (hx - n) * z * (1 - z)
    gr = gn * hn * r * (1 - r)
    gi = np.concatenate([gr, gz, gn], axis=-1)
    gh = np.concatenate([gr, gz, gn * r], axis=-1)
    return (gi, gh, g * z, gi.sum(axis=0) if has_bias else None, gh.sum(axis=0) if has_bias else None)


# ---- cells

def _check_cell(x, h, w_ih, name):
    if x.ndim not in (1, 2):
        raise RuntimeError(f"{name}: Expected input to be 1D or 2D, got {x.ndim}D instead")
    if x.shape[-1] != w_ih.shape[1]:
        raise RuntimeError(f"input has inconsistent input_size: got {x.shape[-1]} expected {w_ih.shape[1]}")


@op("aten::lstm_cell(Tensor input, Tensor[] hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None) -> (Tensor, Tensor)")
def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    _check_cell(input, hx[0], w_ih, "lstm_cell")
    ig, hg = _gates(input, hx[0], w_ih, w_hh, b_ih, b_hh)
    hy, cy, _ = fused_lstm_cell(ig, hg, hx[1])
    return hy, cy


@derivative("aten::lstm_cell")
def lstm_cell_grad(e, grads, inputs, outputs):
    x, (h, c), w_ih, w_hh, b_ih, b_hh = inputs
    ig = e.op("aten::linear", x, w_ih, b_ih)
    hg = e.op("aten::linear", h, w_hh, b_hh)
    _, cy, ws = e.op("aten::_thnn_fused_lstm_cell", ig, hg, c)
    g_gates, g_c, _ = e.op("aten::_thnn_fused_lstm_cell_backward_impl", grads[0], grads[1], c, cy, ws, False)
    gx, gwi, gbi = linear_grads(e, g_gates, x, w_ih, b_ih)
    gh, gwh, gbh = linear_grads(e, g_gates, h, w_hh, b_hh)
    return [gx, [gh, g_c], gwi, gwh, gbi, gbh]


@op("aten::gru_cell(Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None) -> Tensor")
def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    _check_cell(input, hx, w_ih, "gru_cell")
    ig, hg = _gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    return fused_gru_cell(ig, hg, hx)[0]


@derivative("aten::gru_cell")
def gru_cell_grad(e, grads, inputs, outputs):
    x, h, w_ih, w_hh, b_ih, b_hh = inputs
    ig = e.op("aten::linear", x, w_ih, b_ih)
    hg = e.op("aten::linear", h, w_hh, b_hh)
    _, ws = e.op("aten::_thnn_fused_gru_cell", ig, hg, h)
    g_ig, g_hg, g_h, _, _ = e.op("aten::_thnn_fused_gru_cell_backward", grads[0], ws, False)
    gx, gwi, gbi = linear_grads(e, g_ig, x, w_ih, b_ih)
    gh, gwh, gbh = linear_grads(e, g_hg, h, w_hh, b_hh)
    return [gx, e.op("aten::add", gh, g_h), gwi, gwh, gbi, gbh]


@op("aten::rnn_tanh_cell(Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None) -> Tensor")
def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    _check_cell(input, hx, w_ih, "rnn_tanh_cell")
    ig, hg = _gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    return np.tanh(ig + hg).astype(hx.dtype)


@op("aten::rnn_relu_cell(Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None) -> Tensor")
def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    _check_cell(input, hx, w_ih, "rnn_relu_cell")
    ig, hg = _gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    return np.maximum(ig + hg, 0).astype(hx.dtype)


def _rnn_cell_grads(e, g_pre, inputs):
    x, h, w_ih, w_hh, b_ih, b_hh = inputs
    gx, gwi, gbi = linear_grads(e, g_pre, x, w_ih, b_ih)
    gh, gwh, gbh = linear_grads(e, g_pre, h, w_hh, b_hh)
    return [gx, gh, gwi, gwh, gbi, gbh]


@derivative("aten::rnn_tanh_cell")
def rnn_tanh_cell_grad(e, grads, inputs, outputs):
    y = outputs[0]  # tanh' = 1 - y^2
    return _rnn_cell_grads(e, e.op("aten::mul", grads[0], e.op("aten::rsub", e.op("aten::mul", y, y), 1)), inputs)


@derivative("aten::rnn_relu_cell")
def rnn_relu_cell_grad(e, grads, inputs, outputs):
    return _rnn_cell_grads(e, e.op("aten::threshold_backward", grads[0], outputs[0], 0), inputs)


# ---- multi-layer sequence ops

_CELLS = {"lstm": (lstm_cell, "aten::lstm_cell"), "gru": (gru_cell, "aten::gru_cell"),
          "rnn_tanh": (rnn_tanh_cell, "aten::rnn_tanh_cell"), "rnn_relu": (rnn_relu_cell, "aten::rnn_relu_cell")}


def _layer_params(params, has_biases, num_layers, dirs):
    per = 4 if has_biases else 2
    if len(params) != per * num_layers * dirs:
        raise NotImplementedError("recurrent layers with projections (proj_size > 0) are not supported")
    out = []
    for k in range(num_layers * dirs):
        p = params[k * per:(k + 1) * per]
        out.append(list(p) if has_biases else list(p) + [None, None])
    return out


def run_sequence(mode, x, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    """The numpy forward of the sequence ops: (output, [final states...])."""
    cell = _CELLS[mode][0]
    lstm = mode == "lstm"
    h0s = list(hx) if lstm else [hx]
    unbatched = x.ndim == 2
    if unbatched:
        x = x[:, None] if not batch_first else x[None]
        h0s = [h[:, None] for h in h0s]
    if batch_first:
        x = x.swapaxes(0, 1)
    dirs = 2 if bidirectional else 1
    ps = _layer_params(params, has_biases, num_layers, dirs)
    finals = [[None] * (num_layers * dirs) for _ in h0s]
    layer_in = x
    for l in range(num_layers):
        outs = []
        for d in range(dirs):
            k = l * dirs + d
            state = [h[k] for h in h0s]
            seq = [None] * layer_in.shape[0]
            for t in (range(layer_in.shape[0]) if d == 0 else reversed(range(layer_in.shape[0]))):
                res = cell(layer_in[t], state if lstm else state[0], *ps[k])
                state = list(res) if lstm else [res]
                seq[t] = state[0]
            for j, s_ in enumerate(state):
                finals[j][k] = s_
            outs.append(np.stack(seq, 0))
        layer_in = np.concatenate(outs, axis=-1) if dirs == 2 else outs[0]
        if dropout > 0 and train and l < num_layers - 1:
            layer_in = _dropout(layer_in, dropout, True, False, False)
    out = layer_in.swapaxes(0, 1) if batch_first else layer_in
    finals = [np.stack(f, 0) for f in finals]
    if unbatched:
        out = out[0] if batch_first else out[:, 0]
        finals = [f[:, 0] for f in finals]
    return np.asarray(out, order="C"), finals


@op("aten::lstm.input(Tensor input, Tensor[] hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor, Tensor)")
def lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    out, (h, c) = run_sequence("lstm", input, hx, params, has_biases, num_layers, dropout, train,
                               bidirectional, batch_first)
    return out, h, c


def _make_seq(mode):
    @op(f"aten::{mode}.input(Tensor input, Tensor hx, Tensor[] params, bool has_biases, int num_layers, "
        "float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor)")
    def seq(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
        out, (h,) = run_sequence(mode, input, hx, params, has_biases, num_layers, dropout, train,
                                 bidirectional, batch_first)
        return out, h
    return seq


for _m in ("gru", "rnn_tanh", "rnn_relu"):
    _make_seq(_m)


def _add(e, a, b):
    return b if a is None else (a if b is None else e.op("aten::add", a, b))


def sequence_grad(e, mode, grads, inputs):
    """Back-propagation through time, re-running each cell through the emitter and applying
    the cell's derivative formula step by step."""
    x, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first = inputs
    if dropout > 0 and train and num_layers > 1:
        raise NotImplementedError("the derivative of a recurrent layer with inter-layer dropout in "
                                  "training mode is not supported")
    kind = _CELLS[mode][1]
    cell_grad = get(kind).derivative
    lstm = mode == "lstm"
    h0s = list(hx) if lstm else [hx]
    nstate = len(h0s)
    g_out, g_fin = grads[0], list(grads[1:1 + nstate])
    unbatched = len(e.shape(x)) == 2
    bdim = 0 if batch_first else 1
    if unbatched:
        x = e.op("aten::unsqueeze", x, bdim)
        h0s = [e.op("aten::unsqueeze", h, 1) for h in h0s]
        g_out = e.op("aten::unsqueeze", g_out, bdim) if g_out is not None else None
        g_fin = [e.op("aten::unsqueeze", g, 1) if g is not None else None for g in g_fin]
    if batch_first:
        x = e.op("aten::transpose", x, 0, 1)
        g_out = e.op("aten::transpose", g_out, 0, 1) if g_out is not None else None
    dirs = 2 if bidirectional else 1
    ps = _layer_params(params, has_biases, num_layers, dirs)
    h0_steps = [e.op("aten::unbind", h, 0) for h in h0s]
    # forward, keeping every step's (input, state in, state out)
    tape = {}
    layer_in = e.op("aten::unbind", x, 0)
    T = len(layer_in)
    hidden = e.size(h0s[0])[-1]
    layer_inputs = []
    for l in range(num_layers):
        layer_inputs.append(layer_in)
        outs = []
        for d in range(dirs):
            k = l * dirs + d
            state = [h[k] for h in h0_steps]
            seq = [None] * T
            for t in (range(T) if d == 0 else reversed(range(T))):
                cin = [layer_in[t], state if lstm else state[0]] + ps[k]
                res = e.op(kind, *cin)
                new = list(res) if lstm else [res]
                tape[(k, t)] = (cin, new)
                state = new
                seq[t] = new[0]
            outs.append(seq)
        layer_in = [e.op("aten::cat", [outs[0][t], outs[1][t]], -1) for t in range(T)] if dirs == 2 else outs[0]
    # backward
    g_steps = e.op("aten::unbind", g_out, 0) if g_out is not None else [None] * T
    g_params = [[None] * 4 for _ in ps]
    g_h0 = [[None] * (num_layers * dirs) for _ in range(nstate)]
    g_fin_steps = [e.op("aten::unbind", g, 0) if g is not None else None for g in g_fin]
    for l in reversed(range(num_layers)):
        g_in = [None] * T
        for d in range(dirs):
            k = l * dirs + d
            g_state = [g[k] if g is not None else None for g in g_fin_steps]
            for t in (reversed(range(T)) if d == 0 else range(T)):
                g_o = g_steps[t]
                if g_o is not None and dirs == 2:
                    g_o = e.op("aten::slice", g_o, -1, d * hidden, (d + 1) * hidden, 1)
                g_h = _add(e, g_state[0], g_o)
                cin, new = tape[(k, t)]
                outs_g = [g_h] + g_state[1:]
                if all(g is None for g in outs_g):
                    continue
                outs_g = [g if g is not None else e.zeros_like(o) for g, o in zip(outs_g, new)]
                res = cell_grad(e, outs_g if lstm else [outs_g[0]], cin, new if lstm else [new[0]])
                g_in[t] = _add(e, g_in[t], res[0])
                g_state = list(res[1]) if lstm else [res[1]]
                for j in range(4):
                    if res[2 + j] is not None:
                        g_params[k][j] = _add(e, g_params[k][j], res[2 + j])
            for j in range(nstate):
                g_h0[j][k] = g_state[j]
        g_steps = g_in
    zeros_in = e.zeros_like(layer_inputs[0][0])
    gx = e.op("aten::stack", [g if g is not None else zeros_in for g in g_steps], 0)
    g_hx = [e.op("aten::stack", [g if g is not None else e.zeros_like(h0_steps[j][k])
                                 for k, g in enumerate(g_h0[j])], 0) for j in range(nstate)]
    if batch_first:
        gx = e.op("aten::transpose", gx, 0, 1)
    if unbatched:
        gx = e.op("aten::squeeze", gx, bdim)
        g_hx = [e.op("aten::squeeze", g, 1) for g in g_hx]
    per = 4 if has_biases else 2
    g_flat = [g for gp in g_params for g in gp[:per]]
    return [gx, g_hx if lstm else g_hx[0], g_flat] + [None] * 6


@derivative("aten::lstm.input")
def lstm_grad(e, grads, inputs, outputs):
    return sequence_grad(e, "lstm", grads, inputs)


@derivative("aten::gru.input")
def gru_grad(e, grads, inputs, outputs):
    return sequence_grad(e, "gru", grads, inputs)


@derivative("aten::rnn_tanh.input")
def rnn_tanh_grad(e, grads, inputs, outputs):
    return sequence_grad(e, "rnn_tanh", grads, inputs)


@derivative("aten::rnn_relu.input")
def rnn_relu_grad(e, grads, inputs, outputs):
    return sequence_grad(e, "rnn_relu", grads, inputs)
