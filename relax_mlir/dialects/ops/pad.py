"""Padding: constant (negative widths crop, as in ONNX), reflect, edge and wrap modes (numpy.pad)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mlir import ir

from relax_mlir.dialects.dims import clamp_nonneg, tensor_operand
from relax_mlir.dialects.registry import Attr, Operand, RelaxOp, relax_op
from relax_mlir.dialects.types import RelaxType, TensorType
from relax_mlir.errors import ShapeError
from relax_mlir.lowering.kernel import KernelBuilder, KernelValue, builtin_tensor, element, identity
from relax_mlir.shape_infer.expr import const

PAD_MODES = {"constant", "reflect", "edge", "wrap"}


@relax_op
class PadOp(RelaxOp):
    """Pad each dim with ``pad_width`` = [before0, after0, before1, after1, ...].

    ``%y = "relax.pad"(%x) {mode = "constant", pad_width = [0, 0, 1, 1], value = 0.0 : f64}
    : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["n", 6], f32>``
    """

    NAME = "pad"
    OPERANDS = (Operand("x"),)
    ATTRS = (Attr("pad_width", "ints"), Attr("mode", "str"), Attr("value", "float"))

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = tensor_operand(operand_types[0], "x")
        widths, mode = attrs["pad_width"], attrs["mode"]
        if mode not in PAD_MODES:
            raise ShapeError(f"unknown pad mode '{mode}'; expected one of {', '.join(sorted(PAD_MODES))}")
        if len(widths) % 2:
            raise ShapeError(
                f"pad_width needs a before and an after entry per dim, got {len(widths)} entries"
            )
        if x.shape is None:
            return [TensorType(None if not widths else (None,) * (len(widths) // 2), x.dtype)]
        if len(widths) != 2 * len(x.shape):
            raise ShapeError(
                f"pad_width needs {2 * len(x.shape)} entries for rank {len(x.shape)}, got {len(widths)}"
            )
        out = []
        for i, d in enumerate(x.shape):
            before, after = widths[2 * i], widths[2 * i + 1]
            if d is not None and d.is_const and d.value + before + after < 0:
                raise ShapeError(
                    f"pad_width {before}, {after} of dim {i} removes more than its size {d.value}"
                )
            # Negative widths crop (ONNX); a symbolic dim that would go negative is an error at run time.
            out.append(None if d is None else clamp_nonneg(d + before + after))
        return [TensorType(tuple(out), x.dtype)]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        x, out = k.ins[0], k.destination(0)
        widths = k.attrs["pad_width"]
        befores, afters = widths[0::2], widths[1::2]
        if k.attrs["mode"] == "constant":
            return [_pad_constant(k, x, out, befores, afters)]
        return [_pad_index(k, x, out, [k.const(b) for b in befores])]


@relax_op
class PadRuntimeOp(RelaxOp):
    """``relax.pad`` with the widths read at run time from ``pads`` (i64, [before0, after0, before1, ...]) and
    the constant from ``value`` (a 0-d tensor of x's dtype); the result dims are unknown.

    ``%y = "relax.pad_runtime"(%x, %pads, %v) {mode = "reflect"} : (!relax.tensor<["n", 4], f32>,
    !relax.tensor<[4], i64>, !relax.tensor<[], f32>) -> !relax.tensor<["?", "?"], f32>``
    """

    NAME = "pad_runtime"
    OPERANDS = (Operand("x"), Operand("pads"), Operand("value"))
    ATTRS = (Attr("mode", "str"),)

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x, pads = tensor_operand(operand_types[0], "x"), tensor_operand(operand_types[1], "pads")
        value = tensor_operand(operand_types[2], "value")
        if attrs["mode"] not in PAD_MODES:
            raise ShapeError(
                f"unknown pad mode '{attrs['mode']}'; expected one of {', '.join(sorted(PAD_MODES))}"
            )
        if value.shape not in (None, ()) or value.dtype != x.dtype:
            raise ShapeError(f"operand 'value' must be a 0-d tensor of {x.dtype}, got {value}")
        if x.shape is None:
            return [TensorType(None, x.dtype)]
        if pads.dtype != "i64" or pads.shape != (const(2 * len(x.shape)),):
            raise ShapeError(f"operand 'pads' must be an i64 tensor of {2 * len(x.shape)} widths, got {pads}")
        return [TensorType((None,) * len(x.shape), x.dtype)]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        """Each result element reads x at its index minus the before width: folded back into range (reflect,
        edge, wrap) or, outside x, the value (constant; negative widths crop)."""
        x, pads, v = k.ins
        widths = []
        for i in range(2 * x.rank):
            e = k.scalar(f"tensor.extract {pads.name}[{k.const(i)}]", pads.mlir)
            widths.append(k.typed(f"arith.index_cast {e} : i64 to index"))
        befores, afters = widths[0::2], widths[1::2]
        sizes = []
        for a in range(x.rank):
            grow = k.scalar(f"arith.addi {befores[a]}, {afters[a]}", "index")
            total = k.scalar(f"arith.addi {k.dim(x, a)}, {grow}", "index")
            sizes.append(k.scalar(f"arith.maxsi {total}, {k.const(0)}", "index"))
        out = k.destination(0, sizes)
        value = k.scalar(f"tensor.extract {v.name}[]", v.mlir)
        if k.attrs["mode"] != "constant":
            return [_pad_index(k, x, out, befores, value)]
        if x.rank == 0:
            return [k.copy(x, out)]
        zero, t = k.const(0), element(x.dtype)
        lasts = [k.scalar(f"arith.subi {k.dim(x, a)}, {k.const(1)}", "index") for a in range(x.rank)]

        def body(_: list[str]) -> list[str]:
            inside, coords = None, []
            for a in range(x.rank):
                j = k.scalar(f"arith.subi {k.scalar(f'linalg.index {a}', 'index')}, {befores[a]}", "index")
                low = k.scalar(f"arith.cmpi sge, {j}, {zero}", "index")
                high = k.scalar(f"arith.cmpi sle, {j}, {lasts[a]}", "index")
                ok = k.scalar(f"arith.andi {low}, {high}", "i1")
                inside = ok if inside is None else k.scalar(f"arith.andi {inside}, {ok}", "i1")
                clamped = k.scalar(f"arith.maxsi {j}, {zero}", "index")
                coords.append(k.scalar(f"arith.minsi {clamped}, {lasts[a]}", "index"))
            r = k.fresh()
            lines, got = k.capture(lambda: k.scalar(f"tensor.extract {x.name}[{', '.join(coords)}]", x.mlir))
            k.emit(
                f"{r} = scf.if {inside} -> ({t}) {{",
                *("  " + line for line in lines),
                f"  scf.yield {got} : {t}",
                "} else {",
                f"  scf.yield {value} : {t}",
                "}",
            )
            return [r]

        return k.generic([], [out], [identity(out.rank)], ["parallel"] * out.rank, body)[0:1]


def _value(k: KernelBuilder, dtype: str) -> str:
    """The pad value as a scalar of the stored element type (booleans are bytes)."""
    if dtype == "i1":
        return k.scalar(f"arith.constant {int(bool(k.attrs['value']))}", "i8")
    return k.constant(k.attrs["value"], dtype)


def _pad_constant(
    k: KernelBuilder, x: KernelValue, out: KernelValue, befores: list[int], afters: list[int]
) -> KernelValue:
    """Fill the destination with the value, then copy the kept part of ``x`` (negative widths crop it)."""
    value = _value(k, out.dtype)
    filled = k.fill(value, out)
    if any(d == const(0) for d in out.shape):
        return filled
    if any(b < 0 or a < 0 for b, a in zip(befores, afters)):
        kept = [
            d if b >= 0 and a >= 0 else clamp_nonneg(d - max(-b, 0) - max(-a, 0))  # type: ignore[operator]
            for d, b, a in zip(x.shape, befores, afters)
        ]
        starts = [const(max(-b, 0)) for b in befores]
        where = f"[{', '.join(k.mixed(starts))}] [{', '.join(k.mixed(kept))}] [{', '.join(['1'] * x.rank)}]"
        t = TensorType(tuple(kept), x.dtype)
        x = k.op(f"tensor.extract_slice {x.name}{where} : {x.mlir} to {builtin_tensor(t)}", t)
    return k.insert(x, filled, [str(max(b, 0)) for b in befores])


def _pad_index(
    k: KernelBuilder, x: KernelValue, out: KernelValue, befores: list[str], fill: str | None = None
) -> KernelValue:
    """Reflect, edge or wrap padding: each result element reads ``x`` at an index folded back into range.

    numpy rejects these modes on an empty dim that gets padding; here the result is then filled
    with the value instead of reading out of bounds.
    """
    if x.rank == 0:
        return k.copy(x, out)
    value, t = fill or _value(k, out.dtype), element(out.dtype)
    if any(d == const(0) for d in x.shape):
        return k.fill(value, out)
    one, zero = k.const(1), k.const(0)
    dims = [k.dim(x, a) for a in range(x.rank)]
    lasts = [k.scalar(f"arith.subi {d}, {one}", "index") for d in dims]
    reflect, wrap = k.attrs["mode"] == "reflect", k.attrs["mode"] == "wrap"
    # numpy's repeated reflection is periodic with period 2 * (d - 1); d = 1 reads index 0.
    periods = [
        k.scalar(f"arith.maxsi {k.scalar(f'arith.addi {m}, {m}', 'index')}, {one}", "index") for m in lasts
    ]
    empty = None
    for d, e in zip(dims, x.shape):
        if e is not None and e.is_const:
            continue
        is0 = k.scalar(f"arith.cmpi eq, {d}, {zero}", "index")
        empty = is0 if empty is None else k.scalar(f"arith.ori {empty}, {is0}", "i1")

    def read(ivs: list[str]) -> str:
        coords = []
        for axis, (iv, b) in enumerate(zip(ivs, befores)):
            j = k.scalar(f"arith.subi {iv}, {b}", "index")
            if wrap:  # periodic with period d
                r = k.scalar(f"arith.remsi {j}, {dims[axis]}", "index")
                s = k.scalar(f"arith.addi {r}, {dims[axis]}", "index")
                coords.append(k.scalar(f"arith.remsi {s}, {dims[axis]}", "index"))
            elif reflect:
                p = periods[axis]
                r = k.scalar(f"arith.remsi {j}, {p}", "index")
                m = k.scalar(f"arith.remsi {k.scalar(f'arith.addi {r}, {p}', 'index')}, {p}", "index")
                inside = k.scalar(f"arith.cmpi sle, {m}, {lasts[axis]}", "index")
                mirrored = k.scalar(f"arith.subi {p}, {m}", "index")
                coords.append(k.scalar(f"arith.select {inside}, {m}, {mirrored}", "index"))
            else:
                j = k.scalar(f"arith.maxsi {j}, {zero}", "index")
                coords.append(k.scalar(f"arith.minsi {j}, {lasts[axis]}", "index"))
        return k.scalar(f"tensor.extract {x.name}[{', '.join(coords)}]", x.mlir)

    def body(_: list[str]) -> list[str]:
        ivs = [
            k.scalar(f"linalg.index {a}", "index") for a in range(x.rank)
        ]  # not inside scf.if: needs linalg
        if empty is None:
            return [read(ivs)]
        lines, v = k.capture(lambda: read(ivs))
        r = k.fresh()
        k.emit(
            f"{r} = scf.if {empty} -> ({t}) {{",
            f"  scf.yield {value} : {t}",
            "} else {",
            *("  " + line for line in lines),
            f"  scf.yield {v} : {t}",
            "}",
        )
        return [r]

    return k.generic([], [out], [identity(out.rank)], ["parallel"] * out.rank, body)[0]


def pad(
    x: ir.Value,
    pad_width: Sequence[int],
    mode: str = "constant",
    value: float = 0.0,
    *,
    loc: ir.Location | None = None,
) -> ir.Value:
    """``x`` padded by ``pad_width`` (before/after per dim)."""
    return PadOp.build([x], {"pad_width": pad_width, "mode": mode, "value": value}, loc=loc).result


def pad_runtime(
    x: ir.Value, pads: ir.Value, value: ir.Value, mode: str = "constant", *, loc: ir.Location | None = None
) -> ir.Value:
    """``x`` padded by widths read at run time (``pads``: i64 before/after per dim) with the 0-d ``value``."""
    return PadRuntimeOp.build([x, pads, value], {"mode": mode}, loc=loc).result
