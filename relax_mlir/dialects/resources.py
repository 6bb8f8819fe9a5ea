"""The raw bytes of a module's ``dense_resource`` blobs, read from its bytecode.

The bindings cannot read a blob's bytes and its text form is hex (slow to print and parse), so the bytes are
read from the bytecode, whose resource section holds them raw (the layout is MLIR's
``docs/BytecodeFormat.md``). ``relax-pack-weights`` reads weights this way, and the CPU target takes them
out of the object code (``runtime/weights.py``).
"""

from __future__ import annotations

_MAGIC = b"ML\xefR"
_STRING_SECTION, _RESOURCE_SECTION, _RESOURCE_OFFSET_SECTION = 0, 5, 6
_BLOB_KIND = 0


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
