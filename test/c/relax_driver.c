/* A C driver for libraries built by relax-compile (test/python/test_aot.py builds and runs it).
 *
 * Build: cc -DRELAX_HEADER='"libmodel.h"' -DRELAX_FN=relax_f -DRELAX_FN_MACRO=RELAX_F -I<dir> \
 *            relax_driver.c -L<dir> -lmodel -o driver
 * Run:   driver inputs.bin outputs.bin [--bad-output]
 * File format (native byte order), both ways: int64 count, then per tensor: int64 dtype, int64 ndim,
 * int64 shape[ndim], int64 nbytes, nbytes of C-contiguous data.
 * Asks the output shapes (RELAX_FN_output_shapes), allocates the outputs, calls RELAX_FN and writes
 * them, then the inputs (to show in-place updates); --bad-output adds 1 to output 0's last dim first. On an error prints "error <code>: <message>"
 * and exits 3.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include RELAX_HEADER

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define FN_SHAPES CAT(RELAX_FN, _output_shapes)
#define N_OUTPUTS CAT(RELAX_FN_MACRO, _N_OUTPUTS)
#define OUTPUT_DIMS CAT(RELAX_FN_MACRO, _OUTPUT_DIMS)

static int64_t element_size(int64_t dtype) {
  switch (dtype) {
    case RELAX_I16: case RELAX_U16: case RELAX_F16: case RELAX_BF16: return 2;
    case RELAX_I32: case RELAX_U32: case RELAX_F32: return 4;
    case RELAX_I64: case RELAX_U64: case RELAX_F64: return 8;
    default: return 1;
  }
}

static int64_t read_i64(FILE *f) {
  int64_t v = 0;
  if (fread(&v, sizeof v, 1, f) != 1) {
    fprintf(stderr, "driver: truncated input file\n");
    exit(2);
  }
  return v;
}

static void write_i64(FILE *f, int64_t v) { fwrite(&v, sizeof v, 1, f); }

static int fail(int code) {
  printf("error %d: %s\n", code, relax_last_error());
  return 3;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s inputs.bin outputs.bin [--bad-output]\n", argv[0]);
    return 2;
  }
  int bad_output = argc > 3 && strcmp(argv[3], "--bad-output") == 0;
  FILE *in = fopen(argv[1], "rb");
  if (!in) {
    perror(argv[1]);
    return 2;
  }
  int64_t n = read_i64(in);
  relax_tensor *inputs = calloc((size_t)n + 1, sizeof *inputs);
  for (int64_t i = 0; i < n; ++i) {
    inputs[i].dtype = (int32_t)read_i64(in);
    inputs[i].ndim = read_i64(in);
    int64_t *shape = calloc((size_t)inputs[i].ndim + 1, sizeof *shape);
    for (int64_t a = 0; a < inputs[i].ndim; ++a) shape[a] = read_i64(in);
    inputs[i].shape = shape;
    int64_t nbytes = read_i64(in);
    inputs[i].data = malloc((size_t)nbytes + 1);
    if (nbytes && fread(inputs[i].data, 1, (size_t)nbytes, in) != (size_t)nbytes) {
      fprintf(stderr, "driver: truncated data\n");
      return 2;
    }
  }
  fclose(in);

  int64_t dims[OUTPUT_DIMS + 1];
  int rc = FN_SHAPES(inputs, n, dims, OUTPUT_DIMS);
  if (rc) return fail(rc);
  const int32_t dtypes[N_OUTPUTS] = CAT(RELAX_FN_MACRO, _OUTPUT_DTYPES);
  const int64_t ndims[N_OUTPUTS] = CAT(RELAX_FN_MACRO, _OUTPUT_NDIMS);
  relax_tensor outputs[N_OUTPUTS];
  int64_t at = 0;
  for (int k = 0; k < N_OUTPUTS; ++k) {
    int64_t count = 1;
    int64_t *shape = calloc((size_t)ndims[k] + 1, sizeof *shape);
    for (int64_t a = 0; a < ndims[k]; ++a) {
      shape[a] = dims[at++];
      if (bad_output && k == 0 && a == ndims[k] - 1) shape[a] += 1;
      count *= shape[a];
    }
    outputs[k].dtype = dtypes[k];
    outputs[k].ndim = ndims[k];
    outputs[k].shape = shape;
    outputs[k].data = calloc((size_t)(count * element_size(dtypes[k])) + 1, 1);
  }
  rc = RELAX_FN(inputs, n, outputs, N_OUTPUTS);
  if (rc) return fail(rc);

  FILE *out = fopen(argv[2], "wb");
  if (!out) {
    perror(argv[2]);
    return 2;
  }
  write_i64(out, N_OUTPUTS + n);
  for (int64_t k = 0; k < N_OUTPUTS + n; ++k) {
    const relax_tensor *t = k < N_OUTPUTS ? &outputs[k] : &inputs[k - N_OUTPUTS];
    int64_t count = 1;
    write_i64(out, t->dtype);
    write_i64(out, t->ndim);
    for (int64_t a = 0; a < t->ndim; ++a) {
      write_i64(out, t->shape[a]);
      count *= t->shape[a];
    }
    int64_t nbytes = count * element_size(t->dtype);
    write_i64(out, nbytes);
    fwrite(t->data, 1, (size_t)nbytes, out);
  }
  fclose(out);
  return 0;
}
