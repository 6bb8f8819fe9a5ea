"""The compile cache: a hit skips every pass, anything that changes the code misses, damage recompiles."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from mlir import ir

import relax_mlir.builder as rb
from relax_mlir.context import make_context
from relax_mlir.dialects import relax as R
from relax_mlir.dialects.resources import resource_blobs
from relax_mlir.errors import CacheWarning
from relax_mlir.runtime import cache
from relax_mlir.runtime.weights import externalize
from relax_mlir.targets import compile

K, N = 128, 160  # the weight is 80 KiB: a dense_resource blob


def weights(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((K, N)).astype(np.float32), rng.standard_normal(N).astype(np.float32)


def build(seed: int = 0, activation: str = "tanh") -> ir.Module:
    """``activation(x @ w + b)`` with ``x: [n, K]`` and constant ``w``, ``b``."""
    w, b = weights(seed)
    bb = rb.BlockBuilder()
    with bb.function("main", {"x": rb.tensor(["n", K])}, upper_bounds={"n": 4096}) as (x,):
        with bb.dataflow():
            y = getattr(R, activation)(R.add(R.matmul(x, R.constant(w)), R.constant(b)))
            out = bb.emit_output(y)
        bb.ret(out)
    return bb.module


def expected(x: np.ndarray, seed: int = 0, activation: str = "tanh") -> np.ndarray:
    w, b = weights(seed)
    return getattr(np, activation)(x.astype(np.float64) @ w + b)


def check(exe, seed: int = 0, activation: str = "tanh") -> None:
    for n in (1, 7, 300):
        x = np.random.default_rng(n).standard_normal((n, K)).astype(np.float32)
        np.testing.assert_allclose(exe(x), expected(x, seed, activation), rtol=1e-4, atol=1e-4)


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RELAX_MLIR_CACHE", str(tmp_path))
    return tmp_path


def main_entry(directory: Path) -> Path:
    """The object of the entry holding ``@main`` (passes may compile helpers of their own)."""
    (obj,) = [
        o
        for o in directory.glob("*.o")
        if "main" in json.loads(o.with_suffix(".json").read_text())["signatures"]
    ]
    return obj


def test_hit_skips_every_pass_and_computes_the_same() -> None:
    cold = compile(build(), opt_level=1)
    assert not cold.stats.cache_hit
    assert {"relax to host", "to llvm", "llvm codegen"} <= set(cold.stats.stages)
    warm = compile(build(), opt_level=1)
    assert warm.stats.cache_hit
    assert "relax to host" not in warm.stats.stages and "llvm codegen" not in warm.stats.stages
    check(cold)
    check(warm)


def test_hit_in_a_new_process(private_cache: Path) -> None:
    compile(build(), opt_level=1)
    here = Path(__file__).parent
    code = (
        f"import sys; sys.path.insert(0, {str(here)!r}); import test_compile_cache as t; "
        "from relax_mlir import compile; from relax_mlir.runtime import cache; "
        "exe = compile(t.build(), opt_level=1); t.check(exe); "
        "print(cache._toolchain(), exe.stats.cache_hit, sorted(exe.stats.stages))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=os.environ
    )
    toolchain, result = out.stdout.strip().splitlines()[-1].split(" ", 1)
    if toolchain != cache._toolchain():
        pytest.skip("relax_mlir's sources changed while the test ran (a miss is then right)")
    assert result == "True ['cache key', 'load', 'total']"


def test_text_input_hits_too() -> None:
    text = str(build())
    assert not compile(text, opt_level=1).stats.cache_hit
    exe = compile(text, opt_level=1)
    assert exe.stats.cache_hit
    check(exe)


@pytest.mark.parametrize(
    "change",
    ["weights", "ir", "opt level", "pipeline", "codegen env"],
)
def test_a_change_misses(private_cache: Path, monkeypatch: pytest.MonkeyPatch, change: str) -> None:
    compile(build(), opt_level=1)
    seed, activation, opt_level, pipeline = 0, "tanh", 1, None
    if change == "weights":
        seed = 1
    elif change == "ir":
        activation = "exp"
    elif change == "opt level":
        opt_level = 2
    elif change == "pipeline":
        pipeline = "relax-O0"
    else:
        monkeypatch.setenv("RELAX_MLIR_SOMETHING_NEW", "1")
    exe = compile(build(seed, activation), opt_level=opt_level, pipeline=pipeline)
    assert not exe.stats.cache_hit
    check(exe, seed, activation)


def test_run_time_env_still_hits(monkeypatch: pytest.MonkeyPatch) -> None:
    compile(build(), opt_level=1)
    monkeypatch.setenv("RELAX_MLIR_BLAS_THREADS", "1")
    assert compile(build(), opt_level=1).stats.cache_hit


@pytest.mark.parametrize(
    "damage",
    ["garbage object", "truncated object", "changed weights", "no weights", "no metadata", "bad metadata"],
)
def test_damaged_entry_is_recompiled(private_cache: Path, damage: str) -> None:
    compile(build(), opt_level=1)
    obj = main_entry(private_cache)
    meta = obj.with_suffix(".json")
    weights_file = private_cache / json.loads(meta.read_text())["weights"][0]
    if damage == "garbage object":  # same size, so only the digest can tell
        obj.write_bytes(np.random.default_rng(0).bytes(obj.stat().st_size))
    elif damage == "truncated object":
        obj.write_bytes(obj.read_bytes()[:1000])
    elif damage == "changed weights":
        weights_file.write_bytes(weights_file.read_bytes()[:-4] + b"\1\2\3\4")
    elif damage == "no weights":
        weights_file.unlink()
    elif damage == "no metadata":
        meta.unlink()
    else:
        meta.write_text('{"size": ')
    exe = compile(build(), opt_level=1)
    assert not exe.stats.cache_hit
    check(exe)
    assert compile(build(), opt_level=1).stats.cache_hit  # repaired


def test_use_cache_false_compiles_and_on_stage_sees_the_host_ir_on_a_hit() -> None:
    compile(build(), opt_level=1)
    assert not compile(build(), opt_level=1, use_cache=False).stats.cache_hit
    stages: dict[str, str] = {}
    exe = compile(build(), opt_level=1, on_stage=stages.__setitem__)
    assert exe.stats.cache_hit and list(stages) == ["host"] and "func.func @main" in stages["host"]
    check(exe)


def test_key_covers_the_toolchain_and_ignores_run_time_env(monkeypatch: pytest.MonkeyPatch) -> None:
    key = cache.cache_key("module", "relax-O1", 1)
    assert key == cache.cache_key("module", "relax-O1", 1)
    assert key != cache.cache_key("module", "relax-O1", 2)
    monkeypatch.setenv("RELAX_MLIR_CACHE", "/elsewhere")
    assert key == cache.cache_key("module", "relax-O1", 1)
    cache._toolchain.cache_clear()
    monkeypatch.setattr(cache, "shared_libs", lambda: ["/other/libblas.so"])
    try:
        assert key != cache.cache_key("module", "relax-O1", 1)
    finally:
        cache._toolchain.cache_clear()


def test_weights_stay_out_of_the_object(private_cache: Path) -> None:
    exe = compile(build(), opt_level=1)
    obj = main_entry(private_cache)
    meta = json.loads(obj.with_suffix(".json").read_text())
    assert len(meta["pointers"]) >= 1 and obj.stat().st_size < K * N * 4
    assert (private_cache / meta["weights"][0]).stat().st_size >= K * N * 4
    check(exe)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.float16, np.int8])
@pytest.mark.parametrize("n", [65537, 100_003])
def test_blobs_read_from_bytecode_match_the_arrays(dtype, n: int) -> None:
    arrays = [np.random.default_rng(k).integers(0, 100, n).astype(dtype) for k in (1, 3)]  # odd sizes
    arrays.append(np.arange(7, dtype=np.float32))  # small: inline dense, not a blob
    bb = rb.BlockBuilder()
    with bb.function(
        "main", {"x": rb.tensor([n], np.dtype(dtype).name.replace("float", "f").replace("int", "i"))}
    ):
        with bb.dataflow():
            values = [R.constant(a) for a in arrays]
            out = bb.emit_output(R.add(values[0], values[1]))
        bb.ret(out)
    buffer = io.BytesIO()
    bb.module.operation.write_bytecode(buffer)
    blobs = resource_blobs(buffer.getvalue())
    assert len(blobs) == 2
    for a in arrays[:2]:
        (match,) = [b for b in blobs.values() if bytes(b) == a.tobytes()]
        assert len(match) == a.nbytes


LLVM_WITH_BLOB = """
llvm.mlir.global private constant @w(dense_resource<blob> : tensor<2x2xf32>) {alignment = 64 : i64} : !llvm.array<2 x array<2 x f32>>
llvm.mlir.global private constant @small(dense<1.0> : tensor<2xf32>) : !llvm.array<2 x f32>
llvm.func @first() -> f32 {
  %0 = llvm.mlir.addressof @w : !llvm.ptr
  %1 = llvm.load %0 : !llvm.ptr -> f32
  llvm.return %1 : f32
}
{-#
  dialect_resources: { builtin: { blob: "0x040000000000803F000000400000404000008040" } }
#-}
"""


def test_externalize_turns_blob_globals_into_pointers_loaded_before_use() -> None:
    with make_context(), ir.Location.unknown():
        module = ir.Module.parse(LLVM_WITH_BLOB)
        (weight,) = externalize(module)
        text = str(module)
    assert weight.symbol == "w" and weight.alignment == 64
    assert np.array_equal(np.frombuffer(weight.data, np.float32), [1, 2, 3, 4])
    assert "llvm.mlir.global external @w() {addr_space = 0 : i32, alignment = 8 : i64} : !llvm.ptr" in text
    assert "llvm.mlir.global private constant @small(dense<1.000000e+00>" in text
    assert "dense_resource" not in text
    body = text[text.index("llvm.func @first") :]
    lines = [line.strip() for line in body.splitlines()[1:4]]
    assert lines[0] == "%0 = llvm.mlir.addressof @w : !llvm.ptr"
    assert lines[1] == "%1 = llvm.load %0 : !llvm.ptr -> !llvm.ptr"
    assert lines[2] == "%2 = llvm.load %1 : !llvm.ptr -> f32"


# Every file of an entry is covered by a checksum; damage warns once, recompiles and rewrites the entry.


def _flip(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 1
    path.write_bytes(bytes(data))


DAMAGES = {
    "flip a byte": _flip,
    "truncate": lambda p: p.write_bytes(p.read_bytes()[: p.stat().st_size // 2]),
    "delete": Path.unlink,
    "garbage": lambda p: p.write_bytes(b"\xff{[garbage" * 50),
}


def _entry_files(directory: Path) -> dict[str, Path]:
    obj = main_entry(directory)
    meta = obj.with_suffix(".json")
    return {"object": obj, "json": meta, "weights": directory / json.loads(meta.read_text())["weights"][0]}


def _compile_expecting(warned: bool) -> object:
    """Compile ``build()``; exactly one CacheWarning (naming the entry) when ``warned``, else none."""
    import warnings  # noqa: PLC0415

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        exe = compile(build(), opt_level=1)
    messages = [str(w.message) for w in seen if issubclass(w.category, CacheWarning)]
    assert len(messages) == int(warned), messages
    if warned:
        assert "is damaged" in messages[0] and "recompiling" in messages[0]
    return exe


@pytest.mark.parametrize("damage", DAMAGES)
@pytest.mark.parametrize("kind", ["object", "json", "weights"])
def test_each_file_of_an_entry_is_checked(private_cache: Path, kind: str, damage: str) -> None:
    compile(build(), opt_level=1)
    files = _entry_files(private_cache)
    before = {k: p.read_bytes() for k, p in files.items()}
    DAMAGES[damage](files[kind])
    # without its metadata there is no entry: a plain miss
    exe = _compile_expecting(warned=not (kind == "json" and damage == "delete"))
    assert not exe.stats.cache_hit
    check(exe)
    assert files[kind].read_bytes() == before[kind]  # rewritten
    again = _compile_expecting(warned=False)
    assert again.stats.cache_hit
    check(again)


def test_one_digit_of_the_pointers_is_a_miss(private_cache: Path) -> None:
    """The issue's reproducer: the weights' offsets were not covered, so a hit returned wrong output."""
    compile(build(), opt_level=1)
    meta = _entry_files(private_cache)["json"]
    text = meta.read_text()
    start = text.index('"pointers": [["') + len('"pointers": [["')
    digit = text.index(", 0]", start) + 2  # the first weight's offset, 0
    meta.write_text(text[:digit] + "8" + text[digit + 1 :])
    exe = _compile_expecting(warned=True)
    assert not exe.stats.cache_hit
    check(exe)


@pytest.mark.parametrize(
    "field, value",
    [
        ("pointers", "abc"),
        ("pointers", [["w", -64]]),
        ("pointers", [["w", 10**9]]),
        ("weights", ["../../etc/passwd", 1, 2]),
        ("weights", 7),
        ("object", {"size": 1}),
        ("object", [1.5, "x"]),
        ("signatures", ["main"]),
        ("signatures", {"main": {"inputs": 3}}),
    ],
)
def test_wrong_types_under_a_valid_checksum_are_a_miss(private_cache: Path, field: str, value) -> None:
    compile(build(), opt_level=1)
    path = _entry_files(private_cache)["json"]
    meta = json.loads(path.read_text())
    del meta["checksum"]
    meta[field] = value
    path.write_bytes(cache._sealed(meta))
    exe = _compile_expecting(warned=True)
    assert not exe.stats.cache_hit
    check(exe)
    assert _compile_expecting(warned=False).stats.cache_hit


def test_an_interrupted_write_leaves_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "entry.o"
    target.write_bytes(b"old")

    def chunks():
        yield b"new, half"
        raise KeyboardInterrupt  # a writer killed in the middle

    with pytest.raises(KeyboardInterrupt):
        cache._write(target, chunks())
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["entry.o"]  # no temporary file left


def test_concurrent_writers_of_one_entry(private_cache: Path) -> None:
    here = Path(__file__).parent
    code = (
        f"import sys; sys.path.insert(0, {str(here)!r}); import test_compile_cache as t; "
        "from relax_mlir import compile; t.check(compile(t.build(), opt_level=1)); print('ok')"
    )
    children = [
        subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, env=os.environ)
        for _ in range(3)
    ]
    assert [c.communicate(timeout=600)[0].strip() for c in children] == [b"ok"] * 3
    exe = _compile_expecting(warned=False)
    assert exe.stats.cache_hit
    check(exe)


# A cache directory that cannot be used: one warning naming it and why, the executable still works.


def _unusable(tmp_path: Path, where: str) -> Path:
    regular = tmp_path / "a-file"
    regular.write_text("not a directory")
    return regular if where == "a regular file" else regular / "sub" / "cache"


@pytest.mark.parametrize("where", ["a regular file", "a path under a regular file"])
def test_unusable_cache_directory_compiles_without_a_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    path = _unusable(tmp_path, where)
    monkeypatch.setenv("RELAX_MLIR_CACHE", str(path))
    for _ in range(2):
        with pytest.warns(CacheWarning) as seen:
            exe = compile(build(), opt_level=1)
        assert len(seen) == 1
        message = str(seen[0].message)
        assert str(path) in message and ("Not a directory" in message or "File exists" in message)
        assert not exe.stats.cache_hit
        check(exe)
    assert (tmp_path / "a-file").read_text() == "not a directory"  # left alone


def test_unusable_cache_directory_for_a_cuda_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _unusable(tmp_path, "a path under a regular file")
    monkeypatch.setenv("RELAX_MLIR_CACHE", str(path))
    with pytest.warns(CacheWarning, match="Not a directory") as seen:
        exe = compile(build(), target="cuda", opt_level=1)
    assert len(seen) == 1 and exe.object and exe.ptx is not None


@pytest.mark.parametrize("damage", ["ptx", "flip object"])
def test_damaged_cuda_entry_is_rebuilt(private_cache: Path, damage: str) -> None:
    import warnings  # noqa: PLC0415

    exe = compile(build(), target="cuda", opt_level=1)
    (meta,) = [p for p in private_cache.glob("*.json") if "ptx" in json.loads(p.read_text())]
    if damage == "ptx":
        meta.write_text(meta.read_text().replace(".target sm_80", ".target sm_90", 1))
    else:
        _flip(meta.with_suffix(".o"))
    with pytest.warns(CacheWarning, match="is damaged"):
        again = compile(build(), target="cuda", opt_level=1)
    assert not again.stats.cache_hit and again.ptx == exe.ptx and again.object == exe.object
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert compile(build(), target="cuda", opt_level=1).stats.cache_hit


def test_thread_count_is_in_the_key_only_where_kernels_are_split(monkeypatch: pytest.MonkeyPatch) -> None:
    """relax-O1 leaves kernels serial: any thread count hits. relax-O2 generates code for the count it
    splits kernels over: the same count hits however it was chosen ($RELAX_MLIR_NUM_THREADS or the cores
    available), another one misses."""
    cores = len(os.sched_getaffinity(0))
    monkeypatch.setenv("RELAX_MLIR_NUM_THREADS", "1")
    assert not compile(build(), opt_level=1).stats.cache_hit
    monkeypatch.setenv("RELAX_MLIR_NUM_THREADS", str(cores + 1))
    assert compile(build(), opt_level=1).stats.cache_hit
    monkeypatch.setenv("RELAX_MLIR_NUM_THREADS", str(cores))
    assert not compile(build(), opt_level=2).stats.cache_hit
    monkeypatch.delenv("RELAX_MLIR_NUM_THREADS")
    exe = compile(build(), opt_level=2)
    assert exe.stats.cache_hit
    check(exe)
    monkeypatch.setenv("RELAX_MLIR_NUM_THREADS", str(cores + 1))
    assert not compile(build(), opt_level=2).stats.cache_hit


def test_uses_pass_looks_into_named_and_nested_pipelines() -> None:
    from relax_mlir.pipelines import load_passes
    from relax_mlir.pipelines.registry import uses_pass

    load_passes()
    split = "relax-parallelize-kernels"
    assert not uses_pass("relax-O1", split) and not uses_pass("relax-O1,host-to-llvm", split)
    assert uses_pass("relax-O2", split) and uses_pass("cpu", split)
    assert uses_pass("relax-verify,builtin.module(relax-parallelize-kernels{num-threads=2})", split)
    assert uses_pass("func.func(buffer-loop-hoisting)", "buffer-loop-hoisting")
