"""Built-in forwards of torch.nn modules against the op compositions they stand for."""

import numpy as np
import pytest

import irjit.ops  # noqa: F401  (registers every op)
from irjit.runtime import nn_modules
from irjit.runtime.autograd import backward, run_op
from irjit.runtime.module import Module
from irjit.runtime.nn_modules import BUILTIN_FORWARDS, call_module
from irjit.ops.registry import is_registered
from irjit.ops.tensor import Tensor

r = np.random.default_rng(11)


def T(a, grad=False):
    return Tensor(np.array(a, dtype=np.float64) if not isinstance(a, np.ndarray) else a, grad)


def mod(cls, **attrs):
    m = Module(f"__torch__.torch.nn.modules.x.___torch_mangle_3.{cls}")
    for k, v in attrs.items():
        m.set(k, v)
    return m


def close(a, b):
    np.testing.assert_allclose(a.data if isinstance(a, Tensor) else a, b.data if isinstance(b, Tensor) else b,
                               atol=1e-12)


def test_linear_and_gradients_flow_to_parameters():
    w, b = T(r.standard_normal((3, 4)), True), T(r.standard_normal(3), True)
    x = T(r.standard_normal((2, 4)))
    y = call_module(mod("Linear", weight=w, bias=b), x)
    close(y, run_op("aten::linear", x, w, b))
    backward([y], [np.ones((2, 3))])
    close(b.grad, np.full(3, 2.0))
    assert call_module(mod("Linear", weight=w), x).shape == (2, 3)  # bias missing: None


def test_conv2d_defaults_and_hyperparameters():
    w, b = T(r.standard_normal((4, 2, 3, 3))), T(r.standard_normal(4))
    x = T(r.standard_normal((1, 2, 7, 7)))
    close(call_module(mod("Conv2d", weight=w, bias=b), x), run_op("aten::conv2d", x, w, b, 1, 0, 1, 1))
    m = mod("Conv2d", weight=w, bias=None, stride=(2, 2), padding=(1, 1), dilation=(2, 1), groups=1)
    close(call_module(m, x), run_op("aten::conv2d", x, w, None, [2, 2], [1, 1], [2, 1], 1))
    m = mod("Conv2d", weight=w, bias=b, padding="same")
    assert call_module(m, x).shape == (1, 4, 7, 7)


def test_conv_padding_modes_pad_first():
    w = T(r.standard_normal((2, 3, 3)))
    x = T(r.standard_normal((1, 3, 6)))
    m = mod("Conv1d", weight=w, bias=None, padding=(2,), padding_mode="circular")
    ref = run_op("aten::conv1d", run_op("aten::pad", x, [2, 2], "circular", None), w, None, 1, 0, 1, 1)
    close(call_module(m, x), ref)


def test_conv_transpose_output_size():
    w = T(r.standard_normal((3, 2, 3, 3)))
    x = T(r.standard_normal((1, 3, 4, 4)))
    m = mod("ConvTranspose2d", weight=w, bias=None, stride=(2, 2), padding=(1, 1))
    assert call_module(m, x).shape == (1, 2, 7, 7)
    assert call_module(m, x, [8, 8]).shape == (1, 2, 8, 8)
    close(call_module(m, x), run_op("aten::conv_transpose2d", x, w, None, [2, 2], [1, 1], [0, 0], 1, [1, 1]))


def test_sequential_runs_children_in_order():
    seq = mod("Sequential")
    seq.set("0", mod("Linear", weight=T(r.standard_normal((5, 4))), bias=T(r.standard_normal(5))))
    seq.set("1", mod("Tanh"))
    seq.set("2", mod("Linear", weight=T(r.standard_normal((2, 5))), bias=None))
    x = T(r.standard_normal((3, 4)))
    h = run_op("aten::linear", x, seq.get("0").get("weight"), seq.get("0").get("bias"))
    ref = run_op("aten::linear", run_op("aten::tanh", h), seq.get("2").get("weight"), None)
    close(call_module(seq, x), ref)


def test_unknown_class_and_module_list():
    with pytest.raises(KeyError, match="MyBlock"):
        call_module(mod("MyBlock"), T([1.0]))
    seq = mod("Sequential")
    seq.set("0", mod("MyBlock"))
    with pytest.raises(KeyError, match="MyBlock"):
        call_module(seq, T([1.0]))
    with pytest.raises(TypeError, match="ModuleList is not callable"):
        call_module(mod("ModuleList"), T([1.0]))
    nn_modules.set_fallback(lambda m, x: ("fallback", m.class_name))
    try:
        assert call_module(mod("MyBlock"), T([1.0])) == ("fallback", "MyBlock")
    finally:
        nn_modules.set_fallback(None)


@pytest.mark.parametrize("cls,attrs,kind,args", [
    ("ReLU", {}, "aten::relu", []), ("Sigmoid", {}, "aten::sigmoid", []), ("SiLU", {}, "aten::silu", []),
    ("GELU", {"approximate": "tanh"}, "aten::gelu", ["tanh"]), ("GELU", {}, "aten::gelu", ["none"]),
    ("LeakyReLU", {"negative_slope": 0.2}, "aten::leaky_relu", [0.2]), ("LeakyReLU", {}, "aten::leaky_relu", [0.01]),
    ("ELU", {}, "aten::elu", [1.0, 1, 1]), ("Hardtanh", {"min_val": -2.0}, "aten::hardtanh", [-2.0, 1.0]),
    ("Softmax", {"dim": 0}, "aten::softmax", [0]), ("Softmax", {}, "aten::softmax", [0]),
    ("LogSoftmax", {"dim": -1}, "aten::log_softmax", [-1]), ("Flatten", {}, "aten::flatten", [1, -1]),
])
def test_activation_and_shape_modules(cls, attrs, kind, args):
    if not is_registered(kind):
        pytest.skip(f"{kind} is not registered")
    x = T(r.standard_normal((2, 3, 2)))
    close(call_module(mod(cls, **attrs), x), run_op(kind, x, *args))


def test_identity_and_dropout():
    x = T(r.standard_normal((4, 4)))
    assert call_module(mod("Identity"), x) is x
    assert call_module(mod("Dropout", p=0.5, training=False), x).data is x.data
    y = call_module(mod("Dropout", training=True), x)  # p defaults to 0.5
    assert set(np.unique(np.round(y.data / x.data, 6))) <= {0.0, 2.0}


def test_batch_norm_module_training_and_eval():
    rm, rv, nbt = Tensor(np.zeros(3)), Tensor(np.ones(3)), Tensor(np.array(0))
    m = mod("BatchNorm2d", weight=T(np.ones(3)), bias=T(np.zeros(3)), running_mean=rm, running_var=rv,
            num_batches_tracked=nbt, training=True, momentum=0.1, eps=1e-5)
    x = T(r.standard_normal((2, 3, 2, 2)))
    y = call_module(m, x)
    np.testing.assert_allclose(y.data.mean(axis=(0, 2, 3)), 0, atol=1e-12)
    np.testing.assert_allclose(rm.data, 0.1 * x.data.mean(axis=(0, 2, 3)))
    assert nbt.data == 1
    m.set("training", False)
    close(call_module(m, x), run_op("aten::batch_norm", x, m.get("weight"), m.get("bias"), rm, rv, False, 0.1,
                                    1e-5, True))
    # momentum=None: cumulative average over the batches seen
    m2 = mod("BatchNorm1d", running_mean=Tensor(np.zeros(3)), running_var=Tensor(np.ones(3)),
             num_batches_tracked=Tensor(np.array(0)), training=True, momentum=None)
    x1 = T(r.standard_normal((5, 3)))
    call_module(m2, x1)
    np.testing.assert_allclose(m2.get("running_mean").data, x1.data.mean(0))
    with pytest.raises(ValueError, match="expected 4D input"):
        call_module(m, T(np.zeros((2, 3))))


def test_norm_modules():
    x = T(r.standard_normal((2, 4, 3)))
    w, b = T(r.standard_normal(3)), T(r.standard_normal(3))
    close(call_module(mod("LayerNorm", weight=w, bias=b, normalized_shape=(3,), eps=1e-5), x),
          run_op("aten::layer_norm", x, [3], w, b, 1e-5, True))
    close(call_module(mod("LayerNorm", weight=w, bias=b), x), run_op("aten::layer_norm", x, [3], w, b))
    gw = T(r.standard_normal(4))
    close(call_module(mod("GroupNorm", num_groups=2, weight=gw, bias=None), x),
          run_op("aten::group_norm", x, 2, gw, None, 1e-5, True))


def test_embedding_module_negative_padding_idx():
    w = T(r.standard_normal((5, 2)), True)
    idx = Tensor(np.array([0, 4, 4]))
    y = call_module(mod("Embedding", weight=w, padding_idx=-1), idx)
    backward([y], [np.ones((3, 2))])
    np.testing.assert_allclose(np.asarray(w.grad)[4], 0)  # -1 means the last row
    np.testing.assert_allclose(np.asarray(w.grad)[0], 1)


def test_pooling_modules_defaults():
    x = T(r.standard_normal((1, 2, 6, 6)))
    close(call_module(mod("MaxPool2d", kernel_size=2), x), run_op("aten::max_pool2d", x, [2, 2], [2, 2]))
    close(call_module(mod("MaxPool2d", kernel_size=3, stride=1, padding=1), x),
          run_op("aten::max_pool2d", x, [3, 3], [1, 1], [1, 1]))
    out, idx = call_module(mod("MaxPool2d", kernel_size=2, return_indices=True), x)
    assert idx.dtype == np.int64
    close(call_module(mod("AvgPool2d", kernel_size=3, stride=2, padding=1, count_include_pad=False), x),
          run_op("aten::avg_pool2d", x, [3, 3], [2, 2], [1, 1], False, False, None))
    assert call_module(mod("AdaptiveAvgPool2d", output_size=(None, 2)), x).shape == (1, 2, 6, 2)
    assert call_module(mod("AdaptiveAvgPool2d", output_size=1), x).shape == (1, 2, 1, 1)
    assert call_module(mod("MaxPool1d", kernel_size=3), T(np.zeros((1, 2, 7)))).shape == (1, 2, 2)


def _lstm_module(cls, mult, layers=1, bidir=False, bias=True, **extra):
    m = mod(cls, **extra)
    for l in range(layers):
        for sfx in [""] + (["_reverse"] if bidir else []):
            insz = 3 if l == 0 else 4 * (2 if bidir else 1)
            m.set(f"weight_ih_l{l}{sfx}", T(r.standard_normal((mult * 4, insz))))
            m.set(f"weight_hh_l{l}{sfx}", T(r.standard_normal((mult * 4, 4))))
            if bias:
                m.set(f"bias_ih_l{l}{sfx}", T(r.standard_normal(mult * 4)))
                m.set(f"bias_hh_l{l}{sfx}", T(r.standard_normal(mult * 4)))
    return m


def test_lstm_module_infers_layout():
    m = _lstm_module("LSTM", 4, layers=2, bidir=True, batch_first=True)
    x = T(r.standard_normal((2, 5, 3)))
    out, (h, c) = call_module(m, x)
    assert out.shape == (2, 5, 8) and h.shape == (4, 2, 4) and c.shape == (4, 2, 4)
    params = [m.get(f"{n}_l{l}{s}") for l in range(2) for s in ("", "_reverse")
              for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
    z = Tensor(np.zeros((4, 2, 4)))
    ref = run_op("aten::lstm", x, [z, z], params, True, 2, 0.0, False, True, True)
    close(out, ref[0])
    close(c, ref[2])


def test_gru_rnn_and_cells():
    g = _lstm_module("GRU", 3, bias=False)
    x = T(r.standard_normal((5, 2, 3)))
    out, h = call_module(g, x)
    ref = run_op("aten::gru", x, Tensor(np.zeros((1, 2, 4))), [g.get("weight_ih_l0"), g.get("weight_hh_l0")],
                 False, 1, 0.0, False, False, False)
    close(out, ref[0])
    rnn = _lstm_module("RNN", 1, nonlinearity="relu")
    out, h = call_module(rnn, x)
    assert (out.data >= 0).all()
    cell = mod("LSTMCell", weight_ih=T(r.standard_normal((16, 3))), weight_hh=T(r.standard_normal((16, 4))),
               bias_ih=None, bias_hh=None)
    hy, cy = call_module(cell, T(r.standard_normal((2, 3))))
    assert hy.shape == (2, 4)
    gcell = mod("GRUCell", weight_ih=T(r.standard_normal((12, 3))), weight_hh=T(r.standard_normal((12, 4))))
    xi, hi = T(r.standard_normal((2, 3))), T(r.standard_normal((2, 4)))
    close(call_module(gcell, xi, hi), run_op("aten::gru_cell", xi, hi, gcell.get("weight_ih"), gcell.get("weight_hh")))


def test_every_listed_module_has_a_forward():
    for name in ["Linear", "Conv1d", "Conv2d", "ConvTranspose2d", "ReLU", "Tanh", "Sigmoid", "GELU", "SiLU",
                 "LeakyReLU", "ELU", "Hardtanh", "Softmax", "LogSoftmax", "Identity", "Flatten", "Sequential",
                 "ModuleList", "BatchNorm1d", "BatchNorm2d", "LayerNorm", "GroupNorm", "Embedding", "Dropout",
                 "MaxPool1d", "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d", "LSTM", "GRU", "LSTMCell", "GRUCell"]:
        assert name in BUILTIN_FORWARDS
