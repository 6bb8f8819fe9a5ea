#!/usr/bin/env bash
# System packages relax_mlir needs beyond its pip dependencies, pinned; idempotent; fails loudly.
#   libomp5-14: LLVM's OpenMP runtime (libomp.so.5), which multi-threaded kernels call
#               (relax-parallelize-kernels; without it kernels run on one thread, with a warning).
#   gcc, gcc-aarch64-linux-gnu, qemu-user: relax-compile links libraries for x86_64 and aarch64
#               (runtime/aot.py); test_aot.py runs the aarch64 ones under qemu-aarch64.
# Debian 12 (bookworm) package versions; run as root (or with sudo available).
set -euo pipefail

PACKAGES=(
  "libomp5-14=1:14.0.6-12"
  "gcc=4:12.2.0-3"
  "gcc-aarch64-linux-gnu=4:12.2.0-3"
  "qemu-user=1:7.2+dfsg-7+deb12u18+b3"
)

missing=()
for spec in "${PACKAGES[@]}"; do
  name="${spec%%=*}" version="${spec#*=}"
  installed="$(dpkg-query -W -f='${Version}' "$name" 2>/dev/null || true)"
  [[ "$installed" == "$version" ]] || missing+=("$spec")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-system-deps: already installed: ${PACKAGES[*]}"
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
"${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
echo "install-system-deps: installed ${missing[*]}"
