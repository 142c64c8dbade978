/* A 2-D float matrix product C = A * B (M x K times K x N), twice: a plain kernel with a NULL local
 * size and a tiled kernel with __local tiles and an explicit 16 x 16 local size. Both accumulate
 * with fma() in ascending k, which is correctly rounded everywhere, so both must match the host
 * reference (fmaf, same order) bit for bit. argv[1] "tiled_first" enqueues the tiled product first: the
 * program's first launch that may be split has an explicit local size. */
#include "common/app_util.h"

#include <math.h>
#include <string.h>

static const char* kSource =
    "#pragma OPENCL FP_CONTRACT OFF\n"
    "#define TILE 16\n"
    "__kernel void matmul_plain(__global const float* a, __global const float* b,\n"
    "                           __global float* c, uint n, uint k_dim) {\n"
    "  uint col = (uint)get_global_id(0), row = (uint)get_global_id(1);\n"
    "  float acc = 0.0f;\n"
    "  for (uint k = 0; k < k_dim; ++k) acc = fma(a[row * k_dim + k], b[k * n + col], acc);\n"
    "  c[row * n + col] = acc;\n"
    "}\n"
    "__kernel void matmul_tiled(__global const float* a, __global const float* b,\n"
    "                           __global float* c, uint n, uint k_dim) {\n"
    "  __local float a_tile[TILE][TILE];\n"
    "  __local float b_tile[TILE][TILE];\n"
    "  uint lx = (uint)get_local_id(0), ly = (uint)get_local_id(1);\n"
    "  uint col = (uint)get_global_id(0), row = (uint)get_global_id(1);\n"
    "  float acc = 0.0f;\n"
    "  for (uint t = 0; t < k_dim; t += TILE) {\n"
    "    a_tile[ly][lx] = a[row * k_dim + t + lx];\n"
    "    b_tile[ly][lx] = b[(t + ly) * n + col];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    for (uint k = 0; k < TILE; ++k) acc = fma(a_tile[ly][k], b_tile[k][lx], acc);\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  }\n"
    "  c[row * n + col] = acc;\n"
    "}\n";

enum { M = 256, N = 320, K = 64, TILE = 16 };

int main(int argc, char** argv) {
  const int tiled_first = argc > 1 && strcmp(argv[1], "tiled_first") == 0;
  cl_platform_id platform;
  cl_device_id device;
  app_pick_device(&platform, &device);
  cl_context ctx = app_create_context(platform, device);
  cl_command_queue q = app_create_queue(ctx, device, 0);
  cl_program program = app_build_program(ctx, device, 1, &kSource, "");
  cl_kernel plain = app_create_kernel(program, "matmul_plain");
  cl_kernel tiled = app_create_kernel(program, "matmul_tiled");

  float* a = (float*)app_alloc(M * K * 4);
  float* b = (float*)app_alloc(K * N * 4);
  float* c_plain = (float*)app_alloc(M * N * 4);
  float* c_tiled = (float*)app_alloc(M * N * 4);
  float* c_ref = (float*)app_alloc(M * N * 4);
  for (uint32_t i = 0; i < M; ++i)
    for (uint32_t k = 0; k < K; ++k) a[i * K + k] = (float)((i * 131 + k * 71) % 1000) / 997.0f - 0.5f;
  for (uint32_t k = 0; k < K; ++k)
    for (uint32_t j = 0; j < N; ++j) b[k * N + j] = (float)((k * 37 + j * 113) % 1009) / 499.0f - 1.0f;
  for (uint32_t i = 0; i < M; ++i)
    for (uint32_t j = 0; j < N; ++j) {
      float acc = 0.0f;
      for (uint32_t k = 0; k < K; ++k) acc = fmaf(a[i * K + k], b[k * N + j], acc);
      c_ref[i * N + j] = acc;
    }

  cl_mem a_buf = app_create_buffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, M * K * 4, a);
  cl_mem b_buf = app_create_buffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, K * N * 4, b);
  cl_mem c_plain_buf = app_create_buffer(ctx, CL_MEM_WRITE_ONLY, M * N * 4, NULL);
  cl_mem c_tiled_buf = app_create_buffer(ctx, CL_MEM_WRITE_ONLY, M * N * 4, NULL);
  cl_uint n = N, k_dim = K;
  size_t global[2] = {N, M}, local[2] = {TILE, TILE};

  APP_ARG(plain, 0, a_buf);
  APP_ARG(plain, 1, b_buf);
  APP_ARG(plain, 2, c_plain_buf);
  APP_ARG(plain, 3, n);
  APP_ARG(plain, 4, k_dim);
  APP_ARG(tiled, 0, a_buf);
  APP_ARG(tiled, 1, b_buf);
  APP_ARG(tiled, 2, c_tiled_buf);
  APP_ARG(tiled, 3, n);
  APP_ARG(tiled, 4, k_dim);
  if (tiled_first) APP_CHECK(clEnqueueNDRangeKernel(q, tiled, 2, NULL, global, local, 0, NULL, NULL));
  APP_CHECK(clEnqueueNDRangeKernel(q, plain, 2, NULL, global, NULL, 0, NULL, NULL));
  if (!tiled_first) APP_CHECK(clEnqueueNDRangeKernel(q, tiled, 2, NULL, global, local, 0, NULL, NULL));

  APP_CHECK(clEnqueueReadBuffer(q, c_plain_buf, CL_TRUE, 0, M * N * 4, c_plain, 0, NULL, NULL));
  APP_CHECK(clEnqueueReadBuffer(q, c_tiled_buf, CL_TRUE, 0, M * N * 4, c_tiled, 0, NULL, NULL));

  app_check_f32("c_plain", c_plain, c_ref, M * N);
  app_check_f32("c_tiled", c_tiled, c_ref, M * N);
  app_print_checksum("c_plain", c_plain, M * N * 4);
  app_print_checksum("c_tiled", c_tiled, M * N * 4);

  APP_CHECK(clReleaseMemObject(a_buf));
  APP_CHECK(clReleaseMemObject(b_buf));
  APP_CHECK(clReleaseMemObject(c_plain_buf));
  APP_CHECK(clReleaseMemObject(c_tiled_buf));
  APP_CHECK(clReleaseKernel(plain));
  APP_CHECK(clReleaseKernel(tiled));
  APP_CHECK(clReleaseProgram(program));
  APP_CHECK(clReleaseCommandQueue(q));
  APP_CHECK(clReleaseContext(ctx));
  free(a); free(b); free(c_plain); free(c_tiled); free(c_ref);
  return app_finish();
}
