#!/usr/bin/env bash
# System packages relax_mlir needs beyond its pip dependencies, pinned; idempotent; fails loudly.
#   libomp5-14: LLVM's OpenMP runtime (libomp.so.5), which multi-threaded kernels call
#               (relax-parallelize-kernels; without it kernels run on one thread, with a warning).
#   gcc, libc6-dev: relax-compile links x86_64 libraries (runtime/aot.py); the tests build C drivers.
#   gcc-aarch64-linux-gnu, libc6-dev-arm64-cross: the same for aarch64 (the cross compiler alone has no
#               C headers or libc: apt only recommends them); qemu-user runs the aarch64 test drivers.
#   chromium:   runs the wasm32 web example headless (test/python/test_web_example.py); bookworm-security
#               replaces its version often, so the fallback below is the usual path for it.
# Debian 12 (bookworm) package versions; run as root (or with sudo available). A package written without
# a version (libc6-dev) must match the installed libc6, so any installed version is taken. A pinned
# version that the archive no longer serves (a Debian point release replaced it) falls back to the
# archive's version with a warning. Then scripts/install-js-deps.sh installs the pinned node packages
# (naga-wasm, the WGSL translator) with `npm ci`. scripts/check_toolchains.py proves the result works.
set -euo pipefail
JS_DEPS="$(dirname "$0")/install-js-deps.sh"

PACKAGES=(
  "libomp5-14=1:14.0.6-12"
  "gcc=4:12.2.0-3"
  "libc6-dev"
  "gcc-aarch64-linux-gnu=4:12.2.0-3"
  "libc6-dev-arm64-cross=2.36-8cross1"
  "qemu-user=1:7.2+dfsg-7+deb12u18+b3"
  "chromium=156.0.8078.108-1~deb12u1"
  "mesa-vulkan-drivers=22.3.6-1+deb12u2"
)

missing=()
for spec in "${PACKAGES[@]}"; do
  name="${spec%%=*}" version="${spec#*=}"
  installed="$(dpkg-query -W -f='${db:Status-Abbrev}${Version}' "$name" 2>/dev/null || true)"
  if [[ "$spec" == "$name" ]]; then
    [[ "$installed" == ii* ]] || missing+=("$spec")
  else
    [[ "$installed" == "ii $version" ]] || missing+=("$spec")
  fi
done
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-system-deps: already installed: ${PACKAGES[*]}"
  bash "$JS_DEPS"
  exit 0
fi

SUDO=()
if [[ "$(id -u)" -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "install-system-deps: need root (or sudo) to install ${missing[*]}" >&2; exit 1; }
  SUDO=(sudo)
fi
command -v apt-get >/dev/null || { echo "install-system-deps: apt-get not found; install ${missing[*]} by hand" >&2; exit 1; }
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -q
install=()
for spec in "${missing[@]}"; do
  name="${spec%%=*}"
  if [[ "$spec" != "$name" ]] && ! apt-cache madison "$name" | grep -qF " ${spec#*=} "; then
    echo "install-system-deps: warning: $spec is no longer in the archive; installing its current version" >&2
    spec="$name"
  fi
  install+=("$spec")
done
"${SUDO[@]}" apt-get install -y -q --no-install-recommends "${install[@]}"
echo "install-system-deps: installed ${install[*]}"
bash "$JS_DEPS"
