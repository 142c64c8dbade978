/* A large buffer processed slice by slice: a kernel without loops (a hash of a few dozen integer
 * steps per element) launched over each sixteenth of S elements in turn, with a global offset and
 * no local size, as a program that works through more data than it wants in one launch does. Each
 * launch reads and writes its slice alone: a split of it moves a sixteenth of the buffers, not the
 * buffers. Every repetition writes the input, runs the sixteen slices --iters times (each pass
 * hashes the slice again, a pass number in the seed) and reads the output. Sampled elements are
 * checked. */
#include "common/bench_util.h"

#define STEP "  v = v * 1664525u + 1013904223u; v ^= v >> 13;\n"
#define STEPS8 STEP STEP STEP STEP STEP STEP STEP STEP

static const char* kSource =
    "__kernel void hash(__global const uint* in, __global uint* out, uint pass) {\n"
    "  size_t i = get_global_id(0);\n"
    "  uint v = in[i] ^ pass;\n" STEPS8 STEPS8 STEPS8 STEPS8 STEPS8 STEPS8 STEPS8 STEPS8
    "  out[i] = v;\n"
    "}\n";

enum { SLICES = 16, STEP_COUNT = 64, SAMPLES = 1024 };

int main(int argc, char** argv) {
  BenchOptions o = bench_parse_options(argc, argv, 1 << 24, 1, "elements (a multiple of 16)", "passes over the slices");
  const size_t n = (size_t)o.size / SLICES * SLICES, slice = n / SLICES;
  bench_print_work((double)n * (double)o.iters * STEP_COUNT);
  if (o.work_only) return 0;

  BenchContext b = bench_open(&o, kSource, "");
  cl_kernel kernel = app_create_kernel(b.program, "hash");
  const size_t bytes = n * sizeof(uint32_t);
  uint32_t* in = (uint32_t*)app_alloc(bytes);
  uint32_t* result = (uint32_t*)app_alloc(bytes);
  uint32_t seed = 3;
  for (size_t i = 0; i < n; ++i) in[i] = app_rand(&seed);
  cl_mem in_buf = app_create_buffer(b.ctx, CL_MEM_READ_ONLY, bytes, NULL);
  cl_mem out_buf = app_create_buffer(b.ctx, CL_MEM_WRITE_ONLY, bytes, NULL);
  APP_ARG(kernel, 0, in_buf);
  APP_ARG(kernel, 1, out_buf);

  BenchTimer t = {0};
  for (long rep = 0; rep < o.reps; ++rep) {
    bench_total_begin(&t);
    APP_CHECK(clEnqueueWriteBuffer(b.queue, in_buf, CL_TRUE, 0, bytes, in, 0, NULL, NULL));
    bench_kernels_begin(&t);
    for (long pass = 0; pass < o.iters; ++pass) {
      const cl_uint p = (cl_uint)pass;
      APP_ARG(kernel, 2, p);
      for (size_t s = 0; s < SLICES; ++s) {
        const size_t offset = s * slice;
        APP_CHECK(clEnqueueNDRangeKernel(b.queue, kernel, 1, &offset, &slice, NULL, 0, NULL, NULL));
        ++t.launches;
      }
    }
    bench_kernels_end(&t, b.queue);
    APP_CHECK(clEnqueueReadBuffer(b.queue, out_buf, CL_TRUE, 0, bytes, result, 0, NULL, NULL));
  }
  bench_total_end(&t);

  size_t idx[SAMPLES];
  uint32_t got[SAMPLES], want[SAMPLES];
  bench_sample_indices(n, SAMPLES, idx);
  for (size_t k = 0; k < SAMPLES; ++k) {
    uint32_t v = in[idx[k]] ^ (uint32_t)(o.iters - 1);
    for (int s = 0; s < STEP_COUNT; ++s) {
      v = v * 1664525u + 1013904223u;
      v ^= v >> 13;
    }
    got[k] = result[idx[k]];
    want[k] = v;
  }
  app_check_u32("out", got, want, SAMPLES);
  bench_print_checksum("out", result, bytes);
  bench_print_times(&t);

  APP_CHECK(clReleaseMemObject(in_buf));
  APP_CHECK(clReleaseMemObject(out_buf));
  APP_CHECK(clReleaseKernel(kernel));
  bench_close(&b);
  free(in);
  free(result);
  return app_finish();
}
