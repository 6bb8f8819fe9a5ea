"""``relax-compile``: compile relax IR ahead of time into a shared library with a C API.

    relax-compile model.mlir --target aarch64 -o libmodel.so        # also writes libmodel.h
    relax-compile model.mlir --target x86_64 --cpu native -O2 -o libmodel.so --header include/model.h
    relax-compile model.mlir --emit llvm -o model.ll                 # the LLVM IR, for inspection
    relax-compile model.mlir --target wasm32 -o model.wasm           # also writes model.json

The library needs only libc and libm at run time (no Python, OpenMP or OpenBLAS); its header documents
the C API (``runtime/capi.py``). Errors are printed as ``relax-compile: error: ...`` with exit status 1.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from relax_mlir.errors import RelaxError
from relax_mlir.relax_opt import read_input
from relax_mlir.targets import compile_library
from relax_mlir.targets.aot import AOT_TARGETS, EMITS

SUFFIXES = {"so": ".so", "obj": ".o", "llvm": ".ll", "wasm": ".wasm"}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="relax-compile",
        description="Compile every public relax function of a module into a shared library with a C API "
        "and its header, for x86_64 or aarch64 Linux.",
    )
    p.add_argument("input", nargs="?", default="-", help="relax IR file ('-' for stdin)")
    p.add_argument("-o", dest="output", help="output file (default: lib<input name>.so, .o or .ll)")
    p.add_argument(
        "--target", default="x86_64", help=f"target: {', '.join(AOT_TARGETS)}, wasm32 (default x86_64)"
    )
    p.add_argument("--header", help="where to write the C header (default: the output with suffix .h)")
    p.add_argument(
        "-O",
        "--opt-level",
        dest="opt_level",
        type=int,
        default=2,
        choices=range(4),
        help="relax-O<n> without BLAS and OpenMP (3 is 2) and LLVM -O<min(n, 2)> (default 2)",
    )
    p.add_argument(
        "--cpu", help="LLVM CPU name (default: x86-64-v2 / generic; 'native' on a host of the target)"
    )
    p.add_argument(
        "--emit",
        default=None,
        choices=(*EMITS, "wasm"),
        help="so (library + header; wasm for wasm32), obj (model object), llvm (IR)",
    )
    p.add_argument("--prefix", default="relax", help="prefix of every exported C name (default relax)")
    p.add_argument(
        "--stats", action="store_true", help="print the time of each stage and what the library links"
    )
    return p


def run(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(argv)
    text, name = read_input(args.input)
    if args.emit is None:
        args.emit = "wasm" if args.target == "wasm32" else "so"
    output = args.output
    if output is None:
        stem = "model" if args.input == "-" else Path(args.input).stem
        output = ("lib" if args.emit == "so" else "") + stem + SUFFIXES[args.emit]
    lib = compile_library(
        text,
        output,
        args.target,
        opt_level=args.opt_level,
        cpu=args.cpu,
        header=args.header,
        prefix=args.prefix,
        emit=args.emit,
        source_name=name,
    )
    if args.stats:
        for stage, seconds in lib.stages.items():
            print(f"{stage:<16} {seconds * 1000:8.1f} ms")
        if args.emit == "so" and args.target != "wasm32":
            print(f"functions: {', '.join(f'{k} -> {v}' for k, v in lib.functions.items())}")
            print(f"needed: {', '.join(lib.needed)}")
            print(f"undefined: {', '.join(lib.undefined)}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return run(sys.argv[1:] if argv is None else argv)
    except RelaxError as e:
        print(f"relax-compile: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
