// The node half of bench/bench_wasm.py: relax_mlir's wasm32 modules and ONNX Runtime Web, side by side.
//
//   node bench/bench_wasm_node.mjs cases.json
//
// cases.json (written by bench_wasm.py): {ort: <onnxruntime-web install dir>, warmup, rounds, min_reps,
// max_reps, budget_ms, idle_ms, rtol, atol, cases: [{label, onnx, wasm, mjs, function, input, shape,
// expected, quick}]}: relax_mlir runs through the module's generated ES module (mjs). For each case both engines run the same input once, their outputs are
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

// -- relax_mlir: the generated ES module (targets/wasm_js.py) ----------------------------------------

async function relaxModule(mjsFile, fnName) {
  const mod = await import(pathToFileURL(mjsFile).href);
  const model = await mod.load(fs.readFileSync(mjsFile.replace(/\.mjs$/, ".wasm")));
  return (x, shape) => {
    const out = model.functions[fnName]({ data: x, shape });
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

// quick: one call each, its time reported (no timing method)
const relaxCache = new Map();
const ortCache = new Map();
for (const c of config.cases) {
  if (!relaxCache.has(c.wasm)) relaxCache.set(c.wasm, await relaxModule(c.mjs, c.function));
  if (c.onnx && !ortCache.has(c.onnx)) {
    const options = { executionProviders: ["wasm"], graphOptimizationLevel: "all" };
    ortCache.set(c.onnx, await ort.InferenceSession.create(fs.readFileSync(c.onnx), options));
  }
  const relax = relaxCache.get(c.wasm);
  const session = ortCache.get(c.onnx);
  const x = readF32(c.input);
  const want = readF32(c.expected);
  const fns = { relax_wasm: () => relax(x, c.shape) };
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
