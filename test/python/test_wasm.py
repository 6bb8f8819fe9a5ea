"""The wasm32 target (``targets/wasm.py``): numbers against numpy, the module's imports and exports, the
CPU target's error messages, the perf models, and the op tests rerun on wasm32.

Skipped without the ``ziglang``/``wasmtime`` packages (``pip install relax_mlir[wasm]``), failed instead
under ``$RELAX_MLIR_REQUIRE_TOOLCHAINS=1``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from oprun import build_fn, rand
from toolchains import missing_toolchain

import relax_mlir.builder as rb
from relax_mlir import relax_compile
from relax_mlir.dialects import relax as R
from relax_mlir.errors import CompileError, InputError, OutOfMemoryError, RelaxError, WasmTrapError
from relax_mlir.targets import compile, compile_library, wasm

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def toolchain() -> None:
    for package in ("ziglang", "wasmtime"):
        if importlib.util.find_spec(package) is None:
            missing_toolchain(f"the wasm32 target needs the {package} package: pip install relax_mlir[wasm]")


def both(module: Any, opt_level: int = 2) -> tuple[Any, Any]:
    """The module compiled for the CPU and for wasm32."""
    text = str(module)
    return compile(text, opt_level=opt_level), compile(text, "wasm32", opt_level=opt_level)


@pytest.fixture(scope="module")
def add_exp() -> tuple[Any, Any]:
    return both(build_fn({"x": rb.tensor(["n", 4]), "y": rb.tensor([4])}, lambda x, y: R.exp(R.add(x, y))))


@pytest.mark.parametrize("n", [0, 1, 7, 1000])
def test_elementwise_matches_numpy(add_exp, n: int) -> None:
    _, exe = add_exp
    x, y = rand((n, 4)), rand((4,))
    out = exe(x, y)
    assert out.shape == (n, 4) and out.dtype == np.float32
    np.testing.assert_allclose(out, np.exp(x + y), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("m, k, n", [(0, 3, 5), (1, 1, 1), (7, 13, 5), (65, 130, 33)])
def test_matmul_softmax_at_symbolic_shapes(m: int, k: int, n: int) -> None:
    params = {"a": rb.tensor(["m", "k"]), "b": rb.tensor(["k", "n"])}
    exe = compile(str(build_fn(params, lambda a, b: R.softmax(R.matmul(a, b), axis=-1))), "wasm32")
    a, b = rand((m, k)), rand((k, n))
    mm = a @ b
    e = np.exp(mm - mm.max(axis=-1, keepdims=True)) if m else mm
    np.testing.assert_allclose(exe(a, b), e / e.sum(axis=-1, keepdims=True) if m else e, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float64, np.bool_, np.uint8])
def test_dtypes_round_trip(dtype: Any) -> None:
    rdtype = {np.int32: "i32", np.int64: "i64", np.float64: "f64", np.bool_: "i1", np.uint8: "ui8"}[dtype]
    fn = build_fn({"x": rb.tensor(["n", 3], rdtype)}, lambda x: R.permute_dims(x, [1, 0]))
    exe = compile(str(fn), "wasm32", opt_level=1)
    for n in (0, 1, 5):
        x = rand((n, 3), dtype, 0, 9)
        np.testing.assert_array_equal(exe(x), x.T)


SHAPES_AND_TUPLES = (ROOT / "test/python/test_runtime.py").read_text().split('SHAPES_AND_TUPLES = """')[1]
SHAPES_AND_TUPLES = SHAPES_AND_TUPLES.split('"""')[0]


@pytest.mark.parametrize("b, s", [(1, 1), (2, 7), (3, 0)])
def test_tuple_shape_and_prim_outputs(b: int, s: int) -> None:
    exe = compile(SHAPES_AND_TUPLES, "wasm32", opt_level=1)
    x, y = rand((b, s)), rand((s,))
    out, shape, prim = exe(x, y)
    np.testing.assert_allclose(out, x + y, rtol=1e-6)
    assert shape == (b, s) and prim == b * s + 1


INPLACE = (ROOT / "test/python/test_aot.py").read_text().split('INPLACE = """')[1].split('"""')[0]


def test_inplace_parameter_is_updated_like_on_the_cpu() -> None:
    cpu, exe = both(INPLACE)
    cache = np.random.default_rng(1).standard_normal((4, 1, 2, 8)).astype(np.float32)
    k = np.full((1, 1, 2, 8), 0.5, np.float32)
    cache_cpu = cache.copy()
    np.testing.assert_allclose(exe(cache, k, 3), cpu(cache_cpu, k, 3), rtol=1e-6)
    np.testing.assert_array_equal(cache, cache_cpu)
    assert (cache[3] == 0.5).all()
    assert errors_of(exe, cache, k, 2, name="append") == errors_of(cpu, cache, k, 2, name="append")


def test_module_imports_nothing_and_exports_the_c_api(tmp_path: Path) -> None:
    fn = build_fn({"x": rb.tensor(["n", 4])}, lambda x: R.tanh(x))
    lib = compile_library(str(fn), tmp_path / "m.wasm", target="wasm32")
    imports, exports = wasm.module_interface((tmp_path / "m.wasm").read_bytes())
    assert imports == []
    assert sorted(exports) == sorted(
        [
            "memory",
            "_initialize",
            "malloc",
            "free",
            "relax_last_error",
            "relax_main",
            "relax_main_output_shapes",
        ]
    )
    assert lib.imports == [] and lib.functions == {"main": "relax_main"}
    signatures = json.loads((tmp_path / "m.json").read_text())
    assert signatures["main"]["inputs"][0]["type"] == '!relax.tensor<["n", 4], f32>'


def test_relax_compile_writes_wasm_and_signatures(tmp_path: Path) -> None:
    source = tmp_path / "m.mlir"
    source.write_text(str(build_fn({"x": rb.tensor(["n"])}, lambda x: R.sigmoid(x))))
    out = tmp_path / "m.wasm"
    assert relax_compile.main([str(source), "--target", "wasm32", "-o", str(out)]) == 0
    assert out.read_bytes()[:4] == b"\0asm" and "main" in json.loads((tmp_path / "m.json").read_text())
    assert (
        relax_compile.main(
            [str(source), "--target", "wasm32", "--emit", "llvm", "-o", str(tmp_path / "m.ll")]
        )
        == 0
    )
    assert "define" in (tmp_path / "m.ll").read_text()


def errors_of(exe: Any, *args: Any, name: str = "main") -> tuple[type, str]:
    with pytest.raises(RelaxError) as info:
        exe[name](*args)
    return type(info.value), str(info.value)


def test_error_messages_equal_the_cpu_targets() -> None:
    fn = build_fn(
        {"x": rb.tensor(["n", 4]), "y": rb.tensor(["n", 4], "i32")},
        lambda x, y: R.add(x, R.astype(y, "f32")),
        upper_bounds={"n": 16},
    )
    cpu, wasm32 = both(fn)
    x, y = rand((3, 4)), rand((3, 4), np.int32)
    cases = [
        (x.astype(np.float64), y),  # dtype
        (x[0], y),  # rank
        (rand((3, 5)), y),  # constant dim
        (x, rand((2, 4), np.int32)),  # symbol
        (rand((17, 4)), rand((17, 4), np.int32)),  # upper bound
        (x,),  # argument count
        ("x", y),  # not an array
    ]
    for args in cases:
        expected = errors_of(cpu, *args)
        assert expected[0] is InputError
        assert errors_of(wasm32, *args) == expected
    np.testing.assert_allclose(wasm32(x, y), x + y)


MATCH_CAST = (ROOT / "test/python/test_runtime.py").read_text().split('MATCH_CAST = """')[1].split('"""')[0]


def test_checks_inside_compiled_code_raise_the_cpu_targets_error() -> None:
    cpu, exe = both(MATCH_CAST, opt_level=1)
    x = rand((3, 4))
    np.testing.assert_allclose(exe(x), np.exp(x), rtol=1e-6)
    assert errors_of(exe, rand((3, 5))) == errors_of(cpu, rand((3, 5)))
    np.testing.assert_allclose(exe(rand((7, 4))), np.exp(rand((7, 4))), rtol=1e-6)  # usable after it


def test_outputs_too_large_for_wasm_memory_are_out_of_memory() -> None:
    fn = build_fn(
        {"x": rb.tensor(["n"]), "y": rb.tensor(["m"])}, lambda x, y: R.add(R.reshape(x, [-1, 1]), y)
    )
    exe = compile(str(fn), "wasm32", opt_level=2)
    with pytest.raises(
        OutOfMemoryError, match=r"@main: out of memory: its outputs need 6400000048 bytes in wasm32"
    ):
        exe(np.zeros(40000, np.float32), np.zeros(40000, np.float32))
    np.testing.assert_allclose(exe(np.ones(3, np.float32), np.ones(2, np.float32)), np.full((3, 2), 2.0))


def test_failed_malloc_inside_compiled_code_is_out_of_memory() -> None:
    # relax-O0 allocates the (n, n) broadcast sum between the two kernels: 4.4 GB, above wasm32's 4 GiB
    fn = build_fn({"x": rb.tensor(["n"])}, lambda x: R.sum(R.add(R.reshape(x, [-1, 1]), x)))
    exe = compile(str(fn), "wasm32", opt_level=0)
    with pytest.raises(
        OutOfMemoryError, match="@main: out of memory: compiled code could not allocate 4356000064 bytes"
    ):
        exe(np.zeros(33000, np.float32))
    x = rand((5,))
    np.testing.assert_allclose(exe(x), (x[:, None] + x).sum(), rtol=1e-5)


def test_a_trap_is_a_relax_error(add_exp) -> None:
    _, exe = add_exp
    inst = exe.instance
    with pytest.raises(
        WasmTrapError, match=r"@main: the wasm32 module trapped \(wasm trap: out of bounds memory access\)"
    ):
        inst.call(inst.exports["relax_main"], "main", 0xFFFFFFF0, 2, 0, 1)  # inputs outside memory
    np.testing.assert_allclose(exe(rand((2, 4)), rand((4,))), np.exp(rand((2, 4)) + rand((4,))), rtol=1e-5)


def test_unsupported_is_a_compile_error_naming_the_reason() -> None:
    nonzero = build_fn({"x": rb.tensor(["n"])}, lambda x: R.nonzero(x))
    with pytest.raises(CompileError, match="@main: output #0 .* depend on the data .* nonzero"):
        compile(str(nonzero), "wasm32")


def test_bf16_arithmetic_is_a_compile_error_not_an_abort() -> None:
    fn = build_fn({"x": rb.tensor(["n"], "bf16")}, lambda x: R.add(x, x))
    with pytest.raises(
        CompileError, match=r"unsupported on wasm32: the module computes in bf16 .* fadd bfloat"
    ):
        compile(str(fn), "wasm32", use_cache=False)
    f16 = compile(str(build_fn({"x": rb.tensor(["n"], "f16")}, lambda x: R.maximum(x, R.neg(x)))), "wasm32")
    x = np.linspace(-3, 3, 11).astype(np.float16)
    np.testing.assert_array_equal(f16(x), np.abs(x))  # f16 compares compile (scalar) and run


def test_compiled_module_is_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RELAX_MLIR_CACHE", str(tmp_path))
    text = str(build_fn({"x": rb.tensor(["n"])}, lambda x: R.neg(x)))
    first = compile(text, "wasm32")
    second = compile(text, "wasm32")
    assert not first.stats.cache_hit and second.stats.cache_hit
    assert second.wasm == first.wasm
    np.testing.assert_array_equal(second(np.arange(3, dtype=np.float32)), -np.arange(3, dtype=np.float32))


def test_missing_package_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wasm, "_version", lambda package: None)
    with pytest.raises(RelaxError, match=r"needs the ziglang package .*: pip install relax_mlir\[wasm\]"):
        compile("module {}", "wasm32")


# -- the perf models of bench/perf.py -----------------------------------------------------------------
def _perf_models() -> Any:
    sys.path.insert(0, str(ROOT / "bench"))
    import perf_models

    return perf_models


@pytest.mark.parametrize(
    "model, shapes",
    [
        ("mlp", [(1, 784), (5, 784)]),
        ("gpt", [(1, 3, 512), (2, 16, 512)]),
        ("resnet", [(1, 3, 64, 64), (2, 3, 64, 64)]),
    ],
)
def test_perf_models_match_numpy(model: str, shapes: list[tuple[int, ...]]) -> None:
    from relax_mlir.frontend.onnx import from_onnx

    pm = _perf_models()
    builders: dict[str, tuple[Callable, Callable]] = {
        "mlp": (pm.mlp, pm.mlp_numpy),
        "gpt": (lambda: pm.gpt(2), lambda x, w: pm.gpt_numpy(x, w, 2)),
        "resnet": (pm.resnet, pm.resnet_numpy),
    }
    build, reference = builders[model]
    onnx_model, weights = build()
    t = time.perf_counter()
    exe = compile(from_onnx(onnx_model), "wasm32", opt_level=2)
    print(f"{model}: compiled for wasm32 in {time.perf_counter() - t:.1f} s ({exe.stats.stages})")
    for shape in shapes:
        x = np.random.default_rng(len(shape)).standard_normal(shape).astype(np.float32)
        np.testing.assert_allclose(exe(x), reference(x, weights), rtol=2e-3, atol=2e-3)


# -- the op tests, on wasm32 --------------------------------------------------------------------------
OP_TEST_FILES = ("test_lower_elementwise.py", "test_lower_manipulate.py", "test_lower_reduce.py",
                 "test_lower_nn.py", "test_lower_matmul.py")  # fmt: skip


def test_every_op_test_passes_on_wasm32() -> None:
    """The op lowering tests (``oprun.compile_fn``) again, compiled for wasm32 and run by wasmtime."""
    env = dict(os.environ, RELAX_MLIR_TEST_TARGET="wasm32")
    t = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *OP_TEST_FILES],
        env=env,
        capture_output=True,
        text=True,
        cwd=ROOT / "test/python",
    )
    print(f"op tests on wasm32: {time.perf_counter() - t:.0f} s")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and " failed" not in done.stdout
