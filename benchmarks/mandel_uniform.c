/* Compute-bound, regular: the Mandelbrot iteration with the same number of iterations at every
 * point. A point that escapes stops changing (a select, not a branch out of the loop), so every
 * work-item does exactly --iters iterations: the cost per point is uniform. The output is the
 * number of iterations each point stayed inside |z| <= 2.
 *
 * 2-D launch over an S x S image of [-2, 1] x [-1.5, 1.5], 16 x 16 work-groups. Only +, -, * and
 * comparisons, under FP_CONTRACT OFF: every device and the host round the same way, so the counts
 * are exact everywhere (sampled points are checked against the host). */
#include "common/bench_util.h"

static const char* kSource =
    "#pragma OPENCL FP_CONTRACT OFF\n"
    "__kernel void mandel_uniform(__global uint* out, uint w, uint h, float x0, float y0,\n"
    "                             float step, uint iters) {\n"
    "  uint x = (uint)get_global_id(0), y = (uint)get_global_id(1);\n"
    "  if (x >= w || y >= h) return;\n"
    "  float cr = x0 + (float)x * step, ci = y0 + (float)y * step;\n"
    "  float zr = 0.0f, zi = 0.0f;\n"
    "  uint inside = 0;\n"
    "  for (uint k = 0; k < iters; ++k) {\n"
    "    float zr2 = zr * zr, zi2 = zi * zi;\n"
    "    int alive = zr2 + zi2 <= 4.0f;\n"
    "    float nzi = (zr + zr) * zi + ci;\n"
    "    float nzr = (zr2 - zi2) + cr;\n"
    "    zr = alive ? nzr : zr;\n"
    "    zi = alive ? nzi : zi;\n"
    "    inside += alive ? 1u : 0u;\n"
    "  }\n"
    "  out[y * w + x] = inside;\n"
    "}\n";

enum { TILE = 16, SAMPLES = 256 };

static uint32_t point_reference(uint32_t x, uint32_t y, float x0, float y0, float step, uint32_t iters) {
  float cr = x0 + (float)x * step, ci = y0 + (float)y * step;
  float zr = 0.0f, zi = 0.0f;
  uint32_t inside = 0;
  for (uint32_t k = 0; k < iters; ++k) {
    float zr2 = zr * zr, zi2 = zi * zi;
    int alive = zr2 + zi2 <= 4.0f;
    float nzi = (zr + zr) * zi + ci;
    float nzr = (zr2 - zi2) + cr;
    zr = alive ? nzr : zr;
    zi = alive ? nzi : zi;
    inside += alive ? 1u : 0u;
  }
  return inside;
}

int main(int argc, char** argv) {
  BenchOptions o = bench_parse_options(argc, argv, 1024, 4096, "image side in pixels",
                                       "iterations at every point");
  const uint32_t w = (uint32_t)o.size, h = (uint32_t)o.size, iters = (uint32_t)o.iters;
  bench_print_work((double)w * h * iters);
  if (o.work_only) return 0;

  BenchContext b = bench_open(&o, kSource, "");
  cl_kernel kernel = app_create_kernel(b.program, "mandel_uniform");
  const size_t count = (size_t)w * h, bytes = count * sizeof(uint32_t);
  uint32_t* image = (uint32_t*)app_alloc(bytes);
  cl_mem out = app_create_buffer(b.ctx, CL_MEM_WRITE_ONLY, bytes, NULL);
  const float x0 = -2.0f, y0 = -1.5f, step = 3.0f / (float)w;
  APP_ARG(kernel, 0, out);
  APP_ARG(kernel, 1, w);
  APP_ARG(kernel, 2, h);
  APP_ARG(kernel, 3, x0);
  APP_ARG(kernel, 4, y0);
  APP_ARG(kernel, 5, step);
  APP_ARG(kernel, 6, iters);
  size_t global[2] = {bench_round_up(w, TILE), bench_round_up(h, TILE)}, local[2] = {TILE, TILE};

  BenchTimer t = {0};
  for (long rep = 0; rep < o.reps; ++rep) {
    bench_total_begin(&t);  /* no input: the kernel phase is the first command */
    bench_kernels_begin(&t);
    APP_CHECK(clEnqueueNDRangeKernel(b.queue, kernel, 2, NULL, global, local, 0, NULL, NULL));
    ++t.launches;
    bench_kernels_end(&t, b.queue);
    APP_CHECK(clEnqueueReadBuffer(b.queue, out, CL_TRUE, 0, bytes, image, 0, NULL, NULL));
  }
  bench_total_end(&t);

  size_t idx[SAMPLES];
  uint32_t got[SAMPLES], want[SAMPLES];
  bench_sample_indices(count, SAMPLES, idx);
  for (size_t k = 0; k < SAMPLES; ++k) {
    got[k] = image[idx[k]];
    want[k] = point_reference((uint32_t)(idx[k] % w), (uint32_t)(idx[k] / w), x0, y0, step, iters);
  }
  app_check_u32("image", got, want, SAMPLES);
  bench_print_checksum("image", image, bytes);
  bench_print_times(&t);

  APP_CHECK(clReleaseMemObject(out));
  APP_CHECK(clReleaseKernel(kernel));
  bench_close(&b);
  free(image);
  return app_finish();
}
