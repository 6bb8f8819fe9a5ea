"""Compile a one-op (or few-op) relax function with the builder and run it at several shapes.

    exe = compile_fn({"x": rb.tensor(["n", 4])}, lambda x: R.exp(x))
    np.testing.assert_allclose(exe(x), np.exp(x), rtol=1e-5)

Compiled code is cached per process by the printed module, so parametrized tests that rebuild the
same function compile it once. ``$RELAX_MLIR_TEST_OPT_LEVEL`` (default 1) picks the pipeline
(``relax-O<n>``) every op test compiles with; ``test_pipelines.py`` reruns the op tests at 0, 2 and 3.
``$RELAX_MLIR_TEST_TARGET`` (default cpu) picks the target (``test_wasm.py`` reruns them on ``wasm32``,
``test_webgpu.py`` on ``webgpu``). On webgpu, test data holds no inf or NaN (``FINITE_ONLY``): WGSL lets
shader compilers assume finite floats (lavapipe's max(NaN, 1) is 1), so those results are not defined there.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pytest
from mlir import ir

import relax_mlir.builder as rb
from relax_mlir.dialects import relax as R
from relax_mlir.dialects.types import RelaxType
from relax_mlir.errors import CompileError
from relax_mlir.runtime.executable import Executable
from relax_mlir.targets import compile

_COMPILED: dict[str, Executable] = {}
OPT_LEVEL = int(os.environ.get("RELAX_MLIR_TEST_OPT_LEVEL", "1"))
TARGET = os.environ.get("RELAX_MLIR_TEST_TARGET", "cpu")
FINITE_ONLY = TARGET == "webgpu"
NOT_FINITE = "WGSL lets shaders assume finite floats: inf and NaN results are undefined on the webgpu target"
F64_MATH = "the webgpu target computes f64 exp, log, sqrt... in f32 (shaders have them for 32-bit floats)"
# dtypes whose kernels the webgpu target lowers only in part (targets/webgpu.py)
_WEBGPU_PARTIAL = ("f16", "f64", "bf16")


def build_fn(
    params: Mapping[str, RelaxType | str],
    body: Callable[..., ir.Value | tuple[ir.Value, ...]],
    upper_bounds: Mapping[str, int] | None = None,
) -> ir.Module:
    """A module with ``@main(params) -> body(*params)`` (results wrapped in a dataflow block)."""
    bb = rb.BlockBuilder()
    with bb.function("main", params, upper_bounds=upper_bounds) as args:
        with bb.dataflow():
            out = body(*args)
            if isinstance(out, tuple):
                outs = tuple(bb.emit_output(o) for o in out)
            else:
                outs = (bb.emit_output(out),)
        bb.ret(*outs)
    return bb.module


# Every kind of checked input: symbols, an expression dim, a bound, prim/shape/tuple parameters, and a
# match_cast checked inside the function (the AOT and wasm tests' checks of their C and JS APIs).
CHECKED = {
    "x": rb.tensor(["n", "m"]),
    "y": rb.tensor(["m"]),
    "w": rb.tensor(["2 * m"]),
    "k": rb.prim("n"),
    "p": rb.shape(["n", "m"]),
    "t": rb.tuple_type(rb.tensor(["m"]), rb.tensor([], "i32")),
}


def _checked_body(x, y, w, k, p, t):  # noqa: ANN001, ANN202
    fixed = R.match_cast(x, rb.tensor(["n", 4]))
    both = R.concat([x, R.reshape(w, [2, -1])], axis=0)  # (n + 2, m): a symbolic expression
    return R.add(R.add(x, y), R.tuple_get_item(t, 0)), R.exp(fixed), R.shape_of(x), R.get_dim(p, 1), both


def checked_module() -> ir.Module:
    """``@main(CHECKED)`` with ``n <= 16``: five outputs (tensors, a shape, a prim, an expression dim)."""
    return build_fn(CHECKED, _checked_body, {"n": 16})


def compile_fn(
    params: Mapping[str, RelaxType | str],
    body: Callable[..., ir.Value | tuple[ir.Value, ...]],
    upper_bounds: Mapping[str, int] | None = None,
) -> Executable:
    """``compile(build_fn(...))``, memoized by the module's text."""
    module = build_fn(params, body, upper_bounds)
    text = str(module)
    if text not in _COMPILED:
        try:
            _COMPILED[text] = compile(text, TARGET, opt_level=OPT_LEVEL)
        except CompileError as e:
            if TARGET == "wasm32" and ("depend on the data" in str(e) or "unsupported on wasm32" in str(e)):
                pytest.skip(f"a documented limit of wasm32 (targets/wasm.py): {e}")
            if TARGET == "webgpu" and any(f"x{t}>" in text or f", {t}>" in text for t in _WEBGPU_PARTIAL):
                pytest.skip(f"a documented limit of webgpu (f16/f64/bf16 kernels lower in part): {e}")
            raise
    return _COMPILED[text]


def rand(shape: tuple[int, ...], dtype: Any = np.float32, low: float = -2.0, high: float = 2.0) -> np.ndarray:
    """Random test data of ``dtype`` (integers in [low, high), booleans half true)."""
    rng = np.random.default_rng(abs(hash((shape, str(dtype)))) % (2**32))
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(int(low), int(high), size=shape).astype(dtype)
    return rng.uniform(low, high, size=shape).astype(dtype)
