"""Register tiles chosen per CPU family (``CPU_FAMILIES`` in ``transforms/schedules/__init__.py``) from a
given LLVM CPU name and features, not from the machine the tests run on."""

from __future__ import annotations

import numpy as np
import pytest

import relax_mlir.builder as rb
from relax_mlir.dialects import relax as R
from relax_mlir.pipelines.cpu import LEVELS
from relax_mlir.targets import compile
from relax_mlir.transforms.schedules import cpu_family, vector_unit
from relax_mlir.transforms.schedules.matmul import register_tile


@pytest.mark.parametrize(
    "cpu,features,family,wide",
    [
        ("znver4", {}, "zen4", False),
        ("znver5", {}, "zen5", True),
        ("sapphirerapids", {}, "intel-server", False),
        ("skylake-avx512", {}, "intel-server", False),
        ("rocketlake", {}, "intel-client", False),
        ("rocketlake", {"amx-tile": True, "avx512fp16": True}, "intel-server", False),  # the Xeon
        ("rocketlake", {"amx-tile": False}, "intel-client", False),
        ("haswell", {}, "generic", False),
        ("generic", {}, "generic", False),
    ],
)
def test_family_follows_cpu_name_and_features(cpu: str, features: dict, family: str, wide: bool) -> None:
    found = cpu_family(cpu, features)
    assert (found.name, found.wide_tiles) == (family, wide)


def test_register_tiles_per_family() -> None:
    zen4 = vector_unit(512, 32, "znver4")
    zen5 = vector_unit(512, 32, "znver5")
    xeon = vector_unit(512, 32, "rocketlake", "+amx-tile,+avx512fp16")
    assert register_tile("linalg.matmul", zen4) == register_tile("linalg.matmul", xeon) == (8, 32, 1)
    assert register_tile("linalg.matmul", zen5) == (12, 32, 1)
    assert register_tile("linalg.batch_matmul", zen5) == (1, 12, 16, 1)
    assert register_tile("linalg.batch_matmul", xeon) == (1, 8, 16, 1)
    # the families are for 512-bit vectors: SIMD128 (wasm) keeps its tiles whatever the CPU
    assert register_tile("linalg.matmul", vector_unit(128, 16, "sapphirerapids")) == (4, 8, 1)


def _pipeline(cpu: str) -> str:
    return LEVELS[2].replace("relax-schedule-kernels", f"relax-schedule-kernels{{cpu={cpu}}}")


@pytest.mark.parametrize(
    "cpu,tile", [("sapphirerapids", "vector<8x32xf32>"), ("znver5", "vector<12x32xf32>")]
)
def test_pass_option_picks_the_tile_and_matches_numpy(cpu: str, tile: str) -> None:
    bb = rb.BlockBuilder()
    with bb.function("main", {"a": rb.tensor(["m", "k"]), "b": rb.tensor(["k", "n"])}) as (a, b):
        bb.ret(R.matmul(a, b))
    stages: dict[str, str] = {}
    exe = compile(
        bb.module,
        opt_level=2,
        pipeline=_pipeline(cpu),
        use_cache=False,
        on_stage=lambda name, text: stages.update({name: text}),
    )
    assert tile in stages["host"]
    other = {"vector<8x32xf32>", "vector<12x32xf32>"} - {tile}
    assert not any(t in stages["host"] for t in other)
    rng = np.random.default_rng(0)
    for m, k, n in [(0, 3, 5), (1, 1, 1), (11, 7, 33), (12, 64, 32), (25, 255, 129)]:
        x = rng.standard_normal((m, k), dtype=np.float32)
        y = rng.standard_normal((k, n), dtype=np.float32)
        np.testing.assert_allclose(exe(x, y), x @ y, rtol=1e-4, atol=1e-3, err_msg=f"{cpu} {m}x{k}x{n}")


def test_aot_code_gets_no_host_family() -> None:
    """A library compiled ahead of time is for another machine: its tiles are the generic family's."""
    from relax_mlir.pipelines.data import text
    from relax_mlir.targets.aot import aot_pipeline

    assert "relax-schedule-kernels{cpu=generic}" in text(aot_pipeline(2))


def test_wide_batch_matmul_tiles_match_numpy() -> None:
    bb = rb.BlockBuilder()
    with bb.function("main", {"a": rb.tensor(["b", "m", "k"]), "b": rb.tensor(["b", "k", "n"])}) as (a, b):
        bb.ret(R.matmul(a, b))
    exe = compile(bb.module, opt_level=2, pipeline=_pipeline("znver5"), use_cache=False)
    rng = np.random.default_rng(1)
    for b, m, k, n in [(1, 1, 1, 1), (2, 0, 3, 4), (3, 13, 64, 17), (2, 25, 33, 48)]:
        x = rng.standard_normal((b, m, k), dtype=np.float32)
        y = rng.standard_normal((b, k, n), dtype=np.float32)
        np.testing.assert_allclose(exe(x, y), x @ y, rtol=1e-4, atol=1e-3, err_msg=f"{b}x{m}x{k}x{n}")
