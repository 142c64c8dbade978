/* The fixed cost of a split launch (docs/performance.md, "The cost of a split launch"): --iters
 * launches of a kernel that does almost nothing per work-item over --size work-items, enqueued back
 * to back on one in-order queue with one clFinish at the end (or after every launch with --sync).
 * Prints the wall time per launch and the checksum of the result, so that runs bare, under coex
 * unsplit and under coex split can be set side by side: the difference per launch is what a split
 * costs beyond the work. scripts/bench-split-cost runs it. */
#include "common/bench_util.h"

static const char* kSource =
    "__kernel void advance(__global float* y, __global const float* x, float a) {\n"
    "  size_t i = get_global_id(0);\n"
    "  y[i] = a * x[i] + y[i];\n"
    "}\n";

enum { GROUP = 64 };

int main(int argc, char** argv) {
  /* --sync is this benchmark's own; the rest are the benchmarks' common options. */
  int sync = 0, kept = 0;
  for (int i = 0; i < argc; ++i) {
    if (i > 0 && strcmp(argv[i], "--sync") == 0)
      sync = 1;
    else
      argv[kept++] = argv[i];
  }
  BenchOptions o = bench_parse_options(
      kept, argv, 65536, 10000, "work-items (rounded up to a multiple of 64; --sync: clFinish after each launch)",
      "launches");
  const size_t items = bench_round_up((size_t)o.size, GROUP), local = GROUP;
  bench_print_work((double)items * (double)o.iters);
  if (o.work_only) return 0;

  BenchContext b = bench_open(&o, kSource, "");
  cl_kernel kernel = app_create_kernel(b.program, "advance");
  const size_t bytes = items * sizeof(float);
  float* host = (float*)app_alloc(bytes);
  for (size_t i = 0; i < items; ++i) host[i] = (float)(i % 1000) * 0.001f;
  cl_mem x = app_create_buffer(b.ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, host);
  cl_mem y = app_create_buffer(b.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, host);
  const float a = 0.0001f;
  APP_ARG(kernel, 0, y);
  APP_ARG(kernel, 1, x);
  APP_ARG(kernel, 2, a);
  /* One launch first, outside the timing: the driver's compile of the kernel. */
  APP_CHECK(clEnqueueNDRangeKernel(b.queue, kernel, 1, NULL, &items, &local, 0, NULL, NULL));
  APP_CHECK(clFinish(b.queue));
  const double started = bench_now();
  for (long l = 1; l < o.iters; ++l) {
    APP_CHECK(clEnqueueNDRangeKernel(b.queue, kernel, 1, NULL, &items, &local, 0, NULL, NULL));
    if (sync) APP_CHECK(clFinish(b.queue));
  }
  APP_CHECK(clFinish(b.queue));
  const double elapsed = bench_now() - started;
  APP_CHECK(clEnqueueReadBuffer(b.queue, y, CL_TRUE, 0, bytes, host, 0, NULL, NULL));
  printf("launches %ld\nms_per_launch %.4f\n", o.iters, o.iters > 1 ? elapsed * 1e3 / (double)(o.iters - 1) : 0.0);
  bench_print_checksum("y", host, bytes);
  APP_CHECK(clReleaseMemObject(x));
  APP_CHECK(clReleaseMemObject(y));
  APP_CHECK(clReleaseKernel(kernel));
  bench_close(&b);
  free(host);
  return 0;
}
