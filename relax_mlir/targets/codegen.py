"""From host code and kernels on tensors to native code: bufferize, lower to LLVM, JIT.

The passes from the output of ``relax-lower-host`` to the LLVM dialect are ``pipelines/cpu.py``'s
``host-to-llvm``. ``object_parts()`` turns that into ELF objects for this machine: MLIR translates it to
LLVM IR, which is split into up to ``PARTS`` modules that link together (``split_module``); llvmlite
optimizes and emits them on as many threads as there are cores (LLVM is most of a cold compile: 4 of the 12-layer
LLM's 5.7 s at one thread). The compile cache (``cache.py``) keeps the objects on disk; ``runtime/loader.py`` links them.
``object_code()`` makes one object (CUDA's host code).

(MLIR's ExecutionEngine did the same in one call, with 30% more CPU time: 6.1 s against 4.7 s for the
12-layer LLM's module; it also adds a packed wrapper per function, which nothing here calls.)
"""

from __future__ import annotations

import ctypes
import functools
import os
import re
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import llvmlite.binding as llvm
from llvmlite.binding import ffi
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


# LLVM compiles a module in up to this many parts (the same on every machine, so are the objects), the
# costliest first, on as many threads as there are cores: with more parts than threads, a thread that
# finishes early takes the next part, so the estimate of each part's cost (``_cost``) matters less (the
# 12-layer LLM on 2 threads: LLVM's wall time 2.13 -> 1.84 s with kernels for 1 thread, 6.0 -> 5.4 s for 2,
# against 2 parts). A part has a fixed cost of about 3 ms and links in well under 1 ms.
PARTS = 8
PART_COST = 5000  # the least ``_cost`` worth a part of its own (about 0.1 s of LLVM), beyond the first two


def object_code(llvm_module: ir.Module, opt_level: int) -> bytes:
    """Compile an LLVM-dialect module to one ELF object for this machine's CPU (LLVM at ``llvm_level``)."""
    (data,) = object_parts(llvm_module, opt_level, parts=1)
    return data


def object_parts(llvm_module: ir.Module, opt_level: int, parts: int = PARTS) -> list[bytes]:
    """Compile an LLVM-dialect module to ELF objects for this machine's CPU (LLVM at ``llvm_level``): up to
    ``parts`` objects, which link together (``split_module``), compiled on as many threads as there are
    cores (the objects do not depend on that)."""
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
    text = str(translate_module_to_llvmir(llvm_module.operation))
    level = llvm_level(opt_level)
    pieces = split_module(text, parts)
    threads = min(len(pieces), len(os.sched_getaffinity(0)))
    if threads == 1:
        return [_compile(piece, level) for piece in pieces]
    with ThreadPoolExecutor(threads) as pool:  # the costliest parts first (split_module's order)
        return list(pool.map(_compile, pieces, [level] * len(pieces)))


def _compile(text: str, level: int) -> bytes:
    """Optimize and emit LLVM IR ``text`` in a context and target machine of its own, without llvmlite's
    global lock around the two long calls (LLVM compiles modules of separate contexts concurrently)."""
    machine = _new_machine(level)
    module = llvm.parse_assembly(text, context=llvm.create_context())
    module.triple = machine.triple
    module.data_layout = str(machine.target_data)
    if level > 0:  # LLVM's default pipeline at -O<level>, with MLIR's ExecutionEngine's tuning
        tuning = llvm.create_pipeline_tuning_options(speed_level=level)
        tuning.loop_unrolling = tuning.loop_interleaving = True
        tuning.loop_vectorization = tuning.slp_vectorization = True
        builder = llvm.create_pass_builder(machine, tuning)
        _unlocked("LLVMPY_RunNewModulePassManager", builder.getModulePassManager(), module, builder)
    with ffi.OutputString() as error:
        buffer = _unlocked("LLVMPY_TargetMachineEmitToMemory", machine, module, 1, error)
        if not buffer:
            raise CompileError(f"internal error: LLVM could not emit an object: {error}")
    try:
        return ctypes.string_at(ffi.lib.LLVMPY_GetBufferStart(buffer), ffi.lib.LLVMPY_GetBufferSize(buffer))
    finally:
        ffi.lib.LLVMPY_DisposeMemoryBuffer(buffer)


def _unlocked(name: str, *args: Any) -> Any:
    """Call llvmlite's C function ``name`` past its process-wide lock (ctypes releases the GIL)."""
    function = getattr(ffi.lib, name)
    return getattr(function, "_cfn", function)(*args)


_DEFINE = re.compile(r'define (?:(internal|private) )?.*?@("[^"]*"|[-\w$.]+)\(')
_REFERENCE = re.compile(r'@("[^"]*"|[-\w$.]+)')
_GLOBAL = re.compile(r'(@(?:"[^"]*"|[-\w$.]+)) = (?:(private|internal|external) )?.*?\b(global|constant) ')


def split_module(text: str, parts: int) -> list[str]:
    """LLVM IR ``text`` as up to ``parts`` modules that link together (at least two when it has two
    functions; more only as its cost allows, ``PART_COST`` each): each defines a share of the functions
    (balanced by ``_cost``; an internal function goes with the function that uses it) and declares
    the rest; private globals are copied into each, others defined in one and declared elsewhere.
    Anything this does not handle (aliases, appending or comdat globals, an internal function used by
    two parts) leaves the module whole."""
    lines = text.split("\n")
    functions: list[tuple[str, bool, int, int]] = []  # name, internal, first line, last line
    i = 0
    while i < len(lines):
        m = _DEFINE.match(lines[i])
        if m is None:
            i += 1
            continue
        j = lines.index("}", i)
        functions.append((m.group(2), m.group(1) is not None, i, j))
        i = j + 1
    if (
        parts < 2
        or len(functions) < 2
        or any(" alias " in x or "appending" in x or "comdat" in x for x in lines)
    ):
        return [text]
    # owner of each function: itself, or (internal) the function whose body names it
    owner = {name: name for name, internal, _, _ in functions if not internal}
    internals = {name for name, internal, _, _ in functions if internal}
    named: dict[str, set[str]] = {name: set() for name in internals}  # internal function -> its users
    for user, _, a, b in functions:
        for ref in _REFERENCE.findall("\n".join(lines[a + 1 : b])):
            if ref in named and ref != user:
                named[ref].add(user)
    for name, internal, _, _ in functions:
        if internal:
            users = named[name]
            if len(users) != 1:
                return [text]
            owner[name] = users.pop()
    for name in owner:  # an internal function used by another internal one
        seen = {name}
        while owner[owner[name]] != owner[name]:
            owner[name] = owner[owner[name]]
            if owner[name] in seen:
                return [text]
            seen.add(owner[name])
    size = {name: 0 for name in owner}
    cheap = _optnone_groups(lines)
    for name, _, a, b in functions:
        size[owner[name]] += _cost(lines, a, b, cheap)
    roots = sorted((n for n in owner if owner[n] == n), key=lambda n: (-size[n], n))
    parts = min(parts, len(roots), max(2, sum(size.values()) // PART_COST))
    if parts < 2:
        return [text]
    load, part = [0] * parts, {}
    for name in roots:  # the costliest first, each to the cheapest part so far
        k = load.index(min(load))
        part[name] = k
        load[k] += size[name]
    spans = {a: (b, part[owner[name]], internal) for name, internal, a, b in functions}
    out = []
    for k in range(parts):
        piece, i = [], 0
        while i < len(lines):
            if i in spans:
                b, p, internal = spans[i]
                if p == k:
                    piece.extend(lines[i : b + 1])
                elif not internal:
                    piece.append(_declaration(lines[i]))
                i = b + 1
                continue
            line = lines[i]
            g = _GLOBAL.match(line)
            if g is not None and k > 0 and g.group(2) not in ("private", "internal", "external"):
                declared = _global_declaration(line, g)
                if declared is None:
                    return [text]
                line = declared
            piece.append(line)
            i += 1
        out.append("\n".join(piece))
    return [out[k] for k in sorted(range(parts), key=lambda k: -load[k])]  # costliest first


BRANCH_LINES = 150  # what a conditional branch (a loop, mostly) costs LLVM, in lines of straight code


def _cost(lines: list[str], first: int, last: int, optnone: set[str]) -> int:
    """An estimate of LLVM's time on the function at ``lines[first:last + 1]``: its lines (half of them for
    optnone host code) and its conditional branches (loops, which LLVM unrolls and vectorizes; fitted to
    the 12-layer LLM's functions, it follows their time twice as closely as lines alone)."""
    group = re.search(r"(#\d+) \{$", lines[first])
    cost = (last - first) // (2 if group is not None and group.group(1) in optnone else 1)
    return cost + BRANCH_LINES * sum(line.lstrip().startswith("br i1") for line in lines[first:last])


def _optnone_groups(lines: list[str]) -> set[str]:
    """The attribute groups (``#N``) holding ``optnone``: LLVM compiles those functions without optimizing."""
    return {
        line.split(" ", 2)[1]
        for line in lines
        if line.startswith("attributes #") and re.search(r"\boptnone\b", line)
    }


def _declaration(define: str) -> str:
    """The ``declare`` line of a function's ``define`` line (external linkage)."""
    return "declare " + define.removeprefix("define ").rstrip().removesuffix("{").rstrip()


def _global_declaration(line: str, g: re.Match[str]) -> str | None:
    """``@x = external global <type>`` for a global defined with an initializer; None for a form not
    handled (the module then stays whole)."""
    rest = line[g.end() :]
    depth, end = 0, None
    for i, c in enumerate(rest):
        if c in "[{<(":
            depth += 1
        elif c in "]}>)":
            depth -= 1
        elif c == " " and depth == 0:
            end = i
            break
    if end is None or depth:
        return None
    return f"{g.group(1)} = external {g.group(3)} {rest[:end]}"


def _new_machine(level: int) -> llvm.TargetMachine:
    """A target machine for this CPU and its features (position-independent code, which the JIT linker
    reaches its symbols from wherever it maps the object); one per compile, as emitting uses its state."""
    _initialize()
    return llvm.Target.from_default_triple().create_target_machine(
        cpu=llvm.get_host_cpu_name(),
        features=llvm.get_host_cpu_features().flatten(),
        opt=level,
        reloc="pic",
        codemodel="default",
    )


@functools.cache
def _initialize() -> None:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()


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
