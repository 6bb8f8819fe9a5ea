"""Calls between relax functions (``relax.call``): binding, run-time checks, lowering as calls, inlining,
the builder's ``bb.call``, and every target (cpu O0-O3, wasm32, webgpu, cuda, relax-compile)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import relax_mlir
import relax_mlir.builder as rb
from relax_mlir.context import make_context
from relax_mlir.dialects import relax as R
from relax_mlir.dialects.bind import bind
from relax_mlir.dialects.types import parse_type
from relax_mlir.errors import CompileError, InputError, ShapeError
from relax_mlir.shape_infer.expr import parse_expr
from relax_mlir.targets import steps

ROOT = Path(__file__).resolve().parents[2]

# The issue's example: @sq(["n"]) called from @main(["m"]).
ISSUE = """
func.func private @sq(%x: !relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32> {
  %y = "relax.multiply"(%x, %x) : (!relax.tensor<["n"], f32>, !relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
  return %y : !relax.tensor<["n"], f32>
}
func.func @main(%x: !relax.tensor<["m"], f32>) -> !relax.tensor<["m"], f32> {
  %y = "relax.call"(%x) {callee = @sq} : (!relax.tensor<["m"], f32>) -> !relax.tensor<["m"], f32>
  %z = "relax.add"(%y, %x) : (!relax.tensor<["m"], f32>, !relax.tensor<["m"], f32>) -> !relax.tensor<["m"], f32>
  return %z : !relax.tensor<["m"], f32>
}
"""

# Run-time checks at a call (one symbol from two arguments), a check failing inside the callee, a symbol the
# types cannot bind (the result is coarser, matched back by the caller), a data-dependent output of the
# callee, and tuple / prim / shape values across a call.
CHECKS = """
func.func @pair(%x: !relax.tensor<["n", "k"], f32>, %y: !relax.tensor<["n", "k"], f32>) -> !relax.tensor<["n", "k"], f32> {
  %z = "relax.add"(%x, %y) : (!relax.tensor<["n", "k"], f32>, !relax.tensor<["n", "k"], f32>) -> !relax.tensor<["n", "k"], f32>
  return %z : !relax.tensor<["n", "k"], f32>
}
func.func @main(%x: !relax.tensor<["a", "c"], f32>, %y: !relax.tensor<["b", "d"], f32>) -> !relax.tensor<["a", "c"], f32> {
  %r = "relax.call"(%x, %y) {callee = @pair} : (!relax.tensor<["a", "c"], f32>, !relax.tensor<["b", "d"], f32>) -> !relax.tensor<["a", "c"], f32>
  return %r : !relax.tensor<["a", "c"], f32>
}
func.func @inner(%x: !relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32> {
  %y = "relax.match_cast"(%x) : (!relax.tensor<["n"], f32>) -> !relax.tensor<[3], f32>
  %z = "relax.match_cast"(%y) : (!relax.tensor<[3], f32>) -> !relax.tensor<["n"], f32>
  return %z : !relax.tensor<["n"], f32>
}
func.func @outer(%x: !relax.tensor<["m"], f32>) -> !relax.tensor<["m"], f32> {
  %r = "relax.call"(%x) {callee = @inner} : (!relax.tensor<["m"], f32>) -> !relax.tensor<["m"], f32>
  %s = "relax.add"(%r, %x) : (!relax.tensor<["m"], f32>, !relax.tensor<["m"], f32>) -> !relax.tensor<["m"], f32>
  return %s : !relax.tensor<["m"], f32>
}
func.func private @transpose(%x: !relax.tensor<["n", "k"], f32>) -> !relax.tensor<["k", "n"], f32> {
  %y = "relax.permute_dims"(%x) {axes = [1, 0]} : (!relax.tensor<["n", "k"], f32>) -> !relax.tensor<["k", "n"], f32>
  return %y : !relax.tensor<["k", "n"], f32>
}
func.func @coarse(%x: !relax.tensor<["m", 4], f32>) -> !relax.tensor<[4, "m"], f32> {
  %u = "relax.match_cast"(%x) : (!relax.tensor<["m", 4], f32>) -> !relax.tensor<["m", "?"], f32>
  %r = "relax.call"(%u) {callee = @transpose} : (!relax.tensor<["m", "?"], f32>) -> !relax.tensor<["?", "m"], f32>
  %s = "relax.match_cast"(%r) : (!relax.tensor<["?", "m"], f32>) -> !relax.tensor<[4, "m"], f32>
  return %s : !relax.tensor<[4, "m"], f32>
}
"""

# A data-dependent output of a callee (returned tensors: the CPU targets only).
DYNAMIC = """
func.func private @positions(%x: !relax.tensor<["n"], f32>) -> !relax.tensor<[1, "?"], i64> {
  %i = "relax.nonzero"(%x) : (!relax.tensor<["n"], f32>) -> !relax.tensor<[1, "?"], i64>
  return %i : !relax.tensor<[1, "?"], i64>
}
func.func @data_dependent(%x: !relax.tensor<["m"], f32>) -> !relax.tensor<[1, "?"], i64> {
  %r = "relax.call"(%x) {callee = @positions} : (!relax.tensor<["m"], f32>) -> !relax.tensor<[1, "?"], i64>
  return %r : !relax.tensor<[1, "?"], i64>
}
"""

TUPLES = """
func.func private @grow(%t: !relax.tuple<[!relax.tensor<["n"], f32>, !relax.prim<"k">]>) -> !relax.tuple<[!relax.shape<["n + k", "n * k"]>, !relax.tensor<["n"], f32>]> {
  %x = "relax.tuple_get_item"(%t) {index = 0 : i64} : (!relax.tuple<[!relax.tensor<["n"], f32>, !relax.prim<"k">]>) -> !relax.tensor<["n"], f32>
  %a = "relax.prim_value"() {value = "n + k"} : () -> !relax.prim<"n + k">
  %b = "relax.prim_value"() {value = "n * k"} : () -> !relax.prim<"n * k">
  %s = "relax.make_shape"(%a, %b) : (!relax.prim<"n + k">, !relax.prim<"n * k">) -> !relax.shape<["n + k", "n * k"]>
  %e = "relax.exp"(%x) : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
  %r = "relax.make_tuple"(%s, %e) : (!relax.shape<["n + k", "n * k"]>, !relax.tensor<["n"], f32>) -> !relax.tuple<[!relax.shape<["n + k", "n * k"]>, !relax.tensor<["n"], f32>]>
  return %r : !relax.tuple<[!relax.shape<["n + k", "n * k"]>, !relax.tensor<["n"], f32>]>
}
func.func @tuples(%x: !relax.tensor<["m"], f32>, %p: !relax.prim<"q">) -> !relax.tuple<[!relax.shape<["m + q", "m * q"]>, !relax.tensor<["m"], f32>]> {
  %t = "relax.make_tuple"(%x, %p) : (!relax.tensor<["m"], f32>, !relax.prim<"q">) -> !relax.tuple<[!relax.tensor<["m"], f32>, !relax.prim<"q">]>
  %r = "relax.call"(%t) {callee = @grow} : (!relax.tuple<[!relax.tensor<["m"], f32>, !relax.prim<"q">]>) -> !relax.tuple<[!relax.shape<["m + q", "m * q"]>, !relax.tensor<["m"], f32>]>
  return %r : !relax.tuple<[!relax.shape<["m + q", "m * q"]>, !relax.tensor<["m"], f32>]>
}
"""

SIZES = (0, 1, 7, 64)


def _error(fn, *args) -> str:
    with pytest.raises(InputError) as info:
        fn(*args)
    return str(info.value)


# -- binding ----------------------------------------------------------------------------------------------


def _bind(params: list[str], args: list[str]):
    return bind([parse_type(p) for p in params], [parse_type(a) for a in args])


def test_bind_solves_expressions_in_any_order() -> None:
    b = _bind(['!relax.tensor<["2 * n"], f32>', '!relax.tensor<["n + 1", "k"], f32>'],
              ['!relax.tensor<["2 * m"], f32>', '!relax.tensor<["m + 1", 3], f32>'])  # fmt: skip
    assert b.subst == {"n": parse_expr("m"), "k": parse_expr("3")} and not b.checks and not b.unbound


def test_bind_leaves_unsolvable_symbols_unbound_and_checks_at_run_time() -> None:
    b = _bind(['!relax.tensor<["2 * n"], f32>'], ['!relax.tensor<["m"], f32>'])  # n = m / 2 is not exact
    assert b.unbound == {"n"} and len(b.checks) == 1 and b.checks[0].expected is None
    b = _bind(['!relax.tensor<["n"], f32>', '!relax.tensor<["n"], f32>'],
              ['!relax.tensor<["a"], f32>', '!relax.tensor<["b"], f32>'])  # fmt: skip
    assert b.subst == {"n": parse_expr("a")} and [str(c) for c in b.checks] == [
        "argument #1 dim 0: b must be a"
    ]


def test_bind_rejects_provably_different_dims() -> None:
    with pytest.raises(
        ShapeError, match="argument #1 dim 0 has dim a \\+ 1 where the callee's parameter needs n = a"
    ):
        _bind(['!relax.tensor<["n"], f32>', '!relax.tensor<["n"], f32>'],
              ['!relax.tensor<["a"], f32>', '!relax.tensor<["a + 1"], f32>'])  # fmt: skip


# -- the issue's example ----------------------------------------------------------------------------------


def test_issue_example_verifies_with_relax_opt(tmp_path: Path) -> None:
    path = tmp_path / "calls.mlir"
    path.write_text(ISSUE)
    result = subprocess.run(
        [sys.executable, "-m", "relax_mlir.relax_opt", "--relax-verify", str(path)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode == 0, result.stderr


def test_func_call_between_relax_functions_points_at_relax_call() -> None:
    text = ISSUE.replace('"relax.call"(%x) {callee = @sq}', "func.call @sq(%x)")
    with pytest.raises(CompileError, match="operand type mismatch.*; call a relax function with relax.call"):
        relax_mlir.compile(text)


@pytest.mark.parametrize("opt_level", [0, 1, 2, 3])
def test_issue_example_runs(opt_level: int) -> None:
    """A call at O0/O1; from O2 the private, once-called @sq is inlined (relax-inline)."""
    ex = relax_mlir.compile(ISSUE, opt_level=opt_level)
    for n in SIZES:
        x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
        np.testing.assert_allclose(ex["main"](x), x * x + x, rtol=1e-5, atol=1e-6)  # (an FMA from O2)


def test_calls_lower_to_host_func_calls() -> None:
    with make_context():
        module = steps.parse(ISSUE)
        steps.run(module, "relax-O0")
        text = str(module)
    assert "call @sq(" in text  # a call between host functions, not inlined
    with make_context():
        module = steps.parse(ISSUE.replace("func.func private @sq", "func.func @sq"))
        steps.run(module, "relax-O2")
        assert "call @sq(" in str(module)  # a public callee stays a call at O2


def test_o2_inlines_only_small_or_once_called_private_functions() -> None:
    big = "\n".join(
        f'  %y{i + 1} = "relax.exp"(%y{i}) : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>'
        for i in range(70)
    )
    text = f"""
func.func private @big(%y0: !relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32> {{
{big}
  return %y70 : !relax.tensor<["n"], f32>
}}
func.func @main(%x: !relax.tensor<["m"], f32>) -> !relax.tensor<["m"], f32> {{
  %a = "relax.call"(%x) {{callee = @big}} : (!relax.tensor<["m"], f32>) -> !relax.tensor<["m"], f32>
  %b = "relax.call"(%a) {{callee = @big}} : (!relax.tensor<["m"], f32>) -> !relax.tensor<["m"], f32>
  return %b : !relax.tensor<["m"], f32>
}}
"""
    with make_context():
        module = steps.parse(text)
        steps.run(module, "relax-inline{max-ops=64}")
        assert str(module).count("{callee = @big}") == 2  # 70 ops, called twice: stays a function
        steps.run(module, "relax-inline")
        assert "@big" not in str(module)


def test_o2_keeps_a_function_called_many_times_whose_copies_would_be_large() -> None:
    """A 30-op function called 3 times (90 ops inlined) stays a function; called twice (60), it is inlined."""
    body = "\n".join(
        f'  %y{i + 1} = "relax.exp"(%y{i}) : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>'
        for i in range(30)
    )
    calls = "\n".join(
        f'  %a{i + 1} = "relax.call"(%a{i}) {{callee = @f}} : (!relax.tensor<["m"], f32>) -> !relax.tensor<["m"], f32>'
        for i in range(3)
    )
    text = f"""
func.func private @f(%y0: !relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32> {{
{body}
  return %y30 : !relax.tensor<["n"], f32>
}}
func.func @main(%a0: !relax.tensor<["m"], f32>) -> !relax.tensor<["m"], f32> {{
{calls}
  return %a3 : !relax.tensor<["m"], f32>
}}
"""
    with make_context():
        module = steps.parse(text)
        steps.run(module, "relax-inline{max-ops=64}")
        assert str(module).count("{callee = @f}") == 3
        twice = text.replace("%a2)", "%a1)").replace("return %a3", "return %a2")
        twice = "\n".join(line for line in twice.splitlines() if "%a3 =" not in line)
        module = steps.parse(twice)
        steps.run(module, "relax-inline{max-ops=64}")
        assert "@f" not in str(module)


# A callee that writes a KV cache in place, called once per layer: the caller's arrays get the rows.
CACHE_T = '!relax.tensor<["kv_len + 1", "b", 2, 4], f32>'
NEW_T = '!relax.tensor<["b", 1, 2, 4], f32>'
INPLACE_CALL = f"""
func.func private @layer(%x: {NEW_T}, %kv_len: !relax.prim<"kv_len">, %c: {CACHE_T}) -> {NEW_T} {{
  %w = "relax.kv_cache_write"(%c, %x) : ({CACHE_T}, {NEW_T}) -> {CACHE_T}
  %s = "relax.sum"(%w) {{axes = [0], keepdims = true}} : ({CACHE_T}) -> !relax.tensor<[1, "b", 2, 4], f32>
  %p = "relax.permute_dims"(%s) {{axes = [1, 0, 2, 3]}} : (!relax.tensor<[1, "b", 2, 4], f32>) -> {NEW_T}
  %y = "relax.add"(%x, %p) : ({NEW_T}, {NEW_T}) -> {NEW_T}
  return %y : {NEW_T}
}}
func.func @main(%x: {NEW_T}, %kv_len: !relax.prim<"kv_len">, %c0: {CACHE_T}, %c1: {CACHE_T}) -> {NEW_T} {{
  %y = "relax.call"(%x, %kv_len, %c0) {{callee = @layer}} : ({NEW_T}, !relax.prim<"kv_len">, {CACHE_T}) -> {NEW_T}
  %z = "relax.call"(%y, %kv_len, %c1) {{callee = @layer}} : ({NEW_T}, !relax.prim<"kv_len">, {CACHE_T}) -> {NEW_T}
  return %z : {NEW_T}
}}
"""


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("batch, past", [(1, 0), (2, 3), (3, 6)])
def test_a_called_function_writes_the_callers_cache_in_place(opt_level: int, batch: int, past: int) -> None:
    """The caller's parameters passed to the callee's in-place one become in place too (each layer's
    cache gets its row, and the callee reads the written cache)."""
    ex = relax_mlir.compile(INPLACE_CALL, opt_level=opt_level)
    rng = np.random.default_rng(batch + past)
    x = rng.standard_normal((batch, 1, 2, 4)).astype(np.float32)
    caches = [rng.standard_normal((8, batch, 2, 4)).astype(np.float32) for _ in range(2)]
    expected = [c.copy() for c in caches]
    y = x
    for c in expected:
        c[past] = y[:, 0]
        y = y + c[: past + 1].sum(0)[:, None]
    out = ex["main"](x, past, caches[0][: past + 1], caches[1][: past + 1])
    np.testing.assert_allclose(out, y, rtol=1e-5, atol=1e-5)
    for got, want in zip(caches, expected):
        np.testing.assert_array_equal(got, want)


def test_a_value_passed_to_an_in_place_parameter_must_be_an_unshared_parameter() -> None:
    computed = INPLACE_CALL.replace(
        '  %y = "relax.call"(%x, %kv_len, %c0)',
        f'  %d = "relax.add"(%c0, %c0) : ({CACHE_T}, {CACHE_T}) -> {CACHE_T}\n'
        '  %y = "relax.call"(%x, %kv_len, %d)',
    )
    with pytest.raises(CompileError, match="updates operand #2 in place, so it must be a parameter"):
        relax_mlir.compile(computed, opt_level=0)
    shared = INPLACE_CALL.replace('"relax.call"(%y, %kv_len, %c1)', '"relax.call"(%y, %kv_len, %c0)')
    with pytest.raises(CompileError, match="updates parameter #2 in place, but other ops also read it"):
        relax_mlir.compile(shared, opt_level=0)


# -- run-time checks, coarser results, data-dependent outputs, tuples -------------------------------------


@pytest.fixture(scope="module", params=[0, 2])
def checks(request):
    return relax_mlir.compile(CHECKS + DYNAMIC + TUPLES, opt_level=request.param)


def test_a_binding_that_fails_at_run_time_is_an_input_error(checks) -> None:
    x = np.random.default_rng(0).standard_normal((3, 5)).astype(np.float32)
    np.testing.assert_allclose(checks["main"](x, x), 2 * x)
    message = _error(checks["main"], x, np.zeros((4, 5), np.float32))
    assert "relax.call @pair: argument #1 dim 0 must be a, got 4 (expected 3)" in message
    message = _error(checks["main"], x, np.zeros((3, 6), np.float32))
    assert "relax.call @pair: argument #1 dim 1 must be c, got 6 (expected 5)" in message


def test_a_check_failing_inside_the_callee_reports_the_callees_check(checks) -> None:
    v = np.arange(3, dtype=np.float32)
    np.testing.assert_allclose(checks["outer"](v), 2 * v)
    message = _error(checks["outer"], np.zeros(4, np.float32))
    assert (
        message.startswith("@outer:")
        and 'relax.match_cast: dim 0 of !relax.tensor<["n"], f32> must be 3' in message
    )
    # a public callee stays a call at every level; a private one is no entry point (O0 keeps it a call)
    assert "inner" in checks.functions and "transpose" not in checks.functions


@pytest.mark.parametrize("m", [0, 1, 5])
def test_unbound_symbol_gives_a_coarser_result(checks, m: int) -> None:
    x = np.random.default_rng(m).standard_normal((m, 4)).astype(np.float32)
    np.testing.assert_array_equal(checks["coarse"](x), x.T)


@pytest.mark.parametrize("n", [0, 1, 9])
def test_data_dependent_output_of_a_callee(checks, n: int) -> None:
    x = (np.random.default_rng(n).standard_normal(n) > 0).astype(np.float32)
    np.testing.assert_array_equal(checks["data_dependent"](x), np.stack(np.nonzero(x)))


@pytest.mark.parametrize("m, q", [(0, 2), (1, 1), (5, 3)])
def test_tuple_prim_and_shape_values_cross_a_call(checks, m: int, q: int) -> None:
    x = np.random.default_rng(m).standard_normal(m).astype(np.float32)
    shape, e = checks["tuples"](x, q)
    assert list(shape) == [m + q, m * q]
    np.testing.assert_allclose(e, np.exp(x), rtol=1e-6)


# -- the builder and relax-inline -------------------------------------------------------------------------


def _builder_module(bb: rb.BlockBuilder):
    with bb.function("double", {"x": rb.tensor(["n", 4])}, private=True) as (x,):
        bb.ret(R.concat([x, x], axis=0))
    with bb.function("main", {"x": rb.tensor(["m", 4]), "y": rb.tensor([1, 4])}) as (x, y):
        c = R.concat([x, y], axis=0)
        r = bb.call("double", c)
        assert str(rb.type_of(r)) == '!relax.tensor<["2 * m + 2", 4], f32>'
        bb.ret(R.exp(r))
    return bb.module


def test_builder_call_deduces_and_runs() -> None:
    module = _builder_module(rb.BlockBuilder())
    ex = relax_mlir.compile(str(module), opt_level=1)
    for m in (0, 1, 6):
        x = np.random.default_rng(m).standard_normal((m, 4)).astype(np.float32)
        y = np.ones((1, 4), np.float32)
        c = np.concatenate([x, y])
        np.testing.assert_allclose(ex["main"](x, y), np.exp(np.concatenate([c, c])), rtol=1e-6)


def test_builder_call_errors_at_the_users_line() -> None:
    bb = rb.BlockBuilder()
    with bb.function("sq", {"x": rb.tensor(["n"])}, private=True) as (x,):
        bb.ret(R.multiply(x, x))
    with pytest.raises(ShapeError, match=r"test_calls.py:\d+: relax.call @sq: argument #0 has dtype i32"):
        with bb.function("main", {"x": rb.tensor(["m"], "i32")}) as (x,):
            bb.call("sq", x)
            bb.ret(x)


def test_inlining_gives_the_same_results() -> None:
    text = str(_builder_module(rb.BlockBuilder()))
    with make_context():
        module = steps.parse(text)
        steps.run(module, "relax-inline,relax-verify,relax-infer-shapes")
        inlined = str(module)
    assert "relax.call" not in inlined and "@double" not in inlined
    ex = relax_mlir.compile(inlined, opt_level=2)
    x = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    y = np.ones((1, 4), np.float32)
    c = np.concatenate([x, y])
    np.testing.assert_allclose(ex["main"](x, y), np.exp(np.concatenate([c, c])), rtol=1e-6)


# -- recursion ------------------------------------------------------------------------------------------------


def halving_module():
    """@halve sums neighbouring pairs (padding an odd length with a zero) and calls itself until one element
    is left: the sum of the input. The recursive call is inside an ``scf.if`` on ``n floordiv 2``."""
    bb = rb.BlockBuilder()
    with bb.function("halve", {"x": rb.tensor(["n"])}, private=True, results=[rb.tensor(["?"])]) as (x,):
        with bb.if_(R.prim_value("n floordiv 2")) as (then, else_):
            with then:
                padded = R.concat([x, R.zeros(["n mod 2"])], axis=0)
                pairs = R.sum(R.reshape(padded, ["(n + 1) floordiv 2", 2]), axes=[1])
                assert str(rb.type_of(pairs)) == '!relax.tensor<["(n + 1) floordiv 2"], f32>'
                bb.yield_(bb.call("halve", pairs))
            with else_:
                bb.yield_(x)
        bb.ret(then.result)
    with bb.function("main", {"x": rb.tensor(["m"])}) as (x,):
        bb.ret(bb.call("halve", x))
    return bb.module


@pytest.mark.parametrize("opt_level", [0, 1, 2, 3])
def test_recursive_halving_matches_numpy(opt_level: int) -> None:
    module = halving_module()
    ex = relax_mlir.compile(str(module), opt_level=opt_level)
    for n in (0, 1, 2, 7, 64, 101):
        x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
        got = ex["main"](x)
        np.testing.assert_allclose(got, x if n == 0 else [x.sum()], rtol=1e-5, atol=1e-5)


def test_recursive_functions_are_not_inlined() -> None:
    with make_context():
        module = steps.parse(str(halving_module()))
        steps.run(module, "relax-inline,relax-verify")
        assert str(module).count("{callee = @halve}") == 2


# -- other targets ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("target", ["wasm32", "webgpu"])
def test_calls_on_other_targets(target: str) -> None:
    if target == "wasm32":
        pytest.importorskip("wasmtime")
    ex = relax_mlir.compile(CHECKS + TUPLES, target, opt_level=2)
    x = np.random.default_rng(0).standard_normal((3, 5)).astype(np.float32)
    np.testing.assert_allclose(ex["main"](x, x), 2 * x, rtol=1e-6)
    assert "argument #1 dim 0 must be a" in _error(ex["main"], x, np.zeros((4, 5), np.float32))
    assert "must be 3" in _error(ex["outer"], np.zeros(4, np.float32))
    for m in (0, 5):
        x = np.random.default_rng(m).standard_normal((m, 4)).astype(np.float32)
        np.testing.assert_array_equal(ex["coarse"](x), x.T)
    shape, e = ex["tuples"](x[:, 0].copy(), 3)
    assert list(shape) == [5 + 3, 5 * 3]
    assert "grow" not in ex.functions  # private relax functions are not entry points


def test_calls_build_for_cuda() -> None:
    ex = relax_mlir.compile(ISSUE, "cuda", opt_level=2)
    assert ex.ptx  # the host code calls @sq; kernels are PTX


def test_calls_on_the_emulated_cuda_target() -> None:
    from gpu_emulation import compile_emulated

    ex = compile_emulated(CHECKS + TUPLES, block_size=4, llvm_level=0)
    x = np.random.default_rng(0).standard_normal((3, 5)).astype(np.float32)
    np.testing.assert_allclose(ex["main"](x, x), 2 * x, rtol=1e-6)
    assert "argument #1 dim 0 must be a" in _error(ex["main"], x, np.zeros((4, 5), np.float32))
    assert "must be 3" in _error(ex["outer"], np.zeros(4, np.float32))
    for m in (0, 1, 5):
        x = np.random.default_rng(m).standard_normal((m, 4)).astype(np.float32)
        np.testing.assert_array_equal(ex["coarse"](x), x.T)
        shape, e = ex["tuples"](x[:, 0].copy(), 3)
        assert list(shape) == [m + 3, 3 * m]
        np.testing.assert_allclose(e, np.exp(x[:, 0]), rtol=1e-6)


def test_calls_in_a_relax_compile_library(tmp_path: Path) -> None:
    from test_aot import Built, _toolchain

    from relax_mlir.targets import compile_library

    runner, cc = _toolchain("x86_64")
    lib = compile_library(CHECKS, tmp_path / "libcalls.so", target="x86_64")
    assert "transpose" not in lib.functions and "inner" in lib.functions  # private ones are not exported
    main = Built(lib, runner, cc, "main", tmp_path)
    for n in (0, 1, 5):
        x = np.random.default_rng(n).standard_normal((n, 3)).astype(np.float32)
        code, outs = main.run([x, x])
        assert code == 0, outs
        np.testing.assert_allclose(outs[0], 2 * x, rtol=1e-6)
    code, message = main.run([np.zeros((3, 5), np.float32), np.zeros((4, 5), np.float32)])
    assert code != 0 and "relax.call @pair: argument #1 dim 0 must be a, got 4 (expected 3)" in message
    outer = Built(lib, runner, cc, "outer", tmp_path)
    code, message = outer.run([np.zeros(4, np.float32)])
    assert code != 0 and "must be 3, got 4" in message


# -- ONNX model-local functions ---------------------------------------------------------------------------


def _onnx_model_with_functions():
    import onnx
    from onnx import TensorProto, helper

    # local.ScaledSum(X, Y) = (X + Y) * alpha, alpha an attribute parameter (default 2.0); local.Twice calls it
    scaled = helper.make_function(
        "local",
        "ScaledSum",
        ["X", "Y"],
        ["Z"],
        [
            helper.make_node("Add", ["X", "Y"], ["S"]),
            helper.make_node("Constant", [], ["A"], value_float=0.0),
            helper.make_node("Constant", [], ["Alpha"]),
            helper.make_node("Mul", ["S", "Alpha"], ["Z"]),
        ],
        [helper.make_opsetid("", 21)],
        attributes=[],
    )
    # the Constant's value refers to the function's attribute
    alpha = helper.make_attribute("value_float", 0.0)
    alpha.ref_attr_name = "alpha"
    del scaled.node[2].attribute[:]
    scaled.node[2].attribute.append(alpha)
    del scaled.node[1:2]
    scaled.attribute_proto.append(helper.make_attribute("alpha", 2.0))
    twice = helper.make_function(
        "local",
        "Twice",
        ["X"],
        ["Y"],
        [helper.make_node("ScaledSum", ["X", "X"], ["Y"], domain="local", alpha=0.5)],
        [helper.make_opsetid("", 21), helper.make_opsetid("local", 1)],
    )
    nodes = [
        helper.make_node("ScaledSum", ["a", "b"], ["u"], domain="local"),  # default alpha
        helper.make_node("ScaledSum", ["c", "c"], ["v"], domain="local", alpha=3.0),
        helper.make_node("ScaledSum", ["d", "d"], ["w"], domain="local"),  # same function, another shape
        helper.make_node("Twice", ["u"], ["t"], domain="local"),
        helper.make_node("ScaledSum", ["e", "e"], ["x"], domain="local"),  # the same function as for a, b
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [
            helper.make_tensor_value_info("a", TensorProto.FLOAT, ["n", 4]),
            helper.make_tensor_value_info("b", TensorProto.FLOAT, ["n", 4]),
            helper.make_tensor_value_info("c", TensorProto.FLOAT, ["k"]),
            helper.make_tensor_value_info("d", TensorProto.FLOAT, ["p", "q", 3]),
            helper.make_tensor_value_info("e", TensorProto.FLOAT, [5, 2]),
        ],
        [
            helper.make_tensor_value_info(x, TensorProto.FLOAT, shape)
            for x, shape in (
                ("u", ["n", 4]),
                ("v", ["k"]),
                ("w", ["p", "q", 3]),
                ("t", ["n", 4]),
                ("x", [5, 2]),
            )
        ],
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("local", 1)],
        functions=[scaled, twice],
        ir_version=10,
    )
    onnx.checker.check_model(model)
    return model


def test_onnx_local_functions_are_called_relax_functions() -> None:
    import onnxruntime as ort

    from relax_mlir.frontend.onnx import from_onnx

    model = _onnx_model_with_functions()
    module = from_onnx(model)
    text = str(module)
    # ScaledSum at the default alpha: one relax function called at two shapes (["n", 4] and [5, 2]); a call
    # at another rank (["p", "q", 3]) and each other alpha get their own; Twice calls ScaledSum
    assert text.count("{callee = @local_ScaledSum}") == 2 and "@local_Twice" in text
    assert text.count("func.func private") == 5, text
    ex = relax_mlir.compile(text, opt_level=2)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for n, k, p, q in ((0, 1, 1, 0), (1, 5, 2, 3), (7, 0, 3, 1)):
        rng = np.random.default_rng(n + k)
        feeds = {
            "a": rng.standard_normal((n, 4)).astype(np.float32),
            "b": rng.standard_normal((n, 4)).astype(np.float32),
            "c": rng.standard_normal(k).astype(np.float32),
            "d": rng.standard_normal((p, q, 3)).astype(np.float32),
            "e": rng.standard_normal((5, 2)).astype(np.float32),
        }
        expected = session.run(None, feeds)
        got = ex["main"](*feeds.values())
        for e, g in zip(expected, got):
            np.testing.assert_allclose(g, e, rtol=1e-6)


def test_onnx_local_function_with_a_branch_inside() -> None:
    """A function body holding an If (dataflow blocks around the branch) called at two shapes."""
    import onnxruntime as ort
    from onnx import TensorProto, helper

    from relax_mlir.frontend.onnx import from_onnx

    def branch(name: str, op: str) -> object:
        out = helper.make_tensor_value_info(f"{name}_y", TensorProto.FLOAT, None)
        return helper.make_graph([helper.make_node(op, ["X"], [f"{name}_y"])], name, [], [out])

    body = [
        helper.make_node("ReduceSum", ["X"], ["s"], keepdims=0),
        helper.make_node("Constant", [], ["zero"], value_float=0.0),
        helper.make_node("Greater", ["s", "zero"], ["c"]),
        helper.make_node(
            "If", ["c"], ["t"], then_branch=branch("then", "Exp"), else_branch=branch("else", "Neg")
        ),
        helper.make_node("Add", ["t", "X"], ["Y"]),
    ]
    f = helper.make_function("local", "F", ["X"], ["Y"], body, [helper.make_opsetid("", 21)])
    graph = helper.make_graph(
        [
            helper.make_node("F", ["a"], ["y"], domain="local"),
            helper.make_node("F", ["b"], ["z"], domain="local"),
        ],
        "g",
        [
            helper.make_tensor_value_info("a", TensorProto.FLOAT, ["n"]),
            helper.make_tensor_value_info("b", TensorProto.FLOAT, ["p", 3]),
        ],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n"]),
            helper.make_tensor_value_info("z", TensorProto.FLOAT, ["p", 3]),
        ],
    )
    opsets = [helper.make_opsetid("", 21), helper.make_opsetid("local", 1)]
    model = helper.make_model(graph, opset_imports=opsets, functions=[f], ir_version=10)
    text = str(from_onnx(model))
    assert text.count("scf.if") == 2 and text.count("func.func private") == 2, text
    ex = relax_mlir.compile(text, opt_level=1)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for n, p, sign in ((0, 1, 1.0), (1, 0, -1.0), (7, 5, 1.0), (4, 3, -1.0)):
        rng = np.random.default_rng(n + p)
        feeds = {
            "a": (sign * np.abs(rng.standard_normal(n)) + 0.1 * sign).astype(np.float32),
            "b": (-sign * np.abs(rng.standard_normal((p, 3))) - 0.1 * sign).astype(np.float32),
        }
        for e, g in zip(session.run(None, feeds), ex["main"](*feeds.values())):
            np.testing.assert_allclose(g, e, rtol=1e-6)


def test_onnx_local_function_errors_name_the_function() -> None:
    from onnx import TensorProto, helper

    from relax_mlir.errors import UnsupportedOpError
    from relax_mlir.frontend.onnx import OnnxImportError, from_onnx

    def model(body):
        f = helper.make_function("local", "F", ["X"], ["Y"], body, [helper.make_opsetid("", 21)])
        graph = helper.make_graph(
            [helper.make_node("F", ["a"], ["y"], domain="local")],
            "g",
            [helper.make_tensor_value_info("a", TensorProto.FLOAT, ["n"])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n"])],
        )
        opsets = [helper.make_opsetid("", 21), helper.make_opsetid("local", 1)]
        return helper.make_model(graph, opset_imports=opsets, functions=[f], ir_version=10)

    with pytest.raises(UnsupportedOpError, match="Multinomial \\(node 'Multinomial_0' in function 'F'"):
        from_onnx(model([helper.make_node("Multinomial", ["X"], ["Y"])]))
    with pytest.raises(
        OnnxImportError, match="node 'F_0' .*: in function 'local.F': ONNX node 'Transpose_0'"
    ):
        from_onnx(model([helper.make_node("Transpose", ["X"], ["Y"], perm=[1, 0])]))


@pytest.mark.parametrize("opt_level", [0, 2, 3])
def test_calls_inside_a_dataflow_block_with_planned_memory(opt_level: int) -> None:
    """A public callee (a call at every level) between kernels whose buffers the memory plan reuses."""
    bb = rb.BlockBuilder()
    with bb.function("pub", {"x": rb.tensor(["n", 4])}) as (x,):
        bb.ret(R.add(R.exp(x), x))
    with bb.function("main", {"x": rb.tensor(["m", 4])}) as (x,):
        with bb.dataflow():
            a = R.exp(x)
            b = bb.call("pub", R.multiply(a, a))
            minus_b = R.subtract(b, R.multiply(b, R.constant(np.array(2, np.float32))))
            out = bb.emit_output(R.add(R.add(R.exp(b), a), bb.call("pub", minus_b)))
        bb.ret(out)
    ex = relax_mlir.compile(str(bb.module), opt_level=opt_level)

    def pub(v):
        return np.exp(v) + v

    for m in (0, 1, 5, 33):
        x = (np.random.default_rng(m).standard_normal((m, 4)) * 0.1).astype(np.float32)
        a = np.exp(x)
        b = pub(a * a)
        np.testing.assert_allclose(ex["main"](x), np.exp(b) + a + pub(-b), rtol=1e-5)


@pytest.mark.parametrize("opt_level", [0, 1, 2])
def test_a_call_checked_inside_a_branch_runs_only_when_the_check_holds(opt_level: int) -> None:
    """Inside a branch a failed argument check is recorded, not branched on: the call is then skipped (its
    kernels would read out of bounds), and the error reaches Python."""
    bb = rb.BlockBuilder()
    with bb.function("pos", {"x": rb.tensor(["n"]), "y": rb.tensor(["n"])}, private=True) as (x, y):
        bb.ret(R.nonzero(R.add(x, y)))
    with bb.function("main", {"x": rb.tensor(["a"]), "y": rb.tensor(["b"]), "p": rb.prim("k")}) as (x, y, p):
        with bb.if_(p) as (then, else_):
            with then:
                bb.yield_(bb.call("pos", x, y))
            with else_:
                bb.yield_(R.nonzero(x))
        bb.ret(then.result)
    ex = relax_mlir.compile(str(bb.module), opt_level=opt_level)
    for n in (0, 1, 6):
        rng = np.random.default_rng(n)
        x, y = (rng.integers(-1, 2, n).astype(np.float32) for _ in range(2))
        np.testing.assert_array_equal(ex["main"](x, y, 1), np.stack(np.nonzero(x + y)))
        np.testing.assert_array_equal(ex["main"](x, y[:0], 0), np.stack(np.nonzero(x)))
        if n:
            assert "must be a, got 0" in _error(ex["main"], x, y[:0], 1)  # (O2: inlined, a match_cast)
