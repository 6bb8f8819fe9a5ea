"""Transformer and recurrent ONNX ops: Attention, RotaryEmbedding, RNN/GRU/LSTM against onnxruntime;
SwiGLU, LinearAttention and CausalConvWithState (opsets onnxruntime does not run) against numpy
written from the spec; and a GPT-style causal self-attention built from primitive ops, whose imported
module must keep every dim symbolic."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx_util import check_against_ort, graph_model, node_model, run_ort, run_ours, value_info

import relax_mlir
from relax_mlir.frontend.onnx import OnnxImportError, from_onnx
from relax_mlir.transforms.fuse_attention import fuse_attention

RNG = np.random.default_rng(0)
F32 = np.float32


def rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(F32)


# -- Attention ---------------------------------------------------------------------------------------


def test_attention_4d_gqa_causal_mask_past_present_qk() -> None:
    m = node_model(
        "Attention",
        [
            value_info("q", F32, ["b", 4, "s", 8]),
            value_info("k", F32, ["b", 2, "s", 8]),
            value_info("v", F32, ["b", 2, "s", 6]),
            value_info("mask", F32, ["s", "t"]),
            value_info("pk", F32, ["b", 2, "p", 8]),
            value_info("pv", F32, ["b", 2, "p", 6]),
        ],
        [
            value_info("y", F32, None),
            value_info("present_k", F32, None),
            value_info("present_v", F32, None),
            value_info("qk", F32, None),
        ],
        opset=23,
        is_causal=1,
        qk_matmul_output_mode=1,
        softcap=3.0,
    )
    for b, s, p in ((1, 1, 1), (2, 3, 5)):
        check_against_ort(
            m,
            rand(b, 4, s, 8),
            rand(b, 2, s, 8),
            rand(b, 2, s, 6),
            rand(s, p + s),
            rand(b, 2, p, 8),
            rand(b, 2, p, 6),
        )


def test_attention_3d_softcap_scale_bool_mask() -> None:
    m = node_model(
        "Attention",
        [
            value_info("q", F32, ["b", "s", 12]),
            value_info("k", F32, ["b", "t", 12]),
            value_info("v", F32, ["b", "t", 9]),
            value_info("mask", np.bool_, ["b", 1, "s", "t"]),
        ],
        [value_info("y", F32, None)],
        opset=23,
        q_num_heads=3,
        kv_num_heads=3,
        softcap=2.0,
        scale=0.3,
    )
    for b, s, t in ((1, 1, 1), (3, 5, 7)):
        mask = RNG.random((b, 1, s, t)) > 0.3
        mask[..., 0] = True  # no fully masked rows (onnxruntime's convention for them differs by version)
        check_against_ort(m, rand(b, s, 12), rand(b, t, 12), rand(b, t, 9), mask)


def test_attention_keeps_dims_symbolic() -> None:
    m = node_model(
        "Attention",
        [value_info(n, F32, ["b", 2, "s", 4]) for n in ("q", "k", "v")],
        [value_info("y", F32, None)],
        opset=23,
        is_causal=1,
    )
    text = str(from_onnx(m))
    assert "?" not in text
    assert '"b", 2, "s", 4' in text


def _attention_model(heads: tuple[int, int], past: bool, mask: bool, causal: int) -> object:
    """A 4-D opset-23 Attention node: q [b, H, s, 16], k/v [b, Hkv, s, 16], optional bool mask [s, s]
    and past keys/values [b, Hkv, p, 16] (then the present ones are outputs too)."""
    q_heads, kv_heads = heads
    inputs = [value_info("q", F32, ["b", q_heads, "s", 16])]
    inputs += [value_info(n, F32, ["b", kv_heads, "s", 16]) for n in ("k", "v")]
    names = ["q", "k", "v"]
    if mask:
        inputs.append(value_info("mask", np.bool_, ["s", "s"]))
    if mask or past:
        names.append("mask" if mask else "")
    if past:
        inputs += [value_info(n, F32, ["b", kv_heads, "p", 16]) for n in ("pk", "pv")]
        names += ["pk", "pv"]
    outputs = [value_info(n, F32, None) for n in (("y", "present_k", "present_v") if past else ("y",))]
    m = node_model("Attention", inputs, outputs, opset=23, is_causal=causal)
    m.graph.node[0].input[:] = names
    return m


def _attention_reference(q, k, v, visible) -> np.ndarray:  # noqa: ANN001
    """Softmax attention in float64 over ``visible`` [s, t] keys; rows that see no key are 0 (the spec)."""
    reps = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, reps, 1).astype(np.float64), np.repeat(v, reps, 1).astype(np.float64)
    scores = np.where(visible, q.astype(np.float64) @ k.transpose(0, 1, 3, 2) / np.sqrt(q.shape[3]), -np.inf)
    row_max = scores.max(-1, keepdims=True)
    weights = np.exp(scores - np.where(np.isfinite(row_max), row_max, 0))
    sums = weights.sum(-1, keepdims=True)
    return np.where(sums > 0, weights / np.where(sums > 0, sums, 1), 0) @ v


@pytest.mark.parametrize("heads", [(4, 4), (4, 2)])
def test_causal_attention_with_a_kv_cache_is_fused_and_matches(heads: tuple[int, int]) -> None:
    """At O3 the causal chain with cached keys becomes one causal relax.attention (the empty-row guard
    dropped: every query sees a key); the result matches a float64 reference and onnxruntime."""
    m = _attention_model(heads, past=True, mask=False, causal=1)
    module = from_onnx(m)
    assert fuse_attention(module.operation) == 1
    text = str(module)
    assert "causal = true" in text and "relax.softmax" not in text and "relax.where" not in text
    main = relax_mlir.compile(from_onnx(m), opt_level=3)
    for b, s, p in ((1, 1, 0), (1, 1, 9), (2, 3, 5), (1, 40, 90), (1, 33, 0)):
        q, k, v = rand(b, heads[0], s, 16), rand(b, heads[1], s, 16), rand(b, heads[1], s, 16)
        pk, pv = rand(b, heads[1], p, 16), rand(b, heads[1], p, 16)
        visible = np.arange(p + s)[None, :] <= np.arange(p, p + s)[:, None]
        expected = _attention_reference(q, np.concatenate([pk, k], 2), np.concatenate([pv, v], 2), visible)
        ours = main(q, k, v, pk, pv)[0]
        np.testing.assert_allclose(ours, expected, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(ours, run_ort(m, q, k, v, pk, pv)[0], rtol=1e-4, atol=1e-5)


def test_masked_attention_is_fused_and_keeps_rows_that_see_no_key_at_zero() -> None:
    """A bool mask becomes relax.attention's mask operand; the spec's zero for a row whose keys are all
    masked is kept by a guard on the fused output."""
    m = _attention_model((2, 2), past=False, mask=True, causal=0)
    module = from_onnx(m)
    assert fuse_attention(module.operation) == 1
    assert "relax.softmax" not in str(module)
    main = relax_mlir.compile(from_onnx(m), opt_level=3)
    for b, s in ((1, 1), (2, 7), (1, 130)):
        q, k, v = rand(b, 2, s, 16), rand(b, 2, s, 16), rand(b, 2, s, 16)
        visible = RNG.random((s, s)) > 0.4
        visible[0] = False  # the first query sees no key
        np.testing.assert_allclose(
            main(q, k, v, visible), _attention_reference(q, k, v, visible), rtol=1e-4, atol=1e-5
        )
        assert not main(q, k, v, visible)[:, :, 0].any()


@pytest.mark.parametrize(
    "attrs, message",
    [
        ({"qk_matmul_output_mode": 5}, "qk_matmul_output_mode 5"),
        ({"softmax_precision": 6}, "softmax_precision 6"),
    ],
)
def test_attention_unsupported_attributes(attrs: dict, message: str) -> None:
    m = node_model(
        "Attention",
        [value_info(n, F32, [1, 2, 3, 4]) for n in ("q", "k", "v")],
        [value_info("y", F32, None)],
        opset=23,
        **attrs,
    )
    with pytest.raises(OnnxImportError, match=message):
        from_onnx(m)


def test_attention_3d_needs_head_counts() -> None:
    m = node_model(
        "Attention",
        [value_info(n, F32, [1, 3, 8]) for n in ("q", "k", "v")],
        [value_info("y", F32, None)],
        opset=23,
    )
    with pytest.raises(OnnxImportError, match="q_num_heads and kv_num_heads"):
        from_onnx(m)


# -- RotaryEmbedding ---------------------------------------------------------------------------------


def test_rotary_embedding_3d_interleaved_partial() -> None:
    m = node_model(
        "RotaryEmbedding",
        [
            value_info("x", F32, ["b", "s", 16]),
            value_info("cos", F32, ["m", 2]),
            value_info("sin", F32, ["m", 2]),
            value_info("pos", np.int64, ["b", "s"]),
        ],
        [value_info("y", F32, None)],
        opset=23,
        num_heads=2,
        interleaved=1,
        rotary_embedding_dim=4,
    )
    for b, s in ((1, 1), (2, 5)):
        check_against_ort(m, rand(b, s, 16), rand(9, 2), rand(9, 2), RNG.integers(0, 9, (b, s)))


def test_rotary_embedding_4d_no_position_ids() -> None:
    m = node_model(
        "RotaryEmbedding",
        [
            value_info("x", F32, ["b", 3, "s", 6]),
            value_info("cos", F32, ["b", "s", 3]),
            value_info("sin", F32, ["b", "s", 3]),
        ],
        [value_info("y", F32, None)],
        opset=23,
    )
    for b, s in ((1, 1), (2, 7)):
        check_against_ort(m, rand(b, 3, s, 6), rand(b, s, 3), rand(b, s, 3))


def test_rotary_embedding_3d_needs_num_heads() -> None:
    m = node_model(
        "RotaryEmbedding",
        [
            value_info("x", F32, [1, 2, 8]),
            value_info("cos", F32, [1, 2, 4]),
            value_info("sin", F32, [1, 2, 4]),
        ],
        [value_info("y", F32, None)],
        opset=23,
    )
    with pytest.raises(OnnxImportError, match="num_heads"):
        from_onnx(m)


# -- RNN, GRU, LSTM ----------------------------------------------------------------------------------


def _recurrent_model(op: str, gates: int, hidden: int, extra: list, outputs: int, **attrs: object) -> object:
    dirs = 2 if attrs.get("direction") == "bidirectional" else 1
    inputs = [
        value_info("x", F32, [2, "b", 4]),
        value_info("w", F32, [dirs, gates * hidden, 4]),
        value_info("r", F32, [dirs, gates * hidden, hidden]),
        value_info("bias", F32, [dirs, 2 * gates * hidden]),
        *extra,
    ]
    names = ["y", "y_h", "y_c"][:outputs]
    return node_model(
        op, inputs, [value_info(n, F32, None) for n in names], opset=14, hidden_size=hidden, **attrs
    )


def test_rnn_bidirectional_sequence_lens() -> None:
    m = _recurrent_model(
        "RNN",
        1,
        5,
        [value_info("lens", np.int32, ["b"]), value_info("h0", F32, [2, "b", 5])],
        2,
        direction="bidirectional",
        activations=["Tanh", "Relu"],
    )
    for b in (1, 3):
        lens = np.array([2, 1, 2][:b], np.int32)
        check_against_ort(m, rand(2, b, 4), rand(2, 5, 4), rand(2, 5, 5), rand(2, 10), lens, rand(2, b, 5))


def test_gru_reverse_linear_before_reset() -> None:
    m = _recurrent_model("GRU", 3, 6, [], 2, direction="reverse", linear_before_reset=1)
    for b in (1, 4):
        check_against_ort(m, rand(2, b, 4), rand(1, 18, 4), rand(1, 18, 6), rand(1, 36))


def test_lstm_peepholes_clip() -> None:
    m = _recurrent_model(
        "LSTM",
        4,
        3,
        [
            value_info("lens", np.int32, ["b"]),
            value_info("h0", F32, [1, "b", 3]),
            value_info("c0", F32, [1, "b", 3]),
            value_info("p", F32, [1, 9]),
        ],
        3,
        clip=1.5,
    )
    for b in (1, 3):
        lens = np.array([2, 1, 2][:b], np.int32)
        check_against_ort(
            m,
            rand(2, b, 4),
            rand(1, 12, 4),
            rand(1, 12, 3),
            rand(1, 24),
            lens,
            rand(1, b, 3),
            rand(1, b, 3),
            rand(1, 9),
        )


def test_lstm_batch_first_layout() -> None:
    """layout 1 (onnxruntime lacks it) equals layout 0 on transposed inputs and outputs."""

    def model(layout: int) -> object:
        x_shape = ["b", 2, 3] if layout else [2, "b", 3]
        return node_model(
            "LSTM",
            [value_info("x", F32, x_shape), value_info("w", F32, [1, 8, 3]), value_info("r", F32, [1, 8, 2])],
            [value_info("y", F32, None), value_info("y_h", F32, None), value_info("y_c", F32, None)],
            opset=14,
            hidden_size=2,
            layout=layout,
        )

    batch_first, time_first = model(1), model(0)
    for b in (1, 5):
        x, w, r = rand(b, 2, 3), rand(1, 8, 3), rand(1, 8, 2)
        y, y_h, y_c = run_ours(batch_first, x, w, r)
        want_y, want_h, want_c = run_ort(time_first, x.transpose(1, 0, 2), w, r)
        np.testing.assert_allclose(y, want_y.transpose(2, 0, 1, 3), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(y_h, want_h.transpose(1, 0, 2), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(y_c, want_c.transpose(1, 0, 2), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    "op, attrs, message",
    [
        ("RNN", {"direction": "sideways"}, "direction 'sideways'"),
        ("RNN", {"activations": ["Gelu"]}, "activation 'gelu'"),
        ("LSTM", {"input_forget": 1}, "input_forget 1"),
    ],
)
def test_recurrent_unsupported_attributes(op: str, attrs: dict, message: str) -> None:
    gates = {"RNN": 1, "LSTM": 4}[op]
    m = node_model(
        op,
        [
            value_info("x", F32, [2, 1, 3]),
            value_info("w", F32, [1, gates * 2, 3]),
            value_info("r", F32, [1, gates * 2, 2]),
        ],
        [value_info("y", F32, None)],
        opset=14,
        hidden_size=2,
        **attrs,
    )
    with pytest.raises(OnnxImportError, match=message):
        from_onnx(m)


def test_recurrent_needs_static_sequence_length() -> None:
    m = node_model(
        "GRU",
        [value_info("x", F32, ["t", 1, 3]), value_info("w", F32, [1, 6, 3]), value_info("r", F32, [1, 6, 2])],
        [value_info("y", F32, None)],
        opset=14,
        hidden_size=2,
    )
    with pytest.raises(OnnxImportError, match="sequence length"):
        from_onnx(m)


# -- ops onnxruntime does not run yet: numpy from the spec ------------------------------------------


def test_swiglu() -> None:
    m = node_model(
        "SwiGLU",
        [value_info("a", F32, ["n", 3]), value_info("b", F32, ["n", 3])],
        [value_info("y", F32, None)],
        opset=28,
        alpha=0.5,
    )
    for n in (1, 5):
        a, b = rand(n, 3), rand(n, 3)
        (got,) = run_ours(m, a, b)
        np.testing.assert_allclose(got, a / (1 + np.exp(-0.5 * a)) * b, rtol=1e-5, atol=1e-6)


def test_causal_conv_with_state() -> None:
    m = node_model(
        "CausalConvWithState",
        [
            value_info("x", F32, ["b", 3, "l"]),
            value_info("w", F32, [3, 1, 3]),
            value_info("bias", F32, [3]),
            value_info("state", F32, ["b", 3, 2]),
        ],
        [value_info("y", F32, None), value_info("present", F32, None)],
        opset=27,
        activation="silu",
    )
    for b, length in ((1, 1), (2, 6)):
        x, w, bias, state = rand(b, 3, length), rand(3, 1, 3), rand(3), rand(b, 3, 2)
        padded = np.concatenate([state, x], 2)
        conv = (
            sum(w[None, :, 0, j, None] * padded[:, :, j : j + length] for j in range(3)) + bias[None, :, None]
        )
        y, present = run_ours(m, x, w, bias, state)
        np.testing.assert_allclose(y, conv / (1 + np.exp(-conv)), rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(present, padded[:, :, -2:])


def test_linear_attention_gated_delta_gqa() -> None:
    hq, hkv, dk, dv, t = 4, 2, 3, 5, 3
    m = node_model(
        "LinearAttention",
        [
            value_info("q", F32, ["b", t, hq * dk]),
            value_info("k", F32, ["b", t, hkv * dk]),
            value_info("v", F32, ["b", t, hkv * dv]),
            value_info("state", F32, ["b", hkv, dk, dv]),
            value_info("decay", F32, ["b", t, hkv]),
            value_info("beta", F32, ["b", t, hkv]),
        ],
        [value_info("y", F32, None), value_info("present", F32, None)],
        opset=27,
        q_num_heads=hq,
        kv_num_heads=hkv,
    )
    for b in (1, 3):
        q, k, v = rand(b, t, hq * dk), rand(b, t, hkv * dk), rand(b, t, hkv * dv)
        s0, decay, beta = rand(b, hkv, dk, dv), -np.abs(rand(b, t, hkv)), RNG.random((b, t, hkv)).astype(F32)
        s = s0.astype(np.float64)
        ys = []
        for i in range(t):
            qi, ki, vi = q[:, i].reshape(b, hq, dk), k[:, i].reshape(b, hkv, dk), v[:, i].reshape(b, hkv, dv)
            s = s * np.exp(decay[:, i])[:, :, None, None]
            vi = beta[:, i][:, :, None] * (vi - np.einsum("bhdm,bhd->bhm", s, ki))
            s = s + ki[..., None] * vi[..., None, :]
            o = np.einsum("bhd,bhdm->bhm", qi, np.repeat(s, hq // hkv, axis=1)) / np.sqrt(dk)
            ys.append(o.reshape(b, 1, hq * dv))
        y, present = run_ours(m, q, k, v, s0, decay, beta)
        np.testing.assert_allclose(y, np.concatenate(ys, 1), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(present, s, rtol=1e-4, atol=1e-5)


# -- a GPT-style causal self-attention from primitive ops --------------------------------------------


def _gpt_attention_model(heads: int = 2, head: int = 4) -> object:
    """x (batch, seq, E) -> causal multi-head self-attention, with every shape computed in-graph."""
    e = heads * head
    w = RNG.standard_normal((3, e, e)).astype(F32) * 0.3
    inits = [
        helper.make_tensor(n, TensorProto.FLOAT, (e, e), w[i].ravel())
        for i, n in enumerate(("wq", "wk", "wv"))
    ] + [
        helper.make_tensor("i0", TensorProto.INT64, (1,), [0]),
        helper.make_tensor("i1", TensorProto.INT64, (1,), [1]),
        helper.make_tensor("heads", TensorProto.INT64, (1,), [heads]),
        helper.make_tensor("head", TensorProto.INT64, (1,), [head]),
        helper.make_tensor("emb", TensorProto.INT64, (1,), [e]),
        helper.make_tensor("zero", TensorProto.INT64, (), [0]),
        helper.make_tensor("one", TensorProto.INT64, (), [1]),
        helper.make_tensor("scale", TensorProto.FLOAT, (), [1.0 / np.sqrt(head)]),
        helper.make_tensor("ninf", TensorProto.FLOAT, (), [-np.inf]),
    ]
    n = helper.make_node
    nodes = [
        n("Shape", ["x"], ["xs"]),
        n("Gather", ["xs", "i0"], ["bdim"], axis=0),
        n("Gather", ["xs", "i1"], ["sdim"], axis=0),
        n("Concat", ["bdim", "sdim", "heads", "head"], ["split_shape"], axis=0),
        n("Concat", ["bdim", "sdim", "emb"], ["merge_shape"], axis=0),
    ]
    for p in ("q", "k", "v"):
        nodes += [
            n("MatMul", ["x", f"w{p}"], [f"{p}2"]),
            n("Reshape", [f"{p}2", "split_shape"], [f"{p}4"]),
            n("Transpose", [f"{p}4"], [p], perm=[0, 2, 1, 3]),
        ]
    nodes += [
        n("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
        n("MatMul", ["q", "kt"], ["qk"]),
        n("Mul", ["qk", "scale"], ["scores"]),
        # causal mask: key position j visible from query i iff j <= i
        n("Shape", ["x"], ["seq_only"], start=1, end=2),
        n("Squeeze", ["seq_only"], ["seq"]),
        n("Range", ["zero", "seq", "one"], ["pos"]),
        n("Unsqueeze", ["pos", "i1"], ["rows"]),
        n("Unsqueeze", ["pos", "i0"], ["cols"]),
        n("Less", ["rows", "cols"], ["future"]),
        n("Where", ["future", "ninf", "scores"], ["masked"]),
        n("Softmax", ["masked"], ["probs"], axis=-1),
        n("MatMul", ["probs", "v"], ["ctx"]),
        n("Transpose", ["ctx"], ["ctx_t"], perm=[0, 2, 1, 3]),
        n("Reshape", ["ctx_t", "merge_shape"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "gpt_attention",
        [value_info("x", F32, ["batch", "seq", e])],
        [value_info("y", F32, None)],
        inits,
    )
    return graph_model(graph, 17)


def test_gpt_attention_from_primitives_symbolic_and_matches_ort() -> None:
    m = _gpt_attention_model()
    text = str(from_onnx(m))
    assert "?" not in text, text
    for b, s in ((1, 1), (2, 7), (3, 16)):
        check_against_ort(m, rand(b, s, 8))
