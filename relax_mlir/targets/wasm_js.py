"""The JavaScript face of a wasm32 library: ``model.mjs`` (an ES module) and ``model.d.ts`` (its types).

``relax-compile m.mlir --target wasm32 -o m.wasm`` writes them next to ``m.wasm`` (``write_js``). The
module works in node 20 and in browsers::

    import { load } from "./m.mjs";
    const model = await load();                  // fetches (browser) or reads (node) m.wasm next to m.mjs
    const y = model.main({ data: x, shape: [2, 784] });   // y = { data: Float32Array, shape, dtype }

Each public relax function ``@f`` becomes ``model.f(...args)`` (and ``model.functions["f"]``; a function of
unknown-rank parameters, compiled once per rank, calls its ``f__r<rank>`` variant for the arguments' ranks): a tensor
argument is ``{data, shape}`` with ``data`` a typed array of the dtype's storage (``DTYPE_STORAGE``) in
row-major order, a prim argument a number (or bigint), a shape argument an array of numbers, a tuple
argument an array of its values. Results come back in the same forms (a tensor as ``{data, shape,
dtype}``); one result is returned as is, several as an array. The arguments are checked in JavaScript
first, with the Python runtime's messages (``runtime/executable.py``), and failures throw
``RelaxInputError``; the C wrapper inside the wasm checks again (``runtime/capi.py``), and its failures
(e.g. a ``match_cast`` inside the function) throw ``RelaxInputError`` with the C API's message and
``code``. Memory is the wasm's own ``malloc``/``free``: every call frees what it allocated, also on error.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from relax_mlir.dialects.types import parse_type
from relax_mlir.runtime import capi
from relax_mlir.shape_infer.expr import Expr, format_dim
from relax_mlir.targets.wasm_js_runtime import RUNTIME

# relax dtype -> the typed array that holds it in JavaScript (raw bits for f16, bf16 and f8)
DTYPE_STORAGE = {
    "i1": "Uint8Array",
    "i8": "Int8Array",
    "i16": "Int16Array",
    "i32": "Int32Array",
    "i64": "BigInt64Array",
    "ui8": "Uint8Array",
    "ui16": "Uint16Array",
    "ui32": "Uint32Array",
    "ui64": "BigUint64Array",
    "f16": "Uint16Array",
    "bf16": "Uint16Array",
    "f32": "Float32Array",
    "f64": "Float64Array",
    "f8E4M3FN": "Uint8Array",
    "f8E5M2": "Uint8Array",
}
_RESERVED = set(
    "break case catch class const continue debugger default delete do else enum export extends false finally "
    "for function if import in instanceof new null return super switch this throw true try typeof var void "
    "while with yield let static implements interface package private protected public await arguments eval".split()
)


class _Raw(str):
    """JavaScript source that ``_js`` writes as is."""


def _js(value: Any) -> str:
    """``value`` as a JavaScript literal (JSON, except ``_Raw`` text)."""
    if isinstance(value, _Raw):
        return str(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {_js(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_js(v) for v in value) + "]"
    return json.dumps(value)


def _expr(e: Expr) -> str:
    """A JavaScript expression of ``e`` over the symbol values ``s`` (floor semantics, x / 0 = 0)."""
    if e.is_const:
        return str(e.value)
    terms = []
    for _, mono, coeff in e._terms:
        factors = [f"s[{json.dumps(a)}]" if type(a) is str else _call(a.op, *a.args) for a in mono]
        if coeff != 1 or not factors:
            factors.append(f"({coeff})")
        terms.append(" * ".join(factors))
    return "(" + " + ".join(terms) + ")"


def _call(op: str, x: Expr, y: Expr) -> str:
    name = {"min": "Math.min", "max": "Math.max"}.get(op, op)
    return f"{name}({_expr(x)}, {_expr(y)})"


def _dim(d: Expr | None) -> Any:
    """A dim of the spec: null (unknown), a number, a symbol's name, or ``{e, f}`` for an expression."""
    if d is None:
        return None
    if d.is_const:
        return d.value
    if d.free_symbols == {str(d)}:
        return str(d)
    return _Raw(f"{{e: {json.dumps(str(format_dim(d)))}, f: (s) => {_expr(d)}}}")


def function_spec(name: str, signature: dict[str, Any], prefix: str = "relax") -> dict[str, Any]:
    """What the ES module needs of one function; CompileError (from ``capi``) for what the C API rejects."""
    api = capi.function_api(name, signature)
    inputs = []
    for x, v in zip(signature["inputs"], api.inputs):
        inputs.append(
            {
                "kind": v.kind,
                "name": v.name,
                "dtype": v.dtype,
                "type": str(parse_type(x["type"])),
                "dims": [_dim(d) for d in v.dims],
            }
        )
    outputs, at = [], 0
    for v in api.outputs:
        outputs.append({"kind": v.kind, "dtype": v.dtype, "ndim": v.ndim, "dimAt": at})
        at += v.ndim
    sizes = {
        s for v in api.inputs if v.kind == "tensor" for d in v.dims if d is not None for s in d.free_symbols
    }
    return {
        "name": name,
        "symbol": f"{prefix}_{api.c_name}",
        "params": signature["param_structure"],
        "results": signature["result_structure"],
        "inputs": inputs,
        "outputs": outputs,
        "nDims": at,
        "sizeSymbols": [s for s in api.symbols if s in sizes],
        "upperBounds": [[s, b] for s, b in api.upper_bounds.items()],
    }


def module_source(signatures: dict[str, dict], wasm_name: str, prefix: str = "relax") -> str:
    """The ES module (``model.mjs``) for the library ``wasm_name`` (a URL relative to the module)."""
    specs = {name: function_spec(name, sig, prefix) for name, sig in signatures.items()}
    return "\n".join(
        [
            f"// {wasm_name}: the ES module of a model compiled by relax-compile --target wasm32. Generated; do not edit.",
            f"// Types and API: {Path(wasm_name).stem}.d.ts.",
            f"const WASM_NAME = {json.dumps(wasm_name)};",
            f"const PREFIX = {json.dumps(prefix)};",
            f"/** The relax signature of each function (inputs, outputs, symbols, upper bounds). */\nexport const SIGNATURES = {json.dumps(signatures)};",
            "const SPECS = {",
            *(f"  {json.dumps(n)}: {_js(s)}," for n, s in specs.items()),
            "};",
            RUNTIME,
        ]
    )


def _identifier(name: str) -> str:
    ident = capi.c_identifier(name)
    return ident + "_" if ident in _RESERVED else ident


def _input_type(v: dict[str, Any]) -> str:
    if v["kind"] == "tensor":
        return f"Tensor<{DTYPE_STORAGE[v['dtype']]}>"
    if v["kind"] == "prim":
        return "number | bigint"
    return "readonly [" + ", ".join(["number | bigint"] * len(v["dims"])) + "]"


def _output_type(v: dict[str, Any]) -> str:
    if v["kind"] == "tensor":
        return f"OutputTensor<{DTYPE_STORAGE[v['dtype']]}>"
    return "number" if v["kind"] == "prim" else "number[]"


def _nest(structure: list[Any], flat: list[str], readonly: bool) -> list[str]:
    it = iter(flat)

    def build(s: Any) -> str:
        if s == 0:
            return next(it)
        return ("readonly " if readonly else "") + "[" + ", ".join(build(x) for x in s) + "]"

    return [build(s) for s in structure]


def _declaration(name: str, signature: dict[str, Any], spec: dict[str, Any]) -> list[str]:
    params = _nest(spec["params"], [_input_type(v) for v in spec["inputs"]], True)
    names: list[str] = []
    leaves = iter(spec["inputs"])
    for i, s in enumerate(spec["params"]):
        count, depth, first = json.dumps(s).count("0"), 0, s
        while isinstance(first, list) and first:
            first, depth = first[0], depth + 1
        taken = [next(leaves) for _ in range(count)]
        if not taken or first != 0:
            names.append(f"arg{i}")
            continue
        base = taken[0]["name"]
        names.append(_identifier(base[: len(base) - 2 * depth] if depth else base))
    results = _nest(spec["results"], [_output_type(v) for v in spec["outputs"]], False)
    result = results[0] if len(results) == 1 else "[" + ", ".join(results) + "]"
    doc = [f"  /** @{name}"]
    for v in spec["inputs"]:
        doc.append(f"   * - {v['name']}: {v['type']}")
    for k, x in enumerate(signature["outputs"]):
        doc.append(f"   * - output #{k}: {parse_type(x['type'])}")
    if spec["upperBounds"]:
        doc.append("   * Upper bounds: " + ", ".join(f"{s} <= {b}" for s, b in spec["upperBounds"]) + ".")
    doc.append(
        "   * @throws {RelaxInputError} when an argument does not match (the Python runtime's message). */"
    )
    args = ", ".join(f"{n}: {t}" for n, t in zip(names, params))
    return [*doc, f"  {json.dumps(name)}({args}): {result};"]


DTS_PRELUDE = """\
/** A tensor argument: row-major `data` (the typed array of its dtype; raw bits for f16/bf16/f8) and its dims. */
export interface Tensor<A extends ArrayBufferView = ArrayBufferView> {
  data: A;
  shape: readonly number[];
}
/** A tensor result: a copy out of wasm memory; `dtype` is numpy's name of its element type. */
export interface OutputTensor<A extends ArrayBufferView = ArrayBufferView> {
  data: A;
  shape: number[];
  dtype: string;
}
/** Every error the module throws; `code` is the C API status (RELAX_ERR_*) when the wasm reported it, else 0. */
export class RelaxError extends Error {
  code: number;
}
/** An argument does not match the signature (the Python runtime's InputError, same message). */
export class RelaxInputError extends RelaxError {}
/** wasm memory cannot hold a call's inputs or outputs. */
export class RelaxOutOfMemoryError extends RelaxError {}
/** The wasm code trapped (the Python runtime's WasmTrapError); the instance stays usable. */
export class RelaxWasmTrapError extends RelaxError {}
/** The .wasm does not export what the module needs. */
export class RelaxLoadError extends RelaxError {}
/** One input or output of SIGNATURES (relax types as text). */
export interface SignatureValue {
  kind: string;
  type: string;
  name?: string;
  inplace?: boolean;
}
export interface Signature {
  inputs: SignatureValue[];
  outputs: SignatureValue[];
  checks: string[];
  upper_bounds: Record<string, number>;
  param_structure: unknown[];
  result_structure: unknown[];
}
export const SIGNATURES: Record<string, Signature>;
"""


def declarations_source(signatures: dict[str, dict], wasm_name: str, prefix: str = "relax") -> str:
    """The TypeScript declarations (``model.d.ts``) of ``module_source``'s module."""
    lines = [
        f"// Types of the ES module of {wasm_name} (relax-compile --target wasm32). Generated; do not edit.",
        DTS_PRELUDE,
        "/** The loaded model: one method per public relax function. Each call allocates its inputs and outputs",
        " * in wasm memory and frees them before it returns (also when it throws). */",
        "export interface Model {",
    ]
    for name, sig in signatures.items():
        lines += _declaration(name, sig, function_spec(name, sig, prefix))
    dispatched = sorted({sig["rank_variant"]["of"] for sig in signatures.values() if sig.get("rank_variant")})
    for name in dispatched:
        lines += [
            f"  /** @{name}: parameters of unknown rank, compiled once per rank: calls the {name}__r<rank> method",
            "   * for the arguments' ranks (RelaxInputError for a rank without one). */",
            f"  {_identifier(name)}(...args: any[]): any;",
        ]
    names = " | ".join(json.dumps(n) for n in [*signatures, *dispatched])
    lines += [
        "  /** The same functions by name. */",
        f"  functions: {{ [K in {names}]: Model[K] }};",
        "  /** The instance's memory (its byteLength shows wasm heap growth) and raw exports. */",
        "  memory: WebAssembly.Memory;",
        "  exports: WebAssembly.Exports;",
        "  signatures: Record<string, Signature>;",
        "  /** Blocks this module has malloc'ed and not yet freed (0 between calls). */",
        "  liveAllocations(): number;",
        "}",
        "/** Loads the model: `source` is a URL or path of the .wasm (default: "
        + f"{wasm_name} next to the module), its bytes, a fetch Response or a WebAssembly.Module. */",
        "export function load(",
        "  source?: string | URL | BufferSource | Response | Promise<Response> | WebAssembly.Module,",
        "  options?: { imports?: WebAssembly.Imports },",
        "): Promise<Model>;",
        "/** The model over an instance of the .wasm instantiated by the caller. */",
        "export function fromInstance(instance: WebAssembly.Instance): Model;",
        "",
    ]
    return "\n".join(lines)


def write_js(wasm: str | Path, signatures: dict[str, dict], prefix: str = "relax") -> tuple[Path, Path]:
    """Write ``<stem>.mjs`` and ``<stem>.d.ts`` next to the library ``wasm``; return their paths.

    Also ``<stem>.d.mts``, one line re-exporting ``<stem>.d.ts``: TypeScript looks for the types of an
    ``.mjs`` there."""
    wasm = Path(wasm)
    mjs, dts = wasm.with_suffix(".mjs"), wasm.with_suffix(".d.ts")
    mjs.write_text(module_source(signatures, wasm.name, prefix))
    dts.write_text(declarations_source(signatures, wasm.name, prefix))
    wasm.with_suffix(".d.mts").write_text(f'export * from "./{wasm.stem}.js"; // the types: {dts.name}\n')
    return mjs, dts
