"""Scalar code of elementwise kernels: ``Emit`` writes one op's scalar code inside a ``linalg.generic`` body,
``Scalar`` holds an op's code per element kind, and ``lower_elementwise`` makes the broadcasting kernel.

Booleans are 0/1 bytes in kernels (``element("i1")``), so their logic is byte logic; comparisons give
``i1`` flags, stored back as bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from relax_mlir.lowering.kernel import (
    KernelBuilder,
    KernelValue,
    element,
    is_float,
    is_unsigned,
    unsigned_order,
)


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


def int_range(dtype: str) -> tuple[int, int]:
    """The smallest and largest value of an integer dtype (i1 is 0 and 1)."""
    if dtype == "i1":
        return 0, 1
    width = type_bits(element(dtype))
    if is_unsigned(dtype):
        return 0, (1 << width) - 1
    return -(1 << (width - 1)), (1 << (width - 1)) - 1
