"""relax-compile: shared libraries with a C API for x86_64 (run natively) and aarch64 (run under qemu).

Each target builds two libraries once (module-scoped fixtures): the README's demo model (a GPT block,
weights as parameters) and a model with every kind of checked input (symbols, an expression dim, a
bound, prim/shape/tuple parameters, a match_cast checked inside the function). A C driver
(``test/c/relax_driver.c``) linked against each library reads inputs from a file, asks the output
shapes, runs the function and writes the outputs, which are compared with numpy. Without
qemu-aarch64 or a cross gcc the aarch64 tests skip, unless ``$RELAX_MLIR_REQUIRE_TOOLCHAINS=1``.
"""

from __future__ import annotations

import platform
import re
import shutil
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest
from oprun import build_fn, checked_module
from toolchains import missing_toolchain

import relax_mlir
import relax_mlir.builder as rb
from relax_mlir.dialects import relax as R
from relax_mlir.errors import CompileError, InputError, RelaxError
from relax_mlir.examples import reference
from relax_mlir.examples.models import transformer_block
from relax_mlir.pipelines.data import names
from relax_mlir.runtime import capi
from relax_mlir.targets import aot, compile_library

ROOT = Path(__file__).resolve().parents[2]
DRIVER = ROOT / "test" / "c" / "relax_driver.c"
D, HEADS, FF = 64, 4, 128
CODES = {name: value for name, value, _ in capi.ERRORS}
DTYPE_CODES = {
    np.dtype(np.float32): 12,
    np.dtype(np.float64): 13,
    np.dtype(np.int64): 5,
    np.dtype(np.int32): 4,
}
DTYPE_OF = {12: np.float32, 13: np.float64, 5: np.int64, 4: np.int32}


def _toolchain(target: str) -> tuple[list[str], str]:
    """(command prefix that runs a target binary, C compiler), or skip (fail in CI)."""
    spec = aot.AOT_TARGETS[target]
    missing = []
    try:
        cc = aot.find_compiler(spec)
    except RelaxError as e:
        cc, missing = "", [str(e)]
    runner: list[str] = []
    if platform.machine() != spec.machine:
        qemu = shutil.which(f"qemu-{spec.machine}")
        if not qemu:
            missing.append(f"qemu-{spec.machine} (Debian: apt-get install qemu-user)")
        runner = [qemu or "", "-L", f"/usr/{spec.triple}"]
    if missing:
        missing_toolchain(f"no {target} toolchain: {'; '.join(missing)}")
    return runner, cc


class Built:
    """A library, its driver and a way to run it."""

    def __init__(self, lib: aot.Library, runner: list[str], cc: str, fn: str, work: Path) -> None:
        self.lib, self.runner, self.work = lib, runner, work
        self.driver = work / f"driver_{fn}"
        macro = lib.functions[fn].upper()
        subprocess.run(
            [
                cc,
                "-O1",
                "-Wall",
                "-Werror",
                f'-DRELAX_HEADER="{lib.header.name}"',
                f"-DRELAX_FN={lib.functions[fn]}",
                f"-DRELAX_FN_MACRO={macro}",
                f"-I{work}",
                str(DRIVER),
                f"-L{work}",
                f"-l:{lib.path.name}",
                "-Wl,-rpath,$ORIGIN",
                "-o",
                str(self.driver),
            ],
            check=True,
        )

    def run(self, inputs: list[np.ndarray], *extra: str) -> tuple[int, list[np.ndarray] | str]:
        """(0, outputs then the inputs as the call left them) or (error code, message)."""
        src, dst = self.work / "in.bin", self.work / "out.bin"
        write_tensors(src, inputs)
        result = subprocess.run(
            [*self.runner, str(self.driver), str(src), str(dst), *extra],
            capture_output=True,
            text=True,
            timeout=60,
        )
        if result.returncode == 3:
            code, _, message = result.stdout.strip().partition(": ")
            return int(code.split()[1]), message
        assert result.returncode == 0, result.stderr
        return 0, read_tensors(dst)


def write_tensors(path: Path, arrays: list[np.ndarray]) -> None:
    with open(path, "wb") as f:
        f.write(struct.pack("=q", len(arrays)))
        for a in arrays:
            a = np.ascontiguousarray(a).reshape(a.shape)  # (ascontiguousarray makes a 0-d array 1-d)
            f.write(struct.pack(f"=qq{a.ndim}qq", DTYPE_CODES[a.dtype], a.ndim, *a.shape, a.nbytes))
            f.write(a.tobytes())


def read_tensors(path: Path) -> list[np.ndarray]:
    data = path.read_bytes()
    (n,), at, out = struct.unpack_from("=q", data), 8, []
    for _ in range(n):
        dtype, ndim = struct.unpack_from("=qq", data, at)
        shape = struct.unpack_from(f"={ndim}q", data, at + 16)
        (nbytes,) = struct.unpack_from("=q", data, at + 16 + 8 * ndim)
        at += 24 + 8 * ndim
        out.append(np.frombuffer(data[at : at + nbytes], DTYPE_OF[dtype]).reshape(shape))
        at += nbytes
    return out


@pytest.fixture(scope="module", params=["x86_64", "aarch64"])
def target(request) -> str:
    return request.param


@pytest.fixture(scope="module")
def demo(target: str, tmp_path_factory: pytest.TempPathFactory) -> Built:
    runner, cc = _toolchain(target)
    work = tmp_path_factory.mktemp(f"demo_{target}")
    lib = relax_mlir.compile_library(transformer_block(D, HEADS, FF), work / "libdemo.so", target=target)
    return Built(lib, runner, cc, "transformer_block", work)


@pytest.fixture(scope="module")
def checked(target: str, tmp_path_factory: pytest.TempPathFactory) -> Built:
    runner, cc = _toolchain(target)
    work = tmp_path_factory.mktemp(f"checked_{target}")
    lib = compile_library(checked_module(), work / "libchecked.so", target=target)
    return Built(lib, runner, cc, "main", work)


def _demo_inputs(b: int, s: int) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    x = np.random.default_rng(b * 100 + s).standard_normal((b, s, D)).astype(np.float32)
    return x, reference.transformer_weights(D, FF)


ELF_MACHINES = {"x86_64": 62, "aarch64": 183}


def test_demo_matches_numpy(demo: Built, target: str) -> None:
    assert demo.lib.header is not None and demo.lib.header.exists()
    assert struct.unpack_from("<H", demo.lib.path.read_bytes(), 18)[0] == ELF_MACHINES[target]
    assert all(n.startswith(("libc.so", "libm.so", "ld-linux")) for n in demo.lib.needed), demo.lib.needed
    assert not [s for s in demo.lib.undefined if "kmpc" in s or "omp" in s or "mlir" in s or "blas" in s]
    for b, s in [(1, 1), (2, 7), (3, 16), (1, 64), (16, 33)]:  # b = 16: at its upper bound
        x, weights = _demo_inputs(b, s)
        code, outs = demo.run([x, *weights.values()])
        assert code == 0, outs
        expected = reference.transformer_block(x, HEADS, weights)
        assert outs[0].shape == (b, s, D)
        np.testing.assert_allclose(outs[0], expected, atol=1e-3, rtol=1e-3)


def test_demo_errors(demo: Built) -> None:
    x, weights = _demo_inputs(2, 5)
    w = list(weights.values())
    cases = [
        (
            [x.astype(np.float64), *w],
            "RELAX_ERR_DTYPE",
            "parameter 'x' has dtype f64 (13), expected f32 (12)",
        ),
        ([x[0], *w], "RELAX_ERR_RANK", "parameter 'x' has rank 2, expected rank 3 tensor<[b, s, 64], f32>"),
        ([x[..., :32], *w], "RELAX_ERR_SHAPE", "parameter 'x' dim 2 is 32, expected 64"),
        (
            [np.zeros((17, 2, D), np.float32), *w],
            "RELAX_ERR_SHAPE",
            "symbol 'b' is 17 (from parameter 'x' dim 0), above its upper bound 16",
        ),
        ([x, *w[:-1]], "RELAX_ERR_ARG_COUNT", "@transformer_block takes 13 input(s), got 12"),
    ]
    for inputs, code, message in cases:
        assert demo.run(inputs) == (
            CODES[code],
            f"@transformer_block: {message}" if "@" not in message else message,
        )
    assert demo.run([x, *w], "--bad-output") == (
        CODES["RELAX_ERR_SHAPE"],
        "@transformer_block: output #0 dim 2 is 65, expected 64",
    )


def _checked_inputs(n: int, m: int) -> list[np.ndarray]:
    rng = np.random.default_rng(n * 10 + m)
    x, y, t0 = (rng.standard_normal(s).astype(np.float32) for s in [(n, m), (m,), (m,)])
    w = np.arange(2 * m, dtype=np.float32)
    return [x, y, w, np.array(n, np.int64), np.array([n, m], np.int64), t0, np.array(3, np.int32)]


def test_checked_inputs_and_outputs(checked: Built) -> None:
    for n in (1, 5, 16):
        inputs = _checked_inputs(n, 4)
        code, outs = checked.run(inputs)
        assert code == 0, outs
        x, y, t0 = inputs[0], inputs[1], inputs[5]
        np.testing.assert_allclose(outs[0], x + y + t0, rtol=1e-6)
        np.testing.assert_allclose(outs[1], np.exp(x), rtol=1e-5)
        assert outs[2].tolist() == [n, 4] and outs[3].shape == () and int(outs[3]) == 4
        np.testing.assert_array_equal(outs[4], np.concatenate([x, inputs[2].reshape(2, 4)]))


def test_checked_errors(checked: Built) -> None:
    good = _checked_inputs(3, 4)

    def swap(i: int, value: np.ndarray) -> list[np.ndarray]:
        return [value if j == i else a for j, a in enumerate(good)]

    shape = CODES["RELAX_ERR_SHAPE"]
    cases = [
        (
            swap(1, np.zeros(5, np.float32)),
            shape,
            "parameter 'y' dim 0 is 5, but symbol 'm' is 4 from parameter 'x' dim 1",
        ),
        (swap(2, np.zeros(7, np.float32)), shape, "parameter 'w' dim 0 is 7, expected 2 * m = 8"),
        (
            swap(3, np.array(2, np.int64)),
            shape,
            "parameter 'k' is 2, but symbol 'n' is 3 from parameter 'x' dim 0",
        ),
        (swap(4, np.array([3, 4, 1], np.int64)), shape, "parameter 'p' has 3 values, expected 2"),
        (
            swap(6, np.array(3, np.int64)),
            CODES["RELAX_ERR_DTYPE"],
            "parameter 't.1' has dtype i64 (5), expected i32 (4)",
        ),
        (
            _checked_inputs(17, 4),
            shape,
            "symbol 'n' is 17 (from parameter 'x' dim 0), above its upper bound 16",
        ),
        (_checked_inputs(2, 5), CODES["RELAX_ERR_RUNTIME"], "oprun.py:"),
    ]
    exe = relax_mlir.compile(checked_module(), opt_level=1)
    for inputs, code, message in cases:
        got_code, got = checked.run(inputs)
        assert (got_code, message in got) == (code, True), got
        if code == CODES["RELAX_ERR_DTYPE"] or "values, expected" in message:
            continue  # worded for C (dtype codes; a shape value's length is a tensor dim)
        x, y, w, k, p, t0, t1 = inputs
        with pytest.raises(InputError) as python_error:  # the Python runtime says the same
            exe(x, y, w, int(k), tuple(int(v) for v in p), (t0, t1))
        assert str(python_error.value) == got
    assert checked.run(_checked_inputs(2, 5))[1].endswith("must be 4, got 5 (expected 4)")


def test_header_compiles_warning_free(demo: Built, target: str) -> None:
    """The header compiles as C11 and C++11 with every warning an error (with the target's compilers)."""
    source = demo.work / "use_header.c"
    source.write_text(f'#include "{demo.lib.header.name}"\nint main(void) {{ return RELAX_OK; }}\n')
    cc = aot.find_compiler(aot.AOT_TARGETS[target])
    cxx = shutil.which(re.sub(r"gcc$", "g++", cc))
    ran = 0
    for compiler, lang in [(cc, ["-x", "c", "-std=c11"]), (cxx, ["-x", "c++", "-std=c++11"])]:
        if not compiler:
            continue
        subprocess.run(
            [
                compiler,
                *lang,
                "-Wall",
                "-Wextra",
                "-Werror",
                "-pedantic",
                "-fsyntax-only",
                f"-I{demo.work}",
                str(source),
            ],
            check=True,
        )
        ran += 1
    assert ran  # C always; C++ where the g++ of the target is installed


INPLACE = """
func.func @append(%c: !relax.tensor<["kv_len + 1", 1, 2, 8], f32> {relax.name = "cache"},
                  %k: !relax.tensor<[1, 1, 2, 8], f32> {relax.name = "k"}, %n: !relax.prim<"kv_len"> {relax.name = "n"})
    -> !relax.tensor<["kv_len + 1", 1, 2, 8], f32> {
  %0 = "relax.kv_cache_write"(%c, %k) : (!relax.tensor<["kv_len + 1", 1, 2, 8], f32>, !relax.tensor<[1, 1, 2, 8], f32>) -> !relax.tensor<["kv_len + 1", 1, 2, 8], f32>
  %1 = "relax.exp"(%0) : (!relax.tensor<["kv_len + 1", 1, 2, 8], f32>) -> !relax.tensor<["kv_len + 1", 1, 2, 8], f32>
  return %1 : !relax.tensor<["kv_len + 1", 1, 2, 8], f32>
}
"""


def test_inplace_parameter_is_updated(target: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    runner, cc = _toolchain(target)
    work = tmp_path_factory.mktemp(f"inplace_{target}")
    lib = compile_library(INPLACE, work / "libinplace.so", target=target)
    assert "cache: tensor<[kv_len + 1, 1, 2, 8], f32>, updated in place" in lib.header.read_text()
    built = Built(lib, runner, cc, "append", work)
    cache = np.random.default_rng(1).standard_normal((4, 1, 2, 8)).astype(np.float32)
    k = np.full((1, 1, 2, 8), 0.5, np.float32)
    code, outs = built.run([cache, k, np.array(3, np.int64)])
    assert code == 0, outs
    updated = cache.copy()
    updated[3] = k[0]
    np.testing.assert_allclose(outs[1], updated)  # the cache as the call left it
    np.testing.assert_allclose(outs[0], np.exp(updated), rtol=1e-6)
    code, message = built.run([cache, k, np.array(2, np.int64)])
    assert (code, message) == (
        CODES["RELAX_ERR_SHAPE"],
        "@append: parameter 'cache' dim 0 is 4, expected kv_len + 1 = 3",
    )


def test_large_weights_stay_inside_the_library(target: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    """A 128 KiB constant (a dense_resource blob, which compile() keeps outside its object) is compiled in."""
    runner, cc = _toolchain(target)
    work = tmp_path_factory.mktemp(f"weights_{target}")
    w = np.random.default_rng(2).standard_normal((128, 256)).astype(np.float32)
    module = build_fn({"x": rb.tensor(["n", 128])}, lambda x: R.matmul(x, R.constant(w)))
    lib = compile_library(module, work / "libweights.so", target=target)
    assert lib.path.stat().st_size > w.nbytes
    built = Built(lib, runner, cc, "main", work)
    for n in (1, 3, 20):
        x = np.random.default_rng(n).standard_normal((n, 128)).astype(np.float32)
        code, outs = built.run([x])
        assert code == 0, outs
        np.testing.assert_allclose(outs[0], x.astype(np.float64) @ w, rtol=1e-4, atol=1e-4)


def test_unsupported_and_bad_options(tmp_path: Path) -> None:
    nonzero = build_fn({"x": rb.tensor(["n"])}, lambda x: R.nonzero(x))
    with pytest.raises(CompileError, match="@main: output #0 .* depend on the data .* nonzero"):
        compile_library(str(nonzero), tmp_path / "libnz.so")
    with pytest.raises(
        RelaxError, match="unknown target 'riscv'; available targets: aarch64, cpu, cuda, wasm32, webgpu, x86_64"
    ):
        compile_library("module {}", tmp_path / "x.so", target="riscv")
    with pytest.raises(RelaxError, match="the module has no relax function to compile"):
        compile_library("module {}", tmp_path / "x.so")


def test_pipeline_leaves_out_blas_and_openmp() -> None:
    for level in range(4):
        passes = names(aot.aot_pipeline(level))
        assert "relax-dispatch-blas" not in passes and "relax-parallelize-kernels" not in passes
        assert "relax-lower-host" in passes
