"""The builder API: functions with symbolic parameters, dataflow blocks, eager deduction at the user's line."""

from __future__ import annotations

import numpy as np
import pytest
from mlir import ir

import relax_mlir.builder as rb
from relax_mlir.dialects import relax as R
from relax_mlir.errors import RelaxError, ShapeError
from relax_mlir.transforms.well_formed import verify_module


def build_mlp() -> rb.BlockBuilder:
    bb = rb.BlockBuilder()
    params = {"x": rb.tensor(["batch", 784]), "w1": rb.tensor([784, 512]), "w2": rb.tensor([512, 10])}
    with bb.function("mlp", params, upper_bounds={"batch": 64}) as (x, w1, w2):
        with bb.dataflow():
            h = R.relu(R.matmul(x, w1))
            logits = R.matmul(h, w2)
            out = bb.emit_output(R.softmax(logits))
        bb.ret(out)
    return bb


def test_mlp_module_is_well_formed() -> None:
    bb = build_mlp()
    assert bb.module.operation.verify()
    assert verify_module(bb.module.operation) == []
    text = str(bb.module)
    assert "relax.upper_bounds = {batch = 64 : i64}" in text
    assert "scf.execute_region" in text and "relax.dataflow" in text
    assert '-> !relax.tensor<["batch", 10], f32>' in text


def test_transformer_block_shapes() -> None:
    bb = rb.BlockBuilder()
    d, heads = 512, 8
    params = {
        "x": rb.tensor(["b", "s", d]),
        "wq": rb.tensor([d, d]),
        "wk": rb.tensor([d, d]),
        "wv": rb.tensor([d, d]),
        "g": rb.tensor([d]),
        "beta": rb.tensor([d]),
    }
    with bb.function("block", params) as (x, wq, wk, wv, g, beta):
        with bb.dataflow():
            h = R.layer_norm(x, g, beta)

            def heads_of(w: ir.Value) -> ir.Value:
                return R.permute_dims(R.reshape(R.matmul(h, w), [0, 0, heads, -1]), [0, 2, 1, 3])

            q, k, v = heads_of(wq), heads_of(wk), heads_of(wv)
            scores = R.matmul(q, R.permute_dims(k, [0, 1, 3, 2]))
            mask = R.tril(R.full(["s", "s"], 1.0))
            probs = R.softmax(R.add(scores, mask))
            ctx = R.reshape(R.permute_dims(R.matmul(probs, v), [0, 2, 1, 3]), [0, 0, -1])
            out = bb.emit_output(R.add(x, ctx))
        bb.ret(out)
    assert str(rb.type_of(scores)) == '!relax.tensor<["b", 8, "s", "s"], f32>'
    assert str(rb.type_of(ctx)) == '!relax.tensor<["b", "s", 512], f32>'
    assert verify_module(bb.module.operation) == []


def test_ill_typed_call_raises_at_user_line() -> None:
    bb = rb.BlockBuilder()
    with pytest.raises(ShapeError) as info:
        with bb.function("bad", {"x": rb.tensor(["n", 4]), "w": rb.tensor([5, 3])}) as (x, w):
            R.matmul(x, w)  # the line the error names
    message = str(info.value)
    assert "relax.matmul: contraction dims differ" in message
    assert "test_builder.py:" in message


def test_multiple_outputs_and_ops_after_output() -> None:
    bb = rb.BlockBuilder()
    with bb.function("two", {"x": rb.tensor(["n", 4])}) as (x,):
        with bb.dataflow():
            a = bb.emit_output(R.exp(x))
            b = R.sum(x, [1])
            b_out = bb.emit_output(b)
        total = R.add(a, R.expand_dims(b_out, [1]))
        bb.ret(total, b_out)
    assert verify_module(bb.module.operation) == []
    assert bb.module.operation.verify()
    text = str(bb.module)
    assert text.count("scf.execute_region") == 1


def test_builder_misuse_is_an_error() -> None:
    bb = rb.BlockBuilder()
    with pytest.raises(RelaxError, match="ends without bb.ret"):
        with bb.function("f", {"x": rb.tensor(["n"])}):
            pass
    with pytest.raises(RelaxError, match="outside of bb.function"):
        with bb.dataflow():
            pass
    with pytest.raises(RelaxError, match="at least one bb.emit_output"):
        with bb.function("g", {"x": rb.tensor(["n"])}) as (x,):
            with bb.dataflow():
                R.exp(x)


def test_constants_and_match_cast() -> None:
    bb = rb.BlockBuilder()
    with bb.function("f", {"x": rb.tensor(None)}) as (x,):
        y = R.match_cast(x, rb.tensor(["n", 3]))
        c = R.constant(np.ones((3,), dtype=np.float32))
        bb.ret(R.add(y, c))
    assert str(rb.type_of(y)) == '!relax.tensor<["n", 3], f32>'
    assert verify_module(bb.module.operation) == []


def test_kernel_with_linalg_and_call_tir() -> None:
    from mlir.dialects import linalg

    bb = rb.BlockBuilder()
    x_type = rb.tensor(["n", 4])
    with bb.kernel("square", [x_type], [x_type]) as (a, out):
        bb.ret(linalg.mul(a, a, outs=[out]))
    with bb.function("main", {"x": x_type}) as (x,):
        (y,) = R.call_tir("square", [x], [x_type])
        bb.ret(y)
    text = str(bb.module)
    assert (
        "func.func private @square(%arg0: tensor<?x4xf32>, %arg1: tensor<?x4xf32>) -> tensor<?x4xf32>" in text
    )
    assert "linalg.mul" in text and '"relax.call_tir"(%arg0) {callee = @square}' in text
    assert verify_module(bb.module.operation) == []


@pytest.mark.parametrize(
    "ins, outs, message",
    [
        (["tensor<?x4xf32>"], [], "callee takes 1 arguments, but the call passes 1 inputs and 1 outputs"),
        (
            ["tensor<?x4xf32>"],
            ["tensor<?x5xf32>"],
            "output #0: dim 1 is 4, callee parameter tensor<?x5xf32> has 5",
        ),
        (
            ["tensor<?x4xi32>"],
            ["tensor<?x4xf32>"],
            "argument #0: callee parameter tensor<?x4xi32> has element type i32",
        ),
        (["tensor<?xf32>"], ["tensor<?x4xf32>"], "argument #0: callee parameter tensor<?xf32> has rank 1"),
    ],
)
def test_call_tir_signature_mismatch(ins, outs, message) -> None:
    bb = rb.BlockBuilder()
    x_type = rb.tensor(["n", 4])
    with bb.kernel("k", ins, outs) as args:
        bb.ret(*args[len(ins) :])
    with bb.function("main", {"x": x_type}) as (x,):
        (y,) = R.call_tir("k", [x], [x_type])
        bb.ret(y)
    problems = verify_module(bb.module.operation)
    assert len(problems) == 1 and message in problems[0].message, problems
