"""relax-import-onnx: import an ONNX model as relax IR.

relax-import-onnx model.onnx -o model.mlir
relax-import-onnx model.onnx --shape input=batch,3,224,224 --shape mask=batch,seq
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from relax_mlir.errors import RelaxError
from relax_mlir.frontend.onnx.importer import from_onnx


def _shape_arg(text: str) -> tuple[str, list[int | str]]:
    name, sep, dims = text.rpartition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=D0,D1,... got '{text}'")
    return name, [
        int(d) if d.strip().lstrip("-").isdigit() else d.strip() for d in dims.split(",") if d.strip()
    ]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="relax-import-onnx", description="Import an ONNX model as relax IR.")
    p.add_argument("input", help="the .onnx file")
    p.add_argument("-o", dest="output", default="-", help="output file ('-' for stdout)")
    p.add_argument(
        "--shape",
        action="append",
        type=_shape_arg,
        default=[],
        metavar="NAME=D0,D1,...",
        help="replace an input's shape: ints and symbol names (repeatable)",
    )
    p.add_argument("--mlir-print-debuginfo", action="store_true", help="print locations (ONNX node names)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        module = from_onnx(args.input, shape_dict=dict(args.shape))
    except RelaxError as e:
        print(f"relax-import-onnx: error: {e}", file=sys.stderr)
        return 1
    text = module.operation.get_asm(enable_debug_info=args.mlir_print_debuginfo)
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w") as f:
            f.write(text)
    return 0
