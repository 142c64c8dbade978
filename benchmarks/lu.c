/* Short and launch-bound: LU factorization without pivoting of an S x S float matrix (diagonally
 * dominant, so no pivot is needed), column by column as textbook GPU codes write it. Step k makes
 * two launches: `lu_column` divides the S-k-1 entries under the pivot, `lu_update` subtracts the
 * rank-1 product from the (S-k-1)^2 trailing block. 2(S-1) launches that shrink from S^2 work-items
 * to one, rounded up to whole groups of 64 and 16 x 16 as GPU codes do: most are too small to split, and the program as
 * a whole runs a second or so. This is the shape that a default policy must not make slower (docs/benchmarks.md, "Short
 * programs"). The host repeats the same float operations in the same order (no contraction on either side) and compares
 * sampled entries with a relative tolerance: OpenCL allows 2.5 ulp for a division. */
#include <math.h>

#include "common/bench_util.h"

static const char* kSource =
    "#pragma OPENCL FP_CONTRACT OFF\n"
    "__kernel void lu_column(__global float* a, uint n, uint k) {\n"
    "  uint i = k + 1 + (uint)get_global_id(0);\n"
    "  if (i < n) a[i * n + k] = a[i * n + k] / a[k * n + k];\n"
    "}\n"
    "__kernel void lu_update(__global float* a, uint n, uint k) {\n"
    "  uint j = k + 1 + (uint)get_global_id(0);\n"
    "  uint i = k + 1 + (uint)get_global_id(1);\n"
    "  if (i < n && j < n) a[i * n + j] = a[i * n + j] - a[i * n + k] * a[k * n + j];\n"
    "}\n";

enum { SAMPLES = 1024, COLUMN_GROUP = 64, TILE = 16 };

static void host_lu(float* a, uint32_t n) {
  for (uint32_t k = 0; k + 1 < n; ++k) {
    for (uint32_t i = k + 1; i < n; ++i) a[(size_t)i * n + k] = a[(size_t)i * n + k] / a[(size_t)k * n + k];
    for (uint32_t i = k + 1; i < n; ++i)
      for (uint32_t j = k + 1; j < n; ++j) {
        float p = a[(size_t)i * n + k] * a[(size_t)k * n + j];
        a[(size_t)i * n + j] = a[(size_t)i * n + j] - p;
      }
  }
}

int main(int argc, char** argv) {
  BenchOptions o = bench_parse_options(argc, argv, 512, 1, "matrix order", NULL);
  const uint32_t n = (uint32_t)o.size;
  bench_print_work((double)n * n * n);
  if (o.work_only) return 0;

  BenchContext b = bench_open(&o, kSource, "");
  cl_kernel column = app_create_kernel(b.program, "lu_column");
  cl_kernel update = app_create_kernel(b.program, "lu_update");
  const size_t bytes = (size_t)n * n * sizeof(float);
  float* input = (float*)app_alloc(bytes);
  float* result = (float*)app_alloc(bytes);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j) input[i * n + j] = bench_unit_float(i * n + j) + (i == j ? (float)n : 0.0f);
  cl_mem a_buf = app_create_buffer(b.ctx, CL_MEM_READ_WRITE, bytes, NULL);
  APP_ARG(column, 0, a_buf);
  APP_ARG(column, 1, n);
  APP_ARG(update, 0, a_buf);
  APP_ARG(update, 1, n);

  BenchTimer t = {0};
  for (long rep = 0; rep < o.reps; ++rep) {
    bench_total_begin(&t);
    APP_CHECK(clEnqueueWriteBuffer(b.queue, a_buf, CL_TRUE, 0, bytes, input, 0, NULL, NULL));
    bench_kernels_begin(&t);
    for (uint32_t k = 0; k + 1 < n; ++k) {
      size_t rest = n - k - 1, column_global = bench_round_up(rest, COLUMN_GROUP), column_local = COLUMN_GROUP;
      size_t block[2] = {bench_round_up(rest, TILE), bench_round_up(rest, TILE)}, tile[2] = {TILE, TILE};
      APP_ARG(column, 2, k);
      APP_ARG(update, 2, k);
      APP_CHECK(clEnqueueNDRangeKernel(b.queue, column, 1, NULL, &column_global, &column_local, 0, NULL, NULL));
      APP_CHECK(clEnqueueNDRangeKernel(b.queue, update, 2, NULL, block, tile, 0, NULL, NULL));
      t.launches += 2;
    }
    bench_kernels_end(&t, b.queue);
    APP_CHECK(clEnqueueReadBuffer(b.queue, a_buf, CL_TRUE, 0, bytes, result, 0, NULL, NULL));
  }
  bench_total_end(&t);

  float* want = (float*)app_alloc(bytes);
  memcpy(want, input, bytes);
  host_lu(want, n);
  size_t idx[SAMPLES];
  bench_sample_indices((size_t)n * n, SAMPLES, idx);
  long bad = 0;
  for (size_t s = 0; s < SAMPLES; ++s) {
    float got = result[idx[s]], ref = want[idx[s]];
    if (!(fabsf(got - ref) <= 1e-3f * (fabsf(ref) + 1e-3f))) {
      if (bad < 5) printf("mismatch at %zu: got %.9g, want %.9g\n", idx[s], got, ref);
      ++bad;
    }
  }
  app_expect(bad == 0, "LU factors match the host's within 1e-3 relative");
  bench_print_checksum("a", result, bytes);
  bench_print_times(&t);

  APP_CHECK(clReleaseMemObject(a_buf));
  APP_CHECK(clReleaseKernel(column));
  APP_CHECK(clReleaseKernel(update));
  bench_close(&b);
  free(input);
  free(result);
  free(want);
  return app_finish();
}
