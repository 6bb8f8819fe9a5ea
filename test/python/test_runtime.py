"""compile() and the runtime: numbers against numpy at several shapes, input checks, errors."""

from __future__ import annotations

import numpy as np
import pytest
from isolated import expect_error
from oprun import compile_fn, rand

import relax_mlir.builder as rb
from relax_mlir.dialects import relax as R
from relax_mlir.errors import CompileError, InputError
from relax_mlir.targets import compile


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


UNKNOWN_CALLEE = """
func.func @f(%x: !relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32> {
  %0 = "relax.call_dps_library"(%x) {callee = "no_such_fn"} : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
  return %0 : !relax.tensor<["n"], f32>
}
"""


def test_undefined_library_callee_is_a_compile_error() -> None:
    """A call_dps_library callee neither registered nor loaded aborted the process in the ExecutionEngine."""
    code = f"import relax_mlir\nrelax_mlir.compile({UNKNOWN_CALLEE!r}, use_cache=False)"
    expect_error(code, "CompileError", match="undefined external function(s) no_such_fn")


# -- the fast call path: every check still rejects, same messages as ``bind``, results match numpy --------
CHECKED_PARAMS = {
    "x": rb.tensor(["b", "s"]),
    "y": rb.tensor(["s"]),
    "w": rb.tensor(["2 * s"]),
    "c": rb.tensor([3]),
    "k": rb.prim("b"),
    "p": rb.shape(["b", "s"]),
    "t": rb.tuple_type(rb.tensor(["s"]), rb.tensor([], "i32")),
}


@pytest.fixture(scope="module")
def checked():
    """Every kind of input check: dtype, rank, constant dims, symbols, an expression, bounds, ints, tuples."""
    return compile_fn(
        CHECKED_PARAMS,
        lambda x, y, w, c, k, p, t: (R.add(R.add(x, y), R.tuple_get_item(t, 0)), R.add(c, c)),
        {"b": 16, "s": 64},
    )


def checked_args(b: int = 2, s: int = 3) -> dict:
    return {
        "x": rand((b, s)),
        "y": rand((s,)),
        "w": rand((2 * s,)),
        "c": rand((3,)),
        "k": b,
        "p": (b, s),
        "t": (rand((s,)) + 1, np.array(7, np.int32)),
    }


@pytest.mark.parametrize("b, s", [(1, 1), (2, 3), (16, 64), (0, 5), (3, 0)])
def test_fast_path_matches_numpy(checked, b: int, s: int) -> None:
    a = checked_args(b, s)
    fn = checked.functions["main"]
    gathered = fn._gather(fn._flatten(list(a.values())))
    assert gathered is not None, "good inputs take the fast path"
    assert fn._env(gathered[1]) == fn.bind(list(a.values()))[1] == {"b": b, "s": s}
    for _ in range(3):  # frames are reused
        out, doubled = checked(*a.values())
        np.testing.assert_allclose(out, a["x"] + a["y"] + a["t"][0], rtol=1e-6)
        np.testing.assert_allclose(doubled, a["c"] * 2, rtol=1e-6)
        assert out.shape == (b, s) and out.dtype == np.float32 and out.flags.c_contiguous


BAD_INPUTS = [
    ("x", [[1.0, 2.0, 3.0]] * 2, "parameter 'x' must be a numpy array of"),
    ("x", rand((2, 3), np.float64), r"parameter 'x' has dtype float64, expected float32 \(f32\)"),
    ("x", rand((2, 3)).astype(">f4"), "parameter 'x' has dtype >f4, expected float32"),
    ("x", rand((6,)), r"parameter 'x' has rank 1 \(shape \(6,\)\), expected rank 2"),
    ("c", rand((4,)), "parameter 'c' dim 0 is 4, expected 3"),
    ("y", rand((4,)), "parameter 'y' dim 0 is 4, but symbol 's' is 3 from parameter 'x' dim 1"),
    ("w", rand((5,)), r"parameter 'w' dim 0 is 5, expected 2 \* s = 6"),
    ("k", 3, "parameter 'k' is 3, but symbol 'b' is 2 from parameter 'x' dim 0"),
    ("k", 2.0, "parameter 'k' must be an integer, got 2.0"),
    ("k", "2", "parameter 'k' must be an integer"),
    ("p", (2, 4), "parameter 'p' value #1 is 4, but symbol 's' is 3 from parameter 'x' dim 1"),
    ("p", (2,), r"parameter 'p' must be a shape of 2 integers, got \(2,\)"),
    ("p", np.array([2, 3]), "parameter 'p' must be a shape of 2 integers"),
    ("t", rand((3,)), "argument #6 must be a tuple of 2 values"),
    ("t", (rand((3,)),), "argument #6 must be a tuple of 2 values"),
    ("t", (rand((4,)), np.array(7, np.int32)), "parameter 't.0' dim 0 is 4, but symbol 's' is 3"),
    ("t", (rand((3,)), np.array(7, np.int64)), "parameter 't.1' has dtype int64, expected int32"),
    ("t", (rand((3,)), np.array([7], np.int32)), "parameter 't.1' has rank 1"),
]


@pytest.mark.parametrize("name, value, message", BAD_INPUTS, ids=[f"{n}-{m[:30]}" for n, _, m in BAD_INPUTS])
def test_fast_path_rejects_bad_inputs(checked, name: str, value, message: str) -> None:
    a = checked_args()
    a[name] = value
    args = list(a.values())
    fn = checked.functions["main"]
    with pytest.raises(InputError, match=message) as by_call:
        checked(*args)
    with pytest.raises(InputError) as by_bind:
        fn.bind(args)
    assert str(by_call.value) == str(by_bind.value)
    try:
        gathered = fn._gather(fn._flatten(args))
    except (InputError, TypeError, ValueError):
        gathered = None
    assert gathered is None, "the fast path must not accept what bind rejects"


@pytest.mark.parametrize(
    "b, s, message",
    [
        (17, 3, r"symbol 'b' is 17 \(from parameter 'x' dim 0\), above its upper bound 16"),
        (2, 65, r"symbol 's' is 65 \(from parameter 'x' dim 1\), above its upper bound 64"),
    ],
)
def test_fast_path_checks_upper_bounds(checked, b: int, s: int, message: str) -> None:
    a = checked_args(b, s)
    with pytest.raises(InputError, match=message):
        checked(*a.values())
    fn = checked.functions["main"]
    assert fn._gather(fn._flatten(list(a.values()))) is None


def test_errors_keep_binds_order(checked) -> None:
    """With several bad inputs the error is the one ``bind`` meets first, whichever check finds it."""
    cases = [
        ({"x": rand((2, 3), np.float64), "c": rand((4,))}, "parameter 'x' has dtype"),
        ({"c": rand((4,)), "k": 2.5}, "parameter 'c' dim 0 is 4"),
        ({"w": rand((5,)), "p": (2, 4)}, "parameter 'p' value #1 is 4"),  # expressions come last
        ({"x": rand((17, 3)), "k": 17, "p": (17, 3), "w": rand((5,))}, r"parameter 'w' dim 0 is 5"),
        ({"y": rand((4,)), "p": (2, "s")}, "parameter 'y' dim 0 is 4"),
    ]
    for changes, message in cases:
        a = {**checked_args(), **changes}
        with pytest.raises(InputError, match=message):
            checked(*a.values())


def test_argument_count_and_structure(checked) -> None:
    args = list(checked_args().values())
    with pytest.raises(InputError, match=r"@main takes 7 argument\(s\), got 6"):
        checked(*args[:-1])
    with pytest.raises(InputError, match="takes 7 argument"):
        checked(*args, 1)


def test_unusual_but_valid_inputs_fall_back_to_bind(checked) -> None:
    """ndarray subclasses, numpy ints, lists as shapes, non-contiguous and read-only arrays all run."""

    class Sub(np.ndarray):
        pass

    a = checked_args(4, 5)
    expected = a["x"] + a["y"] + a["t"][0]
    x = np.asfortranarray(a["x"])
    y = np.repeat(a["y"], 2)[::2]
    y.flags.writeable = False
    variants = [
        {"x": a["x"].view(Sub)},
        {"t": (a["t"][0], a["t"][1].view(Sub))},  # a 0-d subclass goes through bind
        {"x": x, "y": y, "k": np.int64(4), "p": [np.int32(4), 5]},
    ]
    for changes in variants:
        out, _ = checked(*{**a, **changes}.values())
        assert type(out) is np.ndarray
        np.testing.assert_allclose(out, expected, rtol=1e-6)


def test_concurrent_calls_use_separate_frames(add_exp) -> None:
    from concurrent.futures import ThreadPoolExecutor

    def run(n: int) -> bool:
        x, b = rand((n, 4)), rand((4,))
        expected = add_exp(x, b)
        return all(np.array_equal(add_exp(x, b), expected) for _ in range(200))

    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(run, [1, 50, 500, 3000] * 2))


def test_data_dependent_outputs_repeatedly() -> None:
    exe = compile_fn({"x": rb.tensor(["n"])}, lambda x: R.nonzero(x))
    for n in [0, 1, 7, 100, 3]:
        x = rand((n,))
        x[::2] = 0
        for _ in range(2):
            np.testing.assert_array_equal(exe(x), np.stack(np.nonzero(x)))


def test_huge_broadcast_input_that_cannot_be_copied_raises_input_error() -> None:
    """A zero-stride view of 10**9 x 784 needs a 3 TB contiguous copy: numpy's MemoryError leaked out."""
    from isolated import expect_error

    message = expect_error(
        """
        import numpy as np
        from relax_mlir import compile
        exe = compile('''
        func.func @main(%x: !relax.tensor<["n", 784], f32>) -> !relax.tensor<["n", 784], f32> {
          %0 = "relax.exp"(%x) : (!relax.tensor<["n", 784], f32>) -> !relax.tensor<["n", 784], f32>
          return %0 : !relax.tensor<["n", 784], f32>
        }''', opt_level=0)
        exe(np.broadcast_to(np.float32(1), (10**9, 784)))
        """,
        "InputError",
        match="parameter '#0'",
    )
    assert "3136000000000 bytes" in message and "not C-contiguous" in message
