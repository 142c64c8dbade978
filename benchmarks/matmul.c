/* Compute-bound, regular: a blocked matrix product C = A * B of N x N floats, with 16 x 16 tiles of
 * A and B staged in __local memory. A chunk of rows of C needs its rows of A and all of B.
 * --iters K > 1 makes it a chain of K products, each taking the last one's result as its left
 * operand (A B, then (A B) B, ...), ping-pong between two result buffers: at small sizes, the
 * "chain of small matrix products" of the short programs (docs/testbed.md).
 *
 * fma() is correctly rounded on every OpenCL device, and every work-item accumulates in ascending k,
 * so the sampled entries must equal the host's fmaf in the same order bit for bit. A sampled entry
 * of the chain's last product needs only its row of the products before it. */
#include <math.h>

#include "common/bench_util.h"

static const char* kSource =
    "#pragma OPENCL FP_CONTRACT OFF\n"
    "#define TILE 16\n"
    "__kernel void matmul(__global const float* a, __global const float* b, __global float* c,\n"
    "                     uint n) {\n"
    "  __local float a_tile[TILE][TILE];\n"
    "  __local float b_tile[TILE][TILE];\n"
    "  uint lx = (uint)get_local_id(0), ly = (uint)get_local_id(1);\n"
    "  uint col = (uint)get_global_id(0), row = (uint)get_global_id(1);\n"
    "  float acc = 0.0f;\n"
    "  for (uint t = 0; t < n; t += TILE) {\n"
    "    a_tile[ly][lx] = a[row * n + t + lx];\n"
    "    b_tile[ly][lx] = b[(t + ly) * n + col];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    for (uint k = 0; k < TILE; ++k) acc = fma(a_tile[ly][k], b_tile[k][lx], acc);\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  }\n"
    "  c[row * n + col] = acc;\n"
    "}\n";

enum { TILE = 16, SAMPLES = 64 };

int main(int argc, char** argv) {
  BenchOptions o =
      bench_parse_options(argc, argv, 1024, 1, "matrix side (rounded up to a multiple of 16)", "products in the chain");
  const uint32_t n = (uint32_t)bench_round_up((size_t)o.size, TILE), products = (uint32_t)o.iters;
  bench_print_work((double)n * n * n * products);
  if (o.work_only) return 0;

  BenchContext b = bench_open(&o, kSource, "");
  cl_kernel kernel = app_create_kernel(b.program, "matmul");
  const size_t count = (size_t)n * n, bytes = count * sizeof(float);
  float* a = (float*)app_alloc(bytes);
  float* bm = (float*)app_alloc(bytes);
  float* c = (float*)app_alloc(bytes);
  for (size_t i = 0; i < count; ++i) {
    a[i] = bench_unit_float(2 * (uint64_t)i) - 0.5f;
    bm[i] = bench_unit_float(2 * (uint64_t)i + 1) * 2.0f - 1.0f;
  }
  cl_mem a_buf = app_create_buffer(b.ctx, CL_MEM_READ_ONLY, bytes, NULL);
  cl_mem b_buf = app_create_buffer(b.ctx, CL_MEM_READ_ONLY, bytes, NULL);
  /* The chain's results: products[p] goes to results[p % 2] and is the left operand of p + 1. */
  cl_mem results[2] = {app_create_buffer(b.ctx, products > 1 ? CL_MEM_READ_WRITE : CL_MEM_WRITE_ONLY, bytes, NULL),
                       products > 1 ? app_create_buffer(b.ctx, CL_MEM_READ_WRITE, bytes, NULL) : NULL};
  cl_mem c_buf = results[(products - 1) % 2];
  APP_ARG(kernel, 1, b_buf);
  APP_ARG(kernel, 3, n);
  size_t global[2] = {n, n}, local[2] = {TILE, TILE};

  BenchTimer t = {0};
  for (long rep = 0; rep < o.reps; ++rep) {
    bench_total_begin(&t);
    APP_CHECK(clEnqueueWriteBuffer(b.queue, a_buf, CL_TRUE, 0, bytes, a, 0, NULL, NULL));
    APP_CHECK(clEnqueueWriteBuffer(b.queue, b_buf, CL_TRUE, 0, bytes, bm, 0, NULL, NULL));
    bench_kernels_begin(&t);
    for (uint32_t p = 0; p < products; ++p) {
      cl_mem left = p == 0 ? a_buf : results[(p - 1) % 2];
      APP_ARG(kernel, 0, left);
      APP_ARG(kernel, 2, results[p % 2]);
      APP_CHECK(clEnqueueNDRangeKernel(b.queue, kernel, 2, NULL, global, local, 0, NULL, NULL));
      ++t.launches;
    }
    bench_kernels_end(&t, b.queue);
    APP_CHECK(clEnqueueReadBuffer(b.queue, c_buf, CL_TRUE, 0, bytes, c, 0, NULL, NULL));
  }
  bench_total_end(&t);

  size_t idx[SAMPLES];
  float got[SAMPLES], want[SAMPLES];
  float* row_of = (float*)app_alloc((size_t)n * sizeof(float));
  float* next_row = (float*)app_alloc((size_t)n * sizeof(float));
  bench_sample_indices(count, SAMPLES, idx);
  for (size_t k = 0; k < SAMPLES; ++k) {
    size_t row = idx[k] / n, col = idx[k] % n;
    memcpy(row_of, a + row * n, (size_t)n * sizeof(float));
    for (uint32_t p = 0; p + 1 < products; ++p) {
      for (size_t x = 0; x < n; ++x) {
        float acc = 0.0f;
        for (size_t j = 0; j < n; ++j) acc = fmaf(row_of[j], bm[j * n + x], acc);
        next_row[x] = acc;
      }
      memcpy(row_of, next_row, (size_t)n * sizeof(float));
    }
    float acc = 0.0f;
    for (size_t j = 0; j < n; ++j) acc = fmaf(row_of[j], bm[j * n + col], acc);
    got[k] = c[idx[k]];
    want[k] = acc;
  }
  free(row_of);
  free(next_row);
  app_check_f32("c", got, want, SAMPLES);
  bench_print_checksum("c", c, bytes);
  bench_print_times(&t);

  APP_CHECK(clReleaseMemObject(a_buf));
  APP_CHECK(clReleaseMemObject(b_buf));
  APP_CHECK(clReleaseMemObject(results[0]));
  if (results[1] != NULL) APP_CHECK(clReleaseMemObject(results[1]));
  APP_CHECK(clReleaseKernel(kernel));
  bench_close(&b);
  free(a);
  free(bm);
  free(c);
  return app_finish();
}
