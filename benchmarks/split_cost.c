/* The fixed cost of a split launch (docs/performance.md, "The cost of a split launch"): L launches
 * of a kernel that does almost nothing per work-item over N work-items, enqueued back to back on one
 * in-order queue, one clFinish at the end (or after every launch with --sync). Prints the wall time
 * per launch and a checksum of the result, so that runs bare, under coex unsplit and under coex
 * split can be set side by side: the difference per launch is what a split costs beyond the work.
 *   split_cost [--launches L] [--items N] [--local W] [--sync] */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static int check(cl_int err, const char* what) {
  if (err != CL_SUCCESS) {
    fprintf(stderr, "split_cost: %s failed (error %d)\n", what, err);
    exit(1);
  }
  return 0;
}

int main(int argc, char** argv) {
  long launches = 10000;
  size_t items = 65536, local = 64;
  int sync = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--launches") && i + 1 < argc)
      launches = atol(argv[++i]);
    else if (!strcmp(argv[i], "--items") && i + 1 < argc)
      items = (size_t)atol(argv[++i]);
    else if (!strcmp(argv[i], "--local") && i + 1 < argc)
      local = (size_t)atol(argv[++i]);
    else if (!strcmp(argv[i], "--sync"))
      sync = 1;
    else {
      fprintf(stderr, "usage: split_cost [--launches L] [--items N] [--local W] [--sync]\n");
      return 2;
    }
  }
  cl_int err;
  cl_platform_id platform;
  cl_device_id device;
  check(clGetPlatformIDs(1, &platform, NULL), "clGetPlatformIDs");
  check(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL), "clGetDeviceIDs");
  cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
  check(err, "clCreateContext");
  cl_command_queue q = clCreateCommandQueue(ctx, device, 0, &err);
  check(err, "clCreateCommandQueue");
  const char* src =
      "__kernel void advance(__global float* y, __global const float* x, float a) {\n"
      "  size_t i = get_global_id(0);\n"
      "  y[i] = a * x[i] + y[i];\n"
      "}\n";
  cl_program program = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
  check(err, "clCreateProgramWithSource");
  check(clBuildProgram(program, 1, &device, "", NULL, NULL), "clBuildProgram");
  cl_kernel kernel = clCreateKernel(program, "advance", &err);
  check(err, "clCreateKernel");
  float* host = malloc(items * sizeof(float));
  for (size_t i = 0; i < items; ++i) host[i] = (float)(i % 1000) * 0.001f;
  cl_mem x = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, items * sizeof(float), host, &err);
  check(err, "clCreateBuffer x");
  cl_mem y = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, items * sizeof(float), host, &err);
  check(err, "clCreateBuffer y");
  float a = 0.0001f;
  check(clSetKernelArg(kernel, 0, sizeof(cl_mem), &y), "clSetKernelArg 0");
  check(clSetKernelArg(kernel, 1, sizeof(cl_mem), &x), "clSetKernelArg 1");
  check(clSetKernelArg(kernel, 2, sizeof(float), &a), "clSetKernelArg 2");
  /* One launch first, outside the timing: the driver's compile of the kernel. */
  check(clEnqueueNDRangeKernel(q, kernel, 1, NULL, &items, &local, 0, NULL, NULL), "clEnqueueNDRangeKernel");
  check(clFinish(q), "clFinish");
  double t0 = now();
  for (long l = 1; l < launches; ++l) {
    check(clEnqueueNDRangeKernel(q, kernel, 1, NULL, &items, &local, 0, NULL, NULL), "clEnqueueNDRangeKernel");
    if (sync) check(clFinish(q), "clFinish");
  }
  check(clFinish(q), "clFinish");
  double elapsed = now() - t0;
  check(clEnqueueReadBuffer(q, y, CL_TRUE, 0, items * sizeof(float), host, 0, NULL, NULL), "clEnqueueReadBuffer");
  double sum = 0;
  for (size_t i = 0; i < items; ++i) sum += host[i];
  printf("launches %ld\nitems %zu\nms_per_launch %.4f\nchecksum %.6e\n", launches, items,
         launches > 1 ? elapsed * 1e3 / (double)(launches - 1) : 0.0, sum);
  clReleaseMemObject(x);
  clReleaseMemObject(y);
  clReleaseKernel(kernel);
  clReleaseProgram(program);
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
  free(host);
  return 0;
}
