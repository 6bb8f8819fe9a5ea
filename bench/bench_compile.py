"""Compile time of the builder's transformer block: cold (empty cache) against warm (object cache hit).

Run: ``python bench/bench_compile.py``. Uses a fresh temporary cache directory.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from relax_mlir.examples.models import small_cnn, transformer_block  # noqa: E402
from relax_mlir.runtime.compiler import compile  # noqa: E402


def main() -> int:
    with tempfile.TemporaryDirectory() as cache:
        os.environ["RELAX_MLIR_CACHE"] = cache
        print(f"{'model':>20} {'cold (s)':>9} {'warm (s)':>9} {'speed-up':>9}")
        worst = float("inf")
        for name, build in (("transformer block", transformer_block), ("small CNN", small_cnn)):
            module = build()
            t = time.perf_counter()
            exe = compile(module)
            cold = time.perf_counter() - t
            assert not exe.stats.cache_hit
            t = time.perf_counter()
            exe = compile(module)
            warm = time.perf_counter() - t
            assert exe.stats.cache_hit
            print(f"{name:>20} {cold:>9.2f} {warm:>9.3f} {cold / warm:>8.1f}x")
            worst = min(worst, cold / warm)
    return 0 if worst >= 10 else 1


if __name__ == "__main__":
    sys.exit(main())
