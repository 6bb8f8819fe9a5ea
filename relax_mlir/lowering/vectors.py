"""The vector registers kernels are written for: this host's CPU (as LLVM sees it), a portable default, or the
CPU an LLVM feature list describes.

Kernel lowerings (``convert-relax-to-linalg{target-features=...}``), the register tiles of
``relax-schedule-kernels`` and the panels of ``relax-pack-weights`` size their vectors from here, so that code
compiled on a machine without AVX-512 does not split every 512-bit vector in two and spill its accumulators
(an AVX2 core has 16 registers of 256 bits).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass


@functools.cache
def host_cpu() -> tuple[str, dict[str, bool]]:
    """This machine's LLVM CPU name and features ("generic" and none where llvmlite cannot tell)."""
    try:
        import llvmlite.binding as llvm

        return llvm.get_host_cpu_name(), dict(llvm.get_host_cpu_features())
    except Exception:  # noqa: BLE001  (no llvmlite, or a host it cannot describe)
        return "generic", {}


def parse_features(text: str) -> dict[str, bool]:
    """LLVM's feature list syntax (``+amx-tile,-avx512f``) as a mapping."""
    return {f[1:]: f[0] == "+" for f in text.split(",") if f[:1] in "+-" and len(f) > 1}


@dataclass(frozen=True)
class Registers:
    """A CPU's vector registers: their width in bits and how many there are."""

    bits: int
    count: int

    def lanes(self, element_bits: int = 32) -> int:
        """Elements of ``element_bits`` per vector."""
        return max(1, self.bits // element_bits)


AVX512 = Registers(512, 32)
AVX = Registers(256, 16)
NEON = Registers(128, 32)
SSE = Registers(128, 16)
SIMD128 = Registers(128, 16)  # WebAssembly's, as engines map it onto x86's xmm0-15
PORTABLE = AVX  # no CPU named: vectors of 8 f32, which every LLVM target lowers without spilling much


def feature_registers(features: Mapping[str, bool]) -> Registers:
    """The widest vector registers of a CPU with ``features`` (LLVM's names): AVX-512's, AVX's, NEON's,
    SSE's or WebAssembly's SIMD128; ``PORTABLE`` when none is named."""
    for flag, registers in (
        ("avx512f", AVX512),
        ("avx", AVX),
        ("neon", NEON),
        ("sse2", SSE),
        ("simd128", SIMD128),
    ):
        if features.get(flag, False):
            return registers
    return PORTABLE


def target_features(spec: str) -> dict[str, bool]:
    """The features ``convert-relax-to-linalg``'s ``target-features`` names: ``host`` (the compiling host's
    CPU, what ``compile()`` runs on), ``portable`` (none: code that every LLVM target compiles) or an LLVM
    feature list (``+avx512f,+avx512vl,+avx512vnni``)."""
    if spec == "host":
        return host_cpu()[1]
    if spec == "portable":
        return {}
    return parse_features(spec)


def target_registers(spec: str) -> Registers:
    """The vector registers of the CPU ``target-features`` ``spec`` names (``target_features``)."""
    return feature_registers(target_features(spec))
