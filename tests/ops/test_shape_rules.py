"""Shape and dtype rules, through the registry entries that carry them."""

import numpy as np

from irjit.ops import registry, shape_rules


def test_entries_carry_explicit_and_symbolic_rules():
    mm = registry.get("aten::mm")
    assert mm.shape_rule([(2, 3), (3, 4)], [None, None]) == (2, 4)
    add = registry.get("aten::add.Tensor")
    assert add.shape_rule([(2, 1), (1, 5), None], [None, None, 1]) == (2, 5)
    relu = registry.get("aten::relu")
    assert relu.shape_rule([(3, None)], [None]) == (3, None)
    assert registry.get("aten::view").shape_rule is None


def test_conv_and_pool_rules():
    conv = registry.get("aten::conv2d")
    assert conv.shape_rule([(1, 3, 8, 8), (4, 3, 3, 3), None], [None, None, None, 1, 1, 1, 1]) == \
        (1, 4, 8, 8)
    assert shape_rules.explicit_sizes("aten::max_pool2d", [(1, 2, 8, 8)],
                                      [None, [2, 2], [], 0, 1, False]) == (1, 2, 4, 4)
    assert shape_rules.explicit_sizes("aten::relu", [(1,)], [None]) is NotImplemented


def test_reductions():
    assert shape_rules.symbolic_sizes("aten::sum", [(2, 3)], [None], [0]) == ()
    assert shape_rules.symbolic_sizes("aten::mean", [(2, 3)], [None, [1], True], [0]) == (2, 1)
    assert shape_rules.symbolic_sizes("aten::amax", [(2, 3)], [None, [0], False], [0]) == (3,)


def test_dtype_rules():
    f32, i64 = np.dtype(np.float32), np.dtype(np.int64)
    assert registry.get("aten::lt.Tensor").dtype_rule([f32, f32]) == np.bool_
    assert registry.get("aten::sigmoid").dtype_rule([i64]) == np.float32
    assert registry.get("aten::add.Tensor").dtype_rule([i64, f32]) == np.float32
    assert registry.get("aten::mm").dtype_rule is None
