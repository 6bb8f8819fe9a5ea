"""The on-disk compile cache: a compiled object and its signatures, keyed by the *input* module.

The key is taken before any pass runs, so a hit skips the whole compiler. It digests the module's
text, or its bytecode (which holds the weights as raw bytes, so no 100 MB of hex is printed, and the
locations), with the relax pipeline, the opt level and what else shapes the code (``_toolchain``):
relax_mlir's own sources (any code change misses), the MLIR build, the host CPU, the native
libraries linked against, and the ``RELAX_MLIR_*`` environment except ``IGNORED_ENV`` (a new variable
that does not change the generated code belongs there, or it splits the cache).

An entry is ``<key>.o``, a weights file (the large constants, ``weights.py``, mapped into memory when
loaded; named by its contents) and ``<key>.json``: signatures (and PTX for CUDA), where each weight is,
the size and checksum of the object (SHA-256) and of the weights (CRC-32, for speed), and a SHA-256 of
all of that, so every byte of an entry is covered. Each file is written to a temporary file and renamed,
the metadata last: a killed or concurrent writer never leaves an entry that passes. On load, a missing
entry is a plain miss; a damaged one (a checksum, size or type that does not match, a missing or
truncated file, unreadable JSON) is a miss with a ``CacheWarning``, and the compile rewrites it. The
object is checked before LLVM links it (linking a damaged object crashes the process), the weights
before use. A cache directory that cannot be written (``$RELAX_MLIR_CACHE`` names a file, a read-only
place) gives one ``CacheWarning`` and the compile goes on without a cache.
"""

from __future__ import annotations

import functools
import hashlib
import json
import mmap
import os
import re
import warnings
import zlib
from pathlib import Path
from typing import Any

import llvmlite.binding as llvm
import mlir._mlir_libs
import numpy as np
from mlir import ir

from relax_mlir.errors import CacheWarning, RelaxError
from relax_mlir.runtime.executable import Function
from relax_mlir.runtime.libs import shared_libs
from relax_mlir.runtime.loader import LoadedObject
from relax_mlir.runtime.weights import Weight

CACHE_VERSION = "3"
# RELAX_MLIR_* variables that do not change the generated code (every other one is part of the key)
IGNORED_ENV = frozenset(
    {
        "RELAX_MLIR_CACHE",
        "RELAX_MLIR_BLAS_THREADS",
        "RELAX_MLIR_NUM_THREADS",  # its effect, the thread count of parallel kernels, is in the pipeline tag
        "RELAX_MLIR_TEST_OPT_LEVEL",
        "RELAX_MLIR_TEST_TARGET",
        "RELAX_MLIR_KEEP_MALLOC",
        "RELAX_MLIR_CUDA_RUNTIME",
        "RELAX_MLIR_REQUIRE_TOOLCHAINS",
    }
)


def cache_dir() -> Path:
    """Where compiled objects are kept: ``$RELAX_MLIR_CACHE``, else ``~/.cache/relax_mlir``."""
    env = os.environ.get("RELAX_MLIR_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "relax_mlir"


@functools.cache
def _toolchain() -> str:
    """Everything besides the module and the options that shapes the object, fixed for a process."""
    h = hashlib.sha256()
    package = Path(__file__).resolve().parents[1]  # relax_mlir/
    for path in sorted(package.rglob("*.py")):
        h.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes() + b"\0")
    capi = Path(mlir._mlir_libs.__file__).parent / "libMLIRPythonCAPI.so"
    stat = capi.stat() if capi.exists() else None
    h.update((f"{capi}:{stat.st_size}:{stat.st_mtime_ns}" if stat else "no MLIR C API library").encode())
    h.update(f"{llvm.get_host_cpu_name()}:{llvm.get_host_cpu_features().flatten()}".encode())
    h.update("\0".join(shared_libs()).encode())
    return h.hexdigest()


class _Digest:
    """A file-like sink for ``write_bytecode`` that only hashes (no 50 MB buffer is built)."""

    def __init__(self) -> None:
        self.hash = hashlib.sha256()

    def write(self, data: bytes) -> None:
        self.hash.update(data)


def module_digest(module: str | ir.Operation) -> str:
    """A digest of relax IR text, or of a module's bytecode (ops, attributes, weights, locations)."""
    if isinstance(module, str):
        return hashlib.sha256(module.encode()).hexdigest()
    sink = _Digest()
    module.write_bytecode(sink)
    return sink.hash.hexdigest()


def cache_key(digest: str, pipeline: str, opt_level: int) -> str:
    """The key of compiling the module of ``digest`` (``module_digest``) by relax ``pipeline`` at ``opt_level``."""
    env = sorted(
        (k, v) for k, v in os.environ.items() if k.startswith("RELAX_MLIR_") and k not in IGNORED_ENV
    )
    h = hashlib.sha256()
    for part in (CACHE_VERSION, _toolchain(), digest, pipeline, str(opt_level), json.dumps(env)):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


_WEIGHTS_NAME = re.compile(r"[0-9a-f]{32}\.weights")
# what reading a damaged entry can raise (anything else is a bug, not damage)
_DAMAGE = (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError, RecursionError, RelaxError)


class _Damaged(Exception):
    """A cache entry whose files do not match their recorded sizes, checksums or types."""


def load(key: str) -> dict[str, Function] | None:
    """The compiled functions of entry ``key``, or None: no entry, or a damaged one (with a warning)."""
    try:
        entry = _read_entry(key)
        if entry is None:
            return None
        data, meta = entry
        return _link(data, meta, _weights(meta))
    except (_Damaged, *_DAMAGE) as e:
        _damaged(key, e)
        return None


def _weights(meta: dict[str, Any]) -> np.ndarray | None:
    """The weights an entry points at, mapped from their file and checked; None when it has none."""
    weights = meta.get("weights")
    if weights is None:
        return None
    _expect(
        isinstance(weights, list)
        and len(weights) == 3
        and isinstance(weights[0], str)
        and _WEIGHTS_NAME.fullmatch(weights[0]) is not None
        and all(_is_size(x) for x in weights[1:]),
        "malformed weights record",
    )
    memory = _map(cache_dir() / weights[0])
    _expect(
        len(memory) == weights[1] and zlib.crc32(memory) == weights[2],
        f"{weights[0]} does not match its size and checksum",
    )
    return memory


def store(
    key: str, data: bytes | list[bytes], signatures: dict[str, Any], weights: list[Weight]
) -> dict[str, Function]:
    """Write entry ``key`` (the weights it points at, the object, then the metadata marking it complete)
    and return its functions, the weights mapped from the entry's file. Where the cache cannot be
    written, warn and return functions whose weights live in memory. ``data``: an object, or objects that
    link together (kept as one file, their sizes in the metadata).

    Weights files are named by their contents, so entries of one model (compiled with other options or
    other relax_mlir sources) share them, and one already there and intact is not written again."""
    meta: dict[str, Any] = {"signatures": signatures}
    if not isinstance(data, bytes):
        meta["parts"] = [len(part) for part in data]
        data = b"".join(data)
    meta, memory = _store(key, data, meta, weights)
    return _link(data, meta, memory)


def _store(
    key: str, data: bytes, meta: dict[str, Any], weights: list[Weight]
) -> tuple[dict[str, Any], np.ndarray | None]:
    """Write the weights, the object and ``meta`` (with the object's and weights' records) of entry
    ``key``; the metadata and the weights' memory (mapped from the file, or in memory where the cache
    cannot be written)."""
    chunks, layout, offset = [], [], 0
    for w in weights:
        chunks.append(b"\0" * (-offset % w.alignment))
        offset += len(chunks[-1])
        layout.append([w.symbol, offset])
        chunks.append(w.data)
        offset += len(w.data)
    digest, checksum = hashlib.sha256(), 0
    for chunk in chunks:
        digest.update(chunk)
        checksum = zlib.crc32(chunk, checksum)
    blob = cache_dir() / f"{digest.hexdigest()[:32]}.weights"
    meta = {
        **meta,
        "object": _object_record(data),
        "weights": [blob.name, offset, checksum] if weights else None,
        "pointers": layout,
    }
    try:
        blob.parent.mkdir(parents=True, exist_ok=True)
        if weights and not _intact(blob, offset, checksum):
            _write(blob, chunks)
        _write(cache_dir() / f"{key}.o", [data])
        _write(cache_dir() / f"{key}.json", [_sealed(meta)])
        memory = _map(blob) if weights else None
    except OSError as e:
        _unusable(e)
        memory = None
        if weights:
            memory = np.frombuffer(mmap.mmap(-1, offset), np.uint8)  # page-aligned, like a mapped file
            for (_, start), w in zip(layout, weights, strict=True):
                memory[start : start + len(w.data)] = np.frombuffer(w.data, np.uint8)
    return meta, memory


def store_unlinked(
    key: str, data: bytes, meta: dict[str, Any], weights: list[Weight] | None = None
) -> tuple[dict[str, Any], np.ndarray | None]:
    """Write entry ``key`` for an object this process does not link when it is built (a CUDA build, which
    loads only where a GPU is; a webgpu build, linked on first use): the weights, the object, then ``meta``
    with their records. Where the cache cannot be written, warn (the build goes on without an entry).
    Returns the metadata written and the weights' memory (None without weights)."""
    return _store(key, data, meta, weights or [])


def load_unlinked(
    key: str, fields: tuple[str, ...] = ("ptx",)
) -> tuple[bytes, dict[str, Any], np.ndarray | None] | None:
    """The object, metadata and weights' memory of an entry written by ``store_unlinked``, or None: no
    entry, or a damaged one (with a warning). Each of ``fields`` must be a dict of strings in the metadata
    (CUDA's PTX)."""
    try:
        entry = _read_entry(key)
        if entry is None:
            return None
        data, meta = entry
        for name in fields:
            record = meta.get(name)
            _expect(
                isinstance(record, dict) and all(isinstance(v, str) for v in record.values()),
                f"malformed {name} record",
            )
        memory = _weights(meta)
        pointers(meta, memory)
    except (_Damaged, *_DAMAGE) as e:
        _damaged(key, e)
        return None
    return data, meta, memory


def _read_entry(key: str) -> tuple[bytes, dict[str, Any]] | None:
    """The checked object and metadata of entry ``key`` (with well-formed signatures), or None when there
    is none; ``_Damaged`` (or an I/O or JSON error) when it does not hold together."""
    meta = _read_meta(key)
    if meta is None:
        return None
    data = _read_object(key, meta)
    _expect(_is_signatures(meta.get("signatures")), "malformed signatures")
    return data, meta


def _damaged(key: str, e: Exception) -> None:
    warnings.warn(
        f"compile cache entry {cache_dir() / key}.* is damaged ({str(e) or type(e).__name__}); recompiling it",
        CacheWarning,
        stacklevel=3,
    )


def _unusable(e: OSError) -> None:
    warnings.warn(
        f"compile cache directory {cache_dir()} cannot be used ({e}); compiling without a cache "
        "(set RELAX_MLIR_CACHE to a writable directory)",
        CacheWarning,
        stacklevel=3,
    )


def _checksum(meta: dict[str, Any]) -> str:
    """SHA-256 of metadata (as JSON, keys sorted: the same for the written and the parsed value)."""
    return hashlib.sha256(json.dumps(meta, sort_keys=True).encode()).hexdigest()


def _sealed(meta: dict[str, Any]) -> bytes:
    """The bytes of an entry's ``.json``: ``meta`` and its checksum."""
    return json.dumps({**meta, "checksum": _checksum(meta)}).encode()


def _object_record(data: bytes) -> list[Any]:
    return [len(data), hashlib.sha256(data).hexdigest()]


def _expect(ok: bool, what: str) -> None:
    if not ok:
        raise _Damaged(what)


def _is_size(x: object) -> bool:
    return type(x) is int and x >= 0


def _is_signatures(x: object) -> bool:
    return isinstance(x, dict) and all(isinstance(s, dict) for s in x.values())


def _read_meta(key: str) -> dict[str, Any] | None:
    """The metadata of entry ``key``, its checksum verified; None when there is no entry to read."""
    path = cache_dir() / f"{key}.json"
    try:
        text = path.read_bytes()
    except OSError:  # no entry, or no readable cache: a miss (``store`` warns if it cannot write either)
        return None
    try:
        meta = json.loads(text)
    except ValueError as e:  # JSONDecodeError, UnicodeDecodeError
        raise _Damaged(f"{path.name} is not JSON: {e}") from None
    _expect(isinstance(meta, dict) and isinstance(meta.get("checksum"), str), f"{path.name} has no checksum")
    checksum = meta.pop("checksum")
    _expect(checksum == _checksum(meta), f"{path.name} does not match its checksum")
    return meta


def _read_object(key: str, meta: dict[str, Any]) -> bytes:
    """The entry's object, checked against its recorded size and SHA-256 (LLVM crashes on a damaged one)."""
    record = meta.get("object")
    _expect(
        isinstance(record, list) and len(record) == 2 and _is_size(record[0]) and isinstance(record[1], str),
        "malformed object record",
    )
    path = cache_dir() / f"{key}.o"
    data = path.read_bytes()
    _expect(
        [len(data), hashlib.sha256(data).hexdigest()] == record, f"{path.name} does not match its checksum"
    )
    return data


def _map(path: Path) -> np.ndarray:
    """A file's bytes, mapped copy-on-write (nothing writes back to the file)."""
    with path.open("rb") as f:
        return np.frombuffer(mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY), np.uint8)


def _link(data: bytes, meta: dict[str, Any], memory: np.ndarray | None) -> dict[str, Function]:
    """Link the object, point its weight globals into ``memory`` (by ``meta["pointers"]``), wrap its
    functions (by ``meta["signatures"]``)."""
    loaded = LoadedObject(_parts(data, meta), pointers(meta, memory), memory)
    return {name: Function(name, sig, loaded) for name, sig in meta["signatures"].items()}


def _parts(data: bytes, meta: dict[str, Any]) -> list[bytes]:
    """The objects of an entry's object file, by the sizes in ``meta["parts"]`` (one when it has none)."""
    sizes = meta.get("parts", [len(data)])
    _expect(
        isinstance(sizes, list) and all(_is_size(n) for n in sizes) and sum(sizes) == len(data),
        "malformed object parts",
    )
    starts = [sum(sizes[:i]) for i in range(len(sizes))]
    return [data[a : a + n] for a, n in zip(starts, sizes, strict=True)]


def pointers(meta: dict[str, Any], memory: np.ndarray | None) -> dict[str, int]:
    """The address in ``memory`` of each weight global of an entry (``meta["pointers"]``), checked."""
    layout = meta.get("pointers", [])
    size = 0 if memory is None else len(memory)
    _expect(
        isinstance(layout, list)
        and all(
            isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) and _is_size(p[1]) and p[1] <= size
            for p in layout
        ),
        "malformed weight pointers",
    )
    base = 0 if memory is None else memory.ctypes.data
    return {symbol: base + offset for symbol, offset in layout}


def _write(path: Path, chunks: list[Any]) -> None:
    """Write ``chunks`` (bytes-like) to ``path`` atomically: to a temporary file of this writer, renamed."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    try:
        with tmp.open("xb") as f:
            for chunk in chunks:
                f.write(chunk)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _intact(path: Path, size: int, checksum: int) -> bool:
    try:
        with path.open("rb") as f:
            return (
                os.fstat(f.fileno()).st_size == size
                and zlib.crc32(mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)) == checksum
            )
    except (OSError, ValueError):
        return False
