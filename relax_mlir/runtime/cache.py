"""The on-disk compile cache: a compiled object and its signatures, keyed by the *input* module.

The key is taken before any pass runs, so a hit skips the whole compiler. It digests the module's
text, or its bytecode (which holds the weights as raw bytes, so no 100 MB of hex is printed, and the
locations), with the relax pipeline, the opt level and what else shapes the code (``_toolchain``):
relax_mlir's own sources (any code change misses), the MLIR build, the host CPU, the native
libraries linked against, and the ``RELAX_MLIR_*`` environment except ``IGNORED_ENV`` (a new variable
that does not change the generated code belongs there, or it splits the cache).

An entry is ``<key>.o``, a weights file (the large constants, ``weights.py``, mapped into memory when
loaded; named by its contents) and ``<key>.json`` (signatures, where each weight is, sizes and CRC-32
checksums), each written atomically, the metadata last. A missing, partial or corrupted entry is a miss: the object is
checked before LLVM links it (linking a damaged object crashes the process), the weights before use.
"""

from __future__ import annotations

import functools
import hashlib
import json
import mmap
import os
import zlib
from pathlib import Path
from typing import Any

import llvmlite.binding as llvm
import mlir._mlir_libs
import numpy as np
from mlir import ir

import relax_mlir
from relax_mlir.runtime.executable import Function
from relax_mlir.runtime.libs import shared_libs
from relax_mlir.runtime.loader import LoadedObject
from relax_mlir.runtime.weights import Weight

CACHE_VERSION = "2"
# RELAX_MLIR_* variables that do not change the generated code (every other one is part of the key)
IGNORED_ENV = frozenset(
    {
        "RELAX_MLIR_CACHE",
        "RELAX_MLIR_BLAS_THREADS",
        "RELAX_MLIR_TEST_OPT_LEVEL",
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
    package = Path(relax_mlir.__file__).parent
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
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    env.append(("cores", str(cores)))  # the default thread count of parallel kernels
    h = hashlib.sha256()
    for part in (CACHE_VERSION, _toolchain(), digest, pipeline, str(opt_level), json.dumps(env)):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


class _Damaged(Exception):
    """A cache entry whose files do not match their recorded sizes and checksums."""


def load(key: str) -> dict[str, Function] | None:
    """The compiled functions of entry ``key``, or None when it is missing, partial or corrupted."""
    try:
        return _open(key, verify=True)
    except (_Damaged, OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def open_stored(key: str) -> dict[str, Function]:
    """The compiled functions of entry ``key``, just written by ``store`` (so not checked again)."""
    return _open(key, verify=False)


def store(key: str, data: bytes, signatures: dict[str, Any], weights: list[Weight]) -> None:
    """Write entry ``key``: the object, the weights it points at, then the metadata marking it complete.

    Weights files are named by their contents, so entries of one model (compiled with other options or
    other relax_mlir sources) share them, and one already there is not written again."""
    obj = cache_dir() / f"{key}.o"
    obj.parent.mkdir(parents=True, exist_ok=True)
    chunks, layout, offset = [], [], 0
    for w in weights:
        chunks.append(b"\0" * (-offset % w.alignment))
        offset += len(chunks[-1])
        layout.append((w.symbol, offset))
        chunks.append(w.data)
        offset += len(w.data)
    digest, checksum = hashlib.sha256(), 0
    for chunk in chunks:
        digest.update(chunk)
        checksum = zlib.crc32(chunk, checksum)
    blob = cache_dir() / f"{digest.hexdigest()[:32]}.weights"
    if weights and not _intact(blob, offset, checksum):
        _write(blob, chunks)
    _write(obj, [data])
    meta = {
        "object": [len(data), zlib.crc32(data)],
        "weights": [blob.name, offset, checksum],
        "pointers": layout,
        "signatures": signatures,
    }
    _write(obj.with_suffix(".json"), [json.dumps(meta).encode()])


def store_unlinked(key: str, data: bytes, meta: dict[str, Any]) -> None:
    """Write entry ``key`` for an object this process does not link when it is built (a CUDA build, which
    loads only where a GPU is): the object, then ``meta`` with its size and checksum."""
    obj = cache_dir() / f"{key}.o"
    obj.parent.mkdir(parents=True, exist_ok=True)
    _write(obj, [data])
    _write(obj.with_suffix(".json"), [json.dumps({**meta, "object": [len(data), zlib.crc32(data)]}).encode()])


def load_unlinked(key: str) -> tuple[bytes, dict[str, Any]] | None:
    """The object and metadata of an entry written by ``store_unlinked``, or None (missing or damaged)."""
    obj = cache_dir() / f"{key}.o"
    try:
        meta = json.loads(obj.with_suffix(".json").read_text())
        data = obj.read_bytes()
        _check(True, data, *meta["object"])
    except (_Damaged, OSError, ValueError, KeyError, TypeError):
        return None
    return data, meta


def _write(path: Path, chunks: list[Any]) -> None:
    """Write ``chunks`` (bytes-like) to ``path`` atomically."""
    tmp = path.with_suffix(f"{path.suffix}.tmp{os.getpid()}")
    with tmp.open("wb") as f:
        for chunk in chunks:
            f.write(chunk)
    os.replace(tmp, path)


def _intact(path: Path, size: int, checksum: int) -> bool:
    try:
        with path.open("rb") as f:
            return (
                os.fstat(f.fileno()).st_size == size
                and zlib.crc32(mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)) == checksum
            )
    except (OSError, ValueError):
        return False


def _check(verify: bool, data: Any, size: int, checksum: int) -> None:
    if verify and (len(data) != size or zlib.crc32(data) != checksum):
        raise _Damaged


def _open(key: str, verify: bool) -> dict[str, Function]:
    obj = cache_dir() / f"{key}.o"
    meta = json.loads(obj.with_suffix(".json").read_text())
    data = obj.read_bytes()
    _check(verify, data, *meta["object"])
    memory, pointers = None, {}
    if meta["pointers"]:
        name, size, checksum = meta["weights"]
        with (cache_dir() / name).open("rb") as f:  # copy-on-write: nothing writes back to the file
            memory = np.frombuffer(mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY), np.uint8)
        _check(verify, memory, size, checksum)
        pointers = {symbol: memory.ctypes.data + offset for symbol, offset in meta["pointers"]}
    loaded = LoadedObject(data, pointers, memory)
    return {name: Function(name, sig, loaded) for name, sig in meta["signatures"].items()}
