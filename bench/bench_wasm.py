"""relax_mlir's wasm32 target against ONNX Runtime Web in node, with relax_mlir's native CPU target for scale.

    python3 bench/bench_wasm.py                # every model of bench/perf.py, prints a table
    python3 bench/bench_wasm.py --write        # ... and rewrites bench/WASM_RESULTS.md
    python3 bench/bench_wasm.py --quick        # the MLP at two small batches, one call each (a smoke test)

The models are those of ``bench/perf_models.py`` at ``bench/perf.py``'s shapes. Each is imported with
``from_onnx`` and compiled once for ``wasm32`` (``compile_library``, ``opt_level=3``): one ``.wasm`` serves
every shape. One node process (``bench_wasm_node.mjs``) then loads that module through its generated ES
module (``targets/wasm_js.py``) and ONNX Runtime Web (``onnxruntime-web`` pinned
at ``ORT_WEB``, wasm backend, SIMD, ``numThreads = 1``) on the same ONNX graph, checks both outputs against
numpy's, and times them side by side. The native CPU target (``relax_mlir.compile``, ``opt_level=3``, one
thread) is timed here in Python, for scale. Timing is ``bench/perf.py``'s: warm-up calls, then rounds of one
block of calls per engine (each after a pause and an untimed call), medians; outputs are checked first.

onnxruntime-web is installed with ``npm install --prefix <dir>`` into ``--ort-dir`` (default
``$XDG_CACHE_HOME/relax_mlir/onnxruntime-web-<version>``) when it is not there yet.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "RELAX_MLIR_BLAS_THREADS", "RELAX_MLIR_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ[_var] = "1"  # before numpy loads: every engine runs on one thread

import argparse  # noqa: E402
import datetime  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import perf  # noqa: E402  (bench/perf.py: the timing method, the machine description)

ORT_WEB = "1.30.0"
NODE_SCRIPT = HERE / "bench_wasm_node.mjs"
RESULTS = HERE / "WASM_RESULTS.md"
OPT_LEVEL = 3
QUICK = {"MLP 784-512-512-10": [(1, 784), (3, 784)]}
# the issue's ONNX Runtime Web numbers (Intel Xeon), ms: for comparison across machines
ISSUE_ORT_MS = {
    ("MLP 784-512-512-10", (1, 784)): 0.141,
    ("MLP 784-512-512-10", (64, 784)): 2.58,
    ("GPT 2 layers", (1, 16, 512)): 10.1,
    ("GPT 2 layers", (4, 128, 512)): 218,
    ("GPT 4 layers", (1, 32, 512)): 30.8,
    ("ResNet-style CNN", (1, 3, 64, 64)): 0.19,
    ("ResNet-style CNN", (8, 3, 64, 64)): 1.36,
}


class ToolMissing(RuntimeError):
    """node, npm or the wasm toolchain is not available: the benchmark cannot run."""


def default_ort_dir() -> Path:
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return cache / "relax_mlir" / f"onnxruntime-web-{ORT_WEB}"


def ensure_ort_web(directory: Path) -> Path:
    """``directory`` holding ``onnxruntime-web@ORT_WEB`` (installed there with npm when missing)."""
    package = directory / "node_modules" / "onnxruntime-web" / "package.json"
    if package.exists() and json.loads(package.read_text()).get("version") == ORT_WEB:
        return directory
    npm = shutil.which("npm")
    if npm is None:
        raise ToolMissing(f"npm is needed to install onnxruntime-web@{ORT_WEB} into {directory}")
    directory.mkdir(parents=True, exist_ok=True)
    cmd = [
        npm,
        "install",
        "--prefix",
        str(directory),
        f"onnxruntime-web@{ORT_WEB}",
        "--no-audit",
        "--no-fund",
    ]
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0 or not package.exists():
        raise ToolMissing(f"{' '.join(cmd)} failed:\n{result.stderr.strip()}")
    return directory


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        raise ToolMissing("node (v20 or later) is needed to run the wasm modules")
    return node


def _shape_text(shape: tuple[int, ...]) -> str:
    return "x".join(map(str, shape))


def _native_ms(exe: Any, x: Any, want: Any, label: str, np: Any, quick: bool) -> tuple[float, float]:
    """Median ms of the native executable (checked against numpy first), and its error."""
    t = time.perf_counter()
    got = exe(x)
    estimate = time.perf_counter() - t
    err = perf._check(f"{label}: relax native vs numpy", got, want, np)
    if quick:
        return estimate * 1e3, err
    perf._wait_quiet()
    return perf._timed_blocks({"native": lambda: exe(x)}, {"native": estimate})["native"], err


def _node_config(ort_dir: Path, cases: list[dict[str, Any]], quick: bool) -> dict[str, Any]:
    return {
        "ort": str(ort_dir),
        "warmup": perf.WARMUP,
        "rounds": perf.ROUNDS,
        "min_reps": perf.MIN_REPS,
        "max_reps": perf.MAX_REPS,
        "budget_ms": perf.BUDGET_S * 1e3,
        "idle_ms": perf.IDLE_S * 1e3,
        "rtol": perf.RTOL,
        "atol": perf.ATOL,
        "cases": [c | {"quick": quick} for c in cases],
    }


def run(
    models: dict[str, list[tuple[int, ...]]],
    ort_dir: Path,
    work: Path,
    quick: bool = False,
    native: bool = True,
) -> list[dict[str, Any]]:
    """Compile, check and time every model at its shapes; one result dict per case."""
    node = _node()
    ort_dir = ensure_ort_web(ort_dir)
    import numpy as np
    import onnx
    import perf_models

    import relax_mlir
    from relax_mlir.frontend.onnx import from_onnx

    cases: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    for m, (name, shapes) in enumerate(models.items()):
        build, reference, _ = perf_models.MODELS[name]
        model, weights = build()
        onnx_path = work / f"model{m}.onnx"
        onnx.save(model, onnx_path)
        module = from_onnx(model)
        wasm = work / f"model{m}.wasm"
        t = time.perf_counter()
        relax_mlir.compile_library(module, wasm, target="wasm32", opt_level=OPT_LEVEL)
        compile_s = time.perf_counter() - t
        signatures = json.loads(wasm.with_suffix(".json").read_text())
        function = next(iter(signatures))
        exe = relax_mlir.compile(module, opt_level=OPT_LEVEL) if native else None
        for shape in shapes:
            label = f"{name} {_shape_text(shape)}"
            x = np.random.default_rng(len(cases)).standard_normal(shape).astype(np.float32)
            want = np.ascontiguousarray(reference(x, weights), np.float32)
            k = len(cases)
            x.tofile(work / f"x{k}.bin")
            want.tofile(work / f"y{k}.bin")
            result = {"model": name, "shape": list(shape), "label": label, "wasm_compile_s": compile_s}
            if exe is not None:
                result["native_ms"], result["err_native"] = _native_ms(exe, x, want, label, np, quick)
            results.append(result)
            cases.append(
                {
                    "label": label,
                    "onnx": str(onnx_path),
                    "wasm": str(wasm),
                    "mjs": str(wasm.with_suffix(".mjs")),
                    "function": function,
                    "input": str(work / f"x{k}.bin"),
                    "expected": str(work / f"y{k}.bin"),
                    "shape": list(shape),
                }
            )
    config = work / "cases.json"
    config.write_text(json.dumps(_node_config(ort_dir, cases, quick)))
    if not quick:
        perf._wait_quiet()  # up to perf.MAX_WAIT_S in all, for other processes to use < perf.QUIET cores
    load, children = perf._Load(), _children_cpu()
    proc = subprocess.Popen([node, str(NODE_SCRIPT), str(config)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    for result, line in zip(results, proc.stdout):
        out = json.loads(line)
        assert out["label"] == result["label"], (out, result)
        result |= {
            "wasm_ms": out["ms"]["relax_wasm"],
            "ort_ms": out["ms"]["ort_web"],
            "reps": out["reps"],
            "err_wasm": out["err"]["relax_wasm"],
            "err_ort": out["err"]["ort_web"],
        }
        print(_row(result), flush=True)
    if proc.wait() != 0:
        raise RuntimeError(f"{NODE_SCRIPT.name} exited with {proc.returncode}")
    # node's own CPU time is not "other processes" (perf._Load subtracts only this process's)
    wall = time.perf_counter() - load.start[0]
    others = max(0.0, load.others() - (_children_cpu() - children) / wall)
    for result in results:
        result["others"] = others
    return results


def _children_cpu() -> float:
    """CPU seconds of this process's waited-for children."""
    t = os.times()
    return t.children_user + t.children_system


def _row(r: dict[str, Any]) -> str:
    native = f"{r['native_ms']:9.3f}" if "native_ms" in r else f"{'-':>9}"
    return (
        f"{r['model']:<20} {_shape_text(tuple(r['shape'])):<11} {r['wasm_ms']:10.3f} {r['ort_ms']:10.3f} "
        f"{r['wasm_ms'] / r['ort_ms']:7.2f} {native}"
    )


def _header() -> str:
    return f"{'model':<20} {'input':<11} {'relax wasm':>10} {'ORT web':>10} {'w/ORT':>7} {'native':>9}"


def _versions(ort_dir: Path) -> dict[str, str]:
    import llvmlite
    import numpy as np

    node = subprocess.run([_node(), "--version"], capture_output=True, text=True).stdout.strip()
    package = ort_dir / "node_modules" / "onnxruntime-web" / "package.json"
    return {
        "node": node,
        "onnxruntime-web": json.loads(package.read_text())["version"],
        "python": platform.python_version(),
        "numpy": np.__version__,
        "llvmlite": llvmlite.__version__,
    }


def markdown(results: list[dict[str, Any]], machine: dict[str, str], versions: dict[str, str]) -> str:
    met = [r for r in results if r["wasm_ms"] <= r["ort_ms"]]
    worst = max(results, key=lambda r: r["wasm_ms"] / r["ort_ms"])
    lines = [
        "# relax_mlir wasm32 vs ONNX Runtime Web (node, 1 thread)",
        "",
        "Generated by `python3 bench/bench_wasm.py --write` (models in `bench/perf_models.py`); rerun to refresh.",
        "",
        "## Machine",
        "",
        *(f"- {k}: {v}" for k, v in machine.items()),
        "- " + ", ".join(f"{k} {v}" for k, v in versions.items()),
        "",
        "## Method",
        "",
        f"- Each model is imported with `from_onnx` and compiled once (`opt_level={OPT_LEVEL}`): for `wasm32` "
        "(`compile_library`, run in node through the generated module) and for the native CPU target "
        "(`relax_mlir.compile`, one thread: OpenBLAS and generated kernels single-threaded). ONNX Runtime Web "
        f"{ORT_WEB} (npm `onnxruntime-web`, wasm backend, SIMD, `numThreads = 1`, graph optimizations `all`) "
        "runs the same ONNX graph in the same node process as relax_mlir's wasm module.",
        f"- Outputs are checked against numpy first (rtol {perf.RTOL:g}, atol {perf.ATOL:g}). Times are medians in "
        f"ms after {perf.WARMUP} warm-up calls per engine, over {perf.ROUNDS} rounds of one block of calls per "
        "engine (each block after a 50 ms pause and an untimed call), repeats sized to about "
        f"{perf.BUDGET_S:g} s per engine per case, as `bench/perf.py` times. A call includes copying the input "
        "into wasm memory and the output out of it, for both engines.",
        "- *wasm / ORT web* <= 1.0 means relax_mlir's wasm module is faster. *issue ORT web* is ONNX Runtime "
        "Web's time in issue 24 (an Intel Xeon), for comparison across machines.",
        "- *other processes*: cores other processes kept busy during the node run (2-core machine shared with "
        f"other jobs; the run waits up to {perf.MAX_WAIT_S:g} s in all for them to use less than {perf.QUIET:g} "
        "cores first): large values make the numbers noisy, the ratios less so (both engines run in the "
        "same rounds).",
        "",
        "## Results",
        "",
        f"{len(met)} of {len(results)} workloads at <= 1.0x ONNX Runtime Web's time; worst "
        f"{worst['label']} at {worst['wasm_ms'] / worst['ort_ms']:.2f}x.",
        "",
        "| model | input | relax wasm ms | ORT web ms | wasm / ORT web | relax native ms | native / wasm "
        "| issue ORT web ms | other processes (cores) |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in results:
        native = r.get("native_ms")
        issue = ISSUE_ORT_MS.get((r["model"], tuple(r["shape"])))
        wasm, ort = r["wasm_ms"], r["ort_ms"]
        native_ms, scale = ("-", "-") if native is None else (f"{native:.3f}", f"{native / wasm:.2f}")
        lines.append(
            f"| {r['model']} | {_shape_text(tuple(r['shape']))} | {wasm:.3f} | {ort:.3f} | {wasm / ort:.2f} "
            f"| {native_ms} | {scale} | {'-' if issue is None else issue} | {r['others']:.2f} |"
        )
    compiles = {r["model"]: r["wasm_compile_s"] for r in results}
    lines += [
        "",
        "wasm32 compile time (s; shorter when the compile cache already holds a model): "
        + ", ".join(f"{k} {v:.1f}" for k, v in compiles.items()),
        "",
    ]
    return "\n".join(lines)


def _models(args: argparse.Namespace) -> dict[str, list[tuple[int, ...]]]:
    import perf_models

    if args.quick:
        return dict(QUICK)
    models = {name: shapes for name, (_, _, shapes) in perf_models.MODELS.items()}
    if args.models:
        models = {
            k: v for k, v in models.items() if any(s.lower() in k.lower() for s in args.models.split(","))
        }
    return models


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--quick", action="store_true", help="the MLP at batch 1 and 3, one untimed-method call"
    )
    parser.add_argument("--models", help="comma-separated substrings of model names to run (default: all)")
    parser.add_argument("--no-native", action="store_true", help="skip the native CPU target")
    parser.add_argument("--write", action="store_true", help=f"rewrite {RESULTS.relative_to(ROOT)}")
    parser.add_argument("--ort-dir", type=Path, default=default_ort_dir(), help="onnxruntime-web install dir")
    parser.add_argument("--json", type=Path, help="also write the results as JSON here")
    args = parser.parse_args()
    try:
        with tempfile.TemporaryDirectory(prefix="relax_mlir_wasm_bench_") as tmp:
            print(_header(), flush=True)
            results = run(_models(args), args.ort_dir, Path(tmp), quick=args.quick, native=not args.no_native)
    except ToolMissing as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    if args.write:
        machine = perf._machine()
        machine["date"] = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
        RESULTS.write_text(markdown(results, machine, _versions(args.ort_dir)))
        print(f"wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
