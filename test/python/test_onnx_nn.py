"""ONNX neural-network ops against onnxruntime: MatMul, Gemm, Conv, ConvTranspose, pooling, LRN, Pad,
Resize, DepthToSpace/SpaceToDepth and CenterCropPad, each at several shapes of one symbolic model."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper, numpy_helper
from onnx_util import check_against_ort, graph_model, node_model, run_ours, value_info

from relax_mlir.frontend.onnx import OnnxImportError, from_onnx

RNG = np.random.default_rng(0)
F32 = np.float32


def rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(F32)


def init(name: str, array: np.ndarray) -> object:
    return numpy_helper.from_array(np.asarray(array), name)


def test_matmul_broadcast_and_1d() -> None:
    m = node_model(
        "MatMul",
        [value_info("a", F32, ["b", "m", 5]), value_info("w", F32, [5, 3])],
        [value_info("y", F32, None)],
    )
    for b, n in ((1, 1), (3, 7)):
        check_against_ort(m, rand(b, n, 5), rand(5, 3))
    v = node_model(
        "MatMul",
        [value_info("a", F32, ["k"]), value_info("w", F32, [2, "k", 3])],
        [value_info("y", F32, None)],
    )
    for k in (1, 6):
        check_against_ort(v, rand(k), rand(2, k, 3))


def test_gemm_all_attributes() -> None:
    m = node_model(
        "Gemm",
        [value_info("a", F32, [4, "m"]), value_info("b", F32, ["n", 4]), value_info("c", F32, ["n"])],
        [value_info("y", F32, ["m", "n"])],
        transA=1,
        transB=1,
        alpha=0.5,
        beta=-2.0,
    )
    for mm, n in ((1, 1), (3, 5)):
        check_against_ort(m, rand(4, mm), rand(n, 4), rand(n))


def test_conv2d_groups_pads_strides_dilations_bias() -> None:
    m = node_model(
        "Conv",
        [value_info("x", F32, ["n", 4, "h", "w"])],
        [value_info("y", F32, None)],
        [init("w", rand(6, 2, 3, 3)), init("b", rand(6))],
        group=2,
        strides=[2, 1],
        pads=[1, 0, 2, 1],
        dilations=[1, 2],
    )
    for shape in ((1, 4, 5, 7), (2, 4, 8, 9)):
        check_against_ort(m, rand(*shape))


def test_conv1d_same_upper_and_conv3d() -> None:
    m = node_model(
        "Conv",
        [value_info("x", F32, ["n", 2, "l"])],
        [value_info("y", F32, None)],
        [init("w", rand(3, 2, 4))],
        auto_pad="SAME_UPPER",
    )
    for shape in ((1, 2, 1), (2, 2, 9)):
        check_against_ort(m, rand(*shape))
    m3 = node_model(
        "Conv",
        [value_info("x", F32, ["n", 2, "d", 5, 4])],
        [value_info("y", F32, None)],
        [init("w", rand(3, 2, 2, 3, 3)), init("b", rand(3))],
        strides=[2, 1, 1],
        pads=[1, 1, 0, 0, 1, 2],
    )
    for shape in ((1, 2, 1, 5, 4), (2, 2, 6, 5, 4)):
        check_against_ort(m3, rand(*shape))


def test_conv_transpose() -> None:
    m = node_model(
        "ConvTranspose",
        [value_info("x", F32, ["n", 4, "h", "w"])],
        [value_info("y", F32, None)],
        [init("w", rand(4, 3, 3, 2)), init("b", rand(6))],
        group=2,
        strides=[2, 3],
        pads=[1, 0, 0, 1],
        output_padding=[1, 0],
        dilations=[1, 2],
    )
    for shape in ((1, 4, 1, 1), (2, 4, 3, 5)):
        check_against_ort(m, rand(*shape))
    s = node_model(
        "ConvTranspose",
        [value_info("x", F32, [1, 2, 3])],
        [value_info("y", F32, None)],
        [init("w", rand(2, 2, 3))],
        strides=[2],
        output_shape=[8],
    )
    check_against_ort(s, rand(1, 2, 3))


def test_max_and_average_pool() -> None:
    x = value_info("x", F32, ["n", 3, "h", "w"])
    y = [value_info("y", F32, None)]
    mx = node_model(
        "MaxPool",
        [x],
        y,
        kernel_shape=[3, 2],
        strides=[2, 2],
        pads=[1, 0, 1, 1],
        dilations=[1, 2],
        ceil_mode=1,
    )
    avg = node_model(
        "AveragePool", [x], y, kernel_shape=[3, 3], strides=[2, 1], pads=[1, 1, 1, 1], count_include_pad=1
    )
    for shape in ((1, 3, 4, 5), (2, 3, 7, 6)):
        data = rand(*shape)
        check_against_ort(mx, data)
        check_against_ort(avg, data)
    a3 = node_model(
        "AveragePool",
        [value_info("x", F32, ["n", 2, "d", 4, 5])],
        y,
        kernel_shape=[2, 2, 3],
        strides=[2, 1, 2],
        pads=[1, 0, 1, 0, 1, 1],
    )
    m1 = node_model(
        "MaxPool", [value_info("x", F32, ["n", 2, "l"])], y, kernel_shape=[3], auto_pad="SAME_LOWER"
    )
    for n, d in ((1, 3), (2, 5)):
        check_against_ort(a3, rand(n, 2, d, 4, 5))
        check_against_ort(m1, rand(n, 2, d))


@pytest.mark.parametrize("order", [0, 1])
def test_max_pool_indices(order: int) -> None:
    m = node_model(
        "MaxPool",
        [value_info("x", F32, [2, 3, 5, 4])],
        [value_info("y", F32, None), value_info("i", np.int64, None)],
        kernel_shape=[3, 2],
        strides=[2, 1],
        pads=[1, 0, 1, 1],
        storage_order=order,
    )
    check_against_ort(m, rand(2, 3, 5, 4))


def test_lp_and_global_pools() -> None:
    x = value_info("x", F32, ["n", 3, "h", "w"])
    y = [value_info("y", F32, None)]
    lp = node_model("LpPool", [x], y, kernel_shape=[2, 2], p=3, pads=[0, 1, 1, 0])
    glp = node_model("GlobalLpPool", [x], y, p=2)
    gmax = node_model("GlobalMaxPool", [x], y)
    gavg = node_model("GlobalAveragePool", [x], y)
    for shape in ((1, 3, 2, 2), (2, 3, 5, 3)):
        data = rand(*shape)
        for m in (lp, glp, gmax, gavg):
            check_against_ort(m, data)


def test_lrn() -> None:
    for size in (3, 5):
        m = node_model(
            "LRN",
            [value_info("x", F32, ["n", "c", "h", 3])],
            [value_info("y", F32, None)],
            size=size,
            alpha=0.01,
            beta=0.6,
            bias=2.0,
        )
        for shape in ((1, 1, 1, 3), (2, 5, 3, 3)):
            check_against_ort(m, rand(*shape))


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge", "wrap"])
def test_pad_modes_with_axes(mode: str) -> None:
    m = node_model(
        "Pad",
        [value_info("x", F32, ["n", 4, 3])],
        [value_info("y", F32, None)],
        [
            init("pads", np.array([2, 1, 1, 2], np.int64)),
            init("value", np.array(1.5, F32)),
            init("axes", np.array([-1, 1], np.int64)),
        ],
        mode=mode,
    )
    for n in (1, 3):
        check_against_ort(m, rand(n, 4, 3))


def test_resize_modes() -> None:
    x = value_info("x", F32, ["n", 2, "h", "w"])
    y = [value_info("y", F32, None)]
    empty = init("roi", np.array([], F32))
    cubic = node_model(
        "Resize",
        [x],
        y,
        [empty, init("scales", np.array([1, 1, 1.7, 0.6], F32))],
        mode="cubic",
        exclude_outside=1,
        cubic_coeff_a=-0.5,
    )
    near = node_model(
        "Resize",
        [value_info("x", F32, ["n", 2, 4, 5])],
        y,
        [empty, init("scales", np.array([], F32)), init("sizes", np.array([7, 3], np.int64))],
        axes=[3, 2],
        mode="nearest",
        nearest_mode="round_prefer_ceil",
        coordinate_transformation_mode="half_pixel_symmetric",
    )
    linear = node_model(
        "Resize",
        [x],
        y,
        [empty, init("scales", np.array([1, 1, 2, 3], F32))],
        mode="linear",
        coordinate_transformation_mode="align_corners",
    )
    for shape in ((1, 2, 1, 3), (2, 2, 5, 4)):
        data = rand(*shape)
        check_against_ort(cubic, data)
        check_against_ort(linear, data)
        check_against_ort(near, rand(shape[0], 2, 4, 5))
    crop = node_model(
        "Resize",
        [value_info("x", F32, [1, 1, 4, 4])],
        y,
        [
            init("roi", np.array([0.2, -0.3, 0.9, 1.2], F32)),
            init("scales", np.array([], F32)),
            init("sizes", np.array([3, 5], np.int64)),
        ],
        axes=[2, 3],
        mode="linear",
        coordinate_transformation_mode="tf_crop_and_resize",
        extrapolation_value=-1.0,
    )
    check_against_ort(crop, rand(1, 1, 4, 4))
    anti = node_model(
        "Resize",
        [value_info("x", F32, [1, 1, 8, 8])],
        y,
        [empty, init("scales", np.array([1, 1, 0.6, 0.3], F32))],
        mode="linear",
        antialias=1,
    )
    check_against_ort(anti, rand(1, 1, 8, 8))


@pytest.mark.parametrize("mode", ["linear", "cubic"])
def test_resize_antialias_with_run_time_scales_and_sizes(mode: str) -> None:
    """The antialias filter's width follows scales or sizes given at run time, as ONNX Runtime's does."""
    x_info = value_info("x", F32, ["n", "c", "h", "w"])
    y = [value_info("y", F32, None)]
    by_scales = node_model(
        "Resize",
        [x_info, value_info("roi", F32, [0]), value_info("scales", F32, [4])],
        y,
        mode=mode,
        antialias=1,
    )
    sizes_node = helper.make_node(
        "Resize", ["x", "", "", "sizes"], ["y"], mode=mode, antialias=1, exclude_outside=1
    )
    sizes_graph = helper.make_graph([sizes_node], "g", [x_info, value_info("sizes", np.int64, [4])], y)
    by_sizes = graph_model(sizes_graph)
    empty = np.zeros(0, F32)
    for shape, out in [
        ((1, 1, 8, 8), (1, 1, 3, 5)),
        ((2, 3, 17, 5), (2, 3, 4, 5)),
        ((1, 1, 1, 2), (1, 1, 1, 4)),
    ]:
        data = rand(*shape)
        check_against_ort(by_scales, data, empty, (np.array(out) / np.array(shape)).astype(F32))
        check_against_ort(by_sizes, data, np.array(out, np.int64))


def test_depth_space_and_center_crop_pad() -> None:
    y = [value_info("y", F32, None)]
    d2s = node_model("DepthToSpace", [value_info("x", F32, ["n", 8, "h", "w"])], y, blocksize=2, mode="CRD")
    s2d = node_model("SpaceToDepth", [value_info("x", F32, ["n", 2, 6, 4])], y, blocksize=2)
    for n, h, w in ((1, 1, 1), (2, 3, 2)):
        check_against_ort(d2s, rand(n, 8, h, w))
        check_against_ort(s2d, rand(n, 2, 6, 4))
    ccp = node_model(
        "CenterCropPad",
        [value_info("x", F32, ["n", 5, 4])],
        y,
        [init("shape", np.array([6, 3], np.int64))],
        axes=[1, -1],
    )
    for n in (1, 3):
        data = rand(n, 5, 4)
        start = (4 - 3) // 2
        want = np.pad(data, [(0, 0), (0, 1), (0, 0)])[:, :, start : start + 3]
        np.testing.assert_array_equal(run_ours(ccp, data)[0], want)


@pytest.mark.parametrize(
    ("op", "attrs", "outputs", "match"),
    [
        ("Conv", {"auto_pad": "SAME_MIDDLE"}, 1, "auto_pad' value 'SAME_MIDDLE'"),
        ("MaxPool", {"kernel_shape": [2, 2], "storage_order": 2}, 1, "'storage_order' value 2"),
        ("LpPool", {"kernel_shape": [2, 2], "ceil_mode": 1}, 1, "'ceil_mode' value 1"),
        ("Resize", {"mode": "bicubic"}, 1, "'mode' value 'bicubic'"),
    ],
)
def test_unsupported_attributes(op: str, attrs: dict, outputs: int, match: str) -> None:
    x = value_info("x", F32, [1, 2, 4, 4])
    inits = {
        "Conv": [init("w", rand(2, 2, 1, 1))],
        "Resize": [init("roi", np.array([], F32)), init("scales", np.array([1, 1, 2, 2], F32))],
    }
    outs = [value_info(f"y{i}", F32 if i == 0 else np.int64, None) for i in range(outputs)]
    node = helper.make_node(op, ["x"] + [t.name for t in inits.get(op, [])], [o.name for o in outs], **attrs)
    graph = helper.make_graph([node], "g", [x], outs, inits.get(op, []))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    with pytest.raises(OnnxImportError, match=match):
        from_onnx(model)


@pytest.mark.parametrize(
    ("mode", "padding", "align"), [("linear", "border", 1), ("nearest", "reflection", 0)]
)
def test_grid_sample(mode: str, padding: str, align: int) -> None:
    m = node_model(
        "GridSample",
        [value_info("x", F32, ["n", 2, 4, 5]), value_info("g", F32, ["n", "h", "w", 2])],
        [value_info("y", F32, None)],
        mode=mode,
        padding_mode=padding,
        align_corners=align,
    )
    for n, h, w in ((1, 1, 1), (2, 3, 4)):
        grid = RNG.uniform(-1.6, 1.6, (n, h, w, 2)).astype(F32)
        check_against_ort(m, rand(n, 2, 4, 5), grid)


def test_affine_grid_col2im_max_unpool_upsample() -> None:
    y = [value_info("y", F32, None)]
    for align, n in ((0, 1), (1, 3)):  # 'size' is a constant, so the batch is static
        ag = node_model(
            "AffineGrid",
            [value_info("t", F32, [n, 2, 3])],
            y,
            [init("size", np.array([n, 1, 3, 4], np.int64))],
            align_corners=align,
        )
        check_against_ort(ag, rand(n, 2, 3))
    c2i = node_model(
        "Col2Im",
        [value_info("x", F32, ["n", 4, 10])],
        y,
        [init("image", np.array([4, 5], np.int64)), init("block", np.array([2, 2], np.int64))],
        strides=[2, 1],
        pads=[0, 1, 1, 0],
    )
    for n in (1, 2):
        check_against_ort(c2i, rand(n, 4, 10))
    unpool = node_model(
        "MaxUnpool",
        [value_info("x", F32, ["n", 1, 2, 2]), value_info("i", np.int64, ["n", 1, 2, 2])],
        y,
        kernel_shape=[2, 2],
        strides=[2, 2],
    )
    for n in (1, 2):
        idx = np.stack([np.array([[[0, 3], [9, 14]]]) + 16 * b for b in range(n)]).astype(np.int64)
        check_against_ort(unpool, rand(n, 1, 2, 2), idx)
    up = node_model(
        "Upsample",
        [value_info("x", F32, ["n", 2, "h", 3]), value_info("s", F32, [4])],
        y,
        opset=9,
        mode="nearest",
    )
    scales = init("s", np.array([1, 1, 2, 1.5], F32))
    up.graph.initializer.append(scales)
    for n, h in ((1, 1), (2, 3)):
        check_against_ort(up, rand(n, 2, h, 3))


@pytest.mark.parametrize(("mode", "coord"), [("avg", "half_pixel"), ("max", "output_half_pixel")])
def test_roi_align(mode: str, coord: str) -> None:
    m = node_model(
        "RoiAlign",
        [
            value_info("x", F32, [2, 3, 6, 7]),
            value_info("rois", F32, ["r", 4]),
            value_info("b", np.int64, ["r"]),
        ],
        [value_info("y", F32, None)],
        mode=mode,
        coordinate_transformation_mode=coord,
        output_height=3,
        output_width=2,
        sampling_ratio=2,
        spatial_scale=0.5,
    )
    for r in (1, 3):
        corners = RNG.uniform(-2, 15, (r, 2, 2)).astype(F32)
        rois = np.concatenate([corners.min(axis=1), corners.max(axis=1)], axis=1)
        check_against_ort(m, rand(2, 3, 6, 7), rois, RNG.integers(0, 2, r).astype(np.int64))


def test_deform_conv() -> None:
    m = node_model(
        "DeformConv",
        [
            value_info("x", F32, ["n", 4, 5, 5]),
            value_info("w", F32, [2, 2, 2, 2]),
            value_info("off", F32, ["n", 16, 3, 4]),
            value_info("b", F32, [2]),
            value_info("mask", F32, ["n", 8, 3, 4]),
        ],
        [value_info("y", F32, None)],
        group=2,
        offset_group=2,
        strides=[2, 1],
        pads=[1, 0, 0, 0],
    )
    for n in (1, 2):
        check_against_ort(m, rand(n, 4, 5, 5), rand(2, 2, 2, 2), rand(n, 16, 3, 4), rand(2), rand(n, 8, 3, 4))


@pytest.mark.parametrize("target", [[0, 3], [1, 1], [5, 2], [9, 7]])
def test_center_crop_pad_with_runtime_shape(target: list[int]) -> None:
    """The target shape is a graph input: crop, pad or both per axis at run time (onnxruntime's values)."""
    node = helper.make_node("CenterCropPad", ["x", "shape"], ["y"], axes=[0, 2])
    g = helper.make_graph(
        [node],
        "ccp",
        [value_info("x", np.float32, ["h", 3, "w"]), value_info("shape", np.int64, [2])],
        [value_info("y", np.float32, None)],
    )
    x = np.random.default_rng(sum(target)).standard_normal((6, 3, 4)).astype(np.float32)
    check_against_ort(graph_model(g, 18), x, np.array(target, np.int64))
