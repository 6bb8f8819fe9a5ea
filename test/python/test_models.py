"""The builder models: fully symbolic types everywhere, well-formed, and sizes that evaluate right."""

from __future__ import annotations

import pytest
from mlir import ir

from relax_mlir.dialects.types import TensorType, relax_type
from relax_mlir.examples.models import small_cnn, transformer_block
from relax_mlir.transforms.well_formed import verify_module


def value_types(module: ir.Module) -> list:
    types = []

    def walk(op: ir.Operation) -> None:
        for region in op.regions:
            for block in region.blocks:
                types.extend(relax_type(a.type) for a in block.arguments)
                for inner in block.operations:
                    types.extend(relax_type(r.type) for r in inner.results)
                    walk(inner.operation)

    walk(module.operation)
    return [t for t in types if t is not None]


@pytest.mark.parametrize("build", [transformer_block, small_cnn])
def test_every_value_is_fully_symbolic(build) -> None:
    module = build()
    types = value_types(module)
    assert len(types) >= 20
    for t in types:
        if isinstance(t, TensorType):
            assert t.shape is not None and all(d is not None for d in t.shape), t
            assert t.dtype is not None, t
    assert verify_module(module.operation) == []


def test_transformer_at_other_sizes() -> None:
    module = transformer_block(d=64, heads=4, ff=96)
    shapes = {str(t) for t in value_types(module)}
    assert '!relax.tensor<["b", 4, "s", 16], f32>' in shapes
    assert '!relax.tensor<["b", "s", 96], f32>' in shapes
    assert '!relax.tensor<["b", "s", 64], f32>' in shapes


def conv_out(size: int, kernel: int, stride: int, pad: int) -> int:
    return (size + 2 * pad - kernel) // stride + 1


@pytest.mark.parametrize("h, w", [(1, 1), (2, 3), (7, 8), (32, 31), (224, 225)])
def test_cnn_sizes_evaluate_like_hand_formulas(h: int, w: int) -> None:
    types = [t for t in value_types(small_cnn()) if isinstance(t, TensorType) and len(t.shape) == 4]
    env = {"n": 3, "h": h, "w": w}
    evaluated = {tuple(d.evaluate(env) for d in t.shape) for t in types}
    h1, w1 = conv_out(h, 3, 1, 1), conv_out(w, 3, 1, 1)
    h2, w2 = h1 // 2, w1 // 2
    h3, w3 = conv_out(h2, 3, 2, 1), conv_out(w2, 3, 2, 1)
    assert (3, 16, h1, w1) in evaluated
    assert (3, 16, h2, w2) in evaluated
    assert (3, 32, h3, w3) in evaluated
