"""Weights outside the object code: large constants are loaded from a file, not compiled by LLVM.

A relax constant over 64 KiB is a ``dense_resource`` blob; lowered as is, it becomes an LLVM global
initialized with its data, which LLVM emits element by element (about 0.7 s of code generation for the
50 MB of a 4-layer GPT) and the loader copies (0.1 s per load). ``externalize`` instead turns each such
global into a pointer global (``llvm.mlir.global external @w : !llvm.ptr``, null) and each
``llvm.mlir.addressof @w`` into a load of that pointer; it returns the blobs' bytes, which the compile
cache writes next to the object and the loader maps into memory and points the globals at.

The bindings cannot read a blob's bytes; its text form is hex (slow to print and parse), so the bytes
are read from the module's bytecode, whose resource section holds them raw (``resource_blobs``; the
layout is MLIR's ``docs/BytecodeFormat.md``).
"""

from __future__ import annotations

import io
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import llvm

from relax_mlir.dialects.registry import is_resource_elements
from relax_mlir.dialects.resources import resource_blobs

_BYTE_WIDTHS = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "i8": 1, "i16": 2, "i32": 4, "i64": 8}


@dataclass
class Weight:
    """A blob an external pointer global ``symbol`` must point at."""

    symbol: str
    data: memoryview
    alignment: int


def _resource_name(attr: ir.Attribute) -> str:
    return str(attr).removeprefix("dense_resource<").split(">", 1)[0]


def _byte_size(t: ir.Type) -> int | None:
    """Bytes of a tensor type whose elements have a fixed byte width (None otherwise)."""
    shaped = ir.ShapedType(t)
    width = _BYTE_WIDTHS.get(str(shaped.element_type))
    if width is None or not shaped.has_static_shape:
        return None
    n = 1
    for d in shaped.shape:
        n *= d
    return n * width


def externalize(module: ir.Module) -> list[Weight]:
    """Make every global initialized from a blob a pointer global set at load time; return the blobs.

    Globals whose blob cannot be read (or whose size does not match their type) keep their data.
    """
    globals_: dict[str, ir.Operation] = {}
    for op in module.body.operations:
        op = op.operation
        if op.name == "llvm.mlir.global" and "value" in op.attributes:
            if is_resource_elements(op.attributes["value"]):
                globals_[ir.StringAttr(op.attributes["sym_name"]).value] = op
    if not globals_:
        return []
    holder = ir.Module.create(ir.Location.unknown(module.context))  # the globals alone: their blobs, no code
    for op in globals_.values():
        holder.body.append(op.clone())
    buffer = io.BytesIO()
    holder.operation.write_bytecode(buffer)
    blobs = resource_blobs(buffer.getvalue())
    weights = []
    ptr = ir.Type.parse("!llvm.ptr")
    for symbol, op in globals_.items():
        attr = op.attributes["value"]
        data = blobs.get(_resource_name(attr))
        if not data or _byte_size(attr.type) != len(data):
            continue
        alignment = ir.IntegerAttr(op.attributes["alignment"]).value if "alignment" in op.attributes else 1
        weights.append(Weight(symbol, data, max(alignment, 64)))
        quoted = symbol.replace("\\", "\\\\").replace('"', '\\"')
        pointer = ir.Operation.parse(
            f'llvm.mlir.global external @"{quoted}"() {{alignment = 8 : i64}} : !llvm.ptr {{\n'
            "  %0 = llvm.mlir.zero : !llvm.ptr\n  llvm.return %0 : !llvm.ptr\n}"
        )
        ir.InsertionPoint(op).insert(pointer)
        op.erase()
    external = {w.symbol for w in weights}
    if not external:
        return []
    addresses: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if (
            op.name == "llvm.mlir.addressof"
            and ir.FlatSymbolRefAttr(op.attributes["global_name"]).value in external
        ):
            addresses.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    for op in addresses:
        with ir.InsertionPoint.after(op), op.location:
            loaded = llvm.LoadOp(ptr, op.results[0])
        op.results[0].replace_all_uses_except(loaded.result, loaded.operation)
    return weights
