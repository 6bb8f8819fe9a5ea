"""compile() and the runtime: numbers against numpy at several shapes, input checks, errors."""

from __future__ import annotations

import numpy as np
import pytest
from oprun import compile_fn, rand

import relax_mlir.builder as rb
from relax_mlir.dialects import relax as R
from relax_mlir.errors import CompileError, InputError
from relax_mlir.runtime.compiler import compile


@pytest.fixture(scope="module")
def add_exp():
    return compile_fn(
        {"x": rb.tensor(["n", 4]), "b": rb.tensor([4])},
        lambda x, b: R.add(R.exp(R.add(x, b)), b),
        {"n": 4096},
    )


@pytest.mark.parametrize("n", [1, 5, 0, 1000])
def test_symbolic_dim_changes_between_calls(add_exp, n: int) -> None:
    x, b = rand((n, 4)), rand((4,))
    np.testing.assert_allclose(add_exp(x, b), np.exp(x + b) + b, rtol=1e-5, atol=1e-6)


def test_wrong_inputs_raise(add_exp) -> None:
    x, b = rand((3, 4)), rand((4,))
    with pytest.raises(InputError, match="takes 2 argument"):
        add_exp(x)
    with pytest.raises(InputError, match="parameter 'x' has dtype float64"):
        add_exp(x.astype(np.float64), b)
    with pytest.raises(InputError, match="parameter 'x' has rank 1"):
        add_exp(rand((3,)), b)
    with pytest.raises(InputError, match="parameter 'b' dim 0 is 5, expected 4"):
        add_exp(x, rand((5,)))
    with pytest.raises(InputError, match="symbol 'n' is 5000 .* above its upper bound 4096"):
        add_exp(rand((5000, 4)), b)
    with pytest.raises(InputError, match="must be a numpy array"):
        add_exp([[1.0] * 4], b)


def test_non_contiguous_input_is_copied(add_exp) -> None:
    x = np.asfortranarray(rand((5, 8))[:, ::2])
    b = rand((8,))[::2]
    np.testing.assert_allclose(add_exp(x, b), np.exp(x + b) + b, rtol=1e-5, atol=1e-6)


MATCH_CAST = """
func.func @main(%x: !relax.tensor<["n", "m"], f32>) -> !relax.tensor<["n", 4], f32> {
  %y = "relax.match_cast"(%x) : (!relax.tensor<["n", "m"], f32>) -> !relax.tensor<["n", 4], f32>
  %z = "relax.exp"(%y) : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["n", 4], f32>
  return %z : !relax.tensor<["n", 4], f32>
}
"""


def test_match_cast_is_checked_at_run_time() -> None:
    exe = compile(MATCH_CAST, opt_level=1)
    x = rand((3, 4))
    np.testing.assert_allclose(exe(x), np.exp(x), rtol=1e-6)
    with pytest.raises(InputError, match=r"relax.match_cast: dim 1 of .* must be 4, got 5 \(expected 4\)"):
        exe(rand((3, 5)))
    np.testing.assert_allclose(exe(rand((7, 4))), np.exp(rand((7, 4))), rtol=1e-6)


SHAPES_AND_TUPLES = """
func.func @main(%x: !relax.tensor<["b", "s"], f32>, %y: !relax.tensor<["s"], f32>)
    -> !relax.tuple<[!relax.tensor<["b", "s"], f32>, !relax.shape<["b", "s"]>, !relax.prim<"b * s + 1">]> {
  %0 = "relax.add"(%x, %y) : (!relax.tensor<["b", "s"], f32>, !relax.tensor<["s"], f32>) -> !relax.tensor<["b", "s"], f32>
  %1 = "relax.shape_of"(%0) : (!relax.tensor<["b", "s"], f32>) -> !relax.shape<["b", "s"]>
  %2 = "relax.get_dim"(%1) {index = 0 : i64} : (!relax.shape<["b", "s"]>) -> !relax.prim<"b">
  %3 = "relax.get_dim"(%1) {index = 1 : i64} : (!relax.shape<["b", "s"]>) -> !relax.prim<"s">
  %4 = "relax.prim_binary"(%2, %3) {op = "mul"} : (!relax.prim<"b">, !relax.prim<"s">) -> !relax.prim<"b * s">
  %5 = "relax.prim_value"() {value = 1 : i64} : () -> !relax.prim<"1">
  %6 = "relax.prim_binary"(%4, %5) {op = "add"} : (!relax.prim<"b * s">, !relax.prim<"1">) -> !relax.prim<"b * s + 1">
  %t = "relax.make_tuple"(%0, %1, %6) : (!relax.tensor<["b", "s"], f32>, !relax.shape<["b", "s"]>, !relax.prim<"b * s + 1">)
      -> !relax.tuple<[!relax.tensor<["b", "s"], f32>, !relax.shape<["b", "s"]>, !relax.prim<"b * s + 1">]>
  return %t : !relax.tuple<[!relax.tensor<["b", "s"], f32>, !relax.shape<["b", "s"]>, !relax.prim<"b * s + 1">]>
}
"""


@pytest.mark.parametrize("b, s", [(1, 1), (2, 7), (3, 0)])
def test_tuple_shape_and_prim_outputs(b: int, s: int) -> None:
    exe = compile(SHAPES_AND_TUPLES, opt_level=1)
    x, y = rand((b, s)), rand((s,))
    out, shape, prim = exe(x, y)
    np.testing.assert_allclose(out, x + y, rtol=1e-6)
    assert shape == (b, s)
    assert prim == b * s + 1


def test_memory_stays_flat_over_10k_calls(add_exp) -> None:
    import resource

    x, b = rand((64, 4)), rand((4,))
    for _ in range(1000):
        add_exp(x, b)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for _ in range(10_000):
        add_exp(x, b)
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 2048, f"max RSS grew by {grown_kib} KiB over 10k calls"


def test_second_compile_hits_the_cache() -> None:
    compile(MATCH_CAST, opt_level=1)
    assert compile(MATCH_CAST, opt_level=1).stats.cache_hit


def test_compile_rejects_what_is_not_a_module() -> None:
    with pytest.raises(CompileError, match="takes an ir.Module, .* got int"):
        compile(42)
    with pytest.raises(CompileError, match="<compile>:1:1: custom op 'this' is unknown"):
        compile("this is not IR")
