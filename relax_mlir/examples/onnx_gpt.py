"""A GPT-style decoder written as ONNX the way PyTorch's exporter writes it, with dynamic dims.

    model = gpt_model(layers=2, d=64, heads=4, vocab=100)   # inputs: ids [batch, seq] int64

Head splitting reshapes take their target shape from ``Shape -> Gather -> Unsqueeze -> Concat``; the
causal mask comes from ``Shape -> Range -> Unsqueeze -> Less -> Where``; positions from
``Range(0, seq)``. Importers that lose symbolic shapes on these chains produce unknown dims.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class _Graph:
    def __init__(self, seed: int) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.rng = np.random.default_rng(seed)
        self.count = 0

    def name(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}_{self.count}"

    def const(self, value: np.ndarray, prefix: str = "c") -> str:
        name = self.name(prefix)
        self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def weight(self, *shape: int, scale: float = 0.05) -> str:
        return self.const((self.rng.standard_normal(shape) * scale).astype(np.float32), "w")

    def op(self, op_type: str, inputs: list[str], outputs: int = 1, **attrs: object) -> str:
        names = [self.name(op_type.lower()) for _ in range(outputs)]
        self.nodes.append(helper.make_node(op_type, inputs, names, name=self.name(op_type), **attrs))
        return names[0]

    def dim(self, x: str, axis: int) -> str:
        """``Unsqueeze(Gather(Shape(x), axis))``: a 1-element int64 tensor holding a dim of x."""
        g = self.op("Gather", [self.op("Shape", [x]), self.const(np.array(axis, np.int64), "i")], axis=0)
        return self.op("Unsqueeze", [g, self.const(np.array([0], np.int64), "axes")])

    def linear(self, x: str, d_in: int, d_out: int) -> str:
        return self.op("Add", [self.op("MatMul", [x, self.weight(d_in, d_out)]), self.weight(d_out)])

    def layer_norm(self, x: str, d: int) -> str:
        gamma = self.const(np.ones(d, np.float32) + self.rng.standard_normal(d).astype(np.float32) * 0.1)
        beta = self.weight(d)
        return self.op("LayerNormalization", [x, gamma, beta], axis=-1, epsilon=1e-5)


def _attention(g: _Graph, x: str, d: int, heads: int, mask: str) -> str:
    hd = d // heads
    b, s = g.dim(x, 0), g.dim(x, 1)
    split = g.op(
        "Concat",
        [
            b,
            s,
            g.const(np.array([heads, hd], np.int64)),
        ],
        axis=0,
    )

    def project() -> str:
        y = g.op("Reshape", [g.linear(x, d, d), split])
        return g.op("Transpose", [y], perm=[0, 2, 1, 3])  # [b, h, s, hd]

    q, k, v = project(), project(), project()
    kt = g.op("Transpose", [k], perm=[0, 1, 3, 2])
    scores = g.op("Div", [g.op("MatMul", [q, kt]), g.const(np.array(np.sqrt(hd), np.float32))])
    scores = g.op("Where", [mask, scores, g.const(np.array(-1e9, np.float32))])
    probs = g.op("Softmax", [scores], axis=-1)
    ctx = g.op("Transpose", [g.op("MatMul", [probs, v])], perm=[0, 2, 1, 3])
    merged = g.op("Reshape", [ctx, g.op("Concat", [b, s, g.const(np.array([d], np.int64))], axis=0)])
    return g.linear(merged, d, d)


def _causal_mask(g: _Graph, ids: str) -> str:
    """[seq, seq] bool: key position <= query position."""
    seq = g.op("Gather", [g.op("Shape", [ids]), g.const(np.array(1, np.int64), "i")], axis=0)
    pos = g.op("Range", [g.const(np.array(0, np.int64)), seq, g.const(np.array(1, np.int64))])
    rows = g.op("Unsqueeze", [pos, g.const(np.array([1], np.int64), "axes")])
    cols = g.op("Unsqueeze", [pos, g.const(np.array([0], np.int64), "axes")])
    return g.op("Not", [g.op("Less", [rows, cols])])


def gpt_model(
    layers: int = 2, d: int = 64, heads: int = 4, vocab: int = 100, max_seq: int = 128, seed: int = 0
) -> onnx.ModelProto:
    """A GPT-style decoder: ids [batch, seq] int64 -> logits [batch, seq, vocab] float32."""
    g = _Graph(seed)
    ids = "ids"
    tok = g.op("Gather", [g.weight(vocab, d, scale=0.5), ids], axis=0)
    seq = g.op("Gather", [g.op("Shape", [ids]), g.const(np.array(1, np.int64), "i")], axis=0)
    positions = g.op("Range", [g.const(np.array(0, np.int64)), seq, g.const(np.array(1, np.int64))])
    x = g.op("Add", [tok, g.op("Gather", [g.weight(max_seq, d, scale=0.5), positions], axis=0)])
    mask = _causal_mask(g, ids)
    for _ in range(layers):
        x = g.op("Add", [x, _attention(g, g.layer_norm(x, d), d, heads, mask)])
        h = g.op("Gelu", [g.linear(g.layer_norm(x, d), d, 4 * d)])
        x = g.op("Add", [x, g.linear(h, 4 * d, d)])
    g.op("MatMul", [g.layer_norm(x, d), g.weight(d, vocab)])
    g.nodes[-1].output[0] = "logits"  # the graph output's name
    graph = helper.make_graph(
        g.nodes,
        "gpt",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", "seq"])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", "seq", vocab])],
        g.inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    model.ir_version = 10
    return model
