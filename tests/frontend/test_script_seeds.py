"""The trace-vs-script tutorial's scripting example (shared/seeds/003): DecisionGate and the
Model using it print the `.code` the tutorial shows, byte for byte, and survive save/load."""

from __future__ import annotations

import numpy as np

import irjit
import irjit.jit

from .model_support import load_models

CASES = load_models()
nn, torch = CASES.nn, CASES.torch

GATE_CODE = """def forward(self,
    x: Tensor) -> Tensor:
  if bool(torch.gt(torch.sum(x), 0)):
    _0 = x
  else:
    _0 = torch.neg(x)
  return _0
"""

MODEL_CODE = """def forward(self,
    x: Tensor,
    h: Tensor) -> Tuple[Tensor, Tensor]:
  dg = self.dg
  linear = self.linear
  _0 = torch.add((dg).forward((linear).forward(x, ), ), h)
  new_h = torch.tanh(_0)
  return (new_h, new_h)
"""


class Model(nn.Module):
    def __init__(self, dg):
        super().__init__()
        self.dg = dg
        self.linear = nn.Linear(4, 4)

    def forward(self, x, h):
        new_h = torch.tanh(self.dg(self.linear(x)) + h)
        return new_h, new_h


def test_tutorial_scripted_code_and_save_load(tmp_path):
    scripted_gate = irjit.jit.script(CASES.DecisionGate())
    assert scripted_gate.code == GATE_CODE
    net = Model(CASES.DecisionGate())
    scripted_net = irjit.jit.script(net)
    assert scripted_net.code == MODEL_CODE
    assert "prim::If" in [n.kind for n in scripted_net.inlined_graph.walk()]
    irjit.jit.save(scripted_net, tmp_path / "model.zip")
    loaded = irjit.jit.load(tmp_path / "model.zip")
    assert repr(loaded) == ("RecursiveScriptModule(\n  original_name=Model\n"
                            "  (dg): RecursiveScriptModule(original_name=DecisionGate)\n"
                            "  (linear): RecursiveScriptModule(original_name=Linear)\n)")
    assert loaded.code == MODEL_CODE
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    h = np.zeros((3, 4), np.float32)
    for a, b in zip(scripted_net(x, h), loaded(x, h)):
        np.testing.assert_allclose(a.data, b.data)
