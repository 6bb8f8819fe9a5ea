// The page's script: runs one kernel of kernels.json (relax_mlir/targets/wgsl.py's write_kernels) with WebGPU.
//
// Query: ?kernel=<key of kernels.json>&n=<elements> (or &shape=3,5)&scalars=<the kernel's scalar arguments,
//        in order>&grid=x,y,z (default ceil(elements / workgroup x))&out=<binding shown, default the last
//        memref>&auto=1 (run on load: the tests use it).
// Every memref argument gets the given shape and a deterministic input (`inputValue`); the params buffer
// gets the kernel ABI's layout (offset 0, the sizes, row-major strides; then the scalars). The scalars and
// the grid are what the host code computes from the symbolic sizes (for relax_mlir's elementwise kernels:
// the loop's bound n, step 1 and start 0). #result gets JSON with the adapter info, the output's sum, sum
// of |y|, sampled values (all values up to 4096) and the time.
const $ = (id) => document.getElementById(id);
const query = new URLSearchParams(location.search);
const STORAGE = { f32: Float32Array, i32: Int32Array, u32: Uint32Array };

/** Binding b's element i, recomputed in numpy by the tests: floats in [-0.5, 0.5), integers in [-100, 100]. */
export function inputValue(dtype, i, b) {
  const h = (i * 7919 + b * 104729) % 1000;
  return dtype.startsWith("f") ? h / 1000 - 0.5 : (h % 201) - 100;
}

/** The memref arguments of a kernels.json entry, in binding order. */
export const memrefs = (entry) => entry.bindings.filter((b) => !b.params).map((b) => entry.args[b.arg]);

/** The params buffer of the kernel ABI: memref arguments of `shapes` (per binding; contiguous, offset 0),
 *  then `scalars` (one per scalar argument, in order; f32 bitcast to i32). */
export function paramsFor(entry, shapes, scalars) {
  const params = new Int32Array(Math.max(1, entry.params_length));
  const wanted = entry.args.filter((a) => a.kind === "scalar");
  if (scalars.length !== wanted.length) {
    const types = wanted.map((a) => a.dtype).join(", ");
    throw new Error(`kernel ${entry.entry} takes ${wanted.length} scalar(s) (${types}); ?scalars= gave ${scalars.length}`);
  }
  wanted.forEach((arg, k) => {
    params[arg.params_at] = arg.dtype === "f32" ? new Int32Array(Float32Array.of(scalars[k]).buffer)[0] : scalars[k];
  });
  memrefs(entry).forEach((arg) => {
    const shape = shapes[arg.binding];
    if (shape.length !== arg.rank) throw new Error(`binding ${arg.binding} has rank ${arg.rank}, shape [${shape}]`);
    let stride = 1;
    const strides = shape.map(() => 0);
    for (let d = shape.length - 1; d >= 0; d--) {
      strides[d] = stride;
      stride *= shape[d];
    }
    params.set([0, ...shape, ...strides], arg.params_at);
  });
  return params;
}

/** Run `entry` (a kernels.json entry) from `wgsl` on `arrays` (one typed array per memref binding, in
 *  order); returns the memref arguments' contents after the dispatch and the GPU time in ms. */
export async function runKernel(device, entry, wgsl, arrays, params, grid) {
  device.pushErrorScope("validation");
  const module = device.createShaderModule({ code: wgsl });
  const messages = (await module.getCompilationInfo()).messages.filter((m) => m.type === "error");
  if (messages.length) {
    await device.popErrorScope();
    throw new Error(`WGSL rejected: ${messages.map((m) => m.message).join("; ")}`);
  }
  const layout = device.createBindGroupLayout({
    entries: entry.bindings.map((b) => ({
      binding: b.binding,
      visibility: GPUShaderStage.COMPUTE,
      buffer: { type: "storage" },
    })),
  });
  const pipeline = device.createComputePipeline({
    layout: device.createPipelineLayout({ bindGroupLayouts: [layout] }),
    compute: { module, entryPoint: entry.wgsl_entry ?? entry.entry }, // naga may rename it
  });
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
  // a storage binding may not be empty: a 0-element argument still gets 4 bytes
  const upload = (data) => {
    const buffer = device.createBuffer({ size: Math.max(4, Math.ceil(data.byteLength / 4) * 4), usage });
    device.queue.writeBuffer(buffer, 0, data.buffer, data.byteOffset, data.byteLength);
    return buffer;
  };
  const buffers = [...arrays.map(upload), upload(params)];
  const group = device.createBindGroup({
    layout,
    entries: buffers.map((buffer, i) => ({ binding: entry.bindings[i].binding, resource: { buffer } })),
  });
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, group);
  pass.dispatchWorkgroups(...grid);
  pass.end();
  const staging = arrays.map((a, i) => {
    const copy = device.createBuffer({ size: buffers[i].size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    encoder.copyBufferToBuffer(buffers[i], 0, copy, 0, buffers[i].size);
    return copy;
  });
  const t0 = performance.now();
  device.queue.submit([encoder.finish()]);
  await device.queue.onSubmittedWorkDone();
  const ms = performance.now() - t0;
  const error = await device.popErrorScope();
  if (error) throw new Error(`WebGPU validation: ${error.message}`);
  const outputs = [];
  for (const [i, copy] of staging.entries()) {
    await copy.mapAsync(GPUMapMode.READ);
    const Type = arrays[i].constructor;
    outputs.push(new Type(copy.getMappedRange().slice(0, arrays[i].byteLength)));
    copy.unmap();
  }
  for (const b of [...buffers, ...staging]) b.destroy();
  return { outputs, ms };
}

async function adapterAndDevice(features) {
  if (!navigator.gpu) throw new Error("navigator.gpu is missing: this browser has no WebGPU (or it is disabled)");
  const adapter = await navigator.gpu.requestAdapter();
  if (!adapter) throw new Error("navigator.gpu.requestAdapter() found no adapter");
  const info = adapter.info ?? (await adapter.requestAdapterInfo?.()) ?? {};
  const described = {};
  for (const k of ["vendor", "architecture", "device", "description"]) described[k] = info[k] ?? "";
  described.features = [...adapter.features].sort();
  const lacking = features.filter((f) => !adapter.features.has(f));
  if (lacking.length) throw new Error(`the adapter lacks the feature(s) the kernel needs: ${lacking.join(", ")}`);
  return { adapter, device: await adapter.requestDevice({ requiredFeatures: features }), info: described };
}

async function main() {
  const manifest = await (await fetch("./kernels/kernels.json")).json();
  const keys = Object.keys(manifest.kernels).filter((k) => manifest.kernels[k].wgsl);
  const key = query.get("kernel") ?? keys[0];
  const entry = manifest.kernels[key];
  if (!entry) throw new Error(`no kernel '${key}' in kernels.json (with WGSL: ${keys.join(", ")})`);
  if (!entry.wgsl) throw new Error(`kernel '${key}' has no WGSL: ${entry.wgsl_error}`);
  $("kernel").textContent = key;
  const wgsl = await (await fetch(`./kernels/${entry.wgsl}`)).text();
  const shape = query.has("shape") ? query.get("shape").split(",").map(Number) : [Number(query.get("n") ?? 1000)];
  const size = shape.reduce((p, d) => p * d, 1);
  const bound = memrefs(entry);
  const shapes = bound.map(() => shape);
  const arrays = bound.map((arg) => {
    const Type = STORAGE[arg.dtype];
    if (!Type) throw new Error(`binding ${arg.binding}: dtype ${arg.dtype} is not supported by this page`);
    return Type.from({ length: size }, (_, i) => inputValue(arg.dtype, i, arg.binding));
  });
  const scalars = query.get("scalars") ? query.get("scalars").split(",").map(Number) : [];
  const params = paramsFor(entry, shapes, scalars);
  const [wx] = entry.workgroup_size;
  const grid = query.has("grid") ? query.get("grid").split(",").map(Number) : [Math.ceil(size / wx), 1, 1];
  const { device, info } = await adapterAndDevice(entry.features ?? []);
  $("adapter").textContent = `${info.vendor} ${info.architecture} ${info.device} ${info.description}`.trim();
  const { outputs, ms } = await runKernel(device, entry, wgsl, arrays, params, grid);
  const out = Number(query.get("out") ?? bound.length - 1);
  const y = outputs[out];
  let sum = 0, sumAbs = 0;
  for (const v of y) {
    sum += v;
    sumAbs += Math.abs(v);
  }
  const step = Math.max(1, Math.floor(y.length / 256));
  const samples = [];
  for (let i = 0; i < y.length; i += step) samples.push([i, y[i]]);
  $("shape").textContent = `binding ${out}: [${shape.join(", ")}] ${bound[out].dtype}, grid [${grid.join(", ")}]`;
  $("time").textContent = `${ms.toFixed(2)} ms (submit to done)`;
  $("stats").textContent = `${sum.toPrecision(6)}, ${(sumAbs / Math.max(1, y.length)).toPrecision(6)}`;
  $("first").textContent = Array.from(y.slice(0, 8), (v) => v.toPrecision(5)).join(", ");
  const result = { kernel: key, adapter: info, shape, grid, out, params: Array.from(params), sum, sumAbs, samples, ms };
  if (y.length <= 4096) result.data = Array.from(y);
  return result;
}

async function run() {
  $("error").textContent = "";
  try {
    $("result").textContent = JSON.stringify(await main());
  } catch (e) {
    $("error").textContent = `${e.name}: ${e.message}`;
    $("result").textContent = JSON.stringify({ error: e.name, message: e.message });
  }
}

$("run").onclick = run;
if (query.get("auto") === "1") run();
