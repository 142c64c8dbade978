/* Few work-items, much work each: 1,024 items that each loop over a whole row (a correlation-like
 * kernel), launched four times (or argv[1] times) with a read in between. Fewer items than
 * min_split_work_items, but each launch takes tens of milliseconds on one device: coex times the
 * first and splits the rest. argv[2] "atomic" makes its store a global atomic: a kernel coex never
 * splits; "reqd" gives the kernel a reqd_work_group_size; "held" does too, and first enqueues one
 * launch on a second queue that waits for a user event, set only once the rounds are done (its
 * output printed after theirs); "group" adds each item's get_group_id(0): a kernel coex splits from
 * a rewritten program, which it builds on the app's device too; "padded" puts a comment of 300,000
 * bytes after the kernel (a source larger than a socket's buffer, which coex hands to a process). */
#include "common/app_util.h"

static const char* kSource =
    "#ifdef REQD_GROUP\n"
    "#define GROUP_SIZE __attribute__((reqd_work_group_size(16, 1, 1)))\n"
    "#else\n"
    "#define GROUP_SIZE\n"
    "#endif\n"
    "__kernel GROUP_SIZE void row_products(__global const uint* a, __global uint* out, uint n, uint round) {\n"
    "  size_t i = get_global_id(0);\n"
    "  uint acc = round;\n"
    "  for (uint r = 0; r < 100; ++r)\n"
    "    for (uint k = 0; k < n; ++k) acc = acc * 31u + a[k] * (uint)(i + r + 1);\n"
    "#ifdef GROUP_ID\n"
    "  acc += (uint)get_group_id(0);\n"
    "#endif\n"
    "#ifdef ATOMIC_STORE\n"
    "  atomic_xchg(&out[i], acc);\n"
    "#else\n"
    "  out[i] = acc;\n"
    "#endif\n"
    "}\n";

enum { ITEMS = 1024, N = 1024, ROUNDS = 4 };

int main(int argc, char** argv) {
  const cl_uint rounds = argc > 1 ? (cl_uint)strtoul(argv[1], NULL, 10) : ROUNDS;
  cl_platform_id platform;
  cl_device_id device;
  app_pick_device(&platform, &device);
  cl_context ctx = app_create_context(platform, device);
  cl_command_queue q = app_create_queue(ctx, device, 0);
  /* argv[2] "atomic": the store is a global atomic, which coex never splits (global_atomics). */
  const char* variant = argc > 2 ? argv[2] : "";
  const int atomic_store = strcmp(variant, "atomic") == 0, held = strcmp(variant, "held") == 0;
  const int reqd = held || strcmp(variant, "reqd") == 0, group = strcmp(variant, "group") == 0;
  enum { PADDING = 300000 };
  char* padding = (char*)app_alloc(PADDING + 8);
  memset(padding, 'x', PADDING + 8);
  memcpy(padding, "/* ", 3);
  memcpy(padding + PADDING + 3, " */\n", 5);
  padding[PADDING + 7] = '\0';
  const char* sources[2] = {kSource, padding};
  cl_program program = app_build_program(ctx, device, strcmp(variant, "padded") == 0 ? 2 : 1, sources,
                                         atomic_store ? "-DATOMIC_STORE"
                                         : reqd       ? "-DREQD_GROUP"
                                         : group      ? "-DGROUP_ID"
                                                      : "");
  cl_kernel kernel = app_create_kernel(program, "row_products");
  uint32_t* a = (uint32_t*)app_alloc(N * 4);
  uint32_t* out = (uint32_t*)app_alloc(ITEMS * 4);
  uint32_t seed = 7;
  for (size_t k = 0; k < N; ++k) a[k] = app_rand(&seed);
  cl_mem a_buf = app_create_buffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, N * 4, a);
  cl_mem out_buf = app_create_buffer(ctx, CL_MEM_WRITE_ONLY, ITEMS * 4, NULL);
  const cl_uint n = N;
  APP_ARG(kernel, 0, a_buf);
  APP_ARG(kernel, 1, out_buf);
  APP_ARG(kernel, 2, n);
  size_t global = ITEMS, local = 16;
  /* "held": a launch of round `rounds` into its own buffer on a second queue, held by a user event. */
  cl_command_queue held_q = NULL;
  cl_mem held_buf = NULL;
  cl_event gate = NULL;
  if (held) {
    cl_int err = CL_SUCCESS;
    held_q = app_create_queue(ctx, device, 0);
    held_buf = app_create_buffer(ctx, CL_MEM_WRITE_ONLY, ITEMS * 4, NULL);
    gate = clCreateUserEvent(ctx, &err);
    APP_CHECK(err);
    const cl_uint held_round = rounds;
    APP_ARG(kernel, 1, held_buf);
    APP_ARG(kernel, 3, held_round);
    APP_CHECK(clEnqueueNDRangeKernel(held_q, kernel, 1, NULL, &global, &local, 1, &gate, NULL));
    APP_CHECK(clFlush(held_q));
    APP_ARG(kernel, 1, out_buf);
  }
  for (cl_uint round = 0; round < rounds; ++round) {
    APP_ARG(kernel, 3, round);
    APP_CHECK(clEnqueueNDRangeKernel(q, kernel, 1, NULL, &global, &local, 0, NULL, NULL));
    APP_CHECK(clEnqueueReadBuffer(q, out_buf, CL_TRUE, 0, ITEMS * 4, out, 0, NULL, NULL));
    /* The host reference of one item per round. */
    size_t i = (round * 337u) % ITEMS;
    uint32_t acc = round;
    for (uint32_t r = 0; r < 100; ++r)
      for (size_t k = 0; k < N; ++k) acc = acc * 31u + a[k] * (uint32_t)(i + r + 1);
    if (group) acc += (uint32_t)(i / local);
    app_expect(out[i] == acc, "row_products matches the host at one item");
    app_print_checksum("out", out, ITEMS * 4);
  }
  if (held) {
    APP_CHECK(clSetUserEventStatus(gate, CL_COMPLETE));
    APP_CHECK(clEnqueueReadBuffer(held_q, held_buf, CL_TRUE, 0, ITEMS * 4, out, 0, NULL, NULL));
    app_print_checksum("held", out, ITEMS * 4);
    APP_CHECK(clReleaseEvent(gate));
    APP_CHECK(clReleaseMemObject(held_buf));
    APP_CHECK(clReleaseCommandQueue(held_q));
  }
  APP_CHECK(clReleaseMemObject(a_buf));
  APP_CHECK(clReleaseMemObject(out_buf));
  APP_CHECK(clReleaseKernel(kernel));
  APP_CHECK(clReleaseProgram(program));
  APP_CHECK(clReleaseCommandQueue(q));
  APP_CHECK(clReleaseContext(ctx));
  free(a);
  free(out);
  free(padding);
  return app_finish();
}
