/* Irregular: the Mandelbrot set proper, escape time up to --iters iterations. The window
 * [-2.0, 0.6] x [-0.1, 1.2] is deliberately off the real axis: rows near y = 0 cross the main
 * cardioid and the period-2 bulb and run to the iteration limit, rows near the top escape at
 * once. Since coex splits rows (the outermost dimension), an equal split of rows is far from an
 * equal split of work, and the cost varies from one row to the next.
 *
 * 2-D launch over S x S/2 pixels, 16 x 16 work-groups. Only +, -, * and comparisons under
 * FP_CONTRACT OFF: counts are exact on every device (sampled points are checked on the host). */
#include "common/bench_util.h"

static const char* kSource =
    "#pragma OPENCL FP_CONTRACT OFF\n"
    "__kernel void mandelbrot(__global uint* out, uint w, uint h, float x0, float y0,\n"
    "                         float step, uint max_iters) {\n"
    "  uint x = (uint)get_global_id(0), y = (uint)get_global_id(1);\n"
    "  if (x >= w || y >= h) return;\n"
    "  float cr = x0 + (float)x * step, ci = y0 + (float)y * step;\n"
    "  float zr = 0.0f, zi = 0.0f, zr2 = 0.0f, zi2 = 0.0f;\n"
    "  uint k = 0;\n"
    "  while (k < max_iters && zr2 + zi2 <= 4.0f) {\n"
    "    zi = (zr + zr) * zi + ci;\n"
    "    zr = (zr2 - zi2) + cr;\n"
    "    zr2 = zr * zr;\n"
    "    zi2 = zi * zi;\n"
    "    ++k;\n"
    "  }\n"
    "  out[y * w + x] = k;\n"
    "}\n";

enum { TILE = 16, SAMPLES = 256 };

static uint32_t point_reference(uint32_t x, uint32_t y, float x0, float y0, float step, uint32_t max_iters) {
  float cr = x0 + (float)x * step, ci = y0 + (float)y * step;
  float zr = 0.0f, zi = 0.0f, zr2 = 0.0f, zi2 = 0.0f;
  uint32_t k = 0;
  while (k < max_iters && zr2 + zi2 <= 4.0f) {
    zi = (zr + zr) * zi + ci;
    zr = (zr2 - zi2) + cr;
    zr2 = zr * zr;
    zi2 = zi * zi;
    ++k;
  }
  return k;
}

int main(int argc, char** argv) {
  BenchOptions o = bench_parse_options(argc, argv, 1024, 4096, "image width in pixels (height: half)",
                                       "iteration limit");
  const uint32_t w = (uint32_t)o.size, h = (uint32_t)(o.size / 2 > 0 ? o.size / 2 : 1);
  const uint32_t max_iters = (uint32_t)o.iters;
  /* An upper bound: the share of points that reach the limit is fixed by the window, so the
   * real work scales like this bound. */
  bench_print_work((double)w * h * max_iters);
  if (o.work_only) return 0;

  BenchContext b = bench_open(&o, kSource, "");
  cl_kernel kernel = app_create_kernel(b.program, "mandelbrot");
  const size_t count = (size_t)w * h, bytes = count * sizeof(uint32_t);
  uint32_t* image = (uint32_t*)app_alloc(bytes);
  cl_mem out = app_create_buffer(b.ctx, CL_MEM_WRITE_ONLY, bytes, NULL);
  const float x0 = -2.0f, y0 = -0.1f, step = 2.6f / (float)w;
  APP_ARG(kernel, 0, out);
  APP_ARG(kernel, 1, w);
  APP_ARG(kernel, 2, h);
  APP_ARG(kernel, 3, x0);
  APP_ARG(kernel, 4, y0);
  APP_ARG(kernel, 5, step);
  APP_ARG(kernel, 6, max_iters);
  size_t global[2] = {bench_round_up(w, TILE), bench_round_up(h, TILE)}, local[2] = {TILE, TILE};

  BenchTimer t = {0};
  for (long rep = 0; rep < o.reps; ++rep) {
    bench_total_begin(&t);
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
    want[k] = point_reference((uint32_t)(idx[k] % w), (uint32_t)(idx[k] / w), x0, y0, step, max_iters);
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
