"""Load-time parameters: relax-lift-load-time-params and Executable.load_params against numpy."""

from __future__ import annotations

import numpy as np
import pytest

import relax_mlir.builder as rb
from relax_mlir.dialects import relax as R
from relax_mlir.errors import ArgumentError, CompileError, InputError
from relax_mlir.targets import compile
from relax_mlir.transforms.schedules import host_vector_unit

RNG = np.random.default_rng(11)


def rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape, dtype=np.float32)


def compiled(module: object, level: int) -> tuple[object, str]:
    stages: dict[str, str] = {}
    exe = compile(module, opt_level=level, on_stage=lambda name, text: stages.__setitem__(name, text))
    return exe, stages["host"]


def two_functions(k: int, n: int) -> rb.BlockBuilder:
    """``prefill`` (rows b x seq) and ``decode`` (rows b) computing ``(x @ w) * g``, w and g load-time."""
    bb = rb.BlockBuilder()
    for name, rows in (("prefill", ["b", "seq"]), ("decode", ["b"])):
        params = {"x": rb.tensor([*rows, k]), "w": rb.tensor([k, n]), "g": rb.tensor([n])}
        with bb.function(name, params, load_time=["w", "g"]) as (x, w, g):
            with bb.dataflow():
                out = bb.emit_output(R.multiply(R.matmul(x, w), g))
            bb.ret(out)
    return bb


@pytest.mark.parametrize("level", [1, 3])
@pytest.mark.parametrize(("k", "n"), [(64, 64), (33, 100), (1, 7), (48, 40)])
def test_parameter_weights_are_packed_once_at_load(level: int, k: int, n: int) -> None:
    """A matmul by a load-time weight runs the packed kernel (no BLAS), on panels packed by the load step,
    one copy shared by both functions; numpy's numbers at several row counts."""
    exe, host = compiled(two_functions(k, n).module, level)
    assert "matmul_packed" in host and "relax_blas_gemm" not in host and "cblas" not in host
    w, g = rand(k, n), rand(n)
    params = exe.load_params({"w": w, "g": g})
    assert sorted(params.values) == ["g", "w:lifted0"]
    packed = params.values["w:lifted0"]
    lanes = host_vector_unit().lanes  # panels one vector register of this machine wide
    assert packed.shape[1:] == (k, lanes) and packed.shape[0] * lanes >= n
    w_copy, g_copy = w.copy(), g.copy()
    w[...] = np.nan  # the raw weight is no longer read: the caller may drop it
    for b, seq in [(0, 3), (1, 1), (2, 7), (3, 33)]:
        x = rand(b, seq, k)
        np.testing.assert_allclose(params["prefill"](x), x @ w_copy * g_copy, rtol=1e-4, atol=1e-4)
        x = rand(b, k)
        np.testing.assert_allclose(params["decode"](x), x @ w_copy * g_copy, rtol=1e-4, atol=1e-4)


def test_without_lifting_raw_weights_are_bound() -> None:
    """At O0 nothing is lifted: load_params checks and binds the raw weights; same numbers."""
    exe = compile(two_functions(5, 3).module, opt_level=0)
    w, g = rand(5, 3), rand(3)
    params = exe.load_params({"w": w, "g": g})
    assert sorted(params.values) == ["g", "w"]
    x = rand(2, 4, 5)
    np.testing.assert_allclose(params["prefill"](x), x @ w * g, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("level", [0, 1, 3])
def test_generic_lifting_with_symbols(level: int) -> None:
    """Any pure computation on load-time parameters is lifted, here ``exp(w) * 2`` with w ["n"]; the symbol
    n then comes from the lifted value and must agree with x's."""
    bb = rb.BlockBuilder()
    with bb.function("main", {"x": rb.tensor(["m", "n"]), "w": rb.tensor(["n"])}, load_time=["w"]) as (x, w):
        with bb.dataflow():
            e = R.multiply(R.exp(w), R.constant(np.array(2.0, np.float32)))
            out = bb.emit_output(R.add(x, e))
        bb.ret(out)
    exe = compile(bb.module, opt_level=level)
    for m, n in [(0, 1), (1, 5), (3, 17)]:
        w = rand(n)
        params = exe.load_params({"w": w})
        x = rand(m, n)
        np.testing.assert_allclose(params(x), x + 2 * np.exp(w), rtol=1e-5, atol=1e-5)
        with pytest.raises(InputError, match="symbol 'n'"):
            params(rand(2, n + 1))


def layer_module(callee_ops: int = 1) -> rb.BlockBuilder:
    """A private ``layer(x, w) = relu(x @ w)`` with w load-time, called per layer by main and decode."""
    k = 24
    bb = rb.BlockBuilder()
    params = {"x": rb.tensor(["b", k]), "w": rb.tensor([k, k])}
    with bb.function("layer", params, private=True, load_time=["w"]) as (x, w):
        with bb.dataflow():
            y = R.matmul(x, w)
            for _ in range(callee_ops):
                y = R.relu(y)
            out = bb.emit_output(y)
        bb.ret(out)
    for name in ("main", "decode"):
        params = {"x": rb.tensor(["b", k]), "w0": rb.tensor([k, k]), "w1": rb.tensor([k, k])}
        with bb.function(name, params, load_time=["w0", "w1"]) as (x, w0, w1):
            y = bb.call("layer", x, w0)
            bb.ret(bb.call("layer", y, w1))
    return bb


@pytest.mark.parametrize(("level", "callee_ops"), [(0, 1), (1, 1), (3, 1), (3, 70)])
def test_lifting_composes_through_calls(level: int, callee_ops: int) -> None:
    """The callee's weights are packed by the callers' load step, once per weight (shared by main and
    decode), whether the callee is inlined (O3, small) or called (O1; O3 with a callee too big to inline)."""
    exe, host = compiled(layer_module(callee_ops).module, level)
    if level:
        assert "matmul_packed" in host and "cblas" not in host
    w0, w1 = rand(24, 24), rand(24, 24)
    params = exe.load_params({"w0": w0, "w1": w1})
    assert len(params.values) == 2
    if level:
        assert all(v.ndim == 3 for v in params.values.values())
    for b in (0, 1, 5):
        x = rand(b, 24)
        expected = np.maximum(np.maximum(x @ w0, 0) @ w1, 0)
        for f in ("main", "decode"):
            np.testing.assert_allclose(params[f](x), expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("level", [0, 3])
def test_bound_calls_check_the_load_time_arrays_once(level: int) -> None:
    """A bound function's load-time arrays, between other parameters, are checked and packed once
    (``Signature.fix``): numpy's numbers at several shapes, the other arguments still checked with
    ``bind``'s errors, and reshaping the caller's array object afterwards changes nothing."""
    bb = rb.BlockBuilder()
    params = {"x": rb.tensor(["b", 6]), "w": rb.tensor([6, 4]), "y": rb.tensor(["b", 4]), "g": rb.tensor([4])}
    with bb.function("main", params, load_time=["w", "g"]) as (x, w, y, g):
        with bb.dataflow():
            out = bb.emit_output(R.add(R.multiply(R.matmul(x, w), g), y))
        bb.ret(out)
    exe = compile(bb.module, opt_level=level)
    w, g = rand(6, 4), rand(4)
    w_copy, g_copy = w.copy(), g.copy()
    bound = exe.load_params({"w": w, "g": g})["main"]
    assert bound._fixed is not None
    w.shape = (4, 6)  # the caller's object, not the bound one
    bound.function.call_all = lambda *args: pytest.fail("valid arguments left the fast path")
    for b in (0, 1, 5, 300):
        x, y = rand(b, 6), rand(b, 4)
        np.testing.assert_allclose(bound(x, y), x @ w_copy * g_copy + y, rtol=1e-4, atol=1e-4)
    del bound.function.call_all
    with pytest.raises(InputError, match="parameter 'y' dim 0 is 3, but symbol 'b' is 2"):
        bound(rand(2, 6), rand(3, 4))
    with pytest.raises(InputError, match="parameter 'x' has dtype float64"):
        bound(rand(2, 6).astype(np.float64), rand(2, 4))
    with pytest.raises(InputError, match="takes 2 argument"):
        bound(rand(2, 6))
    x, y = rand(3, 6), rand(3, 4)
    strided = np.asfortranarray(x)  # not C-contiguous: the checked path copies it, same numbers
    np.testing.assert_allclose(bound(strided, y), x @ w_copy * g_copy + y, rtol=1e-4, atol=1e-4)


def test_load_errors_name_the_parameter() -> None:
    exe = compile(two_functions(6, 4).module, opt_level=1)
    w, g = rand(6, 4), rand(4)
    with pytest.raises(InputError, match="missing load-time parameter.*'g'"):
        exe.load_params({"w": w})
    with pytest.raises(InputError, match="'v' is not a load-time parameter"):
        exe.load_params({"w": w, "g": g, "v": g})
    with pytest.raises(InputError, match="parameter 'w' dim 1 is 3, expected 4"):
        exe.load_params({"w": w[:, :3], "g": g})
    with pytest.raises(InputError, match="parameter 'g' dim 0 is 5, expected 4"):
        exe.load_params({"w": w, "g": rand(5)})
    with pytest.raises(InputError, match="parameter 'w' has dtype float64"):
        exe.load_params({"w": w.astype(np.float64), "g": g})
    with pytest.raises(InputError, match=r"takes load-time parameters .*exe.load_params"):
        exe["decode"](rand(2, 6))
    params = exe.load_params({"w": w, "g": g})
    with pytest.raises(InputError, match="takes 1 argument"):
        params["decode"](rand(2, 6), rand(2, 6))
    with pytest.raises(InputError, match="parameter 'x' dim 1 is 5, expected 6"):
        params["decode"](rand(2, 5))


def test_builder_and_pass_errors() -> None:
    bb = rb.BlockBuilder()
    with pytest.raises(ArgumentError, match="load_time names 'v', which is not a parameter"):
        with bb.function("f", {"x": rb.tensor([2])}, load_time=["v"]):
            pass
    with pytest.raises(ArgumentError, match="load-time parameter 'n' must be a tensor"):
        with bb.function("g", {"n": rb.prim("n")}, load_time=["n"]):
            pass
    bb = rb.BlockBuilder()
    with bb.function("layer", {"x": rb.tensor([3]), "w": rb.tensor([3])}, private=True, load_time=["w"]) as (
        x,
        w,
    ):
        bb.ret(R.add(x, R.exp(w)))
    with bb.function("main", {"x": rb.tensor([3])}) as (x,):
        bb.ret(bb.call("layer", x, x))
    with pytest.raises(CompileError, match="passes a value computed at run time to load-time parameter 'w'"):
        compile(bb.module, opt_level=1)
