"""Graphs whose tensor constants PyTorch 2.13 prints with `at::Tensor`'s ostream (up to ten
elements): rank >= 3 blocks `(i,j,.,.) = ...`, scale factors, `Columns a to b` chunks,
scientific notation, integer, bool and half types.

Writes `<out>/printed_tensors/NN_<name>.ir` (a traced `x + c`, printed by `str(graph)`) and
`values.npz` beside them (each constant's exact values, keyed by file stem): the
`printed_tensors` section of ``python -m irjit.tools.fixturegen`` (dev-only, needs torch)::

    .venv-torch/bin/python -m irjit.tools.fixturegen --out tests/fixtures/generated --only printed_tensors
"""

from __future__ import annotations

from pathlib import Path


def _cases():
    import torch

    g = torch.Generator().manual_seed(0)
    return {
        "rank4_one_block": torch.randn(1, 1, 2, 2, generator=g) * 3,
        "rank3_two_blocks": torch.randn(2, 1, 2, generator=g) * 3,
        "rank5_first_index_fastest": torch.randn(2, 2, 1, 1, 2, generator=g) * 3,
        "rank3_long": torch.randint(-50, 50, (2, 2, 2), generator=g),
        "rank3_double": torch.randn(1, 2, 3, generator=g, dtype=torch.float64) * 3,
        "rank4_wide_values": torch.randn(2, 1, 1, 2, generator=g) * 3000,
        "rank3_scale_per_block": torch.tensor([[[123456.7, 234567.8], [100000.1, 500000.5]],
                                               [[1.5, 2.0], [3.0, 4.0]]]),
        "rank3_small_scale": torch.tensor([[[0.001234, 0.002]], [[0.5, 0.25]]]),
        "rank3_scientific": torch.tensor([[[1e-8, 2.5e6], [3e6, 4e6]]]),
        "rank3_integral_floats": torch.tensor([[[1e6, 2.5e6], [3e6, 4e6]], [[1.0, 2], [3, 4]]]),
        "rank3_inf_nan": torch.tensor([[[float("nan"), float("inf")], [-float("inf"), 4.0]]]),
        "rank3_bool": torch.tensor([[[True, False]]]),
        "rank3_half": torch.tensor([[[1.5, 2.0]], [[3.0, 4.0]]], dtype=torch.float16),
        "rank3_columns": torch.tensor([[[123456.7, 2.5, 3, 4, 5, 6, 7, 8, 9, 10.5]]]),
        "rank3_long_columns": torch.tensor([[[1234567, 2, 3, 4, 5, 6, 7, 8, 9, 10]]]),
        "rank2_columns_single_last": torch.tensor([[123456.7, 2.5, 3, 4, 5, 6, 7]]),
        "rank2_long_columns": torch.tensor([[1234567, 2, 3, 4, 5, 6, 7, 8, 9, 10]]),
        "rank2_scale": torch.tensor([[123456.7, 223456.7, 300000, 400000, 500000],
                                     [600000, 700000, 800000, 900000, 1000000]]),
        "rank1_scale": torch.tensor([0.00123, 0.0456, 0.0789]),
        "rank3_empty": torch.zeros(0, 2, 2),
    }


def generate(out: Path) -> dict:
    """Write the fixtures into `out`; return the section's counts for summary.json."""
    import numpy as np
    import torch

    out.mkdir(parents=True, exist_ok=True)
    values = {}
    for i, (name, const) in enumerate(_cases().items(), 1):
        def add_constant(x, c=const):
            return x + c

        graph = torch.jit.trace(add_constant, torch.zeros(const.shape, dtype=const.dtype)).graph
        torch._C._jit_pass_inline(graph)
        text = str(graph).replace(f"{Path(__file__).resolve()}", "/home/user/printed_tensors.py")
        stem = f"{i:02d}_{name}"
        (out / f"{stem}.ir").write_text(text)
        values[stem] = const.numpy()
    np.savez(out / "values.npz", **values)
    return {"printed_tensors": len(values)}
