// The node half of bench/bench_wasm.py: relax_mlir's wasm32 modules and ONNX Runtime Web, side by side.
//
//   node bench/bench_wasm_node.mjs cases.json
//
// cases.json (written by bench_wasm.py): {ort: <onnxruntime-web package dir>, warmup, rounds, min_reps,
// max_reps, budget_ms, idle_ms, rtol, atol, cases: [{label, onnx, wasm, mjs, function, c_name, input,
// shape, expected, out_shape}]}. For each case both engines run the same input once, their outputs are
// checked against numpy's (expected), then they are timed in `rounds` rounds of one block of calls per
// engine (each block starts with a pause and an untimed call), as bench/perf.py times its engines. One
// JSON line per case goes to stdout: {label, ms: {relax_wasm, ort_web}, reps, err: {...}}.
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const config = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));

function readF32(file) {
  const b = fs.readFileSync(file);
  return new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4);
}

// -- relax_mlir: through the generated ES module when there is one, else the exported C API ----------

const TENSOR_SIZE = 24; // relax_tensor in wasm32: data@0 (4), ndim@8 (i64), shape@16 (4), dtype@20 (i32)
const F32 = 12;

async function relaxRaw(wasmFile, cName) {
  const module = await WebAssembly.compile(fs.readFileSync(wasmFile));
  const imports = {};
  for (const imp of WebAssembly.Module.imports(module)) {
    // the contract: no imports; anything left is a stub that fails loudly if called
    imports[imp.module] ??= {};
    imports[imp.module][imp.name] = () => {
      throw new Error(`wasm import ${imp.module}.${imp.name} called`);
    };
  }
  const instance = await WebAssembly.instantiate(module, imports);
  const ex = instance.exports;
  if (ex._initialize) ex._initialize();
  const fn = ex[`relax_${cName}`];
  const shapesFn = ex[`relax_${cName}_output_shapes`];
  const message = () => {
    const p = ex.relax_last_error();
    const bytes = new Uint8Array(ex.memory.buffer, p);
    return new TextDecoder().decode(bytes.subarray(0, bytes.indexOf(0)));
  };
  const tensor = (at, data, shape) => {
    const dv = new DataView(ex.memory.buffer);
    const dims = ex.malloc(8 * Math.max(shape.length, 1));
    shape.forEach((d, i) => dv.setBigInt64(dims + 8 * i, BigInt(d), true));
    dv.setUint32(at, data, true);
    dv.setBigInt64(at + 8, BigInt(shape.length), true);
    dv.setUint32(at + 16, dims, true);
    dv.setInt32(at + 20, F32, true);
    return dims;
  };
  return (x, shape, outRank) => {
    const owned = [];
    const alloc = (n) => {
      const p = ex.malloc(n);
      if (!p) throw new Error(`malloc(${n}) failed`);
      owned.push(p);
      return p;
    };
    try {
      const inputs = alloc(TENSOR_SIZE);
      const xd = alloc(x.byteLength);
      new Float32Array(ex.memory.buffer, xd, x.length).set(x);
      owned.push(tensor(inputs, xd, shape));
      const dims = alloc(8 * outRank);
      if (shapesFn(inputs, 1n, dims, BigInt(outRank)) !== 0) throw new Error(message());
      const outShape = Array.from(new BigInt64Array(ex.memory.buffer, dims, outRank), Number);
      const n = outShape.reduce((a, b) => a * b, 1);
      const outputs = alloc(TENSOR_SIZE);
      const yd = alloc(4 * n);
      owned.push(tensor(outputs, yd, outShape));
      if (fn(inputs, 1n, outputs, 1n) !== 0) throw new Error(message());
      return new Float32Array(ex.memory.buffer, yd, n).slice();
    } finally {
      for (const p of owned) ex.free(p);
    }
  };
}

async function relaxModule(mjsFile, fnName) {
  const mod = await import(pathToFileURL(mjsFile).href);
  const model = await mod.load(fs.readFileSync(mjsFile.replace(/\.mjs$/, ".wasm")));
  const fn = model[fnName] ?? model.functions?.[fnName];
  return (x, shape) => {
    const out = fn({ data: x, shape });
    const y = Array.isArray(out) ? out[0] : out;
    return y.data;
  };
}

// -- ONNX Runtime Web (wasm backend, SIMD, one thread) ----------------------------------------------

const ort = await import(pathToFileURL(path.join(config.ort, "node_modules/onnxruntime-web/dist/ort.node.min.mjs")).href);
ort.env.wasm.numThreads = 1;
ort.env.wasm.simd = true;
ort.env.wasm.proxy = false;

// -- timing, as bench/perf.py ------------------------------------------------------------------------

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function timedBlocks(fns, estimate) {
  for (let i = 0; i < config.warmup; i++) for (const fn of Object.values(fns)) await fn();
  const slowest = Math.max(...Object.values(estimate));
  const reps = Math.floor(Math.min(config.max_reps, Math.max(config.min_reps, config.budget_ms / Math.max(slowest, 1e-3))));
  const perBlock = Math.max(1, Math.ceil(reps / config.rounds));
  const times = Object.fromEntries(Object.keys(fns).map((k) => [k, []]));
  for (let r = 0; r < config.rounds; r++) {
    for (const [k, fn] of Object.entries(fns)) {
      await sleep(config.idle_ms);
      await fn();
      for (let i = 0; i < perBlock; i++) {
        const t = performance.now();
        await fn();
        times[k].push(performance.now() - t);
      }
    }
  }
  const median = (v) => {
    const s = [...v].sort((a, b) => a - b);
    const m = s.length >> 1;
    return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
  };
  return { ms: Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)])), reps: perBlock * config.rounds };
}

function check(label, got, want) {
  if (got.length !== want.length) throw new Error(`${label}: ${got.length} outputs, expected ${want.length}`);
  let scale = 1e-30;
  let err = 0;
  for (let i = 0; i < want.length; i++) {
    const d = Math.abs(got[i] - want[i]);
    if (!(d <= config.atol + config.rtol * Math.abs(want[i])))
      throw new Error(`${label}: element ${i} is ${got[i]}, numpy has ${want[i]} (rtol ${config.rtol}, atol ${config.atol})`);
    scale = Math.max(scale, Math.abs(want[i]));
    err = Math.max(err, d);
  }
  return err / scale;
}

const relaxCache = new Map();
const ortCache = new Map();
for (const c of config.cases) {
  if (!relaxCache.has(c.wasm)) {
    relaxCache.set(c.wasm, c.mjs && fs.existsSync(c.mjs) ? await relaxModule(c.mjs, c.function) : await relaxRaw(c.wasm, c.c_name));
  }
  if (c.onnx && !ortCache.has(c.onnx)) {
    const options = { executionProviders: ["wasm"], graphOptimizationLevel: "all" };
    ortCache.set(c.onnx, await ort.InferenceSession.create(fs.readFileSync(c.onnx), options));
  }
  const relax = relaxCache.get(c.wasm);
  const session = ortCache.get(c.onnx);
  const x = readF32(c.input);
  const want = readF32(c.expected);
  const fns = { relax_wasm: () => relax(x, c.shape, c.out_shape.length) };
  if (session) {
    const feed = { x: new ort.Tensor("float32", x, c.shape) };
    fns.ort_web = async () => (await session.run(feed)).y.data;
  }
  const estimate = {};
  const err = {};
  for (const [k, fn] of Object.entries(fns)) {
    const t = performance.now();
    const y = await fn();
    estimate[k] = performance.now() - t;
    err[k] = check(`${c.label}: ${k} vs numpy`, y, want);
  }
  const timed = c.quick ? { ms: estimate, reps: 1 } : await timedBlocks(fns, estimate);
  process.stdout.write(JSON.stringify({ label: c.label, ...timed, err }) + "\n");
}
