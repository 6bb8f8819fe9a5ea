"""``relax-approximate-math``: f32 ``math.exp``, ``math.erf`` and ``math.tanh`` as inline arithmetic.

``convert-math-to-libm`` turns these ops into scalar libm calls, which LLVM cannot vectorize (on vectors it
unrolls them into one call per lane). This pass replaces them, on scalars and vectors alike, with
approximations written only with ``arith`` ops, so loops that call them vectorize. MLIR's own
``PolynomialApproximation`` patterns are not exposed by any pass or transform op in MLIR 22. ``exp`` is
Cephes' expf; ``tanh`` is Eigen's rational approximation near 0 and 1 - 2 / (exp(2|x|) + 1) beyond;
``erf`` is a polynomial near 0 and 1 - exp(poly) beyond (coefficients fitted for this pass).
Accuracy (test/python/test_vectorize.py, against float64 references): ``exp`` within 2 ulp where its
result is a normal float (inf above ln(FLT_MAX), 0 below -87.33: no denormal results; nan stays nan);
``erf`` within 1.5e-7 absolute, with ``1 + erf`` (GELU's negative tail) as accurate as onnxruntime's;
``tanh`` within 1e-6 relative / 1e-7 absolute, exactly +-1 at +-inf.
"""

from __future__ import annotations

import math as pymath

from mlir import ir
from mlir.dialects import arith, math

from relax_mlir.transforms.registry import register_pass

CONTRACT = "#arith.fastmath<contract>"


class _Emitter:
    """Builds arith ops on values of one f32 type (scalar or vector) at the current insertion point."""

    def __init__(self, ftype: ir.Type, native_exp: bool = False) -> None:
        self.ftype = ftype
        self.native_exp = native_exp  # erf and tanh call math.exp instead of the inline expf
        f32 = ir.F32Type.get()
        i32 = ir.IntegerType.get_signless(32)
        i1 = ir.IntegerType.get_signless(1)
        if isinstance(ftype, ir.VectorType):
            self.itype = ir.VectorType.get(ftype.shape, i32)
            self.btype = ir.VectorType.get(ftype.shape, i1)
        else:
            self.itype, self.btype = i32, i1
        self._f32, self._i32 = f32, i32
        self._consts: dict[tuple[str, float], ir.Value] = {}
        self._contract = ir.Attribute.parse(CONTRACT)

    def const(self, value: float) -> ir.Value:
        key = ("f", float(value))
        if key not in self._consts:
            attr = ir.FloatAttr.get(self._f32, float(value))
            if isinstance(self.ftype, ir.VectorType):
                attr = ir.DenseElementsAttr.get_splat(self.ftype, attr)
            self._consts[key] = arith.ConstantOp(self.ftype, attr).result
        return self._consts[key]

    def iconst(self, value: int) -> ir.Value:
        key = ("i", float(value))
        if key not in self._consts:
            attr = ir.IntegerAttr.get(self._i32, value)
            if isinstance(self.ftype, ir.VectorType):
                attr = ir.DenseElementsAttr.get_splat(self.itype, attr)
            self._consts[key] = arith.ConstantOp(self.itype, attr).result
        return self._consts[key]

    def mul(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return arith.MulFOp(a, b, fastmath=self._contract).result

    def add(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return arith.AddFOp(a, b, fastmath=self._contract).result

    def sub(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return arith.SubFOp(a, b, fastmath=self._contract).result

    def div(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return arith.DivFOp(a, b).result

    def clamp(self, x: ir.Value, lo: float, hi: float) -> ir.Value:
        """``x`` clamped to [lo, hi]; nan stays nan (``maximumf``/``minimumf`` propagate it)."""
        return arith.MinimumFOp(arith.MaximumFOp(x, self.const(lo)).result, self.const(hi)).result

    def cmp(self, pred: str, a: ir.Value, b: ir.Value) -> ir.Value:
        preds = {"ogt": 2, "olt": 4, "uno": 14}
        p = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), preds[pred])
        return arith.CmpFOp(p, a, b).result

    def select(self, c: ir.Value, a: ir.Value, b: ir.Value) -> ir.Value:
        return arith.SelectOp(c, a, b).result

    def horner(self, x: ir.Value, coeffs: tuple[float, ...]) -> ir.Value:
        """``coeffs[0] * x^(n-1) + ... + coeffs[-1]`` (highest degree first)."""
        acc = self.const(coeffs[0])
        for c in coeffs[1:]:
            acc = self.add(self.mul(acc, x), self.const(c))
        return acc

    def bits(self, v: ir.Value) -> ir.Value:
        """The i32 bits of an f32 value."""
        return arith.BitcastOp(self.itype, v).result


EXP_HI = 88.72283935546875  # ln(FLT_MAX): exp is inf above
EXP_FLUSH = -87.33  # about ln(FLT_MIN): exp is 0 below (no denormal results)
EXP_POLY = (
    1.9875691500e-4,
    1.3981999507e-3,
    8.3334519073e-3,
    4.1665795894e-2,
    1.6666665459e-1,
    5.0000001201e-1,
)
LN2_HI, LN2_LO = 0.693359375, -2.12194440e-4
ROUND_MAGIC = 12582912.0  # 1.5 * 2^23: adding it rounds an f32 of magnitude < 2^22 to an integer


def _exp(e: _Emitter, x: ir.Value) -> ir.Value:
    """Cephes expf: x = n ln2 + r, |r| <= ln2/2, exp(r) by a degree-7 polynomial; 2^n is added to its
    exponent bits. n is rounded with the 1.5 * 2^23 trick and clamps are compare + select (one vmaxps
    each on x86): about 20 vector instructions."""
    if e.native_exp:
        return math.exp(x)
    xc = e.select(e.cmp("olt", x, e.const(EXP_FLUSH - 0.5)), e.const(EXP_FLUSH - 0.5), x)
    xc = e.select(e.cmp("ogt", xc, e.const(EXP_HI)), e.const(EXP_HI), xc)
    k = e.add(e.mul(xc, e.const(1 / pymath.log(2))), e.const(ROUND_MAGIC))
    fx = e.sub(k, e.const(ROUND_MAGIC))
    n = arith.SubIOp(e.bits(k), e.bits(e.const(ROUND_MAGIC))).result
    r = e.sub(e.sub(xc, e.mul(fx, e.const(LN2_HI))), e.mul(fx, e.const(LN2_LO)))
    y = e.add(e.add(e.mul(e.mul(e.horner(r, EXP_POLY), r), r), r), e.const(1.0))
    scaled = arith.AddIOp(e.bits(y), arith.ShLIOp(n, e.iconst(23)).result).result
    y = arith.BitcastOp(e.ftype, scaled).result
    y = e.select(e.cmp("olt", x, e.const(EXP_FLUSH)), e.const(0.0), y)
    y = e.select(e.cmp("ogt", x, e.const(EXP_HI)), e.const(float("inf")), y)
    return e.select(e.cmp("uno", x, x), x, y)


# Least-squares fits (Chebyshev basis, in float64) made for this pass, highest degree first:
# erf(x) / x = ERF_P(x^2) on |x| < ERF_SPLIT, log(erfc(a)) = ERFC_LOG(a) on [ERF_SPLIT, 4].
ERF_SPLIT = 0.921875
ERF_P = (
    -0.0006101059289409335,
    0.005015090371464511,
    -0.02678175695963269,
    0.1128223969322202,
    -0.37612534742389825,
    1.1283791558516014,
)
ERFC_LOG = (
    1.6293822202826995e-06,
    -4.5880202282697585e-05,
    0.0005950948740567453,
    -0.004750559957138829,
    0.026392483914239553,
    -0.11002429346947426,
    -0.6318911205660517,
    -1.1301919144142796,
    0.00030904624611888254,
)


def _erf(e: _Emitter, x: ir.Value) -> ir.Value:
    """x P(x^2) near 0 (relative accuracy), else sign(x) (1 - exp(Q(|x|))) with erfc = exp(Q) accurate to a
    few ulp of log(erfc), so that 1 + erf(x) keeps its accuracy in GELU's negative tail. No division."""
    a = arith.MaximumFOp(x, e.sub(e.const(0.0), x)).result
    small = e.mul(x, e.horner(e.mul(x, x), ERF_P))
    ac = arith.MinimumFOp(a, e.const(4.0)).result  # erfc(4) = 1.5e-8 rounds 1 - erfc to 1
    big = e.sub(e.const(1.0), _exp(e, e.horner(ac, ERFC_LOG)))
    signed = e.select(e.cmp("olt", x, e.const(0.0)), e.sub(e.const(0.0), big), big)
    return e.select(e.cmp("olt", a, e.const(ERF_SPLIT)), small, signed)


TANH_P = (
    -2.76076847742355e-16,
    2.00018790482477e-13,
    -8.60467152213735e-11,
    5.12229709037114e-08,
    1.48572235717979e-05,
    6.37261928875436e-04,
    4.89352455891786e-03,
)
TANH_Q = (1.19825839466702e-06, 1.18534705686654e-04, 2.26843463243900e-03, 4.89352518554385e-03)
TANH_CLAMP, TANH_TINY, TANH_SMALL = 7.90531110763549805, 0.0004, 0.625


def _tanh(e: _Emitter, x: ir.Value) -> ir.Value:
    """x P(x^2) / Q(x^2) for |x| < 0.625 (x itself where |x| < 4e-4), else sign(x) (1 - 2 / (exp(2|x|) + 1)),
    so that 1 + tanh(x) stays accurate where tanh approaches -1 and tanh(+-inf) is exactly +-1. Both
    branches share one division."""
    xc = e.clamp(x, -TANH_CLAMP, TANH_CLAMP)
    x2 = e.mul(xc, xc)
    a = arith.MaximumFOp(x, e.sub(e.const(0.0), x)).result
    is_small = e.cmp("olt", a, e.const(TANH_SMALL))
    num = e.select(is_small, e.mul(xc, e.horner(x2, TANH_P)), e.const(2.0))
    den = e.select(is_small, e.horner(x2, TANH_Q), e.add(_exp(e, e.add(a, a)), e.const(1.0)))
    q = e.div(num, den)
    big = e.sub(e.const(1.0), q)
    signed = e.select(e.cmp("olt", x, e.const(0.0)), e.sub(e.const(0.0), big), big)
    small = e.select(e.cmp("olt", x2, e.const(TANH_TINY * TANH_TINY)), x, q)
    return e.select(is_small, small, signed)


# Cephes' asinf and atanf polynomials
ASIN_P = (4.2163199048e-2, 2.4181311049e-2, 4.5470025998e-2, 7.4953002686e-2, 1.6666752422e-1)
ATAN_P = (8.05374449538e-2, -1.38776856032e-1, 1.99777106478e-1, -3.33329491539e-1)
HALF_PI = pymath.pi / 2


def _abs(e: _Emitter, x: ir.Value) -> ir.Value:
    return arith.MaximumFOp(x, e.sub(e.const(0.0), x)).result


def _with_sign_of(e: _Emitter, value: ir.Value, x: ir.Value) -> ir.Value:
    return e.select(e.cmp("olt", x, e.const(0.0)), e.sub(e.const(0.0), value), value)


def _asin_abs(e: _Emitter, a: ir.Value) -> ir.Value:
    """asin(a) for a in [0, 1]: a + a z P(z) with z = a^2 up to 0.5, else pi/2 - 2 asin(sqrt((1 - a) / 2))."""
    big = e.cmp("ogt", a, e.const(0.5))
    z = e.select(big, e.mul(e.const(0.5), e.sub(e.const(1.0), a)), e.mul(a, a))
    t = e.select(big, math.sqrt(z), a)
    r = e.add(t, e.mul(e.mul(t, z), e.horner(z, ASIN_P)))
    return e.select(big, e.sub(e.const(HALF_PI), e.add(r, r)), r)


def _asin(e: _Emitter, x: ir.Value) -> ir.Value:
    """Cephes asinf (about 2 ulp on [-1, 1]; nan outside, from sqrt)."""
    return _with_sign_of(e, _asin_abs(e, _abs(e, x)), x)


def _acos(e: _Emitter, x: ir.Value) -> ir.Value:
    """acos(x) = pi/2 - asin(x) near 0; 2 asin(sqrt((1 - |x|) / 2)) (or pi minus it) beyond 0.5, so that
    results near 0 and pi keep their relative accuracy."""
    a = _abs(e, x)
    outer = e.add(*(2 * [_asin_abs(e, math.sqrt(e.mul(e.const(0.5), e.sub(e.const(1.0), a))))]))
    outer = e.select(e.cmp("olt", x, e.const(0.0)), e.sub(e.const(pymath.pi), outer), outer)
    inner = e.sub(e.const(HALF_PI), _with_sign_of(e, _asin_abs(e, a), x))
    return e.select(e.cmp("ogt", a, e.const(0.5)), outer, inner)


def _atan(e: _Emitter, x: ir.Value) -> ir.Value:
    """Cephes atanf: |x| reduced to [0, tan(pi/8)] with pi/2 - atan(1/|x|) or pi/4 + atan((|x|-1)/(|x|+1))."""
    a = _abs(e, x)
    far = e.cmp("ogt", a, e.const(2.414213562373095))
    mid = e.cmp("ogt", a, e.const(0.4142135623730950))
    reduced = e.select(
        far, e.div(e.const(-1.0), a), e.select(mid, e.div(e.sub(a, e.const(1.0)), e.add(a, e.const(1.0))), a)
    )
    base = e.select(far, e.const(HALF_PI), e.select(mid, e.const(pymath.pi / 4), e.const(0.0)))
    z = e.mul(reduced, reduced)
    r = e.add(base, e.add(reduced, e.mul(e.mul(reduced, z), e.horner(z, ATAN_P))))
    return _with_sign_of(e, r, x)


def _asinh(e: _Emitter, x: ir.Value) -> ir.Value:
    """sign(x) log(|x| + sqrt(x^2 + 1)): odd by construction (``math-expand-ops``' log(x + sqrt(x^2 + 1))
    cancels to -inf for large negative x); |x| beyond 2^62 as log(2|x|), whose square would overflow."""
    a = _abs(e, x)
    big = e.cmp("ogt", a, e.const(2.0**62))
    inner = e.add(a, math.sqrt(e.add(e.mul(a, a), e.const(1.0))))
    r = math.log(e.select(big, e.add(a, a), inner))
    return _with_sign_of(e, r, x)


APPROXIMATIONS = {
    "math.exp": _exp,
    "math.erf": _erf,
    "math.tanh": _tanh,
    "math.asin": _asin,
    "math.acos": _acos,
    "math.atan": _atan,
    "math.asinh": _asinh,
}


def _is_f32(t: ir.Type) -> bool:
    elem = t.element_type if isinstance(t, ir.VectorType) else t
    return isinstance(elem, ir.F32Type)


@register_pass("relax-approximate-math")
class ApproximateMath:
    """Replace f32 math.exp/erf/tanh (scalars and vectors) with inline polynomial approximations."""

    ops: str = (
        "exp,erf,tanh"  # which of them (also asin, acos, atan, asinh: for GPU shaders, whose own are loose)
    )
    # keep math.exp (also inside erf and tanh): where exp is native and the 1.5 * 2^23 rounding trick is
    # not safe (GPU shader compilers may reassociate it away)
    native_exp: bool = False

    def run(self, module: ir.Operation) -> None:
        found: list[ir.Operation] = []
        names = {f"math.{name}" for name in self.ops.split(",")} - (
            {"math.exp"} if self.native_exp else set()
        )

        def visit(op: ir.Operation) -> ir.WalkResult:
            if op.name in names and _is_f32(op.results[0].type):
                found.append(op)
            return ir.WalkResult.ADVANCE

        module.walk(visit)
        for op in found:
            with ir.InsertionPoint(op), op.location:
                new = APPROXIMATIONS[op.name](_Emitter(op.results[0].type, self.native_exp), op.operands[0])
            op.results[0].replace_all_uses_with(new)
            op.erase()
