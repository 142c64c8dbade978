/* Iterative: 2-D Jacobi relaxation on an S x S float grid, --iters sweeps (default 100) per
 * repetition, ping-pong between two buffers (the arguments are swapped between launches). Each
 * sweep reads one row above and below its own, so when a launch is split, each device needs the
 * rows next to its chunk that another device computed in the previous sweep (halos); the grid
 * itself should stay where it is between sweeps (DESIGN.md decision 5).
 *
 * The interior starts in [1, 2), the edges are held at fixed values: every value stays in [1, 100],
 * far from denormals. Checked on sampled cells: after k sweeps a cell depends only on the cells
 * within k of it, so the host relaxes a (2k+1)^2 window around each sample, not the whole grid. */
#include "common/bench_util.h"

static const char* kSource =
    "#pragma OPENCL FP_CONTRACT OFF\n"
    "__kernel void jacobi(__global const float* src, __global float* dst, uint w, uint h) {\n"
    "  uint x = (uint)get_global_id(0), y = (uint)get_global_id(1);\n"
    "  if (x >= w || y >= h) return;\n"
    "  uint i = y * w + x;\n"
    "  if (x == 0 || y == 0 || x == w - 1 || y == h - 1) {\n"
    "    dst[i] = src[i];\n"
    "    return;\n"
    "  }\n"
    "  float s = src[i - w] + src[i + w];\n"
    "  s = s + src[i - 1];\n"
    "  s = s + src[i + 1];\n"
    "  dst[i] = s * 0.25f;\n"
    "}\n";

enum { TILE = 16, SAMPLES = 12 };

static float initial_value(uint32_t x, uint32_t y, uint32_t w, uint32_t h) {
  if (y == 0) return 100.0f;
  if (x == 0) return 50.0f + (float)(y % 7);
  if (x == w - 1 || y == h - 1) return 1.0f;
  return 1.0f + bench_unit_float((uint64_t)y * w + x);
}

/* The value of cell (cx, cy) after `sweeps` sweeps, from the window of cells within `sweeps` of
 * it. Window cells on the window's border (but not on the grid's) are never updated: their error
 * moves one cell per sweep and does not reach the centre in time. */
static float cell_reference(uint32_t cx, uint32_t cy, uint32_t w, uint32_t h, uint32_t sweeps) {
  uint32_t x0 = cx > sweeps ? cx - sweeps : 0, y0 = cy > sweeps ? cy - sweeps : 0;
  uint32_t x1 = cx + sweeps < w - 1 ? cx + sweeps : w - 1, y1 = cy + sweeps < h - 1 ? cy + sweeps : h - 1;
  uint32_t ww = x1 - x0 + 1, wh = y1 - y0 + 1;
  float* a = (float*)app_alloc((size_t)ww * wh * sizeof(float));
  float* b = (float*)app_alloc((size_t)ww * wh * sizeof(float));
  for (uint32_t y = 0; y < wh; ++y)
    for (uint32_t x = 0; x < ww; ++x) a[y * ww + x] = initial_value(x0 + x, y0 + y, w, h);
  for (uint32_t it = 0; it < sweeps; ++it) {
    for (uint32_t y = 0; y < wh; ++y)
      for (uint32_t x = 0; x < ww; ++x) {
        uint32_t gx = x0 + x, gy = y0 + y, i = y * ww + x;
        int grid_edge = gx == 0 || gy == 0 || gx == w - 1 || gy == h - 1;
        int window_edge = x == 0 || y == 0 || x == ww - 1 || y == wh - 1;
        if (grid_edge || window_edge) {
          b[i] = a[i];
          continue;
        }
        float s = a[i - ww] + a[i + ww];
        s = s + a[i - 1];
        s = s + a[i + 1];
        b[i] = s * 0.25f;
      }
    float* t = a;
    a = b;
    b = t;
  }
  float v = a[(cy - y0) * ww + (cx - x0)];
  free(a);
  free(b);
  return v;
}

int main(int argc, char** argv) {
  BenchOptions o = bench_parse_options(argc, argv, 2048, 100, "grid side", "sweeps per repetition");
  const uint32_t w = (uint32_t)o.size, h = (uint32_t)o.size, sweeps = (uint32_t)o.iters;
  bench_print_work((double)w * h * sweeps);
  if (o.work_only) return 0;
  if (w < 3) {
    printf("error: --size must be at least 3\nFAIL\n");
    return 2;
  }

  BenchContext b = bench_open(&o, kSource, "");
  cl_kernel kernel = app_create_kernel(b.program, "jacobi");
  const size_t count = (size_t)w * h, bytes = count * sizeof(float);
  float* grid = (float*)app_alloc(bytes);
  float* result = (float*)app_alloc(bytes);
  for (uint32_t y = 0; y < h; ++y)
    for (uint32_t x = 0; x < w; ++x) grid[(size_t)y * w + x] = initial_value(x, y, w, h);
  cl_mem bufs[2];
  bufs[0] = app_create_buffer(b.ctx, CL_MEM_READ_WRITE, bytes, NULL);
  bufs[1] = app_create_buffer(b.ctx, CL_MEM_READ_WRITE, bytes, NULL);
  APP_ARG(kernel, 2, w);
  APP_ARG(kernel, 3, h);
  size_t global[2] = {bench_round_up(w, TILE), bench_round_up(h, TILE)}, local[2] = {TILE, TILE};

  BenchTimer t = {0};
  for (long rep = 0; rep < o.reps; ++rep) {
    bench_total_begin(&t);
    APP_CHECK(clEnqueueWriteBuffer(b.queue, bufs[0], CL_TRUE, 0, bytes, grid, 0, NULL, NULL));
    bench_kernels_begin(&t);
    for (uint32_t it = 0; it < sweeps; ++it) {
      APP_ARG(kernel, 0, bufs[it % 2]);
      APP_ARG(kernel, 1, bufs[(it + 1) % 2]);
      APP_CHECK(clEnqueueNDRangeKernel(b.queue, kernel, 2, NULL, global, local, 0, NULL, NULL));
      ++t.launches;
    }
    bench_kernels_end(&t, b.queue);
    APP_CHECK(clEnqueueReadBuffer(b.queue, bufs[sweeps % 2], CL_TRUE, 0, bytes, result, 0, NULL, NULL));
  }
  bench_total_end(&t);

  size_t idx[SAMPLES];
  float got[SAMPLES], want[SAMPLES];
  bench_sample_indices(count, SAMPLES, idx);
  for (size_t k = 0; k < SAMPLES; ++k) {
    got[k] = result[idx[k]];
    want[k] = cell_reference((uint32_t)(idx[k] % w), (uint32_t)(idx[k] / w), w, h, sweeps);
  }
  app_check_f32("grid", got, want, SAMPLES);
  bench_print_checksum("grid", result, bytes);
  bench_print_times(&t);

  APP_CHECK(clReleaseMemObject(bufs[0]));
  APP_CHECK(clReleaseMemObject(bufs[1]));
  APP_CHECK(clReleaseKernel(kernel));
  bench_close(&b);
  free(grid);
  free(result);
  return app_finish();
}
