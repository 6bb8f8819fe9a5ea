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

from mlir import ir
from mlir.dialects import arith, memref

from relax_mlir.errors import PassError
from relax_mlir.transforms.gpu.ir_util import index
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

    def next_index(self, static: int | None = None) -> ir.Value:
        value = self.next_i32()
        if static is not None and static not in (_DYNAMIC, _DYNAMIC_STRIDE):
            return index(static)  # the slot is still filled by the runtime; the constant folds better
        return arith.index_cast(ir.IndexType.get(), value)

    def next_scalar(self, t: ir.Type, where: str) -> ir.Value:
        raw = self.next_i32()
        if isinstance(t, ir.IndexType):
            return arith.index_cast(t, raw)
        if ir.IntegerType.isinstance(t):
            width = ir.IntegerType(t).width
            if width == 32:
                return raw
            return arith.extsi(t, raw) if width > 32 else arith.trunci(t, raw)
        if ir.F32Type.isinstance(t):
            return arith.bitcast(t, raw)
        if ir.F16Type.isinstance(t):
            return arith.bitcast(t, arith.trunci(ir.IntegerType.get_signless(16), raw))
        raise PassError(f"{where}: a scalar kernel argument of type {t} cannot be passed to a WebGPU kernel")


def _strides(t: ir.MemRefType) -> list[int]:
    strides, _ = t.get_strides_and_offset()
    return list(strides)


def _linear(offset: ir.Value, strides: list[ir.Value], indices: list[ir.Value]) -> ir.Value:
    linear = offset
    for i, s in zip(indices, strides, strict=True):
        linear = arith.addi(linear, arith.muli(i, s))
    return linear


def _rewrite_kernel(func: ir.Operation, key: str) -> dict:
    entry = func.regions[0].blocks[0]
    old_args = list(entry.arguments)
    loc = func.location
    memrefs = [a for a in old_args if isinstance(a.type, ir.MemRefType)]
    flats = [
        entry.add_argument(ir.MemRefType.get([_DYNAMIC], ir.MemRefType(a.type).element_type), loc)
        for a in memrefs
    ]
    params = _Params(entry.add_argument(ir.MemRefType.get([_DYNAMIC], _i32()), loc))
    first = entry.operations[0]
    infos: dict[int, dict] = {}  # by argument position
    with ir.InsertionPoint(first), loc:
        views = {}
        positions = [i for i, a in enumerate(old_args) if isinstance(a.type, ir.MemRefType)]
        for binding, (arg, flat) in enumerate(zip(memrefs, flats, strict=True)):
            t = ir.MemRefType(arg.type)
            infos[positions[binding]] = {
                "kind": "memref",
                "dtype": str(t.element_type),
                "rank": t.rank,
                "binding": binding,
                "params_at": params.count,
            }
            offset = params.next_index()
            sizes = [params.next_index(s) for s in t.shape]
            strides = [params.next_index(s) for s in _strides(t)]
            views[arg] = (flat, offset, sizes, strides)
        scalars = {}
        for i, arg in enumerate(old_args):
            if isinstance(arg.type, ir.MemRefType):
                continue
            infos[i] = {"kind": "scalar", "dtype": str(arg.type), "params_at": params.count}
            scalars[arg] = params.next_scalar(arg.type, f"kernel {key}")
    for arg, value in scalars.items():
        arg.replace_all_uses_with(value)
    for arg, (flat, offset, sizes, strides) in views.items():
        for use in list(arg.uses):
            op = use.owner.operation
            with ir.InsertionPoint(op), op.location:
                if op.name == "memref.load":
                    linear = _linear(offset, strides, list(op.operands[1:]))
                    new = memref.load(flat, [linear])
                    op.results[0].replace_all_uses_with(new)
                elif op.name == "memref.store" and use.operand_number == 1:
                    linear = _linear(offset, strides, list(op.operands[2:]))
                    memref.store(op.operands[0], flat, [linear])
                elif op.name == "memref.dim":
                    constant = op.operands[1].owner
                    if not isinstance(constant, ir.Operation) or constant.name != "arith.constant":
                        raise PassError(f"kernel {key}: memref.dim with a run-time dimension index")
                    dim = ir.IntegerAttr(constant.attributes["value"]).value
                    op.results[0].replace_all_uses_with(sizes[dim])
                else:
                    raise PassError(
                        f"kernel {key}: a memref argument is used by '{op.name}' ({op.location}); WebGPU "
                        "kernels take flat buffers, and only loads, stores and dims are rewritten to them"
                    )
            op.erase()
    for i in reversed(range(len(old_args))):
        entry.erase_argument(i)
    func.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get([a.type for a in entry.arguments], [])
    )
    if "arg_attrs" in func.attributes:
        del func.attributes["arg_attrs"]
    # in the order of the kernel's (and the launch's) arguments
    return {"args": [infos[i] for i in range(len(old_args))], "params": params.count, "bindings": len(memrefs) + 1}


def _workgroup_size(func: ir.Operation, key: str) -> list[int]:
    if "known_block_size" not in func.attributes:
        raise PassError(f"kernel {key} has no constant block size; WebGPU fixes it in the shader")
    size = [int(v) for v in ir.DenseI32ArrayAttr(func.attributes["known_block_size"])]
    return size


@register_pass("relax-spirv-kernel-abi")
class SpirvKernelAbi:
    """Kernels to flat storage-buffer arguments and one i32 params buffer; record the layout (WebGPU)."""

    def run(self, module: ir.Operation) -> None:
        kernels: dict[str, dict] = {}
        for gm in module.regions[0].blocks[0].operations:
            if gm.operation.name != "gpu.module":
                continue
            module_name = ir.StringAttr(gm.operation.attributes["sym_name"]).value
            for func in gm.regions[0].blocks[0].operations:
                func = func.operation
                if func.name != "gpu.func" or "gpu.kernel" not in func.attributes:
                    continue
                entry = ir.StringAttr(func.attributes["sym_name"]).value
                key = f"{module_name}.{entry}"
                size = _workgroup_size(func, key)
                info = _rewrite_kernel(func, key)
                func.attributes["spirv.entry_point_abi"] = ir.Attribute.parse(
                    f"#spirv.entry_point_abi<workgroup_size = [{size[0]}, {size[1]}, {size[2]}]>"
                )
                kernels[key] = {"module": module_name, "entry": entry, "workgroup_size": size, **info}
        module.attributes[KERNELS_ATTR] = ir.StringAttr.get(json.dumps(kernels, sort_keys=True))


@register_pass("relax-spirv-into-gpu-modules")
class SpirvIntoGpuModules:
    """Move each ``spirv.module`` that ``convert-gpu-to-spirv`` put beside its ``gpu.module`` (as it does for
    Vulkan shaders) into it, where ``gpu-module-to-binary`` serializes it."""

    def run(self, module: ir.Operation) -> None:
        ops = [op.operation for op in module.regions[0].blocks[0].operations]
        gpu_modules = {ir.StringAttr(op.attributes["sym_name"]).value: op for op in ops if op.name == "gpu.module"}
        for op in ops:
            if op.name != "spirv.module":
                continue
            name = ir.StringAttr(op.attributes["sym_name"]).value if "sym_name" in op.attributes else ""
            target = gpu_modules.get(name.removeprefix("__spv__"))
            if target is None:
                raise PassError(f"spirv.module '{name}' has no gpu.module of the same name")
            body = target.regions[0].blocks[0]
            op.move_before(body.operations[0])
