/* Bad input gets the driver's answer (docs/reliability.md): a table of invalid OpenCL calls, each
 * printed as `<name> <error code>`. The differential harness runs this program bare and under coex
 * and requires the same bytes: coex must give every invalid call the driver's own error code, and
 * none may crash or hang. The calls that matter most for coex are the launches of a kernel coex
 * would split (`probe`, 131072 work-items): there coex plans the launch itself, so any check the
 * driver makes that coex's planner skips shows up as a different code. (The table launches
 * `probe`, not `add`, so that the report counts the launches PoCL accepts apart from the valid ones.)
 *
 * Every call is one the OpenCL 3.0 spec answers with an error code. A handle used after its last
 * release crashes ocl-icd bare, so none is here; the last group uses handles the app has released
 * while the driver still holds them. docs/reliability.md lists the calls left out and why.
 *
 * Before and after the table, a valid split launch of `add` checks that coex's state survived the
 * bad calls: its result is compared with the host and printed as a checksum.
 *
 *   bad_input [PREFIX]   runs only the calls whose names start with PREFIX (to find a crash). */
#include "bad_input.h"

const char* kBadInputSource =
    "__kernel void add(__global const int* a, __global const int* b, __global int* c, int n) {\n"
    "  size_t i = get_global_id(0);\n"
    "  if (i < (size_t)n) c[i] = a[i] + b[i];\n"
    "}\n"
    "__kernel void probe(__global const int* a, __global const int* b, __global int* c, int n) {\n"
    "  size_t i = get_global_id(0);\n"
    "  if (i < (size_t)n) c[i] = a[i] + b[i];\n"
    "}\n"
    "__kernel void probe_null_global(__global const int* a, __global const int* b, __global int* c, int n) {\n"
    "  size_t i = get_global_id(0);\n"
    "  if (i < (size_t)n) c[i] = a[i] + b[i];\n"
    "}\n"
    "__kernel __attribute__((reqd_work_group_size(64, 1, 1)))\n"
    "void add_reqd(__global const int* a, __global const int* b, __global int* c, int n) {\n"
    "  size_t i = get_global_id(0);\n"
    "  if (i < (size_t)n) c[i] = a[i] + b[i];\n"
    "}\n"
    "__kernel void add2d(__global const int* a, __global int* c, int width, int n) {\n"
    "  size_t i = get_global_id(1) * (size_t)width + get_global_id(0);\n"
    "  if (i < (size_t)n) c[i] = a[i] * 2;\n"
    "}\n"
    "__kernel void with_local(__global int* c, __local int* scratch, int n) {\n"
    "  size_t i = get_global_id(0);\n"
    "  scratch[get_local_id(0)] = (int)i;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  if (i < (size_t)n) c[i] = scratch[get_local_id(0)];\n"
    "}\n";

BadInputState S;

/* ---- launches of a kernel coex would split ---- */
static size_t g_n = N, g_local = 64;
static cl_int launch(cl_command_queue q, cl_kernel k, cl_uint dim, const size_t* offset, const size_t* global,
                     const size_t* local, cl_uint nwait, const cl_event* wait) {
  cl_int err = clEnqueueNDRangeKernel(q, k, dim, offset, global, local, nwait, wait, NULL);
  clFinish(S.q);  /* a call coex took wrongly must finish before the next one */
  return err;
}
CALL(ndrange_null_queue) { return launch(NULL, S.probe, 1, NULL, &g_n, NULL, 0, NULL); }
CALL(ndrange_work_dim_0) { return launch(S.q, S.probe, 0, NULL, &g_n, NULL, 0, NULL); }
CALL(ndrange_work_dim_4) {
  size_t g[4] = {N, 1, 1, 1};
  return launch(S.q, S.probe, 4, NULL, g, NULL, 0, NULL);
}
CALL(ndrange_null_global_size) { return launch(S.q, S.probe_null_global, 1, NULL, NULL, NULL, 0, NULL); }
CALL(ndrange_global_size_0) {
  size_t zero = 0;
  return launch(S.q, S.probe, 1, NULL, &zero, NULL, 0, NULL);
}
CALL(ndrange_local_not_dividing_global) {
  size_t global = N + 32, local = 64;
  return launch(S.q, S.probe, 1, NULL, &global, &local, 0, NULL);
}
CALL(ndrange_local_not_dividing_global_2d) {
  size_t global[2] = {256, 513}, local[2] = {16, 4};
  return launch(S.q, S.add2d, 2, NULL, global, local, 0, NULL);
}
CALL(ndrange_local_above_device_limit) {
  size_t global = N, local = 8192;
  return launch(S.q, S.probe, 1, NULL, &global, &local, 0, NULL);
}
CALL(ndrange_local_product_above_limit_2d) {
  size_t global[2] = {4096, 64}, local[2] = {1024, 16};
  return launch(S.q, S.add2d, 2, NULL, global, local, 0, NULL);
}
CALL(ndrange_local_differs_from_reqd) {
  size_t local = 128;
  return launch(S.q, S.add_reqd, 1, NULL, &g_n, &local, 0, NULL);
}
CALL(ndrange_offset_overflows) {
  size_t offset = SIZE_MAX - 100;
  return launch(S.q, S.probe, 1, &offset, &g_n, &g_local, 0, NULL);
}
CALL(ndrange_args_not_set) { return launch(S.q, S.fresh, 1, NULL, &g_n, NULL, 0, NULL); }
CALL(ndrange_kernel_of_other_context) { return launch(S.q, S.add_ctx2, 1, NULL, &g_n, NULL, 0, NULL); }
CALL(ndrange_wait_list_with_count_0) { return launch(S.q, S.probe, 1, NULL, &g_n, NULL, 0, &S.done_event); }
CALL(ndrange_wait_list_null_event) {
  cl_event none = NULL;
  return launch(S.q, S.probe, 1, NULL, &g_n, NULL, 1, &none);
}
/* PoCL 3.1 accepts an event of another context (the spec says CL_INVALID_CONTEXT) and then waits
 * for it: the user event is completed before the queue is finished. */
CALL(ndrange_wait_list_other_context) {
  cl_int err = CL_SUCCESS;
  cl_event gate = clCreateUserEvent(S.ctx2, &err);
  if (!gate) return err;
  err = clEnqueueNDRangeKernel(S.q, S.probe, 1, NULL, &g_n, NULL, 1, &gate, NULL);
  clSetUserEventStatus(gate, CL_COMPLETE);
  clFinish(S.q);
  clReleaseEvent(gate);
  return err;
}
CALL(task_args_not_set) {
  cl_int err = clEnqueueTask(S.q, S.fresh, 0, NULL, NULL);
  clFinish(S.q);
  return err;
}

/* ---- events ---- */
CALL(wait_for_events_count_0) { return clWaitForEvents(0, &S.done_event); }
CALL(wait_for_events_null_list) { return clWaitForEvents(1, NULL); }
CALL(wait_for_events_null_event) {
  cl_event none = NULL;
  return clWaitForEvents(1, &none);
}
CALL(wait_for_events_two_contexts) {
  cl_event both[2] = {S.done_event, S.user_ctx2};
  return clWaitForEvents(2, both);
}
CALL(get_event_info_null_event) {
  cl_int status = 0;
  return clGetEventInfo(NULL, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
}
CALL(get_event_info_unknown_param) { return clGetEventInfo(S.split_event, 0x7777, 0, NULL, NULL); }
CALL(get_event_info_split_size_too_small) {
  cl_int status = 0;
  return clGetEventInfo(S.split_event, CL_EVENT_COMMAND_EXECUTION_STATUS, 1, &status, NULL);
}
CALL(profiling_info_without_profiling_queue) {
  cl_ulong t = 0;
  return clGetEventProfilingInfo(S.split_event, CL_PROFILING_COMMAND_START, sizeof t, &t, NULL);
}
CALL(profiling_info_of_user_event) {
  cl_ulong t = 0;
  return clGetEventProfilingInfo(S.user_ctx2, CL_PROFILING_COMMAND_END, sizeof t, &t, NULL);
}
CALL(set_user_event_status_positive) { return clSetUserEventStatus(S.user_ctx2, 5); }
CALL(set_user_event_status_not_user_event) { return clSetUserEventStatus(S.split_event, CL_COMPLETE); }
CALL(set_event_callback_unknown_type) { return clSetEventCallback(S.split_event, 0x7777, NULL, NULL); }
OBJ_CALL(create_user_event_null_context, cl_event, release_event_any, clCreateUserEvent(NULL, &err))
CALL(release_event_null) { return clReleaseEvent(NULL); }
CALL(retain_event_null) { return clRetainEvent(NULL); }
CALL(marker_wait_list_null_event) {
  cl_event none = NULL;
  return clEnqueueMarkerWithWaitList(S.q, 1, &none, NULL);
}
CALL(barrier_wait_list_null_with_count) { return clEnqueueBarrierWithWaitList(S.q, 1, NULL, NULL); }

/* ---- handles the app has released while the driver still holds them (a handle used after its
 * real last release crashes ocl-icd bare: docs/reliability.md) ---- */
/* A queue the app has released while one of its events still holds it (PoCL retains the queue of
 * each event): alive for the driver, gone for the app. */
static cl_command_queue released_queue(cl_event* holder) {
  cl_int err = CL_SUCCESS;
  cl_command_queue q = clCreateCommandQueue(S.ctx, S.device, 0, &err);
  if (!q) return NULL;
  if (clEnqueueMarkerWithWaitList(q, 0, NULL, holder) != CL_SUCCESS) *holder = NULL;
  clReleaseCommandQueue(q);
  return q;
}
static cl_int done_with_released_queue(cl_command_queue q, cl_event holder, cl_int code) {
  clFinish(q);
  if (holder) clReleaseEvent(holder);
  return code;
}
CALL(ndrange_released_queue_local_not_dividing) {
  cl_event holder = NULL;
  cl_command_queue q = released_queue(&holder);
  size_t global = N + 32, local = 64;
  cl_int err = clEnqueueNDRangeKernel(q, S.probe, 1, NULL, &global, &local, 0, NULL, NULL);
  return done_with_released_queue(q, holder, err);
}
CALL(ndrange_released_queue_valid_launch) {
  cl_event holder = NULL;
  cl_command_queue q = released_queue(&holder);
  cl_int err = clEnqueueNDRangeKernel(q, S.probe, 1, NULL, &g_n, NULL, 0, NULL, NULL);
  return done_with_released_queue(q, holder, err);
}
/* A program the app has released while its kernel `add` still holds it. */
CALL(build_released_program_with_kernels) {
  cl_int err = CL_SUCCESS;
  cl_program p = clCreateProgramWithSource(S.ctx, 1, &kBadInputSource, NULL, &err);
  if (!p) return err;
  if ((err = clBuildProgram(p, 1, &S.device, "", NULL, NULL)) != CL_SUCCESS) return err;
  cl_kernel k = clCreateKernel(p, "add", &err);
  if (!k) return err;
  clReleaseProgram(p);
  err = clBuildProgram(p, 1, &S.device, "", NULL, NULL);
  clReleaseKernel(k);
  return err;
}
CALL(create_kernel_unknown_name_released_program) {
  cl_int err = CL_SUCCESS;
  cl_program p = clCreateProgramWithSource(S.ctx, 1, &kBadInputSource, NULL, &err);
  if (!p) return err;
  if ((err = clBuildProgram(p, 1, &S.device, "", NULL, NULL)) != CL_SUCCESS) return err;
  cl_kernel k = clCreateKernel(p, "add", &err);
  if (!k) return err;
  clReleaseProgram(p);
  cl_kernel none = clCreateKernel(p, "no_such_kernel", &err);
  if (none) clReleaseKernel(none);
  clReleaseKernel(k);
  return err;
}
/* A buffer the app has released while a sub-buffer of it still holds it. */
CALL(read_released_parent_beyond_end) {
  cl_int err = CL_SUCCESS;
  cl_mem parent = clCreateBuffer(S.ctx, CL_MEM_READ_WRITE, 4096, NULL, &err);
  if (!parent) return err;
  cl_buffer_region r = {0, 1024};
  cl_mem sub = clCreateSubBuffer(parent, 0, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
  clReleaseMemObject(parent);
  if (!sub) return err;
  err = clEnqueueReadBuffer(S.q, parent, CL_TRUE, 4000, 256, S.host, 0, NULL, NULL);
  clReleaseMemObject(sub);
  return err;
}

/* The launches, events and released-handle calls; kObjectCalls has the rest. */
static const BadCall kLaunchCalls[] = {
    ENTRY(ndrange_null_queue), ENTRY(ndrange_work_dim_0), ENTRY(ndrange_work_dim_4),
    ENTRY(ndrange_null_global_size), ENTRY(ndrange_global_size_0), ENTRY(ndrange_local_not_dividing_global),
    ENTRY(ndrange_local_not_dividing_global_2d), ENTRY(ndrange_local_above_device_limit),
    ENTRY(ndrange_local_product_above_limit_2d), ENTRY(ndrange_local_differs_from_reqd),
    ENTRY(ndrange_offset_overflows), ENTRY(ndrange_args_not_set), ENTRY(ndrange_kernel_of_other_context),
    ENTRY(ndrange_wait_list_with_count_0),
    ENTRY(ndrange_wait_list_null_event), ENTRY(ndrange_wait_list_other_context),
    ENTRY(task_args_not_set),

    ENTRY(wait_for_events_count_0), ENTRY(wait_for_events_null_list), ENTRY(wait_for_events_null_event),
    ENTRY(wait_for_events_two_contexts), ENTRY(get_event_info_null_event), ENTRY(get_event_info_unknown_param),
    ENTRY(get_event_info_split_size_too_small), ENTRY(profiling_info_without_profiling_queue),
    ENTRY(profiling_info_of_user_event), ENTRY(set_user_event_status_positive),
    ENTRY(set_user_event_status_not_user_event), ENTRY(set_event_callback_unknown_type),
    ENTRY(create_user_event_null_context), ENTRY(release_event_null), ENTRY(retain_event_null),
    ENTRY(marker_wait_list_null_event), ENTRY(barrier_wait_list_null_with_count),

    ENTRY(ndrange_released_queue_local_not_dividing), ENTRY(ndrange_released_queue_valid_launch),
    ENTRY(build_released_program_with_kernels), ENTRY(create_kernel_unknown_name_released_program),
    ENTRY(read_released_parent_beyond_end),
};

/* A valid split launch of `add` over all of c, checked against the host. */
static void split_launch_and_check(const char* name, const int32_t* a, const int32_t* b, int32_t* c, int32_t* want,
                                   cl_event* event) {
  size_t global = N;
  cl_int n = N;
  APP_ARG(S.add, 0, S.a);
  APP_ARG(S.add, 1, S.b);
  APP_ARG(S.add, 2, S.c);
  APP_ARG(S.add, 3, n);
  APP_CHECK(clEnqueueNDRangeKernel(S.q, S.add, 1, NULL, &global, NULL, 0, NULL, event));
  APP_CHECK(clEnqueueReadBuffer(S.q, S.c, CL_TRUE, 0, (size_t)N * 4, c, 0, NULL, NULL));
  for (size_t i = 0; i < N; ++i) want[i] = a[i] + b[i];
  app_check_i32(name, c, want, N);
  app_print_checksum(name, c, (size_t)N * 4);
}

int main(int argc, char** argv) {
  const char* only = argc > 1 ? argv[1] : "";
  app_pick_device(&S.platform, &S.device);
  S.ctx = app_create_context(S.platform, S.device);
  S.ctx2 = app_create_context(S.platform, S.device);
  S.q = app_create_queue(S.ctx, S.device, 0);
  S.q2 = app_create_queue(S.ctx2, S.device, 0);
  APP_CHECK(clGetDeviceInfo(S.device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof(cl_ulong), &S.max_alloc, NULL));
  S.program = app_build_program(S.ctx, S.device, 1, &kBadInputSource, "");
  S.program2 = app_build_program(S.ctx2, S.device, 1, &kBadInputSource, "");
  cl_int err = CL_SUCCESS;
  S.unbuilt = clCreateProgramWithSource(S.ctx, 1, &kBadInputSource, NULL, &err);
  APP_CHECK_ERR(err, "clCreateProgramWithSource");
  S.add = app_create_kernel(S.program, "add");
  S.probe = app_create_kernel(S.program, "probe");
  S.probe_null_global = app_create_kernel(S.program, "probe_null_global");
  S.add_reqd = app_create_kernel(S.program, "add_reqd");
  S.add2d = app_create_kernel(S.program, "add2d");
  S.with_local = app_create_kernel(S.program, "with_local");
  S.fresh = app_create_kernel(S.program, "add");
  S.add_ctx2 = app_create_kernel(S.program2, "add");

  int32_t* a = (int32_t*)app_alloc((size_t)N * 4);
  int32_t* b = (int32_t*)app_alloc((size_t)N * 4);
  int32_t* c = (int32_t*)app_alloc((size_t)N * 4);
  int32_t* want = (int32_t*)app_alloc((size_t)N * 4);
  uint32_t seed = 777;
  for (size_t i = 0; i < N; ++i) {
    a[i] = (int32_t)(app_rand(&seed) % 100000);
    b[i] = (int32_t)(app_rand(&seed) % 100000);
  }
  for (size_t i = 0; i < SMALL; ++i) S.host[i] = (int32_t)i;
  S.a = app_create_buffer(S.ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, (size_t)N * 4, a);
  S.b = app_create_buffer(S.ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, (size_t)N * 4, b);
  S.c = app_create_buffer(S.ctx, CL_MEM_READ_WRITE, (size_t)N * 4, NULL);
  S.small = app_create_buffer(S.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof S.host, S.host);
  S.host_read_only = app_create_buffer(S.ctx, CL_MEM_READ_WRITE | CL_MEM_HOST_READ_ONLY, 256, NULL);
  S.m2 = app_create_buffer(S.ctx2, CL_MEM_READ_WRITE, 256, NULL);
  cl_buffer_region region = {0, 4096};
  S.sub = clCreateSubBuffer(S.a, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
  APP_CHECK_ERR(err, "clCreateSubBuffer");
  S.user_ctx2 = clCreateUserEvent(S.ctx2, &err);
  APP_CHECK_ERR(err, "clCreateUserEvent");

  /* Every kernel the launches use has all its arguments set, so only the named fault differs. */
  cl_int n = N, width = 256;
  cl_kernel adders[] = {S.probe, S.probe_null_global, S.add_reqd};
  for (size_t i = 0; i < sizeof adders / sizeof adders[0]; ++i) {
    APP_ARG(adders[i], 0, S.a);
    APP_ARG(adders[i], 1, S.b);
    APP_ARG(adders[i], 2, S.c);
    APP_ARG(adders[i], 3, n);
  }
  APP_ARG(S.add2d, 0, S.a);
  APP_ARG(S.add2d, 1, S.c);
  APP_ARG(S.add2d, 2, width);
  APP_ARG(S.add2d, 3, n);
  APP_ARG(S.with_local, 0, S.c);
  APP_CHECK(clSetKernelArg(S.with_local, 1, 64 * sizeof(cl_int), NULL));
  APP_ARG(S.with_local, 2, n);
  cl_mem a2 = app_create_buffer(S.ctx2, CL_MEM_READ_WRITE, (size_t)N * 4, NULL);
  APP_ARG(S.add_ctx2, 0, a2);
  APP_ARG(S.add_ctx2, 1, a2);
  APP_ARG(S.add_ctx2, 2, a2);
  APP_ARG(S.add_ctx2, 3, n);
  APP_ARG(S.fresh, 0, S.a);

  split_launch_and_check("c_before", a, b, c, want, &S.split_event);
  APP_CHECK(clWaitForEvents(1, &S.split_event));
  APP_CHECK(clEnqueueMarkerWithWaitList(S.q, 0, NULL, &S.done_event));
  APP_CHECK(clWaitForEvents(1, &S.done_event));

  const BadCall* tables[2] = {kObjectCalls, kLaunchCalls};
  const size_t counts[2] = {kObjectCallCount, sizeof kLaunchCalls / sizeof kLaunchCalls[0]};
  for (int t = 0; t < 2; ++t) {
    for (size_t i = 0; i < counts[t]; ++i) {
      if (strncmp(tables[t][i].name, only, strlen(only)) != 0) continue;
      cl_int code = tables[t][i].call();
      printf("%s %d\n", tables[t][i].name, (int)code);
      fflush(stdout);
    }
  }

  /* The table's launches wrote c too (those the driver accepts): c is cleared, then computed again. */
  APP_CHECK(clEnqueueFillBuffer(S.q, S.c, &(cl_int){0}, sizeof(cl_int), 0, (size_t)N * 4, 0, NULL, NULL));
  split_launch_and_check("c_after", a, b, c, want, NULL);

  APP_CHECK(clSetUserEventStatus(S.user_ctx2, CL_COMPLETE));
  clReleaseEvent(S.user_ctx2);
  clReleaseEvent(S.done_event);
  clReleaseEvent(S.split_event);
  cl_kernel kernels[] = {S.add, S.probe, S.probe_null_global, S.add_reqd, S.add2d, S.with_local, S.fresh, S.add_ctx2};
  for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; ++i) clReleaseKernel(kernels[i]);
  cl_mem mems[] = {S.sub, S.a, S.b, S.c, S.small, S.host_read_only, S.m2, a2};
  for (size_t i = 0; i < sizeof mems / sizeof mems[0]; ++i) clReleaseMemObject(mems[i]);
  clReleaseProgram(S.program);
  clReleaseProgram(S.program2);
  clReleaseProgram(S.unbuilt);
  clReleaseCommandQueue(S.q);
  clReleaseCommandQueue(S.q2);
  clReleaseContext(S.ctx);
  clReleaseContext(S.ctx2);
  free(a), free(b), free(c), free(want);
  return app_finish();
}
