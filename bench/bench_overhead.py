"""Per-call Python overhead of compiled functions: a call minus the native code it runs.

Run: ``python bench/bench_overhead.py [--calls N] [--repeats R]``. Tiny models (``relu`` of an ``[n]``
tensor, a 1x1 matmul, a 3-input add with symbolic dims, and a function with an expression dim, upper
bounds and a shape parameter) are compiled at ``opt_level=3``. For each model the bench times

- ``call``: ``exe(*arrays)``, the full Python call path (checks, descriptors, outputs, status);
- ``native``: the same native function called straight through ctypes with descriptors built once
  before the loop (the kernels plus one ctypes call; nothing the runtime could avoid);

and prints ``overhead = call - native`` in microseconds. Times are medians over ``--repeats`` batches
of ``--calls`` calls each, after a warm-up batch (the machine is shared, so medians, not means).
"""

from __future__ import annotations

import argparse
import ctypes
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy loads OpenBLAS

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import relax_mlir.builder as rb  # noqa: E402
from relax_mlir.dialects import relax as R  # noqa: E402
from relax_mlir.runtime.executable import Function, descriptor_type  # noqa: E402
from relax_mlir.targets import compile  # noqa: E402

TARGET_US = 20.0


def _module(params: dict[str, Any], body: Callable[..., Any], bounds: dict[str, int] | None = None) -> Any:
    bb = rb.BlockBuilder()
    with bb.function("main", params, upper_bounds=bounds) as args:
        bb.ret(body(*args))
    return bb.module


def models() -> list[tuple[str, Any, list[Any]]]:
    """(label, module, arguments) of each tiny model."""
    f32 = np.float32
    return [
        ("relu [n], n=16", _module({"x": rb.tensor(["n"])}, R.relu), [np.ones(16, f32)]),
        (
            "matmul 1x1 @ 1x1 (m, k, n symbolic)",
            _module({"a": rb.tensor(["m", "k"]), "b": rb.tensor(["k", "n"])}, R.matmul),
            [np.ones((1, 1), f32), np.ones((1, 1), f32)],
        ),
        (
            "add3 [n, m] + [n, m] + [m], 2x3",
            _module(
                {"x": rb.tensor(["n", "m"]), "y": rb.tensor(["n", "m"]), "z": rb.tensor(["m"])},
                lambda x, y, z: R.add(R.add(x, y), z),
            ),
            [np.ones((2, 3), f32), np.ones((2, 3), f32), np.ones(3, f32)],
        ),
        (
            "checks [b, s] + [s], w: [2 * s], shape (b, s), bounds",
            _module(
                {
                    "x": rb.tensor(["b", "s"]),
                    "y": rb.tensor(["s"]),
                    "w": rb.tensor(["2 * s"]),
                    "p": rb.shape(["b", "s"]),
                },
                lambda x, y, w, p: R.add(x, y),
                {"b": 16, "s": 64},
            ),
            [np.ones((2, 3), f32), np.ones(3, f32), np.ones(6, f32), (2, 3)],
        ),
    ]


def native_call(fn: Function, args: list[Any]) -> Callable[[], None]:
    """A zero-argument call of ``fn``'s native code with every descriptor built in advance."""
    keep: list[Any] = []

    def describe(a: np.ndarray) -> Any:
        d = descriptor_type(a.ndim)()
        d.allocated = d.aligned = a.ctypes.data
        d.offset = 0
        if a.ndim:
            d.sizes[:] = a.shape
            d.strides[:] = [s // a.itemsize for s in a.strides]
        keep.append((a, d))
        return ctypes.byref(d)

    outputs = fn(*args)
    outputs = list(outputs) if isinstance(outputs, tuple) else [outputs]
    c_args: list[Any] = []
    for spec, a in zip(fn.inputs, args):
        if spec.kind == "tensor":
            c_args.append(describe(a))
        elif spec.kind == "prim":
            c_args.append(int(a))
        else:
            c_args.extend(int(v) for v in a)
    assert all(kind != "returned" for kind, _ in fn.outputs), "no data-dependent outputs here"
    for (kind, _), out in zip(fn.outputs, outputs):
        assert kind == "tensor", kind
        c_args.append(describe(np.empty_like(out)))
    c_args.append(describe(np.zeros(4, np.int64)))
    native = fn._fn  # the CFUNCTYPE of _mlir_ciface_<name>

    def call(keep: list[Any] = keep) -> None:  # ``keep`` holds the arrays the descriptors point to
        native(*c_args)

    return call


def per_call(call: Callable[[], Any], calls: int, repeats: int) -> float:
    """Median over ``repeats`` batches of the mean time of one call in a batch of ``calls``, in us."""
    for _ in range(calls):
        call()
    batches = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        batches.append((time.perf_counter() - start) / calls)
    return statistics.median(batches) * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=15)
    opts = parser.parse_args()
    print(f"{'model':<55} {'call us':>8} {'native us':>10} {'overhead us':>12}")
    worst = 0.0
    for label, module, args in models():
        exe = compile(module, opt_level=3)
        fn = exe.functions["main"]
        native = native_call(fn, args)
        full = per_call(lambda exe=exe, args=args: exe(*args), opts.calls, opts.repeats)
        raw = per_call(native, opts.calls, opts.repeats)
        worst = max(worst, full - raw)
        print(f"{label:<55} {full:8.2f} {raw:10.2f} {full - raw:12.2f}")
    print(f"worst overhead {worst:.2f} us (target <= {TARGET_US:.0f} us)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
