"""Elementwise ops of two or three operands: arithmetic, comparisons, logic and bitwise ops with numpy
broadcasting, and ``where``. Unary math is in ``unary.py``, dtype conversions in ``casts.py``.

Each family is declared once as a base class and instantiated per op from a table.

Broadcasting follows numpy, dim by dim from the right (``dims.broadcast_shapes``): equal dims, or
a 1 against anything, give the other dim; a constant against a symbol gives the constant (the
symbol must be 1 or that constant, checked at run time); two symbols not provably equal (``n`` vs
``m``), either of which may be 1, give numpy's choice at run time as one expression, ``max(m, n) *
min(min(m, n), 1)`` (``dims.broadcast_at_run_time``; the lowering checks with ``relax.check_broadcast``
that they broadcast), where Relax would drop every dim. An unknown dim ``"?"``
gives the other dim only when that one can never be 1 (a constant, or ``n + 2``), else ``"?"``.
Two different constants, neither 1, are an error. An unknown rank anywhere gives an unknown rank.
Operand dtypes must agree (an unknown dtype takes the other's); comparisons and logical ops give i1.

Lowering: every op becomes one parallel ``linalg.generic`` (``KernelBuilder.elementwise``: the indexing
maps broadcast) whose body is the op's scalar code, taken from the op's table entry (a
``lowering.scalar.Scalar``: one code per element kind); each family base class has one ``lower``. The
numbers follow numpy:

- ``mod`` has the divisor's sign and ``floor_divide`` floors, for floats exactly as numpy computes them
  (from fmod, snapped); integer ``divide`` truncates toward zero (the result dtype is the operands', as
  in ONNX ``Div`` and Relax; ``floor_divide`` is numpy's ``//``); integer ``x / 0``, ``x // 0`` and
  ``x % 0`` give 0, as numpy, and ``MIN / -1`` wraps (the divisor is guarded: it would trap on x86).
- ``fmod`` is C's ``%`` (numpy.fmod): the remainder has the dividend's sign; integer ``x fmod 0`` is 0.
- ``left_shift``/``right_shift`` follow numpy: a count that, read as unsigned, reaches the width gives 0
  (-1 for a negative signed ``x`` shifted right); right shifts of signed dtypes are arithmetic.
- ``power`` on floats has C's special cases (0 ** 0 = 1, negative bases with integer exponents, NaN
  for others); on integers it squares in a loop, and a negative exponent gives ``1 / x ** -y``
  truncated (1, +-1 or 0) where numpy raises. ``math.powf`` is a libm call: ``power`` computes
  ``|x| ** y`` in a wider type and fixes signs itself.
- Comparisons are ordered except ``not_equal`` (true for NaN); ``maximum`` and ``minimum`` propagate NaN.
- Booleans are 0/1 bytes in kernels: ``add``/``multiply``/``maximum``/``minimum`` of i1 are
  or/and/or/and (numpy's bool arithmetic); ``subtract``, ``divide``, ``floor_divide``, ``mod`` and
  ``power`` of i1 are not lowered (astype first).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from mlir import ir

from relax_mlir.dialects.dims import broadcast_shapes, join_dtype, tensor_operand
from relax_mlir.dialects.registry import Operand, RelaxOp, relax_op
from relax_mlir.dialects.types import RelaxType, TensorType
from relax_mlir.errors import ShapeError
from relax_mlir.lowering.kernel import KernelBuilder, KernelValue
from relax_mlir.lowering.scalar import Emit, Scalar, lower_elementwise

FLOAT_DTYPES = {"f16", "bf16", "f32", "f64"}


# Float floor_divide and mod exactly as numpy computes them (npy_divmod): from fmod, adjusted
# toward the divisor's sign, the quotient snapped to the nearest integer.
def _float_divmod(e: Emit, a: str, b: str) -> tuple[str, str]:
    """(the quotient before snapping, the remainder)."""
    mod = e(f"arith.remf {a}, {b}")
    zero = e.const(0)
    signs_differ = e(f"arith.xori {e.cmp('olt', mod, zero)}, {e.cmp('olt', b, zero)}", "i1")
    adjust = e.both(e.cmp("une", mod, zero), signs_differ)
    div = e(f"arith.divf {e(f'arith.subf {a}, {mod}')}, {b}")
    div = e.select(adjust, e(f"arith.subf {div}, {e.const(1)}"), div)
    mod = e.select(adjust, e(f"arith.addf {mod}, {b}"), mod)
    return div, mod


def _float_floor_divide(e: Emit, args: list[str]) -> str:
    a, b = args
    div, _ = _float_divmod(e, a, b)
    floor = e(f"math.floor {div}")
    up = e.cmp("ogt", e(f"arith.subf {div}, {floor}"), e.const(0.5))
    snapped = e.select(up, e(f"arith.addf {floor}, {e.const(1)}"), floor)
    quotient = e(f"arith.divf {a}, {b}")
    zero = e.const(0)
    signed_zero = e.select(e.sign_bit(quotient), e.const(-0.0), zero)
    result = e.select(e.cmp("oeq", div, zero), signed_zero, snapped)
    return e.select(e.cmp("oeq", b, zero), quotient, result)


def _float_mod(e: Emit, args: list[str]) -> str:
    a, b = args
    _, mod = _float_divmod(e, a, b)
    signed_zero = e.select(e.sign_bit(b), e.const(-0.0), e.const(0))
    return e.select(e.cmp("oeq", mod, e.const(0)), signed_zero, mod)


def _int_division(kind: str) -> Callable[[Emit, list[str]], str]:
    """Integer ``divide`` (truncating), ``floor_divide`` or ``mod``: x / 0 and x % 0 give 0 like numpy,
    and a divisor of -1 never reaches the divide (MIN / -1 traps on x86)."""

    def code(e: Emit, args: list[str]) -> str:
        a, b = args
        zero, one = e.const(0), e.const(1)
        by_zero = e.cmp("eq", b, zero)
        bad = by_zero
        if not e.unsigned:
            by_minus_one = e.cmp("eq", b, e.const(-1))
            bad = e(f"arith.ori {by_zero}, {by_minus_one}", "i1")
        safe = e.select(bad, one, b)
        if kind == "mod":
            rem = e(f"arith.rem{e.s}i {a}, {safe}")  # 0 for the guarded divisors, as numpy
            if e.unsigned:
                return rem
            signs_differ = e.cmp("lt", e(f"arith.xori {rem}, {safe}"), zero)
            adjust = e.both(e.cmp("ne", rem, zero), signs_differ)
            return e.select(adjust, e(f"arith.addi {rem}, {safe}"), rem)
        q = e(f"arith.div{e.s}i {a}, {safe}")
        if kind == "floor_divide" and not e.unsigned:
            rem = e(f"arith.remsi {a}, {safe}")
            signs_differ = e.cmp("lt", e(f"arith.xori {rem}, {safe}"), zero)
            adjust = e.both(e.cmp("ne", rem, zero), signs_differ)
            q = e.select(adjust, e(f"arith.subi {q}, {one}"), q)
        q = e.select(by_zero, zero, q)
        if e.unsigned:
            return q
        return e.select(by_minus_one, e(f"arith.subi {zero}, {a}"), q)

    return code


def _float_power(e: Emit, args: list[str]) -> str:
    """x ** y with C's pow special cases (numpy's): |x| ** y comes from math.powf (libm's pow), computed
    in a wider type (f64 for f32) to keep it accurate; the sign and NaN follow."""
    a, b = args
    wide = {"f16": "f32", "bf16": "f32", "f32": "f64"}.get(e.dtype, e.dtype)
    w = Emit(e.k, wide)
    abs_a = e(f"math.absf {a}")
    if wide == e.dtype:
        mag = e(f"math.powf {abs_a}, {b}")
    else:
        widened = [w(f"arith.extf {v}", f"{e.t} to {wide}") for v in (abs_a, b)]
        mag = e(f"arith.truncf {w(f'math.powf {widened[0]}, {widened[1]}')}", f"{wide} to {e.t}")
    zero, one = e.const(0), e.const(1)
    mag = e.select(e.cmp("oeq", abs_a, one), one, mag)  # (+-1) ** y = 1 in magnitude, also for y = inf
    mag = e.select(e.cmp("oeq", b, zero), one, mag)  # x ** 0 = 1, also for x = NaN
    is_int = e.cmp("oeq", e(f"math.floor {b}"), b)
    half = e(f"arith.remf {b}, {e.const(2)}")
    odd = e.both(is_int, e.cmp("oeq", e(f"math.absf {half}"), one))
    signed = e.select(e.both(e.sign_bit(a), odd), e(f"arith.negf {mag}"), mag)
    finite_negative = e.both(e.cmp("olt", a, zero), e.cmp("ogt", a, e.const(-math.inf)))
    return e.select(e.both(finite_negative, e.negate(is_int)), e.const(math.nan), signed)


def _int_power(e: Emit, args: list[str]) -> str:
    """x ** y by squaring (a loop over the exponent's bits); a negative y gives 1 / x**-y truncated."""
    a, b = args
    k, t = e.k, e.t
    zero, one = e.const(0), e.const(1)
    negative = "" if e.unsigned else e.cmp("lt", b, zero)
    exponent = b if e.unsigned else e.select(negative, zero, b)
    acc, base, rest = k.fresh("acc"), k.fresh("base"), k.fresh("exp")
    result, types = k.fresh("pow"), f"{t}, {t}, {t}"
    k.emit(
        f"{result}:3 = scf.while ({acc} = {one}, {base} = {a}, {rest} = {exponent}) : ({types}) -> ({types}) {{"
    )
    k.emit(f"scf.condition({e.cmp('ne', rest, zero)}) {acc}, {base}, {rest} : {types}", "} do {")
    acc, base, rest = k.fresh("acc"), k.fresh("base"), k.fresh("exp")
    k.emit(f"^bb0({acc}: {t}, {base}: {t}, {rest}: {t}):")
    odd = e(f"arith.trunci {rest}", f"{t} to i1")
    acc_next = e.select(odd, e(f"arith.muli {acc}, {base}"), acc)
    k.emit(
        f"scf.yield {acc_next}, {e(f'arith.muli {base}, {base}')}, {e(f'arith.shrui {rest}, {one}')} : {types}",
        "}",
    )
    if e.unsigned:
        return f"{result}#0"
    minus_one = e.const(-1)
    sign = e.select(e(f"arith.trunci {b}", f"{t} to i1"), minus_one, one)
    tiny = e.select(e.cmp("eq", a, one), one, e.select(e.cmp("eq", a, minus_one), sign, zero))
    return e.select(negative, tiny, f"{result}#0")


def _out_of_range_shift(e: Emit, count: str) -> str:
    """An i1 flag: the shift count, read as unsigned, is at least the width (numpy then gives 0 or -1)."""
    return e(f"arith.cmpi uge, {count}, {e.const(e.bits)}")


def _left_shift(e: Emit, args: list[str]) -> str:
    """x << y, 0 when y (as unsigned) is at least the width, as numpy (LLVM's shl would be poison)."""
    x, y = args
    return e.select(_out_of_range_shift(e, y), e.const(0), e(f"arith.shli {x}, {y}"))


def _right_shift(e: Emit, args: list[str]) -> str:
    """x >> y (arithmetic for signed dtypes); past the width: 0, or -1 for negative signed x (numpy)."""
    x, y = args
    if e.unsigned:
        return e.select(_out_of_range_shift(e, y), e.const(0), e(f"arith.shrui {x}, {y}"))
    count = e.select(_out_of_range_shift(e, y), e.const(e.bits - 1), y)
    return e(f"arith.shrsi {x}, {count}")


def _int_fmod(e: Emit, args: list[str]) -> str:
    """C's %: the remainder with the dividend's sign; x % 0 gives 0 (numpy) and -1 never reaches the
    divide (MIN % -1 traps on x86; the remainder is 0 anyway)."""
    a, b = args
    bad = e.cmp("eq", b, e.const(0))
    if not e.unsigned:
        bad = e(f"arith.ori {bad}, {e.cmp('eq', b, e.const(-1))}", "i1")
    return e(f"arith.rem{e.s}i {a}, {e.select(bad, e.const(1), b)}")


def _select(e: Emit, args: list[str]) -> str:
    return e.select(e.flag(args[0]), args[1], args[2])


# -- op families -------------------------------------------------------------------------------------
class BinaryElementwiseOp(RelaxOp):
    """Base of binary elementwise ops: numpy broadcasting over symbolic dims, equal dtypes."""

    FUSION = "broadcast"

    OPERANDS = (Operand("lhs"), Operand("rhs"))
    SCALAR: Scalar

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        lhs = tensor_operand(operand_types[0], "lhs")
        rhs = tensor_operand(operand_types[1], "rhs")
        dtype = join_dtype(lhs, rhs, ("lhs", "rhs"))
        return [TensorType(broadcast_shapes([lhs.shape, rhs.shape], ["lhs", "rhs"]), dtype)]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        return lower_elementwise(k, cls.SCALAR)


class ComparisonOp(BinaryElementwiseOp):
    """Base of comparisons: broadcasting like arithmetic, i1 result."""

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        (out,) = super().deduce(operand_types, attrs)
        assert isinstance(out, TensorType)
        return [TensorType(out.shape, "i1")]


class LogicalOp(BinaryElementwiseOp):
    """Base of binary logical ops: i1 operands, broadcasting, i1 result (even from unknown dtypes)."""

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        for name, t in zip(("lhs", "rhs"), operand_types):
            require_bool(tensor_operand(t, name), name)
        (out,) = super().deduce(operand_types, attrs)
        assert isinstance(out, TensorType)
        return [TensorType(out.shape, "i1")]


def require_bool(t: TensorType, name: str) -> None:
    """Raise unless operand ``name`` is an i1 tensor (or of unknown dtype)."""
    if t.dtype is not None and t.dtype != "i1":
        raise ShapeError(f"operand '{name}' must have dtype i1, got {t.dtype}")


class IntegerBinaryOp(BinaryElementwiseOp):
    """Base of bitwise ops and shifts: integer operands, broadcasting like arithmetic."""

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        (out,) = super().deduce(operand_types, attrs)
        assert isinstance(out, TensorType)
        if out.dtype in FLOAT_DTYPES:
            raise ShapeError(f"operands must have an integer dtype, got {out.dtype}")
        return [out]


def _binary_example(name: str, dtype: str = "f32", out: str = "f32") -> str:
    return (
        f'``%z = "relax.{name}"(%x, %y) : (!relax.tensor<["n", 4], {dtype}>, !relax.tensor<[4], {dtype}>)'
        f' -> !relax.tensor<["n", 4], {out}>``'
    )


# name: (summary, scalar code)
_BINARY = {
    "add": (
        "Elementwise sum with numpy broadcasting.",
        Scalar("arith.addf {0}, {1}", "arith.addi {0}, {1}", "arith.ori {0}, {1}"),
    ),
    "subtract": (
        "Elementwise difference with numpy broadcasting.",
        Scalar("arith.subf {0}, {1}", "arith.subi {0}, {1}", False),
    ),
    "multiply": (
        "Elementwise product with numpy broadcasting.",
        Scalar("arith.mulf {0}, {1}", "arith.muli {0}, {1}", "arith.andi {0}, {1}"),
    ),
    "divide": (
        "Elementwise quotient with numpy broadcasting (integers truncate).",
        Scalar("arith.divf {0}, {1}", _int_division("divide"), False),
    ),
    "floor_divide": (
        "Elementwise floor(x / y) with numpy broadcasting.",
        Scalar(_float_floor_divide, _int_division("floor_divide"), False),
    ),
    "mod": (
        "Elementwise remainder with the sign of the divisor (numpy.mod).",
        Scalar(_float_mod, _int_division("mod"), False),
    ),
    "fmod": (
        "Elementwise remainder with the sign of the dividend (numpy.fmod, C's %).",
        Scalar("arith.remf {0}, {1}", _int_fmod, False),
    ),
    "power": ("Elementwise x ** y with numpy broadcasting.", Scalar(_float_power, _int_power, False)),
    "maximum": (
        "Elementwise maximum with numpy broadcasting.",
        Scalar("arith.maximumf {0}, {1}", "arith.max{s}i {0}, {1}"),
    ),
    "minimum": (
        "Elementwise minimum with numpy broadcasting.",
        Scalar("arith.minimumf {0}, {1}", "arith.min{s}i {0}, {1}"),
    ),
}

_COMPARISON = {
    "equal": (
        "Elementwise x == y (i1 result).",
        Scalar("arith.cmpf oeq, {0}, {1}", "arith.cmpi eq, {0}, {1}", flag=True),
    ),
    "not_equal": (
        "Elementwise x != y (i1 result).",
        Scalar("arith.cmpf une, {0}, {1}", "arith.cmpi ne, {0}, {1}", flag=True),
    ),
    "less": (
        "Elementwise x < y (i1 result).",
        Scalar("arith.cmpf olt, {0}, {1}", "arith.cmpi {s}lt, {0}, {1}", flag=True),
    ),
    "less_equal": (
        "Elementwise x <= y (i1 result).",
        Scalar("arith.cmpf ole, {0}, {1}", "arith.cmpi {s}le, {0}, {1}", flag=True),
    ),
    "greater": (
        "Elementwise x > y (i1 result).",
        Scalar("arith.cmpf ogt, {0}, {1}", "arith.cmpi {s}gt, {0}, {1}", flag=True),
    ),
    "greater_equal": (
        "Elementwise x >= y (i1 result).",
        Scalar("arith.cmpf oge, {0}, {1}", "arith.cmpi {s}ge, {0}, {1}", flag=True),
    ),
}

_LOGICAL = {
    "logical_and": ("Elementwise x and y on i1 tensors.", Scalar(int_code="arith.andi {0}, {1}")),
    "logical_or": ("Elementwise x or y on i1 tensors.", Scalar(int_code="arith.ori {0}, {1}")),
    "logical_xor": ("Elementwise x xor y on i1 tensors.", Scalar(int_code="arith.xori {0}, {1}")),
}

_INTEGER = {
    "bitwise_and": ("Elementwise x & y on integers.", Scalar(int_code="arith.andi {0}, {1}")),
    "bitwise_or": ("Elementwise x | y on integers.", Scalar(int_code="arith.ori {0}, {1}")),
    "bitwise_xor": ("Elementwise x ^ y on integers.", Scalar(int_code="arith.xori {0}, {1}")),
    "left_shift": (
        "Elementwise x << y on integers (0 once y, as unsigned, reaches the width; numpy).",
        Scalar(int_code=_left_shift, bool_code=False),
    ),
    "right_shift": (
        "Elementwise x >> y on integers, arithmetic for signed dtypes (past the width: 0 or -1; numpy).",
        Scalar(int_code=_right_shift, bool_code=False),
    ),
}


def op_class_name(name: str) -> str:
    """The class name of a table-made op: ``logical_and`` -> ``LogicalAndOp``."""
    return "".join(part.capitalize() for part in name.split("_")) + "Op"


def _make_binary(name: str, summary: str, scalar: Scalar, base: type[RelaxOp]) -> Any:
    dtype, out = {ComparisonOp: ("f32", "i1"), LogicalOp: ("i1", "i1"), IntegerBinaryOp: ("i32", "i32")}.get(
        base, ("f32", "f32")
    )
    doc = f"{summary}\n\n{_binary_example(name, dtype, out)}"
    cls = relax_op(type(op_class_name(name), (base,), {"NAME": name, "SCALAR": scalar, "__doc__": doc}))

    def helper(lhs: ir.Value, rhs: ir.Value, *, loc: ir.Location | None = None) -> ir.Value:
        return cls.build([lhs, rhs], loc=loc).result

    helper.__name__ = helper.__qualname__ = name
    helper.__doc__ = summary
    return cls, helper


for _table, _base in (
    (_BINARY, BinaryElementwiseOp),
    (_COMPARISON, ComparisonOp),
    (_LOGICAL, LogicalOp),
    (_INTEGER, IntegerBinaryOp),
):
    for _name, (_summary, _scalar) in _table.items():
        globals()[op_class_name(_name)], globals()[_name] = _make_binary(_name, _summary, _scalar, _base)


@relax_op
class WhereOp(RelaxOp):
    """Select ``x`` where ``cond`` else ``y``, broadcasting all three.

    ``%z = "relax.where"(%c, %x, %y) : (!relax.tensor<["n", 1], i1>, !relax.tensor<["n", 4], f32>,
    !relax.tensor<[4], f32>) -> !relax.tensor<["n", 4], f32>``
    """

    NAME = "where"
    FUSION = "broadcast"
    OPERANDS = (Operand("cond"), Operand("x"), Operand("y"))

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        cond = tensor_operand(operand_types[0], "cond")
        x = tensor_operand(operand_types[1], "x")
        y = tensor_operand(operand_types[2], "y")
        require_bool(cond, "cond")
        dtype = join_dtype(x, y, ("x", "y"))
        shape = broadcast_shapes([cond.shape, x.shape, y.shape], ["cond", "x", "y"])
        return [TensorType(shape, dtype)]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        select = Scalar(_select, _select)
        return lower_elementwise(k, select, dtype_operand=1)


def where(cond: ir.Value, x: ir.Value, y: ir.Value, *, loc: ir.Location | None = None) -> ir.Value:
    """``x`` where ``cond`` else ``y``."""
    return WhereOp.build([cond, x, y], loc=loc).result
