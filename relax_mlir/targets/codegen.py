"""From host code and kernels on tensors to native code: bufferize, lower to LLVM, JIT.

The passes from the output of ``relax-lower-host`` to the LLVM dialect are ``pipelines/cpu.py``'s
``host-to-llvm``. ``object_code()`` turns that into an ELF object for this machine: MLIR translates it to
LLVM IR, llvmlite optimizes it and emits the object (the compile cache, ``cache.py``, keeps it on disk;
``runtime/loader.py`` links it).

(MLIR's ExecutionEngine did the same in one call, with 30% more CPU time: 6.1 s against 4.7 s for the
12-layer LLM's module; it also adds a packed wrapper per function, which nothing here calls.)
"""

from __future__ import annotations

import ctypes
import functools

import llvmlite.binding as llvm
from mlir import ir
from mlir.dialects.llvm import translate_module_to_llvmir

from relax_mlir.errors import CompileError
from relax_mlir.runtime.libs import shared_libs


def llvm_level(opt_level: int) -> int:
    """LLVM's optimization level for ``compile(opt_level=...)``: at most -O2.

    The kernels arrive tiled and vectorized; LLVM's -O3 made them no faster (GPT blocks, MLP) or
    10-12% slower (the ResNet-style CNN's convolutions) than -O2, and compiles longer.
    """
    return min(opt_level, 2)


def object_code(llvm_module: ir.Module, opt_level: int) -> bytes:
    """Compile an LLVM-dialect module to an ELF object for this machine's CPU (LLVM at ``llvm_level``)."""
    missing = [name for name in external_functions(llvm_module) if not _resolvable(name)]
    if missing:  # the JIT linker aborts the process on a symbol it cannot resolve
        raise CompileError(
            f"undefined external function(s) {', '.join(n.removeprefix('_mlir_ciface_') for n in missing)} "
            f"(C symbols {', '.join(missing)}): a relax.call_dps_library callee that is "
            "not a registered library function must be a C symbol already loaded into the process "
            "(ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL))"
        )
    left = untranslatable(llvm_module)
    if left is not None:  # translating it would crash the process
        raise CompileError(f"internal error: {left}")
    text = translate_module_to_llvmir(llvm_module.operation)
    level = llvm_level(opt_level)
    machine = _host_machine(level)
    module = llvm.parse_assembly(str(text))
    module.triple = machine.triple
    module.data_layout = str(machine.target_data)
    if level > 0:  # LLVM's default pipeline at -O<level>, with MLIR's ExecutionEngine's tuning
        tuning = llvm.create_pipeline_tuning_options(speed_level=level)
        tuning.loop_unrolling = tuning.loop_interleaving = True
        tuning.loop_vectorization = tuning.slp_vectorization = True
        builder = llvm.create_pass_builder(machine, tuning)
        builder.getModulePassManager().run(module, builder)
    return machine.emit_object(module)


@functools.cache
def _host_machine(level: int) -> llvm.TargetMachine:
    """A target machine for this CPU and its features (position-independent code, which the JIT linker
    reaches its symbols from wherever it maps the object)."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    return llvm.Target.from_default_triple().create_target_machine(
        cpu=llvm.get_host_cpu_name(),
        features=llvm.get_host_cpu_features().flatten(),
        opt=level,
        reloc="pic",
        codemodel="default",
    )


def untranslatable(llvm_module: ir.Module) -> str | None:
    """The first op the LLVM lowering left that MLIR cannot translate to LLVM IR (only llvm and omp
    ops translate), described with its location; None if there is none."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name.split(".", 1)[0] in ("llvm", "omp") or op.name == "builtin.module":
            return ir.WalkResult.ADVANCE
        found.append(op)
        return ir.WalkResult.INTERRUPT

    llvm_module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    if not found:
        return None
    return f"the LLVM lowering left '{found[0].name}' (at {found[0].location}), which does not translate to LLVM IR"


def external_functions(llvm_module: ir.Module) -> list[str]:
    """Names of the functions the module declares without defining (LLVM intrinsics aside)."""
    names = []
    for op in llvm_module.body.operations:
        op = op.operation
        if op.name == "llvm.func" and not op.regions[0].blocks:
            name = ir.StringAttr(op.attributes["sym_name"]).value
            if not name.startswith("llvm."):
                names.append(name)
    return names


@functools.cache
def _libraries() -> list[ctypes.CDLL]:
    return [ctypes.CDLL(None), *(ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL) for lib in shared_libs())]


def _resolvable(symbol: str) -> bool:
    """Whether the JIT can link ``symbol``: it is in the process or in one of ``shared_libs()``."""
    return any(hasattr(lib, symbol) for lib in _libraries())
