"""The ES module (``model.mjs``) and types (``model.d.ts``) of the wasm32 target, run in node.

``test/js/run_model.mjs`` loads a generated module and runs calls sent as JSON. The argument checks are
compared message for message with the Python runtime (CPU target) on a fake wasm instance whose exports
throw when called (so each error provably comes from JavaScript, before any wasm memory is touched);
real ``.wasm`` builds are compared with numpy at several shapes, their in-wasm errors with Python's,
and 10,000 calls must not grow wasm memory or leave blocks allocated. Without node (or the wasm
toolchain) the tests skip, unless ``$RELAX_MLIR_REQUIRE_TOOLCHAINS=1``.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from oprun import build_fn, checked_module
from toolchains import missing_toolchain

import relax_mlir
import relax_mlir.builder as rb
from relax_mlir.dialects import relax as R
from relax_mlir.errors import InputError
from relax_mlir.targets import wasm_js

ROOT = Path(__file__).resolve().parents[2]
DRIVER = ROOT / "test" / "js" / "run_model.mjs"

# A size symbol defined by a prim value: only the non-negativity check can reject k = -1.
SIZED = {"k": rb.prim("n"), "x": rb.tensor(["n + 1"])}


def _sized_body(k, x):  # noqa: ANN001, ANN202
    return R.add(x, x)


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        missing_toolchain("node not found (Debian: apt-get install nodejs; node >= 20)")
    return node


def to_js(value: Any) -> Any:
    """A Python runtime argument as run_model.mjs decodes it (ndarray -> tensor, tuple/list -> array)."""
    if isinstance(value, np.ndarray):
        data = base64.b64encode(np.ascontiguousarray(value).tobytes()).decode()
        return {"$t": {"dtype": value.dtype.name, "shape": list(value.shape), "b64": data}}
    if isinstance(value, (tuple, list)):
        return [to_js(v) for v in value]
    return value


def from_js(value: Any) -> Any:
    if isinstance(value, dict) and "$t" in value:
        t = value["$t"]
        return np.frombuffer(base64.b64decode(t["b64"]), np.dtype(t["dtype"])).reshape(t["shape"])
    if isinstance(value, list):
        return [from_js(v) for v in value]
    return value


def run_node(module: Path, function: str, calls: list[list[Any]], wasm: Path | None, **extra: Any) -> dict:
    request = {"module": str(module), "wasm": None if wasm is None else str(wasm), "function": function}
    request |= {"calls": [to_js(list(args)) for args in calls], **extra}
    done = subprocess.run(
        [_node(), str(DRIVER)], input=json.dumps(request), capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _signatures(module: Any) -> dict[str, dict]:
    from relax_mlir.targets import aot, steps
    from relax_mlir.targets.base import CompileStats

    target = aot.AOT_TARGETS["x86_64"]
    _, sigs = target.build(steps.source(steps.verified(module)), 1, stats=CompileStats({}))
    return sigs


@pytest.fixture(scope="module")
def fake_checked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The generated module of oprun.CHECKED (no wasm needed: the calls go to a fake instance)."""
    _node()
    work = tmp_path_factory.mktemp("js_checked")
    mjs, _ = wasm_js.write_js(work / "checked.wasm", _signatures(checked_module()))
    return mjs


def checked_args(n: int, m: int) -> list[Any]:
    rng = np.random.default_rng(n * 10 + m)
    x, y, t0 = (rng.standard_normal(s).astype(np.float32) for s in [(n, m), (m,), (m,)])
    w = np.arange(2 * m, dtype=np.float32)
    return [x, y, w, n, [n, m], (t0, np.array(3, np.int32))]


def _swap(args: list[Any], i: int, value: Any) -> list[Any]:
    return [value if j == i else a for j, a in enumerate(args)]


def checked_error_cases() -> list[list[Any]]:
    """Bad arguments of @main(oprun.CHECKED) that the Python runtime rejects before native code runs."""
    good = checked_args(3, 4)
    x, y, w, k, p, t = good
    return [
        good[:2],
        _swap(good, 5, (t[0],)),
        _swap(good, 0, x.astype(np.float64)),
        _swap(good, 0, x[0]),
        _swap(good, 1, np.zeros(5, np.float32)),
        _swap(good, 2, np.zeros(7, np.float32)),
        _swap(good, 3, 2),
        _swap(good, 3, 2.5),
        _swap(good, 4, [3, 4, 1]),
        _swap(good, 4, [3, 5]),
        _swap(good, 5, (t[0], np.array(3, np.int64))),
        _swap(good, 5, (np.zeros(3, np.float32), t[1])),
        checked_args(17, 4),
    ]


def test_js_checks_match_the_python_runtime(fake_checked: Path) -> None:
    """Every JavaScript argument check throws RelaxInputError with the Python runtime's exact message."""
    cases = checked_error_cases()
    answer = run_node(fake_checked, "main", cases, None)
    exe = relax_mlir.compile(checked_module(), opt_level=1)
    for args, result in zip(cases, answer["results"]):
        with pytest.raises(InputError) as python_error:
            exe(*args)
        assert "error" in result, result
        assert result["error"]["name"] == "RelaxInputError" and result["error"]["relax"]
        assert result["error"]["message"] == str(python_error.value)


def test_js_size_symbol_check_matches_python(tmp_path: Path) -> None:
    module = build_fn(SIZED, _sized_body)
    mjs, _ = wasm_js.write_js(tmp_path / "sized.wasm", _signatures(module))
    args = [-1, np.zeros(0, np.float32)]
    (result,) = run_node(mjs, "main", [args], None)["results"]
    with pytest.raises(InputError) as python_error:
        relax_mlir.compile(module, opt_level=1)(*args)
    assert result["error"]["message"] == str(python_error.value)
    assert "it sizes tensors, so it must be >= 0" in result["error"]["message"]


def test_js_only_checks(fake_checked: Path) -> None:
    """What only JavaScript can get wrong: not a tensor object, data and shape that disagree."""
    good = checked_args(3, 4)
    five = to_js(np.zeros(5, np.float32))
    five["$t"]["shape"] = [2, 3]
    negative = to_js(np.zeros(0, np.float32))
    negative["$t"]["shape"] = [-1, 4]
    cases = [_swap(good, 0, [1.0, 2.0]), _swap(good, 0, five), _swap(good, 0, negative)]
    expected = [
        '@main: parameter \'x\' must be a tensor {data, shape} of !relax.tensor<["n", "m"], f32>, got Array',
        "@main: parameter 'x' has shape (2, 3) (6 elements), but its data has 5",
        "@main: parameter 'x' dim 0 is -1, expected a size >= 0",
    ]
    results = run_node(fake_checked, "main", cases, None)["results"]  # (encoded tensors pass through)
    assert [r["error"]["message"] for r in results] == expected


# -- real .wasm builds ------------------------------------------------------------------------------


def compile_wasm(module: Any, path: Path) -> Path:
    """``relax-compile --target wasm32``'s library call; skip (fail in CI) without the wasm toolchain."""
    from relax_mlir.errors import RelaxError
    from relax_mlir.targets import wasm

    _node()
    try:
        wasm.zig()
    except RelaxError as e:
        missing_toolchain(str(e))
    relax_mlir.compile_library(module, path, target="wasm32")
    for suffix in (".mjs", ".d.ts", ".d.mts", ".json"):
        assert path.with_suffix(suffix).exists(), suffix
    return path


@pytest.fixture(scope="module")
def wasm_checked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("wasm_checked")
    return compile_wasm(checked_module(), work / "checked.wasm")


# A symbolic matmul chain (x [b, k] @ w [k, 3], then exp of a scaled copy) for shapes that include 0.
DENSE = {"x": rb.tensor(["b", "k"]), "w": rb.tensor(["k", 3])}


def _dense_body(x, w):  # noqa: ANN001, ANN202
    y = R.matmul(x, w)
    return y, R.exp(R.multiply(y, y))


def test_checked_numbers_match_numpy(wasm_checked: Path) -> None:
    shapes = [(0, 4), (1, 4), (3, 4), (16, 4)]
    answer = run_node(
        wasm_checked.with_suffix(".mjs"), "main", [checked_args(n, m) for n, m in shapes], wasm_checked
    )
    for (n, m), result in zip(shapes, answer["results"]):
        x, y, w, _, _, (t0, _) = checked_args(n, m)
        out = from_js(result["value"])
        np.testing.assert_allclose(out[0], x + y + t0, rtol=1e-6)
        np.testing.assert_allclose(out[1], np.exp(x), rtol=1e-5)
        assert out[2] == [n, m] and out[3] == m
        np.testing.assert_array_equal(out[4], np.concatenate([x, w.reshape(2, m)]))
        assert out[0].dtype == np.float32 and out[4].shape == (n + 2, m)


def test_dense_numbers_match_numpy(tmp_path: Path) -> None:
    wasm = compile_wasm(build_fn(DENSE, _dense_body), tmp_path / "dense.wasm")
    rng = np.random.default_rng(0)
    shapes = [(0, 1), (1, 1), (1, 7), (5, 13), (33, 64), (2, 0)]
    calls = [
        [
            (rng.standard_normal(s) * 0.3).astype(np.float32),
            (rng.standard_normal((s[1], 3)) * 0.3).astype(np.float32),
        ]
        for s in shapes
    ]
    answer = run_node(wasm.with_suffix(".mjs"), "main", calls, wasm)
    for (x, w), result in zip(calls, answer["results"]):
        y, e = from_js(result["value"])
        np.testing.assert_allclose(y, x @ w, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(e, np.exp((x @ w) ** 2), rtol=1e-5, atol=1e-6)


def test_wasm_errors_match_python(wasm_checked: Path) -> None:
    """The match_cast checked inside the wasm throws RelaxInputError with the Python runtime's message;
    the JavaScript checks (before the wasm) as with the fake instance."""
    bad = checked_args(2, 5)  # m = 5: the match_cast to [n, 4] fails inside the function
    cases = [bad, *checked_error_cases()]
    answer = run_node(wasm_checked.with_suffix(".mjs"), "main", cases, wasm_checked)
    exe = relax_mlir.compile(checked_module(), opt_level=1)
    for args, result in zip(cases, answer["results"]):
        with pytest.raises(InputError) as python_error:
            exe(*args)
        assert result["error"]["name"] == "RelaxInputError"
        assert result["error"]["message"] == str(python_error.value)
    assert answer["results"][0]["error"]["code"] == 6  # RELAX_ERR_RUNTIME, from the C wrapper
    assert answer["results"][0]["error"]["message"].endswith("must be 4, got 5 (expected 4)")


def test_no_leak_over_10000_calls(wasm_checked: Path) -> None:
    """10,000 good calls, each followed by one that fails inside the wasm (after its inputs were copied
    in): wasm memory does not grow after warm-up, every block is freed, and malloc hands out the same
    address for a probe block before and after (nothing left allocated below it)."""
    leak = {
        "calls": 10_000,
        "warmup": 50,
        "args": to_js(checked_args(16, 4)),
        "bad": to_js(checked_args(2, 5)),
    }
    answer = run_node(wasm_checked.with_suffix(".mjs"), "main", [], wasm_checked, leak=leak)["leak"]
    assert answer["errors"] == 10_000
    assert answer["live"] == 0
    assert answer["bytes1"] == answer["bytes0"], answer
    assert answer["probe1"] == answer["probe0"], answer


def test_declarations_typecheck(wasm_checked: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """The .d.ts describes the module: a TypeScript program using it compiles under --strict (typescript
    5.6.3 from npm, installed once into the test's cache), and a wrong storage type is an error there."""
    npm = shutil.which("npm")
    if npm is None:
        missing_toolchain("npm not found (Debian: apt-get install npm), needed to install typescript")
    cache = Path.home() / ".cache" / "relax_mlir" / "typescript-5.6.3"
    tsc = cache / "node_modules" / ".bin" / "tsc"
    if not tsc.exists():
        cache.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            [npm, "install", "--prefix", str(cache), "--no-audit", "--no-fund", "typescript@5.6.3"],
            capture_output=True,
            text=True,
            timeout=300,
        )
        if done.returncode != 0:
            missing_toolchain(f"npm install typescript@5.6.3 failed: {done.stderr.strip()[-300:]}")
    program = wasm_checked.parent / "use.mts"
    program.write_text(
        'import { load, RelaxInputError, type Model, type OutputTensor } from "./checked.mjs";\n'
        "const model: Model = await load();\n"
        "const v = { data: new Float32Array(4), shape: [4] };\n"
        "type F = OutputTensor<Float32Array>;\n"
        "const [a, b, s, m, c]: [F, F, number[], number, F] = model.main({ data: new Float32Array(12), "
        "shape: [3, 4] }, v, { data: new Float32Array(8), shape: [8] }, 3, [3, 4], "
        "[v, { data: new Int32Array(1), shape: [] }]);\n"
        "const e: RelaxInputError | null = null;\n"
        "console.log(a.shape, b.dtype, s.length, m + 1, c.data.length, model.liveAllocations(), e);\n"
        "// @ts-expect-error: a Float64Array is not the storage of an f32 parameter\n"
        "model.functions.main({ data: new Float64Array(12), shape: [3, 4] }, v, v, 3, [3, 4], [v, v]);\n"
    )
    flags = ["--noEmit", "--strict", "--target", "es2022", "--module", "node16", "--lib", "es2022,dom"]
    done = subprocess.run([str(tsc), *flags, str(program)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
