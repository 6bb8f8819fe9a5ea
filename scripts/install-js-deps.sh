#!/usr/bin/env bash
# Node packages relax_mlir runs, pinned by package.json + package-lock.json at the repository root and
# installed with `npm ci` into ./node_modules (idempotent: skipped when the pinned versions are installed).
#   naga-wasm: naga (wgpu's shader translator) compiled to WebAssembly; relax_mlir/targets/wgsl.py runs it
#              in node to translate the webgpu target's SPIR-V kernels to WGSL for browsers.
# Needs node >= 20 and npm (the package declares node >= 24.12, but its node build runs on 20: npm's
# EBADENGINE warning is expected). scripts/check_toolchains.py proves the result works.
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in node npm; do
  command -v "$tool" >/dev/null || { echo "install-js-deps: $tool not found (install node >= 20 and npm)" >&2; exit 1; }
done
installed='const deps = require("./package.json").dependencies;
  for (const [name, version] of Object.entries(deps)) {
    if (require(`./node_modules/${name}/package.json`).version !== version) throw name;
  }'
if node -e "$installed" 2>/dev/null; then
  echo "install-js-deps: already installed: $(node -p 'Object.keys(require("./package.json").dependencies).join(" ")')"
  exit 0
fi
npm ci --no-audit --no-fund --loglevel=error
echo "install-js-deps: installed into $(pwd)/node_modules"
