/* Two programs, each built and launched in turn: the first always the same, the second built with
 * -DFACTOR=<the first argument> (3 when none), so that a run can find one program's analysis kept by
 * an earlier run and not the other's (report_checks.py, no_libclang). A second argument `second`
 * runs the second program alone (`both`: both). A third, the launches of each program's kernel (1
 * when none), each followed by a read of its output. A fourth, milliseconds to pause between the two
 * programs (0 when none). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/app_util.h"

static const char* kFirst =
    "__kernel void offset_by_index(__global const int* in, __global int* out) {\n"
    "  size_t i = get_global_id(0);\n"
    "  out[i] = in[i] * 2 + (int)i;\n"
    "}\n";
static const char* kSecond =
    "__kernel void times_factor(__global const int* in, __global int* out) {\n"
    "  size_t i = get_global_id(0);\n"
    "  out[i] = in[i] * FACTOR - 1;\n"
    "}\n";

enum { N = 1 << 20 };

/* Builds `source` with `options`, runs its one kernel over `in` into a new buffer `launches` times,
 * reading it back after each. */
static void run_program(cl_context ctx, cl_device_id device, cl_command_queue q, const char* source,
                        const char* options, const char* kernel_name, cl_mem in_buf, int32_t* out,
                        unsigned launches) {
  cl_program program = app_build_program(ctx, device, 1, &source, options);
  cl_kernel kernel = app_create_kernel(program, kernel_name);
  cl_mem out_buf = app_create_buffer(ctx, CL_MEM_WRITE_ONLY, N * 4, NULL);
  APP_ARG(kernel, 0, in_buf);
  APP_ARG(kernel, 1, out_buf);
  size_t global = N;
  for (unsigned l = 0; l < launches; ++l) {
    APP_CHECK(clEnqueueNDRangeKernel(q, kernel, 1, NULL, &global, NULL, 0, NULL, NULL));
    APP_CHECK(clEnqueueReadBuffer(q, out_buf, CL_TRUE, 0, N * 4, out, 0, NULL, NULL));
  }
  APP_CHECK(clReleaseMemObject(out_buf));
  APP_CHECK(clReleaseKernel(kernel));
  APP_CHECK(clReleaseProgram(program));
}

int main(int argc, char** argv) {
  const int factor = argc > 1 ? atoi(argv[1]) : 3;
  const unsigned launches = argc > 3 ? (unsigned)strtoul(argv[3], NULL, 10) : 1;
  const unsigned long pause_ms = argc > 4 ? strtoul(argv[4], NULL, 10) : 0;
  cl_platform_id platform;
  cl_device_id device;
  app_pick_device(&platform, &device);
  cl_context ctx = app_create_context(platform, device);
  cl_command_queue q = app_create_queue(ctx, device, 0);
  int32_t* in = (int32_t*)app_alloc(N * 4);
  int32_t* out = (int32_t*)app_alloc(N * 4);
  int32_t* ref = (int32_t*)app_alloc(N * 4);
  uint32_t seed = 777;
  for (size_t i = 0; i < N; ++i) in[i] = (int32_t)(app_rand(&seed) % 100000);
  cl_mem in_buf = app_create_buffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, N * 4, in);

  if (argc < 3 || strcmp(argv[2], "second") != 0) {
    run_program(ctx, device, q, kFirst, "", "offset_by_index", in_buf, out, launches);
    for (size_t i = 0; i < N; ++i) ref[i] = in[i] * 2 + (int32_t)i;
    app_check_i32("first", out, ref, N);
    app_print_checksum("first", out, N * 4);
    const struct timespec pause = {(time_t)(pause_ms / 1000), (long)(pause_ms % 1000) * 1000000L};
    nanosleep(&pause, NULL);
  }

  char options[32];
  snprintf(options, sizeof options, "-DFACTOR=%d", factor);
  run_program(ctx, device, q, kSecond, options, "times_factor", in_buf, out, launches);
  for (size_t i = 0; i < N; ++i) ref[i] = in[i] * factor - 1;
  app_check_i32("second", out, ref, N);
  app_print_checksum("second", out, N * 4);

  APP_CHECK(clReleaseMemObject(in_buf));
  APP_CHECK(clReleaseCommandQueue(q));
  APP_CHECK(clReleaseContext(ctx));
  free(in);
  free(out);
  free(ref);
  return app_finish();
}
