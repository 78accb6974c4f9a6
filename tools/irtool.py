"""`irtool`: parse, format, run, optimize, draw and export TorchScript IR files from the
command line.

Every error a user can cause is printed as one line, `file:line:col: error: ...` (or `irtool:
error: ...`), with exit code 1; nothing is written unless the command succeeds. A parse error
also shows the offending line and a caret with `--verbose`, or when stderr is a terminal.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Optional

from irjit.ops.errors import IRParseError, IRRuntimeError, IRTypeError

from . import onnx_command, opt_command, picture_commands, run_command
from .deep_stack import NestedTooDeeply, call_with_deep_stack
from .progress import showing_progress
from .sources import UsageError, lint_parsed, read_source


def cmd_parse(args) -> int:
    """Parse every file, reporting each bad one (one error each) and going on to the next."""
    from irjit.compiler import parse_ir, progress
    status = 0
    files = progress.task("files", len(args.files), "file") if len(args.files) > 1 \
        else progress.SILENT
    with files as files_done:
        for path in args.files:
            files_done.update(0, path)
            try:
                text, name = read_source(path)
                g = parse_ir(text, name)
                if args.verify:
                    lint_parsed(g, name)
            except IRParseError as e:
                print(parse_error_text(e, args.verbose), file=sys.stderr)
                status = 1
                continue
            except UsageError as e:
                print(f"irtool: error: {e}", file=sys.stderr)
                status = 1
                continue
            finally:
                files_done.update(1)
            if not args.quiet:
                print(f"{name}: ok ({g.num_nodes()} nodes)")
    return status


def parse_error_text(e: IRParseError, verbose: bool) -> str:
    """`file:line:col: error: reason`, followed by the source line and a caret when asked for
    (`--verbose`) or when a person is reading (stderr is a terminal)."""
    if verbose or sys.stderr.isatty():
        return str(e)
    return f"{e.location()}: error: {e.reason}"


def cmd_fmt(args) -> int:
    from irjit.compiler import parse_ir
    text, name = read_source(args.file)
    out = str(parse_ir(text, name))
    if args.check:
        if out != text:
            print(f"{name}: not in canonical form", file=sys.stderr)
            return 1
        return 0
    sys.stdout.write(out)
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="irtool", description="Read, run, rewrite, draw and export TorchScript IR.")
    sub = p.add_subparsers(dest="command", required=True)

    sp = sub.add_parser("parse", help="check that files parse")
    sp.add_argument("files", nargs="+", help=".ir files ('-' for stdin)")
    sp.add_argument("--verify", action="store_true", help="also run the IR verifier (lint)")
    sp.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    sp.set_defaults(func=cmd_parse)

    sp = sub.add_parser("fmt", help="print a file in PyTorch's canonical format")
    sp.add_argument("file", help=".ir file ('-' for stdin)")
    sp.add_argument("--check", action="store_true", help="exit 1 if the file is not canonical")
    sp.set_defaults(func=cmd_fmt)

    run_command.register(sub)
    opt_command.register(sub)
    picture_commands.register(sub)
    onnx_command.register(sub)
    for command in sub.choices.values():
        command.add_argument("-v", "--verbose", action="store_true",
                             help="show the source line and a caret under a parse error")
    return p


def main(argv: Optional[list[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with showing_progress():
            return call_with_deep_stack(lambda: args.func(args))
    except IRParseError as e:
        print(parse_error_text(e, args.verbose), file=sys.stderr)
        return 1
    except (IRTypeError, IRRuntimeError, UsageError, NestedTooDeeply) as e:
        print(f"irtool: error: {e}", file=sys.stderr)
        return 1
    except MemoryError as e:
        print(f"irtool: error: out of memory{f' ({e})' if str(e) else ''}", file=sys.stderr)
        return 1
    except Exception as e:  # noqa: BLE001
        if os.environ.get("IRJIT_TRACEBACK"):
            raise
        print(f"irtool: internal error: {type(e).__name__}: {e} "
              "(set IRJIT_TRACEBACK=1 for a traceback, and please report it)", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 1


if __name__ == "__main__":
    sys.exit(main())
