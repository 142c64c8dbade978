/* Memory-bound with a halo: a 5 x 5 box blur of an S x S float image, edges clamped. Each output
 * row reads two rows above and below it, so a chunk of rows needs 4 rows beyond its own. One launch
 * per repetition, with the image written before and the result read after. Sums in a fixed order
 * (rows, then columns) under FP_CONTRACT OFF: exact everywhere; sampled pixels are checked. */
#include "common/bench_util.h"

static const char* kSource =
    "#pragma OPENCL FP_CONTRACT OFF\n"
    "__kernel void blur5(__global const float* src, __global float* dst, uint w, uint h) {\n"
    "  uint x = (uint)get_global_id(0), y = (uint)get_global_id(1);\n"
    "  if (x >= w || y >= h) return;\n"
    "  float s = 0.0f;\n"
    "  for (int dy = -2; dy <= 2; ++dy) {\n"
    "    int yy = clamp((int)y + dy, 0, (int)h - 1);\n"
    "    for (int dx = -2; dx <= 2; ++dx) {\n"
    "      int xx = clamp((int)x + dx, 0, (int)w - 1);\n"
    "      s = s + src[(uint)yy * w + (uint)xx];\n"
    "    }\n"
    "  }\n"
    "  dst[y * w + x] = s * 0.04f;\n"
    "}\n";

enum { TILE = 16, SAMPLES = 1024 };

static int clamp_int(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

static float pixel_reference(const float* src, uint32_t w, uint32_t h, uint32_t x, uint32_t y) {
  float s = 0.0f;
  for (int dy = -2; dy <= 2; ++dy) {
    int yy = clamp_int((int)y + dy, 0, (int)h - 1);
    for (int dx = -2; dx <= 2; ++dx) {
      int xx = clamp_int((int)x + dx, 0, (int)w - 1);
      s = s + src[(size_t)yy * w + (size_t)xx];
    }
  }
  return s * 0.04f;
}

int main(int argc, char** argv) {
  BenchOptions o = bench_parse_options(argc, argv, 2048, 1, "image side in pixels", NULL);
  const uint32_t w = (uint32_t)o.size, h = (uint32_t)o.size;
  bench_print_work((double)w * h);
  if (o.work_only) return 0;

  BenchContext b = bench_open(&o, kSource, "");
  cl_kernel kernel = app_create_kernel(b.program, "blur5");
  const size_t count = (size_t)w * h, bytes = count * sizeof(float);
  float* src = (float*)app_alloc(bytes);
  float* dst = (float*)app_alloc(bytes);
  /* Values in [1/256, 1]: far from denormals, which a device might flush. */
  for (size_t i = 0; i < count; ++i) src[i] = 0.00390625f + bench_unit_float(i) * 0.99609375f;
  cl_mem src_buf = app_create_buffer(b.ctx, CL_MEM_READ_ONLY, bytes, NULL);
  cl_mem dst_buf = app_create_buffer(b.ctx, CL_MEM_WRITE_ONLY, bytes, NULL);
  APP_ARG(kernel, 0, src_buf);
  APP_ARG(kernel, 1, dst_buf);
  APP_ARG(kernel, 2, w);
  APP_ARG(kernel, 3, h);
  size_t global[2] = {bench_round_up(w, TILE), bench_round_up(h, TILE)}, local[2] = {TILE, TILE};

  BenchTimer t = {0};
  for (long rep = 0; rep < o.reps; ++rep) {
    bench_total_begin(&t);
    APP_CHECK(clEnqueueWriteBuffer(b.queue, src_buf, CL_TRUE, 0, bytes, src, 0, NULL, NULL));
    bench_kernels_begin(&t);
    APP_CHECK(clEnqueueNDRangeKernel(b.queue, kernel, 2, NULL, global, local, 0, NULL, NULL));
    ++t.launches;
    bench_kernels_end(&t, b.queue);
    APP_CHECK(clEnqueueReadBuffer(b.queue, dst_buf, CL_TRUE, 0, bytes, dst, 0, NULL, NULL));
  }
  bench_total_end(&t);

  size_t idx[SAMPLES];
  float got[SAMPLES], want[SAMPLES];
  bench_sample_indices(count, SAMPLES, idx);
  for (size_t k = 0; k < SAMPLES; ++k) {
    got[k] = dst[idx[k]];
    want[k] = pixel_reference(src, w, h, (uint32_t)(idx[k] % w), (uint32_t)(idx[k] / w));
  }
  app_check_f32("image", got, want, SAMPLES);
  bench_print_checksum("image", dst, bytes);
  bench_print_times(&t);

  APP_CHECK(clReleaseMemObject(src_buf));
  APP_CHECK(clReleaseMemObject(dst_buf));
  APP_CHECK(clReleaseKernel(kernel));
  bench_close(&b);
  free(src);
  free(dst);
  return app_finish();
}
