"""Scalar code converting the small float formats (float8, float4) to and from f32/f64 with integer ops.

MLIR keeps ``f8E4M3FN`` & co. as element types, and memrefs of them lower to LLVM as bytes, but
``arith.extf``/``arith.truncf`` on them do not reach LLVM. Kernels therefore ``arith.bitcast`` such an
element to ``i8`` and decode or encode its bits here. Encoding rounds to nearest even and does not
saturate (as ml_dtypes' ``astype``): an overflow gives inf where the format has it (E5M2), else NaN;
float4 E2M1 has neither and clamps to its largest value. Saturating casts clip before converting.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


class Emitter(Protocol):
    """What the conversions need of ``lowering.scalar.Emit``: emit one op, make a constant."""

    def __call__(self, text: str, type_suffix: str | None = None) -> str: ...

    def const(self, value: float, type_: str | None = None) -> str: ...


@dataclass(frozen=True)
class Format:
    """A small float format: sign (if any), ``exp`` exponent bits, ``man`` mantissa bits, ``bias``."""

    bits: int
    exp: int
    man: int
    bias: int
    kind: str  # "fn": NaN = all ones, no inf; "fnuz": NaN = 0x80, no -0; "ieee": inf and NaN; "sat": neither
    max_code: int  # the largest finite magnitude's code (sign bit clear)


FORMATS = {
    "f8E4M3FN": Format(8, 4, 3, 7, "fn", 0x7E),
    "f8E4M3FNUZ": Format(8, 4, 3, 8, "fnuz", 0x7F),
    "f8E5M2": Format(8, 5, 2, 15, "ieee", 0x7B),
    "f8E5M2FNUZ": Format(8, 5, 2, 16, "fnuz", 0x7F),
    "f4E2M1FN": Format(4, 2, 1, 1, "sat", 0x7),
    "f8E8M0FNU": Format(8, 8, 0, 127, "e8m0", 0xFE),
}


def is_minifloat(dtype: str) -> bool:
    return dtype in FORMATS


def max_value(dtype: str) -> float:
    """The largest finite value of a small float format."""
    f = FORMATS[dtype]
    if f.kind == "e8m0":
        return 2.0**127
    e, m = f.max_code >> f.man, f.max_code & ((1 << f.man) - 1)
    return (1 + m / (1 << f.man)) * 2.0 ** (e - f.bias)


def decode(e: Emitter, x: str, dtype: str) -> str:
    """An f32 holding the value of ``x``, an element of small float type ``dtype`` (exact)."""
    f = FORMATS[dtype]
    bits = e(f"arith.bitcast {x}", f"{dtype} to i{f.bits}")
    u = e(f"arith.extui {bits}", f"i{f.bits} to i32")

    def c(v: int) -> str:
        return e.const(v, "i32")

    def eq(a: str, v: int) -> str:
        return e(f"arith.cmpi eq, {a}, {c(v)}", "i32")

    nan = e.const(float("nan"), "f32")
    if f.kind == "e8m0":
        normal = e(f"arith.bitcast {e(f'arith.shli {u}, {c(23)}', 'i32')}", "i32 to f32")
        tiny = e.const(2.0**-127, "f32")
        value = e(f"arith.select {eq(u, 0)}, {tiny}, {normal}", "f32")
        return e(f"arith.select {eq(u, 0xFF)}, {nan}, {value}", "f32")
    sign_shift = f.bits - 1
    mag = e(f"arith.andi {u}, {c((1 << sign_shift) - 1)}", "i32")
    exp = e(f"arith.shrui {mag}, {c(f.man)}", "i32")
    man = e(f"arith.andi {mag}, {c((1 << f.man) - 1)}", "i32")
    rebiased = e(f"arith.addi {exp}, {c(127 - f.bias)}", "i32")
    normal_bits = e(
        f"arith.ori {e(f'arith.shli {rebiased}, {c(23)}', 'i32')}, {e(f'arith.shli {man}, {c(23 - f.man)}', 'i32')}",
        "i32",
    )
    normal = e(f"arith.bitcast {normal_bits}", "i32 to f32")
    sub = e(
        f"arith.mulf {e(f'arith.uitofp {man}', 'i32 to f32')}, {e.const(2.0 ** (1 - f.bias - f.man), 'f32')}",
        "f32",
    )
    value = e(f"arith.select {eq(exp, 0)}, {sub}, {normal}", "f32")
    negative = e(f"arith.cmpi ne, {e(f'arith.shrui {u}, {c(sign_shift)}', 'i32')}, {c(0)}", "i32")
    value = e(f"arith.select {negative}, {e(f'arith.negf {value}', 'f32')}, {value}", "f32")
    if f.kind == "fn":
        return e(f"arith.select {eq(mag, (1 << sign_shift) - 1)}, {nan}, {value}", "f32")
    if f.kind == "fnuz":
        return e(f"arith.select {eq(u, 0x80)}, {nan}, {value}", "f32")
    if f.kind == "ieee":
        all_ones = eq(exp, (1 << f.exp) - 1)
        inf = e.const(float("inf"), "f32")
        special = e(f"arith.select {eq(man, 0)}, {inf}, {nan}", "f32")
        special = e(f"arith.select {negative}, {e(f'arith.negf {special}', 'f32')}, {special}", "f32")
        return e(f"arith.select {all_ones}, {special}, {value}", "f32")
    return value


def encode(e: Emitter, x: str, src: str, dtype: str) -> str:
    """``x`` (an f32 or f64) as an element of small float type ``dtype``: round to nearest even, no
    saturation (overflow gives inf or NaN, or the largest value for float4); E8M0 rounds up."""
    f = FORMATS[dtype]
    width, man_bits, bias = (32, 23, 127) if src == "f32" else (64, 52, 1023)
    it = f"i{width}"

    def c(v: int) -> str:
        return e.const(v, it)

    def op(text: str) -> str:
        return e(text, it)

    def select(flag: str, a: str, b: str) -> str:
        return op(f"arith.select {flag}, {a}, {b}")

    def cmp(pred: str, a: str, b: str) -> str:
        return e(f"arith.cmpi {pred}, {a}, {b}", it)

    u = e(f"arith.bitcast {x}", f"{src} to {it}")
    sign = op(f"arith.shrui {u}, {c(width - 1)}")
    abs_bits = op(f"arith.andi {u}, {c((1 << (width - 1)) - 1)}")
    inf_bits = ((1 << (width - man_bits - 1)) - 1) << man_bits
    is_nan = cmp("ugt", abs_bits, c(inf_bits))
    if f.kind == "e8m0":
        code = _encode_e8m0(op, c, cmp, abs_bits, man_bits, bias, inf_bits)
        return _to_element(e, code, it, f, dtype)
    shift = man_bits - f.man
    lsb = op(f"arith.andi {op(f'arith.shrui {abs_bits}, {c(shift)}')}, {c(1)}")
    rounded = op(f"arith.addi {abs_bits}, {op(f'arith.addi {c((1 << (shift - 1)) - 1)}, {lsb}')}")
    normal = op(f"arith.subi {op(f'arith.shrui {rounded}, {c(shift)}')}, {c((bias - f.bias) << f.man)}")
    # Below the format's smallest normal: add a float whose ulp is the format's subnormal step, so
    # the FPU rounds (to nearest even); the bits above it count subnormal steps.
    magic_value = 2.0 ** (1 - f.bias - f.man + man_bits)
    magic = e.const(magic_value, src)
    absf = e(f"arith.bitcast {abs_bits}", f"{it} to {src}")
    summed = e(f"arith.bitcast {e(f'arith.addf {absf}, {magic}', src)}", f"{src} to {it}")
    magic_bits = e(f"arith.bitcast {magic}", f"{src} to {it}")
    sub = op(f"arith.subi {summed}, {magic_bits}")
    min_normal_bits = (bias - f.bias + 1) << man_bits
    code = select(cmp("ult", abs_bits, c(min_normal_bits)), sub, normal)
    overflow = cmp("ugt", code, c(f.max_code))
    sign_bit = op(f"arith.shli {sign}, {c(f.bits - 1)}")
    if f.kind == "sat":
        code = select(overflow, c(f.max_code), code)
        code = op(f"arith.ori {code}, {sign_bit}")
        flipped = op(f"arith.xori {sign_bit}, {c(1 << (f.bits - 1))}")
        code = select(is_nan, flipped, code)  # ml_dtypes: NaN becomes a zero of the other sign
    elif f.kind == "fnuz":
        signed = op(f"arith.ori {code}, {sign_bit}")
        code = select(cmp("eq", code, c(0)), code, signed)
        code = select(e(f"arith.ori {overflow}, {is_nan}", "i1"), c(0x80), code)
    else:
        over = c(0x7F if f.kind == "fn" else 0x7C)
        code = select(overflow, over, code)
        code = select(is_nan, c(0x7F if f.kind == "fn" else 0x7E), code)
        code = op(f"arith.ori {code}, {sign_bit}")
    return _to_element(e, code, it, f, dtype)


def widen(e: Emitter, x: str, src: str, storage: str, unsigned: bool) -> tuple[str, str]:
    """``x`` of relax dtype ``src`` (stored as ``storage``) as an f32, or f64 when ``src`` is f64: the
    value a small float is encoded from (exact for floats and for the ints a small float can hold)."""
    if src in ("f32", "f64"):
        return x, src
    if src in ("f16", "bf16"):
        return e(f"arith.extf {x}", f"{src} to f32"), "f32"
    if src in FORMATS:
        return decode(e, x, src), "f32"
    return e(f"arith.{'ui' if unsigned else 'si'}tofp {x}", f"{storage} to f32"), "f32"


def sub_byte_astype(e: Emitter, x: str, src: str, dst: str, convert) -> str:  # type: ignore[no-untyped-def]
    """astype from or to a sub-byte int (i4, ui4, i2, ui2: a byte holding the value in its low bits,
    as ml_dtypes stores it). ``convert(value, as_dtype)`` converts a value of ``as_dtype`` to ``dst``
    with the ordinary rules (the conversion's output is then ``dst``; here it is ``i8`` when ``dst``
    is sub-byte)."""
    from relax_mlir.lowering.kernel import SUB_BYTE_INTS
    from relax_mlir.lowering.kernel import element as element_of

    if src in SUB_BYTE_INTS:
        n = SUB_BYTE_INTS[src]
        if src.startswith("ui"):
            x = e(f"arith.andi {x}, {e.const((1 << n) - 1, 'i8')}", "i8")
        else:
            up = e(f"arith.shli {x}, {e.const(8 - n, 'i8')}", "i8")
            x = e(f"arith.shrsi {up}, {e.const(8 - n, 'i8')}", "i8")
        src = "ui8" if src.startswith("ui") else "i8"
        if dst not in SUB_BYTE_INTS:
            return convert(x, src)
    n = SUB_BYTE_INTS[dst]
    # To a byte, wrapping (as ml_dtypes: floats truncate toward zero first), then keep the low bits.
    if src in ("f16", "bf16", "f32", "f64"):
        wide = e(f"arith.fptosi {x}", f"{src} to i64")
        byte = e(f"arith.trunci {wide}", "i64 to i8")
    else:
        storage = element_of(src)
        bits = int(storage[1:])
        byte = x if bits == 8 else e(f"arith.trunci {x}", f"{storage} to i8")
    return e(f"arith.andi {byte}, {e.const((1 << n) - 1, 'i8')}", "i8")


def _encode_e8m0(op, c, cmp, abs_bits: str, man_bits: int, bias: int, inf_bits: int) -> str:  # type: ignore[no-untyped-def]
    """E8M0 from f32 bits as ONNX's Cast (round_mode "up", no saturation): the exponent field, plus one
    when a fraction is left; NaN and inf give 0xFF. The sign is ignored."""
    if man_bits != 23:
        raise ValueError("E8M0 encoding takes f32")
    exp = op(f"arith.shrui {abs_bits}, {c(man_bits)}")
    fraction = op(f"arith.andi {abs_bits}, {c((1 << man_bits) - 1)}")
    up = op(f"arith.select {cmp('ne', fraction, c(0))}, {c(1)}, {c(0)}")
    code = op(f"arith.addi {exp}, {up}")
    return op(f"arith.select {cmp('uge', abs_bits, c(inf_bits))}, {c(0xFF)}, {code}")


def _to_element(e: Emitter, code: str, it: str, f: Format, dtype: str) -> str:
    narrow = e(f"arith.trunci {code}", f"{it} to i{f.bits}")
    return e(f"arith.bitcast {narrow}", f"i{f.bits} to {dtype}")
