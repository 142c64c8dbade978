/* Irregular: the cost of work-item i grows linearly with i. Item i runs floor(i * I / n) rounds of
 * a 32-bit xorshift (Marsaglia 2003) from a seed of its own and writes the final state, so the last
 * chunk of the range costs far more than the first: an equal split of the index range leaves the
 * first device idle for most of the launch (with 2 devices, the first half is 1/4 of the work).
 *
 * Integer arithmetic only: the results are exact everywhere; sampled items are checked on the host. */
#include "common/bench_util.h"

static const char* kSource =
    "__kernel void ramp(__global uint* out, uint n, uint max_rounds) {\n"
    "  uint i = (uint)get_global_id(0);\n"
    "  if (i >= n) return;\n"
    "  uint rounds = (uint)(((ulong)i * max_rounds) / n);\n"
    "  uint x = i * 2654435761u + 1u;\n"
    "  for (uint r = 0; r < rounds; ++r) {\n"
    "    x ^= x << 13;\n"
    "    x ^= x >> 17;\n"
    "    x ^= x << 5;\n"
    "  }\n"
    "  out[i] = x;\n"
    "}\n";

enum { GROUP = 256, SAMPLES = 256 };

static uint32_t item_reference(uint32_t i, uint32_t n, uint32_t max_rounds) {
  uint32_t rounds = (uint32_t)(((uint64_t)i * max_rounds) / n);
  uint32_t x = i * 2654435761u + 1u;
  for (uint32_t r = 0; r < rounds; ++r) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
  }
  return x;
}

int main(int argc, char** argv) {
  BenchOptions o = bench_parse_options(argc, argv, 1 << 20, 4096, "work-items",
                                       "rounds of the last work-item (item i runs i/n of them)");
  const uint32_t n = (uint32_t)o.size, max_rounds = (uint32_t)o.iters;
  bench_print_work((double)n * max_rounds / 2.0);
  if (o.work_only) return 0;

  BenchContext b = bench_open(&o, kSource, "");
  cl_kernel kernel = app_create_kernel(b.program, "ramp");
  const size_t bytes = (size_t)n * sizeof(uint32_t);
  uint32_t* out = (uint32_t*)app_alloc(bytes);
  cl_mem out_buf = app_create_buffer(b.ctx, CL_MEM_WRITE_ONLY, bytes, NULL);
  APP_ARG(kernel, 0, out_buf);
  APP_ARG(kernel, 1, n);
  APP_ARG(kernel, 2, max_rounds);
  size_t global = bench_round_up(n, GROUP), local = GROUP;

  BenchTimer t = {0};
  for (long rep = 0; rep < o.reps; ++rep) {
    bench_total_begin(&t);
    bench_kernels_begin(&t);
    APP_CHECK(clEnqueueNDRangeKernel(b.queue, kernel, 1, NULL, &global, &local, 0, NULL, NULL));
    ++t.launches;
    bench_kernels_end(&t, b.queue);
    APP_CHECK(clEnqueueReadBuffer(b.queue, out_buf, CL_TRUE, 0, bytes, out, 0, NULL, NULL));
  }
  bench_total_end(&t);

  size_t idx[SAMPLES];
  uint32_t got[SAMPLES], want[SAMPLES];
  bench_sample_indices(n, SAMPLES, idx);
  for (size_t k = 0; k < SAMPLES; ++k) {
    got[k] = out[idx[k]];
    want[k] = item_reference((uint32_t)idx[k], n, max_rounds);
  }
  app_check_u32("out", got, want, SAMPLES);
  bench_print_checksum("out", out, bytes);
  bench_print_times(&t);

  APP_CHECK(clReleaseMemObject(out_buf));
  APP_CHECK(clReleaseKernel(kernel));
  bench_close(&b);
  free(out);
  return app_finish();
}
