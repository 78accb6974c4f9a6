"""`irtool export-onnx`: an inference graph as an ONNX model, checked by onnx.checker."""

from __future__ import annotations

from .opt_command import parsed_graph, pipeline_manager, run_pipeline
from .run_command import read_attribute_sidecar, read_npz
from .sources import UsageError, check_output_path, read_source, write_atomically


class ExportUsageError(UsageError):
    """Bad options or files for `irtool export-onnx`."""


def example_inputs(path, count: int):
    """`arg0, arg1, ...` of an .npz, as a list (None: no file)."""
    arrays = read_npz(path, "inputs")
    if arrays is None:
        return None
    missing = [f"arg{i}" for i in range(count) if f"arg{i}" not in arrays]
    if missing:
        raise ExportUsageError(f"{path}: missing {', '.join(missing)} (the graph takes {count} "
                               "inputs)")
    return [arrays[f"arg{i}"] for i in range(count)]


def cmd_export_onnx(args) -> int:
    from irjit.onnx_export import export_onnx
    if not args.output.lower().endswith(".onnx"):
        raise ExportUsageError(f"-o {args.output}: name the model file .onnx")
    check_output_path(args.output)
    manager = pipeline_manager(args.passes)
    text, name = read_source(args.file)
    params = read_npz(args.params, "params")
    constants = read_npz(args.constants, "constants")
    attributes = read_attribute_sidecar(args.attributes, params)
    graph = parsed_graph(text, name, args.input_types)
    run_pipeline(manager, graph)
    has_self = bool(graph.inputs) and hasattr(graph.inputs[0].type, "qualified_name")
    inputs = example_inputs(args.inputs, len(graph.inputs) - has_self)
    model = export_onnx(graph, params=params, constants=constants, attributes=attributes,
                        inputs=inputs, filename=name)
    data = model.SerializeToString()
    write_atomically(args.output, lambda f: f.write(data))
    return 0


def register(sub) -> None:
    sp = sub.add_parser("export-onnx", help="export an inference graph as an ONNX model")
    sp.add_argument("file", help=".ir file ('-' for stdin)")
    sp.add_argument("-o", "--output", required=True, help="the .onnx file to write")
    sp.add_argument("--params", help=".npz of module attributes by dotted path (conv.weight)")
    sp.add_argument("--constants", help=".npz of tensor constants by value name (frozen graphs)")
    sp.add_argument("--attributes", help=".json of other module attributes (as irtool run)")
    sp.add_argument("--inputs", help=".npz of example inputs arg0, arg1, ...: they fix the "
                    "model's input shapes (default: random ones of complete --input-types)")
    sp.add_argument("--input-types", help="one type per graph input after %%self, e.g. "
                    "'Float(1, 3, 8, 8)'")
    sp.add_argument("--passes", help="run this pipeline before exporting")
    sp.set_defaults(func=cmd_export_onnx)
