"""Unary elementwise ops: math (exp, tanh, gelu...), rounding, relu/leaky_relu/clip, neg/abs/sign,
``logical_not`` and ``bitwise_not``. The result has the operand's type.

Like the binary ops (``elementwise.py``), each op is a table entry: a summary and its scalar code (a
``lowering.scalar.Scalar``); one ``linalg.generic`` per op. The numbers follow numpy:

- ``softplus`` is ``max(x, 0) + log1p(exp(-|x|))`` (no overflow); ``mish`` is ``x * tanh(softplus(x))``.
- ``relu`` and ``clip`` propagate NaN; ``round`` rounds half to even.
- ``clip`` of an integer clamps to ``[ceil(min), floor(max)]`` within the dtype's range.
- ``neg`` of i1 is not lowered (astype first).

Upstream ops avoided because this pipeline cannot lower them: ``math.ceil``/``math.roundeven`` (their
expansion makes ``math.copysign``, which convert-math-to-libm rejects) and ``math.absi``. The
trigonometric and hyperbolic functions are libm calls (f16 and bf16 through f32).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from mlir import ir

from relax_mlir.dialects.dims import tensor_operand
from relax_mlir.dialects.ops.elementwise import FLOAT_DTYPES, op_class_name, require_bool
from relax_mlir.dialects.registry import Attr, Operand, RelaxOp, relax_op
from relax_mlir.dialects.types import RelaxType, TensorType
from relax_mlir.errors import ShapeError
from relax_mlir.lowering.kernel import KernelBuilder, KernelValue
from relax_mlir.lowering.scalar import Emit, Scalar, int_range, lower_elementwise


def _sigmoid(e: Emit, x: str) -> str:
    one = e.const(1)
    exp = e(f"math.exp {e(f'arith.negf {x}')}")
    return e(f"arith.divf {one}, {e(f'arith.addf {one}, {exp}')}")


def _gelu(e: Emit, args: list[str]) -> str:
    """x * (1 + erf(x / sqrt(2))) / 2."""
    x = args[0]
    erf = e(f"math.erf {e(f'arith.mulf {x}, {e.const(math.sqrt(0.5))}')}")
    half_x = e(f"arith.mulf {x}, {e.const(0.5)}")
    return e(f"arith.mulf {half_x}, {e(f'arith.addf {erf}, {e.const(1)}')}")


def _gelu_tanh(e: Emit, args: list[str]) -> str:
    """x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x**3))) / 2."""
    x = args[0]
    cube = e(f"arith.mulf {e(f'arith.mulf {x}, {x}')}, {x}")
    inner = e(f"arith.addf {x}, {e(f'arith.mulf {cube}, {e.const(0.044715)}')}")
    tanh = e(f"math.tanh {e(f'arith.mulf {inner}, {e.const(math.sqrt(2 / math.pi))}')}")
    half_x = e(f"arith.mulf {x}, {e.const(0.5)}")
    return e(f"arith.mulf {half_x}, {e(f'arith.addf {tanh}, {e.const(1)}')}")


def _relu(e: Emit, args: list[str]) -> str:
    op = "arith.maximumf" if e.is_float else f"arith.max{e.s}i"
    return e(f"{op} {args[0]}, {e.const(0)}")


def _neg(e: Emit, args: list[str]) -> str:
    return e(f"arith.negf {args[0]}") if e.is_float else e(f"arith.subi {e.const(0)}, {args[0]}")


def _abs(e: Emit, args: list[str]) -> str:
    """|x| (math.absi does not reach LLVM: convert-math-to-libm rejects it)."""
    x = args[0]
    if e.unsigned:
        return x
    if e.is_float:
        return e(f"math.absf {x}")
    zero = e.const(0)
    return e.select(e.cmp("lt", x, zero), e(f"arith.subi {zero}, {x}"), x)


# math.ceil and math.roundeven go through math-expand-ops, whose math.copysign convert-math-to-libm
# rejects: both are written with math.floor instead (exactly).
def _ceil(e: Emit, args: list[str]) -> str:
    negated = e(f"arith.negf {args[0]}")
    return e(f"arith.negf {e(f'math.floor {negated}')}")


def _round(e: Emit, args: list[str]) -> str:
    """Round half to even; the result keeps x's sign (round(-0.4) is -0.0)."""
    x = args[0]
    floor = e(f"math.floor {x}")
    frac = e(f"arith.subf {x}, {floor}")  # exact
    half, one = e.const(0.5), e.const(1)
    up = e(f"arith.addf {floor}, {one}")
    halved = e(f"math.floor {e(f'arith.mulf {floor}, {half}')}")
    odd = e.cmp("une", e(f"arith.mulf {halved}, {e.const(2)}"), floor)
    tie = e.select(odd, up, floor)
    rounded = e.select(e.cmp("ogt", frac, half), up, e.select(e.cmp("olt", frac, half), floor, tie))
    negative_zero = e.both(e.sign_bit(x), e.cmp("oeq", rounded, e.const(0)))
    return e.select(negative_zero, e.const(-0.0), rounded)


def _sign(e: Emit, args: list[str]) -> str:
    """-1, 0 or 1 (NaN stays NaN, as in numpy)."""
    x, zero = args[0], e.const(0)
    rest = x if e.unsigned else e.select(e.cmp("olt" if e.is_float else "lt", x, zero), e.const(-1), x)
    return e.select(e.cmp("ogt" if e.is_float else "gt", x, zero), e.const(1), rest)


def _softplus(e: Emit, args: list[str]) -> str:
    """log(1 + e**x) as max(x, 0) + log1p(e**-|x|): no overflow for large x, no cancellation for small."""
    x = args[0]
    minus_abs = e(f"arith.negf {e(f'math.absf {x}')}")
    decay = e(f"math.exp {minus_abs}")
    return e(f"arith.addf {e(f'arith.maximumf {x}, {e.const(0)}')}, {e(f'math.log1p {decay}')}")


def _mish(e: Emit, args: list[str]) -> str:
    """x * tanh(softplus(x))."""
    return e(f"arith.mulf {args[0]}, {e(f'math.tanh {_softplus(e, args)}')}")


def _bitwise_not(e: Emit, args: list[str]) -> str:
    return e(f"arith.xori {args[0]}, {e.const(-1)}")


def _leaky_relu(e: Emit, args: list[str]) -> str:
    x = args[0]
    scaled = e(f"arith.mulf {x}, {e.const(e.k.attrs['alpha'])}")
    return e.select(e.cmp("oge", x, e.const(0)), x, scaled)


def _clip(e: Emit, args: list[str]) -> str:
    """min(max(x, lo), hi); for integers lo = ceil(min), hi = floor(max), within the dtype's range."""
    lo, hi = e.k.attrs["min"], e.k.attrs["max"]
    if e.is_float:
        low = e(f"arith.maximumf {args[0]}, {e.const(lo)}")
        return e(f"arith.minimumf {low}, {e.const(hi)}")
    first, last = int_range(e.dtype)
    lo = first if lo <= first else min(math.ceil(lo), last)
    hi = last if hi >= last else max(math.floor(hi), first)
    low = e(f"arith.max{e.s}i {args[0]}, {e.const(lo)}")
    return e(f"arith.min{e.s}i {low}, {e.const(hi)}")


class UnaryElementwiseOp(RelaxOp):
    """Base of unary elementwise ops: the result has the operand's type (float only without int code)."""

    FUSION = "elementwise"

    OPERANDS = (Operand("x"),)
    SCALAR: Scalar

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = tensor_operand(operand_types[0], "x")
        if cls.SCALAR.int_code is None and x.dtype is not None and x.dtype not in FLOAT_DTYPES:
            raise ShapeError(f"operand 'x' must have a float dtype, got {x.dtype}")
        if cls.SCALAR.float_code is None and x.dtype in FLOAT_DTYPES:
            raise ShapeError(f"operand 'x' must have an integer dtype, got {x.dtype}")
        return [x]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        return lower_elementwise(k, cls.SCALAR)


def _unary_example(name: str, dtype: str = "f32") -> str:
    return f'``%y = "relax.{name}"(%x) : (!relax.tensor<["n"], {dtype}>) -> !relax.tensor<["n"], {dtype}>``'


_UNARY = {
    "exp": ("Elementwise e**x.", Scalar("math.exp {0}")),
    "log": ("Elementwise natural logarithm.", Scalar("math.log {0}")),
    "sqrt": ("Elementwise square root.", Scalar("math.sqrt {0}")),
    "rsqrt": ("Elementwise 1 / sqrt(x).", Scalar("math.rsqrt {0}")),
    "tanh": ("Elementwise hyperbolic tangent.", Scalar("math.tanh {0}")),
    "sigmoid": ("Elementwise 1 / (1 + e**-x).", Scalar(lambda e, a: _sigmoid(e, a[0]))),
    "erf": ("Elementwise error function.", Scalar("math.erf {0}")),
    "gelu": ("Elementwise GELU, x * (1 + erf(x / sqrt(2))) / 2.", Scalar(_gelu)),
    "gelu_tanh": ("Elementwise GELU, tanh approximation.", Scalar(_gelu_tanh)),
    "silu": (
        "Elementwise x * sigmoid(x).",
        Scalar(lambda e, a: e(f"arith.mulf {a[0]}, {_sigmoid(e, a[0])}")),
    ),
    "softplus": ("Elementwise log(1 + e**x), computed stably.", Scalar(_softplus)),
    "mish": ("Elementwise x * tanh(softplus(x)).", Scalar(_mish)),
    "sin": ("Elementwise sine.", Scalar("math.sin {0}")),
    "cos": ("Elementwise cosine.", Scalar("math.cos {0}")),
    "tan": ("Elementwise tangent.", Scalar("math.tan {0}")),
    "asin": ("Elementwise arcsine.", Scalar("math.asin {0}")),
    "acos": ("Elementwise arccosine.", Scalar("math.acos {0}")),
    "atan": ("Elementwise arctangent.", Scalar("math.atan {0}")),
    "sinh": ("Elementwise hyperbolic sine.", Scalar("math.sinh {0}")),
    "cosh": ("Elementwise hyperbolic cosine.", Scalar("math.cosh {0}")),
    "asinh": ("Elementwise inverse hyperbolic sine.", Scalar("math.asinh {0}")),
    "acosh": ("Elementwise inverse hyperbolic cosine.", Scalar("math.acosh {0}")),
    "atanh": ("Elementwise inverse hyperbolic tangent.", Scalar("math.atanh {0}")),
    "floor": ("Elementwise floor.", Scalar("math.floor {0}")),
    "ceil": ("Elementwise ceiling.", Scalar(_ceil)),
    "round": ("Elementwise round half to even.", Scalar(_round)),
    "relu": ("Elementwise max(x, 0).", Scalar(_relu, _relu)),
    "neg": ("Elementwise -x.", Scalar(_neg, _neg, False)),
    "abs": ("Elementwise |x|.", Scalar(_abs, _abs)),
    "sign": ("Elementwise sign (-1, 0 or 1).", Scalar(_sign, _sign)),
    "bitwise_not": ("Elementwise ~x on integers.", Scalar(int_code=_bitwise_not, bool_code=False)),
}


def _make_unary(name: str, summary: str, scalar: Scalar) -> Any:
    doc = f"{summary}\n\n{_unary_example(name, 'f32' if scalar.float_code else 'i32')}"
    cls = relax_op(
        type(op_class_name(name), (UnaryElementwiseOp,), {"NAME": name, "SCALAR": scalar, "__doc__": doc})
    )

    def helper(x: ir.Value, *, loc: ir.Location | None = None) -> ir.Value:
        return cls.build([x], loc=loc).result

    helper.__name__ = helper.__qualname__ = name
    helper.__doc__ = summary
    return cls, helper


for _name, (_summary, _scalar) in _UNARY.items():
    globals()[op_class_name(_name)], globals()[_name] = _make_unary(_name, _summary, _scalar)


@relax_op
class LogicalNotOp(RelaxOp):
    """Elementwise not on an i1 tensor.

    ``%y = "relax.logical_not"(%x) : (!relax.tensor<["n"], i1>) -> !relax.tensor<["n"], i1>``
    """

    NAME = "logical_not"
    FUSION = "elementwise"
    OPERANDS = (Operand("x"),)

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = tensor_operand(operand_types[0], "x")
        require_bool(x, "x")
        return [TensorType(x.shape, "i1")]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        return lower_elementwise(k, Scalar(int_code=lambda e, a: e(f"arith.xori {a[0]}, {e.const(1)}")))


def logical_not(x: ir.Value, *, loc: ir.Location | None = None) -> ir.Value:
    """Elementwise not."""
    return LogicalNotOp.build([x], loc=loc).result


@relax_op
class LeakyReluOp(UnaryElementwiseOp):
    """Elementwise x if x >= 0 else alpha * x.

    ``%y = "relax.leaky_relu"(%x) {alpha = 1.000000e-02 : f64} : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>``
    """

    NAME = "leaky_relu"
    ATTRS = (Attr("alpha", "float"),)
    SCALAR = Scalar(_leaky_relu)


def leaky_relu(x: ir.Value, alpha: float = 0.01, *, loc: ir.Location | None = None) -> ir.Value:
    """Leaky ReLU with slope ``alpha`` for negative inputs."""
    return LeakyReluOp.build([x], {"alpha": alpha}, loc=loc).result


@relax_op
class ClipOp(UnaryElementwiseOp):
    """Elementwise clamp to [min, max] (for integers: to [ceil(min), floor(max)] within the dtype's range).

    ``%y = "relax.clip"(%x) {max = 6.0 : f64, min = 0.0 : f64} : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>``
    """

    NAME = "clip"
    ATTRS = (Attr("min", "float"), Attr("max", "float"))
    SCALAR = Scalar(_clip, _clip)

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        if math.isnan(attrs["min"]) or math.isnan(attrs["max"]):
            raise ShapeError(f"min {attrs['min']} and max {attrs['max']} must not be NaN")
        if attrs["min"] > attrs["max"]:
            raise ShapeError(f"min {attrs['min']} is greater than max {attrs['max']}")
        return super().deduce(operand_types, attrs)


def clip(x: ir.Value, min: float, max: float, *, loc: ir.Location | None = None) -> ir.Value:  # noqa: A002
    """Clamp ``x`` to [min, max]."""
    return ClipOp.build([x], {"min": min, "max": max}, loc=loc).result
