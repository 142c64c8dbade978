/* Short and launch-bound: a 1-D three-point stencil over S floats, --iters tiny launches (default
 * 20,000) that ping-pong between two buffers, the ends held fixed. Each launch is a few microseconds
 * of work on any device: the whole program is the cost of its launches, and a policy that splits them
 * or waits for anything per launch makes it slower (docs/testbed.md).
 *
 * The host repeats the same float operations in the same order (no contraction on either side), so
 * the result must equal it bit for bit. */
#include "common/bench_util.h"

static const char* kSource =
    "#pragma OPENCL FP_CONTRACT OFF\n"
    "__kernel void stencil(__global const float* src, __global float* dst, uint n) {\n"
    "  uint i = (uint)get_global_id(0);\n"
    "  if (i >= n) return;\n"
    "  if (i == 0 || i == n - 1) {\n"
    "    dst[i] = src[i];\n"
    "    return;\n"
    "  }\n"
    "  float s = src[i - 1] + src[i];\n"
    "  s = s + src[i + 1];\n"
    "  dst[i] = s * (1.0f / 3.0f);\n"
    "}\n";

enum { GROUP = 64 };

static void host_stencil(float* a, float* b, uint32_t n, uint32_t steps) {
  for (uint32_t it = 0; it < steps; ++it) {
    const float* src = it % 2 == 0 ? a : b;
    float* dst = it % 2 == 0 ? b : a;
    dst[0] = src[0];
    dst[n - 1] = src[n - 1];
    for (uint32_t i = 1; i + 1 < n; ++i) {
      float s = src[i - 1] + src[i];
      s = s + src[i + 1];
      dst[i] = s * (1.0f / 3.0f);
    }
  }
}

int main(int argc, char** argv) {
  BenchOptions o = bench_parse_options(argc, argv, 4096, 20000, "points", "launches per repetition");
  const uint32_t n = (uint32_t)o.size, steps = (uint32_t)o.iters;
  bench_print_work((double)n * steps);
  if (o.work_only) return 0;
  if (n < 3) {
    printf("error: --size must be at least 3\nFAIL\n");
    return 2;
  }

  BenchContext b = bench_open(&o, kSource, "");
  cl_kernel kernel = app_create_kernel(b.program, "stencil");
  const size_t bytes = (size_t)n * sizeof(float);
  float* input = (float*)app_alloc(bytes);
  float* result = (float*)app_alloc(bytes);
  for (uint32_t i = 0; i < n; ++i) input[i] = 1.0f + bench_unit_float(i) + (i == 0 ? 100.0f : 0.0f);
  cl_mem bufs[2];
  bufs[0] = app_create_buffer(b.ctx, CL_MEM_READ_WRITE, bytes, NULL);
  bufs[1] = app_create_buffer(b.ctx, CL_MEM_READ_WRITE, bytes, NULL);
  APP_ARG(kernel, 2, n);
  size_t global = bench_round_up(n, GROUP), local = GROUP;

  BenchTimer t = {0};
  for (long rep = 0; rep < o.reps; ++rep) {
    bench_total_begin(&t);
    APP_CHECK(clEnqueueWriteBuffer(b.queue, bufs[0], CL_TRUE, 0, bytes, input, 0, NULL, NULL));
    bench_kernels_begin(&t);
    for (uint32_t it = 0; it < steps; ++it) {
      APP_ARG(kernel, 0, bufs[it % 2]);
      APP_ARG(kernel, 1, bufs[(it + 1) % 2]);
      APP_CHECK(clEnqueueNDRangeKernel(b.queue, kernel, 1, NULL, &global, &local, 0, NULL, NULL));
      ++t.launches;
    }
    bench_kernels_end(&t, b.queue);
    APP_CHECK(clEnqueueReadBuffer(b.queue, bufs[steps % 2], CL_TRUE, 0, bytes, result, 0, NULL, NULL));
  }
  bench_total_end(&t);

  float* want = (float*)app_alloc(bytes);
  float* scratch = (float*)app_alloc(bytes);
  memcpy(want, input, bytes);
  host_stencil(want, scratch, n, steps);
  app_check_f32("points", result, steps % 2 == 0 ? want : scratch, n);
  bench_print_checksum("points", result, bytes);
  bench_print_times(&t);

  APP_CHECK(clReleaseMemObject(bufs[0]));
  APP_CHECK(clReleaseMemObject(bufs[1]));
  APP_CHECK(clReleaseKernel(kernel));
  bench_close(&b);
  free(input);
  free(result);
  free(want);
  free(scratch);
  return app_finish();
}
