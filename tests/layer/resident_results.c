/* Resident results (exec/resident_results.h): what the other device writes in a split launch stays on
 * it until something needs it elsewhere. A 1-D stencil iterated between two buffers needs only the
 * halo from the other device each launch; an in-place kernel then overwrites what only that device
 * holds; the stencil goes on; the app reads one half, then both buffers. Run under injected faults
 * from a later sub-launch on (COEX_FAULT=fail:1@<n>, stall:1@<n>), the reruns must fetch the bytes
 * only the failed device holds (tests/layer/layer_checks.py, check resident_results). */
#include "common/app_util.h"

static const char* kSource =
    "__kernel void smooth(__global const uint* src, __global uint* dst, uint n) {\n"
    "  uint i = (uint)get_global_id(0);\n"
    "  if (i >= n) return;\n"
    "  if (i == 0 || i == n - 1) {\n"
    "    dst[i] = src[i];\n"
    "    return;\n"
    "  }\n"
    "  dst[i] = (src[i - 1] ^ (src[i] * 3u)) + src[i + 1];\n"
    "}\n"
    "__kernel void bump(__global uint* x, uint k) {\n"
    "  uint i = (uint)get_global_id(0);\n"
    "  x[i] = x[i] * k + i;\n"
    "}\n";

enum { N = 1 << 16, SMOOTH_FIRST = 12, BUMPS = 6, SMOOTH_AFTER = 6 };
#define BYTES ((size_t)N * sizeof(uint32_t))

static cl_command_queue q;
static cl_kernel smooth, bump;

static void smooth_on_host(const uint32_t* src, uint32_t* dst) {
  dst[0] = src[0];
  dst[N - 1] = src[N - 1];
  for (size_t i = 1; i + 1 < N; ++i) dst[i] = (src[i - 1] ^ (src[i] * 3u)) + src[i + 1];
}

static void bump_on_host(uint32_t* x, uint32_t k) {
  for (size_t i = 0; i < N; ++i) x[i] = x[i] * k + (uint32_t)i;
}

static void launch_smooth(cl_mem src, cl_mem dst) {
  cl_uint n = N;
  size_t global = N, local = 64;
  APP_CHECK(clSetKernelArg(smooth, 0, sizeof(cl_mem), &src));
  APP_CHECK(clSetKernelArg(smooth, 1, sizeof(cl_mem), &dst));
  APP_CHECK(clSetKernelArg(smooth, 2, sizeof(cl_uint), &n));
  APP_CHECK(clEnqueueNDRangeKernel(q, smooth, 1, NULL, &global, &local, 0, NULL, NULL));
}

static void launch_bump(cl_mem x, cl_uint k) {
  size_t global = N, local = 64;
  APP_CHECK(clSetKernelArg(bump, 0, sizeof(cl_mem), &x));
  APP_CHECK(clSetKernelArg(bump, 1, sizeof(cl_uint), &k));
  APP_CHECK(clEnqueueNDRangeKernel(q, bump, 1, NULL, &global, &local, 0, NULL, NULL));
}

int main(void) {
  cl_platform_id platform;
  cl_device_id device;
  app_pick_device(&platform, &device);
  cl_context ctx = app_create_context(platform, device);
  q = app_create_queue(ctx, device, 0);
  cl_program program = app_build_program(ctx, device, 1, &kSource, "");
  smooth = app_create_kernel(program, "smooth");
  bump = app_create_kernel(program, "bump");
  uint32_t* a = (uint32_t*)app_alloc(BYTES);
  uint32_t* b = (uint32_t*)app_alloc(BYTES);
  uint32_t* got = (uint32_t*)app_alloc(BYTES);
  uint32_t seed = 11;
  for (size_t i = 0; i < N; ++i) a[i] = app_rand(&seed);
  memcpy(b, a, BYTES);
  cl_mem da = app_create_buffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, BYTES, a);
  cl_mem db = app_create_buffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, BYTES, b);

  /* The stencil, a -> b -> a ...: an even count ends in a. */
  for (int s = 0; s < SMOOTH_FIRST; s += 2) {
    launch_smooth(da, db);
    smooth_on_host(a, b);
    launch_smooth(db, da);
    smooth_on_host(b, a);
  }
  /* In place, over bytes the other device alone holds. */
  for (int s = 0; s < BUMPS; ++s) {
    launch_bump(da, (cl_uint)(3 + 2 * s));
    bump_on_host(a, (uint32_t)(3 + 2 * s));
  }
  /* The second half of a: the other device's under an even split. */
  APP_CHECK(clEnqueueReadBuffer(q, da, CL_TRUE, BYTES / 2, BYTES / 2, got + N / 2, 0, NULL, NULL));
  app_check_u32("second half after in-place launches", got + N / 2, a + N / 2, N / 2);
  for (int s = 0; s < SMOOTH_AFTER; s += 2) {
    launch_smooth(da, db);
    smooth_on_host(a, b);
    launch_smooth(db, da);
    smooth_on_host(b, a);
  }
  APP_CHECK(clEnqueueReadBuffer(q, da, CL_TRUE, 0, BYTES, got, 0, NULL, NULL));
  app_check_u32("a", got, a, N);
  app_print_checksum("a", got, BYTES);
  APP_CHECK(clEnqueueReadBuffer(q, db, CL_TRUE, 0, BYTES, got, 0, NULL, NULL));
  app_check_u32("b", got, b, N);
  app_print_checksum("b", got, BYTES);

  APP_CHECK(clReleaseMemObject(da));
  APP_CHECK(clReleaseMemObject(db));
  APP_CHECK(clReleaseKernel(smooth));
  APP_CHECK(clReleaseKernel(bump));
  APP_CHECK(clReleaseProgram(program));
  APP_CHECK(clReleaseCommandQueue(q));
  APP_CHECK(clReleaseContext(ctx));
  free(a), free(b), free(got);
  return app_finish();
}
