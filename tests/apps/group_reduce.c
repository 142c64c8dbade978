/* Per-group partial results written at get_group_id: a sum and a max reduction in __local memory
 * (one through a __local kernel argument, one through a __local array), explicit local sizes, and
 * a kernel that records get_num_groups and get_global_size. A final one-group launch adds the
 * partial sums. */
#include "common/app_util.h"

static const char* kSource =
    "__kernel void reduce_sum(__global const int* in, __global int* partial,\n"
    "                         __local int* scratch) {\n"
    "  size_t lid = get_local_id(0);\n"
    "  scratch[lid] = in[get_global_id(0)];\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  for (size_t s = get_local_size(0) / 2; s > 0; s >>= 1) {\n"
    "    if (lid < s) scratch[lid] += scratch[lid + s];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  }\n"
    "  if (lid == 0) partial[get_group_id(0)] = scratch[0];\n"
    "}\n"
    "__kernel void reduce_max(__global const int* in, __global int* partial,\n"
    "                         __global uint* shape) {\n"
    "  __local int scratch[128];\n"
    "  size_t lid = get_local_id(0);\n"
    "  scratch[lid] = in[get_global_id(0)];\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  for (size_t s = 64; s > 0; s >>= 1) {\n"
    "    if (lid < s) scratch[lid] = max(scratch[lid], scratch[lid + s]);\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  }\n"
    "  if (lid == 0) partial[get_group_id(0)] = scratch[0];\n"
    "  if (get_global_id(0) == 0) {\n"
    "    shape[0] = (uint)get_num_groups(0);\n"
    "    shape[1] = (uint)get_global_size(0);\n"
    "    shape[2] = (uint)get_local_size(0);\n"
    "  }\n"
    "}\n"
    "__kernel void sum_partials(__global const int* partial, uint count, __global int* total) {\n"
    "  __local int scratch[256];\n"
    "  size_t lid = get_local_id(0);\n"
    "  int acc = 0;\n"
    "  for (uint i = lid; i < count; i += 256) acc += partial[i];\n"
    "  scratch[lid] = acc;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  if (lid == 0) {\n"
    "    int t = 0;\n"
    "    for (int i = 0; i < 256; ++i) t += scratch[i];\n"
    "    total[0] = t;\n"
    "  }\n"
    "}\n";

enum { N = 1 << 20, SUM_LOCAL = 256, MAX_LOCAL = 128 };
enum { SUM_GROUPS = N / SUM_LOCAL, MAX_GROUPS = N / MAX_LOCAL };

int main(void) {
  cl_platform_id platform;
  cl_device_id device;
  app_pick_device(&platform, &device);
  cl_context ctx = app_create_context(platform, device);
  cl_command_queue q = app_create_queue(ctx, device, 0);
  cl_program program = app_build_program(ctx, device, 1, &kSource, "");
  cl_kernel reduce_sum = app_create_kernel(program, "reduce_sum");
  cl_kernel reduce_max = app_create_kernel(program, "reduce_max");
  cl_kernel sum_partials = app_create_kernel(program, "sum_partials");

  int32_t* in = (int32_t*)app_alloc(N * 4);
  int32_t* sums = (int32_t*)app_alloc(SUM_GROUPS * 4);
  int32_t* sums_ref = (int32_t*)app_alloc(SUM_GROUPS * 4);
  int32_t* maxes = (int32_t*)app_alloc(MAX_GROUPS * 4);
  int32_t* maxes_ref = (int32_t*)app_alloc(MAX_GROUPS * 4);
  uint32_t seed = 777;
  for (size_t i = 0; i < N; ++i) in[i] = (int32_t)(app_rand(&seed) % 2001) - 1000;
  int32_t total_ref = 0;
  for (size_t g = 0; g < SUM_GROUPS; ++g) {
    int32_t s = 0;
    for (size_t i = 0; i < SUM_LOCAL; ++i) s += in[g * SUM_LOCAL + i];
    sums_ref[g] = s;
    total_ref += s;
  }
  for (size_t g = 0; g < MAX_GROUPS; ++g) {
    int32_t m = in[g * MAX_LOCAL];
    for (size_t i = 1; i < MAX_LOCAL; ++i) m = in[g * MAX_LOCAL + i] > m ? in[g * MAX_LOCAL + i] : m;
    maxes_ref[g] = m;
  }

  cl_mem in_buf = app_create_buffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, N * 4, in);
  cl_mem sums_buf = app_create_buffer(ctx, CL_MEM_READ_WRITE, SUM_GROUPS * 4, NULL);
  cl_mem maxes_buf = app_create_buffer(ctx, CL_MEM_WRITE_ONLY, MAX_GROUPS * 4, NULL);
  cl_mem shape_buf = app_create_buffer(ctx, CL_MEM_WRITE_ONLY, 3 * 4, NULL);
  cl_mem total_buf = app_create_buffer(ctx, CL_MEM_WRITE_ONLY, 4, NULL);

  APP_ARG(reduce_sum, 0, in_buf);
  APP_ARG(reduce_sum, 1, sums_buf);
  APP_CHECK(clSetKernelArg(reduce_sum, 2, SUM_LOCAL * sizeof(cl_int), NULL));
  size_t global = N, local = SUM_LOCAL;
  APP_CHECK(clEnqueueNDRangeKernel(q, reduce_sum, 1, NULL, &global, &local, 0, NULL, NULL));

  APP_ARG(reduce_max, 0, in_buf);
  APP_ARG(reduce_max, 1, maxes_buf);
  APP_ARG(reduce_max, 2, shape_buf);
  size_t local_max = MAX_LOCAL;
  APP_CHECK(clEnqueueNDRangeKernel(q, reduce_max, 1, NULL, &global, &local_max, 0, NULL, NULL));

  cl_uint count = SUM_GROUPS;
  APP_ARG(sum_partials, 0, sums_buf);
  APP_ARG(sum_partials, 1, count);
  APP_ARG(sum_partials, 2, total_buf);
  size_t one_group = 256;
  APP_CHECK(clEnqueueNDRangeKernel(q, sum_partials, 1, NULL, &one_group, &one_group, 0, NULL, NULL));

  uint32_t shape[3];
  int32_t total = 0;
  APP_CHECK(clEnqueueReadBuffer(q, sums_buf, CL_FALSE, 0, SUM_GROUPS * 4, sums, 0, NULL, NULL));
  APP_CHECK(clEnqueueReadBuffer(q, maxes_buf, CL_FALSE, 0, MAX_GROUPS * 4, maxes, 0, NULL, NULL));
  APP_CHECK(clEnqueueReadBuffer(q, shape_buf, CL_FALSE, 0, sizeof shape, shape, 0, NULL, NULL));
  APP_CHECK(clEnqueueReadBuffer(q, total_buf, CL_FALSE, 0, 4, &total, 0, NULL, NULL));
  APP_CHECK(clFinish(q));

  const uint32_t shape_ref[3] = {MAX_GROUPS, N, MAX_LOCAL};
  app_check_i32("sums", sums, sums_ref, SUM_GROUPS);
  app_check_i32("maxes", maxes, maxes_ref, MAX_GROUPS);
  app_check_u32("shape", shape, shape_ref, 3);
  app_check_i32("total", &total, &total_ref, 1);
  app_print_checksum("sums", sums, SUM_GROUPS * 4);
  app_print_checksum("maxes", maxes, MAX_GROUPS * 4);
  app_print_checksum("shape", shape, sizeof shape);
  app_print_checksum("total", &total, 4);

  cl_mem bufs[] = {in_buf, sums_buf, maxes_buf, shape_buf, total_buf};
  for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; ++i) APP_CHECK(clReleaseMemObject(bufs[i]));
  APP_CHECK(clReleaseKernel(reduce_sum));
  APP_CHECK(clReleaseKernel(reduce_max));
  APP_CHECK(clReleaseKernel(sum_partials));
  APP_CHECK(clReleaseProgram(program));
  APP_CHECK(clReleaseCommandQueue(q));
  APP_CHECK(clReleaseContext(ctx));
  free(in); free(sums); free(sums_ref); free(maxes); free(maxes_ref);
  return app_finish();
}
