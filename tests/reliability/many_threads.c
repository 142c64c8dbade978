/* Many threads (docs/reliability.md): 8 host threads, 1000 launches each of a kernel coex splits,
 * sharing read-only input buffers. Each thread owns an accumulator buffer and its own kernel
 * object (a kernel's arguments are not thread-safe to set: spec 3.0, appendix A.2). Every launch
 * adds `a[i] * k + b[i]` into the thread's accumulator, with a different `k` each time, so the
 * final bytes depend on every launch having run exactly once, on the whole range; every 250
 * launches the thread reads its accumulator back (blocking) and checks it against the host.
 *
 *   many_threads [--shared-queue] [--threads T] [--launches L]
 *
 * --shared-queue: all threads enqueue on one in-order queue (the spec allows it: queues are
 * thread-safe); otherwise each thread has its own queue. Prints one checksum per thread, in
 * thread order, then PASS. */
#include "common/app_util.h"

#include <pthread.h>

static const char* kSource =
    "__kernel void accumulate(__global const uint* a, __global const uint* b, __global uint* acc, uint k) {\n"
    "  size_t i = get_global_id(0);\n"
    "  acc[i] += a[i] * k + b[i];\n"
    "}\n";

enum { N = 16384, LOCAL = 64, CHECK_EVERY = 250, MAX_THREADS = 64 };

static struct {
  cl_context ctx;
  cl_device_id device;
  cl_program program;
  cl_mem a, b;
  cl_command_queue shared_queue; /* NULL: one queue per thread */
  const uint32_t* host_a;
  const uint32_t* host_b;
  int launches;
} G;

typedef struct {
  int index;
  uint32_t* result; /* the accumulator after the last launch */
  int failed;
  char error[160];
} ThreadState;

/* Errors inside a thread are recorded, not fatal: the main thread prints them in order. */
#define THREAD_CHECK(state, call)                                                               \
  do {                                                                                           \
    cl_int status_ = (call);                                                                     \
    if (status_ != CL_SUCCESS) {                                                                 \
      snprintf((state)->error, sizeof (state)->error, "error: %s returned %d (%s) in thread %d", \
               #call, (int)status_, app_cl_error_name(status_), (state)->index);                 \
      (state)->failed = 1;                                                                       \
      goto done;                                                                                 \
    }                                                                                            \
  } while (0)

static uint32_t launch_factor(int thread, int launch) { return (uint32_t)(thread * 7919 + launch * 31 + 1); }

static void *run_thread(void* arg) {
  ThreadState* st = (ThreadState*)arg;
  cl_int err = CL_SUCCESS;
  cl_command_queue q = G.shared_queue;
  cl_kernel kernel = NULL;
  cl_mem acc = NULL;
  uint32_t* want = (uint32_t*)app_alloc(N * sizeof(uint32_t));
  uint32_t* got = st->result;
  if (!q) {
    q = clCreateCommandQueue(G.ctx, G.device, 0, &err);
    THREAD_CHECK(st, err);
  }
  kernel = clCreateKernel(G.program, "accumulate", &err);
  THREAD_CHECK(st, err);
  for (size_t i = 0; i < N; ++i) want[i] = (uint32_t)(st->index * 1000003u + i);
  acc = clCreateBuffer(G.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, N * sizeof(uint32_t), want, &err);
  THREAD_CHECK(st, err);
  THREAD_CHECK(st, clSetKernelArg(kernel, 0, sizeof G.a, &G.a));
  THREAD_CHECK(st, clSetKernelArg(kernel, 1, sizeof G.b, &G.b));
  THREAD_CHECK(st, clSetKernelArg(kernel, 2, sizeof acc, &acc));
  size_t global = N, local = LOCAL;
  for (int l = 0; l < G.launches; ++l) {
    uint32_t k = launch_factor(st->index, l);
    THREAD_CHECK(st, clSetKernelArg(kernel, 3, sizeof k, &k));
    /* Alternate explicit and NULL local sizes: coex picks the group size when given none. */
    THREAD_CHECK(st, clEnqueueNDRangeKernel(q, kernel, 1, NULL, &global, (l & 1) ? NULL : &local, 0, NULL, NULL));
    for (size_t i = 0; i < N; ++i) want[i] += G.host_a[i] * k + G.host_b[i];
    if ((l + 1) % CHECK_EVERY == 0 || l + 1 == G.launches) {
      THREAD_CHECK(st, clEnqueueReadBuffer(q, acc, CL_TRUE, 0, N * sizeof(uint32_t), got, 0, NULL, NULL));
      if (memcmp(got, want, N * sizeof(uint32_t)) != 0) {
        size_t i = 0;
        while (got[i] == want[i]) ++i;
        snprintf(st->error, sizeof st->error, "mismatch acc_t%d after launch %d at [%zu]: got %u expected %u",
                 st->index, l + 1, i, (unsigned)got[i], (unsigned)want[i]);
        st->failed = 1;
        goto done;
      }
    }
  }
done:
  if (acc) clReleaseMemObject(acc);
  if (kernel) clReleaseKernel(kernel);
  if (q && q != G.shared_queue) clReleaseCommandQueue(q);
  free(want);
  return NULL;
}

int main(int argc, char** argv) {
  int threads = 8;
  G.launches = 1000;
  int shared = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--shared-queue") == 0) shared = 1;
    else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) threads = atoi(argv[++i]);
    else if (strcmp(argv[i], "--launches") == 0 && i + 1 < argc) G.launches = atoi(argv[++i]);
    else {
      printf("usage: many_threads [--shared-queue] [--threads T] [--launches L]\nFAIL\n");
      return 2;
    }
  }
  if (threads < 1 || threads > MAX_THREADS || G.launches < 1) {
    printf("error: --threads must be in [1, %d] and --launches >= 1\nFAIL\n", MAX_THREADS);
    return 2;
  }

  cl_platform_id platform;
  app_pick_device(&platform, &G.device);
  G.ctx = app_create_context(platform, G.device);
  G.program = app_build_program(G.ctx, G.device, 1, &kSource, "");
  uint32_t* a = (uint32_t*)app_alloc(N * sizeof(uint32_t));
  uint32_t* b = (uint32_t*)app_alloc(N * sizeof(uint32_t));
  uint32_t seed = 4242;
  for (size_t i = 0; i < N; ++i) {
    a[i] = app_rand(&seed);
    b[i] = app_rand(&seed);
  }
  G.host_a = a;
  G.host_b = b;
  G.a = app_create_buffer(G.ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, N * sizeof(uint32_t), a);
  G.b = app_create_buffer(G.ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, N * sizeof(uint32_t), b);
  if (shared) G.shared_queue = app_create_queue(G.ctx, G.device, 0);

  pthread_t ids[MAX_THREADS];
  ThreadState states[MAX_THREADS];
  for (int t = 0; t < threads; ++t) {
    memset(&states[t], 0, sizeof states[t]);
    states[t].index = t;
    states[t].result = (uint32_t*)app_alloc(N * sizeof(uint32_t));
    if (pthread_create(&ids[t], NULL, run_thread, &states[t]) != 0) {
      printf("error: pthread_create failed\nFAIL\n");
      return 1;
    }
  }
  for (int t = 0; t < threads; ++t) pthread_join(ids[t], NULL);
  for (int t = 0; t < threads; ++t) {
    if (states[t].failed) {
      printf("%s\n", states[t].error);
      ++app_failures;
      continue;
    }
    char name[32];
    snprintf(name, sizeof name, "acc_t%d", t);
    app_print_checksum(name, states[t].result, N * sizeof(uint32_t));
    free(states[t].result);
  }
  if (G.shared_queue) clReleaseCommandQueue(G.shared_queue);
  clReleaseMemObject(G.a);
  clReleaseMemObject(G.b);
  clReleaseProgram(G.program);
  clReleaseContext(G.ctx);
  free(a);
  free(b);
  return app_finish();
}
