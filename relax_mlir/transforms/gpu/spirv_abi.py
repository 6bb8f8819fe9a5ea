"""``relax-spirv-kernel-abi``: outlined kernels in the form WebGPU binds (the webgpu target's kernel ABI).

WebGPU binds whole storage buffers and knows nothing of memref descriptors, and MLIR's SPIR-V lowering
takes only identity-layout memrefs. So each ``gpu.func`` kernel gets, in place of its arguments:

- one flat ``memref<?xT>`` per memref argument (descriptor set 0, binding i: the buffer the host
  allocated, bound whole or from an aligned offset), indexed by ``offset + sum(i_k * stride_k)``;
- one ``memref<?xi32>`` "params" argument (the last binding): for each memref argument its element offset,
  sizes and strides, then each scalar argument as one i32 (f32 scalars bitcast, index values i32: SPIR-V
  indices are 32-bit here).

The host side is untouched (``gpu.launch_func`` still passes descriptors); the runtime
(``targets/webgpu_runtime.py``) turns them into bindings and params with the layout this pass records in
the module's ``relax.webgpu_kernels`` attribute (JSON: per ``module.entry`` the workgroup size, from
``known_block_size``, and for each argument its kind, element type, rank, binding and params position)::

    gpu.func @k(%n: index, %x: memref<?x4xf32>) kernel
  ->
    gpu.func @k(%x: memref<?xf32>, %params: memref<?xi32>) kernel
        attributes {spirv.entry_point_abi = #spirv.entry_point_abi<workgroup_size = [256, 1, 1]>}
    // params = [x.offset, x.size0, x.size1, x.stride0, x.stride1, n]

Uses of a memref argument must be ``memref.load``, ``memref.store`` or ``memref.dim`` (run
``fold-memref-alias-ops`` first, which folds views into the accesses); anything else is a ``PassError``
naming the op.
"""

from __future__ import annotations

import json
import math
import struct

from mlir import ir, passmanager
from mlir.dialects import arith, memref

from relax_mlir.errors import PassError
from relax_mlir.transforms.approximate_math import ApproximateMath
from relax_mlir.transforms.gpu.ir_util import collect, index, producer
from relax_mlir.transforms.registry import register_pass

KERNELS_ATTR = "relax.webgpu_kernels"
_DYNAMIC = ir.ShapedType.get_dynamic_size()
_DYNAMIC_STRIDE = ir.ShapedType.get_dynamic_stride_or_offset()


def _i32() -> ir.Type:
    return ir.IntegerType.get_signless(32)


class _Params:
    """Reads values of the params buffer, each once, at the kernel's entry."""

    def __init__(self, params: ir.Value) -> None:
        self.params = params
        self.count = 0

    def next_i32(self) -> ir.Value:
        value = memref.load(self.params, [index(self.count)])
        self.count += 1
        return value

    def next_i64(self) -> ir.Value:
        """A 64-bit value from two slots, low word first."""
        i64 = ir.IntegerType.get_signless(64)
        low, high = arith.extui(i64, self.next_i32()), arith.extui(i64, self.next_i32())
        return arith.ori(low, arith.shli(high, arith.constant(i64, 32)))

    def next_index(self, static: int | None = None) -> ir.Value:
        value = self.next_i32()
        if static is not None and static not in (_DYNAMIC, _DYNAMIC_STRIDE):
            return index(static)  # the slot is still filled by the runtime; the constant folds better
        return arith.index_cast(ir.IndexType.get(), value)

    def next_scalar(self, t: ir.Type, where: str) -> ir.Value:
        if isinstance(t, ir.IndexType):
            return arith.index_cast(t, self.next_i32())
        if isinstance(t, ir.IntegerType) and t.width == 64:
            return self.next_i64()
        if isinstance(t, ir.F64Type):
            return arith.bitcast(t, self.next_i64())
        if isinstance(t, ir.IntegerType):
            raw = self.next_i32()
            return raw if t.width == 32 else arith.trunci(t, raw)
        if isinstance(t, ir.F32Type):
            return arith.bitcast(t, self.next_i32())
        if isinstance(t, ir.F16Type):
            return arith.bitcast(t, arith.trunci(ir.IntegerType.get_signless(16), self.next_i32()))
        raise PassError(f"{where}: a scalar kernel argument of type {t} cannot be passed to a WebGPU kernel")


def _strides(t: ir.MemRefType) -> list[int]:
    strides, _ = t.get_strides_and_offset()
    return list(strides)


def _linear(offset: ir.Value, strides: list[ir.Value], indices: list[ir.Value]) -> ir.Value:
    linear = offset
    for i, s in zip(indices, strides, strict=True):
        linear = arith.addi(linear, arith.muli(i, s))
    return linear


def _storage_type(t: ir.Type) -> ir.Type:
    """How elements are stored in a buffer: ``index`` as the host's 64-bit integers."""
    return ir.IntegerType.get_signless(64) if isinstance(t, ir.IndexType) else t


def _dim(sizes: list[ir.Value], dim: ir.Value) -> ir.Value:
    """``sizes[dim]`` for a run-time ``dim``."""
    constant = producer(dim)
    if constant is not None and constant.name == "arith.constant":
        return sizes[ir.IntegerAttr(constant.attributes["value"]).value]
    value = sizes[0]
    for i in range(1, len(sizes)):
        value = arith.select(arith.cmpi(arith.CmpIPredicate.eq, dim, index(i)), sizes[i], value)
    return value


class _Kernel:
    """One kernel's rewrite: its arguments become flat buffers and reads of the params buffer."""

    def __init__(self, func: ir.Operation, key: str) -> None:
        self.func, self.key = func, key
        self.entry = func.regions[0].blocks[0]
        inputs = len(ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value).inputs)
        self.args = list(self.entry.arguments)[:inputs]
        self.attributions = list(self.entry.arguments)[inputs:]  # workgroup and private memory

    def rewrite(self) -> dict:
        loc = self.func.location
        memrefs = [a for a in self.args if isinstance(a.type, ir.MemRefType)]
        flats = [
            self.entry.add_argument(
                ir.MemRefType.get([_DYNAMIC], _storage_type(ir.MemRefType(a.type).element_type)), loc
            )
            for a in memrefs
        ]
        params = _Params(self.entry.add_argument(ir.MemRefType.get([_DYNAMIC], _i32()), loc))
        # workgroup and private memory as allocations, which the SPIR-V lowering maps to its storage classes
        with ir.InsertionPoint(self.entry.operations[0]), loc:
            for old in self.attributions:
                t = ir.MemRefType(old.type)
                workgroup = "workgroup" in str(t.memory_space)
                # Vulkan's numbering of storage classes (map-memref-spirv-storage-class): 3 workgroup, 6 function
                space = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 3 if workgroup else 6)
                new_type = ir.MemRefType.get(t.shape, t.element_type, t.layout, space)
                memory = memref.alloc(new_type, [], []) if workgroup else memref.alloca(new_type, [], [])
                for use in list(old.uses):
                    if use.owner.name not in ("memref.load", "memref.store"):
                        raise PassError(
                            f"kernel {self.key}: workgroup memory used by '{use.owner.name}'; only loads and "
                            "stores are lowered"
                        )
                    use.owner.operands[use.operand_number] = memory
        infos: dict[int, dict] = {}  # by argument position
        views, scalars = {}, {}
        with ir.InsertionPoint(self.entry.operations[0]), loc:
            positions = [i for i, a in enumerate(self.args) if isinstance(a.type, ir.MemRefType)]
            for binding, (arg, flat) in enumerate(zip(memrefs, flats, strict=True)):
                t = ir.MemRefType(arg.type)
                infos[positions[binding]] = {
                    "kind": "memref",
                    "dtype": str(_storage_type(t.element_type)),
                    "rank": t.rank,
                    "binding": binding,
                    "params_at": params.count,
                }
                offset = params.next_index()
                sizes = [params.next_index(s) for s in t.shape]
                strides = [params.next_index(s) for s in _strides(t)]
                views[arg] = (flat, offset, sizes, strides)
            for i, arg in enumerate(self.args):
                if not isinstance(arg.type, ir.MemRefType):
                    infos[i] = {"kind": "scalar", "dtype": str(arg.type), "params_at": params.count}
                    scalars[arg] = params.next_scalar(arg.type, f"kernel {self.key}")
        for arg, value in scalars.items():
            arg.replace_all_uses_with(value)
        for arg, view in views.items():
            for use in list(arg.uses):
                self._rewrite_use(use, *view)
        for i in reversed(range(len(self.args) + len(self.attributions))):
            self.entry.erase_argument(i)
        inputs = [a.type for a in self.entry.arguments][: len(flats) + 1]
        self.func.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, []))
        for attr in ("arg_attrs", "workgroup_attrib_attrs", "private_attrib_attrs"):
            if attr in self.func.attributes:
                del self.func.attributes[attr]
        self.func.attributes["workgroup_attributions"] = ir.IntegerAttr.get(
            ir.IntegerType.get_signless(64), 0
        )
        return {  # arguments in the order of the kernel's (and the launch's)
            "args": [infos[i] for i in range(len(self.args))],
            "params": params.count,
            "bindings": len(memrefs) + 1,
        }

    def _rewrite_use(
        self,
        use: ir.OpOperand,
        flat: ir.Value,
        offset: ir.Value,
        sizes: list[ir.Value],
        strides: list[ir.Value],
    ) -> None:
        op = use.owner.operation
        element = ir.MemRefType(flat.type).element_type
        with ir.InsertionPoint(op), op.location:
            if op.name == "memref.load":
                value = memref.load(flat, [_linear(offset, strides, list(op.operands[1:]))])
                if op.results[0].type != element:  # index elements, stored as i64
                    value = arith.index_cast(op.results[0].type, value)
                op.results[0].replace_all_uses_with(value)
            elif op.name == "memref.store" and use.operand_number == 1:
                value = op.operands[0]
                if value.type != element:
                    value = arith.index_cast(element, value)
                memref.store(value, flat, [_linear(offset, strides, list(op.operands[2:]))])
            elif op.name == "memref.dim":
                op.results[0].replace_all_uses_with(_dim(sizes, op.operands[1]))
            else:
                raise PassError(
                    f"kernel {self.key}: a memref argument is used by '{op.name}' ({op.location}); WebGPU "
                    "kernels take flat buffers, and only loads, stores and dims are rewritten to them"
                )
        op.erase()


def _workgroup_size(func: ir.Operation, key: str) -> list[int]:
    if "known_block_size" not in func.attributes:
        raise PassError(f"kernel {key} has no constant block size; WebGPU fixes it in the shader")
    size = [int(v) for v in ir.DenseI32ArrayAttr(func.attributes["known_block_size"])]
    return size


def _kernel_abi(gm: ir.Operation) -> dict[str, dict]:
    """Rewrite the kernels of one ``gpu.module`` to the WebGPU ABI; their layouts by ``module.entry``."""
    kernels: dict[str, dict] = {}
    module_name = ir.StringAttr(gm.attributes["sym_name"]).value
    for func in gm.regions[0].blocks[0].operations:
        func = func.operation
        if func.name != "gpu.func" or "gpu.kernel" not in func.attributes:
            continue
        entry = ir.StringAttr(func.attributes["sym_name"]).value
        key = f"{module_name}.{entry}"
        size = _workgroup_size(func, key)
        info = _Kernel(func, key).rewrite()
        func.attributes["spirv.entry_point_abi"] = ir.Attribute.parse(
            f"#spirv.entry_point_abi<workgroup_size = [{size[0]}, {size[1]}, {size[2]}]>"
        )
        kernels[key] = {"module": module_name, "entry": entry, "workgroup_size": size, **info}
    return kernels


def _run(module: ir.Module, pipeline: str, what: str) -> None:
    try:
        passmanager.PassManager.parse(f"builtin.module({pipeline})").run(module.operation)
    except ir.MLIRError as e:
        messages = "\n".join(f"{d.location}: {d.message}" for d in e.error_diagnostics) or str(e)
        raise PassError(f"{what}: the SPIR-V lowering failed:\n{messages}") from None


def _to_binary(gm: ir.Operation, target: str) -> dict[str, dict]:
    """Replace a ``gpu.module`` by a ``gpu.binary`` holding it as SPIR-V; its kernels' layouts. The module
    is lowered in a module of its own, where no launch checks the kernels' new signatures against theirs."""
    name = ir.StringAttr(gm.attributes["sym_name"]).value
    scratch = ir.Module.create(gm.location)
    scratch.operation.attributes["gpu.container_module"] = ir.UnitAttr.get()
    clone = gm.clone(ir.InsertionPoint(scratch.body))
    _run(
        scratch,
        "gpu.module(scf-parallel-for-to-nested-fors,resolve-ranked-shaped-type-result-dims,fold-memref-alias-ops,"
        "lower-affine,"
        "math-expand-ops{ops=powf,fpowi,tan,sinh,cosh,acosh,atanh,exp2,roundeven,round},arith-expand,"
        "math-extend-to-supported-types{target-type=f32},"
        "canonicalize,cse)",
        f"gpu.module @{name}",
    )
    _f64_math_in_f32(clone.operation)
    _widen_narrow_integers(clone.operation)
    _widen_conversions(clone.operation)
    _signed_remainder_by_division(clone.operation)
    # SPIR-V has no erf; Vulkan lets drivers' tanh, asin, acos and atan be far off (lavapipe: asin 4e-4
    # absolute, tanh 500 ulp near 0), so those are polynomials; exp stays the driver's (3 + 2|x| ulp): the
    # inline expf's 1.5 * 2^23 rounding trick does not survive shader compilers
    ApproximateMath(ops="erf,tanh,asin,acos,atan,asinh", native_exp=True).run(scratch.operation)
    kernels = _kernel_abi(clone.operation)
    where = f"gpu.module @{name}"
    text = str(clone)
    if "f16" not in text:  # 16-bit storage (for f16) would keep i16 from being emulated in words
        target = target.replace(",StorageBuffer16BitAccess", "").replace(",SPV_KHR_16bit_storage", "")
    elif "xi16>" in text:
        raise PassError(
            f"{where}: a webgpu kernel cannot hold both f16 and 16-bit integer tensors (16-bit storage would "
            "need 16-bit integers, which wgpu's shader translator does not take)"
        )
    _run(
        scratch,
        f"spirv-attach-target{{{target}}},gpu.module(convert-math-to-spirv,map-memref-spirv-storage-class),"
        "convert-gpu-to-spirv",
        where,
    )
    ops = [op.operation for op in scratch.body.operations]
    for op in ops:
        if op.name == "spirv.module":  # convert-gpu-to-spirv puts Vulkan shaders beside their gpu.module
            _non_finite_constants_as_bits(op)
            _signed_ops_on_signed_types(op)
            op.move_before(clone.regions[0].blocks[0].operations[0])
    _run(
        scratch,
        "gpu.module(spirv.module(spirv-lower-abi-attrs,spirv-update-vce)),gpu-module-to-binary{format=bin}",
        f"gpu.module @{name}",
    )
    scratch.body.operations[0].operation.move_before(gm)  # before the scratch module is freed
    gm.erase()
    return kernels


# math ops that SPIR-V's GLSL.std.450 set defines on 16- and 32-bit floats only
_F32_ONLY_MATH = {
    f"math.{name}"
    for name in (
        "exp exp2 expm1 log log2 log10 log1p powf sin cos tan asin acos atan atan2 sinh cosh tanh erf sqrt rsqrt cbrt"
    ).split()
}


def _f64_math_in_f32(root: ir.Operation) -> None:
    """f64 transcendental math (``powf``'s f64 ``exp(y * log(x))``) computed in f32: SPIR-V shaders have
    it for 16- and 32-bit floats only. Results are then f32-accurate, not f64-accurate."""
    found = [op for op in collect(root, _F32_ONLY_MATH) if isinstance(op.results[0].type, ir.F64Type)]
    f32, f64 = ir.F32Type.get(), ir.F64Type.get()
    for op in found:
        with ir.InsertionPoint(op), op.location:
            narrow = [arith.truncf(f32, v) for v in op.operands]
            new = ir.Operation.create(
                op.name,
                results=[f32],
                operands=narrow,
                attributes={name: op.attributes[name] for name in op.attributes},
            )
            op.results[0].replace_all_uses_with(arith.extf(f64, new.results[0]))
        op.erase()


# arith ops on integers, and how their operands widen: "s" sign-extends, "u" zero-extends, "" either
_WIDENED = {
    **dict.fromkeys(("arith.addi", "arith.subi", "arith.muli", "arith.andi", "arith.ori", "arith.xori"), ""),
    **dict.fromkeys(("arith.divsi", "arith.remsi", "arith.maxsi", "arith.minsi", "arith.shrsi"), "s"),
    **dict.fromkeys(("arith.divui", "arith.remui", "arith.maxui", "arith.minui", "arith.shrui"), "u"),
    "arith.shli": "",
    "arith.cmpi": "",  # by predicate
}
_SIGNED_PREDICATES = {2, 3, 4, 5}  # slt, sle, sgt, sge


def _narrow(t: ir.Type) -> bool:
    return isinstance(t, ir.IntegerType) and t.width < 32


def _zero_extend(value: ir.Value, to: ir.Type) -> ir.Value:
    """``value`` (i1, i8 or i16) zero-extended to ``to`` (i32 or wider), masked explicitly: MLIR's word
    emulation loads i8 and i16 sign-extended and then takes ``extui`` of them as a no-op."""
    i32 = ir.IntegerType.get_signless(32)
    wide = arith.extui(i32, value)
    width = ir.IntegerType(value.type).width
    if width > 1:
        wide = arith.andi(wide, arith.constant(i32, (1 << width) - 1))
    if to.width < 32:
        return arith.trunci(to, wide)
    return wide if to.width == 32 else arith.extui(to, wide)


def _signed_remainder_by_division(root: ir.Operation) -> None:
    """``arith.remsi`` as ``x - (x / y) * y``: MLIR's SPIR-V lowering takes the sign from ``x == |x|``,
    which holds for INT_MIN, so INT_MIN % 13 came out 11 instead of -11."""
    for op in collect(root, {"arith.remsi"}):
        x, y = op.operands
        with ir.InsertionPoint(op), op.location:
            op.results[0].replace_all_uses_with(arith.subi(x, arith.muli(arith.divsi(x, y), y)))
        op.erase()


def _widen_conversions(root: ir.Operation) -> None:
    """Conversions between floats and i1/i8/i16, and extensions of those to 64 bits, through i32 (the
    sub-32-bit emulation converts them wrong: ui8 251 became f16 inf, ui8 238 became i64 4294967278)."""

    def narrow_conversion(op: ir.Operation) -> bool:
        if op.name in ("arith.fptoui", "arith.fptosi"):
            return _narrow(op.results[0].type)
        if op.name == "arith.extsi":
            return _narrow(op.operands[0].type) and op.results[0].type.width > 32
        return _narrow(op.operands[0].type)

    names = {"arith.uitofp", "arith.sitofp", "arith.fptoui", "arith.fptosi", "arith.extui", "arith.extsi"}
    found = [op for op in collect(root, names) if narrow_conversion(op)]
    i32 = ir.IntegerType.get_signless(32)
    for op in found:
        with ir.InsertionPoint(op), op.location:
            value = op.operands[0]
            if op.name == "arith.uitofp":
                new = arith.uitofp(op.results[0].type, _zero_extend(value, i32))
            elif op.name == "arith.sitofp":
                new = arith.sitofp(op.results[0].type, arith.extsi(i32, value))
            elif op.name == "arith.extui":  # ui8 238 -> i64 came out 4294967278
                new = _zero_extend(value, op.results[0].type)
            elif op.name == "arith.extsi":
                new = arith.extsi(op.results[0].type, arith.extsi(i32, value))
            elif op.name == "arith.fptoui":
                new = arith.trunci(op.results[0].type, arith.fptoui(i32, value))
            else:
                new = arith.trunci(op.results[0].type, arith.fptosi(i32, value))
        op.results[0].replace_all_uses_with(new)
        op.erase()


def _widen_narrow_integers(root: ir.Operation) -> None:
    """Integer arithmetic on i1, i8 and i16 done in i32, truncated back: MLIR's SPIR-V lowering emulates
    sub-32-bit integers in 32-bit words (WGSL has no 8- or 16-bit integers) but not for unsigned division,
    comparison, min/max and remainder ("bitwidth emulation is not implemented yet on unsigned op"). Logic
    on i1 (and, or, xor) stays boolean."""
    logic = ("arith.andi", "arith.ori", "arith.xori")
    found = [
        op
        for op in collect(root, set(_WIDENED))
        if _narrow(op.operands[0].type) and not (op.name in logic and op.operands[0].type.width == 1)
    ]
    i32 = ir.IntegerType.get_signless(32)
    for op in found:
        kind = _WIDENED[op.name]
        if op.name == "arith.cmpi":
            kind = "s" if ir.IntegerAttr(op.attributes["predicate"]).value in _SIGNED_PREDICATES else "u"
        with ir.InsertionPoint(op), op.location:
            wide = []
            for i, value in enumerate(op.operands):
                signed = kind == "s" and not (op.name == "arith.shrsi" and i == 1)
                if value.type.width == 1 or not signed:  # booleans are 0 or 1; shift amounts unsigned
                    wide.append(_zero_extend(value, i32))
                else:
                    wide.append(arith.extsi(i32, value))
            result_type = op.results[0].type
            new = ir.Operation.create(
                op.name,
                results=[ir.IntegerType.get_signless(1) if op.name == "arith.cmpi" else i32],
                operands=wide,
                attributes={n: op.attributes[n] for n in op.attributes},
            )
            value = new.results[0]
            if op.name != "arith.cmpi":  # shifts by less than the narrow width agree after truncation
                value = arith.trunci(result_type, value)
            op.results[0].replace_all_uses_with(value)
        op.erase()


def _non_finite_constants_as_bits(root: ir.Operation) -> None:
    """``spirv.Constant``s that are infinite or NaN floats as bitcasts of integer constants: naga (wgpu's
    shader translator) rejects non-finite float literals. Done on SPIR-V, after the conversion's folding."""
    found = [
        op
        for op in collect(root, {"spirv.Constant"})
        if isinstance(op.results[0].type, ir.FloatType)
        and not math.isfinite(ir.FloatAttr(op.attributes["value"]).value)
    ]
    for op in found:
        t = op.results[0].type
        fmt = {16: "<e", 32: "<f", 64: "<d"}[t.width]
        bits = int.from_bytes(
            struct.pack(fmt, ir.FloatAttr(op.attributes["value"]).value), "little", signed=True
        )
        integer_type = ir.IntegerType.get_signless(t.width)
        with ir.InsertionPoint(op), op.location:
            integer = ir.Operation.create(
                "spirv.Constant",
                results=[integer_type],
                attributes={"value": ir.IntegerAttr.get(integer_type, bits)},
            )
            cast = ir.Operation.create("spirv.Bitcast", results=[t], operands=[integer.results[0]])
        op.results[0].replace_all_uses_with(cast.results[0])
        op.erase()


# SPIR-V ops that read their integer operands (or write their integer result) as signed numbers
_SIGNED_OPS = {
    f"spirv.{name}"
    for name in (
        "SDiv SRem SMod SNegate ShiftRightArithmetic ConvertSToF ConvertFToS SConvert SMulExtended "
        "SLessThan SLessThanEqual SGreaterThan SGreaterThanEqual "
        "GL.SAbs GL.SMax GL.SMin GL.SClamp GL.SSign GL.FindSMsb"
    ).split()
}


def _signed(t: ir.Type) -> ir.Type | None:
    """The signed twin of a signless integer type (or vector of them); None for any other type."""
    if isinstance(t, ir.VectorType):
        element = _signed(t.element_type)
        return None if element is None else ir.VectorType.get(t.shape, element)
    if isinstance(t, ir.IntegerType) and t.is_signless and t.width > 1:
        return ir.IntegerType.get_signed(t.width)
    return None


def _signed_ops_on_signed_types(root: ir.Operation) -> None:
    """Give SPIR-V's signed integer ops signed operand and result types, with bitcasts around them.

    MLIR writes its signless integers as unsigned SPIR-V types (``OpTypeInt 32 0``); naga (wgpu's shader
    translator) then turns ``OpSDiv``, ``OpSRem``, ``GLSL.std.450 SMax`` ... on them into *unsigned*
    division, remainder and max (-7 / 2 became 2147483644), and rejects ``OpSNegate`` on them. With
    signed types the translated shader computes what the SPIR-V op means."""
    for op in collect(root, _SIGNED_OPS):
        with ir.InsertionPoint(op), op.location:
            operands = []
            for i, value in enumerate(op.operands):
                signed = _signed(value.type)
                shift_amount = op.name == "spirv.ShiftRightArithmetic" and i == 1
                if signed is None or shift_amount:
                    operands.append(value)
                    continue
                operands.append(
                    ir.Operation.create("spirv.Bitcast", results=[signed], operands=[value]).results[0]
                )
            results = [_signed(r.type) or r.type for r in op.results]
            new = ir.Operation.create(
                op.name,
                results=results,
                operands=operands,
                attributes={n: op.attributes[n] for n in op.attributes},
            )
            for old, value in zip(op.results, new.results, strict=True):
                if value.type != old.type:
                    value = ir.Operation.create(
                        "spirv.Bitcast", results=[old.type], operands=[value]
                    ).results[0]
                old.replace_all_uses_with(value)
        op.erase()


@register_pass("relax-gpu-kernels-to-spirv")
class GpuKernelsToSpirv:
    """Each ``gpu.module`` to the WebGPU kernel ABI, SPIR-V and a ``gpu.binary``; the layouts recorded."""

    version: str = "v1.3"
    capabilities: str = ""  # comma-separated SPIR-V capabilities the kernels may use (none: Shader only)
    extensions: str = ""

    def run(self, module: ir.Operation) -> None:
        target = f"ver={self.version} caps={self.capabilities or 'Shader'}"
        target += f" exts={self.extensions}" if self.extensions else ""
        kernels: dict[str, dict] = {}
        for gm in [op.operation for op in module.regions[0].blocks[0].operations]:
            if gm.name != "gpu.module":
                continue
            with gm.location:
                kernels.update(_to_binary(gm, target))
        module.attributes[KERNELS_ATTR] = ir.StringAttr.get(json.dumps(kernels, sort_keys=True))
