/* An app write queued behind a split launch: the launch waits for a user event, the app enqueues a
 * write of its input buffer behind it, then sets the event. The launch reads the input as it was (the
 * write comes after it in the queue); what it copied to the host copy and to the other devices then
 * holds the bytes before the write. A later launch must read the written bytes. Run with a fault on
 * device 1's first sub-launch over three devices (tests/layer/layer_checks.py, check
 * write_behind_failed_split), the launch runs again on home without its merge, which is where the
 * copies were forgotten.
 * With the argument "output" the app writes the last quarter of the launch's output behind it
 * instead: the merge then writes home at once, and when that write fails (COEX_FAULT=merge_write:1,
 * check merge_write_failed) the launch's results must stay where they are, but for the quarter the
 * app wrote, so that the read gets them. */
#include "common/app_util.h"

static const char* kSource =
    "__kernel void twice(__global const uint* in, __global uint* out) {\n"
    "  size_t i = get_global_id(0);\n"
    "  out[i] = in[i] * 2u + (uint)i;\n"
    "}\n";

enum { N = 1 << 18 };
#define BYTES ((size_t)N * sizeof(uint32_t))

static void twice_on_host(const uint32_t* in, uint32_t* out) {
  for (size_t i = 0; i < N; ++i) out[i] = in[i] * 2u + (uint32_t)i;
}

int main(int argc, char** argv) {
  const int write_output = argc > 1 && strcmp(argv[1], "output") == 0;
  cl_platform_id platform;
  cl_device_id device;
  app_pick_device(&platform, &device);
  cl_context ctx = app_create_context(platform, device);
  cl_command_queue q = app_create_queue(ctx, device, 0);
  cl_program program = app_build_program(ctx, device, 1, &kSource, "");
  cl_kernel twice = app_create_kernel(program, "twice");
  uint32_t* before = (uint32_t*)app_alloc(BYTES);
  uint32_t* after = (uint32_t*)app_alloc(BYTES);
  uint32_t* want = (uint32_t*)app_alloc(BYTES);
  uint32_t* got = (uint32_t*)app_alloc(BYTES);
  uint32_t seed = 5;
  for (size_t i = 0; i < N; ++i) before[i] = app_rand(&seed), after[i] = app_rand(&seed);
  cl_mem in = app_create_buffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, BYTES, before);
  cl_mem out = app_create_buffer(ctx, CL_MEM_READ_WRITE, BYTES, NULL);
  APP_CHECK(clSetKernelArg(twice, 0, sizeof(cl_mem), &in));
  APP_CHECK(clSetKernelArg(twice, 1, sizeof(cl_mem), &out));
  size_t global = N, local = 64;
  cl_int err = CL_SUCCESS;
  cl_event go = clCreateUserEvent(ctx, &err);
  APP_CHECK_ERR(err, "clCreateUserEvent");
  APP_CHECK(clEnqueueNDRangeKernel(q, twice, 1, NULL, &global, &local, 1, &go, NULL));
  if (write_output)
    APP_CHECK(clEnqueueWriteBuffer(q, out, CL_FALSE, BYTES / 4 * 3, BYTES / 4, after, 0, NULL, NULL));
  else
    APP_CHECK(clEnqueueWriteBuffer(q, in, CL_FALSE, 0, BYTES, after, 0, NULL, NULL));
  APP_CHECK(clSetUserEventStatus(go, CL_COMPLETE));
  APP_CHECK(clEnqueueReadBuffer(q, out, CL_TRUE, 0, BYTES, got, 0, NULL, NULL));
  twice_on_host(before, want);
  if (write_output) memcpy(want + N / 4 * 3, after, BYTES / 4);
  app_check_u32("out of the launch before the write", got, want, N);
  /* The same launch again: it reads the written input. */
  APP_CHECK(clEnqueueNDRangeKernel(q, twice, 1, NULL, &global, &local, 0, NULL, NULL));
  APP_CHECK(clEnqueueReadBuffer(q, out, CL_TRUE, 0, BYTES, got, 0, NULL, NULL));
  twice_on_host(write_output ? before : after, want);
  app_check_u32("out of the launch after the write", got, want, N);
  app_print_checksum("out", got, BYTES);

  APP_CHECK(clReleaseEvent(go));
  APP_CHECK(clReleaseMemObject(in));
  APP_CHECK(clReleaseMemObject(out));
  APP_CHECK(clReleaseKernel(twice));
  APP_CHECK(clReleaseProgram(program));
  APP_CHECK(clReleaseCommandQueue(q));
  APP_CHECK(clReleaseContext(ctx));
  free(before), free(after), free(want), free(got);
  return app_finish();
}
