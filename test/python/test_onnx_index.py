"""ONNX indexing, scatter/gather, splitting, tiling and data-dependent ops, against onnxruntime.

Each model has symbolic dims (dim_params) and runs at several shapes, including size-1 and odd dims.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import numpy_helper
from onnx_util import check_against_ort, node_model, run_ours, value_info

from relax_mlir.errors import InputError
from relax_mlir.frontend.onnx import OnnxImportError, from_onnx

rng = np.random.default_rng(0)
F32 = np.float32


def _f(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape, dtype=F32)


def _i(lo: int, hi: int, *shape: int) -> np.ndarray:
    return rng.integers(lo, hi, shape).astype(np.int64)


def _out(dtype: type = F32) -> onnx.ValueInfoProto:
    return value_info("y", dtype, None)


# -- gather ----------------------------------------------------------------------------------------------


def test_gather_elements_negative_indices() -> None:
    m = node_model(
        "GatherElements",
        [value_info("x", F32, ["n", "m"]), value_info("i", np.int64, ["k", "m"])],
        [_out()],
        axis=0,
    )
    for n, m_, k in ((1, 1, 1), (5, 3, 2), (4, 7, 6)):
        check_against_ort(m, _f(n, m_), _i(-n, n, k, m_))


def test_gather_nd_batch_dims() -> None:
    m = node_model(
        "GatherND",
        [value_info("x", F32, ["b", "n", 3]), value_info("i", np.int64, ["b", "k", 1])],
        [_out()],
        batch_dims=1,
    )
    for b, n, k in ((1, 1, 1), (3, 5, 2)):
        check_against_ort(m, _f(b, n, 3), _i(-n, n, b, k, 1))


def test_gather_nd_index_pairs() -> None:
    m = node_model(
        "GatherND", [value_info("x", F32, ["n", "m", 3]), value_info("i", np.int64, ["k", 2])], [_out()]
    )
    for n, m_, k in ((1, 1, 1), (4, 5, 3)):
        idx = np.stack([_i(-n, n, k), _i(-m_, m_, k)], axis=1)
        check_against_ort(m, _f(n, m_, 3), idx)


def test_gather_nd_and_scatter_nd_check_each_index_component() -> None:
    """An out-of-range component raises even when the flat offset it gives is inside the data."""
    gather = node_model(
        "GatherND", [value_info("x", F32, ["n", "m"]), value_info("i", np.int64, ["k", 2])], [_out()]
    )
    scatter = node_model(
        "ScatterND",
        [value_info("x", F32, ["n", "m"]), value_info("i", np.int64, ["k", 2]), value_info("u", F32, ["k"])],
        [_out()],
    )
    batched = node_model(
        "GatherND",
        [value_info("x", F32, ["b", "n", "m"]), value_info("i", np.int64, ["b", 2])],
        [_out()],
        batch_dims=1,
    )
    cases = [  # (model, inputs, bad value, data axis, its size)
        (gather, [_f(3, 4), np.array([[0, 5]])], 5, 1, 4),  # offset 5 < 12
        (gather, [_f(3, 4), np.array([[1, 1], [0, -5]])], -5, 1, 4),
        (gather, [_f(3, 4), np.array([[-4, 0]])], -4, 0, 3),
        (gather, [_f(0, 4), np.zeros((1, 2), np.int64)], 0, 0, 0),
        (scatter, [_f(3, 4), np.array([[1, 4]]), _f(1)], 4, 1, 4),
        (batched, [_f(2, 3, 4), np.array([[0, 4], [2, 0]])], 4, 2, 4),
    ]
    for model, inputs, bad, axis, size in cases:
        with pytest.raises(
            InputError, match=rf"index {bad} out of range for axis {axis} of size {size} in onnx"
        ):
            run_ours(model, *inputs)
    check_against_ort(gather, _f(3, 4), np.array([[2, 3], [-3, -4], [0, 0]]))
    check_against_ort(scatter, _f(3, 4), np.array([[2, 3], [-3, -4]]), _f(2))


# -- scatter ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("reduction", ["none", "add", "max"])
def test_scatter_elements_reductions(reduction: str) -> None:
    m = node_model(
        "ScatterElements",
        [
            value_info("x", F32, ["n", "m"]),
            value_info("i", np.int64, ["k", "m"]),
            value_info("u", F32, ["k", "m"]),
        ],
        [_out()],
        axis=0,
        reduction=reduction,
    )
    for n, m_, k in ((1, 1, 1), (5, 3, 4)):
        if reduction == "none":  # distinct targets per column: the order of duplicates is unspecified
            idx = np.stack([rng.permutation(n)[:k] for _ in range(m_)], axis=1) - n * (
                rng.random((k, m_)) < 0.5
            )
            idx = idx[: min(k, n)]
            check_against_ort(m, _f(n, m_), idx.astype(np.int64), _f(idx.shape[0], m_))
        else:
            check_against_ort(m, _f(n, m_), _i(-n, n, k, m_), _f(k, m_))


def test_scatter_opset10() -> None:
    m = node_model(
        "Scatter",
        [
            value_info("x", F32, ["n", "m"]),
            value_info("i", np.int64, ["n", 1]),
            value_info("u", F32, ["n", 1]),
        ],
        [_out()],
        opset=10,
        axis=1,
    )
    for n, m_ in ((1, 1), (3, 5)):
        check_against_ort(m, _f(n, m_), _i(0, m_, n, 1), _f(n, 1))


def test_scatter_nd_add_with_duplicates() -> None:
    m = node_model(
        "ScatterND",
        [value_info("x", F32, ["n", 4]), value_info("i", np.int64, ["k", 1]), value_info("u", F32, ["k", 4])],
        [_out()],
        reduction="add",
    )
    for n, k in ((1, 1), (5, 7)):
        check_against_ort(m, _f(n, 4), _i(-n, n, k, 1), _f(k, 4))


def test_tensor_scatter_circular() -> None:
    m = node_model(
        "TensorScatter",
        [
            value_info("cache", F32, ["b", 6, 2]),
            value_info("u", F32, ["b", "s", 2]),
            value_info("w", np.int64, ["b"]),
        ],
        [_out()],
        opset=24,
        axis=1,
        mode="circular",
    )
    for b, s in ((1, 1), (3, 4)):
        check_against_ort(m, _f(b, 6, 2), _f(b, s, 2), _i(0, 6, b))


def test_scatter_errors() -> None:
    old = node_model(
        "ScatterElements",
        [value_info("x", F32, [3]), value_info("i", np.int64, [1]), value_info("u", F32, [1])],
        [_out()],
        opset=16,
        reduction="max",
    )
    with pytest.raises(OnnxImportError, match=r"attribute 'reduction' = 'max' is not one of none, add, mul"):
        from_onnx(old)
    boolean = node_model(
        "ScatterND",
        [value_info("x", np.bool_, [3]), value_info("i", np.int64, [1, 1]), value_info("u", np.bool_, [1])],
        [_out(np.bool_)],
        reduction="add",
    )
    with pytest.raises(OnnxImportError, match=r"reduction' = 'add' is not supported for bool data"):
        from_onnx(boolean)


# -- split and tile --------------------------------------------------------------------------------------


def test_split_num_outputs_uneven() -> None:
    outs = [value_info(f"y{j}", F32, None) for j in range(3)]
    m = node_model("Split", [value_info("x", F32, ["b", "n"])], outs, opset=18, axis=1, num_outputs=3)
    for b, n in ((1, 7), (2, 6), (3, 5)):
        check_against_ort(m, _f(b, n))


def test_split_runtime_sizes() -> None:
    outs = [value_info(f"y{j}", F32, None) for j in range(2)]
    m = node_model("Split", [value_info("x", F32, ["n", 3]), value_info("s", np.int64, [2])], outs)
    for n, sizes in ((1, [0, 1]), (5, [2, 3])):
        check_against_ort(m, _f(n, 3), np.array(sizes, np.int64))


def test_split_attribute_opset11_fixes_a_symbolic_dim() -> None:
    outs = [value_info(f"y{j}", F32, None) for j in range(2)]
    m = node_model("Split", [value_info("x", F32, ["b", "n"])], outs, opset=11, axis=-1, split=[1, 4])
    for b in (1, 3):
        check_against_ort(m, _f(b, 5))
    with pytest.raises(InputError, match=r"dim 1 of .* must be 5, got 6"):
        run_ours(m, _f(2, 6))


def test_split_sizes_must_add_up() -> None:
    outs = [value_info(f"y{j}", F32, None) for j in range(2)]
    m = node_model("Split", [value_info("x", F32, [5])], outs, opset=11, split=[1, 2])
    with pytest.raises(OnnxImportError, match=r"'split' sizes \[1, 2\] do not add up to the dim 5"):
        from_onnx(m)


def test_tile_runtime_repeats() -> None:
    m = node_model("Tile", [value_info("x", F32, ["n", 3]), value_info("r", np.int64, [2])], [_out()])
    for n, reps in ((1, [2, 1]), (5, [1, 3]), (2, [3, 2])):
        check_against_ort(m, _f(n, 3), np.array(reps, np.int64))


def test_tile_constant_repeats_must_match_the_rank() -> None:
    reps = numpy_helper.from_array(np.array([2, 2, 2], np.int64), "r")
    m = node_model("Tile", [value_info("x", F32, ["n", 3])], [_out()], initializers=[reps])
    with pytest.raises(OnnxImportError, match=r"'repeats' has 3 entries for a rank-2 input"):
        from_onnx(m)


# -- triangles, one-hot, eye -----------------------------------------------------------------------------


@pytest.mark.parametrize("upper", [0, 1])
def test_trilu_runtime_k(upper: int) -> None:
    m = node_model(
        "Trilu", [value_info("x", F32, ["b", "n", "m"]), value_info("k", np.int64, [])], [_out()], upper=upper
    )
    for shape, k in (((1, 1, 1), 0), ((2, 3, 5), -1), ((1, 4, 3), 2)):
        check_against_ort(m, _f(*shape), np.array(k, np.int64))


def test_one_hot_runtime_depth_negative_and_out_of_range() -> None:
    m = node_model(
        "OneHot",
        [value_info("i", np.int64, ["a", "b"]), value_info("d", np.int64, [1]), value_info("v", F32, [2])],
        [_out()],
        axis=1,
    )
    values = np.array([-1.0, 3.0], F32)
    for a, b, depth in ((1, 1, 1), (3, 5, 4)):
        check_against_ort(m, _i(-depth - 1, depth + 1, a, b), np.array([depth], np.int64), values)


def test_eye_like_symbolic() -> None:
    m = node_model(
        "EyeLike", [value_info("x", F32, ["n", "m"])], [_out(np.int32)], k=1, dtype=onnx.TensorProto.INT32
    )
    for n, m_ in ((1, 1), (3, 5), (4, 2)):
        check_against_ort(m, _f(n, m_))


def test_eye_like_needs_rank_2() -> None:
    m = node_model("EyeLike", [value_info("x", F32, [2, 2, 2])], [_out()])
    with pytest.raises(OnnxImportError, match=r"the input must have rank 2, got rank 3"):
        from_onnx(m)


# -- sequences -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("time_axis", [0, 1])
def test_reverse_sequence(time_axis: int) -> None:
    batch_axis = 1 - time_axis
    dims = ["t", "b", 2] if time_axis == 0 else ["b", "t", 2]
    m = node_model(
        "ReverseSequence",
        [value_info("x", F32, dims), value_info("l", np.int64, ["b"])],
        [_out()],
        time_axis=time_axis,
        batch_axis=batch_axis,
    )
    for t, b in ((1, 1), (5, 3)):
        shape = (t, b, 2) if time_axis == 0 else (b, t, 2)
        check_against_ort(m, _f(*shape), _i(1, t + 1, b))


def test_tensor_scatter_mode_error() -> None:
    m = node_model(
        "TensorScatter",
        [value_info("c", F32, [1, 4, 2]), value_info("u", F32, [1, 1, 2])],
        [_out()],
        opset=24,
        mode="ring",
    )
    with pytest.raises(OnnxImportError, match=r"attribute 'mode' = 'ring' is not one of linear, circular"):
        from_onnx(m)


# -- data-dependent shapes -------------------------------------------------------------------------------


def test_nonzero() -> None:
    m = node_model("NonZero", [value_info("x", F32, ["n", "m"])], [_out(np.int64)])
    for n, m_ in ((1, 1), (3, 5)):
        x = _f(n, m_) * (rng.random((n, m_)) < 0.5)
        check_against_ort(m, x)
    assert '"relax.match_cast"' in str(from_onnx(m))


def test_compress() -> None:
    m = node_model(
        "Compress", [value_info("x", F32, ["n", 3]), value_info("c", np.bool_, ["k"])], [_out()], axis=0
    )
    for n in (1, 5):
        check_against_ort(m, _f(n, 3), rng.random(n) < 0.5)


def test_unique_with_axis_all_outputs() -> None:
    outs = [value_info("y", F32, None)] + [value_info(n, np.int64, None) for n in ("idx", "inv", "cnt")]
    m = node_model("Unique", [value_info("x", F32, ["n", 2])], outs, axis=0, sorted=1)
    for n in (1, 6):
        x = rng.integers(0, 2, (n, 2)).astype(F32)
        check_against_ort(m, x)


def test_unique_values_only_is_one_sort() -> None:
    m = node_model("Unique", [value_info("x", F32, ["n", 3])], [_out()])
    assert '"relax.unique"' in str(from_onnx(m))
    for n in (1, 7):
        check_against_ort(m, rng.integers(-3, 3, (n, 3)).astype(F32))


def test_unique_imports_with_symbolic_count() -> None:
    outs = [value_info("y", F32, None)] + [value_info(n, np.int64, None) for n in ("idx", "inv", "cnt")]
    m = node_model("Unique", [value_info("x", F32, ["n"])], outs, sorted=0)
    text = str(from_onnx(m))
    assert '-> (!relax.tensor<["y_count_1"], f32>, !relax.tensor<["y_count_1"], i64>' in text
