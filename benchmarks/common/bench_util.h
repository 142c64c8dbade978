/* Helpers shared by the benchmark programs: command line, device choice by index, timers, a fast
 * checksum and sample checks. Built on the test apps' helpers (tests/apps/common/app_util.h): the
 * benchmarks are ordinary OpenCL programs in the same style, linked only against libOpenCL.
 *
 * Every benchmark prints, on stdout:
 *   device <index> <name>          the device the program chose (its "home" device under coex)
 *   work <number>                  a count proportional to the work at this size (for extrapolation)
 *   launches <n>                   kernel launches the program made
 *   checksum <name> <16 hex>       per result buffer, after the last repetition
 *   time_total <seconds>           first write to last read, all repetitions (no setup or compile)
 *   time_kernels <seconds>         the kernel phases: first enqueue of a phase to its clFinish
 *   PASS | FAIL                    the sampled results against the host reference
 * scripts/bench_run.py parses these lines; docs/benchmarks.md describes them. */
#ifndef COEX_BENCH_UTIL_H
#define COEX_BENCH_UTIL_H

#include "common/app_util.h"

#include <errno.h>
#include <time.h>

typedef struct {
  long device;    /* flattened index over platforms then devices; -1: first GPU, else 0 */
  long size;      /* the benchmark's problem size (its meaning is in its usage line) */
  long reps;      /* write -> launch(es) -> read cycles timed in one process */
  long iters;     /* the benchmark's second parameter (iterations, steps, cost) */
  int work_only;  /* --work-only: print the work line and exit, without touching OpenCL */
} BenchOptions;

static inline long bench_parse_long(const char* flag, const char* text) {
  char* end = NULL;
  errno = 0;
  long v = strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < 0) {
    printf("error: %s needs an integer >= 0, not \"%s\"\nFAIL\n", flag, text);
    exit(2);
  }
  return v;
}

/* `what_size` and `what_iters` explain --size and --iters in the usage text. */
static inline BenchOptions bench_parse_options(int argc, char** argv, long default_size,
                                               long default_iters, const char* what_size,
                                               const char* what_iters) {
  BenchOptions o = {-1, default_size, 3, default_iters, 0};
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    int has_value = i + 1 < argc;
    if (strcmp(a, "--work-only") == 0) {
      o.work_only = 1;
    } else if (strcmp(a, "--device") == 0 && has_value) {
      o.device = bench_parse_long(a, argv[++i]);
    } else if (strcmp(a, "--size") == 0 && has_value) {
      o.size = bench_parse_long(a, argv[++i]);
    } else if (strcmp(a, "--reps") == 0 && has_value) {
      o.reps = bench_parse_long(a, argv[++i]);
    } else if (strcmp(a, "--iters") == 0 && has_value && what_iters != NULL) {
      o.iters = bench_parse_long(a, argv[++i]);
    } else {
      printf("usage: %s [--device N] [--size S] [--reps R]%s [--work-only]\n"
             "  --device N  device index as `coex devices` prints it (default: first GPU, else 0)\n"
             "  --size S    %s (default %ld)\n"
             "  --reps R    timed write/launch/read cycles (default 3)\n",
             argv[0], what_iters ? " [--iters I]" : "", what_size, default_size);
      if (what_iters) printf("  --iters I   %s (default %ld)\n", what_iters, default_iters);
      exit(2);
    }
  }
  if (o.size < 1 || o.reps < 1 || o.iters < 1) {
    printf("error: --size, --reps and --iters must be at least 1\nFAIL\n");
    exit(2);
  }
  return o;
}

/* Device `index` of the list that walks the platforms in clGetPlatformIDs order and, in each, its
 * devices of CL_DEVICE_TYPE_ALL in order: the indices `coex devices` prints. index < 0: the first
 * GPU of that list, else its first device (what the test apps pick). */
static inline void bench_pick_device(long index, cl_platform_id* platform_out,
                                     cl_device_id* device_out, long* index_out) {
  cl_uint num_platforms = 0;
  APP_CHECK(clGetPlatformIDs(0, NULL, &num_platforms));
  if (num_platforms == 0) app_die(CL_INVALID_PLATFORM, "clGetPlatformIDs (no platform)", __FILE__, __LINE__);
  cl_platform_id* platforms = (cl_platform_id*)malloc(num_platforms * sizeof(cl_platform_id));
  APP_CHECK(clGetPlatformIDs(num_platforms, platforms, NULL));
  long flat = 0, first_gpu = -1, chosen = -1;
  for (cl_uint p = 0; p < num_platforms && chosen < 0; ++p) {
    cl_uint n = 0;
    if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 0, NULL, &n) != CL_SUCCESS || n == 0) continue;
    cl_device_id* devices = (cl_device_id*)malloc(n * sizeof(cl_device_id));
    APP_CHECK(clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, n, devices, NULL));
    for (cl_uint d = 0; d < n; ++d, ++flat) {
      cl_device_type type = 0;
      APP_CHECK(clGetDeviceInfo(devices[d], CL_DEVICE_TYPE, sizeof(type), &type, NULL));
      int take = index >= 0 ? flat == index : ((type & CL_DEVICE_TYPE_GPU) != 0 && first_gpu < 0);
      if ((type & CL_DEVICE_TYPE_GPU) && first_gpu < 0) first_gpu = flat;
      if (flat == 0 || take) {
        *platform_out = platforms[p];
        *device_out = devices[d];
        *index_out = flat;
      }
      if (take) {
        chosen = flat;
        break;
      }
    }
    free(devices);
  }
  free(platforms);
  if (flat == 0 && chosen < 0) app_die(CL_DEVICE_NOT_FOUND, "clGetDeviceIDs (no device)", __FILE__, __LINE__);
  if (index >= 0 && chosen < 0) {
    printf("error: no device %ld (there are %ld)\nFAIL\n", index, flat);
    exit(2);
  }
  char name[256] = {0};
  APP_CHECK(clGetDeviceInfo(*device_out, CL_DEVICE_NAME, sizeof(name) - 1, name, NULL));
  printf("device %ld %s\n", *index_out, name);
}

/* The usual start of a benchmark: device, context, in-order queue, program. */
typedef struct {
  cl_platform_id platform;
  cl_device_id device;
  long device_index;
  cl_context ctx;
  cl_command_queue queue;
  cl_program program;
} BenchContext;

static inline BenchContext bench_open(const BenchOptions* o, const char* source, const char* build_options) {
  BenchContext b;
  memset(&b, 0, sizeof(b));
  bench_pick_device(o->device, &b.platform, &b.device, &b.device_index);
  b.ctx = app_create_context(b.platform, b.device);
  b.queue = app_create_queue(b.ctx, b.device, 0);
  b.program = app_build_program(b.ctx, b.device, 1, &source, build_options);
  return b;
}

static inline void bench_close(BenchContext* b) {
  APP_CHECK(clReleaseProgram(b->program));
  APP_CHECK(clReleaseCommandQueue(b->queue));
  APP_CHECK(clReleaseContext(b->ctx));
}

static inline double bench_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* time_total runs from the first write of the first repetition to the end of the last read;
 * time_kernels sums the kernel phases (enqueue ... clFinish), which under coex include the data
 * moves the split launches need. The result reads are outside the kernel phases: under coex they
 * include bringing the results home, and that shows in time_total. */
typedef struct {
  double total_begin;
  double total_end;
  double kernel_begin;
  double kernels;
  long launches;
} BenchTimer;

static inline void bench_total_begin(BenchTimer* t) {
  if (t->total_begin == 0) t->total_begin = bench_now();
}
static inline void bench_kernels_begin(BenchTimer* t) { t->kernel_begin = bench_now(); }
static inline void bench_kernels_end(BenchTimer* t, cl_command_queue q) {
  APP_CHECK(clFinish(q));
  t->kernels += bench_now() - t->kernel_begin;
}
static inline void bench_total_end(BenchTimer* t) { t->total_end = bench_now(); }

static inline void bench_print_times(const BenchTimer* t) {
  printf("launches %ld\n", t->launches);
  printf("time_total %.6f\n", t->total_end - t->total_begin);
  printf("time_kernels %.6f\n", t->kernels);
}

static inline void bench_print_work(double work) { printf("work %.17g\n", work); }

/* 64-bit FNV-1a over 8-byte words (then the tail bytes): the byte-wise version of app_util.h
 * takes about a second per GiB, too long for the GPU sizes. */
static inline void bench_print_checksum(const char* name, const void* data, size_t bytes) {
  const unsigned char* p = (const unsigned char*)data;
  uint64_t h = 14695981039346656037ULL;
  size_t words = bytes / 8;
  for (size_t i = 0; i < words; ++i) {
    uint64_t w;
    memcpy(&w, p + i * 8, 8);
    h ^= w;
    h *= 1099511628211ULL;
  }
  for (size_t i = words * 8; i < bytes; ++i) {
    h ^= p[i];
    h *= 1099511628211ULL;
  }
  printf("checksum %s %016llx\n", name, (unsigned long long)h);
}

/* `count` indices spread over [0, n): the first, the last, and the rest from a fixed xorshift
 * sequence, so that chunk borders anywhere are likely to be hit by some sample. */
static inline void bench_sample_indices(size_t n, size_t count, size_t* out) {
  uint32_t state = 0x9e3779b9u;
  for (size_t k = 0; k < count; ++k) {
    if (k == 0) out[k] = 0;
    else if (k == 1) out[k] = n - 1;
    else {
      uint64_t high = app_rand(&state);
      uint64_t low = app_rand(&state);
      out[k] = (size_t)((high << 32 | low) % n);
    }
  }
}

/* Deterministic input data: a hash of the index mapped to [0, 1) with 24 bits. */
static inline float bench_unit_float(uint64_t i) {
  uint64_t x = i * 0x9E3779B97F4A7C15ULL + 0x632BE59BD9B4E019ULL;
  x ^= x >> 29;
  x *= 0xBF58476D1CE4E5B9ULL;
  x ^= x >> 32;
  return (float)(x >> 40) * (1.0f / 16777216.0f);
}

static inline size_t bench_round_up(size_t v, size_t multiple) {
  return (v + multiple - 1) / multiple * multiple;
}

#endif /* COEX_BENCH_UTIL_H */
