"""WGSL for browsers: the webgpu target's SPIR-V kernels translated by naga (wgpu's shader translator).

WebGPU in a browser accepts WGSL only. ``spirv_to_wgsl(spirv)`` runs naga compiled to WebAssembly (the
``naga-wasm`` npm package, pinned in the repository's ``package.json``/``package-lock.json`` and installed
with ``npm ci`` at the repository root by ``scripts/install-js-deps.sh``) in node (>= 20) through
``wgsl_naga.mjs`` next to this file. ``write_kernels(exe.kernels, directory)`` writes each kernel's
``<key>.spv``, its ``<key>.wgsl`` where WGSL can express it, and ``kernels.json`` (entry point, workgroup
size, the binding and params layout of the kernel ABI, and for a kernel without WGSL the reason);
``examples/webgpu/`` runs such a directory in a browser.

WGSL has no 64-, 16- or 8-bit integers and no f64 (f16 needs the ``shader-f16`` device feature): a
kernel whose SPIR-V declares one of those capabilities is refused before naga sees it (naga would print
its own 64-bit extension, which browsers reject). A missing node or naga-wasm raises ``CompileError``
saying what to install; a kernel naga cannot translate raises ``ShaderTranslationError`` with naga's text.
"""

from __future__ import annotations

import base64
import functools
import json
import re
import shutil
import struct
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from relax_mlir.errors import CompileError, ShaderTranslationError

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "wgsl_naga.mjs"
INSTALL = "run scripts/install-js-deps.sh (npm ci at the repository root; needs node >= 20 and npm)"

# SPIR-V capability number -> name, for the capabilities a kernel can declare (SPIR-V spec, section 3.31)
CAPABILITIES = {
    0: "Matrix",
    1: "Shader",
    4: "Addresses",
    9: "Float16",
    10: "Float64",
    11: "Int64",
    12: "Int64Atomics",
    22: "Int16",
    39: "Int8",
    61: "GroupNonUniform",
    62: "GroupNonUniformVote",
    63: "GroupNonUniformArithmetic",
    64: "GroupNonUniformBallot",
    65: "GroupNonUniformShuffle",
    66: "GroupNonUniformShuffleRelative",
    67: "GroupNonUniformClustered",
    68: "GroupNonUniformQuad",
    4433: "StorageBuffer16BitAccess",
    4434: "UniformAndStorageBuffer16BitAccess",
    4448: "StorageBuffer8BitAccess",
    4449: "UniformAndStorageBuffer8BitAccess",
}
# capabilities WGSL cannot express, with the reason
UNSUPPORTED = {
    "Float64": "WGSL has no f64",
    "Int64": "WGSL has no 64-bit integers (i64/u64)",
    "Int64Atomics": "WGSL has no 64-bit integers (i64/u64)",
    "Int16": "WGSL has no 16-bit integers",
    "Int8": "WGSL has no 8-bit integers",
    "StorageBuffer8BitAccess": "WGSL has no 8-bit storage",
    "UniformAndStorageBuffer8BitAccess": "WGSL has no 8-bit storage",
    "Addresses": "WGSL has no physical addressing",
}
# capabilities that WGSL expresses only with an optional WebGPU device feature
FEATURES = {"Float16": "shader-f16", "StorageBuffer16BitAccess": "shader-f16"}
FEATURES |= {name: "subgroups" for name in CAPABILITIES.values() if name.startswith("GroupNonUniform")}


def spirv_capabilities(spirv: bytes) -> list[str]:
    """The capabilities a SPIR-V module declares (``OpCapability``), by name (``Cap<n>`` if unnamed)."""
    if len(spirv) < 20 or len(spirv) % 4 or struct.unpack_from("<I", spirv)[0] != 0x07230203:
        raise ShaderTranslationError(
            f"not a SPIR-V module: expected little-endian words starting with the magic number 0x07230203, "
            f"found {len(spirv)} bytes starting with {spirv[:4].hex() or 'nothing'}"
        )
    words = struct.unpack(f"<{len(spirv) // 4}I", spirv)
    found, at = [], 5
    while at < len(words):
        count, opcode = words[at] >> 16, words[at] & 0xFFFF
        if count == 0:
            break
        if opcode == 17:  # OpCapability
            found.append(CAPABILITIES.get(words[at + 1], f"Cap{words[at + 1]}"))
        elif opcode not in (10, 11, 14):  # capabilities come first, extensions and imports may interleave
            break
        at += count
    return found


def required_features(capabilities: list[str]) -> list[str]:
    """The optional WebGPU device features (``shader-f16``, ``subgroups``) a kernel's WGSL needs."""
    return sorted({FEATURES[c] for c in capabilities if c in FEATURES})


def _check_capabilities(spirv: bytes) -> None:
    reasons = {f"{c}: {UNSUPPORTED[c]}" for c in spirv_capabilities(spirv) if c in UNSUPPORTED}
    if reasons:
        raise ShaderTranslationError(
            "the kernel cannot be written in WGSL: its SPIR-V declares " + "; ".join(sorted(reasons))
        )


def _node_modules() -> Path | None:
    """The ``node_modules`` directory node resolves ``naga-wasm`` from for ``SCRIPT`` (the nearest above it)."""
    for folder in SCRIPT.parents:
        if (folder / "node_modules" / "naga-wasm" / "package.json").exists():
            return folder / "node_modules"
    return None


def translator() -> list[str]:
    """The command that runs ``wgsl_naga.mjs``, or ``CompileError`` saying what is missing."""
    node = shutil.which("node")
    if node is None:
        raise CompileError(f"translating SPIR-V to WGSL needs node (>= 20), not found on PATH: {INSTALL}")
    if _node_modules() is None:
        raise CompileError(
            f"translating SPIR-V to WGSL needs the naga-wasm npm package, not found in a node_modules "
            f"directory above {HERE}: {INSTALL}"
        )
    return [node, str(SCRIPT)]


@functools.cache
def naga_version() -> str:
    """naga's version (``30.0.1`` in ``naga-wasm@30.1.0``), or ``CompileError`` if it cannot run."""
    done = subprocess.run([*translator(), "--version"], capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise CompileError(
            f"naga-wasm does not run in node ({done.returncode}): {done.stderr.strip()[-500:]}"
        )
    return done.stdout.strip()


def translate(spirv: Mapping[str, bytes]) -> dict[str, str | ShaderTranslationError]:
    """WGSL for each named SPIR-V module (one node process for all), or the error saying why there is none."""
    result: dict[str, str | ShaderTranslationError] = {}
    request = {}
    for name, code in spirv.items():
        try:
            _check_capabilities(code)
        except ShaderTranslationError as e:
            result[name] = ShaderTranslationError(f"{name}: {e}")
            continue
        request[name] = base64.b64encode(code).decode()
    if request:
        done = subprocess.run(
            translator(), input=json.dumps(request), capture_output=True, text=True, timeout=600
        )
        if done.returncode != 0:
            raise CompileError(f"{SCRIPT.name} failed ({done.returncode}): {done.stderr.strip()[-1000:]}")
        for name, reply in json.loads(done.stdout).items():
            if "error" in reply:
                result[name] = ShaderTranslationError(
                    f"{name}: naga cannot translate it to WGSL: {reply['error']}"
                )
            else:
                result[name] = reply["wgsl"]
    return {name: result[name] for name in spirv}


def spirv_to_wgsl(spirv: bytes, name: str = "kernel") -> str:
    """The WGSL of one SPIR-V module; ``ShaderTranslationError`` (naga's text included) if WGSL cannot express it."""
    out = translate({name: spirv})[name]
    if isinstance(out, ShaderTranslationError):
        raise out
    return out


def wgsl_entry_point(wgsl: str, entry: str) -> str:
    """The name naga gave SPIR-V entry point ``entry`` in ``wgsl`` (it appends ``_`` to names ending in a
    digit or clashing with a WGSL keyword: ``mul_i32`` becomes ``mul_i32_``)."""
    names = re.findall(r"@compute\b[^;{]*?\bfn\s+(\w+)\s*\(", wgsl)
    if entry in names:
        return entry
    close = [n for n in names if n.rstrip("_") == entry.rstrip("_")]
    if len(close) == 1 or len(names) == 1:
        return (close or names)[0]
    raise ShaderTranslationError(f"entry point {entry} not found in naga's WGSL (entry points: {names})")


def kernel_layout(kernel: Any) -> dict[str, Any]:
    """A kernel's entry in ``kernels.json``: entry point, workgroup size and the kernel ABI's layout.

    ``kernel`` is a ``KernelInfo`` of the webgpu target (only its plain attributes are read): storage
    buffer ``binding`` i holds the i-th memref argument; the last binding is the ``i32`` params buffer
    (per memref argument its element offset, sizes and strides; then each scalar as one i32).
    """
    args = [dict(arg) for arg in kernel.args]
    memrefs = [a for a in args if a["kind"] == "memref"]
    params_length = 0
    for a in args:
        width = 1 + 2 * a["rank"] if a["kind"] == "memref" else 1
        params_length = max(params_length, a["params_at"] + width)
    bindings = [{"binding": a["binding"], "dtype": a["dtype"], "arg": args.index(a)} for a in memrefs]
    bindings.append({"binding": len(memrefs), "dtype": "i32", "params": True})
    return {
        "module": kernel.module,
        "entry": kernel.entry,
        "workgroup_size": list(kernel.workgroup_size),
        "args": args,
        "bindings": bindings,
        "params_binding": len(memrefs),
        "params_length": params_length,
        "capabilities": list(getattr(kernel, "capabilities", None) or spirv_capabilities(kernel.spirv)),
    }


def _file_stem(key: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", key)


def write_kernels(kernels: Mapping[str, Any], directory: str | Path) -> dict[str, Any]:
    """Write ``<key>.spv``, ``<key>.wgsl`` (where translation succeeds) and ``kernels.json``; return the latter.

    ``kernels`` maps ``"module.entry"`` to the webgpu target's ``KernelInfo`` (``exe.kernels``). A kernel
    WGSL cannot express gets ``"wgsl": null`` and ``"wgsl_error"`` (the reason) in ``kernels.json``; the
    others get ``"wgsl_entry"``, the entry point's name in the WGSL (naga may rename it).
    Raises ``CompileError`` if node or naga-wasm is missing.
    """
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    wgsl = translate({key: kernel.spirv for key, kernel in kernels.items()})
    entries: dict[str, Any] = {}
    for key, kernel in kernels.items():
        stem = _file_stem(key)
        (out / f"{stem}.spv").write_bytes(kernel.spirv)
        entry = kernel_layout(kernel) | {"spirv": f"{stem}.spv", "wgsl": None}
        entry["features"] = required_features(entry["capabilities"])
        text = wgsl[key]
        if isinstance(text, ShaderTranslationError):
            entry["wgsl_error"] = str(text)
        else:
            (out / f"{stem}.wgsl").write_text(text)
            entry["wgsl"] = f"{stem}.wgsl"
            entry["wgsl_entry"] = wgsl_entry_point(text, kernel.entry)
        entries[key] = entry
    manifest = {"format": 1, "translator": f"naga {naga_version()} (naga-wasm)", "kernels": entries}
    (out / "kernels.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest
