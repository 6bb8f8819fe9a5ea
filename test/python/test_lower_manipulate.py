"""Kernels of the manipulation and indexing ops against numpy, several shapes per compiled function.

Each case is compiled once (``compile_fn`` memoizes) and run at several sizes of its symbolic dims,
including 1, odd sizes and 0 where numpy allows it. These ops only move data, so results must be
bit-exact.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from oprun import build_fn, compile_fn, rand

import relax_mlir.builder as rb
from relax_mlir.dialects import relax as R
from relax_mlir.dialects.ops import index, manipulate, pad
from relax_mlir.errors import InputError, RelaxError

BIG = 2**63 - 1  # ONNX's "to the end"


@dataclass
class Case:
    """A function of symbolic parameters, inputs per size, and the numpy result for them."""

    id: str
    params: dict[str, Any]
    body: Callable[..., Any]
    inputs: Callable[..., tuple[np.ndarray, ...]]
    ref: Callable[..., Any]
    sizes: tuple[Any, ...] = (1, 4, 0, 7)


def f32(*shape: int) -> np.ndarray:
    return rand(shape)


def i32(*shape: int) -> np.ndarray:
    return rand(shape, np.int32, -50, 50)


def i64(*shape: int) -> np.ndarray:
    return rand(shape, np.int64, -50, 50)


def ids(low: int, high: int, shape: tuple[int, ...], dtype: Any = np.int64) -> np.ndarray:
    """Indices in [low, high) (negative ones count from the end)."""
    return np.random.default_rng(sum(shape) + high).integers(low, high, size=shape).astype(dtype)


def T(shape: list[Any], dtype: str = "f32") -> Any:
    return rb.tensor(shape, dtype)


def heads(x: Any) -> tuple[Any, Any]:
    """Split a [b, s, 512] activation into 8 heads of 64 and merge them back."""
    h = R.permute_dims(R.reshape(x, ["b", "s", 8, 64]), [0, 2, 1, 3])
    return h, R.reshape(R.permute_dims(h, [0, 2, 1, 3]), [0, 0, -1])


def np_heads(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    b, s, _ = x.shape
    return x.reshape(b, s, 8, 64).transpose(0, 2, 1, 3), x


def scatter_ref(axis: int) -> Callable[..., np.ndarray]:
    def ref(x: np.ndarray, i: np.ndarray, u: np.ndarray) -> np.ndarray:
        out = x.copy()
        part = out[tuple(slice(None) if d == axis else slice(0, n) for d, n in enumerate(i.shape))]
        np.put_along_axis(part, np.where(i < 0, i + x.shape[axis], i), u, axis)  # part is a view of out
        return out

    return ref


def scatter_reduce_ref(ufuncs: list[np.ufunc]) -> Callable[..., tuple[np.ndarray, ...]]:
    """ScatterElements along axis 0 of 2-D ``x``, combining each update with ``ufunc`` (in order)."""

    def ref(x: np.ndarray, i: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, ...]:
        rows, cols = np.where(i < 0, i + x.shape[0], i), np.indices(i.shape)[1]
        outs = []
        for ufunc in ufuncs:
            out = x.copy()
            ufunc.at(out, (rows, cols), u)
            outs.append(out)
        return tuple(outs)

    return ref


def pad_ref(x: np.ndarray, widths: list[int], **kw: Any) -> np.ndarray:
    """numpy.pad with ONNX's negative widths (crop) for the constant mode."""
    pairs = list(zip(widths[0::2], widths[1::2]))
    crop = tuple(slice(max(-b, 0), x.shape[i] - max(-a, 0)) for i, (b, a) in enumerate(pairs))
    return np.pad(x[crop], [(max(b, 0), max(a, 0)) for b, a in pairs], **kw)


CASES = [
    # -- reshape -------------------------------------------------------------------------------------------------
    Case(
        "reshape-heads",
        {"x": T(["b", "s", 512])},
        heads,
        lambda b, s: (f32(b, s, 512),),
        np_heads,
        ((1, 1), (2, 3), (3, 7), (2, 0), (1, 5)),
    ),
    Case(
        "reshape-merge-split-i32",  # [b * s, 64] -> [b, s, 8, 8] splits one dynamic dim into two: tensor.reshape
        {"x": T(["b", "s", 64], "i32")},
        lambda x: (R.reshape(R.reshape(x, [-1, 64]), ["b", "s", 8, 8]), R.reshape(x, [-1])),
        lambda b, s: (i32(b, s, 64),),
        lambda x: (x.reshape(x.shape[0], x.shape[1], 8, 8), x.reshape(-1)),
        ((1, 1), (2, 3), (3, 0), (5, 1)),
    ),
    Case(
        "reshape-even",  # counts equal only for even n: checked at run time
        {"x": T(["n"])},
        lambda x: R.reshape(x, [2, -1]),
        lambda n: (f32(n),),
        lambda x: x.reshape(2, -1),
        (2, 0, 6, 10),
    ),
    Case(
        "reshape-unknown-dim",  # x's first dim is unknown: stated to be b * s and checked
        {"x": T(["?", 512]), "y": T(["b", "s"])},
        lambda x, y: R.reshape(x, ["b", "s", 8, 64]),
        lambda b, s: (f32(b * s, 512), f32(b, s)),
        lambda x, y: x.reshape(*y.shape, 8, 64),
        ((1, 1), (2, 3), (3, 0)),
    ),
    Case(
        "reshape-scalar",
        {"x": T([1, "n"])},
        lambda x: (R.reshape(R.reshape(x, [-1, 1]), []), R.reshape(R.reshape(x, [-1]), [1, 1, 1])),
        lambda n: (f32(1, n),),
        lambda x: (x.reshape(()), x.reshape(1, 1, 1)),
        (1,),
    ),
    # -- permute_dims ---------------------------------------------------------------------------------------------
    Case(
        "permute-reverse",
        {"x": T(["n", 3, "m"])},
        lambda x: R.permute_dims(x),
        lambda n, m: (f32(n, 3, m),),
        lambda x: x.transpose(),
        ((1, 1), (4, 5), (0, 2), (7, 1)),
    ),
    Case(
        "permute-negative-i64",
        {"x": T(["n", 2, 3], "i64")},
        lambda x: R.permute_dims(x, [-1, 0, 1]),
        lambda n: (i64(n, 2, 3),),
        lambda x: x.transpose(2, 0, 1),
    ),
    # -- expand_dims / squeeze / flatten ---------------------------------------------------------------------------
    Case(
        "expand-dims",
        {"x": T(["n", "m"])},
        lambda x: R.expand_dims(x, [0, 2, -1]),
        lambda n, m: (f32(n, m),),
        lambda x: x[None, :, None, :, None],
        ((1, 1), (4, 3), (0, 5), (7, 2)),
    ),
    Case(
        "expand-dims-scalar-i32",
        {"x": T([], "i32"), "y": T(["n"], "i32")},
        lambda x, y: (R.expand_dims(x, [0, 1]), R.expand_dims(y, [-1])),
        lambda n: (i32(), i32(n)),
        lambda x, y: (x.reshape(1, 1), y[:, None]),
    ),
    Case(
        "squeeze-i32",
        {"x": T(["n", 1, "m", 1], "i32")},
        lambda x: R.squeeze(x, [1, -1]),
        lambda n, m: (i32(n, 1, m, 1),),
        lambda x: x[:, 0, :, 0],
        ((1, 1), (4, 3), (0, 2), (7, 0)),
    ),
    Case(
        "squeeze-symbolic",  # k must be 1 at run time
        {"x": T(["n", "k"])},
        lambda x: R.squeeze(x, [1]),
        lambda n: (f32(n, 1),),
        lambda x: x[:, 0],
        (1, 4, 0),
    ),
    Case(
        "flatten",
        {"x": T(["n", 3, "m"])},
        lambda x: (R.flatten(x, 1), R.flatten(x), R.flatten(x, 0, -2)),
        lambda n, m: (f32(n, 3, m),),
        lambda x: (
            x.reshape(x.shape[0], 3 * x.shape[2]),
            x.reshape(-1),
            x.reshape(3 * x.shape[0], x.shape[2]),
        ),
        ((1, 1), (4, 5), (0, 2), (3, 0)),
    ),
    Case(
        "flatten-scalar",
        {"x": T([]), "y": T(["n"])},
        lambda x, y: (R.flatten(x), R.flatten(y)),
        lambda n: (f32(), f32(n)),
        lambda x, y: (x.reshape(1), y),
    ),
    # -- concat / split ---------------------------------------------------------------------------------------------
    Case(
        "concat",
        {"x": T(["n", 4]), "y": T(["m", 4])},
        lambda x, y: R.concat([x, y, x], 0),
        lambda n, m: (f32(n, 4), f32(m, 4)),
        lambda x, y: np.concatenate([x, y, x], 0),
        ((1, 1), (0, 3), (5, 0), (7, 2)),
    ),
    Case(
        "concat-last-i32",
        {"x": T(["b", "s"], "i32"), "y": T(["b", 1], "i32")},
        lambda x, y: R.concat([y, x], -1),
        lambda b, s: (i32(b, s), i32(b, 1)),
        lambda x, y: np.concatenate([y, x], -1),
        ((1, 1), (3, 0), (2, 5)),
    ),
    Case(
        "split-indices",
        {"x": T(["n", 7])},
        lambda x: tuple(R.split(x, [2, 5], 1)),
        lambda n: (f32(n, 7),),
        lambda x: tuple(np.split(x, [2, 5], 1)),
    ),
    Case(
        "split-indices-clamped",  # indices past the dim give empty parts, as in numpy
        {"x": T(["n"], "i64")},
        lambda x: tuple(R.split(x, [2, 5, 5])),
        lambda n: (i64(n),),
        lambda x: tuple(np.split(x, [2, 5, 5])),
        (0, 1, 3, 5, 9),
    ),
    Case(
        "split-static-empty-parts",  # empty parts at the start and the end of a static dim
        {"x": T([5, "n"])},
        lambda x: tuple(R.split(x, [0, 0, 5])),
        lambda n: (f32(5, n),),
        lambda x: tuple(np.split(x, [0, 0, 5])),
        (1, 3),
    ),
    Case(
        "split-sections",
        {"x": T([3, "n"])},
        lambda x: tuple(R.split(x, 2, -1)),
        lambda n: (f32(3, n),),
        lambda x: tuple(np.split(x, 2, -1)),
        (2, 0, 6, 10),
    ),
    # -- broadcast_to / tile / repeat --------------------------------------------------------------------------------
    Case(
        "broadcast-to",
        {"x": T(["n", 1]), "s": T([])},
        lambda x, s: (R.broadcast_to(x, [2, "n", 4]), R.broadcast_to(s, ["n", 2])),
        lambda n: (f32(n, 1), f32()),
        lambda x, s: (np.broadcast_to(x, (2, x.shape[0], 4)), np.broadcast_to(s, (x.shape[0], 2))),
    ),
    Case(
        "broadcast-to-symbolic-i32",
        {"x": T([1, "m"], "i32"), "y": T(["b", "m"], "i32")},
        lambda x, y: R.broadcast_to(x, ["b", "m"]),
        lambda b, m: (i32(1, m), i32(b, m)),
        lambda x, y: np.broadcast_to(x, y.shape),
        ((1, 1), (3, 5), (0, 2), (4, 0)),
    ),
    Case(
        "tile",
        {"x": T(["n", 3])},
        lambda x: (R.tile(x, [2, 1, 3]), R.tile(x, [0, 2])),
        lambda n: (f32(n, 3),),
        lambda x: (np.tile(x, [2, 1, 3]), np.tile(x, [0, 2])),
    ),
    Case(
        "tile-dynamic-i32",  # a dynamic dim repeated: read at i mod n
        {"x": T(["n"], "i32"), "y": T(["n", 2], "i32")},
        lambda x, y: (R.tile(x, [3]), R.tile(x, [2, 2]), R.tile(y, [2, 1, 3])),
        lambda n: (i32(n), i32(n, 2)),
        lambda x, y: (np.tile(x, 3), np.tile(x, [2, 2]), np.tile(y, [2, 1, 3])),
    ),
    Case(
        "repeat",
        {"x": T(["n", 3])},
        lambda x: (R.repeat(x, 3, 0), R.repeat(x, 2, -1), R.repeat(x, 2), R.repeat(x, 0, 1)),
        lambda n: (f32(n, 3),),
        lambda x: (np.repeat(x, 3, 0), np.repeat(x, 2, -1), np.repeat(x, 2), np.repeat(x, 0, 1)),
    ),
    Case(
        "repeat-tile-i64",  # scalars included
        {"x": T(["n", "m"], "i64"), "s": T([], "i64")},
        lambda x, s: (R.repeat(x, 2, 1), R.repeat(s, 3), R.tile(s, [2, 3])),
        lambda n, m: (i64(n, m), i64()),
        lambda x, s: (np.repeat(x, 2, 1), np.repeat(s, 3), np.tile(s, [2, 3])),
        ((1, 1), (3, 5), (0, 2)),
    ),
    # -- pad ------------------------------------------------------------------------------------------------------
    Case(
        "pad-constant",
        {"x": T(["n", 3])},
        lambda x: R.pad(x, [1, 2, 0, 1], "constant", 1.5),
        lambda n: (f32(n, 3),),
        lambda x: pad_ref(x, [1, 2, 0, 1], constant_values=1.5),
    ),
    Case(
        "pad-crop",  # negative widths remove elements (ONNX)
        {"x": T(["n", 5])},
        lambda x: R.pad(x, [1, 0, -1, -2], "constant", float("-inf")),
        lambda n: (f32(n, 5),),
        lambda x: pad_ref(x, [1, 0, -1, -2], constant_values=-np.inf),
    ),
    Case(
        "pad-crop-symbolic",
        {"x": T(["n"], "i32")},
        lambda x: R.pad(x, [-1, 2], "constant", 7.0),
        lambda n: (i32(n),),
        lambda x: pad_ref(x, [-1, 2], constant_values=7),
        (1, 4, 7),
    ),
    Case(
        "pad-runtime-crop",  # widths and value read at run time (ONNX Pad with a pads input)
        {"x": T(["n", 5]), "p": T([4], "i64"), "v": T([], "f32")},
        lambda x, p, v: R.pad_runtime(x, p, v),
        lambda n: (f32(n, 5), np.array([1, 0, -1, 2], np.int64), np.array(2.5, np.float32)),
        lambda x, p, v: pad_ref(x, [1, 0, -1, 2], constant_values=2.5),
    ),
    Case(
        "pad-reflect",  # widths larger than the dim reflect again, as numpy does
        {"x": T(["n", 3])},
        lambda x: R.pad(x, [2, 3, 4, 1], "reflect"),
        lambda n: (f32(n, 3),),
        lambda x: np.pad(x, [(2, 3), (4, 1)], mode="reflect"),
        (1, 2, 5, 4),
    ),
    Case(
        "pad-edge-i32",
        {"x": T(["n", "m"], "i32")},
        lambda x: R.pad(x, [2, 3, -1, 2], "edge"),
        lambda n, m: (i32(n, m),),
        lambda x: np.pad(x[:, 1:], [(2, 3), (0, 2)], mode="edge"),
        ((1, 2), (5, 4), (2, 7)),
    ),
    Case(
        "pad-wrap",  # widths larger than the dim wrap around again, as numpy does
        {"x": T(["n", 3])},
        lambda x: R.pad(x, [2, 3, 4, 1], "wrap"),
        lambda n: (f32(n, 3),),
        lambda x: np.pad(x, [(2, 3), (4, 1)], mode="wrap"),
        (1, 2, 5),
    ),
    # -- tril / triu ----------------------------------------------------------------------------------------------------
    Case(
        "tril-triu",
        {"x": T(["n", "m"])},
        lambda x: (R.tril(x), R.tril(x, -1), R.triu(x, 1), R.triu(x, -2)),
        lambda n, m: (f32(n, m),),
        lambda x: (np.tril(x), np.tril(x, -1), np.triu(x, 1), np.triu(x, -2)),
        ((1, 1), (4, 3), (0, 2), (3, 7)),
    ),
    Case(
        "tril-triu-batched-i32",
        {"x": T([2, "s", "s"], "i32")},
        lambda x: (R.tril(x, 2), R.triu(x)),
        lambda s: (i32(2, s, s),),
        lambda x: (np.tril(x, 2), np.triu(x)),
    ),
    Case(
        "bool",  # booleans are stored as bytes
        {"x": T(["s", "s"], "i1")},
        lambda x: (R.tril(x), R.pad(x, [1, 0, 0, 2], "constant", 1.0), R.permute_dims(x), R.tile(x, [1, 2])),
        lambda s: (rand((s, s), np.bool_),),
        lambda x: (np.tril(x), np.pad(x, [(1, 0), (0, 2)], constant_values=True), x.T, np.tile(x, [1, 2])),
        (1, 4, 5, 0),
    ),
    # -- take / gather_elements / scatter_elements --------------------------------------------------------------------
    Case(
        "take",  # negative indices count from the end (ONNX Gather)
        {"x": T(["n", 3]), "i": T(["b", "s"], "i64")},
        lambda x, i: R.take(x, i, 0),
        lambda n, b, s: (f32(n, 3), ids(-n, n, (b, s))),
        lambda x, i: np.take(x, i, 0),
        ((1, 1, 1), (5, 2, 3), (4, 0, 2), (7, 3, 1)),
    ),
    Case(
        "take-last-axis-i32",
        {"x": T([2, "n"], "i32"), "i": T(["s"], "i32")},
        lambda x, i: R.take(x, i, -1),
        lambda n, s: (i32(2, n), ids(-n, n, (s,), np.int32)),
        lambda x, i: np.take(x, i, -1),
        ((1, 1), (5, 4), (3, 0), (7, 9)),
    ),
    Case(
        "index-range",  # the min and max of indices (relax.check_index's operands); an empty tensor's pass any check
        {"i": T(["b", "s"], "i32")},
        lambda i: R.index_range(i),
        lambda b, s: (ids(-9, 9, (b, s), np.int32),),
        lambda i: (
            np.array(i.min() if i.size else 2**63 - 1, np.int64),
            np.array(i.max() if i.size else -(2**63), np.int64),
        ),
        ((1, 1), (3, 5), (0, 2)),
    ),
    Case(
        "take-scalar-index",
        {"x": T(["n", 4]), "i": T([], "i64")},
        lambda x, i: R.take(x, i, 1),
        lambda n: (f32(n, 4), np.array(-1, np.int64)),
        lambda x, i: np.take(x, i, 1),
    ),
    Case(
        "gather-elements",
        {"x": T(["n", 4]), "i": T(["n", 2], "i64")},
        lambda x, i: R.gather_elements(x, i, 1),
        lambda n: (f32(n, 4), ids(-4, 4, (n, 2))),
        lambda x, i: np.take_along_axis(x, np.where(i < 0, i + 4, i), 1),
    ),
    Case(
        "gather-elements-axis0-i32",
        {"x": T(["n", 3], "i32"), "i": T(["m", 3], "i32")},
        lambda x, i: R.gather_elements(x, i, 0),
        lambda n, m: (i32(n, 3), ids(-n, n, (m, 3), np.int32)),
        lambda x, i: np.take_along_axis(x, np.where(i < 0, i + x.shape[0], i), 0),
        ((1, 1), (5, 3), (4, 0), (3, 7)),
    ),
    Case(
        "gather-elements-fewer-rows",  # indices may be smaller than x off the axis (ONNX)
        {"x": T(["n", 4]), "i": T(["m", 2], "i64")},
        lambda x, i: R.gather_elements(x, i, 1),
        lambda n, m: (f32(n, 4), ids(-4, 4, (m, 2))),
        lambda x, i: np.take_along_axis(x[: i.shape[0]], np.where(i < 0, i + 4, i), 1),
        ((3, 2), (1, 1), (5, 0), (4, 4)),
    ),
    Case(
        "scatter-elements-fewer-rows",
        {"x": T(["n", 5]), "i": T(["m", 2], "i64"), "u": T(["m", 2])},
        lambda x, i, u: R.scatter_elements(x, i, u, 1),
        lambda n, m: (f32(n, 5), np.tile(np.array([[4, -5]]), (m, 1)), f32(m, 2)),
        scatter_ref(1),
        ((3, 2), (1, 1), (5, 0), (4, 4)),
    ),
    Case(
        "scatter-elements",
        {"x": T(["n", 4]), "i": T([2, 4], "i64"), "u": T([2, 4])},
        lambda x, i, u: R.scatter_elements(x, i, u, 0),
        lambda n: (f32(n, 4), np.array([[0, -1, 1, -2], [-1, 0, -2, 1]]), f32(2, 4)),  # no duplicate targets
        scatter_ref(0),
        (2, 5, 4),
    ),
    Case(
        "scatter-elements-axis1-i32",
        {"x": T([3, "n"], "i32"), "i": T([3, "k"], "i32"), "u": T([3, "k"], "i32")},
        lambda x, i, u: R.scatter_elements(x, i, u, -1),
        lambda n, k: (i32(3, n), np.argsort(rand((3, n)), axis=1)[:, :k].astype(np.int32), i32(3, k)),
        scatter_ref(1),
        ((1, 1), (5, 3), (4, 0), (7, 7)),
    ),
    Case(
        "scatter-elements-reductions",  # duplicate targets combine in order
        {"x": T(["n", 3]), "i": T(["k", 3], "i64"), "u": T(["k", 3])},
        lambda x, i, u: tuple(R.scatter_elements(x, i, u, 0, r) for r in ("add", "mul", "max", "min")),
        lambda n, k: (f32(n, 3), ids(-n, n, (k, 3)), f32(k, 3)),
        scatter_reduce_ref([np.add, np.multiply, np.maximum, np.minimum]),
        ((1, 1), (5, 9), (4, 0), (3, 2)),
    ),
    Case(
        "scatter-elements-reductions-i32",
        {"x": T(["n", 3], "i32"), "i": T(["k", 3], "i32"), "u": T(["k", 3], "i32")},
        lambda x, i, u: tuple(R.scatter_elements(x, i, u, 0, r) for r in ("add", "max", "min")),
        lambda n, k: (i32(n, 3), ids(-n, n, (k, 3), np.int32), i32(k, 3)),
        scatter_reduce_ref([np.add, np.maximum, np.minimum]),
        ((1, 1), (5, 9), (3, 2)),
    ),
    # -- strided_slice ----------------------------------------------------------------------------------------------
    Case(
        "strided-slice-static-empty",  # an empty static slice has no valid offset: nothing is copied
        {"x": T([4, "n"])},
        lambda x: (R.strided_slice(x, [0], [2], [2]), R.strided_slice(x, [0], [4], [BIG])),
        lambda n: (f32(4, n),),
        lambda x: (x[2:2], x[4:]),
        (1, 3),
    ),
    Case(
        "strided-slice",
        {"x": T(["b", "n"])},
        lambda x: R.strided_slice(x, [1], [1], [-1], [2]),
        lambda n: (f32(2, n),),
        lambda x: x[:, 1:-1:2],
        (0, 1, 2, 6, 7),
    ),
    Case(
        "strided-slice-negative-strides",
        {"x": T(["n", "m"])},
        lambda x: R.strided_slice(x, [1, 0], [-1, 5], [-BIG, 0], [-2, -1]),
        lambda n, m: (f32(n, m),),
        lambda x: x[5:0:-1, ::-2],
        ((1, 1), (3, 6), (7, 7), (0, 3), (9, 2)),
    ),
    Case(
        "strided-slice-symbolic-i32",  # a KV cache [b, t, 4] cut at a length s given by another input
        {"x": T(["b", "t", 4], "i32"), "q": T(["s"], "i32")},
        lambda x, q: (
            R.strided_slice(x, [1], [0], ["s"]),
            R.strided_slice(x, [-2, 2], ["s", -3], [BIG, BIG], [1, 2]),
        ),
        lambda t, s: (i32(2, t, 4), i32(s)),
        lambda x, q: (x[:, : q.shape[0]], x[:, q.shape[0] :, -3::2]),
        ((5, 3), (3, 5), (4, 0), (1, 1), (0, 2)),
    ),
]


def _unpack(size: Any) -> tuple[Any, ...]:
    return size if isinstance(size, tuple) else (size,)


def _equal(got: np.ndarray, want: np.ndarray, what: str) -> None:
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype}, expected {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape}, expected {want.shape}"
    np.testing.assert_array_equal(got, want, err_msg=what)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_against_numpy(case: Case) -> None:
    exe = compile_fn(case.params, case.body)
    for size in case.sizes:
        args = case.inputs(*_unpack(size))
        got, want = exe(*args), case.ref(*args)
        if not isinstance(want, tuple):
            got, want = (got,), (want,)
        assert len(got) == len(want)
        for j, (g, w) in enumerate(zip(got, want)):
            _equal(g, np.asarray(w), f"{case.id} at size {size}, result #{j}")


def test_every_op_is_lowered_and_tested() -> None:
    ops = {
        cls.NAME
        for mod in (manipulate, pad, index)
        for cls in vars(mod).values()
        if hasattr(cls, "OPERATION_NAME")
    }
    assert all(hasattr(R.OPS[name], "lower") for name in ops)
    used = set()
    for case in CASES:
        text = str(build_fn(case.params, case.body))
        used |= {name for name in ops if f'"relax.{name}"' in text}
    assert used == ops


def test_reflect_pad_of_an_empty_dim_gives_the_value() -> None:
    """numpy refuses to reflect an empty dim; the kernel fills with the value instead of reading outside x."""
    exe = compile_fn({"x": T(["n", 2])}, lambda x: R.pad(x, [1, 2, 1, 0], "reflect", 3.0))
    np.testing.assert_array_equal(exe(f32(0, 2)), np.full((3, 3), 3.0, np.float32))
    x = f32(3, 2)
    np.testing.assert_array_equal(exe(x), np.pad(x, [(1, 2), (1, 0)], mode="reflect"))


def test_out_of_range_indices_raise() -> None:
    """Indices outside [-d, d) are an error, as in numpy (more cases in test_index_bounds.py)."""
    exe = compile_fn({"x": T(["n"]), "i": T(["s"], "i64")}, lambda x, i: R.take(x, i))
    x = f32(4)
    with pytest.raises(InputError, match=r"index 9 out of range for axis 0 of size 4 in relax.take"):
        exe(x, np.array([9, 3, 2], np.int64))
    np.testing.assert_array_equal(exe(x, np.array([-4, 3, 2], np.int64)), x[[0, 3, 2]])


def test_assumed_dims_are_checked_at_run_time() -> None:
    """Dims the deduction accepted but a kernel needs equal are checked before the kernel runs."""
    reshape = compile_fn({"x": T(["n"])}, lambda x: R.reshape(x, [2, -1]))
    with pytest.raises(InputError, match=r"relax.check_size: .* must be 2 \* \(n floordiv 2\), got 5"):
        reshape(f32(5))
    squeeze = compile_fn({"x": T(["n", "k"])}, lambda x: R.squeeze(x, [1]))
    with pytest.raises(InputError, match=r"dim 1 of .*\[\"n\", \"k\"\].* must be 1, got 2"):
        squeeze(f32(3, 2))
    split = compile_fn({"x": T([3, "n"])}, lambda x: tuple(R.split(x, 2, -1)))
    with pytest.raises(InputError, match=r"must be 2 \* \(n floordiv 2\), got 3"):
        split(f32(3, 3))
    concat = compile_fn({"x": T(["n", "k"]), "y": T(["m", 4])}, lambda x, y: R.concat([x, y], 0))
    with pytest.raises(InputError, match=r"dim 1 of .*\[\"n\", \"k\"\].* must be 4, got 5"):
        concat(f32(2, 5), f32(3, 4))
    unknown = compile_fn(
        {"x": T(["?", 512]), "y": T(["b", "s"])}, lambda x, y: R.reshape(x, ["b", "s", 8, 64])
    )
    with pytest.raises(InputError, match=r"relax.check_size.* must be 512 \* b \* s, got 2560"):
        unknown(f32(5, 512), f32(2, 3))
    with pytest.raises(InputError, match="parameter 'x' dim 1 is 4, expected 512"):
        unknown(f32(6, 4), f32(2, 3))


def test_reshape_compares_element_counts() -> None:
    """A reshape whose counts are equal only at run time compares the counts, not dims: ``[n, w] -> [n, 2]``
    holds at n = 0 whatever w is (asserting w == 2 was a false InputError)."""
    exe = compile_fn({"x": T(["n", "w"])}, lambda x: R.reshape(x, ["n", 2]))
    for n, w in ((0, 5), (0, 2), (3, 2), (1, 2)):
        x = f32(n, w)
        _equal(exe(x), x.reshape(n, 2), f"[{n}, {w}] -> [n, 2]")
    with pytest.raises(InputError, match=r"must be 2 \* n, got 15"):
        exe(f32(3, 5))
    split = compile_fn({"x": T([12]), "y": T(["b"])}, lambda x, y: R.reshape(x, ["b", -1]))
    x = f32(12)
    _equal(split(x, f32(3)), x.reshape(3, 4), "[12] -> [b, 12 floordiv b]")
    with pytest.raises(InputError, match=r"must be b \* \(12 floordiv b\), got 12"):
        split(x, f32(5))


def test_unsupported_cases_raise_clear_errors() -> None:
    with pytest.raises(RelaxError, match=r"relax.permute_dims.*unknown dim"):
        compile_fn({"x": T(["n", "?"])}, lambda x: R.permute_dims(x))


def test_scatter_reduction_is_checked() -> None:
    with pytest.raises(RelaxError, match=r"reduction must be one of none, add, mul, max, min, got 'sum'"):
        build_fn(
            {"x": T([3]), "i": T([1], "i64"), "u": T([1])},
            lambda x, i, u: R.scatter_elements(x, i, u, 0, "sum"),
        )
    with pytest.raises(RelaxError, match=r"reduction 'max' is not defined for i1 tensors"):
        build_fn(
            {"x": T([3], "i1"), "i": T([1], "i64"), "u": T([1], "i1")},
            lambda x, i, u: R.scatter_elements(x, i, u, 0, "max"),
        )


def test_concat_with_an_empty_part() -> None:
    f = compile_fn(
        {"x": rb.tensor(["n", 3]), "y": rb.tensor(["n", 0])}, lambda x, y: R.concat([y, x, y], axis=1)
    )
    for n in (1, 4):
        x, y = rand((n, 3)), rand((n, 0))
        np.testing.assert_array_equal(f(x, y), np.concatenate([y, x, y], axis=1))
