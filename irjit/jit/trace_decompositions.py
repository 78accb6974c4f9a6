"""Ops PyTorch's tracer never records (its `DONT_RECORD_TRACE`): a call to one of them is
traced as the ops it decomposes into, in the order ATen runs them. Convolutions become
`aten::_convolution` with every flag spelled out; the recurrent cells become their
linear/chunk/gate ops (`RNN.cpp`'s LSTMCell, GRUCell and SimpleCell). Each function receives
the op's arguments in schema order and calls the constituent ops, which the tracer records, or
returns NotImplemented to have the op recorded as it is."""

from __future__ import annotations

from typing import Any, Callable

from irjit.runtime import autograd
from irjit.runtime.autograd import run_op


def _below_autograd(result):
    """PyTorch records `_convolution` beneath autograd, so its traced type does not require
    grad; mark the node just recorded the same way."""
    tracer = autograd.TRACER[0]
    n = tracer.graph.insert_point.prev
    n.output.type = n.output.type.with_(requires_grad=False)
    return result


def _convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    return _below_autograd(run_op("aten::_convolution", input, weight, bias, list(stride),
                                  list(padding), list(dilation), transposed, list(output_padding),
                                  groups, False, False, True, True))


def _conv(nd: int) -> Callable[..., Any]:
    def decompose(input, weight, bias, stride, padding, dilation, groups):
        if isinstance(padding, str):  # `_convolution_mode`, which irjit's registry lacks:
            return NotImplemented     # the conv is recorded as it is
        return _convolution(input, weight, bias, stride, padding, dilation, False, [0] * nd,
                            groups)
    return decompose


def _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation):
    return _convolution(input, weight, bias, stride, padding, dilation, True, output_padding,
                        groups)


def _linear(x, w, b):
    return run_op("aten::linear", x, w, b)


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    h, c = hx
    gates = run_op("aten::add_", _linear(h, w_hh, b_hh), _linear(input, w_ih, b_ih), 1)
    i, f, g, o = run_op("aten::unsafe_chunk", gates, 4, 1)
    ingate = run_op("aten::sigmoid_", i)
    forgetgate = run_op("aten::sigmoid_", f)
    cellgate = run_op("aten::tanh_", g)
    outgate = run_op("aten::sigmoid_", o)
    cy = run_op("aten::add_", run_op("aten::mul", forgetgate, c),
                run_op("aten::mul", ingate, cellgate), 1)
    hy = run_op("aten::mul", outgate, run_op("aten::tanh", cy))
    return hy, cy


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    i_r, i_z, i_n = run_op("aten::unsafe_chunk", _linear(input, w_ih, b_ih), 3, 1)
    h_r, h_z, h_n = run_op("aten::unsafe_chunk", _linear(hx, w_hh, b_hh), 3, 1)
    reset = run_op("aten::sigmoid_", run_op("aten::add_", h_r, i_r, 1))
    update = run_op("aten::sigmoid_", run_op("aten::add_", h_z, i_z, 1))
    new = run_op("aten::tanh_", run_op("aten::add", i_n, run_op("aten::mul_", h_n, reset), 1))
    diff = run_op("aten::mul_", run_op("aten::sub", hx, new, 1), update)
    return run_op("aten::add_", diff, new, 1)


def _simple_cell(nonlinearity: str) -> Callable[..., Any]:
    def cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
        pre = run_op("aten::add_", _linear(hx, w_hh, b_hh), _linear(input, w_ih, b_ih), 1)
        return run_op(nonlinearity, pre)
    return cell


DECOMPOSITIONS: dict[str, Callable[..., Any]] = {
    "aten::conv1d": _conv(1), "aten::conv2d": _conv(2), "aten::conv3d": _conv(3),
    "aten::convolution": _convolution,
    "aten::conv_transpose1d": _conv_transpose, "aten::conv_transpose2d": _conv_transpose,
    "aten::conv_transpose3d": _conv_transpose,
    "aten::lstm_cell": lstm_cell, "aten::gru_cell": gru_cell,
    "aten::rnn_tanh_cell": _simple_cell("aten::tanh"), "aten::rnn_relu_cell": _simple_cell("aten::relu"),
}
