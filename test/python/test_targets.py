"""Targets: the registry every entry point dispatches through, a target added by one class, and the
pipelines as data (derived pipelines, and the named pipelines' text unchanged by the move to lists)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from oprun import build_fn, rand

import relax_mlir
import relax_mlir.builder as rb
from relax_mlir import relax_compile
from relax_mlir.dialects import relax as R
from relax_mlir.errors import PassError, RelaxError
from relax_mlir.pipelines import PIPELINES, load_passes
from relax_mlir.pipelines.cpu import TO_LLVM, relax_level
from relax_mlir.pipelines.data import P, Pipeline, insert_before, names, passes, replace, text, without
from relax_mlir.pipelines.gpu import CPU_ONLY, host_to_llvm_gpu, relax_to_host_gpu
from relax_mlir.targets import TARGETS, get_target, register_target
from relax_mlir.targets.aot import aot_pipeline
from relax_mlir.targets.cpu import CpuTarget

ROOT = Path(__file__).resolve().parents[2]
KNOWN = "available targets: aarch64, cpu, cuda, wasm32, webgpu, x86_64"

# the named pipelines as text (math goes to libm before the vector lowering: f64 erf on vectors)
OLD_PIPELINES = {
    "cpu": "relax-to-host,host-to-llvm",
    "gpu": "relax-to-host-gpu,host-to-gpu",
    "host-to-gpu": (
        "one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map allow-return-allocs-from-loops},"
        "canonicalize,func.func(buffer-loop-hoisting),relax-return-destinations,drop-equivalent-buffer-results,"
        "expand-realloc{emit-deallocs=false},canonicalize,relax-thread-buffers,ownership-based-buffer-deallocation,"
        "canonicalize,buffer-deallocation-simplification,relax-split-deallocs,"
        "bufferization-lower-deallocations,cse,canonicalize,canonicalize,"
        "relax-gpu-prepare-kernels,func.func(convert-linalg-to-parallel-loops),"
        "relax-gpu-map-loops{block-size=256},relax-gpu-managed-memory,gpu-kernel-outlining,"
        "relax-gpu-attach-target{chip=sm_80},gpu.module(expand-strided-metadata,lower-affine,"
        "convert-scf-to-cf,convert-gpu-to-nvvm,canonicalize,cse,reconcile-unrealized-casts),"
        "relax-lower-parallel,relax-reassociate-reductions,convert-linalg-to-loops,"
        "relax-approximate-math,convert-vector-to-scf{full-unroll=true},relax-fuse-multiply-add,"
        "math-expand-ops{ops=rsqrt,exp2,fpowi},convert-math-to-libm,"
        "convert-vector-to-llvm,convert-bufferization-to-memref,relax-check-llvm-lowerable,"
        "lower-affine,convert-scf-to-cf,expand-strided-metadata,lower-affine,finalize-memref-to-llvm,"
        "convert-math-to-llvm,convert-arith-to-llvm,convert-index-to-llvm,convert-cf-to-llvm,"
        "convert-func-to-llvm,convert-ub-to-llvm,convert-openmp-to-llvm,gpu-to-llvm,"
        "reconcile-unrealized-casts,gpu-module-to-binary{format=isa}"
    ),
    "host-to-llvm": (  # function-local passes on each function in parallel (pipelines/cpu.py: per_function)
        "builtin.module(one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map allow-return-allocs-from-loops},"
        "func.func(canonicalize,buffer-loop-hoisting),relax-return-destinations,drop-equivalent-buffer-results,"
        "expand-realloc{emit-deallocs=false},func.func(canonicalize),relax-thread-buffers,"
        "ownership-based-buffer-deallocation,func.func(canonicalize,buffer-deallocation-simplification),"
        "relax-split-deallocs,bufferization-lower-deallocations,func.func(cse,canonicalize,canonicalize),"
        "relax-lower-parallel,relax-reassociate-reductions,func.func(convert-linalg-to-loops),"
        "relax-approximate-math,func.func(convert-vector-to-scf{full-unroll=true}),relax-fuse-multiply-add,"
        "func.func(math-expand-ops{ops=rsqrt,exp2,fpowi}),convert-math-to-libm,convert-vector-to-llvm,"
        "convert-bufferization-to-memref,relax-check-llvm-lowerable,"
        "func.func(lower-affine,convert-scf-to-cf,expand-strided-metadata,lower-affine),finalize-memref-to-llvm,"
        "func.func(convert-math-to-llvm,convert-arith-to-llvm,convert-index-to-llvm),convert-cf-to-llvm,"
        "convert-func-to-llvm,llvm.func(convert-ub-to-llvm),convert-openmp-to-llvm,reconcile-unrealized-casts)"
    ),
    "relax-O0": (
        "relax-verify,relax-specialize-ranks,relax-infer-shapes,relax-bind-region-dims,relax-lift-load-time-params,"
        "convert-relax-to-linalg,relax-lower-host"
    ),
    "relax-O1": (
        "relax-verify,relax-specialize-ranks,relax-infer-shapes,relax-bind-region-dims,relax-fuse-dequantize-matmul,relax-canonicalize,relax-fold-constants{opt-level=1},"
        "relax-cse,relax-dce,relax-pack-weights{opt-level=1},relax-lift-load-time-params,convert-relax-to-linalg,"
        "relax-lower-host,relax-schedule-kernels"
    ),
    "relax-O2": (
        "relax-verify,relax-specialize-ranks,relax-infer-shapes,relax-bind-region-dims,relax-fuse-dequantize-matmul,relax-inline{max-ops=64},"
        "relax-canonicalize,relax-fold-batch-norm,relax-fold-constants{opt-level=2},"
        "relax-cse,relax-dce,relax-fuse-attention,relax-pack-weights{opt-level=2},relax-lift-load-time-params,relax-fuse-ops,"
        "convert-relax-to-linalg,relax-fuse-kernels,relax-plan-memory,relax-lower-host,"
        "relax-parallelize-kernels,relax-schedule-kernels"
    ),
    "relax-O3": (
        "relax-verify,relax-specialize-ranks,relax-infer-shapes,relax-bind-region-dims,relax-fuse-dequantize-matmul,relax-inline{max-ops=64},"
        "relax-canonicalize,relax-fold-batch-norm,relax-fold-constants{opt-level=3},"
        "relax-cse,relax-dce,relax-fuse-attention,relax-pack-weights{opt-level=3},relax-lift-load-time-params,relax-dispatch-blas,relax-fuse-ops,"
        "convert-relax-to-linalg,relax-fuse-kernels,relax-plan-memory,relax-lower-host,"
        "relax-parallelize-kernels,relax-schedule-kernels"
    ),
    "relax-to-host": "relax-O3",
    # since the webgpu target: convolutions as named linalg ops on GPU targets (im2col looped over images
    # on the host)
    "relax-to-host-gpu": (
        "relax-verify,relax-specialize-ranks,relax-infer-shapes,relax-bind-region-dims,relax-inline{max-ops=64},"
        "relax-canonicalize,relax-fold-batch-norm,"
        "relax-fold-constants{opt-level=2},"
        "relax-cse,relax-dce,relax-lift-load-time-params,relax-fuse-ops,convert-relax-to-linalg{conv=direct},"
        "relax-fuse-kernels,"
        "relax-plan-memory,relax-lower-host"
    ),
}


class CpuO0Target(CpuTarget):
    """A toy target: the CPU's build and executable, with relax-O0 at every opt level."""

    name = "toy"
    summary = "the CPU without relax-level optimizations"

    def relax_pipeline(self, opt_level: int) -> Pipeline:
        return relax_level(0)


@pytest.fixture
def toy() -> Iterator[str]:
    register_target(CpuO0Target)
    yield "toy"
    del TARGETS["toy"]


def test_registry_lists_every_target() -> None:
    assert sorted(TARGETS) == ["aarch64", "cpu", "cuda", "wasm32", "webgpu", "x86_64"]
    assert all(get_target(name).name == name for name in TARGETS)


def test_unknown_target_lists_the_known_ones(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(RelaxError, match=f"unknown target 'riscv'; {KNOWN}$"):
        get_target("riscv")
    with pytest.raises(RelaxError, match=f"unknown target 'riscv'; {KNOWN}$"):
        relax_mlir.compile("module {}", target="riscv")
    with pytest.raises(RelaxError, match=f"unknown target 'riscv'; {KNOWN}$"):
        relax_mlir.compile_library("module {}", tmp_path / "x.so", target="riscv")
    source = tmp_path / "m.mlir"
    source.write_text("module {}\n")
    assert relax_compile.main([str(source), "--target", "riscv", "-o", str(tmp_path / "x.so")]) == 1
    assert f"relax-compile: error: unknown target 'riscv'; {KNOWN}" in capsys.readouterr().err


def test_target_kind_mismatch_names_the_other_entry_point(tmp_path: Path) -> None:
    with pytest.raises(RelaxError, match="target 'x86_64' builds shared libraries: use compile_library"):
        relax_mlir.compile("module {}", target="x86_64")
    with pytest.raises(RelaxError, match="target 'cpu' runs in this process: use compile"):
        relax_mlir.compile_library("module {}", tmp_path / "x.so", target="cpu")


@pytest.mark.parametrize("n", [0, 1, 7])
def test_a_target_is_one_class(toy: str, n: int) -> None:
    module = build_fn({"x": rb.tensor(["n", 5])}, lambda x: R.sigmoid(R.add(x, x)))
    stages: dict[str, str] = {}
    exe = relax_mlir.compile(module, target=toy, use_cache=False, on_stage=stages.__setitem__)
    x = rand((n, 5))
    np.testing.assert_allclose(exe(x), 1 / (1 + np.exp(-2 * x)), rtol=1e-5)
    assert "relax.num_threads" not in stages["host"]  # relax-O0: no relax-parallelize-kernels
    relax_mlir.compile(module, target=toy)
    hit = relax_mlir.compile(module, target=toy)
    assert hit.stats.cache_hit
    np.testing.assert_allclose(hit(x), exe(x))


def test_named_pipelines_print_as_before() -> None:
    load_passes()
    assert {name: PIPELINES[name][0] for name in OLD_PIPELINES} == OLD_PIPELINES


def test_gpu_pipeline_is_o2_without_the_cpu_passes() -> None:
    gpu = names(relax_to_host_gpu())
    for name in CPU_ONLY:
        assert name not in gpu
    assert gpu == [n for n in names(relax_level(2)) if n in gpu]
    assert {"relax-fuse-ops", "relax-plan-memory", "relax-fold-constants", "relax-lower-host"} <= set(gpu)


def test_aot_pipeline_leaves_out_what_needs_the_process() -> None:
    for level in range(4):
        aot = names(aot_pipeline(level))
        assert "relax-dispatch-blas" not in aot and "relax-parallelize-kernels" not in aot
        assert aot == [n for n in names(relax_level(level)) if n in aot]
    assert text(aot_pipeline(3)) == text(aot_pipeline(2)).replace("opt-level=2", "opt-level=3")


def test_gpu_host_to_llvm_inserts_gpu_to_llvm() -> None:
    gpu = names(host_to_llvm_gpu())
    assert gpu[-2:] == ["gpu-to-llvm", "reconcile-unrealized-casts"]
    assert [n for n in gpu if n != "gpu-to-llvm"] == names(TO_LLVM)


def test_list_operations() -> None:
    p = [P("a"), P("b", opt_level=2, flag=True, off=False), P("func.func", nested=passes("c"))]
    assert text(p) == "a,b{opt-level=2 flag off=false},func.func(c)"
    assert text(without(p, "b")) == "a,func.func(c)"
    assert text(replace(p, "a", passes("x", "y"))) == "x,y,b{opt-level=2 flag off=false},func.func(c)"
    assert (
        text(insert_before(p, "func.func", passes("z"))) == "a,b{opt-level=2 flag off=false},z,func.func(c)"
    )
    with pytest.raises(PassError, match="pipeline has no element 'nope'"):
        without(p, "nope")


def _imports(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def test_pipelines_and_passes_do_not_import_targets() -> None:
    bad = [
        f"{path.relative_to(ROOT)} imports {name}"
        for folder in ("pipelines", "transforms", "runtime", "dialects", "schedules", "shape_infer")
        for path in sorted((ROOT / "relax_mlir" / folder).rglob("*.py"))
        for name in _imports(path)
        if name.startswith("relax_mlir.targets")
    ]
    assert not bad
