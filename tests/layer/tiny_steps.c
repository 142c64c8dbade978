/* Many launches of a few microseconds each: a 1-D three-point stencil over 4,096 items, stepped
 * between two buffers 400 times (or argv[1] times), read once at the end and checked against the
 * host. No split of such a launch pays: under auto its launches stay on home (one_device_pays). */
#include "common/app_util.h"

static const char* kSource =
    "__kernel void stencil_step(__global const int* in, __global int* out, uint n) {\n"
    "  size_t i = get_global_id(0);\n"
    "  int left = i > 0 ? in[i - 1] : 0, right = i + 1 < n ? in[i + 1] : 0;\n"
    "  out[i] = (left + 2 * in[i] + right) & 0xffff;\n"
    "}\n";

enum { N = 4096, STEPS = 400 };

int main(int argc, char** argv) {
  const unsigned steps = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : STEPS;
  cl_platform_id platform;
  cl_device_id device;
  app_pick_device(&platform, &device);
  cl_context ctx = app_create_context(platform, device);
  cl_command_queue q = app_create_queue(ctx, device, 0);
  cl_program program = app_build_program(ctx, device, 1, &kSource, "");
  cl_kernel kernel = app_create_kernel(program, "stencil_step");
  int32_t* host = (int32_t*)app_alloc(N * 4);
  int32_t* next = (int32_t*)app_alloc(N * 4);
  int32_t* out = (int32_t*)app_alloc(N * 4);
  uint32_t seed = 11;
  for (size_t i = 0; i < N; ++i) host[i] = (int32_t)(app_rand(&seed) & 0xffff);
  cl_mem bufs[2] = {app_create_buffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, N * 4, host),
                    app_create_buffer(ctx, CL_MEM_READ_WRITE, N * 4, NULL)};
  const cl_uint n = N;
  size_t global = N, local = 64;
  for (unsigned s = 0; s < steps; ++s) {
    APP_ARG(kernel, 0, bufs[s % 2]);
    APP_ARG(kernel, 1, bufs[(s + 1) % 2]);
    APP_ARG(kernel, 2, n);
    APP_CHECK(clEnqueueNDRangeKernel(q, kernel, 1, NULL, &global, &local, 0, NULL, NULL));
    for (size_t i = 0; i < N; ++i) {
      const int32_t left = i > 0 ? host[i - 1] : 0, right = i + 1 < N ? host[i + 1] : 0;
      next[i] = (left + 2 * host[i] + right) & 0xffff;
    }
    int32_t* t = host;
    host = next;
    next = t;
  }
  APP_CHECK(clEnqueueReadBuffer(q, bufs[steps % 2], CL_TRUE, 0, N * 4, out, 0, NULL, NULL));
  app_check_i32("out", out, host, N);
  app_print_checksum("out", out, N * 4);
  APP_CHECK(clReleaseMemObject(bufs[0]));
  APP_CHECK(clReleaseMemObject(bufs[1]));
  APP_CHECK(clReleaseKernel(kernel));
  APP_CHECK(clReleaseProgram(program));
  APP_CHECK(clReleaseCommandQueue(q));
  APP_CHECK(clReleaseContext(ctx));
  free(host);
  free(next);
  free(out);
  return app_finish();
}
