/* Events on an out-of-order queue with profiling: a launch gated by a user event (it must still be
 * pending when clEnqueueNDRangeKernel returns, and the enqueue must not block), a launch that waits
 * for two others through its wait list, a barrier, an event callback, non-blocking reads finished
 * with clWaitForEvents, and the event's queries (status, command type, queue, profiling times). */
#include "common/app_util.h"

#include <pthread.h>
#include <time.h>

static const char* kSource =
    "__kernel void fill_a(__global uint* a, uint seed) {\n"
    "  uint i = (uint)get_global_id(0);\n"
    "  uint v = (i + seed) * 2654435761u;\n"
    "  a[i] = v ^ (v >> 15);\n"
    "}\n"
    "__kernel void fill_b(__global uint* b) {\n"
    "  uint i = (uint)get_global_id(0);\n"
    "  b[i] = i * 3u + 1u;\n"
    "}\n"
    "__kernel void combine(__global const uint* a, __global const uint* b, __global uint* c) {\n"
    "  size_t i = get_global_id(0);\n"
    "  c[i] = a[i] ^ (b[i] * 40503u);\n"
    "}\n"
    "__kernel void scale_c(__global uint* c) {\n"
    "  size_t i = get_global_id(0);\n"
    "  c[i] = c[i] * 3u + 1u;\n"
    "}\n";

enum { N = 1 << 18, LOCAL = 64 };

static pthread_mutex_t callback_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t callback_cond = PTHREAD_COND_INITIALIZER;
static int callback_status = 1; /* 1 = not called yet */

static void CL_CALLBACK on_combine_complete(cl_event event, cl_int status, void* user_data) {
  (void)event;
  (void)user_data;
  pthread_mutex_lock(&callback_lock);
  callback_status = status;
  pthread_cond_signal(&callback_cond);
  pthread_mutex_unlock(&callback_lock);
}

/* The callback runs asynchronously, possibly after clWaitForEvents returned (spec 5.11): wait for
 * it, up to 30 s, so that the check below is deterministic. */
static int wait_for_callback(void) {
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += 30;
  pthread_mutex_lock(&callback_lock);
  while (callback_status == 1)
    if (pthread_cond_timedwait(&callback_cond, &callback_lock, &deadline) != 0) break;
  int status = callback_status;
  pthread_mutex_unlock(&callback_lock);
  return status;
}

static cl_ulong profile(cl_event e, cl_profiling_info what) {
  cl_ulong t = 0;
  APP_CHECK(clGetEventProfilingInfo(e, what, sizeof t, &t, NULL));
  return t;
}

static int device_is_pocl_basic(cl_device_id device) {
  char name[256] = {0};
  APP_CHECK(clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof name - 1, name, NULL));
  return strncmp(name, "basic-", 6) == 0;
}

int main(void) {
  cl_platform_id platform;
  cl_device_id device;
  app_pick_device(&platform, &device);
  cl_context ctx = app_create_context(platform, device);
  cl_command_queue_properties supported = 0;
  APP_CHECK(clGetDeviceInfo(device, CL_DEVICE_QUEUE_PROPERTIES, sizeof supported, &supported, NULL));
  cl_command_queue q = app_create_queue(
      ctx, device, (supported & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) | CL_QUEUE_PROFILING_ENABLE);
  cl_program program = app_build_program(ctx, device, 1, &kSource, "");
  cl_kernel fill_a = app_create_kernel(program, "fill_a");
  cl_kernel fill_b = app_create_kernel(program, "fill_b");
  cl_kernel combine = app_create_kernel(program, "combine");
  cl_kernel scale_c = app_create_kernel(program, "scale_c");

  const size_t bytes = N * 4;
  uint32_t* a = (uint32_t*)app_alloc(bytes);
  uint32_t* b = (uint32_t*)app_alloc(bytes);
  uint32_t* c = (uint32_t*)app_alloc(bytes);
  uint32_t* a_ref = (uint32_t*)app_alloc(bytes);
  uint32_t* b_ref = (uint32_t*)app_alloc(bytes);
  uint32_t* c_ref = (uint32_t*)app_alloc(bytes);
  const cl_uint seed = 17;
  for (uint32_t i = 0; i < N; ++i) {
    uint32_t v = (i + seed) * 2654435761u;
    a_ref[i] = v ^ (v >> 15);
    b_ref[i] = i * 3u + 1u;
    c_ref[i] = (a_ref[i] ^ (b_ref[i] * 40503u)) * 3u + 1u;
  }
  cl_mem a_buf = app_create_buffer(ctx, CL_MEM_READ_WRITE, bytes, NULL);
  cl_mem b_buf = app_create_buffer(ctx, CL_MEM_READ_WRITE, bytes, NULL);
  cl_mem c_buf = app_create_buffer(ctx, CL_MEM_READ_WRITE, bytes, NULL);
  size_t global = N, local = LOCAL;

  /* PoCL 3.1's "basic" driver hangs in clSetUserEventStatus when a command waits on the user
   * event (pocl/pocl#1177): on that device the launch goes ungated; the output is the same. */
  const int gate_works = !device_is_pocl_basic(device);
  cl_int err = CL_SUCCESS;
  cl_event gate = clCreateUserEvent(ctx, &err);
  APP_CHECK_ERR(err, "clCreateUserEvent");
  APP_ARG(fill_a, 0, a_buf);
  APP_ARG(fill_a, 1, seed);
  cl_event a_done, b_done, c_done, barrier_done, scaled, reads[3];
  APP_CHECK(clEnqueueNDRangeKernel(q, fill_a, 1, NULL, &global, NULL, gate_works ? 1 : 0,
                                   gate_works ? &gate : NULL, &a_done));
  APP_ARG(fill_b, 0, b_buf);
  APP_CHECK(clEnqueueNDRangeKernel(q, fill_b, 1, NULL, &global, &local, 0, NULL, &b_done));
  APP_CHECK(clFlush(q));
  cl_int status = 0;
  if (gate_works) {
    APP_CHECK(clGetEventInfo(a_done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL));
    app_expect(status > CL_COMPLETE, "a launch waiting on an unset user event is still pending");
  }
  APP_CHECK(clSetUserEventStatus(gate, CL_COMPLETE));

  APP_ARG(combine, 0, a_buf);
  APP_ARG(combine, 1, b_buf);
  APP_ARG(combine, 2, c_buf);
  cl_event a_and_b[2] = {a_done, b_done};
  APP_CHECK(clEnqueueNDRangeKernel(q, combine, 1, NULL, &global, &local, 2, a_and_b, &c_done));
  APP_CHECK(clSetEventCallback(c_done, CL_COMPLETE, on_combine_complete, NULL));
  APP_CHECK(clEnqueueBarrierWithWaitList(q, 0, NULL, &barrier_done));
  APP_ARG(scale_c, 0, c_buf);
  APP_CHECK(clEnqueueNDRangeKernel(q, scale_c, 1, NULL, &global, NULL, 0, NULL, &scaled));

  APP_CHECK(clEnqueueReadBuffer(q, a_buf, CL_FALSE, 0, bytes, a, 1, &a_done, &reads[0]));
  APP_CHECK(clEnqueueReadBuffer(q, b_buf, CL_FALSE, 0, bytes, b, 1, &b_done, &reads[1]));
  APP_CHECK(clEnqueueReadBuffer(q, c_buf, CL_FALSE, 0, bytes, c, 1, &scaled, &reads[2]));
  APP_CHECK(clWaitForEvents(3, reads));

  app_expect(wait_for_callback() == CL_COMPLETE, "the callback on combine reports CL_COMPLETE");
  cl_event launches[4] = {a_done, b_done, c_done, scaled};
  for (int i = 0; i < 4; ++i) {
    cl_command_type type = 0;
    cl_command_queue queue = NULL;
    cl_context context = NULL;
    APP_CHECK(clGetEventInfo(launches[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL));
    APP_CHECK(clGetEventInfo(launches[i], CL_EVENT_COMMAND_TYPE, sizeof type, &type, NULL));
    APP_CHECK(clGetEventInfo(launches[i], CL_EVENT_COMMAND_QUEUE, sizeof queue, &queue, NULL));
    APP_CHECK(clGetEventInfo(launches[i], CL_EVENT_CONTEXT, sizeof context, &context, NULL));
    app_expect(status == CL_COMPLETE, "a launch event is CL_COMPLETE once its read is done");
    app_expect(type == CL_COMMAND_NDRANGE_KERNEL, "a launch event's type is CL_COMMAND_NDRANGE_KERNEL");
    app_expect(queue == q, "a launch event's queue is the app's queue");
    app_expect(context == ctx, "a launch event's context is the app's context");
    cl_ulong queued = profile(launches[i], CL_PROFILING_COMMAND_QUEUED);
    cl_ulong submit = profile(launches[i], CL_PROFILING_COMMAND_SUBMIT);
    cl_ulong start = profile(launches[i], CL_PROFILING_COMMAND_START);
    cl_ulong end = profile(launches[i], CL_PROFILING_COMMAND_END);
    app_expect(queued <= submit && submit <= start && start <= end,
               "profiling times: queued <= submit <= start <= end");
  }
  app_expect(profile(c_done, CL_PROFILING_COMMAND_END) <= profile(scaled, CL_PROFILING_COMMAND_START),
             "scale_c, behind a barrier, starts after combine ends");

  app_check_u32("a", a, a_ref, N);
  app_check_u32("b", b, b_ref, N);
  app_check_u32("c", c, c_ref, N);
  app_print_checksum("a", a, bytes);
  app_print_checksum("b", b, bytes);
  app_print_checksum("c", c, bytes);

  cl_event all[] = {gate, a_done, b_done, c_done, barrier_done, scaled, reads[0], reads[1], reads[2]};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) APP_CHECK(clReleaseEvent(all[i]));
  APP_CHECK(clReleaseMemObject(a_buf));
  APP_CHECK(clReleaseMemObject(b_buf));
  APP_CHECK(clReleaseMemObject(c_buf));
  cl_kernel kernels[] = {fill_a, fill_b, combine, scale_c};
  for (size_t i = 0; i < 4; ++i) APP_CHECK(clReleaseKernel(kernels[i]));
  APP_CHECK(clReleaseProgram(program));
  APP_CHECK(clReleaseCommandQueue(q));
  APP_CHECK(clReleaseContext(ctx));
  free(a); free(b); free(c); free(a_ref); free(b_ref); free(c_ref);
  return app_finish();
}
