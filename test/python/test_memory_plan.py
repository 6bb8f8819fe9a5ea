"""relax-plan-memory: planned and unplanned compiled models agree with numpy; bounds make plans static."""

from __future__ import annotations

import numpy as np
import pytest
from mlir import ir, passmanager

import relax_mlir.pipelines.cpu  # noqa: F401  (registers relax-to-host)
from relax_mlir.context import make_context, parse_module
from relax_mlir.errors import InputError
from relax_mlir.examples import reference
from relax_mlir.examples.models import small_cnn, transformer_block
from relax_mlir.pipelines import add_pipeline, load_passes, parse_pipeline
from relax_mlir.shape_infer.expr import prove_le
from relax_mlir.targets import compile
from relax_mlir.transforms.memory_plan import plan_module, report

D, HEADS, FF = 64, 4, 96
BOUNDS = "relax.upper_bounds = {b = 16 : i64, s = 2048 : i64}"


def block_text(bounds: str | None) -> str:
    text = str(transformer_block(D, HEADS, FF))
    assert BOUNDS in text
    if bounds is None:
        return text.replace(f" attributes {{{BOUNDS}}}", "")
    return text.replace(BOUNDS, f"relax.upper_bounds = {{{bounds}}}")


PLANNED = (  # planning alone (no cleanups, fusion or BLAS), to test what it does by itself
    "relax-verify,relax-infer-shapes,convert-relax-to-linalg,relax-plan-memory,relax-lower-host,"
    "relax-schedule-kernels"
)


@pytest.fixture(scope="module")
def blocks() -> dict:
    hosts: dict[str, str] = {}
    out = {}
    for name, bounds in [("static", "b = 2 : i64, s = 9 : i64"), ("symbolic", None)]:
        out[name] = compile(
            block_text(bounds),
            opt_level=1,
            pipeline=PLANNED,
            on_stage=lambda s, t, n=name: hosts.__setitem__(n, t) if s == "host" else None,
        )
    out["hosts"] = hosts
    return out


@pytest.fixture(scope="module")
def unplanned_block():
    return compile(block_text("b = 2 : i64, s = 9 : i64"), opt_level=1)


@pytest.mark.parametrize("b, s", [(1, 1), (2, 5), (2, 9), (1, 8)])
def test_transformer_planned_matches_unplanned_and_numpy(blocks, unplanned_block, b: int, s: int) -> None:
    weights = reference.transformer_weights(D, FF, seed=b * 10 + s)
    x = np.random.default_rng(s).standard_normal((b, s, D)).astype(np.float32)
    expected = reference.transformer_block(x, HEADS, weights)
    plain = unplanned_block(x, *weights.values())
    for kind in ("static", "symbolic"):
        out = blocks[kind](x, *weights.values())
        np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)
        np.testing.assert_array_equal(out, plain)


@pytest.mark.parametrize("b, s", [(3, 16), (1, 33)])
def test_symbolic_plan_runs_at_any_size(blocks, b: int, s: int) -> None:
    weights = reference.transformer_weights(D, FF, seed=s)
    x = np.random.default_rng(s).standard_normal((b, s, D)).astype(np.float32)
    np.testing.assert_allclose(
        blocks["symbolic"](x, *weights.values()),
        reference.transformer_block(x, HEADS, weights),
        rtol=1e-4,
        atol=1e-4,
    )


def test_static_plan_rejects_inputs_above_the_bound(blocks) -> None:
    weights = reference.transformer_weights(D, FF)
    with pytest.raises(InputError, match="symbol 's' is 10 .* above its upper bound 9"):
        blocks["static"](np.zeros((1, 10, D), np.float32), *weights.values())
    with pytest.raises(InputError, match="symbol 'b' is 3 .* above its upper bound 2"):
        blocks["static"](np.zeros((3, 1, D), np.float32), *weights.values())


def test_plan_is_used_by_the_host_code(blocks) -> None:
    for kind, storages in (
        ("static", "memref.alloc() {alignment = 64 : i64} : memref<"),
        ("symbolic", ": memref<?xi8>"),
    ):
        host = blocks["hosts"][kind]
        body = host[host.index("func.func @transformer_block") :]
        assert storages in body
        assert body.count("memref.view") >= 20
        assert "tensor.empty" not in body.split("^fail")[0]


@pytest.fixture(scope="module")
def cnns() -> dict:
    text = str(small_cnn())
    bounded = text.replace(
        'func.func @small_cnn(%arg0: !relax.tensor<["n", 3, "h", "w"], f32> {relax.name = "image"}) -> '
        '!relax.tensor<["n", 10], f32> {',
        'func.func @small_cnn(%arg0: !relax.tensor<["n", 3, "h", "w"], f32> {relax.name = "image"}) -> '
        '!relax.tensor<["n", 10], f32> attributes {relax.upper_bounds = {n = 2 : i64, h = 16 : i64, w = 17 : i64}} {',
    )
    assert bounded != text
    return {
        "symbolic": compile(text, opt_level=1, pipeline=PLANNED),
        "static": compile(bounded, opt_level=1, pipeline=PLANNED),
    }


@pytest.mark.parametrize("n, h, w", [(1, 8, 8), (2, 9, 13), (1, 2, 3), (2, 16, 17)])
def test_small_cnn_planned_matches_numpy(cnns, n: int, h: int, w: int) -> None:
    image = np.random.default_rng(h * w).standard_normal((n, 3, h, w)).astype(np.float32)
    expected = reference.small_cnn(image)
    for kind in ("symbolic", "static"):
        np.testing.assert_allclose(cnns[kind](image), expected, rtol=1e-4, atol=1e-4)


def _plans(text: str):
    with make_context(), ir.Location.unknown():
        load_passes()
        op = parse_module(text, "<test>")
        pm = passmanager.PassManager("builtin.module")
        add_pipeline(pm, parse_pipeline("relax-verify,relax-infer-shapes,convert-relax-to-linalg"))
        pm.run(op)
        return plan_module(op), report(op)


def test_unbounded_symbol_is_never_static() -> None:
    (plan,), text = _plans(block_text("b = 2 : i64"))
    assert plan.bounds == {"b": 2}
    for storage in plan.storages:
        sizes = [plan.buffers[i].size for i in storage.buffers]
        if storage.static:
            assert all("s" not in e.free_symbols for e in sizes)
        else:
            assert "s" in storage.size.free_symbols
    assert any(not s.static for s in plan.storages)
    assert "= unbounded at the bounds" in text


def test_bounded_plan_is_static_and_between_the_liveness_bound_and_allocating_everything() -> None:
    (plan,), text = _plans(block_text("b = 2 : i64, s = 9 : i64"))
    assert all(s.static for s in plan.storages)
    peak = plan.at_bounds(plan.peak())
    live = plan.liveness_at_bounds()
    every = plan.at_bounds(plan.allocate_all())
    assert live is not None and peak is not None and every is not None
    assert live <= peak < every
    assert f"peak (planned): {peak} bytes" in text
    assert len(plan.storages) < len(plan.planned)


def test_symbolic_reuse_needs_a_proof() -> None:
    (plan,), _ = _plans(block_text(None))
    assert plan.bounds == {}
    for storage in plan.storages:
        # every tensor in a symbolic storage is proven to fit for all sizes
        assert all(prove_le(plan.buffers[i].size, storage.size) for i in storage.buffers)
    # live ranges in one storage never overlap
    for storage in plan.storages:
        ranges = sorted((plan.buffers[i].start, plan.buffers[i].end) for i in storage.buffers)
        assert all(a[1] < b[0] for a, b in zip(ranges, ranges[1:]))


def test_check_before_planned_storages_compiles_and_raises() -> None:
    """A match_cast check at the entry (a guard on the inputs, as the PyTorch importer emits) followed by
    kernels on planned storages: storages are allocated at their first use, so no live buffer crosses the
    check's branch (allocated at the entry, buffer deallocation needed an i1 memref: a CompileError)."""
    import relax_mlir.builder as rb  # noqa: PLC0415
    from relax_mlir.dialects import relax as R  # noqa: PLC0415
    from relax_mlir.dialects.types import ShapeType  # noqa: PLC0415
    from relax_mlir.shape_infer.expr import smax, sym  # noqa: PLC0415

    rng = np.random.default_rng(0)
    w1 = rng.standard_normal((6, 3, 3, 3)).astype(np.float32)
    w2 = rng.standard_normal((6, 2, 3, 3)).astype(np.float32)
    bb = rb.BlockBuilder()
    with bb.function(
        "main", {"x": rb.tensor(["b", 3, "h", "w"])}, upper_bounds={"b": 4, "h": 32, "w": 32}
    ) as (x,):
        with bb.dataflow():
            R.match_cast(R.make_shape([R.prim_value("h")]), ShapeType((smax(sym("h"), 2),)))
            y = R.add(R.conv2d(x, R.constant(w1), 2, 1), R.constant(np.ones((6, 1, 1), np.float32)))
            out = bb.emit_output(R.relu(R.conv2d(y, R.constant(w2), 1, 2, 2, 3)))
        bb.ret(out)
    exe = compile(bb.module)
    assert exe(np.ones((2, 3, 7, 5), np.float32)).shape == (2, 6, 4, 3)
    with pytest.raises(InputError, match=r"must be max\(h, 2\), got 1"):
        exe(np.ones((2, 3, 1, 5), np.float32))


def test_two_reshaped_slices_of_a_planned_storage_compile() -> None:
    """Two outputs reshaped from symbolic slices (their types proven at run time): the dealloc of a planned
    storage together with a view of it is one buffer, freed once (relax-split-deallocs follows memref.view);
    before, the pair lowered through an i1 memref helper and compile() failed."""
    import relax_mlir.builder as rb  # noqa: PLC0415
    from relax_mlir.dialects import relax as R  # noqa: PLC0415

    bb = rb.BlockBuilder()
    with bb.function("main", {"x": rb.tensor(["b", "n", 6])}, upper_bounds={"b": 64, "n": 512}) as (x,):
        with bb.dataflow():
            a = bb.emit_output(R.reshape(R.strided_slice(x, [1], [1], ["n"]), ["b", "n - 1", 6]))
            c = bb.emit_output(R.reshape(R.strided_slice(x, [1], ["n - 1"], ["n"]), ["b", 6]))
        bb.ret(a, c)
    exe = compile(bb.module)
    for n in (1, 2, 9):
        x = np.random.default_rng(n).random((3, n, 6), dtype=np.float32)
        first, last = exe(x)
        np.testing.assert_array_equal(first, x[:, 1:])
        np.testing.assert_array_equal(last, x[:, -1])


def test_constant_used_after_two_checks_compiles() -> None:
    """An entry check (a guard), a mid-body check (a reshape whose size is proven at run time), and a constant
    used after both: canonicalization hoists the constant's memref.get_global before the first branch, and
    ownership-based-buffer-deallocation aborted the process on it (relax-thread-buffers re-reads it below)."""
    import textwrap  # noqa: PLC0415

    from isolated import expect_error, run_isolated  # noqa: PLC0415

    code = """
        import numpy as np, relax_mlir
        import relax_mlir.builder as rb
        from relax_mlir.dialects import relax as R
        from relax_mlir.dialects.types import ShapeType
        from relax_mlir.shape_infer.expr import smax, sym
        bb = rb.BlockBuilder()
        with bb.function("main", {"x": rb.tensor(["b", "n", 6])}, upper_bounds={"b": 64, "n": 512}) as (x,):
            with bb.dataflow():
                R.match_cast(R.make_shape([R.prim_value("n")]), ShapeType((smax(sym("n"), 3),)))
                a = bb.emit_output(R.reshape(R.strided_slice(x, [1], [1], ["n"]), ["b", "n - 1", 6]))
                t = bb.emit_output(R.take(x, R.constant(np.array([1, 1, 2], np.int64)), 2))
            bb.ret(a, t)
        exe = relax_mlir.compile(bb.module)
        x = np.arange(4 * 5 * 6, dtype=np.float32).reshape(4, 5, 6)
        a, t = exe(x)
        assert (a == x[:, 1:]).all() and (t == x[:, :, [1, 1, 2]]).all()
    """
    code = textwrap.dedent(code)
    outcome = run_isolated(code + "\nprint('ran')")
    assert outcome.last_line == "ran", outcome.stderr[-2000:]
    expect_error(
        code + "\nexe(np.ones((2, 2, 6), np.float32))", "InputError", match="must be max(n, 3), got 2"
    )
