"""``relax-gpu-managed-memory``: buffers that both the host and the GPU can use.

Every buffer the host side allocates (memory plan storages, kernel temporaries and outputs) becomes CUDA
managed memory (``gpu.alloc host_shared``): kernels read and write it on the device, and the host code that
remains (shape checks, data-dependent sizes, copies between buffers) can still read it. A host function's
arguments are the caller's ordinary memory, which a kernel cannot read: each tensor argument is staged in
managed memory on entry (inputs and in-place parameters copied in) and destinations and in-place parameters
are copied back before every return (``relax.role`` on the arguments, from ``relax-lower-host``). Constants
(``memref.get_global``) are copied into managed memory once per call, at the function's entry. Tensors a
host function returns (data-dependent outputs) are copied into ordinary memory, which the runtime frees.

``relax-gpu-device-memory`` is the same for devices whose memory the host cannot address (WebGPU): buffers
are device allocations (``gpu.alloc``), every copy the host does becomes ``gpu.memcpy`` (the runtime tells
host from device pointers), and constants are not staged: kernels get the global itself, which the runtime
uploads once and keeps on the device. Host code that reads or writes device memory (a data-dependent size
read back to size an allocation) is refused with a ``PassError`` naming the function and the op.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import gpu, memref

from relax_mlir.errors import PassError
from relax_mlir.transforms.gpu.ir_util import (
    collect,
    functions,
    index,
    inside_launch,
    is_host,
    producer,
    returns,
)
from relax_mlir.transforms.gpu.loops import launch_copy
from relax_mlir.transforms.lower_host import ROLE_ATTR
from relax_mlir.transforms.registry import register_pass

COPY_BLOCK = 256  # threads per workgroup of the kernels that copy strided device memory
MAX_GRID_X = 65535  # WebGPU's guaranteed workgroups per dimension
_VIEWS = {
    "memref.subview",
    "memref.expand_shape",
    "memref.collapse_shape",
    "memref.reinterpret_cast",
    "memref.cast",
    "memref.view",
    "memref.transpose",
}


def _dims(value: ir.Value) -> list[ir.Value]:
    t = ir.MemRefType(value.type)
    return [
        memref.dim(value, index(i)) for i in range(t.rank) if t.shape[i] == ir.ShapedType.get_dynamic_size()
    ]


def _identity(t: ir.MemRefType) -> ir.MemRefType:
    return ir.MemRefType.get(t.shape, t.element_type, memory_space=t.memory_space)


def _managed(
    t: ir.MemRefType, sizes: list[ir.Value], symbols: list[ir.Value] | None = None, device: bool = False
) -> ir.Value:
    if not device:
        return gpu.alloc(t, None, [], sizes, symbols or [], host_shared=True)
    # device memory: gpu.alloc is only lowered in its asynchronous form
    token = ir.Type.parse("!gpu.async.token")
    start = gpu.WaitOp(token, []).results[0]
    alloc = gpu.AllocOp(t, token, [start], sizes, symbols or [])
    gpu.WaitOp(None, [alloc.results[1]])
    return alloc.results[0]


def _memcpy(source: ir.Value, target: ir.Value) -> None:
    """Copy between host and device memory (``gpu.memcpy`` is only lowered in its asynchronous form)."""
    token = ir.Type.parse("!gpu.async.token")
    start = gpu.WaitOp(token, []).results[0]
    done = gpu.memcpy(token, [start], target, source)
    gpu.WaitOp(None, [done])


def _root(value: ir.Value) -> ir.Value:
    """The buffer a view of memory is a view of."""
    while (op := producer(value)) is not None and op.name in _VIEWS:
        value = op.operands[0]
    return value


def _contiguous(t: ir.MemRefType) -> bool:
    """Whether the type proves its elements one contiguous row-major block (what ``gpu.memcpy`` copies)."""
    strides, _ = t.get_strides_and_offset()
    expected: int | None = 1  # the stride the next (outer) dim needs; None past a dynamic size
    for size, stride in zip(reversed(t.shape), reversed(strides), strict=True):
        if size == 1:
            continue
        if expected is None or stride != expected:
            return False
        expected = None if size == ir.ShapedType.get_dynamic_size() else expected * size
    return True


def _host_only(value: ir.Value) -> bool:
    """Whether only host code reads and writes the buffer ``value`` (and its views): no kernel, call or
    return gets it."""
    for use in value.uses:
        user = use.owner.operation
        if user.name in _VIEWS:
            if not _host_only(user.results[0]):
                return False
        elif user.name in ("func.call", "func.return", "gpu.launch_func") or inside_launch(user):
            return False
        elif user.name == "gpu.launch":
            return False
    return True


def _function_name(op: ir.Operation) -> str:
    while op is not None and op.name != "func.func":
        op = op.parent
    return ir.StringAttr(op.attributes["sym_name"]).value if op is not None else "?"


def _free(value: ir.Value) -> None:
    """Free managed memory (``gpu.dealloc`` is only lowered in its asynchronous form)."""
    token = ir.Type.parse("!gpu.async.token")
    start = gpu.WaitOp(token, []).results[0]
    done = gpu.dealloc(token, [start], value)
    gpu.WaitOp(None, [done])


def _role(func: ir.Operation, i: int) -> str | None:
    if "arg_attrs" not in func.attributes:
        return None
    attrs = ir.DictAttr(ir.ArrayAttr(func.attributes["arg_attrs"])[i])
    return ir.StringAttr(attrs[ROLE_ATTR]).value if ROLE_ATTR in attrs else None


class _Function:
    def __init__(self, func: ir.Operation, device: bool = False) -> None:
        self.func = func
        self.device = device  # device memory the host cannot address, instead of managed memory
        self.entry = func.regions[0].blocks[0]
        self.freed_at_exit: list[ir.Value] = []
        self.copied_back: list[tuple[ir.Value, ir.Value]] = []  # (managed, argument)
        self.host_copies: dict[tuple[ir.Value, ir.Operation], ir.Value] = {}  # device mode: (buffer, where)

    def at_entry(self) -> ir.InsertionPoint:
        ops = self.entry.operations
        return ir.InsertionPoint(ops[0]) if len(ops) else ir.InsertionPoint(self.entry)

    def stage_arguments(self) -> None:
        for i, arg in enumerate(self.entry.arguments):
            if not isinstance(arg.type, ir.MemRefType):
                continue
            role = _role(self.func, i)
            if role == "host":
                continue
            with self.at_entry(), self.func.location:
                staged = _managed(_identity(arg.type), _dims(arg), device=self.device)
                copy_in = self.copy(arg, staged) if role != "output" else []
            uses = [u for u in arg.uses if u.owner.name != "memref.dim" and u.owner.operation not in copy_in]
            for use in uses:
                use.owner.operands[use.operand_number] = staged
            self.freed_at_exit.append(staged)
            if role in ("output", "inplace"):
                self.copied_back.append((staged, arg))

    def copy(self, source: ir.Value, target: ir.Value) -> list[ir.Operation]:
        """Copy ``source`` into ``target`` at the insertion point; the ops that use ``source``."""
        if not self.device:
            return [memref.copy(source, target).operation]
        _memcpy(source, target)
        return [u.owner.operation for u in source.uses if u.owner.name == "gpu.memcpy"]

    def globals_to_managed(self) -> None:
        for op in collect(self.func, {"memref.get_global"}):
            t = ir.MemRefType(op.results[0].type)
            with self.at_entry(), op.location:
                source = memref.get_global(t, ir.FlatSymbolRefAttr(op.attributes["name"]).value)
                staged = _managed(_identity(t), [])
                memref.copy(source, staged)
            op.results[0].replace_all_uses_with(staged)
            op.erase()
            self.freed_at_exit.append(staged)

    def allocations_to_managed(self) -> None:
        host_only = set()
        if self.device:  # buffers only the host touches stay host memory (a shape written into a tensor)
            allocations = collect(self.func, {"memref.alloc", "memref.alloca"})
            host_only = {op for op in allocations if not inside_launch(op) and _host_only(op.results[0])}
        for op in collect(self.func, {"memref.alloc", "memref.alloca", "memref.dealloc"}):
            if inside_launch(op) or op in host_only:
                continue
            if op.name == "memref.dealloc" and producer(_root(op.operands[0])) in host_only:
                continue
            with ir.InsertionPoint(op), op.location:
                if op.name == "memref.dealloc":
                    _free(op.operands[0])
                    op.erase()
                    continue
                alloc = op.opview
                staged = _managed(
                    ir.MemRefType(op.results[0].type),
                    list(alloc.dynamicSizes),
                    list(alloc.symbolOperands),
                    device=self.device,
                )
            op.results[0].replace_all_uses_with(staged)
            if op.name == "memref.alloca":
                self.freed_at_exit.append(staged)
            op.erase()

    def returned_to_host_memory(self) -> None:
        for ret in returns(self.func):
            for i, value in enumerate(list(ret.operands)):
                if not isinstance(value.type, ir.MemRefType):
                    continue
                with ir.InsertionPoint(ret), ret.location:
                    host = memref.alloc(_identity(value.type), _dims(value), [])
                    self.copy(value, host)
                    _free(value)
                ret.operands[i] = host

    def finish(self) -> None:
        for ret in returns(self.func):
            with ir.InsertionPoint(ret), ret.location:
                for staged, arg in self.copied_back:
                    self.copy(staged, arg)
                for staged in self.freed_at_exit:
                    _free(staged)

    def host_copies_to_device(self) -> None:
        """Device mode: the host's own copies become ``gpu.memcpy``; its loads of device memory read a
        host copy; its stores to device memory are refused."""
        # ops whose host code reads the memory of an operand: memref.load, memref.reshape (its shape)
        reads = {"memref.load": 0, "memref.reshape": 1}
        for op in collect(self.func, {"memref.copy", "memref.store", *reads}):
            if inside_launch(op):
                continue
            if op.name == "memref.copy":
                with ir.InsertionPoint(op), op.location:
                    if all(_contiguous(ir.MemRefType(v.type)) for v in op.operands):
                        _memcpy(op.operands[0], op.operands[1])
                    else:  # a strided view (a slice of a cache): a kernel copies it
                        launch_copy(op.operands[0], op.operands[1], COPY_BLOCK, MAX_GRID_X)
                op.erase()
                continue
            at = reads.get(op.name, 1)
            memory = op.operands[at]
            if self.host_memory(_root(memory)):
                continue
            if op.name == "memref.store":
                raise PassError(
                    f"@{_function_name(op)}: host code writes device memory ({op.location}); the webgpu "
                    "target's host cannot address device memory"
                )
            op.operands[at] = self.host_copy(op, memory)

    def host_memory(self, root: ir.Value) -> bool:
        """Whether ``root`` is memory of the host: its own allocation, a constant, a host-role argument."""
        op = producer(root)
        if op is not None:
            return op.name in ("memref.alloc", "memref.alloca", "memref.get_global")
        return (
            root.owner.owner == self.func
            and is_host(self.func)
            and _role(self.func, root.arg_number) == "host"
        )

    def host_copy(self, load: ir.Operation, memory: ir.Value) -> ir.Value:
        """A host copy of the device buffer behind ``memory`` for a host-side read (a data-dependent size,
        an index check, a reshape's shape), made before the top-level op that holds the read, and the
        read's view of it."""
        top = load
        while top.parent != self.func:
            top = top.parent
        if collect(top, {"gpu.launch_func", "gpu.launch", "func.call"}):
            raise PassError(
                f"@{_function_name(load)}: host code reads device memory ({load.location}) in a loop "
                f"('{top.name}') that also runs kernels; the webgpu target's host cannot address device memory"
            )
        chain = []
        while (op := producer(memory)) is not None and op.name in _VIEWS:
            chain.append(op)
            memory = op.operands[0]
        key = (memory, top)
        host = self.host_copies.get(key)
        if host is None:
            if not _contiguous(ir.MemRefType(memory.type)):
                raise PassError(
                    f"@{_function_name(load)}: host code reads a strided device buffer ({memory.type})"
                )
            with ir.InsertionPoint(top), load.location:
                host = memref.alloc(_identity(memory.type), _dims(memory), [])
                _memcpy(memory, host)
            for ret in returns(self.func):
                with ir.InsertionPoint(ret), load.location:
                    memref.dealloc(host)
            self.host_copies[key] = host
        view = host
        for op in reversed(chain):
            clone = op.clone(ir.InsertionPoint(load))
            clone.operands[0] = view
            view = clone.results[0]
        return view

    def check_library_calls(self) -> None:
        """Device mode: host code may not hand memory to a library function (a ``call_dps_library``): it
        would read device memory on the host."""
        table = ir.SymbolTable(self.func.parent)
        for op in collect(self.func, {"func.call"}):
            callee = table[ir.FlatSymbolRefAttr(op.attributes["callee"]).value]
            if callee.regions[0].blocks or not any(isinstance(v.type, ir.MemRefType) for v in op.operands):
                continue
            raise PassError(
                f"@{_function_name(op)} calls the library function @{ir.StringAttr(callee.attributes['sym_name']).value} "
                f"on tensors ({op.location}); library calls run on the host, which cannot address the webgpu "
                "target's device memory"
            )

    def check_constant_globals(self) -> None:
        """Device mode: kernels read globals directly (uploaded once), so none may be written."""
        module = self.func.parent
        for op in collect(self.func, {"memref.get_global"}):
            name = ir.FlatSymbolRefAttr(op.attributes["name"]).value
            table = ir.SymbolTable(module)
            if "constant" not in table[name].attributes:
                raise PassError(
                    f"@{_function_name(op)} uses the mutable global @{name}; on the webgpu target kernels "
                    "read globals uploaded once, so only constant globals are supported"
                )


@register_pass("relax-gpu-managed-memory")
class GpuManagedMemory:
    """Allocate host-side buffers in CUDA managed memory and stage host functions' arguments in it."""

    def run(self, module: ir.Operation) -> None:
        for func in list(functions(module)):
            f = _Function(func)
            f.allocations_to_managed()
            f.globals_to_managed()
            if is_host(func):
                f.returned_to_host_memory()
                f.stage_arguments()
            f.finish()


@register_pass("relax-gpu-device-memory")
class GpuDeviceMemory:
    """Allocate host-side buffers on the device, copy arguments in and out with gpu.memcpy, read constants
    in place; refuse host code that reads device memory (for devices the host cannot address: WebGPU)."""

    def run(self, module: ir.Operation) -> None:
        for func in list(functions(module)):
            f = _Function(func, device=True)
            f.check_constant_globals()
            f.check_library_calls()
            f.allocations_to_managed()
            if is_host(func):
                f.returned_to_host_memory()
                f.stage_arguments()
            f.finish()
            f.host_copies_to_device()
