/* A kernel argument set to a USM allocation with clSetKernelArgMemPointerINTEL
 * (cl_intel_unified_shared_memory), called through the address clGetExtensionFunctionAddressForPlatform
 * gave, after the same argument was a buffer: the launch after it reads the allocation, not the
 * buffer, under coex as bare (coex runs such a launch on the app's device whole). Where the platform
 * lacks the extension (PoCL 3), the second launch reads a second buffer instead: the same bytes. */
#include "common/app_util.h"

#include <CL/cl_ext.h>

static const char* kSource =
    "__kernel void triple(__global const int* in, __global int* out) {\n"
    "  size_t i = get_global_id(0);\n"
    "  out[i] = in[i] * 3 + (int)i;\n"
    "}\n";

enum { N = 1 << 18 };

/* The second launch's input in a USM device allocation; NULL where the platform has no USM. */
static void* usm_input(cl_platform_id platform, cl_context ctx, cl_device_id device, cl_command_queue q,
                       const int32_t* data, cl_kernel kernel) {
  clDeviceMemAllocINTEL_fn alloc =
      (clDeviceMemAllocINTEL_fn)clGetExtensionFunctionAddressForPlatform(platform, "clDeviceMemAllocINTEL");
  clEnqueueMemcpyINTEL_fn copy =
      (clEnqueueMemcpyINTEL_fn)clGetExtensionFunctionAddressForPlatform(platform, "clEnqueueMemcpyINTEL");
  clSetKernelArgMemPointerINTEL_fn set_arg = (clSetKernelArgMemPointerINTEL_fn)clGetExtensionFunctionAddressForPlatform(
      platform, "clSetKernelArgMemPointerINTEL");
  if (!alloc || !copy || !set_arg) return NULL;
  cl_int err = CL_SUCCESS;
  void* input = alloc(ctx, device, NULL, N * 4, 0, &err);
  if (!input || err != CL_SUCCESS) return NULL;
  APP_CHECK(copy(q, CL_TRUE, input, data, N * 4, 0, NULL, NULL));
  APP_CHECK(set_arg(kernel, 0, input));
  return input;
}

int main(void) {
  cl_platform_id platform;
  cl_device_id device;
  app_pick_device(&platform, &device);
  cl_context ctx = app_create_context(platform, device);
  cl_command_queue q = app_create_queue(ctx, device, 0);
  cl_program program = app_build_program(ctx, device, 1, &kSource, "");
  cl_kernel kernel = app_create_kernel(program, "triple");
  int32_t* first = (int32_t*)app_alloc(N * 4);
  int32_t* second = (int32_t*)app_alloc(N * 4);
  int32_t* out = (int32_t*)app_alloc(N * 4);
  int32_t* ref = (int32_t*)app_alloc(N * 4);
  for (size_t i = 0; i < N; ++i) {
    first[i] = (int32_t)(i % 1000);
    second[i] = (int32_t)((i * 7) % 1001);
  }
  cl_mem first_buf = app_create_buffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, N * 4, first);
  cl_mem out_buf = app_create_buffer(ctx, CL_MEM_WRITE_ONLY, N * 4, NULL);
  size_t global = N;

  APP_ARG(kernel, 0, first_buf);
  APP_ARG(kernel, 1, out_buf);
  APP_CHECK(clEnqueueNDRangeKernel(q, kernel, 1, NULL, &global, NULL, 0, NULL, NULL));
  APP_CHECK(clEnqueueReadBuffer(q, out_buf, CL_TRUE, 0, N * 4, out, 0, NULL, NULL));
  for (size_t i = 0; i < N; ++i) ref[i] = first[i] * 3 + (int32_t)i;
  app_check_i32("buffer", out, ref, N);
  app_print_checksum("buffer", out, N * 4);

  void* usm = usm_input(platform, ctx, device, q, second, kernel);
  cl_mem second_buf = NULL;
  if (!usm) {
    second_buf = app_create_buffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, N * 4, second);
    APP_ARG(kernel, 0, second_buf);
  }
  APP_CHECK(clEnqueueNDRangeKernel(q, kernel, 1, NULL, &global, NULL, 0, NULL, NULL));
  APP_CHECK(clEnqueueReadBuffer(q, out_buf, CL_TRUE, 0, N * 4, out, 0, NULL, NULL));
  for (size_t i = 0; i < N; ++i) ref[i] = second[i] * 3 + (int32_t)i;
  app_check_i32("pointer", out, ref, N);
  app_print_checksum("pointer", out, N * 4);

  if (usm) {
    clMemBlockingFreeINTEL_fn release =
        (clMemBlockingFreeINTEL_fn)clGetExtensionFunctionAddressForPlatform(platform, "clMemBlockingFreeINTEL");
    if (release) APP_CHECK(release(ctx, usm));
  } else {
    APP_CHECK(clReleaseMemObject(second_buf));
  }
  APP_CHECK(clReleaseMemObject(first_buf));
  APP_CHECK(clReleaseMemObject(out_buf));
  APP_CHECK(clReleaseKernel(kernel));
  APP_CHECK(clReleaseProgram(program));
  APP_CHECK(clReleaseCommandQueue(q));
  APP_CHECK(clReleaseContext(ctx));
  free(first);
  free(second);
  free(out);
  free(ref);
  return app_finish();
}
