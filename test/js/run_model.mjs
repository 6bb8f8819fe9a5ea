// Test driver of the generated ES modules (test/python/test_wasm_js.py): reads a JSON request on stdin,
// loads the module, runs the calls and prints a JSON answer.
//   request: {module, wasm?: path | null (null: a fake instance whose wasm exports throw when called),
//             function, calls: [[arg, ...], ...], leak?: {calls, args, warmup}}
//   values: a tensor is {"$t": {dtype (numpy name), shape, b64, data_shape?}}, "$bigint": "..." a BigInt,
//           arrays hold values, anything else is passed as is.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const ARRAYS = {
  bool: Uint8Array, int8: Int8Array, int16: Int16Array, int32: Int32Array, int64: BigInt64Array,
  uint8: Uint8Array, uint16: Uint16Array, uint32: Uint32Array, uint64: BigUint64Array,
  float16: Uint16Array, float32: Float32Array, float64: Float64Array,
};

function decode(v) {
  if (Array.isArray(v)) return v.map(decode);
  if (v && typeof v === "object" && "$t" in v) {
    const { dtype, shape, b64 } = v.$t;
    const bytes = Buffer.from(b64, "base64");
    const copy = new Uint8Array(bytes.length);
    copy.set(bytes);
    const A = ARRAYS[dtype];
    return { data: new A(copy.buffer, 0, copy.length / A.BYTES_PER_ELEMENT), shape };
  }
  if (v && typeof v === "object" && "$bigint" in v) return BigInt(v.$bigint);
  return v;
}

function encode(v) {
  if (Array.isArray(v)) return v.map(encode);
  if (v && typeof v === "object" && "data" in v) {
    const d = v.data;
    return { $t: { dtype: v.dtype, shape: v.shape, b64: Buffer.from(d.buffer, d.byteOffset, d.byteLength).toString("base64") } };
  }
  return v;
}

function fakeInstance(mod) {
  const trap = (name) => () => {
    throw new Error(`fake wasm: ${name} was called (the JavaScript checks should have thrown first)`);
  };
  const exports = { memory: new WebAssembly.Memory({ initial: 1 }), malloc: trap("malloc"), free: trap("free") };
  exports.relax_last_error = trap("relax_last_error");
  for (const name of Object.keys(mod.SIGNATURES)) {
    exports[`relax_${name}`] = trap(`relax_${name}`);
    exports[`relax_${name}_output_shapes`] = trap(`relax_${name}_output_shapes`);
  }
  return { exports };
}

const request = JSON.parse(readFileSync(0, "utf8"));
const mod = await import(pathToFileURL(request.module).href);
const model = request.wasm === null ? mod.fromInstance(fakeInstance(mod)) : await mod.load(request.wasm);
const fn = model.functions[request.function];
const answer = { results: [] };
for (const args of request.calls ?? []) {
  try {
    answer.results.push({ value: encode(fn(...decode(args))) });
  } catch (e) {
    answer.results.push({ error: { name: e.name, message: e.message, code: e.code ?? null, relax: e instanceof mod.RelaxError } });
  }
}
if (request.leak) {
  const args = decode(request.leak.args);
  const bad = request.leak.bad ? decode(request.leak.bad) : null;
  let errors = 0;
  const round = () => {
    fn(...args);
    if (bad) {
      try {
        fn(...bad);
      } catch {
        errors += 1;
      }
    }
  };
  // warm-up, then a probe block (malloc'ed and freed) before measuring: growth by either is not a leak
  for (let i = 0; i < request.leak.warmup; i++) round();
  const probe0 = model.exports.malloc(1 << 16);
  model.exports.free(probe0);
  const bytes0 = model.memory.buffer.byteLength;
  errors = 0;
  const t0 = performance.now();
  for (let i = 0; i < request.leak.calls; i++) round();
  const ms = (performance.now() - t0) / request.leak.calls;
  const bytes1 = model.memory.buffer.byteLength;
  const probe1 = model.exports.malloc(1 << 16);
  model.exports.free(probe1);
  answer.leak = { bytes0, bytes1, probe0, probe1, live: model.liveAllocations(), errors, ms };
}
process.stdout.write(JSON.stringify(answer));
