"""The steps every target shares: parse, run a pipeline, read signatures, serialize, hand to the JIT.

Each raises ``CompileError`` with MLIR's diagnostics, one per line, located (``file:line:col: ``) where
the IR has file locations (builder lines, IR text).
"""

from __future__ import annotations

import io
import json

from mlir import ir, passmanager

from relax_mlir.context import parse_module
from relax_mlir.diagnostics import hinted
from relax_mlir.errors import CompileError
from relax_mlir.pipelines import add_pipeline, load_passes, parse_pipeline
from relax_mlir.pipelines.data import Pipeline
from relax_mlir.transforms.lower_host import SIGNATURE_ATTR


def diagnostics(e: ir.MLIRError) -> str:
    """The error diagnostics of an MLIRError, one per line, without MLIR's generic preamble."""
    lines = [f"{where(d.location)}{hinted(d.message)}" for d in e.error_diagnostics]
    return "\n".join(lines) or str(e)


def where(loc: ir.Location) -> str:
    """``file:line:col: `` of a file location, else nothing."""
    if loc.is_a_file():
        return f"{loc.filename}:{loc.start_line}:{loc.start_col}: "
    return ""


def verified(module: ir.Module | ir.Operation | str) -> ir.Operation | str:
    """IR text as is, or the module's operation, verified: MLIR aborts serializing IR that uses a value
    outside the region defining it (a value of another function or module), which the verifier reports."""
    if isinstance(module, str):
        return module
    op = module.operation if isinstance(module, ir.Module) else module
    if not isinstance(op, (ir.Operation, ir.OpView)):
        raise CompileError(
            f"compile() takes an ir.Module, a builtin.module operation or IR text, got {type(module).__name__}"
        )
    try:
        op.operation.verify()
    except ir.MLIRError as e:
        raise CompileError(diagnostics(e)) from None
    return op.operation


def bytecode(op: ir.Operation) -> bytes:
    """The module as bytecode: weights as raw bytes, and locations, so errors point at the builder lines."""
    buffer = io.BytesIO()
    op.write_bytecode(buffer)
    return buffer.getvalue()


def source(module: ir.Operation | str) -> str | bytes:
    """What ``parse`` takes in a fresh context: IR text as is, a module as bytecode."""
    return module if isinstance(module, str) else bytecode(module)


def parse(text: str | bytes, source_name: str = "<compile>") -> ir.Operation:
    """Parse IR text or bytecode in the current context (make one with ``context.make_context()``)."""
    try:
        return parse_module(text, source_name)
    except ir.MLIRError as e:
        raise CompileError(diagnostics(e)) from None


def run(op: ir.Operation, pipeline: str | Pipeline) -> None:
    """Run a pipeline (text, with named pipelines, or elements) over a ``builtin.module``."""
    load_passes()
    pm = passmanager.PassManager("builtin.module")
    add_pipeline(pm, parse_pipeline(pipeline) if isinstance(pipeline, str) else pipeline)
    try:
        pm.run(op)
    except ir.MLIRError as e:
        raise CompileError(diagnostics(e)) from None


def signatures(op: ir.Operation) -> dict[str, dict]:
    """The signature of each entry point (public relax function) of lowered host code; CompileError when there is none (LLVM
    would then emit no object, and the JIT aborts on that)."""
    out = {}
    for f in op.regions[0].blocks[0].operations:
        if f.operation.name == "func.func" and SIGNATURE_ATTR in f.operation.attributes:
            name = ir.StringAttr(f.operation.attributes["sym_name"]).value
            signature = _read_signature(name, ir.StringAttr(f.operation.attributes[SIGNATURE_ATTR]).value)
            if not signature.get("private"):  # a private relax function is only called by the others
                out[name] = signature
    if not out:
        raise CompileError(
            "the module has no relax function to compile (a func.func with !relax types in its signature): "
            "nothing could be called"
        )
    return out


_SIGNATURE_KEYS = ("inputs", "outputs", "checks", "upper_bounds", "param_structure", "result_structure")


def _read_signature(name: str, text: str) -> dict:
    """The ``relax.signature`` of host function ``name`` (written by relax-lower-host); CompileError when
    hand-written IR gives one that is not JSON or lacks a field the runtime reads."""
    try:
        signature = json.loads(text)
    except json.JSONDecodeError as e:
        raise CompileError(f"@{name}: its {SIGNATURE_ATTR} is not JSON ({e})") from None
    missing = [k for k in _SIGNATURE_KEYS if not isinstance(signature, dict) or k not in signature]
    if missing:
        raise CompileError(
            f"@{name}: its {SIGNATURE_ATTR} lacks {', '.join(missing)} (relax-lower-host writes it; "
            "compile relax functions, not hand-written host code)"
        )
    return signature


def as_module(op: ir.Operation) -> ir.Module:
    """Move the body of a ``builtin.module`` operation into an ``ir.Module`` (what the JIT takes)."""
    module = ir.Module.create()
    for inner in list(op.regions[0].blocks[0].operations):
        module.body.append(inner.operation)
    return module
