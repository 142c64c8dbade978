/* Lazy home (exec/home_sync.h): after a split launch, what the other device wrote stays with coex
 * until the app needs it on its own device. Every way the app can look at a buffer must see the
 * launch's results: a partial read of either half, a copy, a map, a sub-buffer, a small kernel coex
 * does not split, a write into part of the buffer, and a read enqueued while the split still runs. */
#include "common/app_util.h"

static const char* kSource =
    "__kernel void advance(__global const int* src, __global int* dst, int k) {\n"
    "  size_t i = get_global_id(0);\n"
    "  dst[i] = (int)((uint)src[i] * (uint)k + (uint)i);\n"
    "}\n";

enum { N = 1 << 16 };
#define BYTES ((size_t)N * sizeof(int32_t))

static cl_command_queue q;
static cl_kernel kernel;

/* dst[i] = src[i] * k + i over [first, first + count), on the host. */
static void step_on_host(const int32_t* src, int32_t* dst, int k, size_t first, size_t count) {
  /* Unsigned: the values wrap after a few steps, as the kernel's do (no signed overflow). */
  for (size_t i = first; i < first + count; ++i) dst[i] = (int32_t)((uint32_t)src[i] * (uint32_t)k + (uint32_t)i);
}

/* The kernel over `count` work-items from `first`: split when count is large, not when it is small
 * (under min_split_work_items). */
static void launch(cl_mem src, cl_mem dst, int k, size_t first, size_t count) {
  APP_CHECK(clSetKernelArg(kernel, 0, sizeof(cl_mem), &src));
  APP_CHECK(clSetKernelArg(kernel, 1, sizeof(cl_mem), &dst));
  APP_CHECK(clSetKernelArg(kernel, 2, sizeof(int), &k));
  size_t local = 64;
  APP_CHECK(clEnqueueNDRangeKernel(q, kernel, 1, &first, &count, &local, 0, NULL, NULL));
}

int main(void) {
  cl_platform_id platform;
  cl_device_id device;
  app_pick_device(&platform, &device);
  cl_context ctx = app_create_context(platform, device);
  q = app_create_queue(ctx, device, 0);
  cl_program program = app_build_program(ctx, device, 1, &kSource, "");
  kernel = app_create_kernel(program, "advance");
  int32_t* a = (int32_t*)app_alloc(BYTES);
  int32_t* ref = (int32_t*)app_alloc(BYTES);
  int32_t* ref2 = (int32_t*)app_alloc(BYTES);
  int32_t* got = (int32_t*)app_alloc(BYTES);
  uint32_t seed = 7;
  for (size_t i = 0; i < N; ++i) a[i] = (int32_t)(app_rand(&seed) % 1000);
  cl_mem da = app_create_buffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, BYTES, a);
  cl_mem db = app_create_buffer(ctx, CL_MEM_READ_WRITE, BYTES, NULL);
  cl_mem dc = app_create_buffer(ctx, CL_MEM_READ_WRITE, BYTES, NULL);

  /* 1. Partial reads after clFinish: the second half first (the other device's part under an even
   * split), then the first. */
  launch(da, db, 3, 0, N);
  step_on_host(a, ref, 3, 0, N);
  APP_CHECK(clFinish(q));
  APP_CHECK(clEnqueueReadBuffer(q, db, CL_TRUE, BYTES / 2, BYTES / 2, got + N / 2, 0, NULL, NULL));
  APP_CHECK(clEnqueueReadBuffer(q, db, CL_TRUE, 0, BYTES / 2, got, 0, NULL, NULL));
  app_check_i32("read in halves", got, ref, N);

  /* 2. A copy of a buffer a split wrote, then a read of the copy. */
  launch(db, dc, 5, 0, N);
  step_on_host(ref, ref2, 5, 0, N);
  APP_CHECK(clFinish(q));
  APP_CHECK(clEnqueueCopyBuffer(q, dc, da, 0, 0, BYTES, 0, NULL, NULL));
  APP_CHECK(clEnqueueReadBuffer(q, da, CL_TRUE, 0, BYTES, got, 0, NULL, NULL));
  app_check_i32("copy", got, ref2, N);

  /* 3. A map for reading. */
  launch(dc, db, 2, 0, N);
  step_on_host(ref2, ref, 2, 0, N);
  APP_CHECK(clFinish(q));
  cl_int err = CL_SUCCESS;
  int32_t* mapped = (int32_t*)clEnqueueMapBuffer(q, db, CL_TRUE, CL_MAP_READ, 0, BYTES, 0, NULL, NULL, &err);
  APP_CHECK(err);
  app_check_i32("map", mapped, ref, N);
  APP_CHECK(clEnqueueUnmapMemObject(q, db, mapped, 0, NULL, NULL));

  /* 4. A sub-buffer over the last quarter. */
  launch(db, dc, 7, 0, N);
  step_on_host(ref, ref2, 7, 0, N);
  APP_CHECK(clFinish(q));
  cl_buffer_region region = {BYTES / 4 * 3, BYTES / 4};
  cl_mem quarter = clCreateSubBuffer(dc, CL_MEM_READ_ONLY, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
  APP_CHECK(err);
  APP_CHECK(clEnqueueReadBuffer(q, quarter, CL_TRUE, 0, BYTES / 4, got, 0, NULL, NULL));
  app_check_i32("sub-buffer", got, ref2 + N / 4 * 3, N / 4);
  APP_CHECK(clReleaseMemObject(quarter));

  /* 5. A small kernel coex leaves unsplit, over the last 64 items: it reads the other device's part
   * on home. */
  launch(dc, db, 11, N - 64, 64);
  step_on_host(ref2, ref, 11, N - 64, 64); /* db's other items keep test 3's results: ref */
  APP_CHECK(clEnqueueReadBuffer(q, db, CL_TRUE, 0, BYTES, got, 0, NULL, NULL));
  app_check_i32("unsplit kernel", got, ref, N);

  /* 6. The app writes the first and last 16 items after a split wrote the buffer. */
  launch(dc, da, 13, 0, N);
  step_on_host(ref2, ref, 13, 0, N);
  APP_CHECK(clFinish(q));
  int32_t ones[16];
  for (int i = 0; i < 16; ++i) ones[i] = -1 - i;
  APP_CHECK(clEnqueueWriteBuffer(q, da, CL_TRUE, 0, sizeof ones, ones, 0, NULL, NULL));
  APP_CHECK(clEnqueueWriteBuffer(q, da, CL_TRUE, BYTES - sizeof ones, sizeof ones, ones, 0, NULL, NULL));
  memcpy(ref, ones, sizeof ones);
  memcpy(ref + N - 16, ones, sizeof ones);
  APP_CHECK(clEnqueueReadBuffer(q, da, CL_TRUE, 0, BYTES, got, 0, NULL, NULL));
  app_check_i32("app writes after a split", got, ref, N);

  /* 7. A write map of the first 16 items: the unmap may have written anywhere, as far as coex
   * knows, but the other device's part must still come home. */
  launch(da, db, 3, 0, N);
  step_on_host(ref, ref2, 3, 0, N);
  APP_CHECK(clFinish(q));
  int32_t* head = (int32_t*)clEnqueueMapBuffer(q, db, CL_TRUE, CL_MAP_WRITE, 0, sizeof ones, 0, NULL, NULL, &err);
  APP_CHECK(err);
  for (int i = 0; i < 16; ++i) head[i] = ref2[i] = 1000 + i;
  APP_CHECK(clEnqueueUnmapMemObject(q, db, head, 0, NULL, NULL));
  APP_CHECK(clEnqueueReadBuffer(q, db, CL_TRUE, 0, BYTES, got, 0, NULL, NULL));
  app_check_i32("write map after a split", got, ref2, N);

  /* 8. Three launches in a row and a read, with no wait in between: the read is enqueued while the
   * splits still run. */
  launch(da, db, 2, 0, N);
  launch(db, dc, 3, 0, N);
  launch(dc, da, 5, 0, N);
  step_on_host(ref, ref2, 2, 0, N);
  step_on_host(ref2, got, 3, 0, N);
  step_on_host(got, ref, 5, 0, N);
  APP_CHECK(clEnqueueReadBuffer(q, da, CL_TRUE, 0, BYTES, got, 0, NULL, NULL));
  app_check_i32("read behind splits", got, ref, N);
  app_print_checksum("a", got, BYTES);

  /* 9. A read on a second queue while a split on the first still runs: it is not ordered after that
   * split, so it must see what the earlier split left, at once. */
  cl_command_queue q2 = app_create_queue(ctx, device, 0);
  launch(da, db, 7, 0, N);
  step_on_host(ref, ref2, 7, 0, N);
  APP_CHECK(clFinish(q));
  launch(db, dc, 9, 0, N); /* reads db only; not waited for */
  APP_CHECK(clEnqueueReadBuffer(q2, db, CL_TRUE, 0, BYTES, got, 0, NULL, NULL));
  app_check_i32("read on another queue during a split", got, ref2, N);
  APP_CHECK(clFinish(q));
  APP_CHECK(clReleaseCommandQueue(q2));

  APP_CHECK(clReleaseMemObject(da));
  APP_CHECK(clReleaseMemObject(db));
  APP_CHECK(clReleaseMemObject(dc));
  APP_CHECK(clReleaseKernel(kernel));
  APP_CHECK(clReleaseProgram(program));
  APP_CHECK(clReleaseCommandQueue(q));
  APP_CHECK(clReleaseContext(ctx));
  free(a), free(ref), free(ref2), free(got);
  return app_finish();
}
