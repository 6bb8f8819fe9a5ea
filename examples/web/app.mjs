// The page's script: loads the compiled model with its generated ES module, runs it on the chosen shapes.
import { load } from "./model/model.mjs";

const $ = (id) => document.getElementById(id);
let info, model;
try {
  info = await (await fetch("./model/info.json")).json();
  model = await load(new URL("./model/model.wasm", import.meta.url));
} catch (e) {
  // a model that cannot load says why, on the page and in #result (the tests read it)
  $("model").textContent = "(not loaded)";
  $("error").textContent = `${e.name}: ${e.message}`;
  $("result").textContent = JSON.stringify({ error: e.name, message: e.message });
  throw e;
}
const hasSeq = info.input.includes("seq");
$("model").textContent = info.model;
$("seq-label").hidden = !hasSeq;
const params = new URLSearchParams(location.search);
for (const k of ["batch", "seq"]) if (params.has(k)) $(k).value = params.get(k);

/** The deterministic input the tests recompute in numpy: x[i] = ((i * 7919) % 1000) / 1000 - 0.5. */
function input(shape) {
  const n = shape.reduce((p, d) => p * d, 1);
  const data = new Float32Array(n);
  for (let i = 0; i < n; i++) data[i] = ((i * 7919) % 1000) / 1000 - 0.5;
  return { data, shape };
}

function run() {
  $("error").textContent = "";
  const sizes = { batch: Number($("batch").value), seq: Number($("seq").value) };
  const shape = info.input.map((d) => (typeof d === "string" ? sizes[d] : d));
  const x = input(shape);
  $("input-shape").textContent = `[${shape.join(", ")}] float32`;
  try {
    let y = model.main(x); // the first call also checks the shapes (errors show below)
    let calls = 0;
    const t0 = performance.now();
    while (calls < 3 || (performance.now() - t0 < 300 && calls < 1000)) {
      y = model.main(x);
      calls++;
    }
    const ms = (performance.now() - t0) / calls;
    let sum = 0, sumAbs = 0;
    for (const v of y.data) {
      sum += v;
      sumAbs += Math.abs(v);
    }
    const step = Math.max(1, Math.floor(y.data.length / 64));
    const samples = [];
    for (let i = 0; i < y.data.length && samples.length < 64; i += step) samples.push([i, y.data[i]]);
    $("output-shape").textContent = `[${y.shape.join(", ")}] ${y.dtype}`;
    $("time").textContent = `${ms.toFixed(3)} ms (${calls} calls)`;
    $("stats").textContent = `${sum.toPrecision(7)}, ${(sumAbs / Math.max(1, y.data.length)).toPrecision(7)}`;
    $("first").textContent = Array.from(y.data.slice(0, 6), (v) => v.toFixed(4)).join(", ");
    $("result").textContent = JSON.stringify({ shape: y.shape, sum, sumAbs, samples, ms, calls });
  } catch (e) {
    $("error").textContent = `${e.name}: ${e.message}`;
    $("result").textContent = JSON.stringify({ error: e.name, message: e.message });
  }
}

$("form").addEventListener("submit", (event) => {
  event.preventDefault();
  run();
});
$("run").disabled = false;
if (params.get("auto") === "1") run();
