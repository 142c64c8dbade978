/* An iterative ping-pong stencil: 20 sweeps of 2-D Jacobi relaxation on a W x H float grid with an
 * explicit 16 x 16 local size, swapping the two buffer arguments between sweeps. Each sweep reads
 * the rows next to its own (halos), so a split launch needs data another device computed. */
#include "common/app_util.h"

static const char* kSource =
    "#pragma OPENCL FP_CONTRACT OFF\n"
    "__kernel void jacobi(__global const float* src, __global float* dst, uint w, uint h) {\n"
    "  uint x = (uint)get_global_id(0), y = (uint)get_global_id(1);\n"
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

enum { W = 320, H = 256, ITERATIONS = 20, TILE = 16 };

static void jacobi_reference(const float* src, float* dst) {
  for (uint32_t y = 0; y < H; ++y)
    for (uint32_t x = 0; x < W; ++x) {
      uint32_t i = y * W + x;
      if (x == 0 || y == 0 || x == W - 1 || y == H - 1) {
        dst[i] = src[i];
        continue;
      }
      float s = src[i - W] + src[i + W];
      s = s + src[i - 1];
      s = s + src[i + 1];
      dst[i] = s * 0.25f;
    }
}

int main(void) {
  cl_platform_id platform;
  cl_device_id device;
  app_pick_device(&platform, &device);
  cl_context ctx = app_create_context(platform, device);
  cl_command_queue q = app_create_queue(ctx, device, 0);
  cl_program program = app_build_program(ctx, device, 1, &kSource, "");
  cl_kernel jacobi = app_create_kernel(program, "jacobi");

  const size_t bytes = (size_t)W * H * sizeof(float);
  float* grid = (float*)app_alloc(bytes);
  float* ref_a = (float*)app_alloc(bytes);
  float* ref_b = (float*)app_alloc(bytes);
  /* Hot top edge, a warm left edge, a few warm cells inside: values stay far from denormals. */
  for (uint32_t y = 0; y < H; ++y)
    for (uint32_t x = 0; x < W; ++x) {
      float v = 0.0f;
      if (y == 0) v = 100.0f;
      else if (x == 0) v = 37.5f + (float)(y % 7);
      else if ((x * 7 + y * 13) % 97 == 0) v = 3.0f;
      grid[y * W + x] = v;
    }
  memcpy(ref_a, grid, bytes);
  for (int it = 0; it < ITERATIONS; ++it) {
    jacobi_reference(ref_a, ref_b);
    float* t = ref_a;
    ref_a = ref_b;
    ref_b = t;
  }

  cl_mem bufs[2];
  bufs[0] = app_create_buffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, grid);
  bufs[1] = app_create_buffer(ctx, CL_MEM_READ_WRITE, bytes, NULL);
  cl_uint w = W, h = H;
  APP_ARG(jacobi, 2, w);
  APP_ARG(jacobi, 3, h);
  size_t global[2] = {W, H}, local[2] = {TILE, TILE};
  for (int it = 0; it < ITERATIONS; ++it) {
    APP_ARG(jacobi, 0, bufs[it % 2]);
    APP_ARG(jacobi, 1, bufs[(it + 1) % 2]);
    APP_CHECK(clEnqueueNDRangeKernel(q, jacobi, 2, NULL, global, local, 0, NULL, NULL));
  }
  /* After an even number of sweeps the result is back in bufs[0]. */
  APP_CHECK(clEnqueueReadBuffer(q, bufs[ITERATIONS % 2], CL_TRUE, 0, bytes, grid, 0, NULL, NULL));

  app_check_f32("grid", grid, ref_a, (size_t)W * H);
  app_print_checksum("grid", grid, bytes);

  APP_CHECK(clReleaseMemObject(bufs[0]));
  APP_CHECK(clReleaseMemObject(bufs[1]));
  APP_CHECK(clReleaseKernel(jacobi));
  APP_CHECK(clReleaseProgram(program));
  APP_CHECK(clReleaseCommandQueue(q));
  APP_CHECK(clReleaseContext(ctx));
  free(grid);
  free(ref_a < ref_b ? ref_a : ref_b);
  free(ref_a < ref_b ? ref_b : ref_a);
  return app_finish();
}
