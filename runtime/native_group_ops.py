"""What runs a native group whose arguments require grad (GroupGradients decides which):

- NativeGroupOp, as PyTorch runs a DifferentiableGraph: `f` runs natively and the tape records
  a backward that runs `df` natively; both take and return bare arrays when their runners'
  plans can (`NativeRunner.run_arrays`), so a call makes no Tensor but its results. It records
  as the tape records an op: backward fails if a tensor `df` reads (the arguments that do not
  require grad too) was written in place afterwards, and only the outputs `df` takes a vjp of
  require grad (what depends on an input that requires grad).
- ViewGroupOp, for a group that only views one argument (x[i] in a loop): it records the
  windows its outputs view, and backward adds each gradient into the base's gradient in place.

Outputs that view an argument share its memory, version counter and base, as the
interpreter's views do."""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import numpy as np

from irjit.compiler.ir import Node
from irjit.ops import facts
from irjit.ops.tensor import Tensor

from .autograd import GRAD_MODE, GradNode, WindowEntry, fixed_vjps, is_broadcast, vjp_array

_ndarray = np.ndarray  # (a global: cheaper than the module attribute)


def share_bases(results: list, args: list) -> None:
    """Outputs that are views of an argument (or of an earlier output) share its version
    counter and base, as the interpreter's views do. An array that owns its memory and is no
    argument's was allocated after them: it cannot be a view of one."""
    arrays = None
    for j, r in enumerate(results):
        if not isinstance(r, Tensor):
            continue
        d = r.data
        if d.base is None:
            if arrays is None:
                arrays = [a.data for a in args if isinstance(a, Tensor)]
            for a in arrays:
                if d is a:
                    break
            else:
                continue
        for a in args + results[:j]:
            if isinstance(a, Tensor) and np.may_share_memory(d, a.data) and \
                    np.shares_memory(d, a.data):
                r._version = a._version
                r._base = a._base if a._base is not None else a
                break


class _Schema:
    __slots__ = ("name", "full_name")

    def __init__(self, name: str):
        self.name = self.full_name = name


def _run(runner, values: list) -> list:
    """`runner`'s outputs for `values` (arrays where tensors go) as arrays: of the arrays as
    they are when its plan takes them, else of Tensors of them, with grad mode off."""
    outs = runner.run_arrays(values, True)
    if outs is not None:
        return outs
    enabled, GRAD_MODE.enabled = GRAD_MODE.enabled, False
    try:
        outs = runner.run([Tensor(v) if isinstance(v, np.ndarray) else v for v in values])
    finally:
        GRAD_MODE.enabled = enabled
    return [o.data if isinstance(o, Tensor) else o for o in outs]


class _NativeBackward:
    """The tape's entry for a NativeGroupOp's calls (duck-types an OpEntry): `df` on the vjps
    of a call's outputs and the arrays it captured, which its GradNode holds as `inputs`."""

    __slots__ = ("op", "schema", "one_node")
    takes_broadcast_seed = True  # (`vjp_array`: a seed of ones may stay one broadcast element)

    def __init__(self, op: "NativeGroupOp"):
        self.op, self.schema = op, op.schema
        self.one_node: dict = {}  # (`autograd.backward_of_sums`: seeds, edges' positions)

    def derivative(self, emitter, grads: list, captured: list, outputs: list) -> list:
        vjps = []
        n = len(grads)
        for i in self.op.vjp_outputs:
            g = grads[i] if i < n else None
            if g is None:  # (an output without a gradient: zeros of its shape)
                ref = outputs[i]
                g = np.zeros(ref.shape, ref.dtype) if isinstance(ref, _ndarray) else None
            elif g.__class__ is not _ndarray or not g.flags.c_contiguous and not is_broadcast(g):
                g = vjp_array(g)
            vjps.append(g)
        return self._df(vjps + captured)

    def _df(self, values: list) -> list:
        """df's outputs for its inputs `values` (vjps, then captures), as arrays."""
        df = self.op.df
        raw = getattr(df, "raw_arrays", None)  # (`run_arrays(values, True)` without lookups)
        got = raw(values) if raw is not None else df.run_arrays(values, True)
        if got is None:
            got = _run(df, values)
        return _arrays_of(got)

    def derivative_lines(self, grads: list, captured: str, got: str, name: Callable[[str, Any], str],
                         local: Callable[[str], str]) -> Optional[list[str]]:
        """`derivative` for these gradients of the outputs, always the same (a sums plan's
        seeds, none missing), inline in the sums plan: lines assigning `got` df's outputs
        for what a call captured (the expression `captured`), the vjps made once (df's
        latest plan read per call); None for other gradients."""
        vjps = fixed_vjps(grads, self.op.vjp_outputs)
        if vjps is None:
            return None
        values, raw, df = local("values"), local("raw"), name("DF", self.op.df)
        return [f"{values} = {name('VJPS', vjps)} + {captured}",
                f"{raw} = {df}.raw_arrays",
                f"{got} = {raw}({values}) if {raw} is not None else None",
                f"{got} = {name('ARRAYS', _arrays_of)}({got}) if {got} is not None else "
                f"{name('DF', self._df)}({values})"]


def _arrays_of(got) -> Sequence:
    """df's outputs as arrays (arrays, as df's array program returns them, pass as they are;
    one tuple returned is its elements)."""
    if len(got) == 1 and isinstance(got[0], tuple):  # df returns one tuple
        got = got[0]
    for g in got:
        if g.__class__ is not _ndarray:
            return [g if g.__class__ is _ndarray else g.data if isinstance(g, Tensor) else None
                    for g in got]
    return got


class NativeGroupOp:
    """A differentiated group (its Gradient) run by the runners of its `f` and `df` (see the
    module docstring); `op(args) -> outputs`. With the requires-grad `flags` of the arguments
    it is called with (the runner decides an op per pattern, under grad mode), what each call
    records is fixed when it is made."""

    schema = _Schema("prim::DifferentiableGraph")

    def __init__(self, gradient, f_runner, df_runner, flags: Optional[tuple[bool, ...]] = None):
        self.gradient = gradient
        self.f, self.df = f_runner, df_runner
        self.vjp_outputs = tuple(gradient.df_input_vjps)
        self._with_vjp = frozenset(gradient.df_input_vjps)
        self._n_real = gradient.f_real_outputs
        self._vjp = tuple(i in self._with_vjp for i in range(self._n_real))  # per real output
        self._differentiable = tuple(gradient.df_output_vjps)
        self._captured_inputs = tuple(gradient.df_input_captured_inputs)
        self._captured_outputs = tuple(gradient.df_input_captured_outputs)
        self._entry = _NativeBackward(self)
        # with the flags: per df output, the argument that is its edge (None: not one)
        self._edges = None if flags is None else tuple(
            i if flags[i] else None for i in gradient.df_output_vjps)
        self._records = flags is not None and any(flags[i] for i in gradient.df_output_vjps)
        # `op(args)` without the call through the op: the generated function when it records
        # (it has `op` as an attribute), else `_call`
        self.step = self._call if not self._records else _recording_step(self, flags)
        self._flags = flags
        self._private_step: Optional[Callable] = None

    def private_step(self) -> Callable[[list], list]:
        """`step` for arguments that are Tensors no one else holds (a training program's own
        leaves) and that nothing writes after the call: it records no versions to check."""
        if self._private_step is None:
            self._private_step = _recording_step(self, self._flags, record_versions=False) \
                if self._records else self.step
        return self._private_step

    def __call__(self, args: list) -> list:
        return self.step(args)

    def value_captures(self) -> frozenset[int]:
        """The positions among the arguments of the captured inputs whose values `df` reads
        (not only their sizes, rank or dtype, which a copy would share)."""
        df, skip = self.gradient.df, len(self.vjp_outputs)
        return frozenset(i for j, i in enumerate(self._captured_inputs)
                         if _reads_values(df.inputs[skip + j]))

    def _call(self, args: list) -> list:
        records = self._records
        arrays, versions = [], []
        for a in args:  # (what df reads is checked at backward: every tensor argument)
            if isinstance(a, Tensor):
                arrays.append(a.data)
                if records:
                    versions.append((a, a._version[0]))
            else:
                arrays.append(a)
        outs = self.f.run_arrays(arrays, True)
        fresh = outs is not None  # (an array program returns no argument: see _results)
        if not fresh:
            outs = _run(self.f, arrays)
        real = outs[:self._n_real]
        if self._edges is not None:  # (the runner called it for its flags, under grad)
            if not records:
                return self._results(real, None, args, fresh)
            edges = [None if i is None else args[i] for i in self._edges]
        else:
            edges = [args[i] if isinstance(args[i], Tensor) and args[i].requires_grad else None
                     for i in self._differentiable]
            if not GRAD_MODE.enabled or all(e is None for e in edges):
                return self._results(real, None, args, fresh)
            versions = [(a, a._version[0]) for a in args if isinstance(a, Tensor)]
        captured = [arrays[i] for i in self._captured_inputs]
        if self._captured_outputs:
            captured += [outs[i] for i in self._captured_outputs]
        node = GradNode(self._entry, captured, real, edges, "prim::DifferentiableGraph", versions)
        if fresh:  # (arrays the program made: each a Tensor of its own, recorded at `node`)
            results = []
            for i, o in enumerate(real):
                if o.__class__ is not np.ndarray or o.base is not None:
                    return self._results(real, node, args, fresh)
                results.append(Tensor(o, True, (node, i)) if self._vjp[i] and o.dtype.kind == "f"
                               else Tensor(o))
            return results
        return self._results(real, node, args, fresh)

    def _results(self, real: list, node: Optional[GradNode], args: list, fresh: bool) -> list:
        """The outputs as Tensors (those df takes a vjp of recorded at `node`), sharing the
        version and base of what they view. With `fresh` (outputs of an array program, which
        returns no argument itself), arrays that own their memory view nothing."""
        results = []
        for i, o in enumerate(real):
            if o.__class__ is np.ndarray:
                if o.base is not None:
                    fresh = False
                o = Tensor(o, True, (node, i)) if node is not None and i in self._with_vjp and \
                    o.dtype.kind == "f" else Tensor(o)
            elif isinstance(o, Tensor):
                fresh = False
            results.append(o)
        if not fresh:
            share_bases(results, args)
        return results


def _reads_values(v) -> bool:
    """Whether a graph reads the elements of tensor `v`: any use but metadata queries
    (`aten::size`, ...), identity tests (against None), and ops passing it on (casts,
    optionals unwrapped) whose results are used only so."""
    for use in v.uses:
        kind = use.user.kind
        if facts.has_tag(kind, "metadata") or facts.has_tag(kind, "identity_test"):
            continue
        if facts.has_tag(kind, "pass_through") and not use.user.blocks and \
                not any(_reads_values(o) for o in use.user.outputs):
            continue
        return True
    return False


def _recording_step(op: NativeGroupOp, flags: tuple[bool, ...], record_versions: bool = True
                    ) -> Callable[[list], list]:
    """`op._call` for arguments of these requires-grad flags, as one generated function (the
    arguments unpacked, what it captures and records spelled out, no loops): a call that f's
    array program refuses, or whose outputs are not fresh arrays, takes `op._call`. Without
    `record_versions` the node records no versions (see `NativeGroupOp.private_step`)."""
    n = len(flags)
    a = [f"a{i}" for i in range(n)]
    lines = [f"def step(args):",
             f"    {', '.join(a)}, = args"]
    versions = []
    for i in range(n):
        if flags[i]:  # (a Tensor requiring grad: the program read its flag)
            lines.append(f"    d{i} = a{i}.data")
            versions.append(f"(a{i}, a{i}._version[0])")
        else:
            lines.append(f"    d{i} = a{i}.data if isinstance(a{i}, Tensor) else a{i}")
    arrays = f"[{', '.join(f'd{i}' for i in range(n))}]"
    if hasattr(op.f, "raw_arrays"):  # (the latest plan's `run_arrays(arrays, True)`)
        lines += ["    raw = F.raw_arrays",
                  f"    outs = raw({arrays}) if raw is not None else None"]
    else:
        lines.append(f"    outs = run_f({arrays}, True)")
    lines.append("    if outs is None:")
    lines.append("        return slow(args)")
    lines.append(f"    versions = [{', '.join(versions)}]" if record_versions else "    versions = ()")
    for i in range(n if record_versions else 0):
        if not flags[i]:
            lines.append(f"    if isinstance(a{i}, Tensor):")
            lines.append(f"        versions.append((a{i}, a{i}._version[0]))")
    real = [f"r{j}" for j in range(op._n_real)]
    lines += [f"    r{j} = outs[{j}]" for j in range(op._n_real)]
    captured = [f"d{i}" for i in op._captured_inputs] + [
        f"r{j}" if j < op._n_real else f"outs[{j}]" for j in op._captured_outputs]
    edges = ["None" if i is None else f"a{i}" for i in op._edges]
    lines.append(f"    node = GradNode(entry, [{', '.join(captured)}], [{', '.join(real)}], "
                 f"[{', '.join(edges)}], 'prim::DifferentiableGraph', versions)")
    for j in range(op._n_real):  # (fresh arrays of the program: see _results)
        lines.append(f"    if r{j}.__class__ is not ndarray or r{j}.base is not None:")
        lines.append(f"        return results([{', '.join(real)}], node, args, True)")
    wrapped = [f"Tensor(r{j}, True, (node, {j})) if r{j}.dtype.kind == 'f' else Tensor(r{j})"
               if op._vjp[j] else f"Tensor(r{j})" for j in range(op._n_real)]
    lines.append(f"    return [{', '.join(wrapped)}]")
    names = {"Tensor": Tensor, "ndarray": np.ndarray, "GradNode": GradNode, "entry": op._entry,
             "run_f": op.f.run_arrays, "F": op.f, "slow": op._call, "results": op._results}
    exec(compile("\n".join(lines) + "\n", "<native group step>", "exec"), names)  # noqa: S102
    step = names["step"]
    step.source = "\n".join(lines)
    step.op = op
    return step


class _WindowBackward(WindowEntry):
    """The tape's entry for a view group: each output is a window of the base argument at a
    byte offset; backward adds each output's gradient into its window of the base's gradient
    (`autograd.backward` adds into an accumulator in place)."""

    __slots__ = ("schema", "shape", "dtype", "windows")

    def __init__(self, schema, base: np.ndarray, windows: list):
        self.schema = schema
        self.shape, self.dtype = base.shape, base.dtype
        self.windows = windows  # per output: (shape, byte strides, byte offset)

    def add_into(self, acc: np.ndarray, grads: list) -> None:
        for (shape, strides, offset), g in zip(self.windows, grads):
            if g is not None:
                window = np.ndarray(shape, self.dtype, acc, offset, strides)
                np.add(window, g, out=window)

    def derivative(self, emitter, grads: list, saved_inputs, saved_outputs) -> list:
        acc = np.zeros(self.shape, self.dtype)
        self.add_into(acc, grads)
        return [acc]


def _windows_apart(shape: tuple, strides: tuple, itemsize: int) -> bool:
    """Whether a strided window's elements are distinct (no zero or overlapping strides, as an
    expand or unfold makes) and its strides positive, so adding into it adds once per element."""
    extent = itemsize
    for size, stride in sorted(((n, s) for n, s in zip(shape, strides) if n > 1), key=lambda p: p[1]):
        if stride < extent:
            return False
        extent = stride * (size - 1) + extent
    return True


class ViewGroupOp:
    """A group whose outputs are all views of one argument that requires grad (select, slice,
    transpose: a ViewUnit): it records no backward graph but the windows its outputs view, so
    backward adds each gradient into the base's gradient in place, where a backward graph
    would scatter it into a fresh tensor of zeros per call (a loop selecting x[i] would then
    add up one tensor of x's size per iteration). A call whose base is not C-contiguous, or
    whose windows overlap, runs `fallback` (the group's NativeGroupOp)."""

    def __init__(self, node: Node, unit_of: Callable[[Node], Any], base: int, kind: str,
                 fallback: NativeGroupOp):
        self.node, self.unit_of, self.base, self.fallback = node, unit_of, base, fallback
        self.schema = _Schema(kind)
        self._apart: dict[int, tuple] = {}  # id(unit) -> (unit, whether its windows are apart)

    def __call__(self, args: list) -> list:
        base = args[self.base]
        unit = self.unit_of(self.node)
        found = self._apart.get(id(unit))
        if found is None:  # (a view unit's windows have fixed shapes and strides)
            found = self._apart[id(unit)] = (unit, all(
                _windows_apart(v.shape, v.strides, v.dtype.itemsize) for v in unit.views.outputs.values()),
                {})
        apart = found[1]
        data = base.data
        if not apart or not data.flags.c_contiguous:
            return self.fallback(args)
        status, outs, offsets = unit.windows([a.data if isinstance(a, Tensor) else a for a in args])
        if status:
            return self.fallback(args)
        if len(outs) == 1:  # (x[i] in a loop: one window, at offsets that repeat)
            return self._one_window(base, data, outs[0], offsets[0], found[2])
        windows = [(o.shape, o.strides, offsets[j]) for j, o in enumerate(outs)]
        node = GradNode(_WindowBackward(self.schema, data, windows), [], outs, [base],
                        self.schema.name, [(base, base._version[0])])
        version, root = base._version, base._base if base._base is not None else base
        results = []
        for j, o in enumerate(outs):
            r = Tensor(o, True, (node, j), version)
            r._base = root
            results.append(r)
        return results


    def _one_window(self, base: Tensor, data: np.ndarray, out: np.ndarray, offset: int,
                    entries: dict) -> list:
        """`__call__`'s result for a unit of one view (x[i] in a loop): the tape entry of a
        window at `offset` is kept and shared by later calls (the unit's windows and the base's
        layout are fixed)."""
        entry = entries.get(offset)
        if entry is None:
            entry = entries[offset] = _WindowBackward(self.schema, data, [(out.shape, out.strides, offset)])
        node = GradNode(entry, [], [out], [base], self.schema.name, [(base, base._version[0])])
        r = Tensor(out, True, (node, 0), base._version)
        r._base = base._base if base._base is not None else base
        return [r]


def view_group_base(unit, flags: tuple[bool, ...]) -> Optional[int]:
    """The argument a group's outputs all view (its unit computes none of them: a ViewUnit)
    when that argument alone requires grad; else None."""
    if unit is None or not getattr(unit, "aliases", None) or not hasattr(unit, "windows"):
        return None
    bases = set(unit.aliases)
    if len(bases) != 1:
        return None
    kind, k = next(iter(bases)) or (None, None)
    if kind != "input" or [i for i, f in enumerate(flags) if f] != [k]:
        return None
    return k
