"""Benchmark models for ``bench/perf.py``: ONNX graphs with dynamic dims and float32 numpy twins.

Each builder returns ``(model, weights)``: an ``onnx.ModelProto`` whose initializers are ``weights``
(name -> array), so onnxruntime, relax_mlir (through ``from_onnx``) and the numpy implementation run the
same numbers. The numpy functions here are written from the model descriptions, not from the graphs,
and run in float32 with numpy's own BLAS, as a user would write them.

- ``mlp``: 784-512-512-10 with ReLU, ``Gemm(transB=1)`` layers as PyTorch exports ``nn.Linear``;
  input ``x [batch, 784]``.
- ``gpt``: pre-LayerNorm GPT blocks (d=512, 8 heads, ff=2048, exact GELU, causal mask) and a final
  LayerNorm; input ``x [batch, seq, 512]``. Head reshapes take their shape from ``Shape -> Gather ->
  Unsqueeze -> Concat`` and the mask from ``Shape -> Range -> Less -> Not -> Where``, as exporters write
  them; linears are ``MatMul + Add``.
- ``resnet``: a ResNet-style CNN on ``x [batch, 3, 64, 64]``: a stride-2 stem, four basic residual
  blocks (32, 64/2, 64, 128/2 channels; 1x1 stride-2 projections), BatchNorm folded into each Conv's
  weights and bias, ``GlobalAveragePool``, ``Flatten``, ``Gemm`` to 10 classes.
- ``small_cnn``: small-channel CNNs (8-32 channels, 32-128 px) from a layer list (3x3 / 1x1 convs, stride 2,
  residual blocks, max pooling), BatchNorm folded; ``GlobalAveragePool`` and ``Gemm`` to 10 classes.
- ``mobilenet``: MobileNetV2-style inverted residual blocks (1x1 expand, depthwise 3x3, 1x1 project), each
  conv followed by an unfolded ``BatchNormalization``, ReLU6 as ``Clip(0, 6)``.
- ``gpt`` with ``d=256, heads=4``: an attention-heavy GPT for seq 1024 (attention is about 40% of its FLOPs).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

Weights = dict[str, np.ndarray]


class _Graph:
    """A tiny ONNX graph writer that keeps its initializers by name."""

    def __init__(self, seed: int) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.weights: Weights = {}
        self.rng = np.random.default_rng(seed)
        self.count = 0

    def _name(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}_{self.count}"

    def const(self, value: np.ndarray, name: str | None = None) -> str:
        name = name or self._name("c")
        self.weights[name] = np.asarray(value)
        return name

    def weight(self, name: str, *shape: int, scale: float = 0.05) -> str:
        return self.const((self.rng.standard_normal(shape) * scale).astype(np.float32), name)

    def op(self, op_type: str, inputs: list[str], out: str | None = None, **attrs: object) -> str:
        name = out or self._name(op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [name], name=self._name(op_type), **attrs))
        return name

    def dim(self, x: str, axis: int) -> str:
        """A 1-element int64 tensor holding dim ``axis`` of ``x`` (``Unsqueeze(Gather(Shape(x)))``)."""
        g = self.op("Gather", [self.op("Shape", [x]), self.const(np.array(axis, np.int64))], axis=0)
        return self.op("Unsqueeze", [g, self.const(np.array([0], np.int64))])

    def model(self, name: str, inputs: list[onnx.ValueInfoProto], outputs: list[onnx.ValueInfoProto]):
        inits = [numpy_helper.from_array(v, k) for k, v in self.weights.items()]
        graph = helper.make_graph(self.nodes, name, inputs, outputs, inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
        model.ir_version = 10
        onnx.checker.check_model(model)
        return model


# -- MLP ----------------------------------------------------------------------------------------------

MLP_SIZES = (784, 512, 512, 10)


def mlp(seed: int = 0) -> tuple[onnx.ModelProto, Weights]:
    """784-512-512-10 ReLU MLP, ``Gemm(transB=1)`` layers (weights stored [out, in])."""
    g = _Graph(seed)
    x = "x"
    layers = len(MLP_SIZES) - 1
    for i, (d_in, d_out) in enumerate(zip(MLP_SIZES, MLP_SIZES[1:])):
        w = g.weight(f"fc{i}_w", d_out, d_in, scale=1 / np.sqrt(d_in))
        b = g.weight(f"fc{i}_b", d_out)
        x = g.op("Gemm", [x, w, b], out="y" if i == layers - 1 else None, transB=1)
        if i < layers - 1:
            x = g.op("Relu", [x])
    model = g.model(
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", MLP_SIZES[0]])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", MLP_SIZES[-1]])],
    )
    return model, g.weights


def mlp_numpy(x: np.ndarray, w: Weights) -> np.ndarray:
    """The MLP in float32 numpy."""
    layers = len(MLP_SIZES) - 1
    for i in range(layers):
        x = x @ w[f"fc{i}_w"].T + w[f"fc{i}_b"]
        if i < layers - 1:
            np.maximum(x, 0, out=x)
    return x


# -- GPT blocks ---------------------------------------------------------------------------------------

GPT_D, GPT_HEADS, GPT_FF = 512, 8, 2048


def _layer_norm(g: _Graph, x: str, prefix: str, d: int) -> str:
    gamma = g.const(1 + (g.rng.standard_normal(d) * 0.1).astype(np.float32), f"{prefix}_g")
    beta = g.weight(f"{prefix}_b", d)
    return g.op("LayerNormalization", [x, gamma, beta], axis=-1, epsilon=1e-5)


def _linear(g: _Graph, x: str, prefix: str, d_in: int, d_out: int) -> str:
    w = g.weight(f"{prefix}_w", d_in, d_out, scale=1 / np.sqrt(d_in))
    return g.op("Add", [g.op("MatMul", [x, w]), g.weight(f"{prefix}_b", d_out)])


def gpt(
    layers: int, seed: int = 0, d: int = GPT_D, heads: int = GPT_HEADS, ff: int = GPT_FF
) -> tuple[onnx.ModelProto, Weights]:
    """``layers`` pre-LN GPT blocks and a final LayerNorm: x [batch, seq, d] -> [batch, seq, d]."""
    hd = d // heads
    g = _Graph(seed)
    x = "x"
    seq = g.op("Gather", [g.op("Shape", [x]), g.const(np.array(1, np.int64))], axis=0)
    pos = g.op("Range", [g.const(np.array(0, np.int64)), seq, g.const(np.array(1, np.int64))])
    rows = g.op("Unsqueeze", [pos, g.const(np.array([1], np.int64))])
    cols = g.op("Unsqueeze", [pos, g.const(np.array([0], np.int64))])
    mask = g.op("Not", [g.op("Less", [rows, cols])])  # [seq, seq]: key <= query
    scale = g.const(np.array(np.sqrt(hd), np.float32))
    neg = g.const(np.array(-1e9, np.float32))
    for i in range(layers):
        p = f"l{i}"
        h = _layer_norm(g, x, f"{p}_ln1", d)
        b, s = g.dim(h, 0), g.dim(h, 1)
        split = g.op("Concat", [b, s, g.const(np.array([heads, hd], np.int64))], axis=0)
        merge = g.op("Concat", [b, s, g.const(np.array([d], np.int64))], axis=0)

        def heads_of(name: str, h: str = h, split: str = split, p: str = p) -> str:
            y = g.op("Reshape", [_linear(g, h, f"{p}_{name}", d, d), split])
            return g.op("Transpose", [y], perm=[0, 2, 1, 3])  # [b, heads, s, hd]

        q, k, v = heads_of("q"), heads_of("k"), heads_of("v")
        scores = g.op("Div", [g.op("MatMul", [q, g.op("Transpose", [k], perm=[0, 1, 3, 2])]), scale])
        probs = g.op("Softmax", [g.op("Where", [mask, scores, neg])], axis=-1)
        ctx = g.op("Transpose", [g.op("MatMul", [probs, v])], perm=[0, 2, 1, 3])
        attn = _linear(g, g.op("Reshape", [ctx, merge]), f"{p}_o", d, d)
        x = g.op("Add", [x, attn])
        h = g.op("Gelu", [_linear(g, _layer_norm(g, x, f"{p}_ln2", d), f"{p}_fc1", d, ff)])
        x = g.op("Add", [x, _linear(g, h, f"{p}_fc2", ff, d)])
    gamma = g.const(1 + (g.rng.standard_normal(d) * 0.1).astype(np.float32), "lnf_g")
    g.op("LayerNormalization", [x, gamma, g.weight("lnf_b", d)], out="y", axis=-1, epsilon=1e-5)
    model = g.model(
        f"gpt{layers}",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", d])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "seq", d])],
    )
    return model, g.weights


def _np_layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    centered = x - mean
    var = np.mean(centered * centered, -1, keepdims=True)
    return centered / np.sqrt(var + eps) * gamma + beta


def _np_erf(x: np.ndarray) -> np.ndarray:
    """erf in float32 numpy (Abramowitz-Stegun 7.1.26, |error| < 1.5e-7)."""
    a = np.abs(x)
    t = 1 / (1 + np.float32(0.3275911) * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return np.sign(x) * (1 - poly.astype(np.float32) * np.exp(-a * a))


def gpt_numpy(x: np.ndarray, w: Weights, layers: int, heads: int = GPT_HEADS) -> np.ndarray:
    """The GPT blocks in float32 numpy."""
    b, s, d = x.shape
    hd = d // heads
    masked = np.triu(np.ones((s, s), bool), 1)  # key > query
    for i in range(layers):
        p = f"l{i}"
        h = _np_layer_norm(x, w[f"{p}_ln1_g"], w[f"{p}_ln1_b"])

        def heads_of(name: str, h: np.ndarray = h, p: str = p) -> np.ndarray:
            y = h @ w[f"{p}_{name}_w"] + w[f"{p}_{name}_b"]
            return y.reshape(b, s, heads, hd).transpose(0, 2, 1, 3)

        q, k, v = heads_of("q"), heads_of("k"), heads_of("v")
        scores = (q @ k.transpose(0, 1, 3, 2)) / np.float32(np.sqrt(hd))
        scores[..., masked] = np.float32(-1e9)
        scores -= scores.max(-1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(-1, keepdims=True)
        ctx = (scores @ v).transpose(0, 2, 1, 3).reshape(b, s, d)
        x = x + (ctx @ w[f"{p}_o_w"] + w[f"{p}_o_b"])
        z = _np_layer_norm(x, w[f"{p}_ln2_g"], w[f"{p}_ln2_b"]) @ w[f"{p}_fc1_w"] + w[f"{p}_fc1_b"]
        z = z * (1 + _np_erf(z * np.float32(1 / np.sqrt(2)))) * np.float32(0.5)
        x = x + (z @ w[f"{p}_fc2_w"] + w[f"{p}_fc2_b"])
    return _np_layer_norm(x, w["lnf_g"], w["lnf_b"])


# -- ResNet-style CNN ---------------------------------------------------------------------------------

RESNET_INPUT = (3, 64, 64)
RESNET_STEM = 32
RESNET_BLOCKS = ((32, 1), (64, 2), (64, 1), (128, 2))  # (out channels, stride)
RESNET_CLASSES = 10


def _conv_bn(g: _Graph, x: str, name: str, c_in: int, c_out: int, k: int, stride: int) -> str:
    """Conv (no bias) followed by BatchNorm, folded into one Conv with bias (as inference exports do)."""
    w = g.rng.standard_normal((c_out, c_in, k, k)).astype(np.float32) * np.float32(
        np.sqrt(2 / (c_in * k * k))
    )
    gamma = (1 + 0.1 * g.rng.standard_normal(c_out)).astype(np.float32)
    beta = (0.1 * g.rng.standard_normal(c_out)).astype(np.float32)
    mean = (0.1 * g.rng.standard_normal(c_out)).astype(np.float32)
    var = (1 + 0.1 * g.rng.random(c_out)).astype(np.float32)
    scale = gamma / np.sqrt(var + 1e-5)
    wf = g.const((w * scale[:, None, None, None]).astype(np.float32), f"{name}_w")
    bf = g.const((beta - mean * scale).astype(np.float32), f"{name}_b")
    pad = k // 2
    return g.op("Conv", [x, wf, bf], kernel_shape=[k, k], strides=[stride, stride], pads=[pad] * 4)


def resnet(seed: int = 0) -> tuple[onnx.ModelProto, Weights]:
    """The ResNet-style CNN: x [batch, 3, 64, 64] -> logits [batch, 10]."""
    g = _Graph(seed)
    x = g.op("Relu", [_conv_bn(g, "x", "stem", RESNET_INPUT[0], RESNET_STEM, 3, 2)])
    c = RESNET_STEM
    for i, (c_out, stride) in enumerate(RESNET_BLOCKS):
        y = g.op("Relu", [_conv_bn(g, x, f"b{i}_c1", c, c_out, 3, stride)])
        y = _conv_bn(g, y, f"b{i}_c2", c_out, c_out, 3, 1)
        short = x if stride == 1 and c == c_out else _conv_bn(g, x, f"b{i}_proj", c, c_out, 1, stride)
        x = g.op("Relu", [g.op("Add", [y, short])])
        c = c_out
    flat = g.op("Flatten", [g.op("GlobalAveragePool", [x])], axis=1)
    fc_w = g.weight("fc_w", RESNET_CLASSES, c, scale=1 / np.sqrt(c))
    g.op("Gemm", [flat, fc_w, g.weight("fc_b", RESNET_CLASSES)], out="y", transB=1)
    model = g.model(
        "resnet",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", *RESNET_INPUT])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", RESNET_CLASSES])],
    )
    return model, g.weights


def _np_conv(x: np.ndarray, w: np.ndarray, b: np.ndarray, stride: int) -> np.ndarray:
    """NCHW convolution with 'same'-style padding k//2, as im2col + one GEMM."""
    o, c, k, _ = w.shape
    pad = k // 2
    if pad:
        x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    windows = np.lib.stride_tricks.sliding_window_view(x, (k, k), axis=(2, 3))[:, :, ::stride, ::stride]
    n, _, oh, ow = windows.shape[:4]
    cols = windows.transpose(0, 2, 3, 1, 4, 5).reshape(n * oh * ow, c * k * k)
    out = cols @ w.reshape(o, c * k * k).T + b
    return np.ascontiguousarray(out.reshape(n, oh, ow, o).transpose(0, 3, 1, 2))


def resnet_numpy(x: np.ndarray, w: Weights) -> np.ndarray:
    """The ResNet-style CNN in float32 numpy."""

    def conv(x: np.ndarray, name: str, stride: int) -> np.ndarray:
        return _np_conv(x, w[f"{name}_w"], w[f"{name}_b"], stride)

    x = np.maximum(conv(x, "stem", 2), 0)
    c = RESNET_STEM
    for i, (c_out, stride) in enumerate(RESNET_BLOCKS):
        y = np.maximum(conv(x, f"b{i}_c1", stride), 0)
        y = conv(y, f"b{i}_c2", 1)
        short = x if stride == 1 and c == c_out else conv(x, f"b{i}_proj", stride)
        x = np.maximum(y + short, 0)
        c = c_out
    return x.mean(axis=(2, 3)) @ w["fc_w"].T + w["fc_b"]


# -- small-channel CNNs and a MobileNet-style network --------------------------------------------------

# layer lists: ("conv", c_out, k, stride) conv+ReLU; ("res", c_out, stride) basic residual block;
# ("pool",) MaxPool 2x2 stride 2
SMALL_CNNS: dict[str, tuple[tuple[int, int, int], tuple[tuple, ...]]] = {
    "CNN 8ch 32px": (
        (3, 32, 32),
        (("conv", 8, 3, 1), ("conv", 8, 3, 1), ("conv", 16, 3, 2), ("conv", 16, 1, 1)),
    ),
    "CNN 16ch 64px": ((3, 64, 64), (("conv", 16, 3, 2), ("res", 16, 1), ("res", 32, 2), ("res", 32, 1))),
    "CNN 32ch 128px": (
        (3, 128, 128),
        (("conv", 16, 3, 2), ("pool",), ("conv", 32, 3, 1), ("conv", 32, 1, 1), ("res", 32, 2)),
    ),
}


def small_cnn(name: str, seed: int = 0) -> tuple[onnx.ModelProto, Weights]:
    """The small-channel CNN ``SMALL_CNNS[name]``: x [batch, c, h, w] -> logits [batch, 10]."""
    shape, layers = SMALL_CNNS[name]
    g = _Graph(seed)
    x, c = "x", shape[0]
    for i, layer in enumerate(layers):
        if layer[0] == "conv":
            x = g.op("Relu", [_conv_bn(g, x, f"l{i}", c, layer[1], layer[2], layer[3])])
            c = layer[1]
        elif layer[0] == "res":
            c_out, stride = layer[1], layer[2]
            y = g.op("Relu", [_conv_bn(g, x, f"l{i}_c1", c, c_out, 3, stride)])
            y = _conv_bn(g, y, f"l{i}_c2", c_out, c_out, 3, 1)
            short = x if stride == 1 and c == c_out else _conv_bn(g, x, f"l{i}_proj", c, c_out, 1, stride)
            x, c = g.op("Relu", [g.op("Add", [y, short])]), c_out
        else:
            x = g.op("MaxPool", [x], kernel_shape=[2, 2], strides=[2, 2])
    flat = g.op("Flatten", [g.op("GlobalAveragePool", [x])], axis=1)
    g.op(
        "Gemm", [flat, g.weight("fc_w", 10, c, scale=1 / np.sqrt(c)), g.weight("fc_b", 10)], out="y", transB=1
    )
    model = g.model(
        "small_cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", *shape])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 10])],
    )
    return model, g.weights


def small_cnn_numpy(x: np.ndarray, w: Weights, name: str) -> np.ndarray:
    """The small-channel CNN ``SMALL_CNNS[name]`` in float32 numpy."""
    c = x.shape[1]
    for i, layer in enumerate(SMALL_CNNS[name][1]):
        if layer[0] == "conv":
            x = np.maximum(_np_conv(x, w[f"l{i}_w"], w[f"l{i}_b"], layer[3]), 0)
            c = layer[1]
        elif layer[0] == "res":
            c_out, stride = layer[1], layer[2]
            y = np.maximum(_np_conv(x, w[f"l{i}_c1_w"], w[f"l{i}_c1_b"], stride), 0)
            y = _np_conv(y, w[f"l{i}_c2_w"], w[f"l{i}_c2_b"], 1)
            same = stride == 1 and c == c_out
            short = x if same else _np_conv(x, w[f"l{i}_proj_w"], w[f"l{i}_proj_b"], stride)
            x, c = np.maximum(y + short, 0), c_out
        else:
            n, ch, h, wd = x.shape
            x = x[:, :, : h // 2 * 2, : wd // 2 * 2].reshape(n, ch, h // 2, 2, wd // 2, 2).max(axis=(3, 5))
    return x.mean(axis=(2, 3)) @ w["fc_w"].T + w["fc_b"]


MOBILENET_INPUT = (16, 56, 56)
MOBILENET_BLOCKS = ((16, 4, 1), (24, 4, 2), (24, 4, 1))  # (out channels, expansion, depthwise stride)


def _conv_raw_bn(g: _Graph, x: str, name: str, c_in: int, c_out: int, k: int, stride: int, groups: int = 1):
    """Conv (no bias) and an unfolded ``BatchNormalization`` (inference mode)."""
    w = g.weight(f"{name}_w", c_out, c_in // groups, k, k, scale=float(np.sqrt(2 / (c_in // groups * k * k))))
    bn = [
        g.const((1 + 0.1 * g.rng.standard_normal(c_out)).astype(np.float32), f"{name}_gamma"),
        g.const((0.1 * g.rng.standard_normal(c_out)).astype(np.float32), f"{name}_beta"),
        g.const((0.1 * g.rng.standard_normal(c_out)).astype(np.float32), f"{name}_mean"),
        g.const((1 + 0.1 * g.rng.random(c_out)).astype(np.float32), f"{name}_var"),
    ]
    pads = [k // 2] * 4
    y = g.op("Conv", [x, w], kernel_shape=[k, k], strides=[stride, stride], pads=pads, group=groups)
    return g.op("BatchNormalization", [y, *bn], epsilon=1e-5)


def mobilenet(seed: int = 0) -> tuple[onnx.ModelProto, Weights]:
    """MobileNetV2-style inverted residual blocks: x [batch, 16, 56, 56] -> [batch, 24, 28, 28]."""
    g = _Graph(seed)
    lo, hi = g.const(np.array(0, np.float32)), g.const(np.array(6, np.float32))
    x, c = "x", MOBILENET_INPUT[0]
    for i, (c_out, t, stride) in enumerate(MOBILENET_BLOCKS):
        e = c * t
        y = g.op("Clip", [_conv_raw_bn(g, x, f"b{i}_expand", c, e, 1, 1), lo, hi])
        y = g.op("Clip", [_conv_raw_bn(g, y, f"b{i}_dw", e, e, 3, stride, groups=e), lo, hi])
        y = _conv_raw_bn(g, y, f"b{i}_project", e, c_out, 1, 1)
        last = i == len(MOBILENET_BLOCKS) - 1
        if stride == 1 and c == c_out:
            y = g.op("Add", [x, y], out="y" if last else None)
        elif last:
            y = g.op("Identity", [y], out="y")
        x, c = y, c_out
    h = MOBILENET_INPUT[1] // int(np.prod([s for _, _, s in MOBILENET_BLOCKS]))
    model = g.model(
        "mobilenet",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", *MOBILENET_INPUT])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", c, h, h])],
    )
    return model, g.weights


def _np_conv_groups(x: np.ndarray, w: np.ndarray, stride: int, groups: int) -> np.ndarray:
    """Grouped NCHW convolution (padding k//2), one im2col GEMM per group; depthwise as a sum of shifts."""
    o, _, k, _ = w.shape
    if groups == 1:
        return _np_conv(x, w, np.zeros(o, np.float32), stride)
    pad = k // 2
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, c, h, wd = x.shape
    oh, ow = (h + 2 * pad - k) // stride + 1, (wd + 2 * pad - k) // stride + 1
    out = np.zeros((n, o, oh, ow), np.float32)
    for dy in range(k):
        for dx in range(k):
            window = xp[:, :, dy : dy + stride * oh : stride, dx : dx + stride * ow : stride]
            out += window * w[None, :, 0, dy, dx, None, None]
    return out


def mobilenet_numpy(x: np.ndarray, w: Weights) -> np.ndarray:
    """The MobileNet-style blocks in float32 numpy."""

    def conv_bn(x: np.ndarray, name: str, stride: int, groups: int = 1) -> np.ndarray:
        y = _np_conv_groups(x, w[f"{name}_w"], stride, groups)
        scale = w[f"{name}_gamma"] / np.sqrt(w[f"{name}_var"] + np.float32(1e-5))
        return (y - w[f"{name}_mean"][:, None, None]) * scale[:, None, None] + w[f"{name}_beta"][
            :, None, None
        ]

    c = x.shape[1]
    for i, (c_out, t, stride) in enumerate(MOBILENET_BLOCKS):
        y = np.clip(conv_bn(x, f"b{i}_expand", 1), 0, 6)
        y = np.clip(conv_bn(y, f"b{i}_dw", stride, groups=c * t), 0, 6)
        y = conv_bn(y, f"b{i}_project", 1)
        x, c = (x + y if stride == 1 and c == c_out else y), c_out
    return x


# -- the benchmark set --------------------------------------------------------------------------------

Builder = Callable[[], tuple[onnx.ModelProto, Weights]]
Reference = Callable[[np.ndarray, Weights], np.ndarray]

# name -> (builder, numpy reference, input shapes)
MODELS: dict[str, tuple[Builder, Reference, list[tuple[int, ...]]]] = {
    "MLP 784-512-512-10": (mlp, mlp_numpy, [(1, 784), (64, 784)]),
    "GPT 2 layers": (
        lambda: gpt(2),
        lambda x, w: gpt_numpy(x, w, 2),
        [(1, 16, GPT_D), (4, 128, GPT_D), (1, 32, GPT_D)],
    ),
    "GPT 4 layers": (
        lambda: gpt(4),
        lambda x, w: gpt_numpy(x, w, 4),
        [(1, 16, GPT_D), (4, 128, GPT_D), (1, 32, GPT_D)],
    ),
    "ResNet-style CNN": (resnet, resnet_numpy, [(1, *RESNET_INPUT), (8, *RESNET_INPUT)]),
    **{
        name: (
            lambda name=name: small_cnn(name),
            lambda x, w, name=name: small_cnn_numpy(x, w, name),
            [(1, *shape), (8, *shape)],
        )
        for name, (shape, _) in SMALL_CNNS.items()
    },
    "MobileNet-style blocks": (mobilenet, mobilenet_numpy, [(1, *MOBILENET_INPUT), (8, *MOBILENET_INPUT)]),
    "GPT d=256 seq 1024": (
        lambda: gpt(2, d=256, heads=4, ff=1024),
        lambda x, w: gpt_numpy(x, w, 2, heads=4),
        [(1, 1024, 256)],
    ),
}
