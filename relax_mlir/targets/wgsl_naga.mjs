// SPIR-V -> WGSL with naga (wgpu's shader translator, the naga-wasm npm package): relax_mlir/targets/wgsl.py runs
//
//   node wgsl_naga.mjs < request.json     request: {"<key>": "<SPIR-V, base64>", ...}
//   node wgsl_naga.mjs --version          prints naga's version
//
// and reads one JSON object from stdout: {"<key>": {"wgsl": "..."} or {"error": "<naga's message>"}}.
// naga-wasm is installed by `npm ci` at the repository root (package.json, package-lock.json).
import { nagaVersion, translate } from "naga-wasm";

if (process.argv[2] === "--version") {
  console.log(nagaVersion);
  process.exit(0);
}

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const request = JSON.parse(Buffer.concat(chunks).toString("utf8"));
const reply = {};
for (const [key, base64] of Object.entries(request)) {
  const bytes = new Uint8Array(Buffer.from(base64, "base64"));
  try {
    reply[key] = { wgsl: translate({ from: "spirv", source: bytes, to: "wgsl" }) };
  } catch (e) {
    const kind = e.kind ? `${e.kind} error: ` : "";
    reply[key] = { error: kind + (e.formatted || e.message || String(e)).trim() };
  }
}
process.stdout.write(JSON.stringify(reply));
