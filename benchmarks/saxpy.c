/* Memory-bound: y = a * x + y over S floats, in place. Two loads, one store and two flops per
 * element: on a GPU the kernel itself takes well under a millisecond per GiB, so what a run
 * measures is mostly moving x and y to the device and y back (pageable host memory, as ordinary
 * programs have). coex must not make this slower than the best single device (issue 6). Every
 * repetition writes fresh x and y, launches once and reads y. Sampled elements are checked. */
#include "common/bench_util.h"

static const char* kSource =
    "#pragma OPENCL FP_CONTRACT OFF\n"
    "__kernel void saxpy(__global const float* x, __global float* y, float a, uint n) {\n"
    "  uint i = (uint)get_global_id(0);\n"
    "  if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n";

enum { GROUP = 256, SAMPLES = 1024 };

int main(int argc, char** argv) {
  BenchOptions o = bench_parse_options(argc, argv, 1 << 24, 1, "elements", NULL);
  const uint32_t n = (uint32_t)o.size;
  bench_print_work((double)n);
  if (o.work_only) return 0;

  BenchContext b = bench_open(&o, kSource, "");
  cl_kernel kernel = app_create_kernel(b.program, "saxpy");
  const size_t bytes = (size_t)n * sizeof(float);
  float* x = (float*)app_alloc(bytes);
  float* y = (float*)app_alloc(bytes);
  float* result = (float*)app_alloc(bytes);
  for (size_t i = 0; i < n; ++i) {
    x[i] = bench_unit_float(2 * (uint64_t)i) + 0.5f;
    y[i] = bench_unit_float(2 * (uint64_t)i + 1) * 4.0f - 2.0f;
  }
  cl_mem x_buf = app_create_buffer(b.ctx, CL_MEM_READ_ONLY, bytes, NULL);
  cl_mem y_buf = app_create_buffer(b.ctx, CL_MEM_READ_WRITE, bytes, NULL);
  const float a = 1.75f;
  APP_ARG(kernel, 0, x_buf);
  APP_ARG(kernel, 1, y_buf);
  APP_ARG(kernel, 2, a);
  APP_ARG(kernel, 3, n);
  size_t global = bench_round_up(n, GROUP), local = GROUP;

  BenchTimer t = {0};
  for (long rep = 0; rep < o.reps; ++rep) {
    bench_total_begin(&t);
    APP_CHECK(clEnqueueWriteBuffer(b.queue, x_buf, CL_TRUE, 0, bytes, x, 0, NULL, NULL));
    APP_CHECK(clEnqueueWriteBuffer(b.queue, y_buf, CL_TRUE, 0, bytes, y, 0, NULL, NULL));
    bench_kernels_begin(&t);
    APP_CHECK(clEnqueueNDRangeKernel(b.queue, kernel, 1, NULL, &global, &local, 0, NULL, NULL));
    ++t.launches;
    bench_kernels_end(&t, b.queue);
    APP_CHECK(clEnqueueReadBuffer(b.queue, y_buf, CL_TRUE, 0, bytes, result, 0, NULL, NULL));
  }
  bench_total_end(&t);

  size_t idx[SAMPLES];
  float got[SAMPLES], want[SAMPLES];
  bench_sample_indices(n, SAMPLES, idx);
  for (size_t k = 0; k < SAMPLES; ++k) {
    got[k] = result[idx[k]];
    want[k] = a * x[idx[k]] + y[idx[k]];
  }
  app_check_f32("y", got, want, SAMPLES);
  bench_print_checksum("y", result, bytes);
  bench_print_times(&t);

  APP_CHECK(clReleaseMemObject(x_buf));
  APP_CHECK(clReleaseMemObject(y_buf));
  APP_CHECK(clReleaseKernel(kernel));
  bench_close(&b);
  free(x);
  free(y);
  free(result);
  return app_finish();
}
