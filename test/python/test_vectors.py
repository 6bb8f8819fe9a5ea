"""Vector registers per CPU (``lowering/vectors.py``): what ``compile()`` sizes packed weights, register tiles
and convolution vectors for on a host without AVX-512 (an AVX2 core's 16 registers of 256 bits, where
512-bit tiles split every vector in two and spill), checked from given LLVM features, not from the machine
the tests run on; the AVX2 code runs on any x86-64 test machine with AVX2, so its numbers are checked too."""

from __future__ import annotations

import re

import numpy as np
import pytest
from test_lower_nn import conv2d_ref

import relax_mlir.builder as rb
from relax_mlir.dialects import relax as R
from relax_mlir.lowering import vectors
from relax_mlir.lowering.vectors import AVX, AVX512, NEON, PORTABLE, SSE, Registers, feature_registers
from relax_mlir.pipelines.cpu import relax_level
from relax_mlir.pipelines.data import P, replace, text
from relax_mlir.targets import compile
from relax_mlir.targets.cpu import CpuTarget
from relax_mlir.transforms import schedules
from relax_mlir.transforms.schedules import vector_unit

AVX2_FEATURES = {"sse2": True, "avx": True, "avx2": True, "fma": True, "avx512f": False}
AVX2_SPEC = "+sse2,+avx,+avx2,+fma,-avx512f"
RNG = np.random.default_rng(0)


@pytest.mark.parametrize(
    "features,registers",
    [
        ({"avx512f": True, "avx2": True, "avx": True}, AVX512),  # Zen 4, Xeons
        (AVX2_FEATURES, AVX),  # Zen 3, Haswell .. Alder Lake
        ({"sse2": True, "avx": False}, SSE),  # x86-64 before AVX
        ({"neon": True}, NEON),  # aarch64
        ({}, PORTABLE),  # nothing named: AOT's portable code
    ],
)
def test_registers_follow_features(features: dict, registers: Registers) -> None:
    assert feature_registers(features) == registers


def test_registers_lanes() -> None:
    assert (AVX512.lanes(), AVX512.lanes(64), AVX.lanes(), NEON.lanes(), SSE.lanes(64)) == (16, 8, 8, 4, 2)


@pytest.mark.parametrize(
    "features,options",
    [
        ({"avx512f": True, "avx": True}, None),  # relax-O3 as registered
        (AVX2_FEATURES, ("vector-bits=256", "vector-registers=16")),
    ],
)
def test_cpu_target_tiles_for_the_host(
    monkeypatch: pytest.MonkeyPatch, features: dict, options: tuple
) -> None:
    monkeypatch.setattr(schedules, "host_cpu", lambda: ("test-cpu", features))
    pipeline = text(CpuTarget().relax_pipeline(3))
    if options is None:
        assert pipeline == text(relax_level(3))
        return
    assert f"relax-pack-weights{{opt-level=3 {options[0]}}}" in pipeline
    assert f"relax-schedule-kernels{{{' '.join(options)}}}" in pipeline


def _avx2_pipeline() -> str:
    """relax-O2 as ``compile()`` builds it on an AVX2 host."""
    level = relax_level(2, vector_unit(256, 16, "generic"))
    return text(
        replace(level, "convert-relax-to-linalg", [P("convert-relax-to-linalg", target_features=AVX2_SPEC)])
    )


def _avx2_host() -> bool:
    return vectors.host_cpu()[1].get("avx2", False)


@pytest.mark.skipif(not _avx2_host(), reason="runs AVX2 code: this host has no AVX2")
def test_avx2_matmul_and_convs_match_numpy() -> None:
    """A packed matmul (4 x 3 register blocks), a pointwise, a few-channel direct and a depthwise convolution compiled for AVX2: vectors
    of 8 f32 (FMAs never on 16), the numbers of numpy at several batches."""
    w = RNG.standard_normal((37, 253), dtype=np.float32)
    w1 = RNG.standard_normal((11, 6, 1, 1), dtype=np.float32)
    w3 = RNG.standard_normal((5, 6, 3, 3), dtype=np.float32)
    wd = RNG.standard_normal((6, 1, 3, 3), dtype=np.float32)
    bb = rb.BlockBuilder()
    with bb.function("matmul", {"x": rb.tensor(["m", 37])}) as (x,):
        bb.ret(R.matmul(x, R.constant(w)))
    with bb.function("convs", {"x": rb.tensor(["n", 6, 9, 21])}) as (x,):
        bb.ret(
            R.conv2d(x, R.constant(w1), 1, 0),
            R.conv2d(x, R.constant(w3), 1, 1),
            R.conv2d(x, R.constant(wd), 2, 1, 1, 6),
        )
    stages: dict[str, str] = {}
    exe = compile(bb.module, pipeline=_avx2_pipeline(), use_cache=False, on_stage=stages.__setitem__)
    host = stages["host"]
    # FMAs on 8 lanes (a strided depthwise row is one read of 16 lanes, shuffled to 8)
    assert "vector<8xf32>" in host and not re.search(r"vector\.fma [^\n]*: vector<16xf32>", host)
    assert "tensor<32x37x8xf32>" in host  # weight panels one 256-bit vector wide (253 columns padded to 256)
    assert "vector<4x3x8xf32>" in host  # register blocks of 4 rows x 3 panels (12 of the 16 registers)
    for m in (0, 1, 7, 33):
        x = RNG.standard_normal((m, 37), dtype=np.float32)
        np.testing.assert_allclose(exe["matmul"](x), x @ w, rtol=1e-4, atol=1e-4)
    for n in (0, 1, 3):
        x = RNG.standard_normal((n, 6, 9, 21), dtype=np.float32)
        got = exe["convs"](x)
        want = (
            conv2d_ref(x, w1, (1, 1), (0, 0, 0, 0), (1, 1), 1),
            conv2d_ref(x, w3, (1, 1), (1, 1, 1, 1), (1, 1), 1),
            conv2d_ref(x, wd, (2, 2), (1, 1, 1, 1), (1, 1), 6),
        )
        for g, ref in zip(got, want, strict=True):
            np.testing.assert_allclose(g, ref, rtol=1e-4, atol=1e-4)


def test_packed_register_blocks_per_unit() -> None:
    """8 x 2 on AVX-512 (also Zen 5's wide tiles), 4 x 3 on AVX2, 4 x 2 for wasm's SIMD128 (whose engine
    needs a spare register: 4 x 3 ran at half the speed in wasmtime)."""
    from relax_mlir.transforms.schedules.packed_matmul import _main_panels, _rows

    for unit, block in [
        (vector_unit(512, 32, "znver4"), (0, 2)),
        (vector_unit(512, 32, "znver5"), (0, 2)),
        (vector_unit(256, 16, "generic"), (4, 3)),
        (vector_unit(128, 16, "generic"), (4, 2)),
    ]:
        rows = _rows(unit)
        assert (rows, _main_panels(rows, unit)) == block


@pytest.mark.parametrize(
    "target,cpu,options",
    [
        ("x86_64", None, ("vector-bits=128 vector-registers=16", "+sse2")),  # x86-64-v2: SSE
        ("x86_64", "x86-64-v3", ("vector-bits=256 vector-registers=16", "+avx,+avx2")),
        ("x86_64", "znver4", (None, "+avx512f")),  # an AVX-512 family: relax-O<n>'s own tiles
        ("aarch64", None, ("vector-bits=128 vector-registers=32", "+neon")),
    ],
)
def test_aot_targets_tile_for_their_cpu(target: str, cpu: str | None, options: tuple) -> None:
    from relax_mlir.targets.aot import AOT_TARGETS

    pipeline = text(AOT_TARGETS[target].relax_pipeline(2, cpu))
    tiles, features = options
    assert f"convert-relax-to-linalg{{target-features={features}}}" in pipeline
    want = (
        f"relax-schedule-kernels{{{tiles} cpu=generic}}" if tiles else "relax-schedule-kernels{cpu=generic}"
    )
    assert want in pipeline
