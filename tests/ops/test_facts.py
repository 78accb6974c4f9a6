"""Per-op facts: one query API over registry entries and the kinds the registry does not run.

The side-effect decisions are pinned here. Two sets used to disagree on 14 kinds; each is
decided by PyTorch's `Node::hasSideEffects` (torch/csrc/jit/ir/ir.cpp), with one irjit rule on
top: guard nodes (Guard, TypeCheck, RequiresGradCheck) stay where they are.
"""

import pytest

from irjit.ops import facts, registry

# In PyTorch's hasSideEffects list.
PYTORCH_SIDE_EFFECTS = [
    "prim::PythonOp", "prim::IgnoredPythonOp", "prim::Print", "prim::RaiseException",
    "prim::SetAttr", "aten::warn", "aten::save", "aten::manual_seed", "prim::AddStatValue",
    "prim::TimePoint", "prim::CallFunction", "prim::CallMethod", "prim::BailoutTemplate",
    "prim::BailOut", "prim::rpc_async", "prim::rpc_sync", "prim::rpc_remote", "aten::wait",
    "cuda::set_stream", "cuda::_set_device", "cuda::_current_device", "cuda::synchronize",
    "prim::Enter", "prim::Exit",
]
GUARDS = ["prim::Guard", "prim::TypeCheck", "prim::RequiresGradCheck"]
# Not in PyTorch's list, and registered there with alias analysis that is not CONSERVATIVE
# (or front-end only, as prim::Store): removable when unused.
NO_SIDE_EFFECTS = ["prim::profile", "prim::profile_ivalue", "prim::fork", "prim::Store",
                   "aten::add", "aten::add_", "aten::append", "prim::ListConstruct", "prim::If"]


@pytest.mark.parametrize("kind", PYTORCH_SIDE_EFFECTS + GUARDS)
def test_side_effects(kind):
    assert facts.has_side_effects(kind) and facts.has_tag(kind, "side_effects")


@pytest.mark.parametrize("kind", NO_SIDE_EFFECTS)
def test_no_side_effects(kind):
    assert not facts.has_side_effects(kind)


def test_the_fourteen_disputed_kinds_are_decided():
    disputed = {"prim::PythonOp", "aten::save", "prim::BailoutTemplate", "prim::rpc_sync",
                "prim::rpc_remote", "cuda::set_stream", "cuda::_set_device",
                "cuda::_current_device", "cuda::synchronize", "prim::Store", "prim::profile",
                "prim::profile_ivalue", "prim::RequiresGradCheck", "prim::fork"}
    assert {k for k in disputed if facts.has_side_effects(k)} == disputed - {
        "prim::Store", "prim::profile", "prim::profile_ivalue", "prim::fork"}
    assert facts.kinds_with("side_effects") == set(PYTORCH_SIDE_EFFECTS + GUARDS)


def test_registry_entries_carry_the_facts():
    warn = registry.overloads("aten::warn")
    if warn:
        assert all(e.has_side_effects for e in warn)
    mul = registry.get("aten::mul.Tensor")
    assert {"pointwise", "broadcasting", "fusible", "differentiable"} <= mul.tags
    assert not mul.has_side_effects and not mul.is_random
    assert "comparison" in registry.get("aten::lt.Tensor").tags
    assert "view" in registry.get("aten::view").tags
    assert "reduction" in registry.get("aten::sum").tags


def test_differentiable_is_per_overload():
    """PyTorch's symbolic_script has mul.Tensor and mul.Scalar, not mul.int."""
    assert "differentiable" in registry.get("aten::mul.Scalar").tags
    assert "differentiable" not in registry.get("aten::mul.int").tags
    assert facts.in_symbolic_script("aten::transpose", "int")
    assert not facts.in_symbolic_script("aten::transpose", "Dimname")
    assert facts.has_tag("prim::ConstantChunk", "always_differentiable")


def test_random_ops_by_table_and_by_registry_flag():
    assert facts.has_tag("aten::rand_like", "random")
    flagged = [e for e in registry.all_entries() if e.nondeterministic]
    assert flagged and all(e.is_random and facts.has_tag(e.schema.name, "random") for e in flagged)
    assert {e.schema.name for e in flagged} <= facts.kinds_with("random")
    assert not facts.has_tag("aten::relu", "random")


def test_fusion_patterns():
    assert facts.fusion_patterns("aten::add") == ("TTS", "TSS")
    assert facts.fusion_patterns("aten::tanh") == ("T",)
    assert facts.fusion_patterns("aten::mm") == ()
    assert facts.kinds_with("fusible") <= facts.kinds_with("profiled")


def test_unknown_tags_are_a_bug():
    with pytest.raises(AssertionError, match="unknown tag"):
        facts.has_tag("aten::add", "pointwize")
