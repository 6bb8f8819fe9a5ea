"""The CUDA target's mapping checked by numbers: the GPU-mapped programs run on the CPU (``gpu_emulation.py``).

Every op's IR example goes through the GPU passes (kernels to launches of one thread per iteration with 4
threads per block, buffers to managed memory, arguments staged in and out), its launches then run as loops on
the host, and the results must equal the CPU compile's at several shapes: symbols all 1 (one partial block),
all 3, all 17 (several blocks, a partial last one), all 0 for data movement (empty launches are skipped),
and distinct values per symbol (dims mixed up). The transformer block is checked against numpy.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from gpu_emulation import compile_emulated, emulation_pipeline

import relax_mlir
from relax_mlir.dialects.op_examples import NOT_STANDALONE, example_program
from relax_mlir.dialects.registry import OPS
from relax_mlir.errors import CompileError, InputError
from relax_mlir.examples import reference
from relax_mlir.examples.models import transformer_block
from relax_mlir.runtime.executable import Executable, Function, numpy_dtype

NAMES = sorted(set(OPS) - NOT_STANDALONE)
# ops whose example is fine with every symbol 0 (data movement and elementwise maps: nothing divides by a
# dim); the others reduce, pool or resize along symbolic dims, or index with fixed-size indices
_ZERO_MODULES = (
    "elementwise",
    "manipulate",
    "index",
    "pad",
    "create",
    "dynamic",
    "shape_value",
    "structural",
    "dequantize",
)
# check_index's low/high are inputs here (not the min/max of its indices): at a 0 dim any index is out of range
ZERO_OK = {n for n in NAMES if OPS[n].__module__.rsplit(".", 1)[-1] in _ZERO_MODULES} - {
    "scatter_elements",
    "check_index",
}
ZERO_OK |= {"kv_cache_write"}
_SUMMING_MODULES = ("reduce", "nn", "linear_algebra", "conv", "pool", "kv_cache", "resize")
MIXED = (2, 5, 3, 4, 6)  # symbol i (sorted) gets MIXED[i % 5] in the mixed assignment

# how the emulated programs are built: 4 threads per block, blocks and threads in increasing order; and
# 8 threads per block in decreasing order (a result that changes shows threads depending on each other),
# at LLVM -O0 (at -O1, LLVM's AVX-512 code for the reversed loops crashed; see gpu_emulation.py)
FORWARD = {"block_size": 4}
REVERSED = {"block_size": 8, "reverse": True, "llvm_level": 0}

_EMULATED: dict[tuple[str, str], Executable] = {}
_CPU: dict[str, Executable] = {}


def _emulated(program: str, options: dict[str, Any] = FORWARD) -> Executable:
    key = (program, repr(sorted(options.items())))
    if key not in _EMULATED:
        _EMULATED[key] = compile_emulated(program, **options)
    return _EMULATED[key]


def _cpu(program: str) -> Executable:
    if program not in _CPU:
        _CPU[program] = relax_mlir.compile(program, opt_level=1)
    return _CPU[program]


def _symbols(fn: Function) -> list[str]:
    names: set[str] = set()
    for spec in fn.inputs:
        dims = spec.type.shape if spec.kind == "tensor" else spec.type.values if spec.kind == "shape" else ()
        for d in dims or ():
            names |= d.free_symbols
        if spec.kind == "prim":
            names |= spec.type.value.free_symbols
    return sorted(names)


_CONSTANT_SHAPED: dict[tuple[Any, ...], np.ndarray] = {}  # inputs without symbols, made once (take's table)


def _random(shape: tuple[int, ...], dtype: np.dtype, high: int, rng: np.random.Generator) -> np.ndarray:
    if dtype == np.bool_:  # np.asarray: a 0-d draw is a numpy scalar, not an array
        return np.asarray(rng.random(shape) < 0.5)
    if dtype.kind in "iu":
        return np.asarray(rng.integers(0, high, size=shape).astype(dtype))
    return np.asarray(rng.uniform(0.1, 0.9, size=shape).astype(dtype))


def _inputs(fn: Function, env: dict[str, int], seed: int) -> list[Any]:
    """Random inputs for ``fn`` with its symbols at ``env``: floats in [0.1, 0.9], ints in [0, 3) (and below
    the smallest symbol, so that they index any symbolic dim), booleans half true."""
    rng = np.random.default_rng(seed)
    high = max(1, min([3, *env.values()]))
    out: list[Any] = []
    for spec in fn.inputs:
        if spec.kind == "prim":
            out.append(int(spec.type.value.evaluate(env)))
            continue
        if spec.kind == "shape":
            out.append(tuple(int(d.evaluate(env)) for d in spec.type.values))
            continue
        assert spec.kind == "tensor", spec
        shape = tuple(int(d.evaluate(env)) for d in spec.type.shape)
        dtype = numpy_dtype(spec.type.dtype, spec.name)
        if any(d.free_symbols for d in spec.type.shape):
            out.append(_random(shape, dtype, high, rng))
            continue
        key = (shape, dtype.str, high)
        if key not in _CONSTANT_SHAPED:
            _CONSTANT_SHAPED[key] = _random(shape, dtype, high, np.random.default_rng(len(_CONSTANT_SHAPED)))
        out.append(_CONSTANT_SHAPED[key])
    return out


@dataclass
class Compared:
    """What a comparison looked at, so that tests can check that nothing was silently skipped."""

    arrays: int = 0
    elements: int = 0
    inplace: int = 0  # in-place parameters compared after the call
    inplace_updated: int = 0  # ... that the call changed
    tuples: int = 0  # results with several fields
    errors: int = 0  # inputs that failed a run-time check, on both sides with the same message


def _compare(
    got: Any, expected: Any, where: str, seen: Compared, tolerance: tuple[float, float] = (1e-5, 1e-6)
) -> None:
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected), f"{where}: {got!r} vs {expected!r}"
        seen.tuples += 1
        for i, (g, e) in enumerate(zip(got, expected, strict=True)):
            _compare(g, e, f"{where}[{i}]", seen, tolerance)
        return
    if not isinstance(expected, np.ndarray):
        assert got == expected, f"{where}: got {got!r}, expected {expected!r}"
        return
    assert isinstance(got, np.ndarray), f"{where}: got {type(got).__name__}, expected an array"
    assert got.dtype == expected.dtype and got.shape == expected.shape, (
        f"{where}: got {got.dtype}{list(got.shape)}, expected {expected.dtype}{list(expected.shape)}"
    )
    seen.arrays += 1
    seen.elements += expected.size
    if expected.dtype.kind in "fc":
        np.testing.assert_allclose(
            got.astype(np.float64),
            expected.astype(np.float64),
            rtol=tolerance[0],
            atol=tolerance[1],
            equal_nan=True,
            err_msg=where,
        )
    else:
        np.testing.assert_array_equal(got, expected, err_msg=where)


def _assignments(name: str, symbols: list[str]) -> list[tuple[str, dict[str, int]]]:
    values = [1, 3, 17] + ([0] if name in ZERO_OK else [])
    out = [(f"all {v}", dict.fromkeys(symbols, v)) for v in values]
    if len(symbols) > 1:
        out.append(("mixed", {s: MIXED[i % len(MIXED)] for i, s in enumerate(symbols)}))
    return out if symbols else out[:1]


def _structured(flat: list[Any], structure: list[Any]) -> list[Any]:
    """The flat inputs grouped as the parameters (``0`` a value, a list a tuple parameter's fields)."""
    it = iter(flat)

    def build(s: Any) -> Any:
        return next(it) if s == 0 else tuple(build(x) for x in s)

    return [build(s) for s in structure]


def _tolerance(name: str) -> tuple[float, float]:
    """(rtol, atol): 1e-5, 1e-6, or atol 1e-5 for ops that sum over hundreds of elements (layer_norm's 512:
    the CPU kernels' vectorized and reassociated sums round differently from one thread's sequential sum)."""
    module = OPS[name].__module__.rsplit(".", 1)[-1]
    return (1e-5, 1e-5) if module in _SUMMING_MODULES else (1e-5, 1e-6)


def _unnamed(message: str) -> str:
    """An error message without the name each build gives its source (``<compile>``, ``<emulated>``)."""
    return re.sub(r"<\w+>:", "<source>:", message)


def check_program(
    program: str,
    name: str,
    options: dict[str, Any] = FORWARD,
    build: Callable[[str], Executable] | None = None,
) -> Compared:
    """Run ``program`` emulated (or compiled by ``build``: ``test_webgpu.py``'s webgpu target) and on the CPU
    at every assignment of its symbols; compare everything."""
    emulated, cpu = (build(program) if build else _emulated(program, options)), _cpu(program)
    fn = emulated.functions["main"]
    seen = Compared()
    for label, env in _assignments(name, _symbols(fn)):
        where = f"relax.{name} with {label} ({env})"
        args = _inputs(fn, env, seed=sum(env.values()) + len(env))
        # only in-place parameters are written: copy those
        emu_args = [a.copy() if spec.inplace else a for a, spec in zip(args, fn.inputs, strict=True)]
        cpu_args = [a.copy() if spec.inplace else a for a, spec in zip(args, fn.inputs, strict=True)]
        try:
            expected = cpu(*_structured(cpu_args, fn.param_structure))
        except InputError as e:  # a run-time check failed on these random inputs: the same check must fail
            with pytest.raises(InputError) as raised:
                emulated(*_structured(emu_args, fn.param_structure))
            assert _unnamed(str(raised.value)) == _unnamed(str(e)), where
            seen.errors += 1
            continue
        got = emulated(*_structured(emu_args, fn.param_structure))
        _compare(got, expected, where, seen, _tolerance(name))
        for i, spec in enumerate(fn.inputs):
            if spec.inplace:
                _compare(emu_args[i], cpu_args[i], f"{where}: in-place parameter #{i}", seen)
                seen.inplace += 1
                seen.inplace_updated += not np.array_equal(emu_args[i], args[i])
    return seen


# ops whose examples return no array (shapes and prim values)
NO_ARRAYS = ("get_dim", "make_shape", "prim_binary", "prim_value", "shape_of", "tensor_to_shape")


@pytest.mark.parametrize("name", NAMES)
def test_op_on_emulated_gpu_matches_cpu(name: str) -> None:
    seen = check_program(example_program(name), name)
    assert seen.arrays or seen.errors or name in NO_ARRAYS


@pytest.mark.parametrize("name", NAMES)
def test_op_does_not_depend_on_the_order_of_threads(name: str) -> None:
    check_program(example_program(name), name, REVERSED)


def _one_op(op: str, attrs: str, source: str, result: str) -> str:
    return (
        f"func.func @main(%x: {source}) -> {result} {{\n"
        f'  %r = "relax.{op}"(%x) {attrs} : ({source}) -> {result}\n'
        f"  return %r : {result}\n}}\n"
    )


def _t(dims: str, dtype: str = "f32") -> str:
    return f"!relax.tensor<[{dims}], {dtype}>"


# reductions over outer or middle dims: the sequential loop runs inside each thread (loops.py interchanges
# ``scf.for { scf.parallel }``), and scans along an outer dim
OUTER_REDUCTIONS = {
    "sum_axis0": _one_op("sum", "{axes = [0], keepdims = false}", _t('"n", "m"'), _t('"m"')),
    "sum_axes01": _one_op("sum", "{axes = [0, 1], keepdims = false}", _t('"n", 3, "m"'), _t('"m"')),
    "sum_axis1_of_3": _one_op("sum", "{axes = [1], keepdims = true}", _t('"n", "m", 5'), _t('"n", 1, 5')),
    "max_axis0": _one_op("max", "{axes = [0], keepdims = false}", _t('"n", "m"'), _t('"m"')),
    "mean_axis0": _one_op("mean", "{axes = [0], keepdims = false}", _t('"n", "m"'), _t('"m"')),
    "variance_axis0": _one_op("variance", "{axes = [0], keepdims = false}", _t('"n", "m"'), _t('"m"')),
    "argmax_axis0": _one_op("argmax", "{axis = [0], keepdims = false}", _t('"n", "m"'), _t('"m"', "i64")),
    "softmax_axis0": _one_op("softmax", "{axis = 0 : i64}", _t('"n", "m"'), _t('"n", "m"')),
    "cumsum_axis0": _one_op(
        "cumsum", "{axis = 0 : i64, exclusive = false, reverse = false}", _t('"n", "m"'), _t('"n", "m"')
    ),
    "sum_i32_axis0": _one_op(
        "sum", "{axes = [0], keepdims = false}", _t('"n", "m"', "i32"), _t('"m"', "i32")
    ),
}


@pytest.mark.parametrize("case", sorted(OUTER_REDUCTIONS))
@pytest.mark.parametrize("options", [FORWARD, REVERSED], ids=["forward", "reversed"])
def test_reductions_over_outer_dims_match_cpu(case: str, options: dict[str, Any]) -> None:
    op = case.split("_")[0]
    seen = check_program(OUTER_REDUCTIONS[case], op, options)
    assert seen.arrays >= 4


@pytest.mark.parametrize("name", ["cumsum_axis", "cumprod_axis"])
def test_cumulative_axis_out_of_range_is_clamped(name: str) -> None:
    """An axis out of range (relax.check_axes reports it; the op alone does not) is clamped into [0, rank):
    the kernel writes every element (it wrote none, and the random inputs of the every-op tests sometimes
    drew axis 2 for a rank-2 tensor, so the CPU and the CUDA mapping returned different stale memory)."""
    program = example_program(name)
    scan = np.cumsum if name == "cumsum_axis" else np.cumprod
    rng = np.random.default_rng(0)
    for build in (_emulated, _cpu):
        exe = build(program)
        for n, axis, clamped in ((3, 0, 0), (3, 2, 1), (5, -1, 1), (5, 7, 1), (2, -5, 0), (4, 1, 1)):
            x = rng.uniform(0.5, 1.5, (n, 4)).astype(np.float32)
            got = exe(np.zeros(n, np.int8), x, np.array([axis], np.int64))
            want = scan(x, axis=clamped)
            if name == "cumprod_axis":  # the example is exclusive
                want = np.concatenate([np.ones_like(np.take(x, [0], clamped)), want], clamped)
                want = np.take(want, range(x.shape[clamped]), clamped)
            np.testing.assert_allclose(got, want, rtol=1e-5, err_msg=f"{name} at axis {axis}, n = {n}")


def test_run_time_broadcast_matches_cpu() -> None:
    """Two symbols that may each be 1 (``["n", 3]`` times ``["m", 1]``) broadcast at run time on the CUDA
    mapping as on the CPU; dims that do not broadcast fail the same check on both."""
    program = """func.func @main(%x: !relax.tensor<["n", 3], f32>, %y: !relax.tensor<["m", 1], f32>) -> !relax.tensor<"*", f32> {
  %0 = "relax.multiply"(%x, %y) : (!relax.tensor<["n", 3], f32>, !relax.tensor<["m", 1], f32>) -> !relax.tensor<"*", f32>
  return %0 : !relax.tensor<"*", f32>
}"""
    for options in (FORWARD, REVERSED):
        seen = check_program(program, "multiply", options)
        assert seen.arrays >= 3 and seen.errors >= 1, seen


def test_inplace_data_dependent_and_tuple_results_are_compared() -> None:
    """In-place parameters, data-dependent (returned) outputs and multi-result ops are really compared."""
    kv = check_program(example_program("kv_cache_write"), "kv_cache_write")
    assert kv.inplace >= 4 and kv.inplace_updated >= 3 and kv.elements > 0
    for name in ("nonzero", "unique"):
        fn = _emulated(example_program(name)).functions["main"]
        assert [kind for kind, _ in fn.outputs] == ["returned"], name
        seen = check_program(example_program(name), name)
        assert seen.arrays >= 4 and seen.elements > 0, name
    for name in ("split", "topk"):
        seen = check_program(example_program(name), name)
        assert seen.tuples >= 3 and seen.arrays >= 6, name


D, HEADS, FF = 64, 4, 128


@pytest.fixture(scope="module")
def block() -> Executable:
    return compile_emulated(transformer_block(d=D, heads=HEADS, ff=FF))


@pytest.mark.parametrize("b, s", [(1, 1), (2, 7), (3, 16)])
def test_transformer_block_on_emulated_gpu_matches_numpy(block: Executable, b: int, s: int) -> None:
    weights = reference.transformer_weights(D, FF, seed=b * 100 + s)
    x = np.random.default_rng(s).standard_normal((b, s, D)).astype(np.float32)
    expected = reference.transformer_block(x, HEADS, weights)
    np.testing.assert_allclose(block(x, *weights.values()), expected, rtol=1e-4, atol=1e-4)


def test_launches_whose_threads_cooperate_are_rejected() -> None:
    """The shared-memory tiled matmul (barriers, workgroup memory) cannot run one thread after another."""
    pipeline = emulation_pipeline(4).replace("tile-matmuls=false", "tile-matmuls=true")
    with pytest.raises(CompileError, match=r"gpu.launch in @relax_gpu_matmul_f32_\d+ has workgroup"):
        relax_mlir.compile(example_program("matmul"), pipeline=pipeline, use_cache=False)
    if "reduce-rows=false" in pipeline:  # the row reductions' warps combine partial sums with shuffles
        pipeline = emulation_pipeline(4).replace("reduce-rows=false", "reduce-rows=true")
        with pytest.raises(CompileError, match=r"gpu.launch in @sum_0 uses gpu.shuffle"):
            relax_mlir.compile(example_program("sum"), pipeline=pipeline, use_cache=False)
