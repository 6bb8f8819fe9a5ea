"""Prove that every native toolchain the tests use is installed and works; exit 1 naming what is missing.

CI runs this right after ``scripts/install-system-deps.sh`` and ``pip install -e '.[test]'``: it finds each
tool through the same lookups the tests use (so a package installed under another name, or one that
only a developer's machine had, shows up here), and builds and runs a one-line C program for each AOT
target (aarch64 under qemu-user), which needs the target's C headers and libc, not just its compiler.
"""

from __future__ import annotations

import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from relax_mlir.runtime import libs
from relax_mlir.targets import aot
from relax_mlir.transforms.gpu.target import ptxas

HELLO = '#include <stdio.h>\nint main(void) { printf("hello %d\\n", (int)sizeof(void *)); return 0; }\n'


def check_c_target(name: str, work: Path) -> str:
    """Compile and run ``HELLO`` for AOT target ``name``; '' when it works, else what failed."""
    spec = aot.AOT_TARGETS[name]
    try:
        cc = aot.find_compiler(spec)
    except Exception as e:  # noqa: BLE001  (report every failure, whatever its type)
        return f"{name}: no C compiler: {e}"
    runner: list[str] = []
    if platform.machine() != spec.machine:
        qemu = shutil.which(f"qemu-{spec.machine}")
        if not qemu:
            return f"{name}: qemu-{spec.machine} not found (Debian: qemu-user)"
        runner = [qemu, "-L", f"/usr/{spec.triple}"]
    source, binary = work / f"hello_{name}.c", work / f"hello_{name}"
    source.write_text(HELLO)
    built = subprocess.run([cc, str(source), "-o", str(binary)], capture_output=True, text=True)
    if built.returncode != 0:
        return f"{name}: {cc} cannot build a C program (headers or libc missing?):\n{built.stderr.strip()}"
    ran = subprocess.run([*runner, str(binary)], capture_output=True, text=True, timeout=60)
    if ran.returncode != 0 or ran.stdout.strip() != "hello 8":
        return f"{name}: the program built by {cc} did not run ({ran.returncode}): {ran.stdout}{ran.stderr}"
    return ""


def find_chromium() -> str | None:
    """The headless browser of the web example's test (Debian: chromium)."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


def check_chromium() -> str:
    """'' when chromium runs headless, else what failed."""
    browser = find_chromium()
    if browser is None:
        return "chromium not found (Debian: chromium)"
    ran = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", "data:text/html,<p>ok</p>"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if ran.returncode != 0 or "<p>ok</p>" not in ran.stdout:
        return f"{browser} --headless --dump-dom failed ({ran.returncode}): {ran.stderr.strip()[-500:]}"
    return ""


WASM_PROBE = """
func.func @main(%x: !relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32> {
  %0 = "relax.exp"(%x) : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
  return %0 : !relax.tensor<["n"], f32>
}
"""


def check_wasm() -> str:
    """Build a one-op module for wasm32 (zig's clang, wasi-libc, wasm-ld) and run it with wasmtime."""
    import numpy as np

    from relax_mlir.targets import compile

    try:
        out = compile(WASM_PROBE, "wasm32", opt_level=1, use_cache=False)(np.zeros(3, np.float32))
    except Exception as e:  # noqa: BLE001  (report every failure, whatever its type)
        return f"wasm32: {e}"
    return "" if out.tolist() == [1.0, 1.0, 1.0] else f"wasm32: the module computed {out.tolist()}"


def minimal_compute_spirv() -> bytes:
    """A SPIR-V 1.3 module with one empty compute entry point ``main`` (``@workgroup_size(1, 1, 1)``)."""
    import struct

    words = [0x07230203, 0x00010300, 0, 5, 0]
    words += [2 << 16 | 17, 1]  # OpCapability Shader
    words += [3 << 16 | 14, 0, 1]  # OpMemoryModel Logical GLSL450
    words += [5 << 16 | 15, 5, 1, *struct.unpack("<2I", b"main\0\0\0\0")]  # OpEntryPoint GLCompute %1 "main"
    words += [6 << 16 | 16, 1, 17, 1, 1, 1]  # OpExecutionMode %1 LocalSize 1 1 1
    words += [2 << 16 | 19, 2, 3 << 16 | 33, 3, 2]  # %2 = OpTypeVoid; %3 = OpTypeFunction %2
    words += [5 << 16 | 54, 2, 1, 0, 3, 2 << 16 | 248, 4, 1 << 16 | 253, 1 << 16 | 56]  # main: return
    return struct.pack(f"<{len(words)}I", *words)


def check_wgsl() -> str:
    """Translate a minimal SPIR-V compute shader to WGSL with naga-wasm in node (targets/wgsl.py)."""
    from relax_mlir.targets import wgsl

    try:
        text = wgsl.spirv_to_wgsl(minimal_compute_spirv())
    except Exception as e:  # noqa: BLE001  (report every failure, whatever its type)
        return f"wgsl: {e}"
    return "" if "@compute @workgroup_size(1, 1, 1)" in text else f"wgsl: naga wrote {text!r}"


def check_webgpu() -> str:
    """Open a WebGPU adapter (lavapipe: Debian's mesa-vulkan-drivers) and run a compiled kernel on it."""
    import numpy as np

    import relax_mlir

    program = """func.func @main(%x: !relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32> {
  %y = "relax.exp"(%x) : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
  return %y : !relax.tensor<["n"], f32>
}"""
    try:
        exe = relax_mlir.compile(program, target="webgpu", use_cache=False)
        x = np.linspace(-2, 2, 1001, dtype=np.float32)
        if not np.allclose(exe(x), np.exp(x), rtol=1e-5):
            return "webgpu: exp on the adapter disagrees with numpy"
    except Exception as e:  # noqa: BLE001  (report every failure, whatever its type)
        return f"webgpu: {e}"
    return ""


def main() -> int:
    problems: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        problems += [p for name in aot.AOT_TARGETS if (p := check_c_target(name, Path(tmp)))]
    if libs.openmp_library() is None:
        problems.append(
            "libomp.so.5 (LLVM's OpenMP runtime) not found or lacks __kmpc_fork_call (Debian: libomp5-14)"
        )
    tool = ptxas()
    if tool is None:
        problems.append("ptxas not found (pip: nvidia-cuda-nvcc-cu12, in the test extra)")
    elif subprocess.run([str(tool), "--version"], capture_output=True).returncode != 0:
        problems.append(f"{tool} --version failed")
    if problem := check_chromium():
        problems.append(problem)
    if problem := check_wasm():
        problems.append(problem)
    if problem := check_wgsl():
        problems.append(problem)
    if problem := check_webgpu():
        problems.append(problem)
    for problem in problems:
        print(f"check-toolchains: error: {problem}", file=sys.stderr)
    if not problems:
        print(
            f"check-toolchains: ok: C for {', '.join(aot.AOT_TARGETS)}, libomp, ptxas, chromium, wasm32, wgsl, webgpu"
        )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
