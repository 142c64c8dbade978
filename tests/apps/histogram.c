/* A histogram through global atomics (atomic_inc), which must never be split, fed by a kernel that
 * writes one byte per work-item (neighbouring work-items write neighbouring bytes). The bins are
 * zeroed with clEnqueueFillBuffer and the histogram kernel runs twice, accumulating. */
#include "common/app_util.h"

static const char* kSource =
    "__kernel void quantize(__global const uint* in, __global uchar* bin_of) {\n"
    "  size_t i = get_global_id(0);\n"
    "  uint v = in[i];\n"
    "  v ^= v >> 16;\n"
    "  v *= 0x45d9f3bu;\n"
    "  v ^= v >> 16;\n"
    "  bin_of[i] = (uchar)(v % 251u);\n"
    "}\n"
    "__kernel void histogram(__global const uchar* bin_of, __global uint* bins) {\n"
    "  atomic_inc(&bins[bin_of[get_global_id(0)]]);\n"
    "}\n";

enum { N = 1 << 20, BINS = 256, LOCAL = 256 };

int main(void) {
  cl_platform_id platform;
  cl_device_id device;
  app_pick_device(&platform, &device);
  cl_context ctx = app_create_context(platform, device);
  cl_command_queue q = app_create_queue(ctx, device, 0);
  cl_program program = app_build_program(ctx, device, 1, &kSource, "");
  cl_kernel quantize = app_create_kernel(program, "quantize");
  cl_kernel histogram = app_create_kernel(program, "histogram");

  uint32_t* in = (uint32_t*)app_alloc(N * 4);
  uint8_t* bin_of = (uint8_t*)app_alloc(N);
  uint8_t* bin_of_ref = (uint8_t*)app_alloc(N);
  uint32_t bins[BINS], bins_ref[BINS];
  memset(bins_ref, 0, sizeof bins_ref);
  uint32_t seed = 99;
  for (size_t i = 0; i < N; ++i) {
    uint32_t v = in[i] = app_rand(&seed);
    v ^= v >> 16;
    v *= 0x45d9f3bu;
    v ^= v >> 16;
    bin_of_ref[i] = (uint8_t)(v % 251u);
    bins_ref[bin_of_ref[i]] += 2; /* the histogram kernel runs twice */
  }

  cl_mem in_buf = app_create_buffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, N * 4, in);
  cl_mem bin_of_buf = app_create_buffer(ctx, CL_MEM_READ_WRITE, N, NULL);
  cl_mem bins_buf = app_create_buffer(ctx, CL_MEM_READ_WRITE, sizeof bins, NULL);
  cl_uint zero = 0;
  APP_CHECK(clEnqueueFillBuffer(q, bins_buf, &zero, sizeof zero, 0, sizeof bins, 0, NULL, NULL));

  APP_ARG(quantize, 0, in_buf);
  APP_ARG(quantize, 1, bin_of_buf);
  size_t global = N, local = LOCAL;
  APP_CHECK(clEnqueueNDRangeKernel(q, quantize, 1, NULL, &global, NULL, 0, NULL, NULL));

  APP_ARG(histogram, 0, bin_of_buf);
  APP_ARG(histogram, 1, bins_buf);
  APP_CHECK(clEnqueueNDRangeKernel(q, histogram, 1, NULL, &global, &local, 0, NULL, NULL));
  APP_CHECK(clEnqueueNDRangeKernel(q, histogram, 1, NULL, &global, &local, 0, NULL, NULL));

  APP_CHECK(clEnqueueReadBuffer(q, bin_of_buf, CL_TRUE, 0, N, bin_of, 0, NULL, NULL));
  APP_CHECK(clEnqueueReadBuffer(q, bins_buf, CL_TRUE, 0, sizeof bins, bins, 0, NULL, NULL));

  app_check_u8("bin_of", bin_of, bin_of_ref, N);
  app_check_u32("bins", bins, bins_ref, BINS);
  app_print_checksum("bin_of", bin_of, N);
  app_print_checksum("bins", bins, sizeof bins);

  APP_CHECK(clReleaseMemObject(in_buf));
  APP_CHECK(clReleaseMemObject(bin_of_buf));
  APP_CHECK(clReleaseMemObject(bins_buf));
  APP_CHECK(clReleaseKernel(quantize));
  APP_CHECK(clReleaseKernel(histogram));
  APP_CHECK(clReleaseProgram(program));
  APP_CHECK(clReleaseCommandQueue(q));
  APP_CHECK(clReleaseContext(ctx));
  free(in); free(bin_of); free(bin_of_ref);
  return app_finish();
}
