"""ONNX conformance: run ONNX's own node test cases and light models through relax_mlir.

    python3 bench/onnx_conformance.py                 # every case, writes bench/ONNX_CONFORMANCE.md
    python3 bench/onnx_conformance.py -k 'test_add'   # cases whose name matches a regex, no report
    python3 bench/onnx_conformance.py --like-for-like # never pass constants= (no secondary figure)

Each case is imported (``from_onnx``), compiled (``relax_mlir.compile``) and run on the case's inputs;
outputs must match the expected ones in shape and dtype, floats within rtol 1e-3 / atol 1e-5 (NaN
matches NaN), everything else exactly. The headline figure is like for like with ONNX Runtime: every graph
input is a run-time input. Without ``--like-for-like``, a case that fails only because an input decides a
rank or an attribute is retried with that input fixed to the case's value (``from_onnx(..., constants=)``):
that gives the secondary figure. Cases run in worker processes with a time limit, so a crash
or a hang is a recorded failure, never the end of the run.
"""

from __future__ import annotations

import argparse
import collections
import importlib.metadata
import multiprocessing as mp
import os
import platform
import re
import sys
import tempfile
import time
import traceback
import warnings
from pathlib import Path

import numpy as np

RTOL, ATOL = 1e-3, 1e-5
REPORT = Path(__file__).with_name("ONNX_CONFORMANCE.md")


def _node_cases() -> list[tuple[str, object]]:
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [(c.name, c) for c in collect_testcases(None)]


def _light_models() -> list[Path]:
    import onnx

    return sorted((Path(onnx.__file__).parent / "backend/test/data/light").glob("*.onnx"))


def _light_data(path: Path) -> tuple[object, list[list[np.ndarray]]]:
    import onnx
    from onnx.backend.test.runner import Runner

    model = onnx.load(str(path))
    inits = {t.name for t in model.graph.initializer}
    inputs = [Runner.generate_dummy_data(x) for x in model.graph.input if x.name not in inits]
    outputs = []
    for i in range(len(model.graph.output)):
        t = onnx.TensorProto()
        t.ParseFromString(path.with_name(f"{path.stem}_output_{i}.pb").read_bytes())
        outputs.append(onnx.numpy_helper.to_array(t))
    return model, [(inputs, outputs)]


def compare(got: object, want: np.ndarray | list, rtol: float = RTOL, atol: float = ATOL) -> str | None:
    """None when ``got`` matches ``want`` (sequences item by item), else what differs."""
    if isinstance(want, list):
        if not isinstance(got, (tuple, list)) or len(got) != len(want):
            return f"{type(got).__name__} of {len(got) if isinstance(got, (tuple, list)) else 1}, expected a sequence of {len(want)}"
        problems = [(i, compare(g, w, rtol, atol)) for i, (g, w) in enumerate(zip(got, want))]
        return next((f"item #{i}: {p}" for i, p in problems if p), None)
    got = np.asarray(got)
    if got.shape != want.shape:
        return f"shape {got.shape}, expected {want.shape}"
    if got.dtype != want.dtype:
        return f"dtype {got.dtype}, expected {want.dtype}"
    if want.dtype.kind == "f" or want.dtype.name.startswith(("bfloat16", "float8", "float4")):  # ml_dtypes
        ok = np.isclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True)
    else:
        ok = got == want
    if ok.all():
        return None
    bad = int((~ok).sum())
    return f"{bad} of {want.size} elements differ (first: got {got[~ok][0]!r}, expected {want[~ok][0]!r})"


def run_case(kind: str, name: str, opt_level: int, like_for_like: bool = False) -> tuple[str, str]:
    """('pass' | 'fail', reason) for one case; a pass that needed ``constants=`` says "fixed inputs: ..."."""
    import relax_mlir
    from relax_mlir.frontend.onnx import from_onnx

    if kind == "node":
        case = dict(_node_cases())[name] if name not in _CASES else _CASES[name]
        model, data_sets, rtol, atol = case.model, case.data_sets, max(case.rtol, RTOL), max(case.atol, ATOL)
    else:
        model, data_sets = _light_data(Path(name))
        rtol, atol = RTOL, ATOL
    from relax_mlir.frontend.onnx import OnnxImportError

    stage = "import"
    fixed: dict[str, np.ndarray] = {}
    try:
        data_sets = [([_array(x) for x in ins], [_array(x) for x in outs]) for ins, outs in data_sets]
        while True:  # inputs that decide ranks (axes...) are fixed to the case's values, as noted
            try:
                module = from_onnx(model, constants=fixed)
                break
            except OnnxImportError as e:
                if like_for_like or e.constant_input is None or len(data_sets) != 1:
                    raise
                names = _input_names(model)
                fixed[e.constant_input] = data_sets[0][0][names.index(e.constant_input)]
        stage = "compile"
        exe = relax_mlir.compile(module, opt_level=opt_level)
        stage = "run"
        names = _input_names(model)
        for inputs, expected in data_sets:
            result = exe(*[x for n, x in zip(names, inputs) if n not in fixed])
            results = [result] if len(model.graph.output) == 1 else list(result)  # a sequence is a tuple
            if len(results) != len(expected):
                return "fail", f"run: {len(results)} outputs, expected {len(expected)}"
            for j, (got, want) in enumerate(zip(results, expected)):
                problem = compare(got, want if isinstance(want, list) else np.asarray(want), rtol, atol)
                if problem:
                    return "fail", f"mismatch: output #{j}: {problem}"
    except Exception as e:  # every failure is recorded with its reason
        first = " ".join(str(e).split()) or type(e).__name__
        if not isinstance(e, relax_mlir.errors.RelaxError):
            first = f"{type(e).__name__}: {first} [{traceback.extract_tb(e.__traceback__)[-1].name}]"
        return "fail", f"{stage}: {first}"
    return "pass", f"fixed inputs: {', '.join(fixed)}" if fixed else ""


def _input_names(model: object) -> list[str]:
    inits = {t.name for t in model.graph.initializer}
    return [vi.name for vi in model.graph.input if vi.name not in inits]


def _array(x: object) -> np.ndarray | list:
    import onnx

    if isinstance(x, list):  # a sequence
        return [_array(i) for i in x]
    return onnx.numpy_helper.to_array(x) if isinstance(x, onnx.TensorProto) else np.asarray(x)


_CASES: dict[str, object] = {}


def _worker_init(names: list[str]) -> None:
    warnings.simplefilter("ignore")
    wanted = set(names)
    _CASES.update((n, c) for n, c in _node_cases() if n in wanted)


def _classify(reason: str) -> str:
    """A short failure category for the summary table."""
    m = re.match(r"(import|compile|run|mismatch|crash|timeout)", reason)
    stage = m.group(1) if m else "other"
    if "unsupported ONNX op" in reason:
        return "import: unsupported op"
    if "element type" in reason and "not supported" in reason:
        return "import: unsupported element type"
    if "is a sequence_type" in reason or "is a optional_type" in reason:
        return "import: sequence/optional values"
    return stage


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("-k", "--filter", help="only cases whose name matches this regex (no report)")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per case")
    parser.add_argument("--opt-level", type=int, default=1)
    parser.add_argument("--report", type=Path, default=REPORT)
    parser.add_argument(
        "--like-for-like", action="store_true", help="never fix an input with constants= (no retry)"
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="print every case")
    args = parser.parse_args(argv)

    os.environ.setdefault(
        "RELAX_MLIR_CACHE", str(Path(tempfile.gettempdir()) / "relax_mlir_conformance_cache")
    )
    cases = [("node", n) for n, _ in _node_cases()] + [("light", str(p)) for p in _light_models()]
    if args.filter:
        cases = [c for c in cases if re.search(args.filter, Path(c[1]).stem if c[0] == "light" else c[1])]
    start = time.time()
    results: dict[tuple[str, str], tuple[str, str]] = {}
    ctx = mp.get_context("spawn")
    node_names = [n for k, n in cases if k == "node"]
    pending = list(cases)
    while pending:  # a crashed worker loses its pool: restart with the cases not yet run
        with ctx.Pool(
            args.jobs, initializer=_worker_init, initargs=(node_names,), maxtasksperchild=100
        ) as pool:
            futures = [
                (c, pool.apply_async(run_case, (*c, args.opt_level, args.like_for_like))) for c in pending
            ]
            pending = []
            broken = False
            for case, fut in futures:
                if broken:
                    pending.append(case)
                    continue
                try:
                    results[case] = fut.get(timeout=args.timeout)
                except mp.TimeoutError:
                    results[case] = (
                        "fail",
                        f"timeout: more than {args.timeout:.0f} s (or the worker crashed)",
                    )
                    broken = True  # the pool may hold a dead or stuck worker: start a fresh one
                if args.verbose or results.get(case, ("pass",))[0] != "pass":
                    status, reason = results[case]
                    print(
                        f"{status:4} {Path(case[1]).stem if case[0] == 'light' else case[1]}  {reason}",
                        flush=True,
                    )
            if broken:
                pool.terminate()
    elapsed = time.time() - start
    _summarize(cases, results, elapsed, None if args.filter else args.report, args.like_for_like)
    return 0


def _summarize(
    cases: list, results: dict, elapsed: float, report: Path | None, like_for_like: bool = False
) -> None:
    node = [c for c in cases if c[0] == "node"]
    light = [c for c in cases if c[0] == "light"]
    n = max(len(node), 1)
    fixed = [c for c in node if results[c][0] == "pass" and results[c][1].startswith("fixed")]
    passed = [c for c in node if results[c][0] == "pass" and c not in fixed]  # like for like
    passed_light = sum(results[c][0] == "pass" for c in light)
    rate, rate_fixed = 100.0 * len(passed) / n, 100.0 * (len(passed) + len(fixed)) / n
    secondary = (
        "not measured (--like-for-like)"
        if like_for_like
        else f"{len(passed) + len(fixed)} ({rate_fixed:.1f}%)"
    )
    print(
        f"node cases like for like: {len(passed)}/{len(node)} passed ({rate:.1f}%); with constants=: {secondary}"
    )
    print(f"light models: {passed_light}/{len(light)}; elapsed: {elapsed:.0f} s")
    if report is None:
        return
    import onnx

    def kind(c: tuple[str, str]) -> str:
        return "needs constants= (passes with them)" if c in fixed else _classify(results[c][1])

    categories = collections.Counter(kind(c) for c in node if c not in passed)
    command = "python3 bench/onnx_conformance.py" + (" --like-for-like" if like_for_like else "")
    lines = [
        "# ONNX conformance report",
        "",
        f"Generated by `{command}` with relax_mlir {importlib.metadata.version('relax_mlir')}, "
        f"onnx {onnx.__version__}, Python {platform.python_version()} on {platform.machine()}, "
        f"in {elapsed / 60:.1f} min.",
        "",
        "Node test cases: `onnx.backend.test.case.node.collect_testcases`. *Like for like* feeds every graph "
        "input at run time, as ONNX Runtime does; *with constants=* also counts the cases that pass only when "
        "an input deciding a rank or an attribute (`axes`, `pads`, `scales`...) is fixed to the case's value "
        "with `from_onnx(..., constants=...)`.",
        "",
        "| | like for like (headline) | with constants= |",
        "| --- | --- | --- |",
        f"| node cases passed | **{len(passed)} / {len(node)} ({rate:.1f}%)** | {secondary} |",
        "| ONNX Runtime 1.31, same cases | 81.7% | |",
        "| TVM 0.27, same cases | 43.9% | |",
        "",
        f"- **Light models** (`onnx/backend/test/data/light`): **{passed_light} / {len(light)}** match their "
        "expected outputs.",
        f"- Tolerances: rtol {RTOL}, atol {ATOL} (or the case's own, if looser); shapes and dtypes must match.",
        "",
        "## Failures by kind (like for like)",
        "",
        "| kind | cases |",
        "| --- | --- |",
    ]
    lines += [f"| {k} | {v} |" for k, v in categories.most_common()]
    lines += ["", "## Light models", "", "| model | result |", "| --- | --- |"]
    for c in light:
        status, reason = results[c]
        lines.append(f"| {Path(c[1]).stem} | {status}{': ' + _cell(reason) if reason else ''} |")
    if fixed:
        lines += [
            "",
            "## Cases that pass only with constants=",
            "",
            "| case | fixed inputs |",
            "| --- | --- |",
        ]
        lines += [f"| {c[1]} | {_cell(results[c][1].removeprefix('fixed inputs: '))} |" for c in fixed]
    lines += ["", "## Every failing node case", "", "| case | reason |", "| --- | --- |"]
    for c in node:
        status, reason = results[c]
        if status != "pass":
            lines.append(f"| {c[1]} | {_cell(reason)} |")
    report.write_text("\n".join(lines) + "\n")
    print(f"wrote {report}")


def _cell(text: str) -> str:
    text = text.replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= 300 else text[:297] + "..."


if __name__ == "__main__":
    sys.exit(main())
