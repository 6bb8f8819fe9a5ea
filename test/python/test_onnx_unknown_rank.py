"""Values whose rank the importer cannot read off the types (``"*"``): where a rank can be chosen (with a
run-time check, or exactly), the result has a known rank, so every kernel downstream can be lowered."""

from __future__ import annotations

import functools

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


def _if_ranks_model(use: str) -> object:
    """An If whose branches give a scalar and a [1] tensor (the join has an unknown rank), used by ``use``
    against x of shape [2, 3] (ONNX's AffineGrid function has such a step)."""
    then = helper.make_graph(
        [helper.make_node("Constant", [], ["t"], value_float=2.5)], "then", [], [value_info("t", F32, None)]
    )
    other = helper.make_graph(
        [helper.make_node("Identity", ["v"], ["e"])], "else", [], [value_info("e", F32, None)]
    )
    nodes = [
        helper.make_node("If", ["c"], ["r"], then_branch=then, else_branch=other),
        helper.make_node(use, ["x", "r"], ["y"]),
    ]
    ins = [value_info("c", np.bool_, []), value_info("x", F32, [2, 3]), value_info("v", F32, [1])]
    return graph_model(helper.make_graph(nodes, "if_ranks", ins, [value_info("y", F32, None)]))


@pytest.mark.parametrize("use", ["Mul", "Sub", "Max"])
def test_if_of_two_ranks_broadcast_against_higher_rank(use: str) -> None:
    """The scalar branch is padded to [1]: broadcasting against [2, 3] gives the same numbers either way."""
    model = _if_ranks_model(use)
    x, v = rng.standard_normal((2, 3), dtype=F32), rng.standard_normal(1, dtype=F32)
    for c in (True, False):
        check_against_ort(model, np.array(c), x, v)


@pytest.mark.parametrize("shape", [(4,), (1, 4), (3, 4), (0, 4), (2, 1, 4), (2, 3, 4)])
def test_add_to_an_operand_of_unknown_rank(shape: tuple[int, ...]) -> None:
    """Fuzz case 48703: the rank-2 variant's kernel read a dim of ``x1`` before refining it to ``[m, 4]``,
    so its text used ``%arg1`` with two types."""
    ins = [value_info("x0", F32, ["n", 4]), value_info("x1", F32, None)]
    graph = helper.make_graph(
        [helper.make_node("Add", ["x0", "x1"], ["y"])], "add", ins, [value_info("y", F32, None)]
    )
    exe = _compiled_add(graph_model(graph).SerializeToString())
    n = 0 if 0 in shape else 3
    x0, x1 = rng.standard_normal((n, 4), dtype=F32), rng.standard_normal(shape, dtype=F32)
    np.testing.assert_array_equal(exe(x0, x1), x0 + x1)


@functools.cache
def _compiled_add(model: bytes) -> object:
    import onnx

    return relax_mlir.compile(from_onnx(onnx.load_from_string(model)), opt_level=1)
