"""Run every op and the builder's transformer block on a real GPU, against numpy and the CPU target.

    python3 bench/gpu_check.py                       # every op + the block for sm_80, writes bench/GPU_CHECK.md
    python3 bench/gpu_check.py --chip sm_90 --ops exp,add --no-block --repeat 20 --out /tmp/check.md
    python3 bench/gpu_check.py --target webgpu       # any WebGPU adapter (Vulkan, Metal, D3D12; lavapipe)

``--target webgpu`` does the same through ``target="webgpu"`` on the adapter wgpu picks
(``$RELAX_MLIR_WEBGPU_ADAPTER`` chooses another), reports the adapter, and times each kernel of the block
(one profiled call per shape: every dispatch waits for the queue). On lavapipe, Mesa's Vulkan driver on the
CPU, the times are a sanity figure, not GPU performance.

First everything is built (no GPU needed): each op's docstring IR example (``op_examples.example_program``)
for ``target="cuda"`` and for the CPU (``opt_level=1``, the reference), and the transformer block
(``examples.models.transformer_block(d=512, heads=8, ff=2048)``) for both targets. Then the first GPU
program is loaded; without a GPU (no ``libcuda.so.1``, no device) the script prints ``error: ...`` and exits
2 without writing a report. With one, each op runs on the GPU and on the CPU on the same random inputs at
two symbol assignments (every symbol 3, then every symbol 17, capped at upper bounds) and the results are
compared (rtol 1e-4, atol 1e-5, NaNs equal; exact for integers and booleans); the transformer block runs at
(b, s) = (1, 1), (1, 128), (4, 128) against ``examples.reference.transformer_block`` (float64 numpy,
rtol 1e-3). Times are medians of ``--repeat`` calls after one warm-up, whole calls from Python (input
checks, launches and the synchronization that makes the results readable). The report lists each op and
block shape; the exit status is 1 if any comparison failed, 0 if all passed.
"""

from __future__ import annotations

import argparse
import datetime
import platform
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import relax_mlir  # noqa: E402
from relax_mlir.dialects.op_examples import NOT_STANDALONE, example_program  # noqa: E402
from relax_mlir.dialects.registry import OPS  # noqa: E402
from relax_mlir.dialects.types import free_symbols  # noqa: E402
from relax_mlir.errors import DeviceUnavailableError, RelaxError  # noqa: E402
from relax_mlir.runtime.executable import NUMPY_DTYPES, Executable, Function  # noqa: E402
from relax_mlir.targets.cuda import load_cuda_runtime  # noqa: E402
from relax_mlir.transforms.gpu.target import check_chip  # noqa: E402

SIZES = (3, 17)  # every symbol takes this value, one run each
OP_RTOL, OP_ATOL = 1e-4, 1e-5
BLOCK = {"d": 512, "heads": 8, "ff": 2048}
BLOCK_SHAPES = ((1, 1), (1, 128), (4, 128))
BLOCK_RTOL, BLOCK_ATOL = 1e-3, 1e-4
REFERENCE_REPEAT = 5  # the float64 numpy reference is slow; it is timed at most this many times


# -- inputs ----------------------------------------------------------------------------------------------


def symbol_env(fn: Function, value: int) -> dict[str, int]:
    """Every symbol of ``fn``'s parameters set to ``value``, capped at its upper bound."""
    symbols: set[str] = set()
    for spec in fn.inputs:
        symbols |= free_symbols(spec.type)
    return {s: min(value, fn.upper_bounds.get(s, value)) for s in sorted(symbols)}


def _random_tensor(shape: tuple[int, ...], dtype: str, rng: np.random.Generator) -> np.ndarray:
    """Floats uniform in [0.1, 0.9] (inside every unary op's domain), ints in [0, 3), random bools."""
    np_dtype = np.dtype(NUMPY_DTYPES[dtype])
    if dtype == "i1":
        return rng.random(shape) < 0.5
    if dtype.startswith(("f", "bf")):
        return rng.uniform(0.1, 0.9, shape).astype(np_dtype)
    return rng.integers(0, 3, shape).astype(np_dtype)


def _nest(flat: Sequence[Any], structure: Sequence[Any]) -> list[Any]:
    """Group flat parameter values into tuples following ``Function.param_structure``."""
    values = iter(flat)

    def take(s: Any) -> Any:
        return next(values) if s == 0 else tuple(take(x) for x in s)

    return [take(s) for s in structure]


def make_inputs(fn: Function, value: int, rng: np.random.Generator) -> list[Any]:
    """Arguments for ``fn`` with every symbol set to ``value``: tensors from their symbolic shapes, ints
    for prim and shape parameters (an unknown dim or value takes ``value`` too)."""
    env = symbol_env(fn, value)

    def dim(d: Any) -> int:
        return value if d is None else d.evaluate(env)

    flat: list[Any] = []
    for spec in fn.inputs:
        t = spec.type
        if spec.kind == "prim":
            flat.append(dim(t.value))
        elif spec.kind == "shape":
            if t.values is None:
                raise ValueError(f"parameter '{spec.name}': a shape of unknown rank ({t})")
            flat.append(tuple(dim(d) for d in t.values))
        else:
            if t.shape is None or t.dtype not in NUMPY_DTYPES:
                raise ValueError(f"parameter '{spec.name}': cannot make an array of {t}")
            flat.append(_random_tensor(tuple(dim(d) for d in t.shape), t.dtype, rng))
    return _nest(flat, fn.param_structure)


# -- comparing and timing ----------------------------------------------------------------------------------


def _leaves(value: Any) -> list[np.ndarray]:
    if isinstance(value, (tuple, list)):
        return [leaf for v in value for leaf in _leaves(v)]
    return [np.asarray(value)]


def compare(got: Any, want: Any, rtol: float, atol: float) -> tuple[bool, float, str]:
    """Whether ``got`` matches ``want`` (nested tuples of arrays/ints), the max abs error and why not."""
    got_leaves, want_leaves = _leaves(got), _leaves(want)
    if len(got_leaves) != len(want_leaves):
        return False, float("inf"), f"{len(got_leaves)} results, expected {len(want_leaves)}"
    worst, ok, why = 0.0, True, ""
    for i, (g, w) in enumerate(zip(got_leaves, want_leaves)):
        if g.shape != w.shape or g.dtype != w.dtype:
            return (
                False,
                float("inf"),
                f"result {i}: {g.dtype}{list(g.shape)}, expected {w.dtype}{list(w.shape)}",
            )
        if g.size == 0:
            continue
        if w.dtype.kind not in "biu":  # floats, also ml_dtypes' (kind "V")
            g64, w64 = g.astype(np.float64), w.astype(np.float64)
            with np.errstate(invalid="ignore"):  # inf - inf
                diff = np.abs(g64 - w64)
            diff[np.isnan(g64) & np.isnan(w64)] = 0.0
            diff[(g64 == w64)] = 0.0  # equal infinities
            worst = max(worst, float(np.nan_to_num(diff, nan=np.inf).max()))
            good = np.allclose(g64, w64, rtol=rtol, atol=atol, equal_nan=True)
        else:
            if w.dtype.kind != "b":
                worst = max(worst, float(np.abs(g.astype(np.float64) - w.astype(np.float64)).max()))
            good = bool(np.array_equal(g, w))
        if not good and ok:
            ok, why = False, f"result {i} differs"
    return ok, worst, why


def median_ms(fn: Callable[..., Any], args: Sequence[Any], repeat: int) -> float:
    """Median wall time of ``fn(*args)`` in ms over ``repeat`` calls, after one warm-up call."""
    fn(*args)
    times = []
    for _ in range(max(repeat, 1)):
        start = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


# -- building ----------------------------------------------------------------------------------------------


@dataclass
class Built:
    """One program compiled for the GPU and for the CPU (``error`` if either build failed)."""

    name: str
    device: Any = None
    cpu: Executable | None = None
    kernels: int = 0
    error: str = ""


def _kernel_count(device: Any) -> int:
    return len(device.kernels) if hasattr(device, "kernels") else len(device.ptx)


def build_op(name: str, chip: str, target: str = "cuda") -> Built:
    """Op ``name``'s IR example for ``target`` (``cuda`` or ``webgpu``) and the CPU reference at opt_level 1."""
    try:
        program = example_program(name)
        device = relax_mlir.compile(program, target=target, chip=chip)
        cpu = relax_mlir.compile(program, opt_level=1)
    except Exception as e:  # noqa: BLE001  (recorded as a failed row)
        return Built(name, error=f"build: {type(e).__name__}: {_first_line(e)}")
    return Built(name, device, cpu, _kernel_count(device))


def build_block(chip: str, target: str = "cuda") -> Built:
    """The builder's transformer block for the GPU and the CPU (default opt_level)."""
    from relax_mlir.examples.models import transformer_block  # noqa: PLC0415

    try:
        device = relax_mlir.compile(transformer_block(**BLOCK), target=target, chip=chip)
        cpu = relax_mlir.compile(transformer_block(**BLOCK))
    except Exception as e:  # noqa: BLE001
        return Built("transformer_block", error=f"build: {type(e).__name__}: {_first_line(e)}")
    return Built("transformer_block", device, cpu, _kernel_count(device))


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0][:200] if text else ""


# -- running -----------------------------------------------------------------------------------------------


@dataclass
class Row:
    """One checked op or block shape: pass/fail per case, max error, GPU and CPU (or numpy) times."""

    name: str
    kernels: int = 0
    cases: dict[str, bool] = field(default_factory=dict)
    kernel_ms: dict[str, float] = field(default_factory=dict)  # webgpu: per kernel, one profiled call
    max_error: float = 0.0
    device_ms: float | None = None
    cpu_ms: float | None = None
    numpy_ms: float | None = None
    note: str = ""

    @property
    def passed(self) -> bool:
        return bool(self.cases) and all(self.cases.values())  # a failed build has no cases


def check_op(built: Built, repeat: int, seed: int = 0) -> Row:
    """Run ``built`` on the GPU and the CPU at every size in ``SIZES``; times are taken at the last size."""
    row = Row(built.name, built.kernels, note=built.error)
    if built.error:
        return row
    assert built.cpu is not None
    fn = built.cpu.functions["main"]
    rng = np.random.default_rng(seed)
    for size in SIZES:
        case = f"n={size}"
        try:
            args = make_inputs(fn, size, rng)
            ok, err, why = compare(built.device(*args), built.cpu(*args), OP_RTOL, OP_ATOL)
        except DeviceUnavailableError:
            raise
        except Exception as e:  # noqa: BLE001
            row.cases[case] = False
            row.note = f"error at {case}: {type(e).__name__}: {_first_line(e)}"
            continue
        row.cases[case] = ok
        row.max_error = max(row.max_error, err)
        if not ok and not row.note:
            row.note = f"{case}: {why}"
    if all(row.cases.values()):
        row.device_ms = median_ms(built.device, args, repeat)
        row.cpu_ms = median_ms(built.cpu, args, repeat)
    return row


def check_block(built: Built, repeat: int) -> list[Row]:
    """The transformer block on the GPU against the numpy reference at each of ``BLOCK_SHAPES``."""
    from relax_mlir.examples import reference  # noqa: PLC0415

    rows = []
    for b, s in BLOCK_SHAPES:
        row = Row(f"transformer_block b={b} s={s}", built.kernels, note=built.error)
        rows.append(row)
        if built.error:
            continue
        weights = reference.transformer_weights(BLOCK["d"], BLOCK["ff"], seed=b * 1000 + s)
        x = np.random.default_rng(s).standard_normal((b, s, BLOCK["d"])).astype(np.float32)
        args = [x, *weights.values()]
        try:
            want = reference.transformer_block(x, BLOCK["heads"], weights).astype(np.float32)
            ok, err, why = compare(built.device(*args), want, BLOCK_RTOL, BLOCK_ATOL)
        except DeviceUnavailableError:
            raise
        except Exception as e:  # noqa: BLE001
            row.cases["numpy"] = False
            row.note = f"error: {type(e).__name__}: {_first_line(e)}"
            continue
        row.cases["numpy"], row.max_error, row.note = ok, err, why
        row.device_ms = median_ms(built.device, args, repeat)
        row.cpu_ms = median_ms(built.cpu, args, repeat)
        row.numpy_ms = median_ms(
            reference.transformer_block, [x, BLOCK["heads"], weights], min(repeat, REFERENCE_REPEAT)
        )
        row.kernel_ms = kernel_times(built.device, args)
    return rows


def kernel_times(device: Any, args: Sequence[Any]) -> dict[str, float]:
    """Milliseconds per kernel of one call (webgpu executables; empty for others), slowest first."""
    if not hasattr(device, "kernels"):
        return {}
    from relax_mlir.targets import webgpu_runtime  # noqa: PLC0415

    with webgpu_runtime.device().profile() as timings:
        device(*args)
    totals = {key: 1e3 * sum(times) for key, times in timings.items()}
    return dict(sorted(totals.items(), key=lambda kv: -kv[1]))


# -- report ------------------------------------------------------------------------------------------------


def device_name(target: str = "cuda") -> str:
    """The GPU's name: the WebGPU adapter, or ``nvidia-smi``'s; ``unknown``."""
    if target == "webgpu":
        from relax_mlir.targets import webgpu_runtime  # noqa: PLC0415

        dev = webgpu_runtime.device()
        info = dev.adapter.info
        return f"{dev.summary}; {info.get('description', '')} (vendor {info.get('vendor', '?')}, {info.get('adapter_type', '?')})"
    tool = shutil.which("nvidia-smi")
    if tool is None:
        return "unknown (nvidia-smi not found)"
    try:
        done = subprocess.run(
            [tool, "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    names = [line.strip() for line in done.stdout.splitlines() if line.strip()]
    return ", ".join(names) if done.returncode == 0 and names else "unknown"


def cpu_model() -> str:
    """The host CPU's model name (lavapipe and the CPU reference both run on it)."""
    cpuinfo = Path("/proc/cpuinfo")
    for line in cpuinfo.read_text().splitlines() if cpuinfo.exists() else []:
        key, _, value = line.partition(":")
        if key.strip() == "model name":
            return value.strip()
    return platform.processor() or "unknown CPU"


def _ms(value: float | None) -> str:
    return "" if value is None else f"{value:.3f}"


def _cell(passed: bool | None) -> str:
    return "" if passed is None else ("pass" if passed else "**FAIL**")


def summary(ops: Sequence[Row], blocks: Sequence[Row]) -> str:
    """One line: how many ops and block shapes passed."""
    failed = [r.name for r in [*ops, *blocks] if not r.passed]
    text = f"{sum(r.passed for r in ops)}/{len(ops)} ops passed"
    if blocks:
        text += f", {sum(r.passed for r in blocks)}/{len(blocks)} transformer block shapes passed"
    return text + (f"; failed: {', '.join(failed)}" if failed else "; all passed")


def write_report(
    path: Path,
    chip: str,
    ops: Sequence[Row],
    blocks: Sequence[Row],
    argv: Sequence[str],
    target: str = "cuda",
) -> None:
    """The markdown report: device, chip, one row per op and per block shape, a summary line."""
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# GPU check",
        "",
        f"Generated by `python3 bench/gpu_check.py {' '.join(argv)}`".rstrip() + f" on {now}.",
        "",
        f"- target: {target}; device: {device_name(target)}",
        *([f"- chip: {chip}"] if target == "cuda" else []),
        f"- host: {platform.node()} ({platform.machine()}, {cpu_model()}), numpy {np.__version__}",
        f"- ops: every symbol = {' and '.join(map(str, SIZES))}; GPU vs CPU target (opt_level 1), "
        f"rtol {OP_RTOL}, atol {OP_ATOL} (exact for ints and bools); times at every symbol = {SIZES[-1]}",
        "- times: median ms of whole calls from Python after one warm-up",
        "",
        f"**{summary(ops, blocks)}**",
        "",
    ]
    if ops:
        cases = [f"n={s}" for s in SIZES]
        lines += [
            "| op | kernels | " + " | ".join(cases) + " | max abs error | GPU ms | CPU ms | note |",
            "| --- | ---: | " + " | ".join("---" for _ in cases) + " | ---: | ---: | ---: | --- |",
        ]
        for r in ops:
            verdicts = " | ".join(_cell(r.cases.get(c)) for c in cases)
            lines.append(
                f"| {r.name} | {r.kernels} | {verdicts} | {r.max_error:.3g} | {_ms(r.device_ms)} | "
                f"{_ms(r.cpu_ms)} | {r.note.replace('|', '/')} |"
            )
        lines.append("")
    if blocks:
        lines += [
            f"Transformer block (d={BLOCK['d']}, heads={BLOCK['heads']}, ff={BLOCK['ff']}) against "
            f"`examples.reference.transformer_block` (float64 numpy, timed at most {REFERENCE_REPEAT} times), "
            f"rtol {BLOCK_RTOL}, atol {BLOCK_ATOL}; CPU is the relax executable at the default opt_level.",
            "",
            "| shape | kernels | vs numpy | max abs error | GPU ms | CPU relax ms | numpy ms | note |",
            "| --- | ---: | --- | ---: | ---: | ---: | ---: | --- |",
        ]
        for r in blocks:
            lines.append(
                f"| {r.name} | {r.kernels} | {_cell(r.cases.get('numpy'))} | {r.max_error:.3g} | "
                f"{_ms(r.device_ms)} | {_ms(r.cpu_ms)} | {_ms(r.numpy_ms)} | {r.note.replace('|', '/')} |"
            )
        lines.append("")
        for r in blocks:
            if r.kernel_ms:
                lines += [f"Kernels of {r.name} (one profiled call; each dispatch waits for the queue):", ""]
                lines += ["| kernel | ms |", "| --- | ---: |"]
                lines += [f"| {k} | {ms:.3f} |" for k, ms in r.kernel_ms.items()]
                lines.append("")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines))


# -- main --------------------------------------------------------------------------------------------------


def _parse(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--target", choices=("cuda", "webgpu"), default="cuda", help="GPU target (default cuda)"
    )
    parser.add_argument("--chip", default="sm_80", help="CUDA chip to build for (default sm_80)")
    parser.add_argument("--ops", help="comma-separated ops to check (default: every op)")
    parser.add_argument("--no-block", action="store_true", help="skip the transformer block")
    parser.add_argument("--repeat", type=int, default=20, help="timed calls per measurement (default 20)")
    parser.add_argument("--out", type=Path, default=HERE / "GPU_CHECK.md", help="report file")
    args = parser.parse_args(argv)
    try:
        check_chip(args.chip)
    except RelaxError as e:
        parser.error(str(e))
    standalone = sorted(set(OPS) - NOT_STANDALONE)
    if args.ops is None:
        args.ops = standalone
        return args
    args.ops = [op.strip() for op in args.ops.split(",") if op.strip()]
    unknown = [op for op in args.ops if op not in standalone]
    if unknown:
        parser.error(f"not a standalone op: {', '.join(unknown)} (ops: {', '.join(standalone)})")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = _parse(argv)
    start = time.perf_counter()
    built = [build_op(op, args.chip, args.target) for op in args.ops]
    block = None if args.no_block else build_block(args.chip, args.target)
    programs = [b for b in [*built, *([block] if block else [])] if not b.error]
    print(
        f"built {len(programs)} programs ({sum(b.kernels for b in programs)} kernels) for "
        f"{args.chip if args.target == 'cuda' else args.target} "
        f"in {time.perf_counter() - start:.1f} s",
        flush=True,
    )
    for b in [*built, *([block] if block else [])]:
        if b.error:
            print(f"{b.name}: {b.error}", flush=True)
    try:
        if programs:  # the first load finds out whether there is a GPU
            programs[0].device.load()
        elif args.target == "cuda":
            load_cuda_runtime()
        print(f"device: {device_name(args.target)}", flush=True)
        op_rows = []
        for b in built:
            row = check_op(b, args.repeat)
            op_rows.append(row)
            status = "ok" if row.passed else f"FAIL ({row.note})"
            print(
                f"{b.name}: {status}, max error {row.max_error:.3g}, GPU {_ms(row.device_ms)} ms, "
                f"CPU {_ms(row.cpu_ms)} ms",
                flush=True,
            )
        block_rows = check_block(block, args.repeat) if block else []
        for row in block_rows:
            status = "ok" if row.passed else f"FAIL ({row.note})"
            print(
                f"{row.name}: {status}, max error {row.max_error:.3g}, GPU {_ms(row.device_ms)} ms, "
                f"CPU {_ms(row.cpu_ms)} ms, numpy {_ms(row.numpy_ms)} ms",
                flush=True,
            )
    except DeviceUnavailableError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    write_report(args.out, args.chip, op_rows, block_rows, argv, args.target)
    line = summary(op_rows, block_rows)
    print(f"{line}\nwrote {args.out}")
    return 0 if all(r.passed for r in [*op_rows, *block_rows]) else 1


if __name__ == "__main__":
    sys.exit(main())
