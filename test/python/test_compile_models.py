"""The builder's transformer block and CNN compiled end to end, against numpy implementations."""

from __future__ import annotations

import numpy as np
import pytest

from relax_mlir.errors import InputError
from relax_mlir.examples import reference
from relax_mlir.examples.models import small_cnn, transformer_block
from relax_mlir.targets import compile

D, HEADS, FF = 64, 4, 96


@pytest.fixture(scope="module")
def block():
    return compile(transformer_block(D, HEADS, FF), opt_level=1)


@pytest.fixture(scope="module")
def cnn():
    return compile(small_cnn(), opt_level=1)


@pytest.mark.parametrize("b, s", [(1, 1), (2, 7), (3, 16), (1, 33)])
def test_transformer_block_matches_numpy(block, b: int, s: int) -> None:
    weights = reference.transformer_weights(D, FF, seed=b * 100 + s)
    x = np.random.default_rng(s).standard_normal((b, s, D)).astype(np.float32)
    out = block(x, *weights.values())
    assert out.shape == (b, s, D) and out.dtype == np.float32
    np.testing.assert_allclose(out, reference.transformer_block(x, HEADS, weights), rtol=1e-4, atol=1e-4)


def test_transformer_block_checks_its_inputs(block) -> None:
    weights = reference.transformer_weights(D, FF)
    with pytest.raises(InputError, match="symbol 'b' is 17 .* above its upper bound 16"):
        block(np.zeros((17, 2, D), np.float32), *weights.values())
    with pytest.raises(InputError, match=f"parameter 'x' dim 2 is 65, expected {D}"):
        block(np.zeros((1, 2, 65), np.float32), *weights.values())


@pytest.mark.parametrize("n, h, w", [(1, 8, 8), (2, 9, 13), (3, 2, 3), (1, 32, 17)])
def test_small_cnn_matches_numpy(cnn, n: int, h: int, w: int) -> None:
    image = np.random.default_rng(h * w).standard_normal((n, 3, h, w)).astype(np.float32)
    np.testing.assert_allclose(cnn(image), reference.small_cnn(image), rtol=1e-4, atol=1e-4)
