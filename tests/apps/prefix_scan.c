/* An inclusive prefix sum in three launches, the usual GPU pipeline: a scan inside each work-group
 * in __local memory that writes each group's total at get_group_id, a one-work-item scan of the
 * totals, and a launch that adds to each element the offset its group reads at get_group_id. */
#include "common/app_util.h"

static const char* kSource =
    "__kernel void scan_local(__global const uint* in, __global uint* out, __global uint* totals,\n"
    "                         __local uint* tmp) {\n"
    "  size_t lid = get_local_id(0), size = get_local_size(0);\n"
    "  tmp[lid] = in[get_global_id(0)];\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  for (size_t offset = 1; offset < size; offset <<= 1) {\n"
    "    uint v = lid >= offset ? tmp[lid - offset] : 0u;\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    tmp[lid] += v;\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  }\n"
    "  out[get_global_id(0)] = tmp[lid];\n"
    "  if (lid == size - 1) totals[get_group_id(0)] = tmp[lid];\n"
    "}\n"
    "__kernel void scan_totals(__global const uint* totals, __global uint* offsets, uint count) {\n"
    "  uint running = 0;\n"
    "  for (uint g = 0; g < count; ++g) {\n"
    "    offsets[g] = running;\n"
    "    running += totals[g];\n"
    "  }\n"
    "}\n"
    "__kernel void add_offsets(__global uint* out, __global const uint* offsets) {\n"
    "  out[get_global_id(0)] += offsets[get_group_id(0)];\n"
    "}\n";

enum { N = 1 << 20, LOCAL = 256, GROUPS = N / LOCAL };

int main(void) {
  cl_platform_id platform;
  cl_device_id device;
  app_pick_device(&platform, &device);
  cl_context ctx = app_create_context(platform, device);
  cl_command_queue q = app_create_queue(ctx, device, 0);
  cl_program program = app_build_program(ctx, device, 1, &kSource, "");
  cl_kernel scan_local = app_create_kernel(program, "scan_local");
  cl_kernel scan_totals = app_create_kernel(program, "scan_totals");
  cl_kernel add_offsets = app_create_kernel(program, "add_offsets");

  const size_t bytes = N * 4;
  uint32_t* in = (uint32_t*)app_alloc(bytes);
  uint32_t* out = (uint32_t*)app_alloc(bytes);
  uint32_t* out_ref = (uint32_t*)app_alloc(bytes);
  uint32_t offsets[GROUPS], offsets_ref[GROUPS];
  uint32_t seed = 8080, running = 0;
  for (size_t i = 0; i < N; ++i) {
    in[i] = app_rand(&seed) % 100;
    if (i % LOCAL == 0) offsets_ref[i / LOCAL] = running;
    running += in[i];
    out_ref[i] = running;
  }

  cl_mem in_buf = app_create_buffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, in);
  cl_mem out_buf = app_create_buffer(ctx, CL_MEM_READ_WRITE, bytes, NULL);
  cl_mem totals_buf = app_create_buffer(ctx, CL_MEM_READ_WRITE, GROUPS * 4, NULL);
  cl_mem offsets_buf = app_create_buffer(ctx, CL_MEM_READ_WRITE, GROUPS * 4, NULL);

  APP_ARG(scan_local, 0, in_buf);
  APP_ARG(scan_local, 1, out_buf);
  APP_ARG(scan_local, 2, totals_buf);
  APP_CHECK(clSetKernelArg(scan_local, 3, LOCAL * sizeof(cl_uint), NULL));
  size_t global = N, local = LOCAL;
  APP_CHECK(clEnqueueNDRangeKernel(q, scan_local, 1, NULL, &global, &local, 0, NULL, NULL));

  cl_uint count = GROUPS;
  APP_ARG(scan_totals, 0, totals_buf);
  APP_ARG(scan_totals, 1, offsets_buf);
  APP_ARG(scan_totals, 2, count);
  size_t one = 1;
  APP_CHECK(clEnqueueNDRangeKernel(q, scan_totals, 1, NULL, &one, &one, 0, NULL, NULL));

  APP_ARG(add_offsets, 0, out_buf);
  APP_ARG(add_offsets, 1, offsets_buf);
  APP_CHECK(clEnqueueNDRangeKernel(q, add_offsets, 1, NULL, &global, &local, 0, NULL, NULL));

  APP_CHECK(clEnqueueReadBuffer(q, out_buf, CL_TRUE, 0, bytes, out, 0, NULL, NULL));
  APP_CHECK(clEnqueueReadBuffer(q, offsets_buf, CL_TRUE, 0, sizeof offsets, offsets, 0, NULL, NULL));

  app_check_u32("offsets", offsets, offsets_ref, GROUPS);
  app_check_u32("scan", out, out_ref, N);
  app_print_checksum("offsets", offsets, sizeof offsets);
  app_print_checksum("scan", out, bytes);

  APP_CHECK(clReleaseMemObject(in_buf));
  APP_CHECK(clReleaseMemObject(out_buf));
  APP_CHECK(clReleaseMemObject(totals_buf));
  APP_CHECK(clReleaseMemObject(offsets_buf));
  APP_CHECK(clReleaseKernel(scan_local));
  APP_CHECK(clReleaseKernel(scan_totals));
  APP_CHECK(clReleaseKernel(add_offsets));
  APP_CHECK(clReleaseProgram(program));
  APP_CHECK(clReleaseCommandQueue(q));
  APP_CHECK(clReleaseContext(ctx));
  free(in); free(out); free(out_ref);
  return app_finish();
}
