/* Launches whose work lies along dimension 0 of a 2-D or 3-D range: a helper that launches every
 * kernel as {work_items, 1} (9,600 x 1 with a local size, 65,536 x 1 without one), a 3-D
 * {250,624, 1, 1}, and a per-group result at get_group_id(0) of a {n, 1} launch (the rewrite must
 * restore group ids along dimension 0). coex splits them along dimension 0. */
#include "common/app_util.h"

static const char* kSource =
    "#pragma OPENCL FP_CONTRACT OFF\n"
    "__kernel void axpy2d(__global const float* x, __global float* y, float a) {\n"
    "  size_t i = get_global_id(0) + get_global_id(1) * get_global_size(0);\n"
    "  y[i] = a * x[i] + y[i];\n"
    "}\n"
    "__kernel void square3d(__global const int* in, __global int* out) {\n"
    "  size_t i = get_global_id(0);\n"
    "  out[i] = in[i] * in[i] - (int)get_global_id(2);\n"
    "}\n"
    "__kernel void group_sums2d(__global const int* in, __global int* sums) {\n"
    "  __local int scratch[64];\n"
    "  size_t lid = get_local_id(0);\n"
    "  scratch[lid] = in[get_global_id(0)];\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  if (lid == 0) {\n"
    "    int s = 0;\n"
    "    for (int k = 0; k < 64; ++k) s += scratch[k];\n"
    "    sums[get_group_id(0) + get_group_id(1) * get_num_groups(0)] = s + (int)get_num_groups(0);\n"
    "  }\n"
    "}\n";

enum { N2 = 9600, N2_NULL = 65536, N3 = 250624, NS = 65536, GROUP = 64 };

int main(void) {
  cl_platform_id platform;
  cl_device_id device;
  app_pick_device(&platform, &device);
  cl_context ctx = app_create_context(platform, device);
  cl_command_queue q = app_create_queue(ctx, device, 0);
  cl_program program = app_build_program(ctx, device, 1, &kSource, "");
  cl_kernel axpy2d = app_create_kernel(program, "axpy2d");
  cl_kernel square3d = app_create_kernel(program, "square3d");
  cl_kernel group_sums2d = app_create_kernel(program, "group_sums2d");

  float* x = (float*)app_alloc(N2_NULL * 4);
  float* y = (float*)app_alloc(N2_NULL * 4);
  float* y_ref = (float*)app_alloc(N2_NULL * 4);
  int32_t* in = (int32_t*)app_alloc(N3 * 4);
  int32_t* out = (int32_t*)app_alloc(N3 * 4);
  int32_t* out_ref = (int32_t*)app_alloc(N3 * 4);
  int32_t* sums = (int32_t*)app_alloc(NS / GROUP * 4);
  int32_t* sums_ref = (int32_t*)app_alloc(NS / GROUP * 4);
  uint32_t seed = 4242;
  for (size_t i = 0; i < N2_NULL; ++i) {
    x[i] = (float)(app_rand(&seed) % 1000) / 8.0f;
    y[i] = (float)(app_rand(&seed) % 1000) / 16.0f;
  }
  for (size_t i = 0; i < N3; ++i) in[i] = (int32_t)(app_rand(&seed) % 20001) - 10000;

  /* The host reference: two axpy launches (the first over 9,600 items, the second over all). */
  const float a1 = 1.5f, a2 = -0.25f;
  for (size_t i = 0; i < N2_NULL; ++i) {
    float v = y[i];
    if (i < N2) v = a1 * x[i] + v;
    y_ref[i] = a2 * x[i] + v;
  }
  for (size_t i = 0; i < N3; ++i) out_ref[i] = in[i] * in[i];
  for (size_t g = 0; g < NS / GROUP; ++g) {
    int32_t s = 0;
    for (size_t k = 0; k < GROUP; ++k) s += in[g * GROUP + k];
    sums_ref[g] = s + NS / GROUP;
  }

  cl_mem x_buf = app_create_buffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, N2_NULL * 4, x);
  cl_mem y_buf = app_create_buffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, N2_NULL * 4, y);
  cl_mem in_buf = app_create_buffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, N3 * 4, in);
  cl_mem out_buf = app_create_buffer(ctx, CL_MEM_WRITE_ONLY, N3 * 4, NULL);
  cl_mem sums_buf = app_create_buffer(ctx, CL_MEM_WRITE_ONLY, NS / GROUP * 4, NULL);

  APP_ARG(axpy2d, 0, x_buf);
  APP_ARG(axpy2d, 1, y_buf);
  APP_ARG(axpy2d, 2, a1);
  size_t g2[2] = {N2, 1}, l2[2] = {GROUP, 1};
  APP_CHECK(clEnqueueNDRangeKernel(q, axpy2d, 2, NULL, g2, l2, 0, NULL, NULL));
  APP_ARG(axpy2d, 2, a2);
  size_t g2_null[2] = {N2_NULL, 1};
  APP_CHECK(clEnqueueNDRangeKernel(q, axpy2d, 2, NULL, g2_null, NULL, 0, NULL, NULL));

  APP_ARG(square3d, 0, in_buf);
  APP_ARG(square3d, 1, out_buf);
  size_t g3[3] = {N3, 1, 1};
  APP_CHECK(clEnqueueNDRangeKernel(q, square3d, 3, NULL, g3, NULL, 0, NULL, NULL));

  APP_ARG(group_sums2d, 0, in_buf);
  APP_ARG(group_sums2d, 1, sums_buf);
  size_t gs[2] = {NS, 1}, ls[2] = {GROUP, 1};
  APP_CHECK(clEnqueueNDRangeKernel(q, group_sums2d, 2, NULL, gs, ls, 0, NULL, NULL));

  APP_CHECK(clEnqueueReadBuffer(q, y_buf, CL_FALSE, 0, N2_NULL * 4, y, 0, NULL, NULL));
  APP_CHECK(clEnqueueReadBuffer(q, out_buf, CL_FALSE, 0, N3 * 4, out, 0, NULL, NULL));
  APP_CHECK(clEnqueueReadBuffer(q, sums_buf, CL_FALSE, 0, NS / GROUP * 4, sums, 0, NULL, NULL));
  APP_CHECK(clFinish(q));

  app_check_f32("y", y, y_ref, N2_NULL);
  app_check_i32("out", out, out_ref, N3);
  app_check_i32("sums", sums, sums_ref, NS / GROUP);
  app_print_checksum("y", y, N2_NULL * 4);
  app_print_checksum("out", out, N3 * 4);
  app_print_checksum("sums", sums, NS / GROUP * 4);

  cl_mem bufs[] = {x_buf, y_buf, in_buf, out_buf, sums_buf};
  for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; ++i) APP_CHECK(clReleaseMemObject(bufs[i]));
  APP_CHECK(clReleaseKernel(axpy2d));
  APP_CHECK(clReleaseKernel(square3d));
  APP_CHECK(clReleaseKernel(group_sums2d));
  APP_CHECK(clReleaseProgram(program));
  APP_CHECK(clReleaseCommandQueue(q));
  APP_CHECK(clReleaseContext(ctx));
  free(x); free(y); free(y_ref); free(in); free(out); free(out_ref); free(sums); free(sums_ref);
  return app_finish();
}
