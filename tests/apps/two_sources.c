/* A program built from two source strings (helpers in the first, kernels in the second) with -D
 * build options, its kernels created with clCreateKernelsInProgram and found by name, plus a second
 * kernel object for one of them made with clCreateKernel, holding different arguments. */
#include "common/app_util.h"

static const char* kSources[2] = {
    "uint mix_pair(uint a, uint b) { return a * SCALE + (b ^ BIAS); }\n"
    "uint rotl(uint v, uint s) { return (v << s) | (v >> (32u - s)); }\n",
    "__kernel void k_combine(__global const uint* a, __global const uint* b, __global uint* out) {\n"
    "  size_t i = get_global_id(0);\n"
    "  out[i] = mix_pair(a[i], b[i]);\n"
    "}\n"
    "__kernel void k_shift(__global uint* data, uint amount) {\n"
    "  size_t i = get_global_id(0);\n"
    "  data[i] = rotl(data[i], amount) + (uint)i;\n"
    "}\n"
    "__kernel void k_square(__global const uint* in, __global uint* out, uint w) {\n"
    "  size_t i = get_global_id(1) * w + get_global_id(0);\n"
    "  out[i] = mix_pair(in[i], in[i]) * in[i];\n"
    "}\n"};

enum { N = 1 << 17, W = 512, H = N / W, SCALE = 3, BIAS = 11 };

static uint32_t mix_pair(uint32_t a, uint32_t b) { return a * SCALE + (b ^ BIAS); }
static uint32_t rotl(uint32_t v, uint32_t s) { return (v << s) | (v >> (32u - s)); }

int main(void) {
  cl_platform_id platform;
  cl_device_id device;
  app_pick_device(&platform, &device);
  cl_context ctx = app_create_context(platform, device);
  cl_command_queue q = app_create_queue(ctx, device, 0);
  cl_program program = app_build_program(ctx, device, 2, kSources, "-DSCALE=3 -DBIAS=11");

  cl_uint num_kernels = 0;
  APP_CHECK(clCreateKernelsInProgram(program, 0, NULL, &num_kernels));
  app_expect(num_kernels == 3, "clCreateKernelsInProgram finds three kernels");
  cl_kernel all[3] = {NULL, NULL, NULL};
  if (num_kernels != 3) return app_finish();
  APP_CHECK(clCreateKernelsInProgram(program, 3, all, NULL));
  cl_kernel combine = NULL, shift = NULL, square = NULL;
  for (int i = 0; i < 3; ++i) {
    char name[64] = {0};
    APP_CHECK(clGetKernelInfo(all[i], CL_KERNEL_FUNCTION_NAME, sizeof name - 1, name, NULL));
    if (strcmp(name, "k_combine") == 0) combine = all[i];
    if (strcmp(name, "k_shift") == 0) shift = all[i];
    if (strcmp(name, "k_square") == 0) square = all[i];
  }
  app_expect(combine && shift && square, "the three kernels are found by name");
  if (!(combine && shift && square)) return app_finish();
  cl_kernel shift_again = app_create_kernel(program, "k_shift");

  const size_t bytes = N * 4;
  uint32_t* a = (uint32_t*)app_alloc(bytes);
  uint32_t* b = (uint32_t*)app_alloc(bytes);
  uint32_t* out = (uint32_t*)app_alloc(bytes);
  uint32_t* shifted = (uint32_t*)app_alloc(bytes);
  uint32_t* squared = (uint32_t*)app_alloc(bytes);
  uint32_t* out_ref = (uint32_t*)app_alloc(bytes);
  uint32_t* shifted_ref = (uint32_t*)app_alloc(bytes);
  uint32_t* squared_ref = (uint32_t*)app_alloc(bytes);
  uint32_t seed = 55;
  for (uint32_t i = 0; i < N; ++i) {
    a[i] = app_rand(&seed);
    b[i] = app_rand(&seed);
    out_ref[i] = rotl(mix_pair(a[i], b[i]), 5) + i;
    shifted_ref[i] = rotl(a[i], 13) + i;
    squared_ref[i] = mix_pair(b[i], b[i]) * b[i];
  }

  cl_mem a_buf = app_create_buffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, a);
  cl_mem b_buf = app_create_buffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, b);
  cl_mem out_buf = app_create_buffer(ctx, CL_MEM_READ_WRITE, bytes, NULL);
  cl_mem squared_buf = app_create_buffer(ctx, CL_MEM_WRITE_ONLY, bytes, NULL);
  size_t global = N;

  APP_ARG(combine, 0, a_buf);
  APP_ARG(combine, 1, b_buf);
  APP_ARG(combine, 2, out_buf);
  APP_CHECK(clEnqueueNDRangeKernel(q, combine, 1, NULL, &global, NULL, 0, NULL, NULL));

  /* Two kernel objects of one function, with their own arguments, launched back to back. */
  cl_uint by5 = 5, by13 = 13;
  APP_ARG(shift, 0, out_buf);
  APP_ARG(shift, 1, by5);
  APP_ARG(shift_again, 0, a_buf);
  APP_ARG(shift_again, 1, by13);
  APP_CHECK(clEnqueueNDRangeKernel(q, shift, 1, NULL, &global, NULL, 0, NULL, NULL));
  APP_CHECK(clEnqueueNDRangeKernel(q, shift_again, 1, NULL, &global, NULL, 0, NULL, NULL));

  cl_uint w = W;
  APP_ARG(square, 0, b_buf);
  APP_ARG(square, 1, squared_buf);
  APP_ARG(square, 2, w);
  size_t global2[2] = {W, H}, local2[2] = {32, 8};
  APP_CHECK(clEnqueueNDRangeKernel(q, square, 2, NULL, global2, local2, 0, NULL, NULL));

  APP_CHECK(clEnqueueReadBuffer(q, out_buf, CL_TRUE, 0, bytes, out, 0, NULL, NULL));
  APP_CHECK(clEnqueueReadBuffer(q, a_buf, CL_TRUE, 0, bytes, shifted, 0, NULL, NULL));
  APP_CHECK(clEnqueueReadBuffer(q, squared_buf, CL_TRUE, 0, bytes, squared, 0, NULL, NULL));

  app_check_u32("out", out, out_ref, N);
  app_check_u32("shifted", shifted, shifted_ref, N);
  app_check_u32("squared", squared, squared_ref, N);
  app_print_checksum("out", out, bytes);
  app_print_checksum("shifted", shifted, bytes);
  app_print_checksum("squared", squared, bytes);

  APP_CHECK(clReleaseMemObject(a_buf));
  APP_CHECK(clReleaseMemObject(b_buf));
  APP_CHECK(clReleaseMemObject(out_buf));
  APP_CHECK(clReleaseMemObject(squared_buf));
  for (int i = 0; i < 3; ++i) APP_CHECK(clReleaseKernel(all[i]));
  APP_CHECK(clReleaseKernel(shift_again));
  APP_CHECK(clReleaseProgram(program));
  APP_CHECK(clReleaseCommandQueue(q));
  APP_CHECK(clReleaseContext(ctx));
  free(a); free(b); free(out); free(shifted); free(squared);
  free(out_ref); free(shifted_ref); free(squared_ref);
  return app_finish();
}
