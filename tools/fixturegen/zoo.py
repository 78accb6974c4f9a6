"""Specs for the model/function zoo: how to build each model and its example inputs.

Inputs are built by ``make_inputs(spec, tag)`` under a seed derived from the spec name,
so every consumer (roundtrip graphs, profiling runs, run cases) sees the same values.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import torch

from .common import load_models, seed

M = load_models()


def r(*shape, dtype=torch.float32):
    return torch.randn(*shape, dtype=dtype)


def ri(lo, hi, *shape):
    return torch.randint(lo, hi, shape, dtype=torch.int64)


@dataclass
class ModSpec:
    name: str
    cls: str
    inputs: Callable[[], tuple]
    script: bool = True
    trace: bool = True
    freeze: bool = True
    kwargs: dict = field(default_factory=dict)
    methods: tuple = ()  # extra exported methods to print

    def build(self, train: bool = False):
        seed("model:" + self.name)
        m = getattr(M, self.cls)(**self.kwargs)
        m.train(train)
        if not train:
            m.eval()
        return m


@dataclass
class FnSpec:
    name: str
    inputs: Callable[[], tuple]
    script: bool = True
    trace: bool = True

    @property
    def fn(self):
        return getattr(M, self.name)


def make_inputs(spec, tag: str = "") -> tuple:
    seed("inputs:" + spec.name + tag)
    return spec.inputs()


def _causal_mask():
    m = torch.triu(torch.ones(3, 3, dtype=torch.bool), 1)
    return m.unsqueeze(0).expand(2, 3, 3).contiguous()


MODULES = [
    ModSpec("conv_relu", "ConvRelu", lambda: (r(1, 3, 6, 6),)),
    ModSpec("mycell", "MyCell", lambda: (r(3, 4), r(3, 4))),
    ModSpec("mycell_gate", "MyCellGate", lambda: (r(3, 4), r(3, 4))),
    ModSpec("mlp", "MLP", lambda: (r(2, 8),)),
    ModSpec("seq_mlp", "SeqMLP", lambda: (r(2, 8),)),
    ModSpec("modulelist", "ModuleListNet", lambda: (r(2, 6),)),
    ModSpec("moduledict", "ModuleDictNet", lambda: (r(2, 6),)),
    ModSpec("conv_bn_pool", "ConvBnPool", lambda: (r(1, 3, 6, 6),)),
    ModSpec("small_cnn", "SmallCNN", lambda: (r(2, 2, 6, 6),)),
    ModSpec("conv_block", "ConvBlock", lambda: (r(1, 2, 6, 6),)),
    ModSpec("conv1d", "Conv1dNet", lambda: (r(2, 3, 8),)),
    ModSpec("conv_variants", "ConvVariants", lambda: (r(1, 4, 6, 6),)),
    ModSpec("conv_transpose", "ConvTranspose", lambda: (r(1, 4, 3, 3),)),
    ModSpec("pooling", "Pooling", lambda: (r(1, 2, 6, 6),)),
    ModSpec("upsample", "UpsampleNet", lambda: (r(1, 2, 3, 3),)),
    ModSpec("lstm_cell", "LSTMCellManual", lambda: (r(2, 4), r(2, 5), r(2, 5))),
    ModSpec("gru_cell", "GRUCellManual", lambda: (r(2, 4), r(2, 5))),
    ModSpec("lib_lstm_cell", "LibLSTMCell", lambda: (r(2, 4), r(2, 5), r(2, 5))),
    ModSpec("lib_gru_cell", "LibGRUCell", lambda: (r(2, 4), r(2, 5))),
    ModSpec("lib_rnn_cell", "LibRNNCell", lambda: (r(2, 4), r(2, 5))),
    ModSpec("rnn_loop", "RNNLoop", lambda: (r(4, 2, 3), r(2, 4), r(2, 4))),
    ModSpec("lib_lstm", "LibLSTM", lambda: (r(2, 3, 4),)),
    ModSpec("lib_gru", "LibGRU", lambda: (r(3, 2, 4),)),
    ModSpec("attention", "Attention", lambda: (r(2, 3, 8),)),
    ModSpec("masked_attention", "MaskedAttention", lambda: (r(2, 3, 6), _causal_mask())),
    ModSpec("lib_mha", "LibMHA", lambda: (r(2, 3, 8),)),
    ModSpec("lib_transformer", "LibTransformerLayer", lambda: (r(2, 3, 8),)),
    ModSpec("layernorm", "LayerNormNet", lambda: (r(2, 3, 6),)),
    ModSpec("norms", "Norms", lambda: (r(2, 4, 4, 3),)),
    ModSpec("embedding", "EmbeddingNet", lambda: (ri(0, 10, 2, 3),)),
    ModSpec("bn1d_dropout", "BN1dDropout", lambda: (r(4, 6),)),
    ModSpec("batchnorm_only", "BatchNormOnly", lambda: (r(2, 3, 4, 4),)),
    ModSpec("dropout_eval", "DropoutEval", lambda: (r(2, 5),)),
    ModSpec("if_else", "IfElse", lambda: (r(3, 3),)),
    ModSpec("for_loop", "ForLoop", lambda: (r(2, 3), 4), trace=False),
    ModSpec("while_loop", "WhileLoop", lambda: (r(2, 3), 20.0), trace=False),
    ModSpec("nested_control", "NestedControl", lambda: (r(2, 3), True), trace=False),
    ModSpec("nested_loops", "NestedLoops", lambda: (r(2, 2), 3, 2), trace=False),
    ModSpec("early_return", "EarlyReturn", lambda: (r(2, 3), 2), trace=False),
    ModSpec("break_continue", "BreakContinue", lambda: ([3, -1, 5, 200, 7], r(2, 2)), trace=False),
    ModSpec("tuple_list_dict", "TupleListDict", lambda: (r(2, 2), r(2, 2)), trace=False),
    ModSpec("optional_arg", "OptionalArg", lambda: (r(2, 3), 2.0, r(3)), trace=False),
    ModSpec("optional_return", "OptionalReturn", lambda: (r(2, 3),), trace=False),
    ModSpec("scalar_arith", "ScalarArith", lambda: (7, 3, 2.25, False), trace=False),
    ModSpec("list_comp", "ListComp", lambda: (r(2, 2), 3), trace=False),
    ModSpec("list_ops", "ListOps", lambda: ([1, 2, 3], 4), trace=False),
    ModSpec("string_ops", "StringOps", lambda: (r(2, 2), "scale_by_x"), trace=False),
    ModSpec("namedtuple_ret", "NamedTupleRet", lambda: (r(2, 3),)),
    ModSpec("namedtuple_stats", "NamedTupleStats", lambda: (r(2, 3),), trace=False),
    ModSpec("dict_ops", "DictOps", lambda: (r(2, 2), ["a", "b", "c"]), trace=False),
    ModSpec("inplace", "Inplace", lambda: (r(3, 3),)),
    ModSpec("slice_index", "SliceIndex", lambda: (r(4, 5), torch.tensor([2, 0]))),
    ModSpec("cat_stack", "CatStack", lambda: (r(3, 4), r(3, 4))),
    ModSpec("where_clamp", "WhereClamp", lambda: (r(3, 4), r(3, 4))),
    ModSpec("gather_index", "GatherIndex", lambda: (r(3, 4), torch.tensor([2, 0]), ri(0, 4, 3, 2))),
    ModSpec("reductions", "Reductions", lambda: (r(3, 4),)),
    ModSpec("float64", "Float64Net", lambda: (r(2, 4, dtype=torch.float64),)),
    ModSpec("int_tensor", "IntTensorOps", lambda: (ri(1, 10, 2, 3), ri(1, 5, 2, 3))),
    ModSpec("type_conv", "TypeConv", lambda: (r(2, 3), ri(0, 5, 2, 3))),
    ModSpec("creation", "Creation", lambda: (r(2, 3), 4), trace=False),
    ModSpec("activations", "Activations", lambda: (r(3, 4),)),
    ModSpec("mat_ops", "MatOps", lambda: (r(3, 4), r(4, 5), r(2, 3, 4), r(5))),
    ModSpec("broadcast", "Broadcast", lambda: (r(3, 4), r(4), r(3, 1))),
    ModSpec("shape_ops", "ShapeOps", lambda: (r(2, 3, 4),), trace=False),
    ModSpec("helper_methods", "HelperMethods", lambda: (r(2, 4),), methods=("other", "helper")),
    ModSpec("params", "ParamsNet", lambda: (r(2, 4),)),
    ModSpec("final_const", "FinalConst", lambda: (r(2, 2),), trace=False),
    ModSpec("uses_class", "UsesClass", lambda: (r(2, 2), 3), trace=False),
    ModSpec("uses_enum", "UsesEnum", lambda: (r(2, 2), True), trace=False),
    ModSpec("uses_ignore", "UsesIgnore", lambda: (r(2, 2), False), trace=False),
    ModSpec("union_types", "UnionTypes", lambda: (r(2, 2), 3), trace=False),
    ModSpec("any_device", "AnyAndDevice", lambda: (r(2, 2),), trace=False),
    ModSpec("special_floats", "SpecialFloats", lambda: (r(2, 2),)),
    ModSpec("escaped_strings", "EscapedStrings", lambda: (r(2, 2), "x"), trace=False),
]

FUNCTIONS = [
    FnSpec("fn_pointwise", lambda: (r(4, 4), r(4, 4))),
    FnSpec("fn_arith", lambda: (r(3, 4), r(3, 4))),
    FnSpec("fn_divs", lambda: (r(3, 4), r(3, 4))),
    FnSpec("fn_unary", lambda: (r(3, 4),)),
    FnSpec("fn_compare", lambda: (r(3, 4), r(3, 4))),
    FnSpec("fn_softmax_attention", lambda: (r(2, 3, 4), r(2, 5, 4), r(2, 5, 4))),
    FnSpec("fn_layernorm", lambda: (r(2, 3, 6), r(6), r(6))),
    FnSpec("fn_if", lambda: (r(3, 3), r(3, 3))),
    FnSpec("fn_int_list", lambda: ([1, 2, 3, 4, 6], 3), trace=False),
    FnSpec("fn_chain_unary", lambda: (r(3, 4),)),
    FnSpec("fn_mul_sum", lambda: (r(3, 4), r(3, 4))),
    FnSpec("fn_many_outputs", lambda: (r(3, 4), r(3, 4))),
    FnSpec("fn_linear_f", lambda: (r(2, 4), r(3, 4), r(3))),
    FnSpec("fn_conv_f", lambda: (r(1, 2, 5, 5), r(3, 2, 3, 3), r(3))),
    FnSpec("fn_type_refine", lambda: (r(2, 3), r(2, 3), 3), trace=False),
    FnSpec("fn_loop", lambda: (r(2, 3), 3), trace=False),
    FnSpec("fn_while", lambda: (r(2, 3), 5), trace=False),
    FnSpec("fn_cat_where", lambda: (r(2, 3), r(2, 2))),
    FnSpec("fn_sum_of_squares", lambda: (r(3, 4), r(3, 4))),
    FnSpec("fn_mixed_scalar", lambda: (r(2, 3), 1.5, 2), trace=False),
    FnSpec("fn_mlp", lambda: (r(2, 8), r(16, 8), r(16), r(4, 16), r(4))),
    FnSpec("fn_lstm_cell", lambda: (r(2, 4), r(2, 5), r(2, 5), r(20, 4), r(20, 5), r(20), r(20))),
    FnSpec("fn_gelu_chain", lambda: (r(2, 4), r(4, 6))),
    FnSpec("fn_reduce_dims", lambda: (r(2, 3, 4),)),
    FnSpec("fn_matops", lambda: (r(3, 4), r(4, 5), r(2, 3, 4))),
    FnSpec("fn_slicing", lambda: (r(3, 4),)),
    FnSpec("fn_shapes", lambda: (r(2, 3, 4),)),
    FnSpec("fn_size_ops", lambda: (r(2, 3, 4),), trace=False),
    FnSpec("fn_split_chunk", lambda: (r(4, 4),)),
    FnSpec("fn_gather_index", lambda: (r(3, 4), torch.tensor([2, 0]), ri(0, 4, 3, 2))),
    FnSpec("fn_where_clamp", lambda: (r(3, 4), r(3, 4), r(3, 4) > 0)),
    FnSpec("fn_creation", lambda: (r(2, 3), 3), trace=False),
    FnSpec("fn_dtype", lambda: (r(2, 3), ri(0, 5, 2, 3))),
    FnSpec("fn_scalar_ops", lambda: (5, 2.5, True), trace=False),
    FnSpec("fn_strings", lambda: (7, "abc_def"), trace=False),
    FnSpec("fn_tuples", lambda: (r(2, 2), r(2, 2)), trace=False),
    FnSpec("fn_list_tensors", lambda: ([r(2), r(2), r(2)],), trace=False),
    FnSpec("fn_loop_carried", lambda: (r(2, 3), 4), trace=False),
    FnSpec("fn_nested_loops", lambda: (r(2, 3), 4), trace=False),
    FnSpec("fn_early_return", lambda: (r(2, 3), 2), trace=False),
    FnSpec("fn_calls_fn", lambda: (r(2, 3), r(2, 3))),
    FnSpec("fn_calls_fn_fork", lambda: (r(2, 3), r(2, 3)), trace=False),
    FnSpec("fn_dict", lambda: (r(2, 2), ["a", "b"]), trace=False),
    FnSpec("fn_namedtuple", lambda: (r(2, 3),), trace=False),
    FnSpec("fn_optional_ret", lambda: (r(2, 3), True), trace=False),
    FnSpec("fn_normalize", lambda: (r(3, 4),)),
    FnSpec("fn_embedding_f", lambda: (ri(0, 6, 2, 3), r(6, 4))),
    FnSpec("fn_activations", lambda: (r(3, 4),)),
    FnSpec("fn_dropout_eval", lambda: (r(3, 4),)),
    FnSpec("fn_batchnorm_f", lambda: (r(4, 3), r(3), r(3).abs() + 0.5, r(3), r(3), True), trace=False),
    FnSpec("fn_pool_f", lambda: (r(1, 2, 6, 6),)),
    FnSpec("fn_conv_transpose_f", lambda: (r(1, 2, 3, 3), r(2, 3, 3, 3))),
    FnSpec("fn_conv1d_f", lambda: (r(2, 3, 8), r(4, 3, 3), r(4))),
    FnSpec("fn_int_tensor", lambda: (ri(1, 10, 2, 3), ri(1, 5, 2, 3))),
    FnSpec("fn_float64", lambda: (r(2, 3, dtype=torch.float64), r(2, 3, dtype=torch.float64))),
    FnSpec("fn_misc_tensor_ops", lambda: (r(3, 4),)),
    FnSpec("fn_trace_consts", lambda: (r(2, 3),), script=False),
]

MOD_BY_NAME = {s.name: s for s in MODULES}
FN_BY_NAME = {s.name: s for s in FUNCTIONS}


def spec(name: str):
    return MOD_BY_NAME.get(name) or FN_BY_NAME[name]


def script_module(s: ModSpec, train: bool = False):
    return torch.jit.script(s.build(train))


def trace_module(s: ModSpec, inputs: tuple, train: bool = False):
    return torch.jit.trace(s.build(train), inputs, check_trace=False)


def freeze_module(s: ModSpec):
    return torch.jit.freeze(torch.jit.script(s.build(False)).eval())


def trace_fn(s: FnSpec, inputs: tuple):
    return torch.jit.trace(s.fn, inputs, check_trace=False)
