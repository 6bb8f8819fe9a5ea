"""Tensor creation ops with symbolic shapes: arange, full (zeros, ones)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from mlir import ir

from relax_mlir.dialects.dims import clamp_nonneg
from relax_mlir.dialects.ops.casts import DTYPES
from relax_mlir.dialects.registry import Attr, RelaxOp, relax_op
from relax_mlir.dialects.types import RelaxType, TensorType
from relax_mlir.errors import ParseError, ShapeError
from relax_mlir.lowering.kernel import KernelBuilder, KernelValue, element, identity, is_float
from relax_mlir.shape_infer.expr import ceildiv, const, parse_dim


def _dtype(attrs: dict[str, Any]) -> str:
    if attrs["dtype"] not in DTYPES:
        raise ShapeError(f"unknown dtype '{attrs['dtype']}'; expected one of {', '.join(sorted(DTYPES))}")
    return attrs["dtype"]


def _dim(value: int | str, what: str) -> Any:
    """A known dim: nothing computes an unknown ("?") size at run time, as no operand carries it."""
    try:
        dim = parse_dim(value)
    except ParseError as e:
        raise ShapeError(f"{what}: {e}") from None
    if dim is None:
        raise ShapeError(f"{what} must be an integer or an expression of defined symbols, got '?'")
    return dim


@relax_op
class ArangeOp(RelaxOp):
    """Evenly spaced values in [start, end) by step; length ceil((end - start) / step), symbolic allowed.

    ``%r = "relax.arange"() {dtype = "i64", end = "n", start = 0 : i64, step = 1 : i64} : () -> !relax.tensor<["n"], i64>``
    """

    NAME = "arange"
    FUSION = "injective"
    OPERANDS = ()
    ATTRS = (Attr("start", "scalar"), Attr("end", "scalar"), Attr("step", "scalar"), Attr("dtype", "str"))

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        dtype = _dtype(attrs)
        start, end, step = attrs["start"], attrs["end"], attrs["step"]
        if step == 0:
            raise ShapeError("step must not be 0")
        if any(isinstance(v, float) for v in (start, end, step)):
            if any(isinstance(v, str) for v in (start, end, step)):
                raise ShapeError("a float range needs constant start, end and step")
            return [TensorType((const(max(math.ceil((end - start) / step), 0)),), dtype)]
        if isinstance(step, str):
            raise ShapeError(f"step must be a constant, got '{step}'")
        s, e = _dim(start, "start"), _dim(end, "end")
        span = e - s if step > 0 else s - e
        return [TensorType((clamp_nonneg(ceildiv(span, abs(step))),), dtype)]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        """A parallel linalg.generic: element i is start + i * step (symbolic starts come as index values)."""
        out, dtype = k.outs[0], k.attrs["dtype"]
        start, step = k.attrs["start"], k.attrs["step"]
        if dtype == "i1":
            raise k.fail("an i1 range is not lowered: build an integer range and compare it")
        if any(isinstance(v, float) for v in (start, k.attrs["end"], step)):
            # computed in f64 like numpy, then converted
            first, delta = k.constant(start, "f64"), k.constant(step, "f64")

            def body(a: list[str]) -> list[str]:
                i = _index_to(k, k.scalar("linalg.index 0", "index"), "f64")
                v = k.scalar(f"arith.addf {first}, {k.scalar(f'arith.mulf {i}, {delta}', 'f64')}", "f64")
                return [_convert_f64(k, v, dtype)]

        else:
            first, delta = k.index(start), k.const(step)

            def body(a: list[str]) -> list[str]:
                i = k.scalar("linalg.index 0", "index")
                v = k.scalar(f"arith.addi {first}, {k.scalar(f'arith.muli {i}, {delta}', 'index')}", "index")
                return [_index_to(k, v, dtype)]

        [r] = k.generic([], [out], [identity(1)], ["parallel"], body)
        return [r]


def arange(
    start: int | float | str,
    end: int | float | str | None = None,
    step: int | float = 1,
    dtype: str = "i64",
    *,
    loc: ir.Location | None = None,
) -> ir.Value:
    """numpy.arange with symbolic bounds: ``arange("n")`` is [0, n)."""
    if end is None:
        start, end = 0, start
    attrs = {"start": start, "end": end, "step": step, "dtype": dtype}
    return ArangeOp.build([], attrs, loc=loc).result


@relax_op
class FullOp(RelaxOp):
    """A tensor of a symbolic shape filled with ``value``.

    ``%z = "relax.full"() {dtype = "f32", shape = ["b", "s"], value = 0.0 : f64} : () -> !relax.tensor<["b", "s"], f32>``
    """

    NAME = "full"
    FUSION = "injective"
    OPERANDS = ()
    ATTRS = (Attr("shape", "dims"), Attr("value", "float"), Attr("dtype", "str"))

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        shape = []
        for i, d in enumerate(attrs["shape"]):
            if isinstance(d, int) and d < 0:
                raise ShapeError(f"shape entry {d} at position {i} is negative")
            shape.append(_dim(d, f"shape entry {i}"))
        return [TensorType(tuple(shape), _dtype(attrs))]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        """``linalg.fill`` of the destination (a float value converted like numpy.full: truncated for ints)."""
        out, value = k.outs[0], k.attrs["value"]
        if not is_float(out.dtype) and not math.isfinite(value):
            raise k.fail(f"cannot fill a {out.dtype} tensor with {value}")
        if out.dtype == "i1":  # stored as a byte holding 0 or 1
            c = k.constant(int(bool(value)), "i8")
        else:
            c = k.constant(value if is_float(out.dtype) else int(value), out.dtype)
        return [k.fill(c, out)]


def full(
    shape: Sequence[int | str], value: float, dtype: str = "f32", *, loc: ir.Location | None = None
) -> ir.Value:
    """A tensor of ``shape`` filled with ``value``."""
    return FullOp.build([], {"shape": shape, "value": value, "dtype": dtype}, loc=loc).result


def zeros(shape: Sequence[int | str], dtype: str = "f32", *, loc: ir.Location | None = None) -> ir.Value:
    """A tensor of zeros (a ``relax.full``)."""
    return full(shape, 0.0, dtype, loc=loc)


def ones(shape: Sequence[int | str], dtype: str = "f32", *, loc: ir.Location | None = None) -> ir.Value:
    """A tensor of ones (a ``relax.full``)."""
    return full(shape, 1.0, dtype, loc=loc)


def _index_to(k: KernelBuilder, v: str, dtype: str) -> str:
    """An index value converted to ``dtype`` (through i64 for floats)."""
    t = element(dtype)
    if not is_float(dtype):
        return k.typed(f"arith.index_cast {v} : index to {t}")
    return k.typed(f"arith.sitofp {k.typed(f'arith.index_cast {v} : index to i64')} : i64 to {t}")


def _convert_f64(k: KernelBuilder, v: str, dtype: str) -> str:
    t = element(dtype)
    if dtype == "f64":
        return v
    if is_float(dtype):
        return k.typed(f"arith.truncf {v} : f64 to {t}")
    return k.typed(f"arith.fptosi {v} : f64 to {t}")
