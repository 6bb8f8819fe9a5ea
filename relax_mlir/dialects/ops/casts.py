"""Dtype conversions: ``astype`` (value conversion, numpy's rules) and ``bitcast`` (the same bits).

``astype`` truncates floats toward zero (to i8/i16/ui8 through i32, wrapping as numpy does on x86;
values out of the target's range are otherwise undefined), maps anything to i1 as ``!= 0`` (NaN is
true), and extends i1 and ui8 as unsigned; float8/float4 and sub-byte integers go through
``lowering.minifloat``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mlir import ir

from relax_mlir.dialects.dims import tensor_operand
from relax_mlir.dialects.registry import Attr, Operand, RelaxOp, relax_op
from relax_mlir.dialects.rewrite import attr_value, tensor_of
from relax_mlir.dialects.types import DTYPE_BYTES, RelaxType, TensorType
from relax_mlir.errors import ShapeError
from relax_mlir.lowering import minifloat
from relax_mlir.lowering.kernel import SUB_BYTE_INTS, KernelBuilder, KernelValue, element, is_float
from relax_mlir.lowering.scalar import Emit, Scalar, lower_elementwise, type_bits


def _astype(e: Emit, args: list[str]) -> str:
    """Convert from ``e.dtype`` to the result's dtype (i1 is a 0/1 byte: unsigned, 8 bits wide)."""
    x, src, dst = args[0], e.dtype, e.k.result_types[0].dtype
    if minifloat.is_minifloat(dst):  # float8/float4: encoded with integer ops
        return minifloat.encode(e, *minifloat.widen(e, x, src, element(src), e.unsigned), dst)
    if minifloat.is_minifloat(src):
        return _astype(Emit(e.k, "f32"), [minifloat.decode(e, x, src)])
    if src in SUB_BYTE_INTS or dst in SUB_BYTE_INTS:  # bytes holding the value in their low bits
        return minifloat.sub_byte_astype(e, x, src, dst, lambda v, s: _astype(Emit(e.k, s), [v]))
    st, dt = element(src), element(dst)
    sb, db = type_bits(st), type_bits(dt)
    if dst == "i1" and src != "i1":
        return e.stored_flag(e.cmp("une" if e.is_float else "ne", x, e.const(0)))
    if e.is_float and is_float(dst):
        if sb == db:  # f16 <-> bf16 (or the same type)
            return (
                x if src == dst else e(f"arith.truncf {e(f'arith.extf {x}', f'{st} to f32')}", f"f32 to {dt}")
            )
        return e(f"arith.{'extf' if db > sb else 'truncf'} {x}", f"{st} to {dt}")
    if e.is_float:
        if db >= 32:
            return e(f"arith.fptosi {x}", f"{st} to {dt}")
        return e(f"arith.trunci {e(f'arith.fptosi {x}', f'{st} to i32')}", f"i32 to {dt}")
    if is_float(dst):
        return e(f"arith.{'ui' if e.unsigned else 'si'}tofp {x}", f"{st} to {dt}")
    if db == sb:
        return x
    if db < sb:
        return e(f"arith.trunci {x}", f"{st} to {dt}")
    return e(f"arith.ext{'u' if e.unsigned else 's'}i {x}", f"{st} to {dt}")


DTYPES = set(DTYPE_BYTES)


@relax_op
class AstypeOp(RelaxOp):
    """Convert the element type.

    ``%y = "relax.astype"(%x) {dtype = "f16"} : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f16>``
    """

    NAME = "astype"
    FUSION = "elementwise"
    OPERANDS = (Operand("x"),)
    ATTRS = (Attr("dtype", "str"),)
    BIT_MOVING = True

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = tensor_operand(operand_types[0], "x")
        if attrs["dtype"] not in DTYPES:
            raise ShapeError(f"unknown dtype '{attrs['dtype']}'; expected one of {', '.join(sorted(DTYPES))}")
        return [TensorType(x.shape, attrs["dtype"])]

    @classmethod
    def canonicalize(cls, op: ir.Operation) -> ir.Value | None:
        """``astype(x)`` to ``x``'s own dtype -> ``x``."""
        x = op.operands[0]
        t = tensor_of(x)
        if t is not None and t.dtype == attr_value(op, "dtype") and x.type == op.results[0].type:
            return x
        return None

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        return lower_elementwise(k, Scalar(_astype, _astype))


def astype(x: ir.Value, dtype: str, *, loc: ir.Location | None = None) -> ir.Value:
    """``x`` converted to ``dtype``."""
    return AstypeOp.build([x], {"dtype": dtype}, loc=loc).result


_BITCAST_DTYPES = (
    "f16",
    "bf16",
    "f32",
    "f64",
    "i1",
    "i8",
    "i16",
    "i32",
    "i64",
    "ui8",
    "ui16",
    "ui32",
    "ui64",
)


@relax_op
class BitcastOp(RelaxOp):
    """Reinterpret each element's bits as another dtype of the same width (numpy's ``view``).

    ``%y = "relax.bitcast"(%x) {dtype = "i32"} : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], i32>``
    """

    NAME = "bitcast"
    OPERANDS = (Operand("x"),)
    ATTRS = (Attr("dtype", "str"),)

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = tensor_operand(operand_types[0], "x")
        dst = attrs["dtype"]
        if dst not in _BITCAST_DTYPES:
            raise ShapeError(f"cannot bitcast to '{dst}'; expected one of {', '.join(_BITCAST_DTYPES)}")
        if x.dtype is not None:
            if x.dtype not in _BITCAST_DTYPES:
                raise ShapeError(f"cannot bitcast from '{x.dtype}'")
            if type_bits(element(x.dtype)) != type_bits(element(dst)):
                raise ShapeError(f"{x.dtype} and {dst} have different widths")
        return [TensorType(x.shape, dst)]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        src, dst = element(k.ins[0].dtype), element(k.result_types[0].dtype)

        def body(a: list[str]) -> str:
            if src == dst:
                return a[0]
            return k.scalar(f"arith.bitcast {a[0]}", f"{src} to {dst}")

        return [k.elementwise(k.ins, k.destination(0, k.elementwise_sizes(k.ins) or []), body)]


def bitcast(x: ir.Value, dtype: str, *, loc: ir.Location | None = None) -> ir.Value:
    """``x``'s bits read as ``dtype`` (same width)."""
    return BitcastOp.build([x], {"dtype": dtype}, loc=loc).result
