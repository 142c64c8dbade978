/* A kernel with an image argument and a program-scope sampler (a 3 x 3 box sum over an RGBA8
 * image), which coex must not split, feeding a plain buffer kernel that it may split. The image is
 * read back too, so image reads and writes pass through unchanged. */
#include "common/app_util.h"

static const char* kSource =
    "__constant sampler_t nearest = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE |\n"
    "                               CLK_FILTER_NEAREST;\n"
    "__kernel void box_sum(__read_only image2d_t src, __global uint4* sums) {\n"
    "  int x = (int)get_global_id(0), y = (int)get_global_id(1);\n"
    "  uint4 s = (uint4)(0u);\n"
    "  for (int dy = -1; dy <= 1; ++dy)\n"
    "    for (int dx = -1; dx <= 1; ++dx) s += read_imageui(src, nearest, (int2)(x + dx, y + dy));\n"
    "  sums[y * get_image_width(src) + x] = s;\n"
    "}\n"
    "__kernel void to_gray(__global const uint4* sums, __global uchar* gray) {\n"
    "  size_t i = get_global_id(0);\n"
    "  uint4 s = sums[i];\n"
    "  gray[i] = (uchar)((s.x * 2u + s.y * 5u + s.z) / 72u);\n"
    "}\n";

enum { W = 256, H = 256, PIXELS = W * H };

static uint32_t clamp_u(int v, int n) { return (uint32_t)(v < 0 ? 0 : v >= n ? n - 1 : v); }

int main(void) {
  cl_platform_id platform;
  cl_device_id device;
  app_pick_device(&platform, &device);
  cl_bool images = CL_FALSE;
  APP_CHECK(clGetDeviceInfo(device, CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, NULL));
  if (!images) {
    puts("error: the device has no image support\nFAIL");
    return 1;
  }
  cl_context ctx = app_create_context(platform, device);
  cl_command_queue q = app_create_queue(ctx, device, 0);
  cl_program program = app_build_program(ctx, device, 1, &kSource, "");
  cl_kernel box_sum = app_create_kernel(program, "box_sum");
  cl_kernel to_gray = app_create_kernel(program, "to_gray");

  uint8_t* rgba = (uint8_t*)app_alloc(PIXELS * 4);
  uint8_t* rgba_back = (uint8_t*)app_alloc(PIXELS * 4);
  uint32_t* sums = (uint32_t*)app_alloc(PIXELS * 16);
  uint32_t* sums_ref = (uint32_t*)app_alloc(PIXELS * 16);
  uint8_t* gray = (uint8_t*)app_alloc(PIXELS);
  uint8_t* gray_ref = (uint8_t*)app_alloc(PIXELS);
  uint32_t seed = 6502;
  for (size_t i = 0; i < PIXELS * 4; ++i) rgba[i] = (uint8_t)app_rand(&seed);
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) {
      uint32_t* s = &sums_ref[(y * W + x) * 4];
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx)
          for (int c = 0; c < 4; ++c) s[c] += rgba[(clamp_u(y + dy, H) * W + clamp_u(x + dx, W)) * 4 + c];
      gray_ref[y * W + x] = (uint8_t)((s[0] * 2u + s[1] * 5u + s[2]) / 72u);
    }

  cl_image_format format = {CL_RGBA, CL_UNSIGNED_INT8};
  cl_image_desc desc;
  memset(&desc, 0, sizeof desc);
  desc.image_type = CL_MEM_OBJECT_IMAGE2D;
  desc.image_width = W;
  desc.image_height = H;
  cl_int err = CL_SUCCESS;
  cl_mem image = clCreateImage(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &format, &desc, rgba, &err);
  APP_CHECK_ERR(err, "clCreateImage");
  cl_mem sums_buf = app_create_buffer(ctx, CL_MEM_READ_WRITE, PIXELS * 16, NULL);
  cl_mem gray_buf = app_create_buffer(ctx, CL_MEM_WRITE_ONLY, PIXELS, NULL);

  APP_ARG(box_sum, 0, image);
  APP_ARG(box_sum, 1, sums_buf);
  size_t global2[2] = {W, H}, local2[2] = {16, 16};
  APP_CHECK(clEnqueueNDRangeKernel(q, box_sum, 2, NULL, global2, local2, 0, NULL, NULL));
  APP_ARG(to_gray, 0, sums_buf);
  APP_ARG(to_gray, 1, gray_buf);
  size_t global = PIXELS;
  APP_CHECK(clEnqueueNDRangeKernel(q, to_gray, 1, NULL, &global, NULL, 0, NULL, NULL));

  size_t origin[3] = {0, 0, 0}, region[3] = {W, H, 1};
  APP_CHECK(clEnqueueReadImage(q, image, CL_TRUE, origin, region, 0, 0, rgba_back, 0, NULL, NULL));
  APP_CHECK(clEnqueueReadBuffer(q, sums_buf, CL_TRUE, 0, PIXELS * 16, sums, 0, NULL, NULL));
  APP_CHECK(clEnqueueReadBuffer(q, gray_buf, CL_TRUE, 0, PIXELS, gray, 0, NULL, NULL));

  app_check_u8("image", rgba_back, rgba, PIXELS * 4);
  app_check_u32("sums", sums, sums_ref, PIXELS * 4);
  app_check_u8("gray", gray, gray_ref, PIXELS);
  app_print_checksum("sums", sums, PIXELS * 16);
  app_print_checksum("gray", gray, PIXELS);

  APP_CHECK(clReleaseMemObject(image));
  APP_CHECK(clReleaseMemObject(sums_buf));
  APP_CHECK(clReleaseMemObject(gray_buf));
  APP_CHECK(clReleaseKernel(box_sum));
  APP_CHECK(clReleaseKernel(to_gray));
  APP_CHECK(clReleaseProgram(program));
  APP_CHECK(clReleaseCommandQueue(q));
  APP_CHECK(clReleaseContext(ctx));
  free(rgba); free(rgba_back); free(sums); free(sums_ref); free(gray); free(gray_ref);
  return app_finish();
}
