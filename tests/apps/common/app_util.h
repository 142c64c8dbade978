/* Helpers shared by the test apps: error checks, device choice, checksums and result checks.
 *
 * The apps are ordinary OpenCL programs: they link only libOpenCL and know nothing of coex. Their
 * stdout must be deterministic (the differential harness compares it byte for byte between a bare
 * run and a run under coex), so nothing printed here depends on timing, addresses or device names.
 * Errors go to stdout as well, so that the harness shows them next to the checksums. */
#ifndef COEX_APP_UTIL_H
#define COEX_APP_UTIL_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline const char* app_cl_error_name(cl_int code) {
  switch (code) {
    case CL_SUCCESS: return "CL_SUCCESS";
    case CL_DEVICE_NOT_FOUND: return "CL_DEVICE_NOT_FOUND";
    case CL_DEVICE_NOT_AVAILABLE: return "CL_DEVICE_NOT_AVAILABLE";
    case CL_COMPILER_NOT_AVAILABLE: return "CL_COMPILER_NOT_AVAILABLE";
    case CL_MEM_OBJECT_ALLOCATION_FAILURE: return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
    case CL_OUT_OF_RESOURCES: return "CL_OUT_OF_RESOURCES";
    case CL_OUT_OF_HOST_MEMORY: return "CL_OUT_OF_HOST_MEMORY";
    case CL_PROFILING_INFO_NOT_AVAILABLE: return "CL_PROFILING_INFO_NOT_AVAILABLE";
    case CL_MEM_COPY_OVERLAP: return "CL_MEM_COPY_OVERLAP";
    case CL_BUILD_PROGRAM_FAILURE: return "CL_BUILD_PROGRAM_FAILURE";
    case CL_MAP_FAILURE: return "CL_MAP_FAILURE";
    case CL_MISALIGNED_SUB_BUFFER_OFFSET: return "CL_MISALIGNED_SUB_BUFFER_OFFSET";
    case CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST:
      return "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST";
    case CL_INVALID_VALUE: return "CL_INVALID_VALUE";
    case CL_INVALID_DEVICE_TYPE: return "CL_INVALID_DEVICE_TYPE";
    case CL_INVALID_PLATFORM: return "CL_INVALID_PLATFORM";
    case CL_INVALID_DEVICE: return "CL_INVALID_DEVICE";
    case CL_INVALID_CONTEXT: return "CL_INVALID_CONTEXT";
    case CL_INVALID_QUEUE_PROPERTIES: return "CL_INVALID_QUEUE_PROPERTIES";
    case CL_INVALID_COMMAND_QUEUE: return "CL_INVALID_COMMAND_QUEUE";
    case CL_INVALID_HOST_PTR: return "CL_INVALID_HOST_PTR";
    case CL_INVALID_MEM_OBJECT: return "CL_INVALID_MEM_OBJECT";
    case CL_INVALID_BUFFER_SIZE: return "CL_INVALID_BUFFER_SIZE";
    case CL_INVALID_PROGRAM: return "CL_INVALID_PROGRAM";
    case CL_INVALID_PROGRAM_EXECUTABLE: return "CL_INVALID_PROGRAM_EXECUTABLE";
    case CL_INVALID_KERNEL_NAME: return "CL_INVALID_KERNEL_NAME";
    case CL_INVALID_KERNEL: return "CL_INVALID_KERNEL";
    case CL_INVALID_ARG_INDEX: return "CL_INVALID_ARG_INDEX";
    case CL_INVALID_ARG_VALUE: return "CL_INVALID_ARG_VALUE";
    case CL_INVALID_ARG_SIZE: return "CL_INVALID_ARG_SIZE";
    case CL_INVALID_KERNEL_ARGS: return "CL_INVALID_KERNEL_ARGS";
    case CL_INVALID_WORK_DIMENSION: return "CL_INVALID_WORK_DIMENSION";
    case CL_INVALID_WORK_GROUP_SIZE: return "CL_INVALID_WORK_GROUP_SIZE";
    case CL_INVALID_WORK_ITEM_SIZE: return "CL_INVALID_WORK_ITEM_SIZE";
    case CL_INVALID_GLOBAL_OFFSET: return "CL_INVALID_GLOBAL_OFFSET";
    case CL_INVALID_EVENT_WAIT_LIST: return "CL_INVALID_EVENT_WAIT_LIST";
    case CL_INVALID_EVENT: return "CL_INVALID_EVENT";
    case CL_INVALID_OPERATION: return "CL_INVALID_OPERATION";
    case CL_INVALID_GLOBAL_WORK_SIZE: return "CL_INVALID_GLOBAL_WORK_SIZE";
    case CL_INVALID_PROPERTY: return "CL_INVALID_PROPERTY";
    default: break;
  }
  return "unknown error";
}

/* Prints which call failed with which code, then ends the program with a non-zero status. */
static inline void app_die(cl_int code, const char* call, const char* file, int line) {
  printf("error: %s returned %d (%s) at %s:%d\nFAIL\n", call, (int)code, app_cl_error_name(code),
         file, line);
  fflush(stdout);
  exit(1);
}

/* For calls that return a cl_int status. */
#define APP_CHECK(call)                                                   \
  do {                                                                    \
    cl_int app_status_ = (call);                                          \
    if (app_status_ != CL_SUCCESS) app_die(app_status_, #call, __FILE__, __LINE__); \
  } while (0)

/* For calls that report through an errcode_ret out-parameter. */
#define APP_CHECK_ERR(err, what)                                          \
  do {                                                                    \
    if ((err) != CL_SUCCESS) app_die((err), (what), __FILE__, __LINE__);  \
  } while (0)

static inline void* app_alloc(size_t bytes) {
  void* p = NULL;
  /* 4096-byte alignment: what implementations recommend for CL_MEM_USE_HOST_PTR memory. */
  if (posix_memalign(&p, 4096, bytes ? bytes : 1) != 0) {
    printf("error: out of host memory (%zu bytes)\nFAIL\n", bytes);
    exit(1);
  }
  memset(p, 0, bytes);
  return p;
}

/* The device numbered `index` over all platforms, in the order `coex devices` lists them. */
static inline int app_device_at(cl_platform_id* platforms, cl_uint num_platforms, unsigned index,
                                cl_platform_id* platform_out, cl_device_id* device_out) {
  for (cl_uint p = 0; p < num_platforms; ++p) {
    cl_uint n = 0;
    if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 0, NULL, &n) != CL_SUCCESS) continue;
    if (index < n) {
      cl_device_id* ids = (cl_device_id*)malloc(n * sizeof(cl_device_id));
      APP_CHECK(clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, n, ids, NULL));
      *platform_out = platforms[p];
      *device_out = ids[index];
      free(ids);
      return 1;
    }
    index -= n;
  }
  return 0;
}

/* The device APP_DEVICE names (its index as `coex devices` prints it), else the first GPU of any
 * platform, else the first device of the first platform: under coex this device is the "home"
 * device that the app's objects live on. */
static inline void app_pick_device(cl_platform_id* platform_out, cl_device_id* device_out) {
  cl_uint num_platforms = 0;
  APP_CHECK(clGetPlatformIDs(0, NULL, &num_platforms));
  if (num_platforms == 0) app_die(CL_INVALID_PLATFORM, "clGetPlatformIDs (no platform)", __FILE__, __LINE__);
  cl_platform_id* platforms = (cl_platform_id*)malloc(num_platforms * sizeof(cl_platform_id));
  APP_CHECK(clGetPlatformIDs(num_platforms, platforms, NULL));
  const char* wanted = getenv("APP_DEVICE");
  if (wanted && *wanted) {
    if (!app_device_at(platforms, num_platforms, (unsigned)atoi(wanted), platform_out, device_out))
      app_die(CL_DEVICE_NOT_FOUND, "APP_DEVICE names no device", __FILE__, __LINE__);
    free(platforms);
    return;
  }
  for (cl_uint p = 0; p < num_platforms; ++p) {
    cl_device_id gpu = NULL;
    cl_uint n = 0;
    if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_GPU, 1, &gpu, &n) == CL_SUCCESS && n > 0) {
      *platform_out = platforms[p];
      *device_out = gpu;
      free(platforms);
      return;
    }
  }
  *platform_out = platforms[0];
  free(platforms);
  APP_CHECK(clGetDeviceIDs(*platform_out, CL_DEVICE_TYPE_ALL, 1, device_out, NULL));
}

static inline cl_context app_create_context(cl_platform_id platform, cl_device_id device) {
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)platform, 0};
  cl_int err = CL_SUCCESS;
  cl_context ctx = clCreateContext(props, 1, &device, NULL, NULL, &err);
  APP_CHECK_ERR(err, "clCreateContext");
  return ctx;
}

static inline cl_command_queue app_create_queue(cl_context ctx, cl_device_id device,
                                                cl_command_queue_properties props) {
  cl_int err = CL_SUCCESS;
  cl_command_queue q = clCreateCommandQueue(ctx, device, props, &err);
  APP_CHECK_ERR(err, "clCreateCommandQueue");
  return q;
}

/* Builds a program from `count` source strings; prints the build log when the build fails. */
static inline cl_program app_build_program(cl_context ctx, cl_device_id device, cl_uint count,
                                           const char** sources, const char* options) {
  cl_int err = CL_SUCCESS;
  cl_program program = clCreateProgramWithSource(ctx, count, sources, NULL, &err);
  APP_CHECK_ERR(err, "clCreateProgramWithSource");
  err = clBuildProgram(program, 1, &device, options, NULL, NULL);
  if (err != CL_SUCCESS) {
    size_t log_size = 0;
    clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, NULL, &log_size);
    char* log = (char*)calloc(log_size + 1, 1);
    clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, log_size, log, NULL);
    printf("build log:\n%s\n", log);
    free(log);
    app_die(err, "clBuildProgram", __FILE__, __LINE__);
  }
  return program;
}

static inline cl_kernel app_create_kernel(cl_program program, const char* name) {
  cl_int err = CL_SUCCESS;
  cl_kernel k = clCreateKernel(program, name, &err);
  if (err != CL_SUCCESS) {
    printf("error: clCreateKernel(%s) returned %d (%s)\nFAIL\n", name, (int)err,
           app_cl_error_name(err));
    exit(1);
  }
  return k;
}

static inline cl_mem app_create_buffer(cl_context ctx, cl_mem_flags flags, size_t bytes, void* host) {
  cl_int err = CL_SUCCESS;
  cl_mem m = clCreateBuffer(ctx, flags, bytes, host, &err);
  APP_CHECK_ERR(err, "clCreateBuffer");
  return m;
}

#define APP_ARG(kernel, index, value) \
  APP_CHECK(clSetKernelArg((kernel), (index), sizeof(value), &(value)))

/* 64-bit FNV-1a (Fowler, Noll, Vo) over the bytes of a result buffer. */
static inline uint64_t app_fnv1a64(const void* data, size_t bytes) {
  const unsigned char* p = (const unsigned char*)data;
  uint64_t h = 14695981039346656037ULL;
  for (size_t i = 0; i < bytes; ++i) {
    h ^= p[i];
    h *= 1099511628211ULL;
  }
  return h;
}

static inline void app_print_checksum(const char* name, const void* data, size_t bytes) {
  printf("checksum %s %016llx\n", name, (unsigned long long)app_fnv1a64(data, bytes));
}

/* Count of failed checks; app_finish turns it into PASS or FAIL and the exit status. */
static int app_failures = 0;

/* Compares result elements with the host reference and reports the first few differences. */
#define APP_DEFINE_CHECK(suffix, type, fmt, cast)                                          \
  static inline int app_check_##suffix(const char* name, const type* got, const type* want, \
                                       size_t n) {                                         \
    size_t bad = 0;                                                                         \
    for (size_t i = 0; i < n; ++i) {                                                        \
      if (memcmp(&got[i], &want[i], sizeof(type)) != 0) {                                   \
        if (bad < 5) {                                                                      \
          printf("mismatch %s[%zu]: got " fmt " expected " fmt "\n", name, i, cast got[i],  \
                 cast want[i]);                                                             \
        }                                                                                   \
        ++bad;                                                                              \
      }                                                                                     \
    }                                                                                       \
    if (bad > 5) printf("mismatch %s: %zu of %zu elements differ\n", name, bad, n);         \
    if (bad) ++app_failures;                                                                \
    return bad == 0;                                                                        \
  }

APP_DEFINE_CHECK(i32, int32_t, "%ld", (long))
APP_DEFINE_CHECK(u32, uint32_t, "%lu", (unsigned long))
APP_DEFINE_CHECK(u8, uint8_t, "%u", (unsigned))
/* Floats are compared bit for bit: the kernels use only correctly rounded operations (+, -, *,
 * fma, with FP_CONTRACT OFF), so the host reference must be exact. %a shows every bit. */
APP_DEFINE_CHECK(f32, float, "%a", (double))

static inline void app_expect(int condition, const char* what) {
  if (!condition) {
    ++app_failures;
    printf("check failed: %s\n", what);
  }
}

/* Prints PASS or FAIL; the return value is the process exit status. */
static inline int app_finish(void) {
  puts(app_failures == 0 ? "PASS" : "FAIL");
  fflush(stdout);
  return app_failures == 0 ? 0 : 1;
}

/* A small deterministic generator for input data (xorshift32, Marsaglia 2003). */
static inline uint32_t app_rand(uint32_t* state) {
  uint32_t x = *state;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  *state = x;
  return x;
}

#endif /* COEX_APP_UTIL_H */
