/* Kernels whose helper functions read get_group_id, get_num_groups and get_global_size (as a
 * wavelet code's do): coex rewrites the helpers like the kernels and splits the launches. A 2-D Haar
 * step on 16 x 16 tiles, a per-group tag written at an index a helper computes, and a kernel that is
 * never split (a global atomic) but calls the same helper: the rewritten program must still build
 * and that kernel still count right. */
#include "common/app_util.h"

static const char* kSource =
    "#pragma OPENCL FP_CONTRACT OFF\n"
    "size_t tile_col(void) { return get_group_id(0) * get_local_size(0); }\n"
    "size_t tile_row(void) { return get_group_id(1) * get_local_size(1); }\n"
    "size_t pitch(void) { return get_global_size(0); }\n"
    "size_t at(size_t x, size_t y) { return y * pitch() + x; }\n"
    "__kernel void haar_rows(__global const float* in, __global float* out) {\n"
    "  __local float tile[16][16];\n"
    "  size_t lx = get_local_id(0), ly = get_local_id(1);\n"
    "  size_t x = tile_col() + lx, y = tile_row() + ly;\n"
    "  tile[ly][lx] = in[at(x, y)];\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  size_t k = lx < 8 ? lx : lx - 8;\n"
    "  float a = tile[ly][2 * k], b = tile[ly][2 * k + 1];\n"
    "  out[at(x, y)] = lx < 8 ? (a + b) * 0.5f : (a - b) * 0.5f;\n"
    "}\n"
    "size_t group_flat(void) { return get_group_id(1) * get_num_groups(0) + get_group_id(0); }\n"
    "__kernel void group_tags(__global int* tags) {\n"
    "  if (get_local_id(0) == 0 && get_local_id(1) == 0)\n"
    "    tags[group_flat()] = (int)(group_flat() * 3 + get_num_groups(1));\n"
    "}\n"
    "__kernel void count_tagged(__global const int* tags, __global int* total) {\n"
    "  if (get_local_id(0) == 0 && get_local_id(1) == 0) atomic_add(total, tags[group_flat()] % 2);\n"
    "}\n";

enum { W = 512, H = 256, T = 16, GX = W / T, GY = H / T, ROUNDS = 6 };

int main(void) {
  cl_platform_id platform;
  cl_device_id device;
  app_pick_device(&platform, &device);
  cl_context ctx = app_create_context(platform, device);
  cl_command_queue q = app_create_queue(ctx, device, 0);
  cl_program program = app_build_program(ctx, device, 1, &kSource, "");
  cl_kernel haar = app_create_kernel(program, "haar_rows");
  cl_kernel tags_kernel = app_create_kernel(program, "group_tags");
  cl_kernel count = app_create_kernel(program, "count_tagged");

  float* img = (float*)app_alloc(W * H * 4);
  float* ref = (float*)app_alloc(W * H * 4);
  float* tmp = (float*)app_alloc(W * H * 4);
  int32_t* tags = (int32_t*)app_alloc(GX * GY * 4);
  int32_t* tags_ref = (int32_t*)app_alloc(GX * GY * 4);
  uint32_t seed = 777;
  for (size_t i = 0; i < W * H; ++i) img[i] = ref[i] = (float)(app_rand(&seed) % 4096) / 64.0f;

  /* The host reference: ROUNDS Haar steps, ping-ponging between two images. */
  for (int r = 0; r < ROUNDS; ++r) {
    for (size_t y = 0; y < H; ++y)
      for (size_t x = 0; x < W; ++x) {
        size_t base = x - x % T, lx = x % T, k = lx < 8 ? lx : lx - 8;
        float a = ref[y * W + base + 2 * k], b = ref[y * W + base + 2 * k + 1];
        tmp[y * W + x] = lx < 8 ? (a + b) * 0.5f : (a - b) * 0.5f;
      }
    memcpy(ref, tmp, W * H * 4);
  }
  int32_t odd = 0;
  for (size_t g = 0; g < GX * GY; ++g) {
    tags_ref[g] = (int32_t)(g * 3 + GY);
    odd += tags_ref[g] % 2;
  }

  cl_mem a_buf = app_create_buffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, W * H * 4, img);
  cl_mem b_buf = app_create_buffer(ctx, CL_MEM_READ_WRITE, W * H * 4, NULL);
  cl_mem tags_buf = app_create_buffer(ctx, CL_MEM_READ_WRITE, GX * GY * 4, NULL);
  int32_t zero = 0, total = -1;
  cl_mem total_buf = app_create_buffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, 4, &zero);

  size_t global[2] = {W, H}, local[2] = {T, T};
  for (int r = 0; r < ROUNDS; ++r) {
    cl_mem from = r % 2 ? b_buf : a_buf, to = r % 2 ? a_buf : b_buf;
    APP_ARG(haar, 0, from);
    APP_ARG(haar, 1, to);
    APP_CHECK(clEnqueueNDRangeKernel(q, haar, 2, NULL, global, local, 0, NULL, NULL));
  }
  APP_ARG(tags_kernel, 0, tags_buf);
  APP_CHECK(clEnqueueNDRangeKernel(q, tags_kernel, 2, NULL, global, local, 0, NULL, NULL));
  APP_ARG(count, 0, tags_buf);
  APP_ARG(count, 1, total_buf);
  APP_CHECK(clEnqueueNDRangeKernel(q, count, 2, NULL, global, local, 0, NULL, NULL));

  APP_CHECK(clEnqueueReadBuffer(q, ROUNDS % 2 ? b_buf : a_buf, CL_FALSE, 0, W * H * 4, img, 0, NULL, NULL));
  APP_CHECK(clEnqueueReadBuffer(q, tags_buf, CL_FALSE, 0, GX * GY * 4, tags, 0, NULL, NULL));
  APP_CHECK(clEnqueueReadBuffer(q, total_buf, CL_FALSE, 0, 4, &total, 0, NULL, NULL));
  APP_CHECK(clFinish(q));

  app_check_f32("image", img, ref, W * H);
  app_check_i32("tags", tags, tags_ref, GX * GY);
  app_check_i32("total", &total, &odd, 1);
  app_print_checksum("image", img, W * H * 4);
  app_print_checksum("tags", tags, GX * GY * 4);

  cl_mem bufs[] = {a_buf, b_buf, tags_buf, total_buf};
  for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; ++i) APP_CHECK(clReleaseMemObject(bufs[i]));
  APP_CHECK(clReleaseKernel(haar));
  APP_CHECK(clReleaseKernel(tags_kernel));
  APP_CHECK(clReleaseKernel(count));
  APP_CHECK(clReleaseProgram(program));
  APP_CHECK(clReleaseCommandQueue(q));
  APP_CHECK(clReleaseContext(ctx));
  free(img); free(ref); free(tmp); free(tags); free(tags_ref);
  return app_finish();
}
