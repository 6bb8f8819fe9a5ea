"""``convert-relax-to-linalg``: rewrite relax compute ops into ``call_tir`` of linalg kernels.

Each op class that can be lowered has a ``lower(k: KernelBuilder)`` classmethod (next to its
deduction) that writes a kernel on builtin tensors. Identical kernels are shared. What a kernel
assumes about its operands' dims (for example that ``k`` of one matmul operand equals ``k2`` of the
other) is inserted before the call as a ``relax.match_cast``, which is checked at run time; symbols
a kernel needs but cannot read from its tensors are passed as ``relax.prim_value`` arguments. Indices a
kernel reads memory at (``k.check_indices``) go through a ``relax.check_index`` of their min and max (an
``index_range`` kernel's call), which the host code checks before the call.
Structural and shape ops (match_cast, shape_of, tuples, constants, get_dim, ...) stay: the host
lowering handles them.
"""

from __future__ import annotations

from collections.abc import Callable

from mlir import ir

from relax_mlir.dialects.ops.index import index_range_kernel
from relax_mlir.dialects.ops.shape_value import prim_value
from relax_mlir.dialects.ops.structural import (
    CheckBroadcastOp,
    CheckDimOp,
    CheckIndexOp,
    CheckSizeOp,
    MatchCastOp,
    call_tir,
)
from relax_mlir.dialects.registry import INPLACE_ATTR, OPS, RelaxOp, op_class
from relax_mlir.dialects.types import TensorType, relax_type
from relax_mlir.errors import RelaxError
from relax_mlir.lowering.kernel import SUB_BYTE_INTS, IndexCheck, KernelBuilder
from relax_mlir.lowering.minifloat import is_minifloat
from relax_mlir.shape_infer.expr import format_dim
from relax_mlir.transforms.registry import PassFailed, register_pass


def lowerable_ops() -> list[str]:
    """Names of the relax ops that have a kernel lowering."""
    return sorted(name for name, cls in OPS.items() if hasattr(cls, "lower"))


@register_pass("convert-relax-to-linalg")
class ConvertRelaxToLinalg:
    """Rewrite relax compute ops into call_tir of linalg kernels (``ops=a,b`` lowers only those;
    ``conv=direct`` lowers convolutions to named linalg convolutions instead of im2col + matmul per image,
    for targets that map loops onto GPU threads; prefill attention then uses whole-tensor batch matmuls
    instead of the CPU's host loop over query blocks)."""

    ops: str = ""
    conv: str = "im2col"
    # the CPU whose instructions kernels may use: "host" (compile() runs there), "portable" (none beyond
    # LLVM's generic vectors: AOT and other targets) or an LLVM feature list "+avx512f,+avx512vnni"
    target_features: str = "host"

    def run(self, module: ir.Operation) -> None:
        selected = self._selected()
        kernels: dict[str, str] = {}  # kernel text (with a placeholder name) -> function name
        taken = {str(ir.StringAttr(op.attributes["sym_name"]).value) for op in _functions(module)}
        new_functions: list[str] = []
        failed = False

        def kernel_name(k: KernelBuilder, results: list, base: str) -> str:
            """The function name of the kernel ``k`` writes (shared when the same text was written before)."""
            text = k.function_text("__KERNEL__", results)
            name = kernels.get(text)
            if name is None:
                name = _fresh_name(base, taken)
                kernels[text] = name
                new_functions.append(text.replace("@__KERNEL__", f"@{name}", 1))
            return name

        for op in _relax_ops(module):
            cls = op_class(op)
            if cls is None or not hasattr(cls, "lower") or (selected and cls.NAME not in selected):
                continue
            try:
                k, results = _write_kernel(
                    cls, op, {"conv": self.conv, "target_features": self.target_features}
                )
            except RelaxError as e:
                op.location.emit_error(f"'{op.name}' op cannot be lowered: {e}")
                failed = True
                continue
            _replace_with_call(op, k, kernel_name(k, results, cls.NAME), kernel_name)
            for symbol, declaration in k.externs.items():
                if symbol not in taken:
                    taken.add(symbol)
                    new_functions.append(declaration)
        if failed:
            raise PassFailed("some relax ops could not be lowered")
        if new_functions:
            _append_functions(module, "\n".join(new_functions))

    def _selected(self) -> set[str]:
        names = {n.strip() for n in self.ops.split(",") if n.strip()}
        unknown = sorted(n for n in names if n not in OPS or not hasattr(OPS[n], "lower"))
        if unknown:
            raise PassFailed(
                f"convert-relax-to-linalg: no lowering for op(s) {', '.join(unknown)}; "
                f"lowerable ops: {', '.join(lowerable_ops())}"
            )
        if self.conv not in ("im2col", "direct"):
            raise PassFailed(f"convert-relax-to-linalg: conv must be 'im2col' or 'direct', got '{self.conv}'")
        return names


def _write_kernel(
    cls: type[RelaxOp], op: ir.Operation, choices: dict[str, str]
) -> tuple[KernelBuilder, list]:
    view: RelaxOp = op.opview  # type: ignore[assignment]
    operand_types = view.operand_types()
    result_types = [relax_type(r.type) for r in op.results]
    for i, t in enumerate(result_types):
        if not isinstance(t, TensorType) or t.shape is None or t.dtype is None:
            hint = ""
            if isinstance(t, TensorType) and t.shape is None:
                hint = " (state the operands' ranks with relax.match_cast first)"
            raise RelaxError(
                f"result #{i} has type {t}; lowering needs a tensor of known rank and dtype{hint}"
            )
    _check_storage_dtypes(cls, [*operand_types, *result_types])
    k = KernelBuilder(cls.NAME, list(operand_types), result_types, view.attr_values(), choices)  # type: ignore[arg-type]
    results = cls.lower(k)  # type: ignore[attr-defined]
    return k, k.unless_empty(results)


def _check_storage_dtypes(cls: type[RelaxOp], types: list) -> None:
    """Only ops that move bits (``BIT_MOVING``) may touch storage-only dtypes (float8/float4 and sub-byte
    ints, whose kernels hold raw codes): any arithmetic on those codes would be silently wrong."""
    if cls.BIT_MOVING:
        return
    for t in types:
        dtype = getattr(t, "dtype", None)
        if dtype is not None and (is_minifloat(dtype) or dtype in SUB_BYTE_INTS):
            raise RelaxError(
                f"relax.{cls.NAME} does not compute on {dtype} (a storage type); astype to f32 or i32 first"
            )


def _replace_with_call(
    op: ir.Operation, k: KernelBuilder, callee: str, kernel_name: Callable[[KernelBuilder, list, str], str]
) -> None:
    ip = ir.InsertionPoint(op)
    args = list(op.operands)
    with op.location:
        for index, refined in k.assumed.items():
            args[index] = MatchCastOp.build(
                [args[index]], result_types=[refined], loc=op.location, ip=ip
            ).result
        for index, size in k.sized.items():
            args[index] = CheckSizeOp.build(
                [args[index]], {"size": str(format_dim(size))}, loc=op.location, ip=ip
            ).result
        with ip:
            for check in k.index_checks:
                args[check.indices] = _check_indices(op, k, args, check, kernel_name)
            for b in k.broadcast_checks:
                attrs = {"dim_a": b.dim_a, "dim_b": b.dim_b, "op": k.op_name}
                args[b.a] = CheckBroadcastOp.build([args[b.a], args[b.b]], attrs, loc=op.location).result
            for c in k.dim_checks:
                attrs = {"dim": c.dim, "bound": c.bound, "op": k.op_name, "what": c.what}
                args[c.value] = CheckDimOp.build([args[c.value], args[c.x]], attrs, loc=op.location).result
            args += [prim_value(s, loc=op.location) for s in k.symbol_params]
            results = call_tir(callee, args, k.result_types, loc=op.location)
    cls = op_class(op)
    if cls.INPLACE:  # type: ignore[union-attr]  # relax-lower-host passes these operands' buffers as the destinations
        i64 = ir.IntegerType.get_signless(64)
        results[0].owner.attributes[INPLACE_ATTR] = ir.ArrayAttr.get(
            [ir.IntegerAttr.get(i64, i) for i in cls.INPLACE]  # type: ignore[union-attr]
        )
    if "relax.fusion_group" in op.attributes:  # relax-fuse-ops' grouping, for relax-fuse-kernels
        results[0].owner.attributes["relax.fusion_group"] = op.attributes["relax.fusion_group"]
    for old, new in zip(op.results, results):
        old.replace_all_uses_with(new)
    op.erase()


def _check_indices(
    op: ir.Operation,
    k: KernelBuilder,
    args: list[ir.Value],
    check: IndexCheck,
    kernel_name: Callable[[KernelBuilder, list, str], str],
) -> ir.Value:
    """``args[check.indices]`` through a ``relax.check_index`` of its range (an ``index_range`` kernel's call),
    or as it is when it is a constant provably in range."""
    if _constant_in_range(args[check.indices], k, check):
        return args[check.indices]
    rk, results = index_range_kernel(k.operand_types[check.indices])  # type: ignore[arg-type]
    name = kernel_name(rk, results, rk.op_name)
    low, high = call_tir(name, [args[check.indices]], rk.result_types, loc=op.location)
    attrs = {"axis": check.axis, "bounded": list(check.bounded), "op": k.op_name}
    return CheckIndexOp.build([args[check.indices], args[check.x], low, high], attrs, loc=op.location).result


def _constant_in_range(v: ir.Value, k: KernelBuilder, check: IndexCheck) -> bool:
    """Whether ``v`` is an inline constant whose values lie in ``[-d, d)`` for a static dim ``d`` (and no dim
    needs checking): then nothing is left to check at run time."""
    x = k.operand_types[check.x]
    dim = x.shape[check.axis] if isinstance(x, TensorType) and x.shape is not None else None
    if check.bounded or dim is None or not dim.is_const or not isinstance(v, ir.OpResult):
        return False
    if v.owner.name != "relax.constant":
        return False
    try:
        dense = ir.DenseIntElementsAttr(v.owner.attributes["value"])
    except ValueError:  # dense_resource, or not integers
        return False
    values = [dense.get_splat_value().value] if dense.is_splat else [dense[i] for i in range(len(dense))]
    return all(-dim.value <= i < dim.value for i in values)


def _functions(module: ir.Operation) -> list[ir.Operation]:
    return [op.operation for op in module.regions[0].blocks[0].operations if op.operation.name == "func.func"]


def _relax_ops(module: ir.Operation) -> list[ir.Operation]:
    """Every relax op inside the module's functions, in program order."""
    ops: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name.startswith("relax."):
            ops.append(op)
        return ir.WalkResult.ADVANCE

    for f in _functions(module):
        f.walk(visit, ir.WalkOrder.PRE_ORDER)
    return ops


def _fresh_name(base: str, taken: set[str]) -> str:
    i = 0
    while f"{base}_{i}" in taken:
        i += 1
    taken.add(f"{base}_{i}")
    return f"{base}_{i}"


def _append_functions(module: ir.Operation, text: str) -> None:
    """Parse kernel functions and move them into ``module``."""
    parsed = ir.Module.parse(text)
    body = module.regions[0].blocks[0]
    for f in list(parsed.body.operations):
        body.append(f.operation)
