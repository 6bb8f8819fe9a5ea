"""Checks of ``relax-lower-host``: ``match_cast`` casts and the run-time checks they and ``relax.call``
arguments need, either a branch to a failure block or (inside a region) a failure recorded in the status."""

from __future__ import annotations

from typing import Any

from mlir import ir

from relax_mlir.dialects.ops.structural import cast_cannot_fail
from relax_mlir.dialects.types import PrimType, RelaxType, TensorType, TupleType
from relax_mlir.errors import UnsupportedOpError
from relax_mlir.lowering.kernel import builtin_tensor
from relax_mlir.shape_infer.expr import Expr, format_dim
from relax_mlir.transforms.host_values import _Ints, _location, _Tensor, _Tuple


class CheckLowering:
    """Casts and checks, mixed into the host writer (``lower_host._HostWriter``): uses its function text
    ``f``, index code ``code``, symbols ``env``, ``status`` buffer and ``depth`` / ``control_flow``."""

    def _cast(self, src: Any, target: RelaxType | None, op: ir.Operation) -> Any:
        where = _location(op) + op.name  # relax.match_cast, or an op that checks like one (relax.check_size)
        if isinstance(src, _Tuple):
            assert isinstance(target, TupleType)
            return _Tuple([self._cast(s, t, op) for s, t in zip(src.fields, target.fields)])
        if isinstance(src, _Tensor):
            if not isinstance(target, TensorType) or target.shape is None:
                return src
            trusted = cast_cannot_fail(src.type, target)  # e.g. a branch's value weakened to the join
            if src.type.shape is not None and len(src.type.shape) != len(target.shape):
                raise UnsupportedOpError(f"{where}: rank {len(src.type.shape)} vs {len(target.shape)}")
            oks = []
            for axis, d in enumerate(target.shape):
                if d is None or trusted:
                    continue
                ok = self._check_dim(self._dim(src, axis), d, f"{where}: dim {axis} of {src.type}")
                oks.append(ok)
            new_type = TensorType(target.shape, target.dtype or src.type.dtype)
            value = src.name
            if builtin_tensor(new_type) != src.mlir:
                value = self.f.fresh("cast")
                self.f.lines.append(
                    f"{value} = tensor.cast {src.name} : {src.mlir} to {builtin_tensor(new_type)}"
                )
            return _Tensor(self._checked_tensor(value, src, new_type, [x for x in oks if x]), new_type)
        if isinstance(src, _Ints):
            dims = [target.value] if isinstance(target, PrimType) else getattr(target, "values", None)
            if dims is None:
                return src
            names = list(src.names)
            for j, (actual, d) in enumerate(zip(src.names, dims)):
                if d is None:
                    continue
                ok = self._check_dim(actual, d, f"{where}: value #{j}")
                if ok:  # inside a region, a failed check goes on with the expected value
                    names[j] = self.f.fresh("checked")
                    self.f.lines.append(
                        f"{names[j]} = arith.select {ok}, {actual}, {self.code.value(d)} : index"
                    )
            return _Ints(names, src.is_shape)
        return src

    def _checked_tensor(self, value: str, src: _Tensor, t: TensorType, oks: list[str]) -> str:
        """``value``, or, when a check inside a region failed (``oks``), an uninitialized tensor of the expected
        shape: the rest of the iteration then stays inside its buffers until the loop stops and the runtime raises."""
        if not oks:
            return value
        ok = oks[0]
        for other in oks[1:]:
            both = self.f.fresh("ok")
            self.f.lines.append(f"{both} = arith.andi {ok}, {other} : i1")
            ok = both
        sizes = [
            self._dim(src, axis) if d is None else self.code.value(d)
            for axis, d in enumerate(t.shape)  # type: ignore[arg-type]
            if d is None or not d.is_const
        ]
        out, empty, mlir = self.f.fresh("checked"), self.f.fresh("empty"), builtin_tensor(t)
        self.f.lines += [  # not an scf.if: a buffer allocated in one branch only needs an i1 memref to free
            f"{empty} = tensor.empty({', '.join(sizes)}) : {mlir}",
            f"{out} = arith.select {ok}, {value}, {empty} : {mlir}",
        ]
        return out

    def _check_dim(self, actual: str, d: Expr, what: str) -> str | None:
        """Bind a new bare symbol to ``actual``, or branch to a failure block unless it equals ``d``. Inside a
        region (no branch out of it), record the failure instead and return the i1 that says the check held."""
        if len(d.free_symbols) == 1 and str(d) in d.free_symbols and str(d) not in self.env:
            self.env[str(d)] = actual
            return None
        expected = self.code.value(d)
        if expected == actual:
            return None
        ok = self.f.fresh("ok")
        self.f.lines.append(f"{ok} = arith.cmpi eq, {actual}, {expected} : index")
        # no branch out of a region, nor after one (a loop or branch result would cross blocks, which
        # ownership-based deallocation cannot handle): record it, the runtime raises after the call
        message = f"{what} must be {format_dim(d)}, got {{actual}} (expected {{expected}})"
        if self.depth or self.control_flow:
            self.record_check(ok, actual, expected, message)
            return ok
        self._branch(ok, actual, expected, message)
        return None

    def _branch(self, ok: str, actual: str, expected: str, message: str) -> None:
        """Continue when the i1 ``ok`` holds, else fail with check ``message`` (see ``executable.format_check``)."""
        check = len(self.f.checks)
        self.f.checks.append(message)
        label = f"^fail{check}"
        cont = f"^bb{check}"
        self.f.lines += [
            f"cf.cond_br {ok}, {cont}, {label}({actual}, {expected} : index, index)",
            f"{cont}:",
        ]
        self._fail_block(label, check)

    def record_check(self, ok: str, actual: str, expected: str, message: str) -> None:
        """Unless the i1 ``ok`` holds, record check ``message`` in the status (the first failure wins), without
        branching: the code goes on (kernels that rely on the check clamp their accesses, so they stay inside
        their buffers) and the runtime raises after the call. A branch to a failure block (as match_cast checks
        do) or an ``scf.if`` around the kernel would make buffers cross blocks, which ownership-based buffer
        deallocation cannot always handle (data-dependent sizes need an i1 memref, DESIGN.md section 6)."""
        check = len(self.f.checks)
        self.f.checks.append(message)
        cur, zero, first, true, bad, record = (self.f.fresh("rec") for _ in range(6))
        code, a, e = (self.f.fresh("rec") for _ in range(3))
        self.f.lines += [
            f"{cur} = memref.load {self.status}[{self.code.const(0)}] : memref<4xi64>",
            f"{zero} = arith.constant 0 : i64",
            f"{first} = arith.cmpi eq, {cur}, {zero} : i64",
            f"{true} = arith.constant true",
            f"{bad} = arith.xori {ok}, {true} : i1",
            f"{record} = arith.andi {bad}, {first} : i1",
            f"scf.if {record} {{",
            f"  {code} = arith.constant {check + 1} : i64",
            f"  {a} = arith.index_cast {actual} : index to i64",
            f"  {e} = arith.index_cast {expected} : index to i64",
            f"  memref.store {code}, {self.status}[{self.code.const(0)}] : memref<4xi64>",
            f"  memref.store {a}, {self.status}[{self.code.const(1)}] : memref<4xi64>",
            f"  memref.store {e}, {self.status}[{self.code.const(2)}] : memref<4xi64>",
            "}",
        ]

    def _fail_block(self, label: str, check: int) -> None:
        a, e = f"%fa{check}", f"%fe{check}"
        code = f"%fc{check}"
        lines = [f"{label}({a}: index, {e}: index):"]
        lines.append(f"  {code} = arith.constant {check + 1} : i64")
        # the first failure wins: one inside a called function (relax.call) may already be recorded
        lines += [
            f"  %fi{check}_0 = arith.constant 0 : index",
            f"  %fs{check} = memref.load {self.status}[%fi{check}_0] : memref<4xi64>",
            f"  %fo{check} = arith.constant 0 : i64",
            f"  %ff{check} = arith.cmpi eq, %fs{check}, %fo{check} : i64",
            f"  scf.if %ff{check} {{",
        ]
        for j, v in enumerate((code, a, e)):
            x = v
            if v != code:
                x = f"%fx{check}_{j}"
                lines.append(f"    {x} = arith.index_cast {v} : index to i64")
            c = f"%fi{check}_{j}"
            if j:
                lines.append(f"    {c} = arith.constant {j} : index")
            lines.append(f"    memref.store {x}, {self.status}[{c}] : memref<4xi64>")
        lines.append("  }")
        dummies = []
        types = self.dynamic_types()
        if any("?" in t for t in types):
            lines.append(f"  %fz{check} = arith.constant 0 : index")
        for j, t in enumerate(types):
            sizes = ", ".join(f"%fz{check}" for _ in range(t.count("?")))
            lines.append(f"  %fd{check}_{j} = tensor.empty({sizes}) : {t}")
            dummies.append(f"%fd{check}_{j}")
        if dummies:
            lines.append(f"  return {', '.join(dummies)} : {', '.join(types)}")
        else:
            lines.append("  return")
        self.f.fail_blocks.extend(lines)
