"""Values whose rank the importer cannot read off the types (``"*"``): where a rank can be chosen (with a
run-time check, or exactly), the result has a known rank, so every kernel downstream can be lowered."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper
from onnx_util import check_against_ort, graph_model, value_info

import relax_mlir
from relax_mlir.errors import InputError
from relax_mlir.frontend.onnx import from_onnx

F32 = np.float32
rng = np.random.default_rng(0)


def _squeeze_split_model() -> object:
    """Squeeze without axes of a tensor with a symbolic dim, then a Split along axis 1 (ONNX's AffineGrid
    function does this), then an elementwise op."""
    nodes = [
        helper.make_node("Squeeze", ["x"], ["s"]),
        helper.make_node("Split", ["s"], ["a", "b"], axis=1, num_outputs=2),  # s: [n, 4, m]
        helper.make_node("Mul", ["a", "b"], ["y"]),
    ]
    ins = [value_info("x", F32, ["n", 1, 4, "m"])]
    return graph_model(helper.make_graph(nodes, "sq", ins, [value_info("y", F32, None)]))


def test_squeeze_without_axes_of_symbolic_dims_has_a_known_rank() -> None:
    assert '"*"' not in str(from_onnx(_squeeze_split_model()))


@pytest.mark.parametrize("n", [0, 2, 5])
@pytest.mark.parametrize("m", [0, 3])
def test_squeeze_without_axes_against_ort(n: int, m: int) -> None:
    check_against_ort(_squeeze_split_model(), rng.standard_normal((n, 1, 4, m), dtype=F32))


def test_squeeze_without_axes_of_a_symbolic_dim_that_is_1_is_input_error() -> None:
    """The rank was chosen at import time (symbolic dims stay): a symbolic dim of 1 would change it."""
    exe = relax_mlir.compile(from_onnx(_squeeze_split_model()))
    with pytest.raises(InputError, match=r"\(n, m\) is 1 at run time: Squeeze without 'axes'"):
        exe(np.ones((2, 1, 4, 1), F32))
