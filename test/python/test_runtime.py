"""compile() and the runtime: numbers against numpy at several shapes, input checks, errors."""

from __future__ import annotations

import numpy as np
import pytest
from oprun import compile_fn, rand

import relax_mlir.builder as rb
from relax_mlir.dialects import relax as R
from relax_mlir.errors import InputError


@pytest.fixture(scope="module")
def add_exp():
    return compile_fn(
        {"x": rb.tensor(["n", 4]), "b": rb.tensor([4])}, lambda x, b: R.add(R.exp(R.add(x, b)), b), {"n": 4096}
    )


@pytest.mark.parametrize("n", [1, 5, 0, 1000])
def test_symbolic_dim_changes_between_calls(add_exp, n: int) -> None:
    x, b = rand((n, 4)), rand((4,))
    np.testing.assert_allclose(add_exp(x, b), np.exp(x + b) + b, rtol=1e-5, atol=1e-6)


def test_wrong_inputs_raise(add_exp) -> None:
    x, b = rand((3, 4)), rand((4,))
    with pytest.raises(InputError, match="takes 2 argument"):
        add_exp(x)
    with pytest.raises(InputError, match="parameter 'x' has dtype float64"):
        add_exp(x.astype(np.float64), b)
    with pytest.raises(InputError, match="parameter 'x' has rank 1"):
        add_exp(rand((3,)), b)
    with pytest.raises(InputError, match="parameter 'b' dim 0 is 5, expected 4"):
        add_exp(x, rand((5,)))
    with pytest.raises(InputError, match="symbol 'n' is 5000 .* above its upper bound 4096"):
        add_exp(rand((5000, 4)), b)
    with pytest.raises(InputError, match="must be a numpy array"):
        add_exp([[1.0] * 4], b)


def test_non_contiguous_input_is_copied(add_exp) -> None:
    x = np.asfortranarray(rand((5, 8))[:, ::2])
    b = rand((8,))[::2]
    np.testing.assert_allclose(add_exp(x, b), np.exp(x + b) + b, rtol=1e-5, atol=1e-6)
