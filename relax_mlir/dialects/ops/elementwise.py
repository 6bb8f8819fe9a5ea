"""Elementwise ops: binary arithmetic with numpy broadcasting, and unary math.

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
maps broadcast) whose body is the op's scalar code, taken from the op's table entry (a ``Scalar``: one
code per element kind); each family base class has one ``lower``. The numbers follow numpy:

- ``mod`` has the divisor's sign and ``floor_divide`` floors, for floats exactly as numpy computes them
  (from fmod, snapped); integer ``divide`` truncates toward zero (the result dtype is the operands', as
  in ONNX ``Div`` and Relax; ``floor_divide`` is numpy's ``//``); integer ``x / 0``, ``x // 0`` and
  ``x % 0`` give 0, as numpy, and ``MIN / -1`` wraps (the divisor is guarded: it would trap on x86).
- ``fmod`` is C's ``%`` (numpy.fmod): the remainder has the dividend's sign; integer ``x fmod 0`` is 0.
- ``left_shift``/``right_shift`` follow numpy: a count that, read as unsigned, reaches the width gives 0
  (-1 for a negative signed ``x`` shifted right); right shifts of signed dtypes are arithmetic.
- ``softplus`` is ``max(x, 0) + log1p(exp(-|x|))`` (no overflow); ``mish`` is ``x * tanh(softplus(x))``.
- ``power`` on floats has C's special cases (0 ** 0 = 1, negative bases with integer exponents, NaN
  for others); on integers it squares in a loop, and a negative exponent gives ``1 / x ** -y``
  truncated (1, +-1 or 0) where numpy raises.
- Comparisons are ordered except ``not_equal`` (true for NaN); ``maximum``, ``minimum``, ``relu`` and
  ``clip`` propagate NaN; ``round`` rounds half to even.
- Booleans are 0/1 bytes in kernels (``element("i1")``): their logic is byte logic, ``add``/``multiply``/
  ``maximum``/``minimum`` are or/and/or/and (numpy's bool arithmetic); ``subtract``, ``divide``,
  ``floor_divide``, ``mod``, ``power`` and ``neg`` of i1 are not lowered (astype first).
- ``clip`` of an integer clamps to ``[ceil(min), floor(max)]`` within the dtype's range.
- ``astype`` truncates floats toward zero (to i8/i16/ui8 through i32, wrapping as numpy does on x86;
  values out of the target's range are otherwise undefined), maps anything to i1 as ``!= 0`` (NaN is
  true), and extends i1 and ui8 as unsigned.

Upstream ops avoided because this pipeline cannot lower them: ``math.ceil``/``math.roundeven`` (their
expansion makes ``math.copysign``, which convert-math-to-libm rejects) and ``math.absi``. ``math.powf``
and the trigonometric and hyperbolic functions are libm calls (f16 and bf16 through f32); ``power``
computes ``|x| ** y`` in a wider type and fixes signs itself.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from mlir import ir

from relax_mlir.dialects.dims import broadcast_shapes, join_dtype, tensor_operand
from relax_mlir.dialects.registry import Attr, Operand, RelaxOp, relax_op
from relax_mlir.dialects.rewrite import attr_value, tensor_of
from relax_mlir.dialects.types import DTYPE_BYTES, RelaxType, TensorType
from relax_mlir.errors import ShapeError
from relax_mlir.lowering import minifloat
from relax_mlir.lowering.kernel import (
    SUB_BYTE_INTS,
    KernelBuilder,
    KernelValue,
    element,
    is_float,
    is_unsigned,
    unsigned_order,
)

FLOAT_DTYPES = {"f16", "bf16", "f32", "f64"}


# -- scalar code -------------------------------------------------------------------------------------
@dataclass
class Emit:
    """Writes an op's scalar code inside a linalg body, for elements of relax dtype ``dtype``.

    Values have the tensor's element type ``e.t`` (``element(dtype)``: booleans are bytes holding 0 or 1,
    so logic on them is byte logic); comparisons give ``i1`` flags. Calling it emits one op:
    ``e("arith.addf %a, %b")`` is ``%v = arith.addf %a, %b : <e.t>``. ``e.s`` is the signedness letter
    of arith op names (``"u"`` for ui* and i1, else ``"s"``).
    """

    k: KernelBuilder
    dtype: str

    @property
    def t(self) -> str:
        return element(self.dtype)

    @property
    def is_float(self) -> bool:
        return is_float(self.dtype)

    @property
    def unsigned(self) -> bool:
        return unsigned_order(self.dtype)

    @property
    def s(self) -> str:
        return "u" if self.unsigned else "s"

    @property
    def bits(self) -> int:
        return type_bits(self.t)

    def __call__(self, text: str, type_suffix: str | None = None) -> str:
        return self.k.scalar(text, type_suffix or self.t)

    def const(self, value: float, type_: str | None = None) -> str:
        """A constant of MLIR type ``type_`` (default ``e.t``); floats are rounded to it."""
        type_ = type_ or self.t
        return self.k.scalar(f"arith.constant {literal(value, type_)}", type_)

    def cmp(self, pred: str, a: str, b: str) -> str:
        """An i1 flag; ``pred`` is a float predicate (``olt``) or an int one without sign (``lt``)."""
        if self.is_float:
            return self(f"arith.cmpf {pred}, {a}, {b}")
        sign = "" if pred in ("eq", "ne") else self.s
        return self(f"arith.cmpi {sign}{pred}, {a}, {b}")

    def select(self, flag: str, a: str, b: str) -> str:
        return self(f"arith.select {flag}, {a}, {b}")

    def sign_bit(self, x: str) -> str:
        """Whether float ``x`` has its sign bit set (true for -0.0; math.copysign does not reach LLVM)."""
        bits = self(f"arith.bitcast {x}", f"{self.t} to i{self.bits}")
        return self(f"arith.cmpi slt, {bits}, {self.const(0, f'i{self.bits}')}", f"i{self.bits}")

    def both(self, a: str, b: str) -> str:
        """``a and b`` of two i1 flags."""
        return self(f"arith.andi {a}, {b}", "i1")

    def negate(self, a: str) -> str:
        """``not a`` of an i1 flag."""
        return self(f"arith.xori {a}, {self.const(1, 'i1')}", "i1")

    def flag(self, stored: str) -> str:
        """The i1 flag of a boolean tensor element."""
        t = element("i1")
        return stored if t == "i1" else self(f"arith.cmpi ne, {stored}, {self.const(0, t)}", t)

    def stored_flag(self, flag: str) -> str:
        """An i1 flag as a boolean tensor element."""
        t = element("i1")
        return flag if t == "i1" else self(f"arith.extui {flag}", f"i1 to {t}")


Code = str | Callable[[Emit, list[str]], str]
"""Scalar code: an op template over the operands ``{0}``, ``{1}``... (``{s}``: signedness letter), or a
function ``(emit, operands) -> result``."""


@dataclass(frozen=True)
class Scalar:
    """An op's scalar code per element kind; ``None`` where the op has no lowering for that kind.

    ``int_code`` serves signed and unsigned integers; i1 uses ``bool_code`` when it is code, ``int_code``
    (as unsigned, on 0/1 bytes) when it is True, and has no lowering when it is False. The result has
    the result's element type, or is an i1 flag when ``flag`` is set (comparisons).
    """

    float_code: Code | None = None
    int_code: Code | None = None
    bool_code: Code | bool = True
    flag: bool = False

    def code(self, dtype: str) -> Code | None:
        if is_float(dtype):
            return self.float_code
        if dtype != "i1" or self.bool_code is True:
            return self.int_code
        return self.bool_code or None

    def emit(self, e: Emit, args: list[str]) -> str:
        code = self.code(e.dtype)
        assert code is not None
        result = e(code.format(*args, s=e.s)) if isinstance(code, str) else code(e, args)
        return e.stored_flag(result) if self.flag else result


def type_bits(t: str) -> int:
    """The width of an MLIR scalar type (``f32``, ``bf16``, ``i8``...)."""
    return int(t.lstrip("bfi"))


def literal(value: float, t: str) -> str:
    """An MLIR literal of ``value`` as type ``t``: the exact bits for floats, two's complement for ints."""
    if t == "bf16":
        bits = int(np.array(value, np.float32).view(np.uint32))
        return hex((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16)
    if t.startswith("f"):
        np_types = {
            "f16": (np.float16, np.uint16),
            "f32": (np.float32, np.uint32),
            "f64": (np.float64, np.uint64),
        }
        with np.errstate(over="ignore"):
            return hex(int(np.array(value, np_types[t][0]).view(np_types[t][1])))
    width = type_bits(t)
    v = int(value) % (1 << width)
    return str(v - (1 << width) if width > 1 and v >= 1 << (width - 1) else v)


def lower_elementwise(k: KernelBuilder, scalar: Scalar, dtype_operand: int = 0) -> list[KernelValue]:
    """An elementwise kernel: one broadcasting linalg.generic running ``scalar``'s code for the dtype of
    operand ``dtype_operand``."""
    dtype = k.ins[dtype_operand].dtype
    if scalar.code(dtype) is None:
        hint = "; convert the operands with relax.astype first" if dtype == "i1" else ""
        raise k.fail(f"not defined for dtype {dtype}{hint}")
    sizes = k.elementwise_sizes(k.ins) if k.allocating else []
    if sizes is None:
        raise k.fail(
            f"cannot lower broadcasting to {k.result_types[0]}: a result dim is unknown and no operand gives it; "
            "state the operands' dims with relax.match_cast first"
        )
    e = Emit(k, dtype)
    return [k.elementwise(k.ins, k.destination(0, sizes), lambda a: scalar.emit(e, a))]


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


def int_range(dtype: str) -> tuple[int, int]:
    """The smallest and largest value of an integer dtype (i1 is 0 and 1)."""
    if dtype == "i1":
        return 0, 1
    width = type_bits(element(dtype))
    if is_unsigned(dtype):
        return 0, (1 << width) - 1
    return -(1 << (width - 1)), (1 << (width - 1)) - 1


def _select(e: Emit, args: list[str]) -> str:
    return e.select(e.flag(args[0]), args[1], args[2])


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
            _require_bool(tensor_operand(t, name), name)
        (out,) = super().deduce(operand_types, attrs)
        assert isinstance(out, TensorType)
        return [TensorType(out.shape, "i1")]


def _require_bool(t: TensorType, name: str) -> None:
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


def _binary_example(name: str, dtype: str = "f32", out: str = "f32") -> str:
    return (
        f'``%z = "relax.{name}"(%x, %y) : (!relax.tensor<["n", 4], {dtype}>, !relax.tensor<[4], {dtype}>)'
        f' -> !relax.tensor<["n", 4], {out}>``'
    )


def _unary_example(name: str, dtype: str = "f32") -> str:
    return f'``%y = "relax.{name}"(%x) : (!relax.tensor<["n"], {dtype}>) -> !relax.tensor<["n"], {dtype}>``'


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


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_")) + "Op"


def _make_binary(name: str, summary: str, scalar: Scalar, base: type[RelaxOp]) -> Any:
    dtype, out = {ComparisonOp: ("f32", "i1"), LogicalOp: ("i1", "i1"), IntegerBinaryOp: ("i32", "i32")}.get(
        base, ("f32", "f32")
    )
    doc = f"{summary}\n\n{_binary_example(name, dtype, out)}"
    cls = relax_op(type(_camel(name), (base,), {"NAME": name, "SCALAR": scalar, "__doc__": doc}))

    def helper(lhs: ir.Value, rhs: ir.Value, *, loc: ir.Location | None = None) -> ir.Value:
        return cls.build([lhs, rhs], loc=loc).result

    helper.__name__ = helper.__qualname__ = name
    helper.__doc__ = summary
    return cls, helper


def _make_unary(name: str, summary: str, scalar: Scalar) -> Any:
    doc = f"{summary}\n\n{_unary_example(name, 'f32' if scalar.float_code else 'i32')}"
    cls = relax_op(
        type(_camel(name), (UnaryElementwiseOp,), {"NAME": name, "SCALAR": scalar, "__doc__": doc})
    )

    def helper(x: ir.Value, *, loc: ir.Location | None = None) -> ir.Value:
        return cls.build([x], loc=loc).result

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
        globals()[_camel(_name)], globals()[_name] = _make_binary(_name, _summary, _scalar, _base)
for _name, (_summary, _scalar) in _UNARY.items():
    globals()[_camel(_name)], globals()[_name] = _make_unary(_name, _summary, _scalar)


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
        _require_bool(x, "x")
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
        _require_bool(cond, "cond")
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
