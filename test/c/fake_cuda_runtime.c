/* A test double of MLIR's CUDA runtime wrappers (libmlir_cuda_runtime.so): it runs no kernel, but logs
 * every module load, kernel launch (grid, block, shared memory) and managed allocation, so tests can check
 * the host side of the CUDA target on a machine without a GPU ($RELAX_MLIR_CUDA_RUNTIME points at it).
 * Log lines go to $FAKE_CUDA_LOG (default stderr). Signatures follow the calls gpu-to-llvm emits. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static FILE *out(void) {
  static FILE *f;
  if (!f) {
    const char *path = getenv("FAKE_CUDA_LOG");
    f = path ? fopen(path, "w") : stderr;
    setvbuf(f, NULL, _IOLBF, 0);
  }
  return f;
}

void *mgpuModuleLoadJIT(void *data, int opt_level) {
  const char *ptx = (const char *)data, *entry = strstr(ptx, ".entry ");
  char name[256] = "?";
  if (entry) sscanf(entry + 7, "%255[A-Za-z0-9_]", name);
  fprintf(out(), "load %s %s\n", name, strstr(ptx, ".version") ? "ptx" : "not-ptx");
  (void)opt_level;
  return strdup(name);
}

void mgpuModuleUnload(void *module) { free(module); }

void *mgpuModuleGetFunction(void *module, const char *name) {
  (void)module;
  return strdup(name);
}

void mgpuLaunchKernel(void *function, intptr_t gx, intptr_t gy, intptr_t gz, intptr_t bx, intptr_t by,
                      intptr_t bz, int32_t smem, void *stream, void **params, void **extra, size_t n_params) {
  fprintf(out(), "launch %s grid %ld %ld %ld block %ld %ld %ld smem %d params %zu\n", (const char *)function,
          (long)gx, (long)gy, (long)gz, (long)bx, (long)by, (long)bz, smem, n_params);
  (void)stream, (void)params, (void)extra;
}

void *mgpuStreamCreate(void) { return (void *)1; }
void mgpuStreamSynchronize(void *stream) { (void)stream; }
void mgpuStreamDestroy(void *stream) { (void)stream; }

void *mgpuMemAlloc(uint64_t size, void *stream, bool host_shared) {
  fprintf(out(), "alloc %llu %s\n", (unsigned long long)size, host_shared ? "managed" : "device");
  (void)stream;
  return calloc(size ? size : 1, 1);
}

void mgpuMemFree(void *ptr, void *stream) {
  fprintf(out(), "free\n");
  (void)stream;
  free(ptr);
}
