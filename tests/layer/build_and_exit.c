/* Builds programs, releases them and its context, and exits at once: the way a short tool ends.
 * coex builds each program for its other devices at clBuildProgram, on threads of its own; the exit
 * must neither crash in the driver's half torn-down compiler nor lose the app's status. */
#include "common/app_util.h"

static const char* kSource =
    "__kernel void scale(__global float* x, float a) { size_t i = get_global_id(0); x[i] = a * x[i]; }\n"
    "__kernel void shift(__global float* x, float b) { x[get_global_id(0)] += b * (float)get_group_id(0); }\n";

int main(void) {
  cl_platform_id platform;
  cl_device_id device;
  app_pick_device(&platform, &device);
  cl_context ctx = app_create_context(platform, device);
  /* Several programs, so that builds are still under way when main returns. */
  for (int i = 0; i < 4; ++i) {
    char options[64];
    snprintf(options, sizeof options, "-DVARIANT=%d", i);
    cl_program program = app_build_program(ctx, device, 1, &kSource, options);
    APP_CHECK(clReleaseProgram(program));
  }
  APP_CHECK(clReleaseContext(ctx));
  printf("checksum built %016llx\n", 4ULL);
  return app_finish();
}
