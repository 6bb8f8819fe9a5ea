"""relax-opt: mlir-opt for relax. Parses IR, runs a pipeline of relax and upstream passes, prints IR."""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from mlir import ir, passmanager

import relax_mlir.targets  # noqa: F401  (registering the targets registers --cpu, --gpu)
from relax_mlir.context import make_context, parse_module
from relax_mlir.diagnostics import Diagnostic, from_error, from_mlir
from relax_mlir.dialects.registry import irdl_source
from relax_mlir.errors import ParseError, PassError, RelaxError
from relax_mlir.pipelines import PASSES, PIPELINES, add_pipeline, load_passes, parse_pipeline
from relax_mlir.pipelines.registry import PipelineElement, upstream_pass_names

SPLIT_MARKER = re.compile(r"^// -----[ \t]*$", re.M)
EXPECTED = re.compile(r"expected-(error|warning|note|remark)\s*(@(?:above|below|[+-]\d+))?\s*\{\{(.*?)\}\}")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="relax-opt",
        description="Run relax and upstream MLIR passes over textual IR (like mlir-opt). "
        "Any registered pass can also be given as a flag, e.g. --relax-verify or --canonicalize.",
    )
    p.add_argument("input", nargs="?", default="-", help="input file ('-' for stdin)")
    p.add_argument("-o", dest="output", default="-", help="output file ('-' for stdout)")
    p.add_argument("--pass-pipeline", help="textual pipeline, e.g. 'builtin.module(relax-verify,cse)'")
    p.add_argument("--split-input-file", action="store_true", help="process chunks separated by '// -----'")
    p.add_argument(
        "--verify-diagnostics", action="store_true", help="check diagnostics against expected-* comments"
    )
    p.add_argument("--list-passes", action="store_true", help="list relax passes and exit")
    p.add_argument(
        "--emit-irdl",
        action="store_true",
        help="print the IRDL generated from the relax op definitions (for mlir-opt --irdl-file) and exit",
    )
    p.add_argument(
        "--mlir-print-ir-after-all", action="store_true", help="print IR after every pass (stderr)"
    )
    p.add_argument(
        "--mlir-print-ir-before-all", action="store_true", help="print IR before every pass (stderr)"
    )
    p.add_argument("--mlir-timing", action="store_true", help="print pass timing (stderr)")
    p.add_argument("--mlir-print-op-generic", action="store_true", help="print ops in generic form")
    p.add_argument("--mlir-print-debuginfo", action="store_true", help="print locations")
    return p


@dataclass
class Options:
    args: argparse.Namespace
    pipeline: list[PipelineElement]


def parse_args(argv: Sequence[str]) -> Options:
    parser = build_parser()
    args, rest = parser.parse_known_args(argv)
    flags = [_pass_flag(parser, item) for item in rest]
    if args.pass_pipeline and flags:
        raise PassError("use either --pass-pipeline or per-pass flags, not both")
    pipeline = parse_pipeline(args.pass_pipeline) if args.pass_pipeline else flags
    return Options(args, pipeline)


def _pass_flag(parser: argparse.ArgumentParser, item: str) -> PipelineElement:
    if not item.startswith("--"):
        raise PassError(f"unexpected argument '{item}'")
    name, _, options = item[2:].partition("=")
    if name in PASSES or name in PIPELINES or name in upstream_pass_names():
        return PipelineElement(name, options.strip("'\""))
    known = [
        *PASSES,
        *PIPELINES,
        *upstream_pass_names(),
        *(o.lstrip("-") for a in parser._actions for o in a.option_strings),
    ]
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join('--' + c for c in close)}?" if close else ""
    raise PassError(f"unknown flag or pass '--{name}'{hint}")


def read_input(path: str) -> tuple[str, str]:
    """The text of ``path`` ('-' for stdin) and the name diagnostics use for it."""
    name = "<stdin>" if path == "-" else path
    try:
        if path == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as f:
                data = f.read()
    except OSError as e:
        raise RelaxError(f"cannot read '{path}': {e.strerror}") from None
    try:
        return data.decode("utf-8"), name
    except UnicodeDecodeError as e:
        raise RelaxError(f"'{name}' is not UTF-8 text (byte {e.start})") from None


def write_output(path: str, text: str) -> None:
    """Write ``text`` to ``path`` ('-' for stdout)."""
    if path == "-":
        sys.stdout.write(text)
        return
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        raise RelaxError(f"cannot write '{path}': {e.strerror}") from None


def split_chunks(text: str, split: bool) -> list[str]:
    """Chunks padded with blank lines so that line numbers stay those of the whole file."""
    if not split:
        return [text]
    chunks, line = [], 0
    for part in SPLIT_MARKER.split(text):
        chunks.append("\n" * line + part)
        line += part.count("\n")
    return chunks


def process_chunk(
    ctx: ir.Context, chunk: str, source: str, opts: Options
) -> tuple[str | None, list[Diagnostic]]:
    """Parse and transform one chunk; returns its printed output (None on failure) and its diagnostics."""
    diagnostics: list[Diagnostic] = []

    def handler(d: ir.Diagnostic) -> bool:
        diagnostics.extend(from_mlir(d))
        return True

    handle = ctx.attach_diagnostic_handler(handler)
    try:
        with ctx:
            try:
                module = parse_module(chunk, source)
            except ir.MLIRError as e:
                return None, _merge(diagnostics, from_error(e))
            except ParseError:
                return None, diagnostics
            pm = passmanager.PassManager("builtin.module")
            add_pipeline(pm, opts.pipeline)
            a = opts.args
            if a.mlir_print_ir_after_all or a.mlir_print_ir_before_all:
                pm.enable_ir_printing(
                    print_before_all=a.mlir_print_ir_before_all, print_after_all=a.mlir_print_ir_after_all
                )
            if a.mlir_timing:
                pm.enable_timing()
            try:
                pm.run(module.operation)
            except ir.MLIRError as e:
                return None, _merge(diagnostics, from_error(e))
            finally:
                del pm  # the timing report prints when the pass manager is destroyed
            text = module.operation.get_asm(
                print_generic_op_form=a.mlir_print_op_generic, enable_debug_info=a.mlir_print_debuginfo
            )
            return text, diagnostics
    finally:
        handle.detach()


def _merge(seen: list[Diagnostic], more: list[Diagnostic]) -> list[Diagnostic]:
    """``seen`` plus the diagnostics of ``more`` not already in it (an MLIRError repeats the handler's)."""
    return seen + [d for d in more if d not in seen]


def check_expected(chunk: str, diagnostics: list[Diagnostic]) -> list[str]:
    """Compare diagnostics with ``// expected-<severity>[@above|@below|@+N|@-N] {{text}}`` comments."""
    expected = []
    for lineno, line in enumerate(chunk.split("\n"), start=1):
        for m in EXPECTED.finditer(line):
            sev, where, text = m.group(1), m.group(2), m.group(3)
            target = lineno
            if where == "@above":
                target -= 1
            elif where == "@below":
                target += 1
            elif where:
                target += int(where[1:])
            expected.append([sev, target, text, False])
    errors = []
    for d in diagnostics:
        if d.severity == "note" and d.message.startswith("see current operation"):
            continue  # mlir-opt does not print the op on diagnostics when verifying them
        match = next(
            (e for e in expected if not e[3] and e[0] == d.severity and e[1] == d.line and e[2] in d.message),
            None,
        )
        if match is None:
            errors.append(f"{d.file}:{d.line}:{d.col}: error: unexpected {d.severity}: {d.message}")
        else:
            match[3] = True
    for sev, line, text, seen in expected:
        if not seen:
            errors.append(f'line {line}: error: expected {sev} "{text}" was not produced')
    return errors


def run(argv: Sequence[str]) -> int:
    load_passes()
    opts = parse_args(argv)
    if opts.args.list_passes:
        for info in sorted(PASSES.values(), key=lambda i: i.name):
            print(f"  --{info.name:<32} {info.summary}")
        print("pipelines:")
        for name, (_, summary) in sorted(PIPELINES.items()):
            print(f"  --{name:<32} {summary}")
        print("  (and every upstream MLIR pass, e.g. --canonicalize, --cse)")
        return 0
    if opts.args.emit_irdl:
        write_output(opts.args.output, irdl_source())
        return 0
    text, source = read_input(opts.args.input)
    ctx = make_context()
    outputs: list[str] = []
    status = 0
    for chunk in split_chunks(text, opts.args.split_input_file):
        output, diagnostics = process_chunk(ctx, chunk, source, opts)
        if opts.args.verify_diagnostics:
            problems = check_expected(chunk, diagnostics)
            for p in problems:
                print(p, file=sys.stderr)
            status |= bool(problems)
        else:
            for d in diagnostics:
                print(d, file=sys.stderr)
            status |= output is None
        if output is not None:
            outputs.append(output)
    result = "// -----\n".join(outputs)
    write_output(opts.args.output, result)
    return status


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return run(sys.argv[1:] if argv is None else argv)
    except RelaxError as e:
        print(f"relax-opt: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
