"""Two models built with the Python builder: a GPT-style transformer block and a small CNN.

Both take symbolic sizes (batch, sequence length, image height and width) and deduce a fully
symbolic type for every value. Tests, the demo and the benchmarks share them.

    python -m relax_mlir.examples.models transformer   # print the module
    python -m relax_mlir.examples.models cnn
"""

from __future__ import annotations

import sys

import numpy as np
from mlir import ir

import relax_mlir.builder as rb
from relax_mlir.dialects import relax as R


def transformer_block(
    d: int = 512, heads: int = 8, ff: int = 2048, upper_bounds: dict[str, int] | None = None
) -> ir.Module:
    """Pre-LayerNorm block: causal multi-head attention and a GELU MLP, each with a residual.

    The causal mask's size comes from the input's sequence length through shape values
    (``shape_of -> get_dim -> arange``), as an importer would build it. ``upper_bounds`` of the batch
    ``b`` and the sequence length ``s`` default to 16 and 2048 (``{}``: none).
    """
    head_dim = d // heads
    bb = rb.BlockBuilder()
    params = {
        "x": rb.tensor(["b", "s", d]),
        "ln1_g": rb.tensor([d]),
        "ln1_b": rb.tensor([d]),
        "wq": rb.tensor([d, d]),
        "wk": rb.tensor([d, d]),
        "wv": rb.tensor([d, d]),
        "wo": rb.tensor([d, d]),
        "ln2_g": rb.tensor([d]),
        "ln2_b": rb.tensor([d]),
        "w1": rb.tensor([d, ff]),
        "b1": rb.tensor([ff]),
        "w2": rb.tensor([ff, d]),
        "b2": rb.tensor([d]),
    }
    bounds = {"b": 16, "s": 2048} if upper_bounds is None else upper_bounds
    with bb.function("transformer_block", params, upper_bounds=bounds or None) as args:
        x, ln1_g, ln1_b, wq, wk, wv, wo, ln2_g, ln2_b, w1, b1, w2, b2 = args
        with bb.dataflow():
            h = R.layer_norm(x, ln1_g, ln1_b)

            def split_heads(w: ir.Value) -> ir.Value:
                return R.permute_dims(R.reshape(R.matmul(h, w), [0, 0, heads, head_dim]), [0, 2, 1, 3])

            q, k, v = split_heads(wq), split_heads(wk), split_heads(wv)
            scale = R.constant(np.array(1.0 / np.sqrt(head_dim), dtype=np.float32))
            scores = R.multiply(R.matmul(q, R.permute_dims(k, [0, 1, 3, 2])), scale)
            seq = rb.type_of(R.get_dim(R.shape_of(x), 1)).value
            pos = R.arange(0, str(seq))
            future = R.greater(pos, R.expand_dims(pos, [1]))
            mask = R.where(future, R.full([], -1e9), R.full([], 0.0))
            probs = R.softmax(R.add(scores, mask))
            ctx = R.reshape(R.permute_dims(R.matmul(probs, v), [0, 2, 1, 3]), [0, 0, d])
            x1 = R.add(x, R.matmul(ctx, wo))
            mlp = R.add(R.matmul(R.gelu(R.add(R.matmul(R.layer_norm(x1, ln2_g, ln2_b), w1), b1)), w2), b2)
            out = bb.emit_output(R.add(x1, mlp))
        bb.ret(out)
    return bb.module


def cnn_weights(classes: int = 10, seed: int = 0) -> dict[str, np.ndarray]:
    """The small CNN's weights (constants in the module), also used by its numpy reference."""
    rng = np.random.default_rng(seed)

    def weight(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.1).astype(np.float32)

    return {
        "conv1": weight(16, 3, 3, 3),
        "bn_gamma": weight(16),
        "bn_beta": weight(16),
        "bn_mean": weight(16),
        "bn_var": np.ones(16, np.float32),
        "conv2": weight(32, 16, 3, 3),
        "fc_w": weight(32, classes),
        "fc_b": weight(classes),
    }


def small_cnn(classes: int = 10, seed: int = 0) -> ir.Module:
    """conv-bn-relu-pool, a strided conv, global average pooling and a linear classifier."""
    w = cnn_weights(classes, seed)
    bb = rb.BlockBuilder()
    with bb.function("small_cnn", {"image": rb.tensor(["n", 3, "h", "w"])}) as (image,):
        with bb.dataflow():
            c = {name: R.constant(value) for name, value in w.items()}
            y = R.conv2d(image, c["conv1"], padding=1)
            y = R.batch_norm(y, c["bn_gamma"], c["bn_beta"], c["bn_mean"], c["bn_var"])
            y = R.max_pool2d(R.relu(y), 2)
            y = R.relu(R.conv2d(y, c["conv2"], strides=2, padding=1))
            y = R.flatten(R.adaptive_avg_pool2d(y, 1), 1)
            logits = bb.emit_output(R.add(R.matmul(y, c["fc_w"]), c["fc_b"]))
        bb.ret(logits)
    return bb.module


MODELS = {"transformer": transformer_block, "cnn": small_cnn}


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in MODELS:
        print(f"usage: python -m relax_mlir.examples.models {{{','.join(MODELS)}}}", file=sys.stderr)
        return 2
    print(MODELS[argv[0]]())
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
