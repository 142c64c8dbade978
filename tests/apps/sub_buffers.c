/* Sub-buffers: four regions of one parent buffer are written by launches on the sub-buffers, a
 * launch on the parent reads across the region borders, a launch on a sub-buffer of the output
 * changes its last quarter, and results are read both through the parent and through a
 * sub-buffer. Writes through a sub-buffer must be seen through the parent and the other way.
 * Aliased arguments: one launch reads a sub-buffer beside its parent (two regions through the parent,
 * a third through its sub-buffer: only reads, as the spec defines for a buffer and its sub-buffers
 * at once) and writes a sub-buffer of the output, and one takes the same buffer twice, read through
 * one argument and written through the other. */
#include "common/app_util.h"

static const char* kSource =
    "__kernel void region_fill(__global uint* region, uint base) {\n"
    "  uint i = (uint)get_global_id(0);\n"
    "  region[i] = base + i * i;\n"
    "}\n"
    "__kernel void neighbor_sum(__global const uint* in, __global uint* out, uint n) {\n"
    "  uint i = (uint)get_global_id(0);\n"
    "  out[i] = in[i] + 2u * in[(i + 1u) % n] + 3u * in[(i + n - 1u) % n];\n"
    "}\n"
    "__kernel void negate_tail(__global uint* tail) {\n"
    "  size_t i = get_global_id(0);\n"
    "  tail[i] = ~tail[i];\n"
    "}\n"
    "__kernel void mix_regions(__global uint* head, __global const uint* third, __global const uint* whole,\n"
    "                          uint region) {\n"
    "  uint i = (uint)get_global_id(0);\n"
    "  head[i] = whole[i] * 3u + third[i] + whole[region + i] + 1u;\n"
    "}\n"
    "__kernel void scale_in_place(__global const uint* in, __global uint* out) {\n"
    "  size_t i = get_global_id(0);\n"
    "  out[i] = in[i] * 5u + 1u;\n"
    "}\n";

enum { REGIONS = 4, REGION = 1 << 18, N = REGIONS * REGION, LOCAL = 256 };

static cl_mem sub_buffer(cl_mem parent, cl_mem_flags flags, size_t origin, size_t size) {
  cl_buffer_region region = {origin, size};
  cl_int err = CL_SUCCESS;
  cl_mem m = clCreateSubBuffer(parent, flags, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
  APP_CHECK_ERR(err, "clCreateSubBuffer");
  return m;
}

int main(void) {
  cl_platform_id platform;
  cl_device_id device;
  app_pick_device(&platform, &device);
  cl_context ctx = app_create_context(platform, device);
  cl_command_queue q = app_create_queue(ctx, device, 0);
  cl_program program = app_build_program(ctx, device, 1, &kSource, "");
  cl_kernel region_fill = app_create_kernel(program, "region_fill");
  cl_kernel neighbor_sum = app_create_kernel(program, "neighbor_sum");
  cl_kernel negate_tail = app_create_kernel(program, "negate_tail");
  cl_kernel mix_regions = app_create_kernel(program, "mix_regions");
  cl_kernel scale_in_place = app_create_kernel(program, "scale_in_place");

  cl_uint align_bits = 0;
  APP_CHECK(clGetDeviceInfo(device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL));
  const size_t region_bytes = REGION * 4, bytes = N * 4;
  app_expect(region_bytes % (align_bits / 8) == 0, "regions are aligned to CL_DEVICE_MEM_BASE_ADDR_ALIGN");

  uint32_t* filled = (uint32_t*)app_alloc(bytes);
  uint32_t* out = (uint32_t*)app_alloc(bytes);
  uint32_t* second_region = (uint32_t*)app_alloc(region_bytes);
  uint32_t* filled_ref = (uint32_t*)app_alloc(bytes);
  uint32_t* out_ref = (uint32_t*)app_alloc(bytes);
  for (uint32_t r = 0; r < REGIONS; ++r)
    for (uint32_t i = 0; i < REGION; ++i) filled_ref[r * REGION + i] = r * 1000003u + i * i;
  for (uint32_t i = 0; i < N; ++i) {
    out_ref[i] = filled_ref[i] + 2u * filled_ref[(i + 1u) % N] + 3u * filled_ref[(i + N - 1u) % N];
    if (i >= 3 * REGION) out_ref[i] = ~out_ref[i];
  }
  for (uint32_t i = 0; i < REGION; ++i) /* mix_regions: the output's first region, from three of the parent */
    out_ref[i] = filled_ref[i] * 3u + filled_ref[2 * REGION + i] + filled_ref[REGION + i] + 1u;
  for (uint32_t i = 0; i < N; ++i) out_ref[i] = out_ref[i] * 5u + 1u; /* scale_in_place, after it */

  cl_mem parent = app_create_buffer(ctx, CL_MEM_READ_WRITE, bytes, NULL);
  cl_mem out_buf = app_create_buffer(ctx, CL_MEM_READ_WRITE, bytes, NULL);
  cl_mem regions[REGIONS];
  size_t global = REGION, local = LOCAL;
  for (cl_uint r = 0; r < REGIONS; ++r) {
    regions[r] = sub_buffer(parent, CL_MEM_READ_WRITE, r * region_bytes, region_bytes);
    cl_uint base = r * 1000003u;
    APP_ARG(region_fill, 0, regions[r]);
    APP_ARG(region_fill, 1, base);
    APP_CHECK(clEnqueueNDRangeKernel(q, region_fill, 1, NULL, &global, &local, 0, NULL, NULL));
  }

  cl_uint n = N;
  APP_ARG(neighbor_sum, 0, parent);
  APP_ARG(neighbor_sum, 1, out_buf);
  APP_ARG(neighbor_sum, 2, n);
  size_t global_all = N;
  APP_CHECK(clEnqueueNDRangeKernel(q, neighbor_sum, 1, NULL, &global_all, NULL, 0, NULL, NULL));

  cl_mem tail = sub_buffer(out_buf, CL_MEM_READ_WRITE, 3 * region_bytes, region_bytes);
  APP_ARG(negate_tail, 0, tail);
  APP_CHECK(clEnqueueNDRangeKernel(q, negate_tail, 1, NULL, &global, &local, 0, NULL, NULL));

  cl_uint region = REGION;
  cl_mem head = sub_buffer(out_buf, CL_MEM_READ_WRITE, 0, region_bytes);
  APP_ARG(mix_regions, 0, head);
  APP_ARG(mix_regions, 1, regions[2]);
  APP_ARG(mix_regions, 2, parent);
  APP_ARG(mix_regions, 3, region);
  APP_CHECK(clEnqueueNDRangeKernel(q, mix_regions, 1, NULL, &global, &local, 0, NULL, NULL));
  APP_ARG(scale_in_place, 0, out_buf);
  APP_ARG(scale_in_place, 1, out_buf);
  APP_CHECK(clEnqueueNDRangeKernel(q, scale_in_place, 1, NULL, &global_all, &local, 0, NULL, NULL));

  APP_CHECK(clEnqueueReadBuffer(q, parent, CL_TRUE, 0, bytes, filled, 0, NULL, NULL));
  APP_CHECK(clEnqueueReadBuffer(q, out_buf, CL_TRUE, 0, bytes, out, 0, NULL, NULL));
  APP_CHECK(clEnqueueReadBuffer(q, regions[1], CL_TRUE, 0, region_bytes, second_region, 0, NULL, NULL));

  app_check_u32("filled", filled, filled_ref, N);
  app_check_u32("out", out, out_ref, N);
  app_check_u32("second_region", second_region, filled_ref + REGION, REGION);
  app_print_checksum("filled", filled, bytes);
  app_print_checksum("out", out, bytes);
  app_print_checksum("second_region", second_region, region_bytes);

  for (int r = 0; r < REGIONS; ++r) APP_CHECK(clReleaseMemObject(regions[r]));
  APP_CHECK(clReleaseMemObject(tail));
  APP_CHECK(clReleaseMemObject(head));
  APP_CHECK(clReleaseMemObject(parent));
  APP_CHECK(clReleaseMemObject(out_buf));
  APP_CHECK(clReleaseKernel(region_fill));
  APP_CHECK(clReleaseKernel(neighbor_sum));
  APP_CHECK(clReleaseKernel(negate_tail));
  APP_CHECK(clReleaseKernel(mix_regions));
  APP_CHECK(clReleaseKernel(scale_in_place));
  APP_CHECK(clReleaseProgram(program));
  APP_CHECK(clReleaseCommandQueue(q));
  APP_CHECK(clReleaseContext(ctx));
  free(filled); free(out); free(second_region); free(filled_ref); free(out_ref);
  return app_finish();
}
