"""irjit: read, run, rewrite and compile PyTorch's TorchScript IR without PyTorch.

The public API is this package's `__all__`; everything under `irjit.compiler`,
`irjit.runtime`, `irjit.ops` and `irjit.tools` may change. Names are imported on first use
(PEP 562): `import irjit` takes ~0.1 s, the op registry and passes ~1 s more.
"""

from importlib import import_module as _import_module
from pathlib import Path as _Path

# In a source checkout the layers live in sibling folders (compiler/, runtime/, ...), mapped
# under `irjit` by pyproject's package-dir; make the same names resolve without installing.
_root = _Path(__file__).resolve().parent.parent
if (_root / "pyproject.toml").is_file() and (_root / "compiler" / "__init__.py").is_file():
    __path__.append(str(_root))  # noqa: F821  (a package's __path__)

_EXPORTS = {
    # reading and printing graphs
    "parse_ir": "irjit.compiler.parser",
    "print_graph": "irjit.compiler.printer",
    "Graph": "irjit.compiler.ir",
    "structural_hash": "irjit.compiler.structural_hash",
    "IRParseError": "irjit.ops.errors",
    "IRTypeError": "irjit.ops.errors",
    "IRRuntimeError": "irjit.ops.errors",
    # running graphs
    "load": "irjit.runtime.loader",
    "grad": "irjit.runtime.loader",
    "Function": "irjit.runtime.loader",
    "compile": "irjit.runtime.native",
    "Tensor": "irjit.ops.tensor",
    "manual_seed": "irjit.ops.random",
    "no_grad": "irjit.runtime.autograd",
    # autodiff
    "differentiate": "irjit.compiler.autodiff.differentiate",
    "Gradient": "irjit.compiler.autodiff.gradient",
    # graph executors and their settings
    "GraphExecutor": "irjit.runtime.executor",
    "last_executed_optimized_graph": "irjit.runtime.executor.counters",
    "set_profiling_executor": "irjit.compiler.settings",
    "set_num_profiled_runs": "irjit.compiler.settings",
    "set_autodiff_thresholds": "irjit.compiler.settings",
    "set_guard_style": "irjit.compiler.settings",
    "debug_set_autodiff_subgraph_inlining": "irjit.compiler.settings",
    "set_backend": "irjit.runtime.executor.plan",
    # eager tensors (every other registered op resolves through `irjit.functional`)
    "tensor": "irjit.eager",
    "as_tensor": "irjit.eager",
    "from_numpy": "irjit.eager",
    "get_default_dtype": "irjit.eager",
    "set_grad_enabled": "irjit.runtime.autograd",
    "is_grad_enabled": "irjit.runtime.autograd",
    # pictures and export
    "to_dot": "irjit.graph_dot",
    "to_html": "irjit.html_view",
    "export_onnx": "irjit.onnx_export",
}
# torch-namespace functions and dtypes listed in `__all__`; any registered op resolves too
_EAGER = {"randn", "rand", "zeros", "ones", "empty", "arange", "full", "zeros_like", "ones_like",
          "rand_like", "randn_like", "empty_like", "full_like", "cat", "stack", "matmul", "tanh",
          "sigmoid", "relu", "exp", "log", "where", "float32", "float64", "float16", "int64",
          "int32", "int16", "int8", "uint8", "bool", "float", "double", "long", "int", "half"}
_SUBMODULES = {"passes", "nn", "jit"}

__all__ = sorted(_EXPORTS) + sorted(_EAGER) + sorted(_SUBMODULES)


def __getattr__(name: str):
    if name in _SUBMODULES:
        return _import_module(f"{__name__}.{name}")
    module = _EXPORTS.get(name)
    if module is None:  # an op or dtype of the torch namespace, else AttributeError
        value = getattr(_import_module(f"{__name__}.functional"), name)
    else:
        value = getattr(_import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
