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

_MAGIC = b"ML\xefR"
_STRING_SECTION, _RESOURCE_SECTION, _RESOURCE_OFFSET_SECTION = 0, 5, 6
_BLOB_KIND = 0
_BYTE_WIDTHS = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "i8": 1, "i16": 2, "i32": 4, "i64": 8}


class _Reader:
    """Reads MLIR bytecode's prefix varints, strings and aligned blobs from a buffer."""

    def __init__(self, data: memoryview, pos: int = 0, end: int | None = None) -> None:
        self.data, self.pos, self.end = data, pos, len(data) if end is None else end

    def at_end(self) -> bool:
        return self.pos >= self.end

    def byte(self) -> int:
        if self.pos >= self.end:
            raise ValueError("bytecode ends early")
        self.pos += 1
        return self.data[self.pos - 1]

    def varint(self) -> int:
        first = self.byte()
        if first & 1:
            return first >> 1
        if first == 0:  # a zero byte, then the value in 8 bytes
            return int.from_bytes(self.bytes(8), "little")
        extra = (first & -first).bit_length() - 1  # trailing zeros: how many more bytes
        self.pos -= 1
        return int.from_bytes(self.bytes(extra + 1), "little") >> (extra + 1)

    def bytes(self, n: int) -> memoryview:
        if self.pos + n > self.end:
            raise ValueError("bytecode ends early")
        self.pos += n
        return self.data[self.pos - n : self.pos]

    def align(self, alignment: int) -> None:
        self.pos += -self.pos % alignment


def _sections(data: memoryview) -> dict[int, tuple[int, int]]:
    """Section id -> (start, end) of its data."""
    r = _Reader(data)
    if bytes(r.bytes(4)) != _MAGIC:
        raise ValueError("not MLIR bytecode")
    r.varint()  # version
    while r.byte():  # producer, nul-terminated
        pass
    sections = {}
    while not r.at_end():
        code = r.byte()
        size = r.varint()
        if code & 0x80:
            r.align(r.varint())
        sections[code & 0x7F] = (r.pos, r.pos + size)
        r.pos += size
    return sections


def resource_blobs(bytecode: bytes) -> dict[str, memoryview]:
    """Every blob resource of ``bytecode`` by name (views into ``bytecode``); names seen twice are left out."""
    data = memoryview(bytecode)
    sections = _sections(data)
    if _RESOURCE_OFFSET_SECTION not in sections or _RESOURCE_SECTION not in sections:
        return {}
    r = _Reader(data, *sections[_STRING_SECTION])
    sizes = [r.varint() for _ in range(r.varint())][::-1]
    strings = []
    for size in sizes:
        strings.append(bytes(r.bytes(size)[:-1]).decode())
    offsets = _Reader(data, *sections[_RESOURCE_OFFSET_SECTION])
    start, end = sections[_RESOURCE_SECTION]
    pos = start
    blobs: dict[str, memoryview] = {}
    seen: set[str] = set()
    offsets.varint()  # the number of external groups; dialect groups follow to the end
    while not offsets.at_end():
        offsets.varint()  # the group's key
        for _ in range(offsets.varint()):
            name, size, kind = strings[offsets.varint()], offsets.varint(), offsets.byte()
            if kind == _BLOB_KIND and size:
                entry = _Reader(data, pos, pos + size)
                alignment, length = entry.varint(), entry.varint()
                entry.align(max(alignment, 1))
                blobs[name] = entry.bytes(length)
            if name in seen:
                blobs.pop(name, None)
            seen.add(name)
            pos += size
    if pos != end:
        raise ValueError("resource section size mismatch")
    return blobs


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
