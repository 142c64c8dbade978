/* Two in-order queues on one context (the second made with clCreateCommandQueueWithProperties where
 * the platform has it) passing work back and forth: each 2-D launch (NULL local size) reads what
 * the other queue's previous launch wrote and waits for it through its event wait list. */
#define CL_TARGET_OPENCL_VERSION 200
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include "common/app_util.h"

static const char* kSource =
    "__kernel void step_a(__global uint* a, __global const uint* b, uint w, uint round) {\n"
    "  size_t i = get_global_id(1) * w + get_global_id(0);\n"
    "  a[i] = a[i] * 5u + b[i] + round;\n"
    "}\n"
    "__kernel void step_b(__global const uint* a, __global uint* b, uint w) {\n"
    "  size_t i = get_global_id(1) * w + get_global_id(0);\n"
    "  uint v = b[i] ^ a[i];\n"
    "  b[i] = (v << 7) | (v >> 25);\n"
    "}\n";

enum { W = 512, H = 256, ROUNDS = 5 };

static cl_command_queue create_second_queue(cl_platform_id platform, cl_context ctx, cl_device_id device) {
  char version[256] = {0};
  APP_CHECK(clGetPlatformInfo(platform, CL_PLATFORM_VERSION, sizeof version - 1, version, NULL));
  if (strncmp(version, "OpenCL 1.", 9) == 0) return app_create_queue(ctx, device, 0);
  cl_int err = CL_SUCCESS;
  const cl_queue_properties props[] = {0};
  cl_command_queue q = clCreateCommandQueueWithProperties(ctx, device, props, &err);
  APP_CHECK_ERR(err, "clCreateCommandQueueWithProperties");
  return q;
}

int main(void) {
  cl_platform_id platform;
  cl_device_id device;
  app_pick_device(&platform, &device);
  cl_context ctx = app_create_context(platform, device);
  cl_command_queue q1 = app_create_queue(ctx, device, 0);
  cl_command_queue q2 = create_second_queue(platform, ctx, device);
  cl_program program = app_build_program(ctx, device, 1, &kSource, "");
  cl_kernel step_a = app_create_kernel(program, "step_a");
  cl_kernel step_b = app_create_kernel(program, "step_b");

  const size_t cells = (size_t)W * H, bytes = cells * 4;
  uint32_t* a = (uint32_t*)app_alloc(bytes);
  uint32_t* b = (uint32_t*)app_alloc(bytes);
  uint32_t* a_ref = (uint32_t*)app_alloc(bytes);
  uint32_t* b_ref = (uint32_t*)app_alloc(bytes);
  uint32_t seed = 2024;
  for (size_t i = 0; i < cells; ++i) {
    a[i] = a_ref[i] = app_rand(&seed);
    b[i] = b_ref[i] = app_rand(&seed);
  }
  for (uint32_t r = 0; r < ROUNDS; ++r) {
    for (size_t i = 0; i < cells; ++i) a_ref[i] = a_ref[i] * 5u + b_ref[i] + r;
    for (size_t i = 0; i < cells; ++i) {
      uint32_t v = b_ref[i] ^ a_ref[i];
      b_ref[i] = (v << 7) | (v >> 25);
    }
  }

  cl_mem a_buf = app_create_buffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, a);
  cl_mem b_buf = app_create_buffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, b);
  cl_uint w = W;
  APP_ARG(step_a, 0, a_buf);
  APP_ARG(step_a, 1, b_buf);
  APP_ARG(step_a, 2, w);
  APP_ARG(step_b, 0, a_buf);
  APP_ARG(step_b, 1, b_buf);
  APP_ARG(step_b, 2, w);
  size_t global[2] = {W, H};
  cl_event b_done = NULL;
  for (cl_uint r = 0; r < ROUNDS; ++r) {
    cl_event a_done;
    APP_ARG(step_a, 3, r);
    APP_CHECK(clEnqueueNDRangeKernel(q1, step_a, 2, NULL, global, NULL, b_done ? 1 : 0,
                                     b_done ? &b_done : NULL, &a_done));
    APP_CHECK(clFlush(q1));
    if (b_done) APP_CHECK(clReleaseEvent(b_done));
    APP_CHECK(clEnqueueNDRangeKernel(q2, step_b, 2, NULL, global, NULL, 1, &a_done, &b_done));
    APP_CHECK(clFlush(q2));
    APP_CHECK(clReleaseEvent(a_done));
  }
  APP_CHECK(clFinish(q1));
  APP_CHECK(clFinish(q2));
  APP_CHECK(clReleaseEvent(b_done));
  APP_CHECK(clEnqueueReadBuffer(q1, a_buf, CL_TRUE, 0, bytes, a, 0, NULL, NULL));
  APP_CHECK(clEnqueueReadBuffer(q2, b_buf, CL_TRUE, 0, bytes, b, 0, NULL, NULL));

  app_check_u32("a", a, a_ref, cells);
  app_check_u32("b", b, b_ref, cells);
  app_print_checksum("a", a, bytes);
  app_print_checksum("b", b, bytes);

  APP_CHECK(clReleaseMemObject(a_buf));
  APP_CHECK(clReleaseMemObject(b_buf));
  APP_CHECK(clReleaseKernel(step_a));
  APP_CHECK(clReleaseKernel(step_b));
  APP_CHECK(clReleaseProgram(program));
  APP_CHECK(clReleaseCommandQueue(q1));
  APP_CHECK(clReleaseCommandQueue(q2));
  APP_CHECK(clReleaseContext(ctx));
  free(a); free(b); free(a_ref); free(b_ref);
  return app_finish();
}
