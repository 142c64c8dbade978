/* A buffer that an image made from it aliases (CL_MEM_OBJECT_IMAGE1D_BUFFER): a kernel coex may split
 * writes the buffer, and a kernel that reads the image (image argument: never split) sees every
 * device's part; then the app writes through the image (clEnqueueWriteImage), and a kernel coex may
 * split that reads the buffer sees what was written. (PoCL 3.1 crashed on a kernel that writes such an
 * image, bare: the write goes through clEnqueueWriteImage.) */
#include "common/app_util.h"

static const char* kSource =
    "__kernel void fill(__global float* b, float k) {\n"
    "  size_t i = get_global_id(0);\n"
    "  b[i] = (float)i * k;\n"
    "}\n"
    "__kernel void from_image(__read_only image1d_buffer_t img, __global float* out) {\n"
    "  int i = (int)get_global_id(0);\n"
    "  out[i] = read_imagef(img, i).x + 1.0f;\n"
    "}\n"
    "__kernel void twice(__global const float* b, __global float* out) {\n"
    "  size_t i = get_global_id(0);\n"
    "  out[i] = b[i] * 2.0f;\n"
    "}\n";

enum { N = 1 << 18 };

int main(void) {
  cl_platform_id platform;
  cl_device_id device;
  app_pick_device(&platform, &device);
  cl_bool images = CL_FALSE;
  size_t max_pixels = 0;
  APP_CHECK(clGetDeviceInfo(device, CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, NULL));
  if (images) APP_CHECK(clGetDeviceInfo(device, CL_DEVICE_IMAGE_MAX_BUFFER_SIZE, sizeof max_pixels, &max_pixels, NULL));
  if (!images || max_pixels < N) {
    puts("error: the device has no images of buffers this large\nFAIL");
    return 1;
  }
  cl_context ctx = app_create_context(platform, device);
  cl_command_queue q = app_create_queue(ctx, device, 0);
  cl_program program = app_build_program(ctx, device, 1, &kSource, "");
  cl_kernel fill = app_create_kernel(program, "fill");
  cl_kernel from_image = app_create_kernel(program, "from_image");
  cl_kernel twice = app_create_kernel(program, "twice");
  cl_mem buf = app_create_buffer(ctx, CL_MEM_READ_WRITE, N * 4, NULL);
  cl_mem out = app_create_buffer(ctx, CL_MEM_READ_WRITE, N * 4, NULL);
  cl_image_format format = {CL_R, CL_FLOAT};
  cl_image_desc desc;
  memset(&desc, 0, sizeof desc);
  desc.image_type = CL_MEM_OBJECT_IMAGE1D_BUFFER;
  desc.image_width = N;
  desc.buffer = buf;
  cl_int err = CL_SUCCESS;
  cl_mem image = clCreateImage(ctx, CL_MEM_READ_WRITE, &format, &desc, NULL, &err);
  APP_CHECK(err);
  float* host = (float*)app_alloc(N * 4);
  float* ref = (float*)app_alloc(N * 4);
  size_t global = N;
  const float k = 0.5f;

  APP_ARG(fill, 0, buf);
  APP_ARG(fill, 1, k);
  APP_CHECK(clEnqueueNDRangeKernel(q, fill, 1, NULL, &global, NULL, 0, NULL, NULL));
  APP_ARG(from_image, 0, image);
  APP_ARG(from_image, 1, out);
  APP_CHECK(clEnqueueNDRangeKernel(q, from_image, 1, NULL, &global, NULL, 0, NULL, NULL));
  APP_CHECK(clEnqueueReadBuffer(q, out, CL_TRUE, 0, N * 4, host, 0, NULL, NULL));
  for (size_t i = 0; i < N; ++i) ref[i] = (float)i * k + 1.0f;
  app_check_f32("through the image", host, ref, N);
  app_print_checksum("through_image", host, N * 4);

  for (size_t i = 0; i < N; ++i) host[i] = (float)(i % 7);
  const size_t origin[3] = {0, 0, 0}, region[3] = {N, 1, 1};
  APP_CHECK(clEnqueueWriteImage(q, image, CL_TRUE, origin, region, 0, 0, host, 0, NULL, NULL));
  APP_ARG(twice, 0, buf);
  APP_ARG(twice, 1, out);
  APP_CHECK(clEnqueueNDRangeKernel(q, twice, 1, NULL, &global, NULL, 0, NULL, NULL));
  APP_CHECK(clEnqueueReadBuffer(q, out, CL_TRUE, 0, N * 4, host, 0, NULL, NULL));
  for (size_t i = 0; i < N; ++i) ref[i] = (float)(i % 7) * 2.0f;
  app_check_f32("after the image", host, ref, N);
  app_print_checksum("after_image", host, N * 4);

  APP_CHECK(clReleaseMemObject(image));
  APP_CHECK(clReleaseMemObject(buf));
  APP_CHECK(clReleaseMemObject(out));
  APP_CHECK(clReleaseKernel(fill));
  APP_CHECK(clReleaseKernel(from_image));
  APP_CHECK(clReleaseKernel(twice));
  APP_CHECK(clReleaseProgram(program));
  APP_CHECK(clReleaseCommandQueue(q));
  APP_CHECK(clReleaseContext(ctx));
  free(host);
  free(ref);
  return app_finish();
}
