"""Group-quantized weights: ``relax.dequantize`` turns packed integers and per-group scales into f32.

A quantized linear weight is ``[rows, k]`` (llama.cpp/GGUF order ``[out, in]``) in groups of 32 values
along ``k`` (the reduction axis), each group with one scale. Three storage layouts of that one concept:

- ``q8_0``: data ``i8 [rows, k]``; value = q * scale.
- ``q4_0`` (llama.cpp's Q4_0 with its 18-byte blocks split into two planar arrays): data ``ui8 [rows, k/2]``;
  in each group (16 bytes) byte j holds value j in its low nibble and value j+16 in its high nibble;
  value = (nibble - 8) * scale.
- ``q4f16_1`` (MLC): data ``ui32 [rows, k/8]``; word w holds values 8w..8w+7, value i at bits 4*(i%8);
  value = (nibble - 7) * scale.

Scales are ``[rows, k/32]``, f16 or f32. ``relax_mlir.llm.quant`` makes these arrays from numpy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mlir import ir

from relax_mlir.dialects.dims import provably_different, tensor_operand
from relax_mlir.dialects.registry import Attr, Operand, RelaxOp, relax_op
from relax_mlir.dialects.types import RelaxType, TensorType
from relax_mlir.errors import ShapeError
from relax_mlir.lowering.kernel import KernelBuilder, KernelValue, identity
from relax_mlir.shape_infer.expr import Expr, format_dim

GROUP = 32  # values per scale
# layout -> (data dtype, values per data element, zero point)
LAYOUTS = {"q8_0": ("i8", 1, 0), "q4_0": ("ui8", 2, 8), "q4f16_1": ("ui32", 8, 7)}
SCALE_DTYPES = ("f16", "f32")


@relax_op
class DequantizeOp(RelaxOp):
    """A group-quantized ``[rows, k]`` weight as f32 (``k = 32 * scales.shape[1]``; layouts in the module doc).

    ``%w = "relax.dequantize"(%d, %s) {layout = "q4_0"} : (!relax.tensor<["rows", 32], ui8>,
    !relax.tensor<["rows", 2], f16>) -> !relax.tensor<["rows", 64], f32>``
    """

    NAME = "dequantize"
    OPERANDS = (Operand("data"), Operand("scales"))
    ATTRS = (Attr("layout", "str"),)

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        data, scales = tensor_operand(operand_types[0], "data"), tensor_operand(operand_types[1], "scales")
        layout = attrs["layout"]
        if layout not in LAYOUTS:
            raise ShapeError(f"unknown layout '{layout}'; expected one of {', '.join(sorted(LAYOUTS))}")
        dtype, per, _ = LAYOUTS[layout]
        if data.dtype is not None and data.dtype != dtype:
            raise ShapeError(f"layout {layout} needs {dtype} data, got {data.dtype}")
        if scales.dtype is not None and scales.dtype not in SCALE_DTYPES:
            raise ShapeError(f"scales must be f16 or f32, got {scales.dtype}")
        for name, t in (("data", data), ("scales", scales)):
            if t.shape is not None and len(t.shape) != 2:
                raise ShapeError(f"operand '{name}' must have rank 2 ([rows, ...]), got rank {len(t.shape)}")
        d_rows, d_cols = data.shape if data.shape is not None else (None, None)
        s_rows, groups = scales.shape if scales.shape is not None else (None, None)
        if provably_different(d_rows, s_rows):
            raise ShapeError(f"data has {format_dim(d_rows)} rows but scales have {format_dim(s_rows)}")
        expected_cols = None if groups is None else groups * (GROUP // per)
        if provably_different(d_cols, expected_cols):
            raise ShapeError(
                f"layout {layout}: {format_dim(groups)} groups of {GROUP} need {format_dim(expected_cols)} "
                f"data columns, got {format_dim(d_cols)}"
            )
        rows = d_rows if d_rows is not None else s_rows
        k = groups * GROUP if groups is not None else (None if d_cols is None else d_cols * per)
        return [TensorType((rows, k), "f32")]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        """One parallel ``linalg.generic`` over the result: each element reads its byte/word and its scale."""
        data, scales = k.ins
        out = k.destination(0)
        rows = out.shape[0]
        groups: Expr | None = scales.shape[1] if scales.shape is not None else None
        if rows is None or groups is None:
            raise k.fail(
                f"the rows or groups of {data.type} and {scales.type} are unknown: state them with relax.match_cast"
            )
        dtype, per, zero = LAYOUTS[k.attrs["layout"]]
        k.assume(0, (rows, groups * (GROUP // per)))
        k.assume(1, (rows, groups))
        data, scales = k.ins

        def body(_: list[str]) -> list[str]:
            r = k.scalar("linalg.index 0", "index")
            j = k.scalar("linalg.index 1", "index")
            g = k.scalar(f"arith.divui {j}, {k.const(GROUP)}", "index")
            scale = k.scalar(f"tensor.extract {scales.name}[{r}, {g}]", scales.mlir)
            if scales.dtype == "f16":
                scale = k.typed(f"arith.extf {scale} : f16 to f32")
            q = _quantized(k, data, r, j, g, per)
            if zero:
                q = k.scalar(f"arith.subf {q}, {k.constant(float(zero), 'f32')}", "f32")
            return [k.scalar(f"arith.mulf {q}, {scale}", "f32")]

        return k.generic([], [out], [identity(2)], ["parallel", "parallel"], body)


def _quantized(k: KernelBuilder, data: KernelValue, r: str, j: str, g: str, per: int) -> str:
    """Value ``j`` of row ``r`` as f32 before the zero point and scale: a signed byte or an unsigned nibble."""
    if per == 1:
        q = k.scalar(f"tensor.extract {data.name}[{r}, {j}]", data.mlir)
        return k.typed(f"arith.sitofp {q} : i8 to f32")
    if per == 2:  # group g's bytes 16g..16g+15; value w < 16 in the low nibble, w >= 16 in the high one
        w = k.scalar(f"arith.remui {j}, {k.const(GROUP)}", "index")
        low = k.scalar(f"arith.remui {w}, {k.const(16)}", "index")
        at = k.scalar(f"arith.addi {k.scalar(f'arith.muli {g}, {k.const(16)}', 'index')}, {low}", "index")
        high = k.scalar(f"arith.cmpi uge, {w}, {k.const(16)}", "index")
        shift = k.scalar(f"arith.select {high}, {k.constant(4, 'i8')}, {k.constant(0, 'i8')}", "i8")
        bits, t = "i8", "i8"
    else:  # word j/8, value j%8 at bits 4*(j%8)
        at = k.scalar(f"arith.divui {j}, {k.const(8)}", "index")
        lane = k.scalar(f"arith.remui {j}, {k.const(8)}", "index")
        lane32 = k.typed(f"arith.index_cast {lane} : index to i32")
        shift = k.scalar(f"arith.muli {lane32}, {k.constant(4, 'i32')}", "i32")
        bits, t = "i32", "i32"
    word = k.scalar(f"tensor.extract {data.name}[{r}, {at}]", data.mlir)
    nibble = k.scalar(f"arith.andi {k.scalar(f'arith.shrui {word}, {shift}', t)}, {k.constant(15, t)}", t)
    return k.typed(f"arith.uitofp {nibble} : {bits} to f32")


def dequantize(data: ir.Value, scales: ir.Value, layout: str, *, loc: ir.Location | None = None) -> ir.Value:
    """The f32 ``[rows, k]`` weight that ``data`` and ``scales`` store in ``layout`` (q8_0, q4_0, q4f16_1)."""
    return DequantizeOp.build([data, scales], {"layout": layout}, loc=loc).result
