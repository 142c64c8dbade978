/* 1-D launches with a NULL local size: integer add, an in-place float saxpy (fma), and a launch
 * whose global size (1000001 = 101 * 9901) has no power-of-two factor. Waits with clWaitForEvents. */
#include "common/app_util.h"

#include <math.h>

static const char* kSource =
    "#pragma OPENCL FP_CONTRACT OFF\n"
    "__kernel void vadd(__global const int* a, __global const int* b, __global int* c) {\n"
    "  size_t i = get_global_id(0);\n"
    "  c[i] = a[i] + b[i];\n"
    "}\n"
    "__kernel void saxpy(float alpha, __global const float* x, __global float* y) {\n"
    "  size_t i = get_global_id(0);\n"
    "  y[i] = fma(alpha, x[i], y[i]);\n"
    "}\n"
    "__kernel void scale_odd(__global const int* in, __global int* out) {\n"
    "  size_t i = get_global_id(0);\n"
    "  out[i] = in[i] * 3 + (int)i;\n"
    "}\n";

enum { N = 1 << 20, N_ODD = 1000001 };

int main(void) {
  cl_platform_id platform;
  cl_device_id device;
  app_pick_device(&platform, &device);
  cl_context ctx = app_create_context(platform, device);
  cl_command_queue q = app_create_queue(ctx, device, 0);
  cl_program program = app_build_program(ctx, device, 1, &kSource, "");
  cl_kernel vadd = app_create_kernel(program, "vadd");
  cl_kernel saxpy = app_create_kernel(program, "saxpy");
  cl_kernel scale_odd = app_create_kernel(program, "scale_odd");

  int32_t* a = (int32_t*)app_alloc(N * sizeof(int32_t));
  int32_t* b = (int32_t*)app_alloc(N * sizeof(int32_t));
  int32_t* c = (int32_t*)app_alloc(N * sizeof(int32_t));
  int32_t* c_ref = (int32_t*)app_alloc(N * sizeof(int32_t));
  float* x = (float*)app_alloc(N * sizeof(float));
  float* y = (float*)app_alloc(N * sizeof(float));
  float* y_ref = (float*)app_alloc(N * sizeof(float));
  int32_t* odd_in = (int32_t*)app_alloc(N_ODD * sizeof(int32_t));
  int32_t* odd_out = (int32_t*)app_alloc(N_ODD * sizeof(int32_t));
  int32_t* odd_ref = (int32_t*)app_alloc(N_ODD * sizeof(int32_t));
  uint32_t seed = 12345;
  for (size_t i = 0; i < N; ++i) {
    a[i] = (int32_t)(app_rand(&seed) % 2000001) - 1000000;
    b[i] = (int32_t)(app_rand(&seed) % 2000001) - 1000000;
    c_ref[i] = a[i] + b[i];
    x[i] = (float)(app_rand(&seed) % 100000) / 1024.0f - 40.0f;
    y[i] = (float)(app_rand(&seed) % 100000) / 4096.0f;
  }
  for (size_t i = 0; i < N_ODD; ++i) {
    odd_in[i] = (int32_t)(app_rand(&seed) % 100000);
    odd_ref[i] = odd_in[i] * 3 + (int32_t)i;
  }
  const float alpha = 1.3f;
  for (size_t i = 0; i < N; ++i) y_ref[i] = fmaf(alpha, x[i], fmaf(alpha, x[i], y[i]));

  cl_mem a_buf = app_create_buffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, N * 4, a);
  cl_mem b_buf = app_create_buffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, N * 4, b);
  cl_mem c_buf = app_create_buffer(ctx, CL_MEM_WRITE_ONLY, N * 4, NULL);
  cl_mem x_buf = app_create_buffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, N * 4, x);
  cl_mem y_buf = app_create_buffer(ctx, CL_MEM_READ_WRITE, N * 4, NULL);
  cl_mem odd_in_buf = app_create_buffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, N_ODD * 4, odd_in);
  cl_mem odd_out_buf = app_create_buffer(ctx, CL_MEM_WRITE_ONLY, N_ODD * 4, NULL);
  APP_CHECK(clEnqueueWriteBuffer(q, y_buf, CL_TRUE, 0, N * 4, y, 0, NULL, NULL));

  APP_ARG(vadd, 0, a_buf);
  APP_ARG(vadd, 1, b_buf);
  APP_ARG(vadd, 2, c_buf);
  size_t global = N;
  cl_event vadd_done;
  APP_CHECK(clEnqueueNDRangeKernel(q, vadd, 1, NULL, &global, NULL, 0, NULL, &vadd_done));
  APP_CHECK(clWaitForEvents(1, &vadd_done));
  cl_int status = 0;
  APP_CHECK(clGetEventInfo(vadd_done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL));
  app_expect(status == CL_COMPLETE, "vadd event is CL_COMPLETE after clWaitForEvents");
  APP_CHECK(clReleaseEvent(vadd_done));

  APP_ARG(saxpy, 0, alpha);
  APP_ARG(saxpy, 1, x_buf);
  APP_ARG(saxpy, 2, y_buf);
  cl_event saxpy_done[2];
  APP_CHECK(clEnqueueNDRangeKernel(q, saxpy, 1, NULL, &global, NULL, 0, NULL, &saxpy_done[0]));
  APP_CHECK(clEnqueueNDRangeKernel(q, saxpy, 1, NULL, &global, NULL, 1, &saxpy_done[0], &saxpy_done[1]));

  APP_ARG(scale_odd, 0, odd_in_buf);
  APP_ARG(scale_odd, 1, odd_out_buf);
  size_t global_odd = N_ODD;
  APP_CHECK(clEnqueueNDRangeKernel(q, scale_odd, 1, NULL, &global_odd, NULL, 0, NULL, NULL));

  APP_CHECK(clWaitForEvents(2, saxpy_done));
  APP_CHECK(clReleaseEvent(saxpy_done[0]));
  APP_CHECK(clReleaseEvent(saxpy_done[1]));
  APP_CHECK(clEnqueueReadBuffer(q, c_buf, CL_TRUE, 0, N * 4, c, 0, NULL, NULL));
  APP_CHECK(clEnqueueReadBuffer(q, y_buf, CL_TRUE, 0, N * 4, y, 0, NULL, NULL));
  APP_CHECK(clEnqueueReadBuffer(q, odd_out_buf, CL_TRUE, 0, N_ODD * 4, odd_out, 0, NULL, NULL));

  app_check_i32("c", c, c_ref, N);
  app_check_f32("y", y, y_ref, N);
  app_check_i32("odd_out", odd_out, odd_ref, N_ODD);
  app_print_checksum("c", c, N * 4);
  app_print_checksum("y", y, N * 4);
  app_print_checksum("odd_out", odd_out, N_ODD * 4);

  cl_mem bufs[] = {a_buf, b_buf, c_buf, x_buf, y_buf, odd_in_buf, odd_out_buf};
  for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; ++i) APP_CHECK(clReleaseMemObject(bufs[i]));
  APP_CHECK(clReleaseKernel(vadd));
  APP_CHECK(clReleaseKernel(saxpy));
  APP_CHECK(clReleaseKernel(scale_odd));
  APP_CHECK(clReleaseProgram(program));
  APP_CHECK(clReleaseCommandQueue(q));
  APP_CHECK(clReleaseContext(ctx));
  free(a); free(b); free(c); free(c_ref); free(x); free(y); free(y_ref);
  free(odd_in); free(odd_out); free(odd_ref);
  return app_finish();
}
