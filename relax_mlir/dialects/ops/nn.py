"""Neural-network ops: softmax and normalizations (convolutions, pooling and resize live in their own modules).

Lowering: statistics are ``linalg.generic`` reductions over the normalized axes into tensors of the
kept dims (softmax subtracts the max before exponentiating; norms scale each row by a power of two
so that no sum or square overflows, and take variances around the mean in a second pass), and one
parallel ``linalg.generic`` writes the result. ``group_norm`` works on views
that split the channels into (groups, channels per group).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from mlir import ir

from relax_mlir.dialects.dims import (
    fmt_shape,
    join_dtype,
    normalize_axes,
    normalize_axis,
    provably_different,
    tensor_operand,
)

# Convolutions, pooling and resize were split out of this module; they stay importable from it.
from relax_mlir.dialects.ops.conv import (  # noqa: F401
    Conv1dOp,
    Conv2dOp,
    ConvOp,
    conv1d,
    conv2d,
)
from relax_mlir.dialects.ops.pool import (  # noqa: F401
    AdaptiveAvgPool2dOp,
    AvgPool2dOp,
    MaxPool2dOp,
    Pool2dOp,
    adaptive_avg_pool2d,
    avg_pool2d,
    max_pool2d,
)
from relax_mlir.dialects.ops.resize import RESIZE_COORDINATES, RESIZE_METHODS, ResizeOp, resize  # noqa: F401
from relax_mlir.dialects.ops.window import (
    empty_like_dims,
    fill_tensor,
    float_operand,
    index_to_float,
    require_known_result,
)
from relax_mlir.dialects.registry import Attr, Operand, RelaxOp, relax_op
from relax_mlir.dialects.types import Dim, RelaxType, TensorType
from relax_mlir.errors import ShapeError
from relax_mlir.lowering.kernel import KernelBuilder, KernelValue, element, identity
from relax_mlir.shape_infer.expr import floordiv


class SoftmaxBaseOp(RelaxOp):
    """Base of softmax and log_softmax along ``axis``."""

    FUSION = "reduction"

    OPERANDS = (Operand("x"),)
    ATTRS = (Attr("axis", "int"),)

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = float_operand(operand_types[0], "x")
        if x.shape is not None:
            normalize_axis(attrs["axis"], len(x.shape))
        return [x]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        require_known_result(k)
        x, out = k.ins[0], k.outs[0]
        axis = normalize_axis(k.attrs["axis"], x.rank)
        t = element(x.dtype)
        red = _Reduction(x, [axis])
        neg_inf = k.constant(float("-inf"), x.dtype)
        top = _reduce(k, x, [axis], neg_inf, lambda a: f"arith.maximumf {a[1]}, {a[0]}")

        if cls.NAME == "softmax":
            # one exp per element: e = exp(x - max) is kept while summing, then out = e * (1 / sum); an
            # f16 sum accumulates in f32 (as numpy and ONNX Runtime do)
            acc = "f32" if x.dtype == "f16" else x.dtype
            ta = element(acc)
            total = fill_tensor(
                k, k.constant(0.0, acc), empty_like_dims(k, [(x, i) for i in range(x.rank) if i != axis], acc)
            )

            def exp_sum(a: list[str]) -> list[str]:
                e = k.scalar(f"math.exp {k.scalar(f'arith.subf {a[0]}, {a[1]}', t)}", t)
                wide = e if acc == x.dtype else k.typed(f"arith.extf {e} : {t} to {ta}")
                return [e, k.scalar(f"arith.addf {a[3]}, {wide}", ta)]

            exps = empty_like_dims(k, [(x, i) for i in range(x.rank)], x.dtype)
            maps = [red.full, red.kept, red.full, red.kept]
            exps, total = k.generic([x, top], [exps, total], maps, red.iterators, exp_sum)
            maps = [red.full, red.kept, red.full]
            if x.dtype in ("f16", "bf16"):  # 16 bits: a rounded reciprocal would round twice; divide

                def divide(a: list[str]) -> list[str]:
                    s = a[1] if acc == x.dtype else k.typed(f"arith.truncf {a[1]} : {ta} to {t}")
                    return [k.scalar(f"arith.divf {a[0]}, {s}", t)]

                [r] = k.generic([exps, total], [out], maps, ["parallel"] * x.rank, divide)
                return [r]
            one = k.constant(1.0, x.dtype)
            inv = _map_in_place(k, total, lambda v: k.scalar(f"arith.divf {one}, {v}", t))
            [r] = k.generic(
                [exps, inv],
                [out],
                maps,
                ["parallel"] * x.rank,
                lambda a: [k.scalar(f"arith.mulf {a[0]}, {a[1]}", t)],
            )
            return [r]

        total = _stat(k, x, [axis], k.constant(0.0, x.dtype))

        def log_sum_exp(a: list[str]) -> list[str]:
            e = k.scalar(f"math.exp {k.scalar(f'arith.subf {a[0]}, {a[1]}', t)}", t)
            return [k.scalar(f"arith.addf {a[2]}, {e}", t)]

        [total] = k.generic([x, top], [total], [red.full, red.kept, red.kept], red.iterators, log_sum_exp)
        total = _map_in_place(k, total, lambda v: k.scalar(f"math.log {v}", t))

        def normalize(a: list[str]) -> list[str]:
            return [k.scalar(f"arith.subf {k.scalar(f'arith.subf {a[0]}, {a[1]}', t)}, {a[2]}", t)]

        maps = [red.full, red.kept, red.kept, red.full]
        [r] = k.generic([x, top, total], [out], maps, ["parallel"] * x.rank, normalize)
        return [r]


@relax_op
class SoftmaxOp(SoftmaxBaseOp):
    """exp(x) / sum(exp(x)) along ``axis``.

    ``%y = "relax.softmax"(%x) {axis = -1 : i64} : (!relax.tensor<["b", "s"], f32>) -> !relax.tensor<["b", "s"], f32>``
    """

    NAME = "softmax"


@relax_op
class LogSoftmaxOp(SoftmaxBaseOp):
    """log(softmax(x)) along ``axis``.

    ``%y = "relax.log_softmax"(%x) {axis = -1 : i64} : (!relax.tensor<["b", 10], f32>) -> !relax.tensor<["b", 10], f32>``
    """

    NAME = "log_softmax"


def softmax(x: ir.Value, axis: int = -1, *, loc: ir.Location | None = None) -> ir.Value:
    """Softmax of ``x`` along ``axis``."""
    return SoftmaxOp.build([x], {"axis": axis}, loc=loc).result


def log_softmax(x: ir.Value, axis: int = -1, *, loc: ir.Location | None = None) -> ir.Value:
    """Log-softmax of ``x`` along ``axis``."""
    return LogSoftmaxOp.build([x], {"axis": axis}, loc=loc).result


def _check_params(
    x: TensorType, params: Sequence[tuple[RelaxType | None, str]], expected: Sequence[Dim]
) -> list[Dim]:
    """Per-channel/per-feature parameters: tensors of x's dtype and exactly the ``expected`` shape.

    What x does not know (its dtype, dims of ``expected`` that are None) is taken from the first
    parameter that knows it, so that the parameters also have to agree with each other. Returns
    ``expected`` with the dims learned from the parameters.
    """
    expected = list(expected)
    source = [""] * len(expected)
    ref, ref_name = x, "x"
    for t, name in params:
        p = tensor_operand(t, name)
        join_dtype(ref, p, (ref_name, name))
        if ref.dtype is None and p.dtype is not None:
            ref, ref_name = p, name
        if p.shape is None:
            continue
        if len(p.shape) != len(expected) or any(provably_different(a, b) for a, b in zip(p.shape, expected)):
            learned = sorted({s for s in source if s})
            like = f" (like {', '.join(repr(s) for s in learned)})" if learned else ""
            raise ShapeError(f"'{name}' {fmt_shape(p.shape)} must have shape {fmt_shape(expected)}{like}")
        for i, d in enumerate(p.shape):
            if expected[i] is None and d is not None:
                expected[i], source[i] = d, name
    return expected


def _normalized_shape(x: TensorType, axes: Sequence[int]) -> list[Dim]:
    """The dims of x over ``axes`` (unknown dims when x's rank is unknown)."""
    if x.shape is None:
        if len(set(axes)) != len(axes):
            raise ShapeError(f"axes {list(axes)} repeat an axis")
        return [None] * len(axes)
    return [x.shape[a] for a in normalize_axes(axes, len(x.shape))]


@relax_op
class LayerNormOp(RelaxOp):
    """(x - mean) / sqrt(var + epsilon) * gamma + beta over ``axes``.

    ``%y = "relax.layer_norm"(%x, %g, %b) {axes = [-1], epsilon = 1.0e-05 : f64} : (!relax.tensor<["b", "s", 512], f32>,
    !relax.tensor<[512], f32>, !relax.tensor<[512], f32>) -> !relax.tensor<["b", "s", 512], f32>``
    """

    NAME = "layer_norm"
    FUSION = "reduction"
    OPERANDS = (Operand("x"), Operand("gamma"), Operand("beta"))
    ATTRS = (Attr("axes", "ints"), Attr("epsilon", "float"))

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = float_operand(operand_types[0], "x")
        params = list(zip(operand_types[1:], ("gamma", "beta")))
        _check_params(x, params, _normalized_shape(x, attrs["axes"]))
        return [x]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        return [_normalize(k, normalize_axes(k.attrs["axes"], k.ins[0].rank), centered=True)]


def layer_norm(
    x: ir.Value,
    gamma: ir.Value,
    beta: ir.Value,
    axes: Sequence[int] = (-1,),
    epsilon: float = 1e-5,
    *,
    loc: ir.Location | None = None,
) -> ir.Value:
    """Layer normalization of ``x`` over ``axes``."""
    return LayerNormOp.build([x, gamma, beta], {"axes": axes, "epsilon": epsilon}, loc=loc).result


@relax_op
class RmsNormOp(RelaxOp):
    """x / sqrt(mean(x**2) + epsilon) * gamma over ``axes``.

    ``%y = "relax.rms_norm"(%x, %g) {axes = [-1], epsilon = 1.0e-05 : f64} : (!relax.tensor<["s", 512], f32>,
    !relax.tensor<[512], f32>) -> !relax.tensor<["s", 512], f32>``
    """

    NAME = "rms_norm"
    FUSION = "reduction"
    OPERANDS = (Operand("x"), Operand("gamma"))
    ATTRS = (Attr("axes", "ints"), Attr("epsilon", "float"))

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = float_operand(operand_types[0], "x")
        _check_params(x, [(operand_types[1], "gamma")], _normalized_shape(x, attrs["axes"]))
        return [x]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        return [_normalize(k, normalize_axes(k.attrs["axes"], k.ins[0].rank), centered=False)]


def rms_norm(
    x: ir.Value,
    gamma: ir.Value,
    axes: Sequence[int] = (-1,),
    epsilon: float = 1e-5,
    *,
    loc: ir.Location | None = None,
) -> ir.Value:
    """RMS normalization of ``x`` over ``axes``."""
    return RmsNormOp.build([x, gamma], {"axes": axes, "epsilon": epsilon}, loc=loc).result


@relax_op
class GroupNormOp(RelaxOp):
    """Normalize channel groups of an (N, C, ...) tensor, then scale by gamma[C] and shift by beta[C].

    ``%y = "relax.group_norm"(%x, %g, %b) {epsilon = 1.0e-05 : f64, num_groups = 8 : i64}
    : (!relax.tensor<["n", 32, 7, 7], f32>, !relax.tensor<[32], f32>, !relax.tensor<[32], f32>)
    -> !relax.tensor<["n", 32, 7, 7], f32>``
    """

    NAME = "group_norm"
    OPERANDS = (Operand("x"), Operand("gamma"), Operand("beta"))
    ATTRS = (Attr("num_groups", "int"), Attr("epsilon", "float"))

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = float_operand(operand_types[0], "x")
        groups = attrs["num_groups"]
        if groups <= 0:
            raise ShapeError(f"num_groups must be positive, got {groups}")
        if x.shape is not None and len(x.shape) < 2:
            raise ShapeError(f"operand 'x' {fmt_shape(x.shape)} needs a channel dim (rank >= 2)")
        channels = None if x.shape is None else x.shape[1]
        (channels,) = _check_params(x, list(zip(operand_types[1:], ("gamma", "beta"))), [channels])
        if channels is not None and channels.is_const and channels.value % groups:
            raise ShapeError(f"{channels.value} channels do not divide into {groups} groups")
        return [x]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        require_known_result(k)
        x, groups = k.ins[0], k.attrs["num_groups"]
        per_group = floordiv(x.shape[1], groups)
        channels = per_group * groups  # the caller checks that the channels divide into the groups
        k.assume(0, (x.shape[0], channels, *x.shape[2:]))
        k.assume(1, (channels,))
        k.assume(2, (channels,))
        x, gamma, beta = k.ins
        rank = x.rank + 1
        split = [[0], [1, 2], *([i + 1] for i in range(2, x.rank))]
        shape = (x.shape[0], groups, per_group, *x.shape[2:])
        xg, og = k.expand(x, split, shape), k.expand(k.outs[0], split, shape)
        gamma, beta = (k.expand(p, [[0, 1]], (groups, per_group)) for p in (gamma, beta))
        m = _moments(k, xg, list(range(2, rank)), k.attrs["epsilon"], centered=True)
        ds = ", ".join(f"d{i}" for i in range(rank))
        maps = [identity(rank), *[f"({ds}) -> (d0, d1)"] * 3, *[f"({ds}) -> (d1, d2)"] * 2, identity(rank)]
        t = element(x.dtype)

        def body(a: list[str]) -> list[str]:
            return [_affine(k, t, _scaled(k, t, a[0], a[1], a[2]), a[3], a[4], a[5])]

        [r] = k.generic([xg, m.scale, m.shift, m.inv, gamma, beta], [og], maps, ["parallel"] * rank, body)
        return [k.collapse(r, split)]


def group_norm(
    x: ir.Value,
    gamma: ir.Value,
    beta: ir.Value,
    num_groups: int,
    epsilon: float = 1e-5,
    *,
    loc: ir.Location | None = None,
) -> ir.Value:
    """Group normalization of ``x``."""
    attrs = {"num_groups": num_groups, "epsilon": epsilon}
    return GroupNormOp.build([x, gamma, beta], attrs, loc=loc).result


@relax_op
class BatchNormOp(RelaxOp):
    """Inference batch norm: (x - mean) / sqrt(var + epsilon) * gamma + beta along channel ``axis``.

    ``%y = "relax.batch_norm"(%x, %g, %b, %m, %v) {axis = 1 : i64, epsilon = 1.0e-05 : f64}
    : (!relax.tensor<["n", 64, "h", "w"], f32>, !relax.tensor<[64], f32>, !relax.tensor<[64], f32>,
    !relax.tensor<[64], f32>, !relax.tensor<[64], f32>) -> !relax.tensor<["n", 64, "h", "w"], f32>``
    """

    NAME = "batch_norm"
    FUSION = "broadcast"
    OPERANDS = (Operand("x"), Operand("gamma"), Operand("beta"), Operand("mean"), Operand("var"))
    ATTRS = (Attr("axis", "int"), Attr("epsilon", "float"))

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = float_operand(operand_types[0], "x")
        channels = None if x.shape is None else x.shape[normalize_axis(attrs["axis"], len(x.shape))]
        _check_params(x, list(zip(operand_types[1:], ("gamma", "beta", "mean", "var"))), [channels])
        return [x]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        require_known_result(k)
        x = k.ins[0]
        axis = normalize_axis(k.attrs["axis"], x.rank)
        for i in range(1, 5):
            k.assume(i, (x.shape[axis],))
        t = element(x.dtype)
        eps = k.constant(k.attrs["epsilon"], x.dtype)

        def body(a: list[str]) -> list[str]:
            inv = k.scalar(f"math.rsqrt {k.scalar(f'arith.addf {a[4]}, {eps}', t)}", t)
            return [_affine(k, t, k.scalar(f"arith.subf {a[0]}, {a[3]}", t), inv, a[1], a[2])]

        ds = ", ".join(f"d{i}" for i in range(x.rank))
        maps = [identity(x.rank), *[f"({ds}) -> (d{axis})"] * 4, identity(x.rank)]
        [r] = k.generic(k.ins, [k.outs[0]], maps, ["parallel"] * x.rank, body)
        return [r]


def batch_norm(
    x: ir.Value,
    gamma: ir.Value,
    beta: ir.Value,
    mean: ir.Value,
    var: ir.Value,
    axis: int = 1,
    epsilon: float = 1e-5,
    *,
    loc: ir.Location | None = None,
) -> ir.Value:
    """Inference batch normalization of ``x``."""
    return BatchNormOp.build([x, gamma, beta, mean, var], {"axis": axis, "epsilon": epsilon}, loc=loc).result


# -- lowering helpers ----------------------------------------------------------------------------------


class _Reduction:
    """Indexing maps and iterators of a reduction of ``x`` over ``axes`` into a tensor of the kept dims."""

    def __init__(self, x: KernelValue, axes: Sequence[int]) -> None:
        ds = ", ".join(f"d{i}" for i in range(x.rank))
        self.keep = [i for i in range(x.rank) if i not in axes]
        self.full = identity(x.rank)
        self.kept = f"({ds}) -> ({', '.join(f'd{i}' for i in self.keep)})"
        self.iterators = ["reduction" if i in axes else "parallel" for i in range(x.rank)]


def _stat(k: KernelBuilder, x: KernelValue, axes: Sequence[int], init: str) -> KernelValue:
    """A tensor of ``x``'s dims without ``axes``, filled with ``init``."""
    dest = empty_like_dims(k, [(x, i) for i in range(x.rank) if i not in axes], x.dtype)
    return fill_tensor(k, init, dest)


def _reduce(
    k: KernelBuilder, x: KernelValue, axes: Sequence[int], init: str, combine: Callable[[list[str]], str]
) -> KernelValue:
    """Reduce ``x`` over ``axes`` starting from ``init``; ``combine`` gets (element, accumulator), gives op text."""
    red = _Reduction(x, axes)
    t = element(x.dtype)
    [r] = k.generic(
        [x],
        [_stat(k, x, axes, init)],
        [red.full, red.kept],
        red.iterators,
        lambda a: [k.scalar(combine(a), t)],
    )
    return r


def _map_in_place(k: KernelBuilder, v: KernelValue, fn: Callable[[str], str]) -> KernelValue:
    """Apply the scalar function ``fn`` to every element of ``v``, writing into ``v``."""
    [r] = k.generic([], [v], [identity(v.rank)], ["parallel"] * v.rank, lambda a: [fn(a[0])])
    return r


# per float dtype: width, exponent bits, smallest positive (subnormal) value
_FLOAT_BITS = {
    "f16": (16, 0x7C00, 2.0**-24),
    "bf16": (16, 0x7F80, 2.0**-133),
    "f32": (32, 0x7F800000, 2.0**-149),
    "f64": (64, 0x7FF << 52, 2.0**-1074),
}


def _pow2_floor(k: KernelBuilder, v: str, dtype: str) -> str:
    """The largest power of two <= ``v`` (a positive normal float): its exponent bits alone."""
    width, mask, _ = _FLOAT_BITS[dtype]
    t, i = element(dtype), f"i{width}"
    bits = k.scalar(f"arith.bitcast {v}", f"{t} to {i}")
    exponent = k.scalar(f"arith.andi {bits}, {k.constant(mask, f'i{width}')}", i)
    return k.scalar(f"arith.bitcast {exponent}", f"{i} to {t}")


@dataclass
class _Moments:
    """Per-row statistics such that the normalized ``x`` is ``(x * scale - shift) * inv``.

    ``scale`` is a power of two (exact) that brings the row's largest magnitude into [1, 2) when it
    is above 1, so neither the squares nor ``x - mean`` overflow for finite inputs, however large;
    ``shift`` is ``mean * scale`` (None for RMS normalization) and ``inv`` is
    ``1 / sqrt(mean((x * scale - shift)**2) + epsilon * scale**2)``.
    """

    scale: KernelValue
    shift: KernelValue | None
    inv: KernelValue


def _moments(
    k: KernelBuilder, x: KernelValue, axes: Sequence[int], epsilon: float, centered: bool
) -> _Moments:
    """The statistics of ``x`` over ``axes`` (see ``_Moments``), which cannot overflow for finite ``x``.

    Reductions: max|x|, and if ``centered`` the sum of ``x * c`` where ``c`` is the power of two <= 1/n
    (exact; the sum stays within max|x|); then the squares of the scaled, centered values. (One
    generic with both first results does not vectorize: 6x slower.) The row schedule runs them all
    on one row in cache.
    """
    t, dtype = element(x.dtype), x.dtype
    count_index = k.const(1)
    for a in axes:
        count_index = k.scalar(f"arith.muli {count_index}, {k.dim(x, a)}", "index")
    count = index_to_float(k, count_index, dtype)
    zero, one = k.constant(0.0, dtype), k.constant(1.0, dtype)
    red = _Reduction(x, axes)
    amax = _reduce(k, x, axes, zero, lambda a: f"arith.maximumf {a[1]}, {k.scalar(f'math.absf {a[0]}', t)}")
    if centered:
        c = _pow2_floor(k, k.scalar(f"arith.divf {one}, {count}", t), dtype)
        mean_of_sum = k.scalar(f"arith.divf {one}, {k.scalar(f'arith.mulf {c}, {count}', t)}", t)
        total = _reduce(
            k, x, axes, zero, lambda a: f"arith.addf {a[1]}, {k.scalar(f'arith.mulf {a[0]}, {c}', t)}"
        )

    def finish(a: list[str]) -> list[str]:
        """(shift, scale) of a row from its (sum, max|x|), written over them."""
        biggest = k.scalar(f"arith.maximumf {a[-1]}, {one}", t)
        scale = k.scalar(f"arith.divf {one}, {_pow2_floor(k, biggest, dtype)}", t)
        if not centered:
            return [scale]
        mean = k.scalar(f"arith.mulf {a[0]}, {mean_of_sum}", t)
        return [k.scalar(f"arith.mulf {mean}, {scale}", t), scale]

    stats = [total, amax] if centered else [amax]
    rows = (identity(len(red.keep)), ["parallel"] * len(red.keep))
    [*shift, scale] = k.generic([], stats, [rows[0]] * len(stats), rows[1], finish)

    def square(a: list[str]) -> list[str]:
        d = k.scalar(f"arith.mulf {a[0]}, {a[1]}", t)
        if centered:
            d = k.scalar(f"arith.subf {d}, {a[2]}", t)
        return [k.scalar(f"arith.addf {a[-1]}, {k.scalar(f'arith.mulf {d}, {d}', t)}", t)]

    ins = [x, scale, *shift]
    [squares] = k.generic(
        ins, [_stat(k, x, axes, zero)], [red.full, *[red.kept] * len(ins)], red.iterators, square
    )
    eps, tiny = k.constant(epsilon, dtype), k.constant(_FLOAT_BITS[dtype][2], dtype)

    def inverse(a: list[str]) -> list[str]:
        tiny_eps = k.scalar(f"arith.mulf {k.scalar(f'arith.mulf {eps}, {a[0]}', t)}, {a[0]}", t)
        var = k.scalar(f"arith.addf {k.scalar(f'arith.divf {a[1]}, {count}', t)}, {tiny_eps}", t)
        # epsilon * scale**2 may underflow: a zero variance must still give a finite inverse
        return [k.scalar(f"math.rsqrt {k.scalar(f'arith.maximumf {var}, {tiny}', t)}", t)]

    [inv] = k.generic([scale], [squares], [rows[0]] * 2, rows[1], inverse)
    return _Moments(scale, shift[0] if shift else None, inv)


def _scaled(k: KernelBuilder, t: str, x: str, scale: str, shift: str | None) -> str:
    """x * scale - shift (no shift when None)."""
    v = k.scalar(f"arith.mulf {x}, {scale}", t)
    return v if shift is None else k.scalar(f"arith.subf {v}, {shift}", t)


def _affine(k: KernelBuilder, t: str, v: str, inv: str, gamma: str, beta: str | None) -> str:
    """v * inv * gamma + beta, leaving out beta when None."""
    v = k.scalar(f"arith.mulf {k.scalar(f'arith.mulf {v}, {inv}', t)}, {gamma}", t)
    return v if beta is None else k.scalar(f"arith.addf {v}, {beta}", t)


def _normalize(k: KernelBuilder, axes: list[int], centered: bool) -> KernelValue:
    """layer_norm (``centered``, with beta) or rms_norm over ``axes``: gamma's dims follow ``axes``' order."""
    require_known_result(k)
    x = k.ins[0]
    for i in range(1, len(k.ins)):
        k.assume(i, [x.shape[a] for a in axes])
    m = _moments(k, x, axes, k.attrs["epsilon"], centered)
    red = _Reduction(x, axes)
    ds = ", ".join(f"d{i}" for i in range(x.rank))
    param = f"({ds}) -> ({', '.join(f'd{a}' for a in axes)})"
    t = element(x.dtype)
    stats = [m.scale, m.inv] if m.shift is None else [m.scale, m.shift, m.inv]
    ins = [x, *stats, *k.ins[1:]]
    maps = [red.full, *[red.kept] * len(stats), *[param] * (len(k.ins) - 1), red.full]

    def body(a: list[str]) -> list[str]:
        if centered:
            return [_affine(k, t, _scaled(k, t, a[0], a[1], a[2]), a[3], a[4], a[5])]
        return [_affine(k, t, _scaled(k, t, a[0], a[1], None), a[2], a[3], None)]

    [r] = k.generic(ins, [k.outs[0]], maps, ["parallel"] * x.rank, body)
    return r
