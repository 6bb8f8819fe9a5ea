"""A small SIMT interpreter for kernel functions after the GPU mapping (tests only; no GPU needed).

It runs a memref-level ``func.func`` whose loops are ``gpu.launch``es on numpy arrays: every thread of a
block is a Python generator, stepped in lockstep at ``gpu.barrier`` (all threads of the block) and at
``gpu.shuffle`` (all lanes of a warp), with workgroup attributions shared by the block's threads. That is
enough to check the hand-written kernels (the shared-memory matmul, warp reductions) numerically. Floats
are computed in the element type (f32 stays f32). Unknown ops raise ``NotImplementedError`` naming them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator, Sequence
from typing import Any

import numpy as np
from mlir import ir

WARP = 32

_NP = {
    "f32": np.float32,
    "f64": np.float64,
    "f16": np.float16,
    "i1": np.bool_,
    "i8": np.int8,
    "i16": np.int16,
    "i32": np.int32,
    "i64": np.int64,
    "index": np.int64,
}

_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "arith.addi": lambda a, b: a + b,
    "arith.subi": lambda a, b: a - b,
    "arith.muli": lambda a, b: a * b,
    "arith.divui": lambda a, b: a // b,
    "arith.remui": lambda a, b: a % b,
    "arith.divsi": lambda a, b: int(a / b),
    "arith.remsi": lambda a, b: int(math.fmod(a, b)),
    "arith.ceildivui": lambda a, b: -(-a // b),
    "arith.ceildivsi": lambda a, b: -(-a // b),
    "arith.floordivsi": lambda a, b: a // b,
    "arith.andi": lambda a, b: a & b,
    "arith.ori": lambda a, b: a | b,
    "arith.xori": lambda a, b: a ^ b,
    "arith.maxsi": max,
    "arith.minsi": min,
    "arith.maxui": max,
    "arith.minui": min,
    "arith.addf": lambda a, b: a + b,
    "arith.subf": lambda a, b: a - b,
    "arith.mulf": lambda a, b: a * b,
    "arith.divf": lambda a, b: a / b,
    "arith.maximumf": lambda a, b: np.maximum(a, b),
    "arith.minimumf": lambda a, b: np.minimum(a, b),
    "arith.maxnumf": lambda a, b: np.fmax(a, b),
    "arith.minnumf": lambda a, b: np.fmin(a, b),
}
_UNARY: dict[str, Callable[[Any], Any]] = {
    "math.exp": np.exp,
    "math.log": np.log,
    "math.sqrt": np.sqrt,
    "math.rsqrt": lambda x: 1 / np.sqrt(x),
    "math.tanh": np.tanh,
    "math.erf": math.erf,
    "math.absf": np.abs,
    "arith.negf": np.negative,
}
_CMP = {
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "slt": lambda a, b: a < b,
    "sle": lambda a, b: a <= b,
    "sgt": lambda a, b: a > b,
    "sge": lambda a, b: a >= b,
    "ult": lambda a, b: a < b,
    "ule": lambda a, b: a <= b,
    "ugt": lambda a, b: a > b,
    "uge": lambda a, b: a >= b,
    "oeq": lambda a, b: a == b,
    "olt": lambda a, b: a < b,
    "ole": lambda a, b: a <= b,
    "ogt": lambda a, b: a > b,
    "oge": lambda a, b: a >= b,
    "une": lambda a, b: not a == b,
}


def _dtype(t: ir.Type) -> Any:
    return _NP[str(t)]


class Interpreter:
    """Runs functions of one module; ``call(name, *arrays_or_ints)`` mutates the arrays like the device would."""

    def __init__(self, module: ir.Operation) -> None:
        self.functions = {
            ir.StringAttr(op.operation.attributes["sym_name"]).value: op.operation
            for op in module.regions[0].blocks[0].operations
            if op.operation.name == "func.func" and op.operation.regions[0].blocks
        }
        self.globals = {
            ir.StringAttr(op.operation.attributes["sym_name"]).value: op.operation
            for op in module.regions[0].blocks[0].operations
            if op.operation.name == "memref.global"
        }
        self.launches = 0
        self._blocks: dict[ir.Block, list[tuple[ir.Operation, str, list[ir.Value], list[ir.Value]]]] = {}

    def call(self, name: str, *args: Any) -> list[Any]:
        region = self.functions[name].regions[0]
        env = dict(zip(region.blocks[0].arguments, args, strict=True))
        gen = self._region(region, env)
        try:
            while True:
                next(gen)  # host code never synchronizes
        except StopIteration as stop:
            return stop.value

    def _region(self, region: ir.Region, env: dict) -> Generator[Any, Any, list[Any]]:
        """Run a (possibly multi-block) region, following cf.br / cf.cond_br."""
        block = region.blocks[0]
        while True:
            result = yield from self._block(block, env)
            if not isinstance(result, tuple):
                return result
            block, values = result
            env.update(zip(block.arguments, values, strict=True))

    # Each op runs inside a generator, so a thread can yield at barriers and shuffles.
    def _ops(self, block: ir.Block) -> list[tuple[ir.Operation, str, list[ir.Value], list[ir.Value]]]:
        """A block's ops with their names, operands and results, read from the IR once."""
        ops = self._blocks.get(block)
        if ops is None:
            ops = [
                (o.operation, o.operation.name, list(o.operands), list(o.results)) for o in block.operations
            ]
            self._blocks[block] = ops
        return ops

    def _block(self, block: ir.Block, env: dict) -> Generator[Any, Any, list[Any]]:
        for op, name, operands, results in self._ops(block):
            if name in _BINARY:  # the common case, without the generator machinery
                a, b = operands
                env[results[0]] = self._typed(op, _BINARY[name](env[a], env[b]))
                continue
            if name in ("func.return", "scf.yield", "gpu.terminator", "scf.reduce"):
                return [env[v] for v in operands]
            if name in ("cf.br", "cf.cond_br"):
                return _branch(op, env)
            values = yield from self._op(op, env)
            for r, v in zip(results, values, strict=True):
                env[r] = v
        return []

    def _op(self, op: ir.Operation, env: dict) -> Generator[Any, Any, list[Any]]:
        name = op.name
        a = [env[v] for v in op.operands]
        if name in _BINARY:
            return [self._typed(op, _BINARY[name](a[0], a[1]))]
        if name in _UNARY:
            return [self._typed(op, _UNARY[name](a[0]))]
        if name == "arith.constant":
            attr = op.attributes["value"]
            if isinstance(op.results[0].type, ir.FloatType):
                return [_dtype(op.results[0].type)(ir.FloatAttr(attr).value)]
            if str(op.results[0].type) == "i1":
                return [bool(ir.IntegerAttr(attr).value)]
            return [int(ir.IntegerAttr(attr).value)]
        if name == "arith.cmpi" or name == "arith.cmpf":
            predicate = str(op.attributes["predicate"])
            key = _predicate(name, predicate)
            return [bool(_CMP[key](a[0], a[1]))]
        if name == "arith.select":
            return [a[1] if a[0] else a[2]]
        if name in ("arith.index_cast", "arith.index_castui", "arith.extsi", "arith.extui", "arith.trunci"):
            return [int(a[0])]
        if name == "arith.bitcast":  # same width: reinterpret the bits (an int holds an integer's bits)
            src, dst = str(op.operands[0].type), op.results[0].type
            if isinstance(dst, ir.FloatType):
                bits = np.array(a[0]).astype(_NP[str(dst).replace("f", "i")])
                return [bits.view(_dtype(dst))[()]]
            return [int(np.array(a[0], _dtype(op.operands[0].type)).view(_NP[src.replace("f", "i")]))]
        if name in ("arith.sitofp", "arith.uitofp", "arith.extf", "arith.truncf"):
            return [_dtype(op.results[0].type)(a[0])]
        if name == "memref.load":
            return [a[0][tuple(a[1:])]]
        if name == "memref.store":
            a[1][tuple(a[2:])] = a[0]
            return []
        if name == "memref.dim":
            return [a[0].shape[a[1]]]
        if name == "memref.cast":
            return [a[0]]
        if name in ("memref.expand_shape", "memref.collapse_shape"):
            t = ir.MemRefType(op.results[0].type)
            if name == "memref.collapse_shape":
                groups = [list(ir.ArrayAttr(g)) for g in ir.ArrayAttr(op.attributes["reassociation"])]
                shape = [int(np.prod([a[0].shape[ir.IntegerAttr(i).value] for i in g])) for g in groups]
            else:
                sizes = iter(a[1:])
                static = list(ir.DenseI64ArrayAttr(op.attributes["static_output_shape"]))
                shape = [next(sizes) if d == ir.ShapedType.get_dynamic_size() else d for d in static]
            view = a[0].reshape(shape)
            assert np.shares_memory(view, a[0]) or view.size == 0, "simt: a reshape that copies"
            return [view]
        if name in ("memref.alloc", "memref.alloca"):
            t = ir.MemRefType(op.results[0].type)
            sizes = iter(a)
            shape = [next(sizes) if d == ir.ShapedType.get_dynamic_size() else d for d in t.shape]
            return [np.zeros(shape, _dtype(t.element_type))]
        if name in ("memref.dealloc", "gpu.dealloc", "gpu.wait"):
            return [None] * len(op.results)  # async tokens
        if name == "gpu.alloc":
            t = ir.MemRefType(op.results[0].type)
            sizes = iter(a)
            shape = [next(sizes) if d == ir.ShapedType.get_dynamic_size() else d for d in t.shape]
            return [np.zeros(shape, _dtype(t.element_type))]
        if name == "memref.copy":
            a[1][...] = a[0]
            return []
        if name == "memref.get_global":
            symbol = ir.FlatSymbolRefAttr(op.attributes["name"]).value
            return [np.array(ir.DenseElementsAttr(self.globals[symbol].attributes["initial_value"]))]
        if name == "memref.view":
            t = ir.MemRefType(op.results[0].type)
            sizes = iter(a[2:])
            shape = [next(sizes) if d == ir.ShapedType.get_dynamic_size() else d for d in t.shape]
            dtype = np.dtype(_dtype(t.element_type))
            count = int(np.prod(shape)) * dtype.itemsize
            return [a[0][a[1] : a[1] + count].view(dtype).reshape(shape)]
        if name == "affine.apply":
            amap = ir.AffineMapAttr(op.attributes["map"]).value
            return [_affine(amap, a)]
        if name == "func.call":
            callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
            return self.call(callee, *a)
        if name == "scf.if":
            region = op.regions[0] if a[0] else op.regions[1]
            if not region.blocks:
                return []
            return (yield from self._block(region.blocks[0], env))
        if name == "scf.for":
            lb, ub, step, *carried = a
            body = op.regions[0].blocks[0]
            for i in range(lb, ub, step):
                env.update(zip(body.arguments, [i, *carried], strict=True))
                carried = yield from self._block(body, env)
            return carried
        if name == "gpu.barrier":
            yield ("barrier",)
            return []
        if name == "gpu.shuffle":
            mode = str(op.attributes["mode"]).split()[-1].rstrip(">")
            got = yield ("shuffle", mode, a[0], int(a[1]), int(a[2]))
            return list(got)
        if name == "gpu.launch":
            self._launch(op, a, env)
            return []
        raise NotImplementedError(f"simt: op '{name}' is not interpreted")

    def _typed(self, op: ir.Operation, value: Any) -> Any:
        return value if isinstance(value, (int, bool, np.floating)) else _dtype(op.results[0].type)(value)

    def _launch(self, op: ir.Operation, sizes: list[int], env: dict) -> None:
        self.launches += 1
        grid, block = sizes[0:3], sizes[3:6]  # no async deps, no dynamic shared memory
        body = op.regions[0].blocks[0]
        n_workgroup = len(body.arguments) - 12
        for bz in range(grid[2]):
            for by in range(grid[1]):
                for bx in range(grid[0]):
                    shared = []
                    for arg in list(body.arguments)[12 : 12 + n_workgroup]:
                        t = ir.MemRefType(arg.type)
                        shared.append(np.zeros(t.shape, _dtype(t.element_type)))
                    threads = []
                    for tz in range(block[2]):
                        for ty in range(block[1]):
                            for tx in range(block[0]):
                                ids = [bx, by, bz, tx, ty, tz, *grid, *block, *shared]
                                local = dict(env)
                                local.update(zip(body.arguments, ids, strict=True))
                                threads.append(self._block(body, local))
                    _lockstep(threads)


def _lockstep(threads: list[Generator]) -> None:
    """Step the threads of one block: each to its next barrier or shuffle, then resolve it for all."""
    pending: list[Any] = [None] * len(threads)
    alive = [True] * len(threads)
    replies: list[Any] = [None] * len(threads)
    while any(alive):
        for i, t in enumerate(threads):
            if not alive[i]:
                continue
            try:
                pending[i] = t.send(replies[i]) if replies[i] is not None else next(t)
            except StopIteration:
                alive[i] = False
                pending[i] = None
        replies = [None] * len(threads)
        events = [p for p in pending if p is not None]
        if not events:
            break
        if any(alive[i] and pending[i] is None for i in range(len(threads))):
            raise RuntimeError("simt: some threads finished while others wait at a barrier or shuffle")
        kinds = {e[0] for e in events}
        if kinds == {"barrier"}:
            replies = [None] * len(threads)
            pending = [None] * len(threads)
            continue
        if kinds != {"shuffle"}:
            raise RuntimeError(f"simt: threads of a block diverged at {kinds}")
        for w in range(0, len(threads), WARP):
            lanes = pending[w : w + WARP]
            if all(x is None for x in lanes):
                continue  # a warp that has finished
            if any(x is None for x in lanes):
                raise RuntimeError("simt: a shuffle that not every lane of the warp reaches")
            for lane, (_, mode, value, offset, width) in enumerate(lanes):
                if mode != "xor":
                    raise NotImplementedError(f"simt: shuffle mode {mode}")
                src = lane ^ offset
                valid = src < width and src < len(lanes)
                replies[w + lane] = (lanes[src][2] if valid else value, valid)
        pending = [None] * len(threads)


def _branch(op: ir.Operation, env: dict) -> tuple[ir.Block, list[Any]]:
    """The successor block of a cf.br / cf.cond_br and the values passed to its arguments."""
    values = [env[v] for v in op.operands]
    if op.name == "cf.br":
        return op.successors[0], values
    true_n = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))[1]
    if values[0]:
        return op.successors[0], values[1 : 1 + true_n]
    return op.successors[1], values[1 + true_n :]


def _predicate(name: str, text: str) -> str:
    names_i = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
    names_f = [
        "false",
        "oeq",
        "ogt",
        "oge",
        "olt",
        "ole",
        "one",
        "ord",
        "ueq",
        "ugt",
        "uge",
        "ult",
        "ule",
        "une",
    ]
    if text.isdigit() or text.split(":")[0].strip().isdigit():
        value = int(text.split(":")[0])
        return (names_i if name == "arith.cmpi" else names_f)[value]
    return text.strip().split()[-1]


def _affine(amap: ir.AffineMap, operands: Sequence[int]) -> int:
    text = str(amap.results[0])
    env = {f"d{i}": v for i, v in enumerate(operands[: amap.n_dims])}
    env.update({f"s{i}": v for i, v in enumerate(operands[amap.n_dims :])})
    expr = text.replace("floordiv", "//").replace("ceildiv", "ceildiv").replace("mod", "%")
    return int(eval(expr, {}, env))  # noqa: S307  (affine expressions of ints, from our own IR)
