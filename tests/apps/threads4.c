/* Four host threads share one context and one program; each has its own queue, buffers and kernel
 * objects and runs its own chain of launches at the same time as the others. The main thread
 * checks and prints the results in thread order, so the output does not depend on scheduling. */
#include "common/app_util.h"

#include <pthread.h>

static const char* kSource =
    "__kernel void scramble(__global uint* data, __global const uint* key, uint thread, uint round) {\n"
    "  size_t i = get_global_id(0);\n"
    "  uint v = data[i] + key[i] * (thread + 1u) + round;\n"
    "  data[i] = v ^ (v >> 11) ^ (v << 3);\n"
    "}\n"
    "__kernel void rekey(__global uint* key, __global const uint* data) {\n"
    "  size_t i = get_global_id(0);\n"
    "  key[i] = key[i] ^ data[(i * 7u) & (get_global_size(0) - 1)];\n"
    "}\n";

enum { THREADS = 4, N = 1 << 16, ROUNDS = 6, LOCAL = 128 };

struct worker {
  cl_context ctx;
  cl_device_id device;
  cl_program program;
  pthread_barrier_t* start;
  cl_uint index;
  uint32_t* data; /* in: initial values; out: the result */
};

static void scramble_reference(uint32_t* data, const uint32_t* key, uint32_t thread, uint32_t round) {
  for (size_t i = 0; i < N; ++i) {
    uint32_t v = data[i] + key[i] * (thread + 1u) + round;
    data[i] = v ^ (v >> 11) ^ (v << 3);
  }
}

static void rekey_reference(uint32_t* key, const uint32_t* data) {
  for (size_t i = 0; i < N; ++i) key[i] ^= data[(i * 7u) & (N - 1)];
}

static void* run_worker(void* arg) {
  struct worker* w = (struct worker*)arg;
  cl_command_queue q = app_create_queue(w->ctx, w->device, 0);
  cl_kernel scramble = app_create_kernel(w->program, "scramble");
  cl_kernel rekey = app_create_kernel(w->program, "rekey");
  uint32_t* key = (uint32_t*)app_alloc(N * 4);
  for (uint32_t i = 0; i < N; ++i) key[i] = i * (w->index + 3u) + 1u;
  cl_mem data_buf = app_create_buffer(w->ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, N * 4, w->data);
  cl_mem key_buf = app_create_buffer(w->ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, N * 4, key);
  APP_ARG(scramble, 0, data_buf);
  APP_ARG(scramble, 1, key_buf);
  APP_ARG(scramble, 2, w->index);
  APP_ARG(rekey, 0, key_buf);
  APP_ARG(rekey, 1, data_buf);
  pthread_barrier_wait(w->start);
  size_t global = N, local = LOCAL;
  for (cl_uint round = 0; round < ROUNDS; ++round) {
    APP_ARG(scramble, 3, round);
    APP_CHECK(clEnqueueNDRangeKernel(q, scramble, 1, NULL, &global, &local, 0, NULL, NULL));
    APP_CHECK(clEnqueueNDRangeKernel(q, rekey, 1, NULL, &global, NULL, 0, NULL, NULL));
  }
  APP_CHECK(clEnqueueReadBuffer(q, data_buf, CL_TRUE, 0, N * 4, w->data, 0, NULL, NULL));
  APP_CHECK(clReleaseMemObject(data_buf));
  APP_CHECK(clReleaseMemObject(key_buf));
  APP_CHECK(clReleaseKernel(scramble));
  APP_CHECK(clReleaseKernel(rekey));
  APP_CHECK(clReleaseCommandQueue(q));
  free(key);
  return NULL;
}

int main(void) {
  cl_platform_id platform;
  cl_device_id device;
  app_pick_device(&platform, &device);
  cl_context ctx = app_create_context(platform, device);
  cl_program program = app_build_program(ctx, device, 1, &kSource, "");

  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, THREADS);
  struct worker workers[THREADS];
  pthread_t threads[THREADS];
  uint32_t* refs[THREADS];
  for (cl_uint t = 0; t < THREADS; ++t) {
    struct worker* w = &workers[t];
    w->ctx = ctx;
    w->device = device;
    w->program = program;
    w->start = &start;
    w->index = t;
    w->data = (uint32_t*)app_alloc(N * 4);
    refs[t] = (uint32_t*)app_alloc(N * 4);
    uint32_t* key = (uint32_t*)app_alloc(N * 4);
    uint32_t seed = 1000u + t;
    for (uint32_t i = 0; i < N; ++i) {
      w->data[i] = refs[t][i] = app_rand(&seed);
      key[i] = i * (t + 3u) + 1u;
    }
    for (uint32_t round = 0; round < ROUNDS; ++round) {
      scramble_reference(refs[t], key, t, round);
      rekey_reference(key, refs[t]);
    }
    free(key);
  }
  for (int t = 0; t < THREADS; ++t)
    if (pthread_create(&threads[t], NULL, run_worker, &workers[t]) != 0) {
      puts("error: pthread_create failed\nFAIL");
      return 1;
    }
  for (int t = 0; t < THREADS; ++t) pthread_join(threads[t], NULL);
  pthread_barrier_destroy(&start);

  for (int t = 0; t < THREADS; ++t) {
    char name[32];
    snprintf(name, sizeof name, "thread%d", t);
    app_check_u32(name, workers[t].data, refs[t], N);
    app_print_checksum(name, workers[t].data, N * 4);
    free(workers[t].data);
    free(refs[t]);
  }
  APP_CHECK(clReleaseProgram(program));
  APP_CHECK(clReleaseContext(ctx));
  return app_finish();
}
