/* cl_khr_command_buffer beside ordinary launches: each round fills a buffer with a launch coex may
 * split, then enqueues a command buffer, recorded once, whose kernel reads that buffer on the app's
 * device. coex sees neither the recorded kernel's arguments nor what it writes: the command buffer
 * must find every byte the split wrote, wherever it ran. Without the extension (or its functions) the
 * app doubles the buffer on the host: the same lines, the same launches. */
#define CL_TARGET_OPENCL_VERSION 120  // as common/app_util.h has it, for the headers included first
#include <CL/cl_ext.h>

#include "common/app_util.h"

static const char* kSource =
    "__kernel void fill(__global float* b, float seed) {\n"
    "  size_t i = get_global_id(0);\n"
    "  float x = (float)i + seed;\n"
    "  for (int r = 0; r < 200; ++r) x = x * 0.999f + 1.0f;\n"
    "  b[i] = x;\n"
    "}\n"
    "__kernel void twice(__global const float* b, __global float* c) {\n"
    "  size_t i = get_global_id(0);\n"
    "  c[i] = 2.0f * b[i];\n"
    "}\n";

enum { N = 1 << 20, ROUNDS = 3 };

int main(void) {
  cl_platform_id platform;
  cl_device_id device;
  app_pick_device(&platform, &device);
  cl_context ctx = app_create_context(platform, device);
  cl_command_queue q = app_create_queue(ctx, device, 0);
  cl_program program = app_build_program(ctx, device, 1, &kSource, "");
  cl_kernel fill = app_create_kernel(program, "fill");
  cl_kernel twice = app_create_kernel(program, "twice");
  cl_mem b = app_create_buffer(ctx, CL_MEM_READ_WRITE, N * 4, NULL);
  cl_mem c = app_create_buffer(ctx, CL_MEM_READ_WRITE, N * 4, NULL);
  APP_ARG(fill, 0, b);
  APP_ARG(twice, 0, b);
  APP_ARG(twice, 1, c);
  char extensions[8192] = "";
  APP_CHECK(clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, sizeof extensions - 1, extensions, NULL));
  clCreateCommandBufferKHR_fn create = NULL;
  clCommandNDRangeKernelKHR_fn record = NULL;
  clFinalizeCommandBufferKHR_fn finalize = NULL;
  clEnqueueCommandBufferKHR_fn enqueue = NULL;
  clReleaseCommandBufferKHR_fn release = NULL;
  if (strstr(extensions, "cl_khr_command_buffer")) {
    /* Through memcpy: ISO C has no cast from void* to a function pointer. */
#define APP_EXTENSION(var, name)                                            \
  do {                                                                      \
    void* found = clGetExtensionFunctionAddressForPlatform(platform, name); \
    memcpy(&var, &found, sizeof var);                                       \
  } while (0)
    APP_EXTENSION(create, "clCreateCommandBufferKHR");
    APP_EXTENSION(record, "clCommandNDRangeKernelKHR");
    APP_EXTENSION(finalize, "clFinalizeCommandBufferKHR");
    APP_EXTENSION(enqueue, "clEnqueueCommandBufferKHR");
    APP_EXTENSION(release, "clReleaseCommandBufferKHR");
  }
  const size_t global = N;
  cl_command_buffer_khr buffer = NULL;
  if (create && record && finalize && enqueue && release) {
    cl_int err = CL_SUCCESS;
    buffer = create(1, &q, NULL, &err);
    APP_CHECK(err);
    APP_CHECK(record(buffer, NULL, NULL, twice, 1, NULL, &global, NULL, 0, NULL, NULL, NULL));
    APP_CHECK(finalize(buffer));
  }
  float* out = (float*)app_alloc(N * 4);
  for (int round = 0; round < ROUNDS; ++round) {
    const float seed = (float)round;
    APP_ARG(fill, 1, seed);
    APP_CHECK(clEnqueueNDRangeKernel(q, fill, 1, NULL, &global, NULL, 0, NULL, NULL));
    if (buffer) {
      APP_CHECK(enqueue(0, NULL, buffer, 0, NULL, NULL));
      APP_CHECK(clEnqueueReadBuffer(q, c, CL_TRUE, 0, N * 4, out, 0, NULL, NULL));
    } else { /* the same bytes from the host: doubling a float is exact */
      APP_CHECK(clEnqueueReadBuffer(q, b, CL_TRUE, 0, N * 4, out, 0, NULL, NULL));
      for (size_t i = 0; i < N; ++i) out[i] *= 2.0f;
    }
    app_print_checksum("twice", out, N * 4);
  }
  if (buffer) APP_CHECK(release(buffer));
  APP_CHECK(clReleaseMemObject(b));
  APP_CHECK(clReleaseMemObject(c));
  APP_CHECK(clReleaseKernel(fill));
  APP_CHECK(clReleaseKernel(twice));
  APP_CHECK(clReleaseProgram(program));
  APP_CHECK(clReleaseCommandQueue(q));
  APP_CHECK(clReleaseContext(ctx));
  free(out);
  return app_finish();
}
