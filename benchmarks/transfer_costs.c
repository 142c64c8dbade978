/* What one device costs per command and per byte, as seen from the host (docs/remote.md): run bare on
 * one device (PoCL's remote driver in scripts/remote-demo), it measures
 *   command_latency_s   a blocking 4-byte clEnqueueReadBuffer: one command's round trip
 *   launch_latency_s    a one-work-item launch of an empty kernel and its clFinish
 *   write_gbs/read_gbs  blocking clEnqueueWriteBuffer/ReadBuffer of --size MiB, the best of --reps
 * each latency the median of --iters tries. The simulator's remote scenarios (config/scenarios/remote-*)
 * take their per-chunk latency and bandwidth from these lines. */
#include "common/bench_util.h"

static const char* kSource = "__kernel void nothing(__global int* x) { if (x[0] == 12345) x[0] = 0; }\n";

static int compare_doubles(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static double median(double* values, long n) {
  qsort(values, (size_t)n, sizeof(double), compare_doubles);
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

int main(int argc, char** argv) {
  BenchOptions o = bench_parse_options(argc, argv, 64, 200, "MiB moved by each bandwidth try", "tries per latency");
  const size_t bytes = (size_t)o.size << 20;
  bench_print_work((double)bytes);
  if (o.work_only) return 0;

  BenchContext b = bench_open(&o, kSource, "");
  cl_kernel kernel = app_create_kernel(b.program, "nothing");
  unsigned char* host = (unsigned char*)app_alloc(bytes);
  memset(host, 7, bytes);
  cl_mem big = app_create_buffer(b.ctx, CL_MEM_READ_WRITE, bytes, NULL);
  cl_mem small = app_create_buffer(b.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, 4, host);
  APP_ARG(kernel, 0, small);
  const size_t one = 1;
  /* The driver's compile of the kernel and the buffers' first allocation stay out of the timing. */
  APP_CHECK(clEnqueueNDRangeKernel(b.queue, kernel, 1, NULL, &one, NULL, 0, NULL, NULL));
  APP_CHECK(clEnqueueWriteBuffer(b.queue, big, CL_TRUE, 0, bytes, host, 0, NULL, NULL));
  APP_CHECK(clFinish(b.queue));

  double* tries = (double*)app_alloc((size_t)o.iters * sizeof(double));
  int word = 0;
  for (long i = 0; i < o.iters; ++i) {
    const double t = bench_now();
    APP_CHECK(clEnqueueReadBuffer(b.queue, small, CL_TRUE, 0, sizeof(word), &word, 0, NULL, NULL));
    tries[i] = bench_now() - t;
  }
  printf("command_latency_s %.6e\n", median(tries, o.iters));
  for (long i = 0; i < o.iters; ++i) {
    const double t = bench_now();
    APP_CHECK(clEnqueueNDRangeKernel(b.queue, kernel, 1, NULL, &one, NULL, 0, NULL, NULL));
    APP_CHECK(clFinish(b.queue));
    tries[i] = bench_now() - t;
  }
  printf("launch_latency_s %.6e\n", median(tries, o.iters));
  double best_write = 1e30, best_read = 1e30;
  for (long r = 0; r < o.reps; ++r) {
    double t = bench_now();
    APP_CHECK(clEnqueueWriteBuffer(b.queue, big, CL_TRUE, 0, bytes, host, 0, NULL, NULL));
    const double w = bench_now() - t;
    t = bench_now();
    APP_CHECK(clEnqueueReadBuffer(b.queue, big, CL_TRUE, 0, bytes, host, 0, NULL, NULL));
    const double rd = bench_now() - t;
    best_write = w < best_write ? w : best_write;
    best_read = rd < best_read ? rd : best_read;
  }
  printf("write_gbs %.4f\nread_gbs %.4f\n", (double)bytes / best_write * 1e-9, (double)bytes / best_read * 1e-9);
  bench_print_checksum("big", host, bytes);
  free(tries);
  free(host);
  APP_CHECK(clReleaseMemObject(big));
  APP_CHECK(clReleaseMemObject(small));
  APP_CHECK(clReleaseKernel(kernel));
  bench_close(&b);
  printf("PASS\n");
  return 0;
}
