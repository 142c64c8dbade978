/* Grid-stride loops over get_global_size: fewer work-items than elements, each work-item visiting
 * every get_global_size(0)-th element. One kernel with an explicit local size, one with NULL and
 * run three times in place (each run reads what the previous one wrote). */
#include "common/app_util.h"

static const char* kSource =
    "__kernel void stride_square(__global const uint* in, __global uint* out, uint n) {\n"
    "  for (size_t i = get_global_id(0); i < n; i += get_global_size(0))\n"
    "    out[i] = in[i] * in[i] + (uint)i;\n"
    "}\n"
    "__kernel void stride_accumulate(__global uint* acc, uint n, uint step) {\n"
    "  uint stride = (uint)get_global_size(0);\n"
    "  for (uint i = (uint)get_global_id(0); i < n; i += stride)\n"
    "    acc[i] = acc[i] * 3u + i * step + stride;\n"
    "}\n";

enum { N = (1 << 20) + 12345, SQUARE_GLOBAL = 65536, SQUARE_LOCAL = 64, ACC_GLOBAL = 131072 };

int main(void) {
  cl_platform_id platform;
  cl_device_id device;
  app_pick_device(&platform, &device);
  cl_context ctx = app_create_context(platform, device);
  cl_command_queue q = app_create_queue(ctx, device, 0);
  cl_program program = app_build_program(ctx, device, 1, &kSource, "");
  cl_kernel square = app_create_kernel(program, "stride_square");
  cl_kernel accumulate = app_create_kernel(program, "stride_accumulate");

  uint32_t* in = (uint32_t*)app_alloc(N * 4);
  uint32_t* out = (uint32_t*)app_alloc(N * 4);
  uint32_t* out_ref = (uint32_t*)app_alloc(N * 4);
  uint32_t* acc = (uint32_t*)app_alloc(N * 4);
  uint32_t* acc_ref = (uint32_t*)app_alloc(N * 4);
  uint32_t seed = 4242;
  for (uint32_t i = 0; i < N; ++i) {
    in[i] = app_rand(&seed);
    out_ref[i] = in[i] * in[i] + i;
    acc[i] = app_rand(&seed) % 1000;
    acc_ref[i] = acc[i];
  }
  for (uint32_t step = 1; step <= 3; ++step)
    for (uint32_t i = 0; i < N; ++i) acc_ref[i] = acc_ref[i] * 3u + i * step + ACC_GLOBAL;

  cl_mem in_buf = app_create_buffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, N * 4, in);
  cl_mem out_buf = app_create_buffer(ctx, CL_MEM_WRITE_ONLY, N * 4, NULL);
  cl_mem acc_buf = app_create_buffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, N * 4, acc);

  cl_uint n = N;
  APP_ARG(square, 0, in_buf);
  APP_ARG(square, 1, out_buf);
  APP_ARG(square, 2, n);
  size_t global = SQUARE_GLOBAL, local = SQUARE_LOCAL;
  APP_CHECK(clEnqueueNDRangeKernel(q, square, 1, NULL, &global, &local, 0, NULL, NULL));

  APP_ARG(accumulate, 0, acc_buf);
  APP_ARG(accumulate, 1, n);
  size_t acc_global = ACC_GLOBAL;
  for (cl_uint step = 1; step <= 3; ++step) {
    APP_ARG(accumulate, 2, step);
    APP_CHECK(clEnqueueNDRangeKernel(q, accumulate, 1, NULL, &acc_global, NULL, 0, NULL, NULL));
  }
  APP_CHECK(clEnqueueReadBuffer(q, out_buf, CL_TRUE, 0, N * 4, out, 0, NULL, NULL));
  APP_CHECK(clEnqueueReadBuffer(q, acc_buf, CL_TRUE, 0, N * 4, acc, 0, NULL, NULL));

  app_check_u32("out", out, out_ref, N);
  app_check_u32("acc", acc, acc_ref, N);
  app_print_checksum("out", out, N * 4);
  app_print_checksum("acc", acc, N * 4);

  APP_CHECK(clReleaseMemObject(in_buf));
  APP_CHECK(clReleaseMemObject(out_buf));
  APP_CHECK(clReleaseMemObject(acc_buf));
  APP_CHECK(clReleaseKernel(square));
  APP_CHECK(clReleaseKernel(accumulate));
  APP_CHECK(clReleaseProgram(program));
  APP_CHECK(clReleaseCommandQueue(q));
  APP_CHECK(clReleaseContext(ctx));
  free(in); free(out); free(out_ref); free(acc); free(acc_ref);
  return app_finish();
}
