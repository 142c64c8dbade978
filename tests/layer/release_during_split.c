/* The app releases its inputs, its kernel and its program right after enqueuing a launch that coex
 * splits, before the launch has run: the spec lets it, and the launch must still see them. */
#include "common/app_util.h"

static const char* kSource =
    "__kernel void add3(__global const int* a, __global const int* b, __global int* c) {\n"
    "  size_t i = get_global_id(0);\n"
    "  c[i] = a[i] + 3 * b[i];\n"
    "}\n";

enum { N = 1 << 18 };

int main(void) {
  cl_platform_id platform;
  cl_device_id device;
  app_pick_device(&platform, &device);
  cl_context ctx = app_create_context(platform, device);
  cl_command_queue q = app_create_queue(ctx, device, 0);
  cl_program program = app_build_program(ctx, device, 1, &kSource, "");
  cl_kernel kernel = app_create_kernel(program, "add3");
  int32_t* a = (int32_t*)app_alloc(N * 4);
  int32_t* b = (int32_t*)app_alloc(N * 4);
  int32_t* c = (int32_t*)app_alloc(N * 4);
  int32_t* ref = (int32_t*)app_alloc(N * 4);
  uint32_t seed = 99;
  for (size_t i = 0; i < N; ++i) {
    a[i] = (int32_t)(app_rand(&seed) % 100000);
    b[i] = (int32_t)(app_rand(&seed) % 100000);
    ref[i] = a[i] + 3 * b[i];
  }
  cl_mem da = app_create_buffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, N * 4, a);
  cl_mem db = app_create_buffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, N * 4, b);
  cl_mem dc = app_create_buffer(ctx, CL_MEM_WRITE_ONLY, N * 4, NULL);
  APP_CHECK(clSetKernelArg(kernel, 0, sizeof(cl_mem), &da));
  APP_CHECK(clSetKernelArg(kernel, 1, sizeof(cl_mem), &db));
  APP_CHECK(clSetKernelArg(kernel, 2, sizeof(cl_mem), &dc));
  size_t global = N, local = 64;
  cl_event done;
  APP_CHECK(clEnqueueNDRangeKernel(q, kernel, 1, NULL, &global, &local, 0, NULL, &done));
  /* Everything the launch uses but its output goes away now. */
  APP_CHECK(clReleaseMemObject(da));
  APP_CHECK(clReleaseMemObject(db));
  APP_CHECK(clReleaseKernel(kernel));
  APP_CHECK(clReleaseProgram(program));
  APP_CHECK(clWaitForEvents(1, &done));
  cl_int status = 0;
  APP_CHECK(clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL));
  app_expect(status == CL_COMPLETE, "the launch's event is CL_COMPLETE");
  APP_CHECK(clEnqueueReadBuffer(q, dc, CL_TRUE, 0, N * 4, c, 0, NULL, NULL));
  app_check_i32("c", c, ref, N);
  app_print_checksum("c", c, N * 4);
  APP_CHECK(clReleaseEvent(done));
  APP_CHECK(clReleaseMemObject(dc));
  APP_CHECK(clReleaseCommandQueue(q));
  APP_CHECK(clReleaseContext(ctx));
  free(a), free(b), free(c), free(ref);
  return app_finish();
}
