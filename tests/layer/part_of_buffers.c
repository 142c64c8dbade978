/* A kernel without loops over part of large buffers: 262,144 work-items read the first sixteenth of
 * two 16 MiB buffers and write the first sixteenth of a third, each with a few hundred integer steps
 * (tens of milliseconds a launch on one CPU device), launched 24 times (or argv[1] times) with a
 * round number of its own. Its first split moves that sixteenth, not the whole buffers: coex weighs
 * its moves by the launch's footprint (docs/design.md, "Size by time"). The last round is read back
 * and checked against the host. */
#include "common/app_util.h"

#define STEP "  v = v * 1664525u + 1013904223u; v ^= v >> 13;\n"
#define STEPS8 STEP STEP STEP STEP STEP STEP STEP STEP
#define STEPS64 STEPS8 STEPS8 STEPS8 STEPS8 STEPS8 STEPS8 STEPS8 STEPS8

enum { N = 4 << 20, ITEMS = N / 16, ROUNDS = 24, STEP_COUNT = 192 };

static const char* kSource =
    "__kernel void churn(__global const uint* a, __global const uint* b, __global uint* out, uint round) {\n"
    "  size_t i = get_global_id(0);\n"
    "  uint v = a[i] ^ b[i] ^ round;\n" STEPS64 STEPS64 STEPS64
    "  out[i] = v;\n"
    "}\n";

int main(int argc, char** argv) {
  const cl_uint rounds = argc > 1 ? (cl_uint)strtoul(argv[1], NULL, 10) : ROUNDS;
  cl_platform_id platform;
  cl_device_id device;
  app_pick_device(&platform, &device);
  cl_context ctx = app_create_context(platform, device);
  cl_command_queue q = app_create_queue(ctx, device, 0);
  cl_program program = app_build_program(ctx, device, 1, &kSource, "");
  cl_kernel kernel = app_create_kernel(program, "churn");
  uint32_t* a = (uint32_t*)app_alloc((size_t)N * 4);
  uint32_t* b = (uint32_t*)app_alloc((size_t)N * 4);
  uint32_t* out = (uint32_t*)app_alloc((size_t)ITEMS * 4);
  uint32_t* want = (uint32_t*)app_alloc((size_t)ITEMS * 4);
  uint32_t seed = 5;
  for (size_t i = 0; i < N; ++i) {
    a[i] = app_rand(&seed);
    b[i] = app_rand(&seed);
  }
  cl_mem a_buf = app_create_buffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, (size_t)N * 4, a);
  cl_mem b_buf = app_create_buffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, (size_t)N * 4, b);
  cl_mem out_buf = app_create_buffer(ctx, CL_MEM_READ_WRITE, (size_t)N * 4, NULL);
  APP_ARG(kernel, 0, a_buf);
  APP_ARG(kernel, 1, b_buf);
  APP_ARG(kernel, 2, out_buf);
  size_t global = ITEMS;
  for (cl_uint r = 0; r < rounds; ++r) {
    APP_ARG(kernel, 3, r);
    APP_CHECK(clEnqueueNDRangeKernel(q, kernel, 1, NULL, &global, NULL, 0, NULL, NULL));
    APP_CHECK(clFinish(q));
  }
  APP_CHECK(clEnqueueReadBuffer(q, out_buf, CL_TRUE, 0, (size_t)ITEMS * 4, out, 0, NULL, NULL));
  const uint32_t last = rounds ? rounds - 1 : 0;
  for (size_t i = 0; i < ITEMS; ++i) {
    uint32_t v = a[i] ^ b[i] ^ last;
    for (int s = 0; s < STEP_COUNT; ++s) {
      v = v * 1664525u + 1013904223u;
      v ^= v >> 13;
    }
    want[i] = v;
  }
  if (rounds) app_check_u32("out", out, want, ITEMS);
  app_print_checksum("out", out, (size_t)ITEMS * 4);
  APP_CHECK(clReleaseMemObject(a_buf));
  APP_CHECK(clReleaseMemObject(b_buf));
  APP_CHECK(clReleaseMemObject(out_buf));
  APP_CHECK(clReleaseKernel(kernel));
  APP_CHECK(clReleaseProgram(program));
  APP_CHECK(clReleaseCommandQueue(q));
  APP_CHECK(clReleaseContext(ctx));
  free(a);
  free(b);
  free(out);
  free(want);
  return app_finish();
}
