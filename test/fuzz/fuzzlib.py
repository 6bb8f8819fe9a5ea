"""A fuzzer for relax_mlir: mutated lit inputs, mutated ONNX models and bad run-time inputs must give a
result or a documented error (``relax_mlir.errors.RelaxError``), never a signal, a hang, another
exception, or an "internal error" diagnostic.

Case ``i`` is determined by ``i`` alone: ``i % 3`` picks the kind (lit, onnx, runtime) and
``random.Random(i)`` everything else. Replay one case in this process (a crash kills it visibly):
``python3 test/fuzz/fuzzlib.py 1234`` (``--show`` prints the mutated input). ``campaign()`` runs cases
from a start index in child processes, one child at a time, restarting it after a crash or hang.
"""

from __future__ import annotations

import ast
import ctypes
import faulthandler
import functools
import gc
import os
import queue
import random
import re
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

LIT_FILES = sorted(
    f for f in (ROOT / "test/lit").rglob("*.mlir") if "Output" not in f.parts
)  # not lit's temporaries
SPLIT = re.compile(r"(?m)^// -----[ \t]*$")
INTS = [0, -1, 1, 3, 2**31, 2**32 + 1, 2**62, 2**63 - 1, -(2**63)]
DTYPES = ["f16", "f32", "f64", "bf16", "i1", "i8", "i32", "i64", "ui8", "index", "f33", "float", "i0"]
DIMS = ['"?"', '"n"', '"m"', '"q"', '"n + 1"', '"n floordiv 0"', '"2 * n - 100"', "0", "-3"]
_libc = ctypes.CDLL(None)
SHOW = False  # print mutated inputs (replay --show)


class Finding(Exception):
    """A failure found without an exception of the code under test (internal error text, wrong result)."""


@functools.cache
def chunks() -> list[tuple[str, int, str]]:
    """(file, index, text) of every ``// -----`` chunk of the lit inputs."""
    return [
        (str(f.relative_to(ROOT)), k, text)
        for f in LIT_FILES
        for k, text in enumerate(SPLIT.split(f.read_text()))
    ]


@functools.cache
def op_names() -> list[str]:
    return sorted({m for _, _, text in chunks() for m in re.findall(r'"relax\.\w+"', text)})


# -- (a) lit inputs -----------------------------------------------------------------------------------
def mutate_text(text: str, rng: random.Random) -> tuple[str, str]:
    """1-3 textual mutations of IR; returns the text and what was done."""
    done = []
    for _ in range(rng.randint(1, 3)):
        lines = text.split("\n")
        kind = rng.choice(["delete", "duplicate", "swap", "int", "int", "dtype", "dim", "truncate", "op"])
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        if kind == "delete":
            del lines[i]
        elif kind == "duplicate":
            lines.insert(i, lines[i])
        elif kind == "swap":
            lines[i], lines[j] = lines[j], lines[i]
        elif kind == "truncate":
            text = text[: rng.randrange(len(text) + 1)]
            done.append(f"truncate@{len(text)}")
            continue
        else:
            pattern, values = {
                "int": (r"(?<![\w%#@.])-?\d+\b", [str(v) for v in INTS]),
                "dtype": (r"\b(f16|f32|f64|bf16|i1|i8|i32|i64|ui8)\b", DTYPES),
                "dim": (r'(?<=[\[,] )"[^"]*"|(?<=[\[,])"[^"]*"|(?<=[\[,] )\d+|(?<=[\[,])\d+', DIMS),
                "op": (r'"relax\.\w+"', op_names()),
            }[kind]
            spots = list(re.finditer(pattern, text))
            if not spots:
                continue
            m, new = rng.choice(spots), rng.choice(values)
            text = text[: m.start()] + new + text[m.end() :]
            done.append(f"{kind}@{m.start()}:{m.group()}->{new}")
            continue
        text = "\n".join(lines)
        done.append(f"{kind}@line{i + 1}")
    return text, ",".join(done)


def relax_opt(text: str, flags: list[str]) -> str:
    """``relax-opt <flags>`` on ``text`` in this process; an "internal error" diagnostic is a finding."""
    import contextlib
    import io

    from relax_mlir import relax_opt as tool

    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(text)
    err, out = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            status = tool.main([f.name, *flags])
    finally:
        os.unlink(f.name)
    if "internal error" in err.getvalue():
        raise Finding(err.getvalue()[-3000:])
    return f"exit {status}"


def lit_case(rng: random.Random) -> tuple[str, Callable[[], str]]:
    name, k, text = rng.choice(chunks())
    text, what = mutate_text(text, rng)
    how = rng.choice([["--relax-verify"], ["--cpu"], ["--relax-O2"], ["--relax-infer-shapes"], "compile"])
    if SHOW:
        print(text)
    if how == "compile":
        level = rng.randint(0, 3)
        return f"lit {name}#{k} [{what}] compile O{level}", lambda: compile_and_run(text, level, rng)
    return f"lit {name}#{k} [{what}] relax-opt {how[0]}", lambda: relax_opt(text, how)


# -- (b) ONNX models ----------------------------------------------------------------------------------
@functools.cache
def small_models() -> list[onnx.ModelProto]:
    """One-node models built with onnx.helper, a small MLP, and the project's test models."""
    r = np.random.default_rng(0)
    w = lambda *s: r.standard_normal(s).astype(np.float32)  # noqa: E731
    i64 = lambda *v: np.array(v, np.int64)  # noqa: E731
    table = [
        ("Relu", [["n", 4]], {}, {}),
        ("Add", [["n", 4], [4]], {}, {}),
        ("MatMul", [["n", 8]], {"w": w(8, 3)}, {}),
        ("Gemm", [["n", 8]], {"w": w(3, 8), "b": w(3)}, {"transB": 1}),
        ("Softmax", [["b", 5]], {}, {"axis": -1}),
        ("Conv", [["n", 3, 8, 8]], {"w": w(4, 3, 3, 3)}, {"strides": [2, 2], "pads": [1, 1, 1, 1]}),
        ("MaxPool", [["n", 3, 8, 8]], {}, {"kernel_shape": [2, 2], "strides": [2, 2]}),
        ("Reshape", [["n", 4]], {"s": i64(0, 2, 2)}, {}),
        ("Concat", [["n", 2], ["m", 2]], {}, {"axis": 0}),
        ("Transpose", [["a", "b", 3]], {}, {"perm": [2, 0, 1]}),
        ("ReduceMean", [["n", 6]], {"axes": i64(1)}, {"keepdims": 0}),
        ("Gather", [["n", 4]], {"i": i64(0, 2, 1)}, {"axis": 1}),
        ("Slice", [["n", 10]], {"st": i64(1), "en": i64(8), "ax": i64(1), "sp": i64(2)}, {}),
        ("LayerNormalization", [["n", 6]], {"g": w(6), "b": w(6)}, {"axis": -1}),
        ("Cast", [["n", 3]], {}, {"to": TensorProto.FLOAT16}),
    ]
    models = []
    for op, shapes, inits, attrs in table:
        ins = [helper.make_tensor_value_info(f"x{k}", TensorProto.FLOAT, s) for k, s in enumerate(shapes)]
        node = helper.make_node(op, [i.name for i in ins] + list(inits), ["y"], name=op.lower(), **attrs)
        out = helper.make_tensor_value_info(
            "y", TensorProto.FLOAT16 if op == "Cast" else TensorProto.FLOAT, None
        )
        consts = [numpy_helper.from_array(v, k) for k, v in inits.items()]
        models.append(helper.make_model(helper.make_graph([node], op, ins, [out], consts)))
    mlp = [
        helper.make_node("MatMul", ["x", "w1"], ["h"]),
        helper.make_node("Add", ["h", "b1"], ["a"]),
        helper.make_node("Relu", ["a"], ["r"]),
        helper.make_node("MatMul", ["r", "w2"], ["z"]),
        helper.make_node("Softmax", ["z"], ["y"], axis=-1),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    consts = {"w1": w(8, 16), "b1": w(16), "w2": w(16, 4)}
    graph = helper.make_graph(
        mlp, "mlp", [x], [y], [numpy_helper.from_array(v, k) for k, v in consts.items()]
    )
    models.append(helper.make_model(graph))
    from relax_mlir.examples.onnx_gpt import gpt_model

    models.append(gpt_model(layers=1, d=16, heads=2, vocab=10))
    sys.path.insert(0, str(ROOT / "test/lit/frontend/Inputs"))
    import make_model

    models.append(helper.make_model(make_model.heads()))
    for m in models:
        del m.opset_import[:]
        m.opset_import.append(helper.make_opsetid("", 21))
        m.ir_version = 10
    return models


def mutate_model(m: onnx.ModelProto, rng: random.Random) -> str:
    """One structural mutation of ``m`` in place: nodes' inputs/attributes/types, dims, initializers."""
    g, kind = (
        m.graph,
        rng.choice(["inputs", "attr", "attr", "op", "node", "dim", "dim", "output", "init", "opset"]),
    )
    node = rng.choice(g.node)
    names = (
        [v.name for v in g.input] + [t.name for t in g.initializer] + [o for n in g.node for o in n.output]
    )
    if kind == "inputs":
        pick = rng.randrange(4)
        if pick == 0 and node.input:
            node.input.pop()
        elif pick == 1:
            node.input.append(rng.choice(names))
        elif node.input:
            node.input[rng.randrange(len(node.input))] = ["missing", ""][pick - 2]
    elif kind == "attr" and node.attribute and rng.random() < 0.8:
        a = rng.choice(node.attribute)
        if a.type == onnx.AttributeProto.INT:
            a.i = rng.choice(INTS)
        elif a.type == onnx.AttributeProto.INTS and a.ints:
            a.ints[rng.randrange(len(a.ints))] = rng.choice(INTS)
        elif rng.random() < 0.5:
            a.type, a.f = onnx.AttributeProto.FLOAT, 1.5  # wrong type (the old values stay)
        else:
            node.attribute.remove(a)
    elif kind == "attr":
        node.attribute.append(helper.make_attribute(rng.choice(["axis", "perm", "bogus"]), rng.choice(INTS)))
    elif kind == "op":
        node.op_type = rng.choice(["Relu", "Add", "MatMul", "Softmax", "Reshape", "Concat", "Conv", "Nope"])
    elif kind == "node":
        (g.node.remove if rng.random() < 0.5 else g.node.append)(node)
    elif kind == "dim":
        t = rng.choice(g.input).type.tensor_type
        if t.shape.dim and rng.random() < 0.7:
            d = rng.choice(t.shape.dim)
            if rng.random() < 0.6:
                d.dim_value = rng.choice([0, -5, 1, 7, 2**40, 2**62])
            else:
                d.dim_param = rng.choice(["", "n", "a b", "batch", "seq"])
        elif rng.random() < 0.5:
            t.elem_type = rng.choice([0, 2, 3, 6, 7, 8, 9, 10, 11, 14, 16, 23, 40])
        else:
            t.ClearField("shape")
    elif kind == "output":
        pick = rng.randrange(3)
        if pick == 0:
            g.output.append(g.output[0])
        elif pick == 1:
            g.output[0].name = rng.choice(names)
        else:
            del g.output[:]
    elif kind == "init" and g.initializer:
        t = rng.choice(g.initializer)
        pick = rng.randrange(4)
        if pick == 0 and t.dims:
            t.dims[rng.randrange(len(t.dims))] = rng.choice([0, -1, 2**62, t.dims[0] + 1])
        elif pick == 1:
            t.raw_data = t.raw_data[: len(t.raw_data) // 2] if rng.random() < 0.5 else t.raw_data + b"\0" * 8
        elif pick == 2:
            t.data_type = rng.choice([1, 6, 7, 9, 10, 11, 16])
        else:
            g.initializer.remove(t)
    else:
        m.opset_import[0].version = rng.choice([1, 7, 11, 13, 17, 99])
    return kind


def _try(mutate: Callable[..., str], *args: object) -> str:
    try:
        return mutate(*args)
    except (IndexError, ValueError):  # nothing to mutate there (no node, no output ...)
        return "none"


def mutate_bytes(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    b = bytearray(data)
    kind = rng.choice(["flip", "truncate", "delete", "repeat"])
    i = rng.randrange(len(b))
    if kind == "flip":
        for k in rng.sample(range(len(b)), min(len(b), rng.randint(1, 8))):
            b[k] ^= rng.randint(1, 255)
    elif kind == "truncate":
        del b[i:]
    elif kind == "delete":
        del b[i : i + rng.randint(1, 16)]
    else:
        b[i:i] = b[i : i + rng.randint(1, 64)]
    return bytes(b), f"{kind}@{i}"


def onnx_case(rng: random.Random) -> tuple[str, Callable[[], str]]:
    models = small_models()
    k = rng.randrange(len(models))
    m, level = onnx.ModelProto(), rng.randint(0, 3)
    m.CopyFrom(models[k])
    if rng.random() < 0.3:
        data, what = mutate_bytes(m.SerializeToString(), rng)
    else:
        what = ",".join(_try(mutate_model, m, rng) for _ in range(rng.randint(1, 3)))
        data = m.SerializeToString()
    if SHOW:
        print(onnx.ModelProto.FromString(data) if "@" not in what else data)

    def run() -> str:
        from relax_mlir.frontend.onnx import from_onnx

        with tempfile.NamedTemporaryFile(suffix=".onnx", delete=False) as f:
            f.write(data)
        try:
            module = from_onnx(f.name)
        finally:
            os.unlink(f.name)
        return compile_and_run(module, level, rng)

    return f"onnx model#{k} ({m.graph.name}) [{what}] compile O{level}", run


# -- (c) run-time inputs ------------------------------------------------------------------------------
def valid_inputs(fn, rng: random.Random) -> list | None:
    """Arguments that match ``fn``'s signature (symbols 0..5 within upper bounds), or None if too big."""
    from relax_mlir.dialects.types import NUMPY_DTYPES

    env: dict[str, int] = {}

    def dim(d) -> int:
        if d is None:
            return rng.randint(1, 3)
        for s in sorted(d.free_symbols):
            env.setdefault(s, min(rng.choice([0, 1, 2, 3, 5]), fn.upper_bounds.get(s, 5)))
        return d.evaluate(env)

    args = []
    for spec in fn.inputs:
        t = spec.type
        if spec.kind == "prim":
            args.append(dim(t.value))
        elif spec.kind == "shape":
            args.append(tuple(dim(d) for d in t.values or ()))
        else:
            shape = tuple(dim(d) for d in t.shape or ())
            if (
                min(shape, default=0) < 0
                or max(shape, default=0) > 1e6
                or np.prod(shape, dtype=float) > 1e6
                or t.dtype not in NUMPY_DTYPES
            ):
                return None
            dtype = np.dtype(NUMPY_DTYPES[t.dtype])
            values = np.random.default_rng(rng.randrange(2**32)).standard_normal(shape) * 2
            args.append((np.abs(values) if dtype.kind in "ui" else values).astype(dtype))
    return args


def mutate_args(args: list, rng: random.Random) -> tuple[list, str, bool]:
    """One bad or unusual argument; returns the arguments, what was done, and whether only the layout changed."""
    args = list(args)
    arrays = [i for i, a in enumerate(args) if isinstance(a, np.ndarray)]
    if not arrays or rng.random() < 0.1:
        if not args:
            return [np.zeros(3, np.float32)], "extra", False
        i = rng.randrange(len(args))
        args[i] = rng.choice([None, -1, 2**62, 1.5, (1, 2), True, "x"])
        return args, f"arg{i}={args[i]!r}", False
    i = rng.choice(arrays)
    x = args[i]
    kind = rng.choice(["dtype", "rank", "rank", "zero", "huge", "sliced", "reversed", "zerostride",
                       "fortran", "misaligned", "None", "list", "scalar", "count", "values"])  # fmt: skip
    layout = kind in ("sliced", "reversed", "zerostride", "fortran", "misaligned")
    if kind == "dtype":
        x = x.astype(rng.choice([np.float64, np.float16, np.int32, np.bool_, ">f4", np.complex64, object]))
    elif kind == "rank":
        if rng.random() < 0.5 or x.ndim == 0:
            x = x[None]
        else:  # a lower rank: a scalar, or (no value to keep) the empty array without its leading dim
            x = x.reshape(-1)[:1].reshape(()) if x.size else np.zeros(x.shape[1:], x.dtype)
    elif kind in ("zero", "huge") and x.ndim:
        shape = list(x.shape)
        # a huge dim beside a 0 one is a valid empty input that kernels still loop over (slow, not wrong):
        # huge dims go only into inputs with elements, which must be rejected or run out of memory cleanly
        if kind == "huge" and not x.size:
            kind = "zero"
        shape[rng.randrange(x.ndim)] = 0 if kind == "zero" else rng.choice([2**31, 10**9, 2**40])
        x = np.broadcast_to(np.zeros((), x.dtype), shape) if kind == "huge" else np.zeros(shape, x.dtype)
    elif kind == "sliced" and x.ndim:
        x = np.repeat(x, 2, axis=-1)[..., ::2]
    elif kind == "reversed":
        x = np.ascontiguousarray(x[::-1])[::-1] if x.ndim else x
    elif kind == "zerostride" and x.ndim:
        x = np.broadcast_to(x.reshape(-1)[:1].reshape((1,) * x.ndim), x.shape) if x.size else x
    elif kind == "fortran":
        x = np.asfortranarray(x)
    elif kind == "misaligned" and x.size:
        raw = np.empty(x.nbytes + 1, np.uint8)[1:]
        raw[:] = x.reshape(-1).view(np.uint8)
        x = raw.view(x.dtype).reshape(x.shape)
    elif kind in ("None", "list", "scalar"):
        x = {"None": None, "list": x.tolist(), "scalar": 1.0}[kind]
    elif kind == "count":
        return args[:-1] if rng.random() < 0.5 else [*args, x], kind, False
    elif kind == "values" and x.size:
        x = x.copy()
        big = 10**6 if x.dtype.kind == "f" else np.iinfo(x.dtype).max if x.dtype.kind in "iu" else True
        x.reshape(-1)[0] = rng.choice([big, -big, np.nan, np.inf]) if x.dtype.kind == "f" else big
    args[i] = x
    return args, f"{kind}(arg{i})", layout


_COMPILED: dict[tuple[str, int], object] = {}


def runtime_case(rng: random.Random) -> tuple[str, Callable[[], str]]:
    # not programs with a loop: how long an scf.while runs is the inputs' choice (random ones may never stop);
    # the lit kind still mutates and compiles them
    name, k, text = rng.choice([c for c in chunks() if "invalid" not in c[0] and "scf.while" not in c[2]])
    level = rng.choice([0, 2])

    def run() -> str:
        import relax_mlir

        key = (f"{name}#{k}", level)
        if key not in _COMPILED:
            _COMPILED[key] = relax_mlir.compile(text, opt_level=level)
        return call(_COMPILED[key], rng, mutate=True)

    return f"runtime {name}#{k} O{level} (seed decides the inputs)", run


def call(exe, rng: random.Random, mutate: bool) -> str:
    """Call a random function of ``exe`` with valid (or, if ``mutate``, mutated) arguments."""
    if not exe.functions:
        return "no functions"
    fn = exe.functions[rng.choice(sorted(exe.functions))]
    args = valid_inputs(fn, rng)
    if args is None:
        return "inputs too large"
    what, layout = "valid", False
    if mutate:
        args, what, layout = mutate_args(args, rng)
    if SHOW:
        print(fn, what, args)
    out = fn(*args)
    if layout:  # a layout is not a value: the result must equal the one of contiguous copies
        again = fn(*[np.ascontiguousarray(a) if isinstance(a, np.ndarray) else a for a in args])
        if not same(out, again):
            raise Finding(f"@{fn.name} with {what} inputs gives another result than with contiguous ones")
    return f"@{fn.name} {what} ok"


def same(a, b) -> bool:
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray):
        return a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
    return a == b


def compile_and_run(module, level: int, rng: random.Random) -> str:
    import relax_mlir

    return call(relax_mlir.compile(module, opt_level=level), rng, mutate=rng.random() < 0.3)


# -- running cases ------------------------------------------------------------------------------------
KINDS = [lit_case, onnx_case, runtime_case]


def case(i: int) -> tuple[str, Callable[[], str]]:
    """The description and the thunk of case ``i`` (a thunk raising the error of a harness bug)."""
    try:
        return KINDS[i % len(KINDS)](random.Random(i))
    except Exception as e:
        error = e

        def fail() -> str:
            raise error

        return f"harness error making case {i}", fail


def run_case(thunk: Callable[[], str]) -> tuple[bool, str]:
    """Run a case; (ok, outcome). Not ok: an undocumented exception or a finding."""
    from relax_mlir.errors import RelaxError

    try:
        outcome = thunk()
        gc.collect()  # so that heap corruption shows in the case that caused it, not a later one
        _libc.malloc_trim(0)
        return True, outcome
    except RelaxError as e:
        if "internal error" not in str(e):
            return True, f"{type(e).__name__}"
        return False, f"internal error: {str(e)[-1500:]}"
    except Exception as e:
        return False, "".join(traceback.format_exception(e)[-6:])


def setup_child() -> None:
    """Limits and settings of a process that runs cases: no huge real allocations, warnings off."""
    resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))  # a shared machine
    os.environ.setdefault("RELAX_MLIR_CACHE", tempfile.mkdtemp(prefix="relax-fuzz-cache-"))
    warnings.simplefilter("ignore")
    faulthandler.enable()


def worker(start: int, deadline: float, stop: int) -> None:
    """Run cases ``start, start+1, ...`` before ``stop`` until ``deadline``; report on a private copy of stdout."""
    report = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # whatever the code under test prints goes to stderr
    setup_child()
    i = start
    while time.time() < deadline and i < stop:
        sys.stderr.flush()
        os.ftruncate(2, 0)  # stderr holds the output of the current case only
        what, thunk = case(i)
        report.write(f"RUN {i} {what}\n")
        ok, outcome = run_case(thunk)
        report.write(f"{'END' if ok else 'FAIL'} {i} {outcome!r}\n")
        i += 1


@dataclass
class Failure:
    case: int
    what: str  # "case 12 lit ..." description
    kind: str  # signal name, "hang" or "exception"
    detail: str

    def signature(self) -> str:
        """What groups failures of one cause: the abort message or the exception and its place."""
        lines = [x.strip() for x in self.detail.splitlines() if x.strip()]
        key = r"Assertion|LLVM ERROR|Program aborted|double free|malloc\(\)|free\(\)|corrupted|Symbols not found|Fatal Python error"
        flagged = [x[m.start() :] for x in lines if (m := re.search(key, x))]
        places = [x for x in lines if x.startswith("File ") and "fuzzlib" not in x]
        head = flagged[0] if flagged else (lines[-1] if lines else "")
        if self.kind == "exception" and "internal error" in self.detail:
            head = next((x for x in reversed(lines) if re.match(r"\w+(Error|Exception)\b", x)), head)
        head = re.sub(r"\d+", "N", head)  # sizes and values vary between cases of one cause
        return f"{self.kind}: {head[:160]}" + (
            f" [{places[-1 if self.kind == 'exception' else 0]}]" if places else ""
        )


def campaign(
    seconds: float, start: int = 0, case_timeout: float = 120, stop: int = sys.maxsize
) -> tuple[int, list[Failure]]:
    """Run cases from ``start`` (up to ``stop``, exclusive) for at most ``seconds`` in child processes; (cases
    run, failures)."""
    deadline, i, ran, failures = time.time() + seconds, start, 0, []
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    cache = tempfile.TemporaryDirectory(prefix="relax-fuzz-cache-")  # removed when the campaign ends
    env.setdefault("RELAX_MLIR_CACHE", cache.name)
    while time.time() < deadline and i < stop:
        with tempfile.TemporaryFile("w+") as err:
            cmd = [sys.executable, __file__, "--worker", str(i), str(deadline), str(stop)]
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True, env=env)
            lines: queue.Queue[str] = queue.Queue()
            threading.Thread(target=_pump, args=(proc.stdout, lines), daemon=True).start()
            current = None
            while True:
                try:
                    line = lines.get(timeout=case_timeout)
                except queue.Empty:
                    proc.kill()
                    proc.wait()
                    failures.append(Failure(*(current or (i, "worker")), "hang", f"{case_timeout} s"))
                    break
                if not line:  # the child exited: at the deadline, or killed
                    code = proc.wait()
                    if current is not None or code != 0:
                        err.seek(0)
                        kind = signal.Signals(-code).name if code < 0 else f"exit {code}"
                        detail = err.read()[-6000:]
                        if current is not None:
                            detail = f"{replay_alone(current[0], env, case_timeout)}\n{detail}"
                        failures.append(Failure(*(current or (i, "worker")), kind, detail))
                    break
                tag, n, rest = line.rstrip("\n").split(" ", 2)
                if tag == "RUN":
                    current = (int(n), rest)
                    continue
                if tag == "FAIL":
                    failures.append(Failure(*current, "exception", ast.literal_eval(rest)))
                ran, current = ran + 1, None
            if current is None:  # the deadline or the stop (or a failed start, recorded above)
                break
            ran, i = ran + 1, current[0] + 1
    cache.cleanup()
    return ran, failures


def replay_alone(i: int, env: dict[str, str], timeout: float) -> str:
    """Whether case ``i`` crashes in a fresh process too (heap damage may come from an earlier case)."""
    try:
        done = subprocess.run(
            [sys.executable, __file__, str(i)], env=env, capture_output=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return "alone: hangs"
    if done.returncode < 0:
        return f"alone: {signal.Signals(-done.returncode).name} too"
    return f"alone: no crash (exit {done.returncode}); earlier cases of the same child may have caused it"


def _pump(stream, lines: queue.Queue[str]) -> None:
    for line in stream:
        lines.put(line)
    lines.put("")


def main(argv: list[str]) -> int:
    global SHOW
    if argv[:1] == ["--worker"]:
        worker(int(argv[1]), float(argv[2]), int(argv[3]))
        return 0
    SHOW = "--show" in argv
    setup_child()
    i = int(next(a for a in argv if not a.startswith("--")))
    what, thunk = case(i)
    print(f"case {i}: {what}", flush=True)
    ok, outcome = run_case(thunk)
    print(("ok: " if ok else "FAILED: ") + outcome)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
