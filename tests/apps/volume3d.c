/* 3-D ranges: a fill with a NULL local size and an app-given global offset (only the middle slabs
 * are written; the rest of the buffer must keep its initial bytes), a 7-point stencil run twice in
 * ping-pong with an explicit 8 x 4 x 4 local size, and per-group sums written at the linear index
 * of the 3-D group id (get_group_id and get_num_groups in all three dimensions). */
#include "common/app_util.h"

static const char* kSource =
    "__kernel void init3d(__global uint* vol, uint nx, uint ny) {\n"
    "  uint x = (uint)get_global_id(0), y = (uint)get_global_id(1), z = (uint)get_global_id(2);\n"
    "  vol[(z * ny + y) * nx + x] = x * 3u + y * 5u + z * 7u + (x ^ y ^ z);\n"
    "}\n"
    "uint at(__global const uint* v, int x, int y, int z, int nx, int ny, int nz) {\n"
    "  x = clamp(x, 0, nx - 1); y = clamp(y, 0, ny - 1); z = clamp(z, 0, nz - 1);\n"
    "  return v[(z * ny + y) * nx + x];\n"
    "}\n"
    "__kernel void smooth3d(__global const uint* src, __global uint* dst, int nx, int ny, int nz) {\n"
    "  int x = (int)get_global_id(0), y = (int)get_global_id(1), z = (int)get_global_id(2);\n"
    "  uint s = 2u * at(src, x, y, z, nx, ny, nz);\n"
    "  s += at(src, x - 1, y, z, nx, ny, nz) + at(src, x + 1, y, z, nx, ny, nz);\n"
    "  s += at(src, x, y - 1, z, nx, ny, nz) + at(src, x, y + 1, z, nx, ny, nz);\n"
    "  s += at(src, x, y, z - 1, nx, ny, nz) + at(src, x, y, z + 1, nx, ny, nz);\n"
    "  dst[(z * ny + y) * nx + x] = s;\n"
    "}\n"
    "__kernel void group_sum3d(__global const uint* vol, __global uint* sums) {\n"
    "  __local uint scratch[128];\n"
    "  size_t lid = (get_local_id(2) * get_local_size(1) + get_local_id(1)) * get_local_size(0)\n"
    "               + get_local_id(0);\n"
    "  size_t gx = get_global_id(0), gy = get_global_id(1), gz = get_global_id(2);\n"
    "  scratch[lid] = vol[(gz * get_global_size(1) + gy) * get_global_size(0) + gx];\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  if (lid == 0) {\n"
    "    uint s = 0;\n"
    "    for (int i = 0; i < 128; ++i) s += scratch[i];\n"
    "    size_t g = (get_group_id(2) * get_num_groups(1) + get_group_id(1)) * get_num_groups(0)\n"
    "               + get_group_id(0);\n"
    "    sums[g] = s;\n"
    "  }\n"
    "}\n";

enum { NX = 64, NY = 32, NZ = 64, LX = 8, LY = 4, LZ = 4 };
enum { CELLS = NX * NY * NZ, GROUPS = (NX / LX) * (NY / LY) * (NZ / LZ) };
enum { FILL_Z0 = 8, FILL_Z1 = 56 };

static uint32_t clamp_i(int v, int n) { return (uint32_t)(v < 0 ? 0 : v >= n ? n - 1 : v); }

static void smooth_reference(const uint32_t* src, uint32_t* dst) {
  for (int z = 0; z < NZ; ++z)
    for (int y = 0; y < NY; ++y)
      for (int x = 0; x < NX; ++x) {
#define AT(X, Y, Z) src[(clamp_i(Z, NZ) * NY + clamp_i(Y, NY)) * NX + clamp_i(X, NX)]
        uint32_t s = 2u * AT(x, y, z);
        s += AT(x - 1, y, z) + AT(x + 1, y, z);
        s += AT(x, y - 1, z) + AT(x, y + 1, z);
        s += AT(x, y, z - 1) + AT(x, y, z + 1);
#undef AT
        dst[(z * NY + y) * NX + x] = s;
      }
}

int main(void) {
  cl_platform_id platform;
  cl_device_id device;
  app_pick_device(&platform, &device);
  cl_context ctx = app_create_context(platform, device);
  cl_command_queue q = app_create_queue(ctx, device, 0);
  cl_program program = app_build_program(ctx, device, 1, &kSource, "");
  cl_kernel init3d = app_create_kernel(program, "init3d");
  cl_kernel smooth3d = app_create_kernel(program, "smooth3d");
  cl_kernel group_sum3d = app_create_kernel(program, "group_sum3d");

  uint32_t* vol = (uint32_t*)app_alloc(CELLS * 4);
  uint32_t* ref = (uint32_t*)app_alloc(CELLS * 4);
  uint32_t* tmp = (uint32_t*)app_alloc(CELLS * 4);
  uint32_t* sums = (uint32_t*)app_alloc(GROUPS * 4);
  uint32_t* sums_ref = (uint32_t*)app_alloc(GROUPS * 4);
  uint32_t seed = 31337;
  for (size_t i = 0; i < CELLS; ++i) vol[i] = ref[i] = app_rand(&seed) % 1000;
  for (uint32_t z = FILL_Z0; z < FILL_Z1; ++z)
    for (uint32_t y = 0; y < NY; ++y)
      for (uint32_t x = 0; x < NX; ++x) ref[(z * NY + y) * NX + x] = x * 3u + y * 5u + z * 7u + (x ^ y ^ z);
  smooth_reference(ref, tmp);
  smooth_reference(tmp, ref);
  for (uint32_t gz = 0; gz < NZ / LZ; ++gz)
    for (uint32_t gy = 0; gy < NY / LY; ++gy)
      for (uint32_t gx = 0; gx < NX / LX; ++gx) {
        uint32_t s = 0;
        for (uint32_t z = gz * LZ; z < (gz + 1) * LZ; ++z)
          for (uint32_t y = gy * LY; y < (gy + 1) * LY; ++y)
            for (uint32_t x = gx * LX; x < (gx + 1) * LX; ++x) s += ref[(z * NY + y) * NX + x];
        sums_ref[(gz * (NY / LY) + gy) * (NX / LX) + gx] = s;
      }

  cl_mem vol_buf = app_create_buffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, CELLS * 4, vol);
  cl_mem tmp_buf = app_create_buffer(ctx, CL_MEM_READ_WRITE, CELLS * 4, NULL);
  cl_mem sums_buf = app_create_buffer(ctx, CL_MEM_WRITE_ONLY, GROUPS * 4, NULL);
  cl_uint nx = NX, ny = NY;
  cl_int inx = NX, iny = NY, inz = NZ;

  APP_ARG(init3d, 0, vol_buf);
  APP_ARG(init3d, 1, nx);
  APP_ARG(init3d, 2, ny);
  size_t fill_offset[3] = {0, 0, FILL_Z0}, fill_size[3] = {NX, NY, FILL_Z1 - FILL_Z0};
  APP_CHECK(clEnqueueNDRangeKernel(q, init3d, 3, fill_offset, fill_size, NULL, 0, NULL, NULL));

  size_t global[3] = {NX, NY, NZ}, local[3] = {LX, LY, LZ};
  APP_ARG(smooth3d, 2, inx);
  APP_ARG(smooth3d, 3, iny);
  APP_ARG(smooth3d, 4, inz);
  APP_ARG(smooth3d, 0, vol_buf);
  APP_ARG(smooth3d, 1, tmp_buf);
  APP_CHECK(clEnqueueNDRangeKernel(q, smooth3d, 3, NULL, global, local, 0, NULL, NULL));
  APP_ARG(smooth3d, 0, tmp_buf);
  APP_ARG(smooth3d, 1, vol_buf);
  APP_CHECK(clEnqueueNDRangeKernel(q, smooth3d, 3, NULL, global, local, 0, NULL, NULL));

  APP_ARG(group_sum3d, 0, vol_buf);
  APP_ARG(group_sum3d, 1, sums_buf);
  APP_CHECK(clEnqueueNDRangeKernel(q, group_sum3d, 3, NULL, global, local, 0, NULL, NULL));

  APP_CHECK(clEnqueueReadBuffer(q, vol_buf, CL_TRUE, 0, CELLS * 4, vol, 0, NULL, NULL));
  APP_CHECK(clEnqueueReadBuffer(q, sums_buf, CL_TRUE, 0, GROUPS * 4, sums, 0, NULL, NULL));

  app_check_u32("vol", vol, ref, CELLS);
  app_check_u32("sums", sums, sums_ref, GROUPS);
  app_print_checksum("vol", vol, CELLS * 4);
  app_print_checksum("sums", sums, GROUPS * 4);

  APP_CHECK(clReleaseMemObject(vol_buf));
  APP_CHECK(clReleaseMemObject(tmp_buf));
  APP_CHECK(clReleaseMemObject(sums_buf));
  APP_CHECK(clReleaseKernel(init3d));
  APP_CHECK(clReleaseKernel(smooth3d));
  APP_CHECK(clReleaseKernel(group_sum3d));
  APP_CHECK(clReleaseProgram(program));
  APP_CHECK(clReleaseCommandQueue(q));
  APP_CHECK(clReleaseContext(ctx));
  free(vol); free(ref); free(tmp); free(sums); free(sums_ref);
  return app_finish();
}
