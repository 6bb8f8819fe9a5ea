"""LLVM compiles a module in parts on threads (``codegen.object_parts``): the parts link into one program."""

from __future__ import annotations

import ctypes
import json
import os
from pathlib import Path

import numpy as np
import pytest
from mlir import ir

import relax_mlir.builder as rb
from relax_mlir.context import make_context
from relax_mlir.dialects import relax as R
from relax_mlir.runtime.loader import LoadedObject
from relax_mlir.targets import codegen, compile

# @twice is external and calls the internal @helper; @entry calls @twice (in another part, maybe) and
# reads @counter (an external global) and @table (a private constant)
LLVM_DIALECT = """
llvm.mlir.global external @counter(5 : i64) {addr_space = 0 : i32} : i64
llvm.mlir.global private constant @table(dense<[10, 20]> : tensor<2xi64>) {addr_space = 0 : i32} : !llvm.array<2 x i64>
llvm.func internal @helper(%x: i64) -> i64 {
  %0 = llvm.add %x, %x : i64
  llvm.return %0 : i64
}
llvm.func @twice(%x: i64) -> i64 {
  %0 = llvm.call @helper(%x) : (i64) -> i64
  llvm.return %0 : i64
}
llvm.func @entry(%x: i64) -> i64 {
  %0 = llvm.call @twice(%x) : (i64) -> i64
  %p = llvm.mlir.addressof @counter : !llvm.ptr
  %c = llvm.load %p : !llvm.ptr -> i64
  %t = llvm.mlir.addressof @table : !llvm.ptr
  %q = llvm.getelementptr %t[0, 1] : (!llvm.ptr) -> !llvm.ptr, !llvm.array<2 x i64>
  %v = llvm.load %q : !llvm.ptr -> i64
  %1 = llvm.add %0, %c : i64
  %2 = llvm.add %1, %v : i64
  llvm.return %2 : i64
}
"""


def _parts(opt_level: int) -> list[bytes]:
    with make_context():
        return codegen.object_parts(ir.Module.parse(LLVM_DIALECT), opt_level)


@pytest.mark.parametrize("opt_level", [0, 2])
def test_parts_link_into_one_program(opt_level: int) -> None:
    parts = _parts(opt_level)
    assert len(parts) == 2
    loaded = LoadedObject(parts)
    entry = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64)(loaded.address("entry"))
    assert entry(7) == 2 * 7 + 5 + 20
    ctypes.c_int64.from_address(loaded.global_address("counter")).value = 100  # one @counter, shared
    assert entry(0) == 100 + 20


def test_split_keeps_internal_functions_with_their_user_and_defines_globals_once() -> None:
    from mlir.dialects.llvm import translate_module_to_llvmir

    with make_context():
        text = str(translate_module_to_llvmir(ir.Module.parse(LLVM_DIALECT).operation))
    first, second = codegen.split_module(text, 2)
    defines = [[line for line in p.splitlines() if line.startswith("define")] for p in (first, second)]
    assert sorted(len(d) for d in defines) == [1, 2]  # @entry alone; @twice with its @helper
    assert sum("@helper(" in line for d in defines for line in d) == 1
    assert sorted(p.count("@counter = global i64 5") for p in (first, second)) == [0, 1]
    assert sorted(p.count("@counter = external global i64") for p in (first, second)) == [0, 1]
    assert all("@table = private" in p for p in (first, second))
    assert codegen.split_module(text, 1) == [text]


def test_a_compiled_model_is_stored_in_parts_and_runs_from_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RELAX_MLIR_CACHE", str(tmp_path))
    w = np.random.default_rng(0).standard_normal((64, 48)).astype(np.float32)
    bb = rb.BlockBuilder()
    with bb.function("main", {"x": rb.tensor(["n", 64])}) as (x,):
        with bb.dataflow():
            out = bb.emit_output(R.tanh(R.matmul(x, R.constant(w))))
        bb.ret(out)
    cold = compile(bb.module, opt_level=2)
    warm = compile(bb.module, opt_level=2)
    assert not cold.stats.cache_hit and warm.stats.cache_hit
    metas = [json.loads(p.read_text()) for p in tmp_path.glob("*.json")]
    assert any(len(m.get("parts", [])) >= 2 for m in metas)
    for n in (0, 1, 5, 300):
        x = np.random.default_rng(n).standard_normal((n, 64)).astype(np.float32)
        for exe in (cold, warm):
            np.testing.assert_allclose(exe(x), np.tanh(x.astype(np.float64) @ w), rtol=1e-4, atol=1e-4)


def test_damaged_part_sizes_are_a_cache_miss(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from relax_mlir.runtime import cache

    monkeypatch.setenv("RELAX_MLIR_CACHE", str(tmp_path))
    bb = rb.BlockBuilder()
    with bb.function("main", {"x": rb.tensor(["n", 8])}) as (x,):
        with bb.dataflow():
            out = bb.emit_output(R.exp(x))
        bb.ret(out)
    compile(bb.module, opt_level=1)
    (meta_path,) = [p for p in tmp_path.glob("*.json") if "parts" in json.loads(p.read_text())]
    meta = json.loads(meta_path.read_text())
    meta.pop("checksum")
    meta["parts"] = [meta["parts"][0] + 1, *meta["parts"][1:]]
    meta_path.write_bytes(cache._sealed(meta))
    with pytest.warns(cache.CacheWarning, match="malformed object parts"):
        exe = compile(bb.module, opt_level=1)
    assert not exe.stats.cache_hit
    x = np.linspace(-1, 1, 16, dtype=np.float32).reshape(2, 8)
    np.testing.assert_allclose(exe(x), np.exp(x), rtol=1e-6)
    assert os.path.exists(meta_path)


def _branchy(functions: int, branches: int) -> str:
    """LLVM dialect: ``functions`` functions @f<i>(x) adding x once per taken branch (x > 0), each with
    ``branches`` conditional branches (what ``codegen._cost`` weighs most)."""
    out = []
    for i in range(functions):
        body = [
            "  %z = llvm.mlir.constant(0 : i64) : i64",
            '  %c = llvm.icmp "sgt" %x, %z : i64',
            "  llvm.br ^b0(%x : i64)",
        ]
        for b in range(branches):
            body += [
                f"^b{b}(%v{b}: i64):",
                f"  %w{b} = llvm.add %v{b}, %x : i64",
                f"  llvm.cond_br %c, ^b{b + 1}(%w{b} : i64), ^b{b + 1}(%v{b} : i64)",
            ]
        body += [f"^b{branches}(%r: i64):", "  llvm.return %r : i64"]
        out.append(f"llvm.func @f{i}(%x: i64) -> i64 {{\n" + "\n".join(body) + "\n}")
    return "\n".join(out)


@pytest.mark.parametrize(("functions", "branches", "expected"), [(10, 40, 8), (3, 1, 2)])
def test_large_modules_compile_in_more_parts_than_threads(
    functions: int, branches: int, expected: int
) -> None:
    """A module worth it is split into ``PARTS`` parts (threads take the next one as they finish), a small
    one into two; either way the parts link into one program."""
    with make_context():
        parts = codegen.object_parts(ir.Module.parse(_branchy(functions, branches)), 2)
    assert len(parts) == expected
    loaded = LoadedObject(parts)
    for i in range(functions):
        f = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64)(loaded.address(f"f{i}"))
        assert f(5) == 5 * (branches + 1)
        assert f(-1) == -1
