"""Scalar comparisons in numpy's order for kernels: NaN sorts as an extreme and equals itself."""

from __future__ import annotations

from relax_mlir.lowering.kernel import KernelBuilder, element, is_float, unsigned_order


def is_nan(k: KernelBuilder, dtype: str, a: str) -> str:
    return k.scalar(f"arith.cmpf uno, {a}, {a}", element(dtype))


def precedes(k: KernelBuilder, greater: bool, nan_first: bool, dtype: str, a: str, b: str) -> str:
    """``a`` comes strictly before ``b``: a > b (``greater``) or a < b; NaN before (or after) every number."""
    t = element(dtype)
    if not is_float(dtype):
        pred = ("ugt" if greater else "ult") if unsigned_order(dtype) else ("sgt" if greater else "slt")
        return k.scalar(f"arith.cmpi {pred}, {a}, {b}", t)
    strict = k.scalar(f"arith.cmpf {'ogt' if greater else 'olt'}, {a}, {b}", t)
    nan, number = (a, b) if nan_first else (b, a)
    by_nan = k.scalar(
        f"arith.andi {is_nan(k, dtype, nan)}, {k.scalar(f'arith.cmpf ord, {number}, {number}', t)}", "i1"
    )
    return k.scalar(f"arith.ori {strict}, {by_nan}", "i1")


def equal(k: KernelBuilder, dtype: str, a: str, b: str) -> str:
    """``a == b``, NaN equal to NaN."""
    t = element(dtype)
    if not is_float(dtype):
        return k.scalar(f"arith.cmpi eq, {a}, {b}", t)
    both = k.scalar(f"arith.andi {is_nan(k, dtype, a)}, {is_nan(k, dtype, b)}", "i1")
    return k.scalar(f"arith.ori {k.scalar(f'arith.cmpf oeq, {a}, {b}', t)}, {both}", "i1")
