"""The model-independent part of the ES module ``wasm_js.py`` writes (JavaScript source, as a string).

It loads the ``.wasm`` (``load``), checks a call's arguments against the function's spec (``SPECS``, which
``wasm_js.py`` emits before this code) with the messages of the Python runtime (``executable.py``: count,
tuple structure, kind, dtype, rank, then one value per symbol, constant dims, symbolic expressions,
non-negative size symbols, upper bounds), copies the inputs into wasm memory (one ``malloc`` for the
``relax_tensor`` structs, shapes, output dims and input data, one for the outputs), calls
``<prefix>_<fn>_output_shapes`` then ``<prefix>_<fn>``, copies the outputs out and frees both blocks, also
when anything throws.

wasm32 layout of ``relax_tensor`` (clang; checked by the tests): ``data`` u32 at 0, ``ndim`` i64 at 8,
``shape`` u32 at 16, ``dtype`` i32 at 20; 24 bytes, 8-aligned.
"""

RUNTIME = r"""
const TENSOR_BYTES = 24;
const IS_NODE = typeof process !== "undefined" && process.versions != null && process.versions.node != null;

/** Every error this module throws. `code` is the C API's status (RELAX_ERR_*) when the wasm reported it. */
export class RelaxError extends Error {
  constructor(message, code = 0) {
    super(message);
    this.name = new.target.name;
    this.code = code;
  }
}
/** Arguments that do not match the function's signature (the Python runtime's InputError). */
export class RelaxInputError extends RelaxError {}
/** wasm memory cannot hold the inputs or outputs (the Python runtime's OutOfMemoryError). */
export class RelaxOutOfMemoryError extends RelaxError {}
/** The wasm code trapped (the Python runtime's WasmTrapError); the instance stays usable. */
export class RelaxWasmTrapError extends RelaxError {}
/** The .wasm does not export what this module needs (built by another relax-compile?). */
export class RelaxLoadError extends RelaxError {}

// relax dtype -> [typed array, numpy name, C API code, bytes]
const DTYPES = {
  i1: [Uint8Array, "bool", 1, 1],
  i8: [Int8Array, "int8", 2, 1],
  i16: [Int16Array, "int16", 3, 2],
  i32: [Int32Array, "int32", 4, 4],
  i64: [BigInt64Array, "int64", 5, 8],
  ui8: [Uint8Array, "uint8", 6, 1],
  ui16: [Uint16Array, "uint16", 7, 2],
  ui32: [Uint32Array, "uint32", 8, 4],
  ui64: [BigUint64Array, "uint64", 9, 8],
  f16: [Uint16Array, "float16", 10, 2],
  bf16: [Uint16Array, "bfloat16", 11, 2],
  f32: [Float32Array, "float32", 12, 4],
  f64: [Float64Array, "float64", 13, 8],
  f8E4M3FN: [Uint8Array, "float8_e4m3fn", 14, 1],
  f8E5M2: [Uint8Array, "float8_e5m2", 15, 1],
};
// typed array tag -> the numpy dtype it holds (for messages)
const ARRAY_DTYPES = {
  Int8Array: "int8", Uint8Array: "uint8", Uint8ClampedArray: "uint8 (clamped)", Int16Array: "int16",
  Uint16Array: "uint16", Int32Array: "int32", Uint32Array: "uint32", Float16Array: "float16",
  Float32Array: "float32", Float64Array: "float64", BigInt64Array: "int64", BigUint64Array: "uint64",
};

const floordiv = (a, b) => (b === 0 ? 0 : Math.floor(a / b));
const ceildiv = (a, b) => -floordiv(-a, b);
const mod = (a, b) => (b === 0 ? 0 : a - floordiv(a, b) * b);

function tag(value) {
  return Object.prototype.toString.call(value).slice(8, -1);
}

/** A value as Python's repr would print it (messages name what was passed). */
function repr(value) {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "bigint") return String(value);
  if (Array.isArray(value)) return "[" + value.map(repr).join(", ") + "]";
  if (ArrayBuffer.isView(value)) return `${tag(value)}(${value.length})`;
  if (value === null || value === undefined) return String(value);
  if (typeof value === "object") return tag(value) === "Object" ? "{" + Object.keys(value).join(", ") + "}" : tag(value);
  return String(value);
}

function typeName(value) {
  if (value === null) return "null";
  if (typeof value === "object") return tag(value);
  return typeof value;
}

function pyShape(shape) {
  return shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(", ")})`;
}

function asInteger(value) {
  if (typeof value === "bigint") return Number(value);
  return typeof value === "number" && Number.isSafeInteger(value) ? value : null;
}

function alignUp(n, a) {
  return Math.ceil(n / a) * a;
}

/** Checks `args` against `spec` like the Python runtime's `bind`; returns the flat values and symbols. */
function bind(spec, args) {
  const fn = spec.name;
  const fail = (message) => {
    throw new RelaxInputError(`@${fn}: ${message}`);
  };
  if (args.length !== spec.params.length) throw new RelaxInputError(`@${fn} takes ${spec.params.length} argument(s), got ${args.length}`);
  const flat = [];
  const walk = (value, structure, what) => {
    if (structure === 0) return void flat.push(value);
    if (!Array.isArray(value) || value.length !== structure.length) fail(`${what} must be a tuple of ${structure.length} values`);
    structure.forEach((s, j) => walk(value[j], s, `${what}.${j}`));
  };
  spec.params.forEach((s, i) => walk(args[i], s, `argument #${i}`));

  const env = Object.create(null);
  const origin = Object.create(null);
  const pending = [];
  const values = [];
  const dim = (d, actual, what) => {
    if (d === null) return;
    if (typeof d === "number") {
      if (d !== actual) fail(`${what} is ${actual}, expected ${d}`);
    } else if (typeof d === "string") {
      if (d in env && env[d] !== actual) fail(`${what} is ${actual}, but symbol '${d}' is ${env[d]} from ${origin[d]}`);
      if (!(d in env)) {
        env[d] = actual;
        origin[d] = what;
      }
    } else pending.push([d, actual, what]);
  };
  spec.inputs.forEach((input, i) => {
    const value = flat[i];
    const where = `parameter '${input.name}'`;
    if (input.kind === "tensor") {
      const [Array_, numpyName] = DTYPES[input.dtype];
      if (value === null || typeof value !== "object" || !ArrayBuffer.isView(value.data) || !Array.isArray(value.shape))
        fail(`${where} must be a tensor {data, shape} of ${input.type}, got ${typeName(value)}`);
      const { data, shape } = value;
      if (tag(data) !== Array_.name) fail(`${where} has dtype ${ARRAY_DTYPES[tag(data)] ?? tag(data)}, expected ${numpyName} (${input.dtype})`);
      if (shape.length !== input.dims.length)
        fail(`${where} has rank ${shape.length} (shape ${pyShape(shape)}), expected rank ${input.dims.length} ${input.type}`);
      let size = 1;
      shape.forEach((n, axis) => {
        if (!Number.isSafeInteger(n) || n < 0) fail(`${where} dim ${axis} is ${repr(n)}, expected a size >= 0`);
        size *= n;
      });
      if (data.length !== size) fail(`${where} has shape ${pyShape(shape)} (${size} elements), but its data has ${data.length}`);
      input.dims.forEach((d, axis) => dim(d, shape[axis], `${where} dim ${axis}`));
      values.push(value);
    } else if (input.kind === "prim") {
      const n = asInteger(value);
      if (n === null) fail(`${where} must be an integer, got ${repr(value)}`);
      dim(input.dims[0], n, where);
      values.push([n]);
    } else {
      const ints = Array.isArray(value) && value.length === input.dims.length ? value.map(asInteger) : null;
      if (ints === null || ints.includes(null)) fail(`${where} must be a shape of ${input.dims.length} integers, got ${repr(value)}`);
      input.dims.forEach((d, j) => dim(d, ints[j], `${where} value #${j}`));
      values.push(ints);
    }
  });
  for (const [d, actual, what] of pending) {
    const expected = d.f(env);
    if (expected !== actual) fail(`${what} is ${actual}, expected ${d.e} = ${expected}`);
  }
  for (const s of spec.sizeSymbols) {
    if (s in env && env[s] < 0) fail(`symbol '${s}' is ${env[s]} (from ${origin[s]}), but it sizes tensors, so it must be >= 0`);
  }
  for (const [s, bound] of spec.upperBounds) {
    if (s in env && env[s] > bound) fail(`symbol '${s}' is ${env[s]} (from ${origin[s]}), above its upper bound ${bound}`);
  }
  return values;
}

/** Minimal imports for whatever the .wasm imports (it should import nothing): Math for libm, errors for WASI. */
function defaultImports(module) {
  const imports = {};
  for (const { module: name, name: field, kind } of WebAssembly.Module.imports(module)) {
    if (kind !== "function") continue;
    const base = field.replace(/f$/, "");
    let fnImport;
    if (name === "env" && typeof Math[base] === "function") fnImport = Math[base];
    else if (name.startsWith("wasi")) {
      fnImport = field === "proc_exit" ? (code) => {
        throw new RelaxError(`the wasm module exited with status ${code}`);
      } : () => 52; // ENOSYS
    } else continue;
    (imports[name] ??= {})[field] = fnImport;
  }
  return imports;
}

// Always the asynchronous WebAssembly.instantiate: browsers refuse `new WebAssembly.Instance` on the main
// thread for modules over 8 MB (a GPT block with its weights is 14 MB).
async function instantiate(source, imports) {
  if (source instanceof WebAssembly.Module) return WebAssembly.instantiate(source, imports ?? defaultImports(source));
  if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) {
    const module = await WebAssembly.compile(source);
    return WebAssembly.instantiate(module, imports ?? defaultImports(module));
  }
  if (typeof Response !== "undefined" && (source instanceof Response || source instanceof Promise)) {
    const response = await source;
    if (!response.ok) throw new RelaxLoadError(`cannot load ${response.url}: HTTP ${response.status}`);
    return instantiate(await response.arrayBuffer(), imports);
  }
  const url = source instanceof URL ? source : new URL(String(source), IS_NODE ? `file://${process.cwd()}/` : globalThis.location?.href);
  if (IS_NODE && url.protocol === "file:") {
    const { readFile } = await import("node:fs/promises");
    return instantiate(await readFile(url), imports);
  }
  const response = await fetch(url);
  if (!response.ok) throw new RelaxLoadError(`cannot load ${url}: HTTP ${response.status}`);
  if (!imports && (response.headers.get("Content-Type") ?? "").startsWith("application/wasm")) {
    const module = await WebAssembly.compileStreaming(response);
    return WebAssembly.instantiate(module, defaultImports(module));
  }
  return instantiate(await response.arrayBuffer(), imports);
}

/**
 * Loads the compiled model: `source` is a URL or path of the .wasm (default: WASM_NAME next to this module),
 * its bytes, a fetch Response, or a compiled WebAssembly.Module. `options.imports` replaces the default imports.
 */
export async function load(source = new URL(WASM_NAME, import.meta.url), options = {}) {
  return fromInstance(await instantiate(source, options.imports));
}

const INITIALIZED = new WeakSet();

/** The model over an instance of the .wasm that the caller instantiated (this runs its WASI `_initialize`). */
export function fromInstance(instance) {
  const x = instance.exports;
  if (typeof x._initialize === "function" && !INITIALIZED.has(instance)) {
    INITIALIZED.add(instance);
    x._initialize();
  }
  const missing = ["memory", "malloc", "free", `${PREFIX}_last_error`].filter((n) => !(n in x));
  for (const spec of Object.values(SPECS)) {
    for (const n of [spec.symbol, `${spec.symbol}_output_shapes`]) if (!(n in x)) missing.push(n);
  }
  if (missing.length) throw new RelaxLoadError(`the wasm module does not export ${missing.join(", ")}: it was not built by relax-compile --target wasm32 for this module`);
  let live = 0;
  const malloc = (bytes, fn, what) => {
    const ptr = bytes > 0xffffffff - 16 ? 0 : x.malloc(Math.max(bytes, 1)) >>> 0;
    if (ptr === 0)
      throw new RelaxOutOfMemoryError(`@${fn}: out of memory: ${what} need ${bytes} bytes in wasm32 memory, which malloc could not allocate (at most 4 GiB)`);
    live += 1;
    return ptr;
  };
  const free = (ptr) => {
    if (ptr) {
      x.free(ptr);
      live -= 1;
    }
  };
  const lastError = () => {
    const bytes = new Uint8Array(x.memory.buffer);
    const start = x[`${PREFIX}_last_error`]() >>> 0;
    let end = start;
    while (end < bytes.length && bytes[end] !== 0) end += 1;
    return new TextDecoder().decode(bytes.subarray(start, end));
  };
  let errorAt = null; // the message buffer (static in the wasm)
  /** Calls a wasm export of @fn: a status != 0 throws with the C API's message, a trap as the Python runtime. */
  const invoke = (fn, f, ...args) => {
    errorAt ??= x[`${PREFIX}_last_error`]() >>> 0;
    new Uint8Array(x.memory.buffer)[errorAt] = 0; // a stale message must not explain a new trap
    let rc;
    try {
      rc = f(...args);
    } catch (e) {
      if (!(e instanceof WebAssembly.RuntimeError)) throw e;
      const oom = /out of memory: compiled code could not allocate (\d+) bytes/.exec(lastError());
      if (oom) {
        const n = Number(oom[1]);
        const size = n >= 2 ** 30 ? `${n} bytes (${(n / 2 ** 30).toFixed(1)} GiB)` : `${n} bytes`;
        throw new RelaxOutOfMemoryError(`@${fn}: out of memory: compiled code could not allocate ${size} (malloc failed); reduce the input sizes`);
      }
      throw new RelaxWasmTrapError(`@${fn}: the wasm32 module trapped: ${e.message.split("\n")[0]}`);
    }
    if (rc !== 0) throw (rc >= 1 && rc <= 6 ? new RelaxInputError(lastError(), rc) : new RelaxError(lastError(), rc));
  };

  const call = (spec, args) => {
    const values = bind(spec, args);
    const nIn = spec.inputs.length, nOut = spec.outputs.length;
    // block A: input structs | output structs | input shapes | output dims | int values | input data
    let at = TENSOR_BYTES * (nIn + nOut);
    const shapeAt = at;
    at += 8 * spec.inputs.reduce((n, input) => n + (input.kind === "tensor" ? input.dims.length : input.kind === "shape" ? 1 : 0), 0);
    const dimsAt = at;
    at += 8 * spec.nDims;
    const dataAt = [];
    spec.inputs.forEach((input, i) => {
      at = alignUp(at, 16);
      dataAt.push(at);
      at += input.kind === "tensor" ? values[i].data.byteLength : 8 * values[i].length;
    });
    let a = 0, b = 0;
    try {
      a = malloc(at, spec.name, "its inputs");
      let view = new DataView(x.memory.buffer);
      const bytes = new Uint8Array(x.memory.buffer);
      let shapes = a + shapeAt;
      spec.inputs.forEach((input, i) => {
        const s = a + TENSOR_BYTES * i, data = a + dataAt[i];
        const value = values[i];
        const shape = input.kind === "tensor" ? value.shape : input.kind === "shape" ? [value.length] : [];
        view.setUint32(s, data, true);
        view.setBigInt64(s + 8, BigInt(shape.length), true);
        view.setUint32(s + 16, shapes, true);
        view.setInt32(s + 20, DTYPES[input.dtype][2], true);
        for (const n of shape) {
          view.setBigInt64(shapes, BigInt(n), true);
          shapes += 8;
        }
        if (input.kind === "tensor") bytes.set(new Uint8Array(value.data.buffer, value.data.byteOffset, value.data.byteLength), data);
        else value.forEach((v, j) => view.setBigInt64(data + 8 * j, BigInt(v), true));
      });
      const inputs = a, outputs = a + TENSOR_BYTES * nIn, dims = a + dimsAt;
      invoke(spec.name, x[`${spec.symbol}_output_shapes`], inputs, BigInt(nIn), dims, BigInt(spec.nDims));
      view = new DataView(x.memory.buffer);
      const outShapes = [];
      let total = 0;
      const outAt = spec.outputs.map((output, k) => {
        const shape = [];
        for (let j = 0; j < output.ndim; j++) shape.push(Number(view.getBigInt64(dims + 8 * (output.dimAt + j), true)));
        outShapes.push(shape);
        total = alignUp(total, 16);
        const offset = total;
        total += DTYPES[output.dtype][3] * shape.reduce((p, n) => p * n, 1);
        return offset;
      });
      b = malloc(total, spec.name, "its outputs");
      view = new DataView(x.memory.buffer);
      spec.outputs.forEach((output, k) => {
        const s = outputs + TENSOR_BYTES * k;
        view.setUint32(s, b + outAt[k], true);
        view.setBigInt64(s + 8, BigInt(output.ndim), true);
        view.setUint32(s + 16, dims + 8 * output.dimAt, true);
        view.setInt32(s + 20, DTYPES[output.dtype][2], true);
      });
      invoke(spec.name, x[spec.symbol], inputs, BigInt(nIn), outputs, BigInt(nOut));
      const buffer = x.memory.buffer;
      const results = spec.outputs.map((output, k) => {
        const [Array_, numpyName] = DTYPES[output.dtype];
        const shape = outShapes[k];
        const data = new Array_(buffer, b + outAt[k], shape.reduce((p, n) => p * n, 1)).slice();
        if (output.kind === "prim") return Number(data[0]);
        if (output.kind === "shape") return Array.from(data, Number);
        return { data, shape, dtype: numpyName };
      });
      return structure(spec.results, results);
    } finally {
      free(b);
      free(a);
    }
  };

  const model = {
    memory: x.memory,
    exports: x,
    signatures: SIGNATURES,
    liveAllocations: () => live,
    functions: {},
  };
  for (const [name, spec] of Object.entries(SPECS)) {
    const f = (...args) => call(spec, args);
    Object.defineProperty(f, "name", { value: name });
    model.functions[name] = f;
    if (!(name in model)) model[name] = f;
  }
  // a function of unknown-rank parameters, compiled once per rank: call the variant for the arguments' ranks
  const groups = {};
  for (const [name, sig] of Object.entries(SIGNATURES)) {
    const v = sig.rank_variant;
    if (v) (groups[v.of] ??= []).push([v.ranks.join(","), model.functions[name], v.params]);
  }
  for (const [name, variants] of Object.entries(groups)) {
    const params = variants[0][2];
    const byRanks = new Map(variants.map(([key, g]) => [key, g]));
    const first = variants[0][1];
    const names = params.map((i) => SIGNATURES[first.name].inputs[flatIndex(SIGNATURES[first.name], i)].name);
    const supported = variants.map(([key]) => key.replaceAll(",", "x")).join(", ");
    const f = (...args) => {
      const ranks = params.map((i) => (args[i] && Array.isArray(args[i].shape) ? args[i].shape.length : -1));
      const g = byRanks.get(ranks.join(","));
      if (g) return g(...args);
      if (ranks.includes(-1)) return first(...args); // not a tensor: the variant's own error
      const got = ranks.map((r, j) => `parameter '${names[j]}' has rank ${r}`).join(", ");
      throw new RelaxInputError(
        `@${name}: ${got}, but the function (of unknown-rank parameters) is compiled for rank(s) ${supported} only`,
      );
    };
    Object.defineProperty(f, "name", { value: name });
    model.functions[name] = f;
    if (!(name in model)) model[name] = f;
  }
  return model;
}

function flatIndex(signature, index) {
  const leaves = (s) => (s === 0 ? 1 : typeof s === "object" && !Array.isArray(s) ? 2 : s.reduce((n, x) => n + leaves(x), 0));
  return signature.param_structure.slice(0, index).reduce((n, s) => n + leaves(s), 0);
}

function structure(shape, flat) {
  let i = 0;
  const build = (s) => (s === 0 ? flat[i++] : s.map(build));
  const out = shape.map(build);
  return out.length === 1 ? out[0] : out;
}
"""
