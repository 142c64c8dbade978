/* An app with a binary cache, as pyopencl and many others keep one: the first run builds its program
 * from source and writes CL_PROGRAM_BINARIES to the file named by argv[1]; later runs create the
 * program from that file. Every run launches the same kernel and prints the same checksum. */
#include <stdio.h>

#include "common/app_util.h"

static const char* kSource =
    "__kernel void poly(__global const int* in, __global int* out, int c) {\n"
    "  size_t i = get_global_id(0);\n"
    "  int x = in[i];\n"
    "  out[i] = (x * x + c) * (int)(get_group_id(0) % 7 + 1);\n"
    "}\n";

enum { N = 1 << 18 };

static unsigned char* read_file(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char* data = (unsigned char*)app_alloc(n > 0 ? (size_t)n : 1);
  *size = fread(data, 1, (size_t)n, f);
  fclose(f);
  return data;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: binary_cache CACHE_FILE\n");
    return 2;
  }
  cl_platform_id platform;
  cl_device_id device;
  app_pick_device(&platform, &device);
  cl_context ctx = app_create_context(platform, device);
  cl_command_queue q = app_create_queue(ctx, device, 0);

  size_t binary_size = 0;
  unsigned char* binary = read_file(argv[1], &binary_size);
  cl_program program;
  if (binary && binary_size) {
    cl_int err = CL_SUCCESS, status = CL_SUCCESS;
    const unsigned char* binaries[1] = {binary};
    program = clCreateProgramWithBinary(ctx, 1, &device, &binary_size, binaries, &status, &err);
    APP_CHECK_ERR(err, "clCreateProgramWithBinary");
    APP_CHECK(clBuildProgram(program, 1, &device, "", NULL, NULL));
  } else {
    program = app_build_program(ctx, device, 1, &kSource, "");
    APP_CHECK(clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof binary_size, &binary_size, NULL));
    binary = (unsigned char*)app_alloc(binary_size);
    unsigned char* binaries[1] = {binary};
    APP_CHECK(clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof binaries, binaries, NULL));
    FILE* f = fopen(argv[1], "wb");
    if (!f || fwrite(binary, 1, binary_size, f) != binary_size) {
      fprintf(stderr, "cannot write %s\n", argv[1]);
      return 2;
    }
    fclose(f);
  }
  cl_kernel kernel = app_create_kernel(program, "poly");

  int32_t* in = (int32_t*)app_alloc(N * 4);
  int32_t* out = (int32_t*)app_alloc(N * 4);
  int32_t* ref = (int32_t*)app_alloc(N * 4);
  uint32_t seed = 99;
  for (size_t i = 0; i < N; ++i) in[i] = (int32_t)(app_rand(&seed) % 2001) - 1000;
  const int32_t c = 17;
  const size_t global = N, local = 64;
  for (size_t i = 0; i < N; ++i) ref[i] = (in[i] * in[i] + c) * (int32_t)((i / local) % 7 + 1);
  cl_mem in_buf = app_create_buffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, N * 4, in);
  cl_mem out_buf = app_create_buffer(ctx, CL_MEM_WRITE_ONLY, N * 4, NULL);
  APP_ARG(kernel, 0, in_buf);
  APP_ARG(kernel, 1, out_buf);
  APP_ARG(kernel, 2, c);
  APP_CHECK(clEnqueueNDRangeKernel(q, kernel, 1, NULL, &global, &local, 0, NULL, NULL));
  APP_CHECK(clEnqueueReadBuffer(q, out_buf, CL_TRUE, 0, N * 4, out, 0, NULL, NULL));
  app_check_i32("out", out, ref, N);
  app_print_checksum("out", out, N * 4);

  APP_CHECK(clReleaseMemObject(in_buf));
  APP_CHECK(clReleaseMemObject(out_buf));
  APP_CHECK(clReleaseKernel(kernel));
  APP_CHECK(clReleaseProgram(program));
  APP_CHECK(clReleaseCommandQueue(q));
  APP_CHECK(clReleaseContext(ctx));
  free(in); free(out); free(ref); free(binary);
  return app_finish();
}
