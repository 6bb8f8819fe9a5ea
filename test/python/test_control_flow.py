"""Control flow: the join rule, relax.condition, scf.if / scf.while deduction, builder helpers, lowering."""

from __future__ import annotations

import pytest

from relax_mlir.dialects.join import forget, join, join_all
from relax_mlir.dialects.types import ObjectType, PrimType, ShapeType, TensorType, TupleType, parse_type


def t(text: str):
    return parse_type(text)


# -- the join rule -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "a, b, expected",
    [
        ('!relax.tensor<["n", 4], f32>', '!relax.tensor<["n", 4], f32>', '!relax.tensor<["n", 4], f32>'),
        ('!relax.tensor<["n", 4], f32>', '!relax.tensor<["2 * n", 4], f32>', '!relax.tensor<["?", 4], f32>'),
        # equal by the symbolic algebra, not by spelling
        (
            '!relax.tensor<["(n + 1) * 2 - 2"], f32>',
            '!relax.tensor<["2 * n"], f32>',
            '!relax.tensor<["2 * n"], f32>',
        ),
        ("!relax.tensor<[3, 4], f32>", "!relax.tensor<[3, 5], f32>", '!relax.tensor<[3, "?"], f32>'),
        ('!relax.tensor<["n"], f32>', '!relax.tensor<["n", 4], f32>', '!relax.tensor<"*", f32>'),
        ('!relax.tensor<"*", f32>', '!relax.tensor<["n"], f32>', '!relax.tensor<"*", f32>'),
        ('!relax.tensor<["n"], f32>', '!relax.tensor<["n"], i32>', '!relax.tensor<["n"], none>'),
        ('!relax.shape<["n", 4]>', '!relax.shape<["m", 4]>', '!relax.shape<["?", 4]>'),
        ('!relax.shape<["n"]>', '!relax.shape<["n", 1]>', '!relax.shape<"*">'),
        ('!relax.prim<"n">', '!relax.prim<"n">', '!relax.prim<"n">'),
        ('!relax.prim<"n">', '!relax.prim<"n + 1">', '!relax.prim<"?">'),
        (
            '!relax.tuple<[!relax.tensor<["n"], f32>, !relax.prim<"k">]>',
            '!relax.tuple<[!relax.tensor<["m"], f32>, !relax.prim<"k">]>',
            '!relax.tuple<[!relax.tensor<["?"], f32>, !relax.prim<"k">]>',
        ),
        ('!relax.tuple<[!relax.prim<"k">]>', "!relax.tuple<[]>", "!relax.object"),
        ('!relax.tensor<["n"], f32>', '!relax.shape<["n"]>', "!relax.object"),
        ('!relax.tensor<["n"], f32>', "!relax.object", "!relax.object"),
    ],
)
def test_join(a: str, b: str, expected: str) -> None:
    assert str(join(t(a), t(b))) == expected
    assert str(join(t(b), t(a))) == expected  # commutative


def test_join_is_an_upper_bound_and_idempotent() -> None:
    a, b = t('!relax.tensor<["n", 4], f32>'), t('!relax.tensor<["n + 1", 4], f32>')
    j = join(a, b)
    assert join(j, a) == j and join(j, b) == j and join(j, j) == j


def test_join_all_reaches_the_loop_fixed_point() -> None:
    # a carried ["n"] that doubles each iteration: init, then 2n, 4n ... joins to ["?"] after one step
    steps = [
        t('!relax.tensor<["n"], f32>'),
        t('!relax.tensor<["2 * n"], f32>'),
        t('!relax.tensor<["4 * n"], f32>'),
    ]
    assert join_all(steps) == TensorType((None,), "f32")
    assert join_all(steps[:1]) == steps[0]


def test_forget_drops_symbols_out_of_scope() -> None:
    x = t('!relax.tuple<[!relax.tensor<["n", "j", "n * j"], f32>, !relax.prim<"j">, !relax.shape<["n"]>]>')
    assert forget(x, {"n"}) == TupleType(
        (
            TensorType((t('!relax.prim<"n">').value, None, None), "f32"),
            PrimType(None),
            ShapeType((t('!relax.prim<"n">').value,)),
        )
    )
    assert forget(ObjectType(), set()) == ObjectType()


# -- builder and compiled numerics --------------------------------------------------------------------------
import numpy as np  # noqa: E402

import relax_mlir.builder as rb  # noqa: E402
from relax_mlir import compile  # noqa: E402
from relax_mlir.dialects import relax as R  # noqa: E402
from relax_mlir.errors import BuilderError, ShapeError  # noqa: E402
from relax_mlir.transforms.well_formed import verify_module  # noqa: E402


def branch_module() -> rb.BlockBuilder:
    """``exp(x)`` when ``s > 0``, else ``concat(x, x)``: the output's size depends on the data."""
    bb = rb.BlockBuilder()
    with bb.function("main", {"x": rb.tensor(["n", 3], "f32"), "s": rb.tensor([], "f32")}) as (x, s):
        zero = R.constant(np.array(0.0, np.float32))
        with bb.if_(R.greater(s, zero)) as (then, else_):
            with then:
                bb.yield_(R.exp(x))
            with else_:
                bb.yield_(R.concat([x, x], axis=0))
        bb.ret(R.multiply(then.result, then.result))
    return bb


def grow_module() -> rb.BlockBuilder:
    """``k`` times: ``x = concat(x, x) + 1``; the carried tensor doubles each iteration."""
    bb = rb.BlockBuilder()
    with bb.function("main", {"x": rb.tensor(["n", 3], "f32"), "k": rb.tensor([], "i64")}) as (x, k):
        one, step = R.constant(np.array(1, np.int64)), R.constant(np.ones(3, np.float32))
        with bb.while_(x, R.constant(np.array(0, np.int64))) as loop:
            with loop.cond as (a, i):
                loop.condition(R.less(i, k))
            with loop.body as (a, i):
                bb.yield_(R.add(R.concat([a, a], axis=0), step), R.add(i, one))
        bb.ret(loop.results[0])
    return bb


def grow_reference(x: np.ndarray, k: int) -> np.ndarray:
    for _ in range(k):
        x = np.concatenate([x, x]) + 1
    return x


def test_builder_if_joins_the_branches() -> None:
    bb = branch_module()
    text = str(bb.module)
    assert 'scf.if %2 -> (!relax.tensor<["?", 3], f32>)' in text
    assert ': (!relax.tensor<["2 * n", 3], f32>) -> !relax.tensor<["?", 3], f32>' in text
    assert verify_module(bb.module.operation) == []


def test_builder_while_carried_type_is_the_join_over_iterations() -> None:
    bb = grow_module()
    text = str(bb.module)
    assert '(!relax.tensor<["?", 3], f32>, !relax.tensor<[], i64>) -> (!relax.tensor<["?", 3], f32>' in text
    assert (
        '"relax.match_cast"(%arg0) : (!relax.tensor<["n", 3], f32>) -> !relax.tensor<["?", 3], f32>' in text
    )
    assert verify_module(bb.module.operation) == []


def test_builder_while_keeps_a_shape_that_does_not_change() -> None:
    bb = rb.BlockBuilder()
    with bb.function("main", {"x": rb.tensor(["n"], "f32"), "k": rb.prim("k")}) as (x, k):
        with bb.while_(x) as loop:
            with loop.cond as (a,):
                loop.condition(k)
            with loop.body as (a,):
                bb.yield_(R.exp(a))
        assert str(rb.type_of(loop.result)) == '!relax.tensor<["n"], f32>'
        bb.ret(loop.result)


def test_builder_errors_name_the_users_line() -> None:
    bb = rb.BlockBuilder()
    with pytest.raises(BuilderError, match=r"test_control_flow.py:\d+: bb.if_\(\) inside a dataflow block"):
        with bb.function("f", {"x": rb.tensor([], "f32")}) as (x,):
            with bb.dataflow():
                bb.if_(x)
    bb = rb.BlockBuilder()
    with pytest.raises(ShapeError, match=r"test_control_flow.py:\d+: relax.condition: .*scalar tensor"):
        with bb.function("f", {"x": rb.tensor([2], "f32")}) as (x,):
            bb.if_(x)
    bb = rb.BlockBuilder()
    with pytest.raises(
        BuilderError, match=r"test_control_flow.py:\d+: bb.if_\(\): the then branch yields 1 values"
    ):
        with bb.function("f", {"x": rb.tensor([], "f32")}) as (x,):
            with bb.if_(x) as (then, else_):
                with then:
                    bb.yield_(x)
                with else_:
                    pass
    bb = rb.BlockBuilder()
    # the body is ill-typed on the joined carried type (a tensor, then a shape value: an object), the error
    # names the body's line
    with pytest.raises(ShapeError, match=r"test_control_flow.py:\d+: 'relax.exp' op .*must be !relax.tensor"):
        with bb.function("f", {"x": rb.tensor([2], "f32"), "k": rb.prim("k")}) as (x, k):
            with bb.while_(x) as loop:
                with loop.cond as (a,):
                    loop.condition(k)
                with loop.body as (a,):
                    bb.yield_(R.shape_of(R.exp(a)))


@pytest.mark.parametrize("opt_level", [0, 1, 2, 3])
def test_branch_taken_on_data(opt_level: int) -> None:
    exe = compile(branch_module().module, opt_level=opt_level)
    for n in (0, 1, 5):
        x = np.random.default_rng(n).standard_normal((n, 3)).astype(np.float32)
        for s in (1.0, -1.0):
            got = exe(x, np.array(s, np.float32))
            ref = np.exp(x) if s > 0 else np.concatenate([x, x])
            np.testing.assert_allclose(got, ref * ref, rtol=1e-5)


@pytest.mark.parametrize("opt_level", [0, 1, 2, 3])
def test_loop_whose_carried_tensor_grows(opt_level: int) -> None:
    exe = compile(grow_module().module, opt_level=opt_level)
    for n in (0, 1, 3):
        x = np.arange(n * 3, dtype=np.float32).reshape(n, 3)
        for k in (0, 1, 3):  # zero iterations return the input unchanged
            np.testing.assert_allclose(exe(x, np.array(k, np.int64)), grow_reference(x, k))


def nested_module() -> rb.BlockBuilder:
    """``k`` times: ``x = exp(-x)`` when ``sum(x) > 0``, else ``x * 0.5``: a branch inside a loop, fixed size."""
    bb = rb.BlockBuilder()
    with bb.function("main", {"x": rb.tensor(["n", 3], "f32"), "k": rb.tensor([], "i64")}) as (x, k):
        one, zero = R.constant(np.array(1, np.int64)), R.constant(np.array(0.0, np.float32))
        with bb.while_(x, R.constant(np.array(0, np.int64))) as loop:
            with loop.cond as (a, i):
                loop.condition(R.less(i, k))
            with loop.body as (a, i):
                with bb.if_(R.greater(R.sum(a), zero)) as (then, else_):
                    with then:
                        bb.yield_(R.exp(R.neg(a)))
                    with else_:
                        bb.yield_(R.multiply(a, R.constant(np.array(0.5, np.float32))))
                bb.yield_(then.result, R.add(i, one))
        bb.ret(loop.results[0])
    return bb


def nested_reference(x: np.ndarray, k: int) -> np.ndarray:
    for _ in range(k):
        x = np.exp(-x) if x.sum() > 0 else x * 0.5
    return x


def _inputs() -> list[tuple[np.ndarray, np.ndarray]]:
    out = []
    for n in (0, 1, 4):
        x = np.random.default_rng(n).standard_normal((n, 3)).astype(np.float32) - 0.3
        out += [(x, np.array(k, np.int64)) for k in (0, 1, 3)]
    return out


@pytest.mark.parametrize("opt_level", [0, 2])
def test_branch_inside_a_loop(opt_level: int) -> None:
    exe = compile(nested_module().module, opt_level=opt_level)
    for x, k in _inputs():
        np.testing.assert_allclose(exe(x, k), nested_reference(x, int(k)), rtol=1e-5)


def test_cuda_mapping_runs_branches_and_loops() -> None:
    from gpu_emulation import compile_emulated

    for module, ref in ((grow_module, grow_reference), (nested_module, nested_reference)):
        exe = compile_emulated(module().module)
        for x, k in _inputs():
            np.testing.assert_allclose(exe(x, k), ref(x, int(k)), rtol=1e-5)
    exe = compile_emulated(branch_module().module)
    x = np.ones((2, 3), np.float32)
    np.testing.assert_allclose(exe(x, np.array(-1.0, np.float32)), np.ones((4, 3)))


def test_wasm32_runs_a_loop_and_refuses_a_data_dependent_output() -> None:
    from relax_mlir.errors import CompileError, RelaxError

    try:
        exe = compile(nested_module().module, target="wasm32")
    except RelaxError as e:  # no wasm toolchain here
        if "scf" in str(e):
            raise
        pytest.skip(str(e))
    for x, k in _inputs():
        np.testing.assert_allclose(exe(x, k), nested_reference(x, int(k)), rtol=1e-5)
    with pytest.raises(CompileError, match=r"output #0 .* joined by an scf.if/scf.while"):
        compile(grow_module().module, target="wasm32")


def test_aot_library_runs_a_loop(tmp_path) -> None:
    from test_aot import Built, _toolchain

    from relax_mlir.errors import CompileError
    from relax_mlir.targets import compile_library

    runner, cc = _toolchain("x86_64")
    lib = compile_library(nested_module().module, tmp_path / "libloop.so", target="x86_64")
    built = Built(lib, runner, cc, "main", tmp_path)
    for x, k in _inputs():
        code, outs = built.run([x, k])
        assert code == 0, outs
        np.testing.assert_allclose(outs[0], nested_reference(x, int(k)), rtol=1e-5)
    with pytest.raises(CompileError, match=r"joined by an scf.if/scf.while"):
        compile_library(grow_module().module, tmp_path / "libgrow.so", target="x86_64")


def test_webgpu_runs_a_branch_and_refuses_a_loop_naming_it() -> None:
    from relax_mlir.errors import CompileError, DeviceUnavailableError
    from relax_mlir.targets import webgpu_runtime

    try:
        webgpu_runtime.device()
    except DeviceUnavailableError as e:
        pytest.skip(str(e))
    exe = compile(branch_module().module, target="webgpu", opt_level=1)
    for n in (0, 1, 5):
        x = np.random.default_rng(n).standard_normal((n, 3)).astype(np.float32)
        for s in (1.0, -1.0):
            ref = np.exp(x) if s > 0 else np.concatenate([x, x])
            np.testing.assert_allclose(exe(x, np.array(s, np.float32)), ref * ref, rtol=1e-5)
    with pytest.raises(CompileError, match=r"in a loop \('scf.while'\)"):
        compile(grow_module().module, target="webgpu")


def planned_module() -> rb.BlockBuilder:
    """Intermediates before, inside and after a loop: the loop uses ``w`` and carries ``b``."""
    bb = rb.BlockBuilder()
    with bb.function("main", {"x": rb.tensor(["n", 3], "f32"), "k": rb.tensor([], "i64")}) as (x, k):
        b = R.neg(R.exp(x))  # carried in: the loop's result may be its buffer
        w = R.sqrt(R.abs(x))  # read by every iteration: live through the loop
        one = R.constant(np.array(1, np.int64))
        with bb.while_(b, R.constant(np.array(0, np.int64))) as loop:
            with loop.cond as (c, i):
                loop.condition(R.less(i, k))
            with loop.body as (c, i):
                bb.yield_(R.add(R.multiply(c, w), w), R.add(i, one))
        u = R.tanh(R.exp(R.neg(x)))  # after the loop: reuses dead storages only
        bb.ret(R.add(loop.results[0], u))
    return bb


def planned_reference(x: np.ndarray, k: int) -> np.ndarray:
    c, w = -np.exp(x), np.sqrt(np.abs(x))
    for _ in range(k):
        c = c * w + w
    return c + np.tanh(np.exp(-x))


def test_memory_plan_around_a_loop_never_reuses_a_storage_live_across_it() -> None:
    from mlir import ir, passmanager

    from relax_mlir.context import make_context, parse_module
    from relax_mlir.pipelines import add_pipeline, load_passes, parse_pipeline
    from relax_mlir.transforms.memory_plan import _kernels, check_plan, plan_module

    text = str(planned_module().module)
    with make_context(), ir.Location.unknown():
        load_passes()
        op = parse_module(text, "<test>")
        pm = passmanager.PassManager("builtin.module")
        add_pipeline(pm, parse_pipeline("relax-verify,relax-infer-shapes,convert-relax-to-linalg"))
        pm.run(op)
        (plan,) = plan_module(op)
        assert not plan.skipped and len(plan.planned) == 7
        loop = next(
            o for o in op.regions[0].blocks[0].operations[0].regions[0].blocks[0] if o.name == "scf.while"
        )
        assert all(b.value.owner.parent == loop.parent for b in plan.buffers)  # nothing inside the loop
        # in program order: exp, neg (carried in), abs, sqrt (read inside), then neg, exp, tanh after the loop;
        # the loop's result may be the carried buffer, and w is read by every iteration: neither is reused
        after = {plan.buffers[i].storage for i in (4, 5, 6)}
        assert plan.buffers[1].storage not in after and plan.buffers[3].storage not in after
        assert plan.buffers[0].storage in after  # a storage dead before the loop is reused after it
        passes = parse_pipeline("relax-plan-memory")
        pm = passmanager.PassManager("builtin.module")
        add_pipeline(pm, passes)
        pm.run(op)
        f = op.regions[0].blocks[0].operations[0]
        assert check_plan(f, _kernels(op)) is None
    exe = compile(planned_module().module, opt_level=2)
    for n in (0, 1, 5):
        x = np.random.default_rng(n).standard_normal((n, 3)).astype(np.float32)
        for k in (0, 1, 3):
            np.testing.assert_allclose(exe(x, np.array(k, np.int64)), planned_reference(x, k), rtol=1e-5)


def test_failed_check_inside_a_loop_stops_it_and_raises() -> None:
    from relax_mlir.errors import InputError

    bb = rb.BlockBuilder()
    with bb.function("main", {"x": rb.tensor(["n", 3], "f32"), "k": rb.tensor([], "i64")}) as (x, k):
        one = R.constant(np.array(1, np.int64))
        with bb.while_(x, R.constant(np.array(0, np.int64))) as loop:
            with loop.cond as (a, i):
                loop.condition(R.less(i, k))
            with loop.body as (a, i):
                same = R.match_cast(a, rb.tensor(["n", 3], "f32"))  # fails once the carried tensor has grown
                bb.yield_(R.concat([same, x], axis=0), R.add(i, one))
        bb.ret(loop.results[0])
    exe = compile(bb.module, opt_level=1)
    x = np.ones((2, 3), np.float32)
    assert exe(x, np.array(1, np.int64)).shape == (4, 3)
    with pytest.raises(
        InputError, match=r"test_control_flow.py:\d+:\d+: relax.match_cast: dim 0 .* must be n, got 4"
    ):
        exe(x, np.array(2, np.int64))


@pytest.mark.parametrize("opt_level", [0, 2])
def test_dataflow_block_inside_a_loop_body(opt_level: int) -> None:
    bb = rb.BlockBuilder()
    with bb.function("main", {"x": rb.tensor(["n", 3], "f32"), "k": rb.tensor([], "i64")}) as (x, k):
        one = R.constant(np.array(1, np.int64))
        with bb.while_(x, R.constant(np.array(0, np.int64))) as loop:
            with loop.cond as (a, i):
                loop.condition(R.less(i, k))
            with loop.body as (a, i):
                with bb.dataflow():  # fused at O2, inside the loop
                    y = bb.emit_output(R.tanh(R.add(R.exp(a), a)))
                bb.yield_(y, R.add(i, one))
        bb.ret(loop.results[0])
    exe = compile(bb.module, opt_level=opt_level)
    for x, k in _inputs():
        ref = x
        for _ in range(int(k)):
            ref = np.tanh(np.exp(ref) + ref)
        np.testing.assert_allclose(exe(x, k), ref, rtol=1e-5)
