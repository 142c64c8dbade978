/* CL_MEM_USE_HOST_PTR with map/unmap between launches: the host reads and changes the data through
 * mapped pointers (a whole-buffer read/write map, then a map of one quarter only) between kernels,
 * and a CL_MEM_ALLOC_HOST_PTR buffer is filled through a CL_MAP_WRITE_INVALIDATE_REGION map. Every
 * launch must see what the host wrote, and every map must show what the kernels wrote. */
#include "common/app_util.h"

static const char* kSource =
    "__kernel void affine(__global uint* data, uint mul, uint add) {\n"
    "  size_t i = get_global_id(0);\n"
    "  data[i] = data[i] * mul + add;\n"
    "}\n"
    "__kernel void add_into(__global uint* dst, __global const uint* src) {\n"
    "  size_t i = get_global_id(0);\n"
    "  dst[i] += src[i];\n"
    "}\n";

enum { N = 1 << 18, LOCAL = 128 };

static void affine_reference(uint32_t* data, uint32_t mul, uint32_t add) {
  for (size_t i = 0; i < N; ++i) data[i] = data[i] * mul + add;
}

static void run_affine(cl_command_queue q, cl_kernel k, cl_mem buf, cl_uint mul, cl_uint add) {
  APP_ARG(k, 0, buf);
  APP_ARG(k, 1, mul);
  APP_ARG(k, 2, add);
  size_t global = N, local = LOCAL;
  APP_CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, NULL));
}

static uint32_t* map_buffer(cl_command_queue q, cl_mem buf, cl_map_flags flags, size_t offset,
                            size_t bytes) {
  cl_int err = CL_SUCCESS;
  void* p = clEnqueueMapBuffer(q, buf, CL_TRUE, flags, offset, bytes, 0, NULL, NULL, &err);
  APP_CHECK_ERR(err, "clEnqueueMapBuffer");
  return (uint32_t*)p;
}

static void unmap_buffer(cl_command_queue q, cl_mem buf, void* p) {
  cl_event done;
  APP_CHECK(clEnqueueUnmapMemObject(q, buf, p, 0, NULL, &done));
  APP_CHECK(clWaitForEvents(1, &done));
  APP_CHECK(clReleaseEvent(done));
}

int main(void) {
  cl_platform_id platform;
  cl_device_id device;
  app_pick_device(&platform, &device);
  cl_context ctx = app_create_context(platform, device);
  cl_command_queue q = app_create_queue(ctx, device, 0);
  cl_program program = app_build_program(ctx, device, 1, &kSource, "");
  cl_kernel affine = app_create_kernel(program, "affine");
  cl_kernel add_into = app_create_kernel(program, "add_into");

  const size_t bytes = N * sizeof(uint32_t);
  uint32_t* host = (uint32_t*)app_alloc(bytes);
  uint32_t* ref = (uint32_t*)app_alloc(bytes);
  uint32_t* extra_ref = (uint32_t*)app_alloc(bytes);
  uint32_t* read_back = (uint32_t*)app_alloc(bytes);
  for (uint32_t i = 0; i < N; ++i) host[i] = ref[i] = i * 7u;
  cl_mem buf = app_create_buffer(ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, bytes, host);

  /* 1: a launch, then a read/write map of everything; the host changes every third element. */
  run_affine(q, affine, buf, 3, 1);
  affine_reference(ref, 3, 1);
  uint32_t* p = map_buffer(q, buf, CL_MAP_READ | CL_MAP_WRITE, 0, bytes);
  app_check_u32("after_first_launch", p, ref, N);
  for (uint32_t i = 0; i < N; i += 3) {
    p[i] ^= i * 2654435761u;
    ref[i] ^= i * 2654435761u;
  }
  unmap_buffer(q, buf, p);

  /* 2: a launch, then a write map of the second quarter only. */
  run_affine(q, affine, buf, 5, 7);
  affine_reference(ref, 5, 7);
  const size_t quarter = N / 4;
  p = map_buffer(q, buf, CL_MAP_WRITE, quarter * 4, quarter * 4);
  for (size_t i = 0; i < quarter; ++i) {
    p[i] = (uint32_t)(i * 11u + 5u);
    ref[quarter + i] = (uint32_t)(i * 11u + 5u);
  }
  unmap_buffer(q, buf, p);

  /* 3: a second buffer written only through an invalidating map, added in. */
  cl_mem extra = app_create_buffer(ctx, CL_MEM_READ_ONLY | CL_MEM_ALLOC_HOST_PTR, bytes, NULL);
  p = map_buffer(q, extra, CL_MAP_WRITE_INVALIDATE_REGION, 0, bytes);
  for (uint32_t i = 0; i < N; ++i) p[i] = extra_ref[i] = i * i;
  unmap_buffer(q, extra, p);
  APP_ARG(add_into, 0, buf);
  APP_ARG(add_into, 1, extra);
  size_t global = N;
  APP_CHECK(clEnqueueNDRangeKernel(q, add_into, 1, NULL, &global, NULL, 0, NULL, NULL));
  for (size_t i = 0; i < N; ++i) ref[i] += extra_ref[i];

  /* 4: a last launch; the result is seen both through a read and through a map. */
  run_affine(q, affine, buf, 9, 100);
  affine_reference(ref, 9, 100);
  APP_CHECK(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, bytes, read_back, 0, NULL, NULL));
  p = map_buffer(q, buf, CL_MAP_READ, 0, bytes);
  app_check_u32("mapped", p, ref, N);
  app_print_checksum("mapped", p, bytes);
  unmap_buffer(q, buf, p);
  app_check_u32("read_back", read_back, ref, N);
  app_print_checksum("read_back", read_back, bytes);

  APP_CHECK(clReleaseMemObject(buf));
  APP_CHECK(clReleaseMemObject(extra));
  APP_CHECK(clReleaseKernel(affine));
  APP_CHECK(clReleaseKernel(add_into));
  APP_CHECK(clReleaseProgram(program));
  APP_CHECK(clReleaseCommandQueue(q));
  APP_CHECK(clReleaseContext(ctx));
  free(host); free(ref); free(extra_ref); free(read_back);
  return app_finish();
}
