/* Shared by the two files of the bad-input table (bad_input.c, bad_input_objects.c): the objects
 * the calls use and the table's entry type. docs/reliability.md describes the test. */
#ifndef COEX_BAD_INPUT_H
#define COEX_BAD_INPUT_H

/* 2.0 for clCreateCommandQueueWithProperties; the 1.2 calls stay (the apps are 1.2 programs). */
#define CL_TARGET_OPENCL_VERSION 200
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include "common/app_util.h"

#include <stdint.h>

enum { N = 1 << 17, SMALL = 1024 };

/* Everything the table's calls use; set up once, valid unless a call's name says otherwise. */
typedef struct {
  cl_platform_id platform;
  cl_device_id device;
  cl_context ctx, ctx2;
  cl_command_queue q, q2;
  cl_program program, program2, unbuilt;
  cl_kernel add, probe, probe_null_global, add_reqd, add2d, with_local, fresh, add_ctx2;
  cl_mem a, b, c, small, m2, host_read_only, sub;
  cl_event user_ctx2, done_event, split_event;
  cl_ulong max_alloc;
  int32_t host[SMALL];
} BadInputState;

extern BadInputState S;
extern const char* kBadInputSource;

typedef struct {
  const char* name;
  cl_int (*call)(void);
} BadCall;

/* The calls on contexts, queues, buffers, programs and kernels (bad_input_objects.c). */
extern const BadCall kObjectCalls[];
extern const size_t kObjectCallCount;

/* Calls that create an object return its error code; an object made by mistake is released. */
static inline cl_int err_of(cl_int err, void* object, cl_int (*release)(void*)) {
  if (object) release(object);
  return err;
}
static inline cl_int release_mem_any(void* m) { return clReleaseMemObject((cl_mem)m); }
static inline cl_int release_context_any(void* c) { return clReleaseContext((cl_context)c); }
static inline cl_int release_queue_any(void* q) { return clReleaseCommandQueue((cl_command_queue)q); }
static inline cl_int release_program_any(void* p) { return clReleaseProgram((cl_program)p); }
static inline cl_int release_kernel_any(void* k) { return clReleaseKernel((cl_kernel)k); }
static inline cl_int release_event_any(void* e) { return clReleaseEvent((cl_event)e); }

#define CALL(name) static cl_int name(void)
#define OBJ_CALL(name, type, release, expr)  \
  CALL(name) {                               \
    cl_int err = CL_SUCCESS;                 \
    type obj = (expr);                       \
    return err_of(err, (void*)obj, release); \
  }
#define ENTRY(name) {#name, name}

#endif /* COEX_BAD_INPUT_H */
