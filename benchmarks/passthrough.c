/* The cost coex adds to calls it only passes through: N clSetKernelArg calls, and M launches of an
 * empty kernel, on the first device of the first platform, or of the first platform whose name holds
 * PLATFORM. Prints the median time per call over batches of 1000 calls.
 *   passthrough [N [M [PLATFORM]]] */
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

static int compare(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  long set_args = argc > 1 ? atol(argv[1]) : 1000000, launches = argc > 2 ? atol(argv[2]) : 100000;
  const char* wanted = argc > 3 ? argv[3] : "";
  cl_platform_id platforms[16], platform = NULL;
  cl_uint n_platforms = 0;
  if (clGetPlatformIDs(16, platforms, &n_platforms) != CL_SUCCESS || n_platforms == 0) return 1;
  for (cl_uint p = 0; p < n_platforms && p < 16 && !platform; ++p) {
    char name[256] = "";
    clGetPlatformInfo(platforms[p], CL_PLATFORM_NAME, sizeof name, name, NULL);
    if (strstr(name, wanted)) platform = platforms[p];
  }
  if (!platform) {
    fprintf(stderr, "passthrough: no platform named like '%s'\n", wanted);
    return 1;
  }
  cl_device_id device;
  if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL) != CL_SUCCESS) return 1;
  cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, NULL);
  cl_command_queue q = clCreateCommandQueue(ctx, device, 0, NULL);
  const char* src = "__kernel void empty(int x) { }";
  cl_program program = clCreateProgramWithSource(ctx, 1, &src, NULL, NULL);
  if (clBuildProgram(program, 1, &device, "", NULL, NULL) != CL_SUCCESS) return 1;
  cl_kernel kernel = clCreateKernel(program, "empty", NULL);
  long batches = set_args / 1000;
  double* per_call = malloc(sizeof(double) * (size_t)(batches > launches / 1000 ? batches : launches / 1000 + 1));
  for (long b = 0; b < batches; ++b) {
    double t0 = now();
    for (int i = 0; i < 1000; ++i) clSetKernelArg(kernel, 0, sizeof(int), &i);
    per_call[b] = (now() - t0) / 1000;
  }
  qsort(per_call, (size_t)batches, sizeof(double), compare);
  printf("clSetKernelArg_ns %.1f\n", per_call[batches / 2] * 1e9);
  size_t global = 1;
  long launch_batches = launches / 1000;
  for (long b = 0; b < launch_batches; ++b) {
    double t0 = now();
    for (int i = 0; i < 1000; ++i) clEnqueueNDRangeKernel(q, kernel, 1, NULL, &global, NULL, 0, NULL, NULL);
    per_call[b] = (now() - t0) / 1000;
    clFinish(q);
  }
  qsort(per_call, (size_t)launch_batches, sizeof(double), compare);
  printf("clEnqueueNDRangeKernel_ns %.1f\n", per_call[launch_batches / 2] * 1e9);
  return 0;
}
