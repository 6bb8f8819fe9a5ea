"""A process that compiles many modules stays flat, and a dropped executable frees its code and context."""

from __future__ import annotations

import gc
import os
import weakref
from pathlib import Path

import numpy as np
from isolated import run_isolated
from mlir import ir

from relax_mlir import compile


def small_module(i: int) -> str:
    """A tiny module that differs from every other ``i`` (so no two compiles share a cache entry)."""
    t = f'!relax.tensor<["n", {i + 1}], f32>'
    return f"""
func.func @main(%x: {t}) -> {t} {{
  %0 = "relax.exp"(%x) : ({t}) -> {t}
  return %0 : {t}
}}
"""


GROWTH = """
import gc, os, sys
import numpy as np
from relax_mlir import compile
sys.path.insert(0, {here!r})
from test_memory import small_module

def rss_kib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1024

def growth(use_cache, first, count):
    for i in range(first, first + count):
        exe = compile(small_module(i), opt_level=0, use_cache=use_cache)
        assert exe(np.ones((2, i + 1), np.float32)).shape == (2, i + 1)
        del exe
        gc.collect()
        if i == first + {warm} - 1:
            start = rss_kib()
    return (rss_kib() - start) / (count - {warm})

print(growth(False, 0, {count}), growth(True, 0, {count}))
"""


def test_compiling_distinct_modules_does_not_grow_memory(tmp_path: Path) -> None:
    """Each compile made a context whose types a process-wide cache kept alive: 2.4 MiB per compile."""
    here = str(Path(__file__).parent)
    env = {**os.environ, "RELAX_MLIR_CACHE": str(tmp_path)}
    out = run_isolated(GROWTH.format(here=here, warm=10, count=50), env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    compiled, loaded = (float(x) for x in out.last_line.split())
    assert compiled <= 100, f"RSS grew by {compiled:.0f} KiB per compile (bound 100 KiB)"
    assert loaded <= 100, f"RSS grew by {loaded:.0f} KiB per load from the compile cache (bound 100 KiB)"


def test_a_dropped_executable_frees_its_code_and_context() -> None:
    gc.collect()
    contexts = ir.Context._get_live_count()
    exe = compile(small_module(1000), opt_level=0, use_cache=False)
    x = np.ones((3, 1001), np.float32)
    np.testing.assert_allclose(exe(x), np.exp(x), rtol=1e-6)
    loaded = exe.functions["main"]._loaded
    alive = [weakref.ref(loaded), weakref.ref(loaded._engine)]
    del exe, loaded
    gc.collect()
    assert [r() for r in alive] == [None, None], "the executable's JIT engine outlived it"
    assert ir.Context._get_live_count() == contexts, "the compile's MLIR context outlived it"
