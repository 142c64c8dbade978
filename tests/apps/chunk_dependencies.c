/* Kernels whose work-groups depend on each other, which coex must not split (docs/testing.md), and
 * one whose work-groups do not, which it must still split. Each kernel runs ROUNDS times; each round
 * writes its inputs from the host, launches once and reads the results back, and every round's bytes
 * go into that kernel's checksum. Where a kernel takes a `salt` (the round), each round's launch
 * differs in its arguments, so coex decides on it afresh (it remembers verdicts per kernel, geometry
 * and arguments).
 *
 * - sum_then_scale, max_then_rescale: work-item 0 of each group reads the whole buffer, then every
 *   item (max_then_rescale: every item but 0) rewrites its own element of that buffer: group g sees the elements that
 *   groups before it updated (a chunk reads what another chunk writes: cross_chunk_dependency).
 * - stencil_inplace: a 3-point stencil in place: each element depends on its neighbours, which
 *   neighbouring groups overwrite (cross_chunk_dependency).
 * - group_overwrite, group_overwrite_wide: group 1 also stores to three elements that group 0
 *   stores to; in order, group 1's values win (overlapping_writes). The wide one has exactly two
 *   groups of up to 4096 work-items. The values differ in every byte, so a byte-wise merge of the two
 *   stores would give a value no work-item wrote.
 * - scatter_collide: stores through an index buffer, four work-items per element, the last one wins
 *   (writes not known exactly: overlapping_writes).
 * - per_group_flag: several items of a group store the same value at the group's index, and each its
 *   own element: safe, so it splits.
 *
 * Which work-item's store wins, and what a read sees, depends on the order of the work-groups: the
 * output is deterministic only on a device that runs groups one at a time in order (PoCL's `basic`
 * driver; CMakeLists.txt runs this app with POCL_DEVICES "basic basic" and "basic pthread", where
 * the app's device is the first). The host references assume that order, except
 * stencil_inplace's, which accepts either value (old or new) of each neighbour. */
#include "common/app_util.h"

static const char* kSource =
    "#pragma OPENCL FP_CONTRACT OFF\n"
    "__kernel void sum_then_scale(__global uint* buf, uint n, uint salt) {\n"
    "  __local uint total;\n"
    "  size_t gid = get_global_id(0);\n"
    "  if (get_local_id(0) == 0) {\n"
    "    uint s = 0;\n"
    "    for (uint j = 0; j < n; ++j) s += buf[j];\n"
    "    total = s;\n"
    "  }\n"
    "  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);\n"
    "  buf[gid] = buf[gid] * 3u + ((total + salt) & 7u);\n"
    "}\n"
    "__kernel void max_then_rescale(__global uint* buf, uint n, uint salt) {\n"
    "  __local uint top;\n"
    "  size_t lid = get_local_id(0);\n"
    "  size_t gid = get_global_id(0);\n"
    "  if (lid == 0) {\n"
    "    uint m = 0;\n"
    "    for (uint j = 0; j < n; ++j) m = max(m, buf[j]);\n"
    "    top = m;\n"
    "  }\n"
    "  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);\n"
    "  if (lid != 0) buf[gid] = buf[gid] * 4096u / (top + 1u) + ((top + salt) & 1023u);\n"
    "}\n"
    "__kernel void stencil_inplace(__global int* a, int n, int salt) {\n"
    "  int i = (int)get_global_id(0);\n"
    "  int l = a[max(i - 1, 0)];\n"
    "  int c = a[i];\n"
    "  int r = a[min(i + 1, n - 1)];\n"
    "  a[i] = (l + c + r) / 3 + salt;\n"
    "}\n"
    "__kernel void group_overwrite(__global float* out) {\n"
    "  size_t gid = get_global_id(0);\n"
    "  size_t lid = get_local_id(0);\n"
    "  out[gid] = (float)gid + 0.7f;\n"
    "  if (get_group_id(0) == 1 && lid < 3) out[lid] = -((float)(lid + 1) + 0.1f);\n"
    "}\n"
    "__kernel void group_overwrite_wide(__global float* out) {\n"
    "  size_t gid = get_global_id(0);\n"
    "  size_t lid = get_local_id(0);\n"
    "  out[gid] = (float)gid + 0.7f;\n"
    "  if (get_group_id(0) == 1 && lid < 3) out[lid] = -((float)(lid + 1) + 0.1f);\n"
    "}\n"
    "__kernel void scatter_collide(__global const uint* idx, __global const uint* val,\n"
    "                              __global uint* out, uint salt) {\n"
    "  size_t gid = get_global_id(0);\n"
    "  out[idx[gid]] = val[gid] + salt;\n"
    "}\n"
    "__kernel void per_group_flag(__global const uint* in, __global uint* flags,\n"
    "                             __global uint* own) {\n"
    "  size_t gid = get_global_id(0);\n"
    "  uint g = (uint)get_group_id(0);\n"
    "  if (get_local_id(0) < 4) flags[g] = g * 2u + 1u;\n"
    "  own[gid] = in[gid] * 3u + g;\n"
    "}\n";

enum {
  ROUNDS = 20,
  N = 65536,          /* elements of the whole-buffer, stencil, scatter and flag kernels */
  LOCAL = 256,
  GROUPS = N / LOCAL, /* 256 */
  OVERWRITE_N = 16384, /* group_overwrite: 64 groups, each its own piece in the enqueue-time check */
  WIDE_LOCAL_MAX = 4096,
  SCATTER_TARGETS = N / 4
};

/* FNV-1a continued over several buffers (app_fnv1a64 starts afresh): one checksum per kernel over
 * all its rounds. */
static uint64_t fold(uint64_t h, const void* data, size_t bytes) {
  const unsigned char* p = (const unsigned char*)data;
  for (size_t i = 0; i < bytes; ++i) {
    h ^= p[i];
    h *= 1099511628211ULL;
  }
  return h;
}
#define FNV_START 14695981039346656037ULL

static void print_fold(const char* name, uint64_t h) {
  printf("checksum %s %016llx\n", name, (unsigned long long)h);
}

/* One round's result against the reference; a failing round says which. */
static void check_round(int ok, const char* kernel, int round) {
  if (!ok) printf("(%s, round %d)\n", kernel, round);
}

static void fill_random(uint32_t* a, size_t n, uint32_t seed, uint32_t modulo) {
  uint32_t s = seed ? seed : 1;
  for (size_t i = 0; i < n; ++i) a[i] = app_rand(&s) % modulo;
}

/* The references: work-groups one after the other, in order. */
static void sum_then_scale_ref(uint32_t* buf, uint32_t salt) {
  uint32_t s = 0; /* the sum of the buffer as it is now */
  for (size_t j = 0; j < N; ++j) s += buf[j];
  for (size_t g = 0; g < GROUPS; ++g) {
    const uint32_t add = (s + salt) & 7u;
    for (size_t i = g * LOCAL; i < (g + 1) * LOCAL; ++i) {
      const uint32_t v = buf[i] * 3u + add;
      s += v - buf[i];
      buf[i] = v;
    }
  }
}

/* suffix: scratch of N + 1 elements, the maxima of the elements not yet rescaled. */
static void max_then_rescale_ref(uint32_t* buf, uint32_t* suffix, uint32_t salt) {
  suffix[N] = 0;
  for (size_t j = N; j-- > 0;) suffix[j] = buf[j] > suffix[j + 1] ? buf[j] : suffix[j + 1];
  uint32_t done = 0; /* the maximum of the groups before */
  for (size_t g = 0; g < GROUPS; ++g) {
    const uint32_t m = done > suffix[g * LOCAL] ? done : suffix[g * LOCAL];
    for (size_t i = g * LOCAL + 1; i < (g + 1) * LOCAL; ++i) buf[i] = buf[i] * 4096u / (m + 1u) + ((m + salt) & 1023u);
    for (size_t i = g * LOCAL; i < (g + 1) * LOCAL; ++i) done = buf[i] > done ? buf[i] : done;
  }
}

static void overwrite_ref(float* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = (float)i + 0.7f;
  for (size_t l = 0; l < 3; ++l) out[l] = -((float)(l + 1) + 0.1f);
}

/* stencil_inplace in any order of its work-items: each neighbour read may see the old or the new
 * value (each element is stored once, by its own work-item, after that work-item's reads). */
static int stencil_ok(const int32_t* old, const int32_t* got, size_t n, int32_t salt) {
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) {
    int32_t ls[2] = {old[i ? i - 1 : 0], i ? got[i - 1] : old[0]};
    int32_t rs[2] = {old[i + 1 < n ? i + 1 : n - 1], i + 1 < n ? got[i + 1] : old[n - 1]};
    int found = 0;
    for (int a = 0; a < 2 && !found; ++a)
      for (int b = 0; b < 2 && !found; ++b) found = (ls[a] + old[i] + rs[b]) / 3 + salt == got[i];
    if (!found) {
      if (bad < 5)
        printf("mismatch stencil_inplace[%zu]: got %ld from %ld %ld %ld (old) and %ld %ld (new neighbours)\n", i,
               (long)got[i], (long)ls[0], (long)old[i], (long)rs[0], (long)ls[1], (long)rs[1]);
      ++bad;
    }
  }
  if (bad > 5) printf("mismatch stencil_inplace: %zu of %zu elements differ\n", bad, n);
  if (bad) ++app_failures;
  return bad == 0;
}

static size_t largest_power_of_two_at_most(size_t n) {
  size_t p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

static void write_buf(cl_command_queue q, cl_mem buf, size_t bytes, const void* data) {
  APP_CHECK(clEnqueueWriteBuffer(q, buf, CL_TRUE, 0, bytes, data, 0, NULL, NULL));
}

static void read_buf(cl_command_queue q, cl_mem buf, size_t bytes, void* data) {
  APP_CHECK(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, bytes, data, 0, NULL, NULL));
}

static void launch(cl_command_queue q, cl_kernel k, size_t global, size_t local) {
  APP_CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, NULL));
}

int main(void) {
  cl_platform_id platform;
  cl_device_id device;
  app_pick_device(&platform, &device);
  cl_context ctx = app_create_context(platform, device);
  cl_command_queue q = app_create_queue(ctx, device, 0);
  cl_program program = app_build_program(ctx, device, 1, &kSource, "");
  cl_kernel sum_then_scale = app_create_kernel(program, "sum_then_scale");
  cl_kernel max_then_rescale = app_create_kernel(program, "max_then_rescale");
  cl_kernel stencil_inplace = app_create_kernel(program, "stencil_inplace");
  cl_kernel group_overwrite = app_create_kernel(program, "group_overwrite");
  cl_kernel group_overwrite_wide = app_create_kernel(program, "group_overwrite_wide");
  cl_kernel scatter_collide = app_create_kernel(program, "scatter_collide");
  cl_kernel per_group_flag = app_create_kernel(program, "per_group_flag");

  /* group_overwrite_wide: exactly 2 groups of the largest power of two up to 4096 the device and
   * the kernel allow. */
  size_t device_max = 0, kernel_max = 0, item_sizes[3] = {0, 0, 0};
  APP_CHECK(clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof device_max, &device_max, NULL));
  APP_CHECK(clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof item_sizes, item_sizes, NULL));
  APP_CHECK(clGetKernelWorkGroupInfo(group_overwrite_wide, device, CL_KERNEL_WORK_GROUP_SIZE, sizeof kernel_max,
                                     &kernel_max, NULL));
  size_t wide_local = WIDE_LOCAL_MAX;
  if (device_max < wide_local) wide_local = device_max;
  if (item_sizes[0] && item_sizes[0] < wide_local) wide_local = item_sizes[0];
  if (kernel_max && kernel_max < wide_local) wide_local = kernel_max;
  wide_local = largest_power_of_two_at_most(wide_local);
  const size_t wide_n = 2 * wide_local;

  const size_t nbytes = (size_t)N * 4;
  uint32_t* host = (uint32_t*)app_alloc(nbytes);
  uint32_t* got = (uint32_t*)app_alloc(nbytes);
  uint32_t* ref = (uint32_t*)app_alloc(nbytes);
  uint32_t* idx = (uint32_t*)app_alloc(nbytes + 4); /* also max_then_rescale_ref's scratch */
  uint32_t* flags = (uint32_t*)app_alloc(GROUPS * 4);
  uint32_t* flags_ref = (uint32_t*)app_alloc(GROUPS * 4);
  float* fgot = (float*)app_alloc((size_t)OVERWRITE_N * 4);
  float* fref = (float*)app_alloc((size_t)OVERWRITE_N * 4);

  cl_mem buf = app_create_buffer(ctx, CL_MEM_READ_WRITE, nbytes, NULL);
  cl_mem idx_buf = app_create_buffer(ctx, CL_MEM_READ_ONLY, nbytes, NULL);
  cl_mem val_buf = app_create_buffer(ctx, CL_MEM_READ_ONLY, nbytes, NULL);
  cl_mem out_buf = app_create_buffer(ctx, CL_MEM_READ_WRITE, nbytes, NULL);
  cl_mem flags_buf = app_create_buffer(ctx, CL_MEM_READ_WRITE, GROUPS * 4, NULL);
  cl_mem fout_buf = app_create_buffer(ctx, CL_MEM_READ_WRITE, (size_t)OVERWRITE_N * 4, NULL);

  cl_uint n = N;
  cl_int n_int = N;

  /* 1. sum_then_scale */
  uint64_t h = FNV_START;
  APP_ARG(sum_then_scale, 0, buf);
  APP_ARG(sum_then_scale, 1, n);
  for (int r = 0; r < ROUNDS; ++r) {
    const cl_uint salt = (cl_uint)r;
    fill_random(host, N, 1000u + (uint32_t)r, 1u << 20);
    write_buf(q, buf, nbytes, host);
    APP_ARG(sum_then_scale, 2, salt);
    launch(q, sum_then_scale, N, LOCAL);
    read_buf(q, buf, nbytes, got);
    memcpy(ref, host, nbytes);
    sum_then_scale_ref(ref, salt);
    check_round(app_check_u32("sum_then_scale", got, ref, N), "sum_then_scale", r);
    h = fold(h, got, nbytes);
  }
  print_fold("sum_then_scale", h);

  /* 2. max_then_rescale: values below 4096 + 1024, so value * 4096 fits in 32 bits */
  h = FNV_START;
  APP_ARG(max_then_rescale, 0, buf);
  APP_ARG(max_then_rescale, 1, n);
  for (int r = 0; r < ROUNDS; ++r) {
    const cl_uint salt = (cl_uint)r;
    fill_random(host, N, 2000u + (uint32_t)r, 4096u);
    write_buf(q, buf, nbytes, host);
    APP_ARG(max_then_rescale, 2, salt);
    launch(q, max_then_rescale, N, LOCAL);
    read_buf(q, buf, nbytes, got);
    memcpy(ref, host, nbytes);
    max_then_rescale_ref(ref, idx, salt);
    check_round(app_check_u32("max_then_rescale", got, ref, N), "max_then_rescale", r);
    h = fold(h, got, nbytes);
  }
  print_fold("max_then_rescale", h);

  /* 5. stencil_inplace: values in [-1000, 1000] */
  h = FNV_START;
  APP_ARG(stencil_inplace, 0, buf);
  APP_ARG(stencil_inplace, 1, n_int);
  for (int r = 0; r < ROUNDS; ++r) {
    const cl_uint salt = (cl_uint)r;
    fill_random(host, N, 3000u + (uint32_t)r, 2001u);
    for (size_t i = 0; i < N; ++i) host[i] = (uint32_t)((int32_t)host[i] - 1000);
    write_buf(q, buf, nbytes, host);
    cl_int salt_int = (cl_int)salt;
    APP_ARG(stencil_inplace, 2, salt_int);
    launch(q, stencil_inplace, N, LOCAL);
    read_buf(q, buf, nbytes, got);
    if (!stencil_ok((const int32_t*)host, (const int32_t*)got, N, (int32_t)salt)) check_round(0, "stencil_inplace", r);
    h = fold(h, got, nbytes);
  }
  print_fold("stencil_inplace", h);

  /* 3. group_overwrite (64 groups of 256) and group_overwrite_wide (2 groups) */
  cl_kernel overwrites[2] = {group_overwrite, group_overwrite_wide};
  const char* overwrite_names[2] = {"group_overwrite", "group_overwrite_wide"};
  const size_t overwrite_global[2] = {OVERWRITE_N, wide_n};
  const size_t overwrite_local[2] = {LOCAL, wide_local};
  for (int k = 0; k < 2; ++k) {
    const size_t count = overwrite_global[k], bytes = count * 4;
    h = FNV_START;
    APP_ARG(overwrites[k], 0, fout_buf);
    overwrite_ref(fref, count);
    for (int r = 0; r < ROUNDS; ++r) {
      /* Whatever was there before: the kernel stores to every element. */
      fill_random(host, count, 4000u + (uint32_t)(r + 100 * k), 0xffffffffu);
      write_buf(q, fout_buf, bytes, host);
      launch(q, overwrites[k], count, overwrite_local[k]);
      read_buf(q, fout_buf, bytes, fgot);
      check_round(app_check_f32(overwrite_names[k], fgot, fref, count), overwrite_names[k], r);
      h = fold(h, fgot, bytes);
    }
    print_fold(overwrite_names[k], h);
  }

  /* 4. scatter_collide: idx[i] = (i * m) % (N / 4), m odd, so i, i + N/4, i + N/2 and i + 3N/4 store
   * to the same element and the last of them (the highest work-group) wins. */
  h = FNV_START;
  APP_ARG(scatter_collide, 0, idx_buf);
  APP_ARG(scatter_collide, 1, val_buf);
  APP_ARG(scatter_collide, 2, out_buf);
  const size_t scatter_bytes = (size_t)SCATTER_TARGETS * 4;
  for (int r = 0; r < ROUNDS; ++r) {
    const uint32_t m = 7u + 2u * (uint32_t)r;
    const cl_uint salt = (cl_uint)r;
    for (size_t i = 0; i < N; ++i) idx[i] = (uint32_t)((i * m) % SCATTER_TARGETS);
    fill_random(host, N, 5000u + (uint32_t)r, 0xffffffffu);
    fill_random(ref, SCATTER_TARGETS, 6000u + (uint32_t)r, 0xffffffffu);
    write_buf(q, idx_buf, nbytes, idx);
    write_buf(q, val_buf, nbytes, host);
    write_buf(q, out_buf, scatter_bytes, ref);
    APP_ARG(scatter_collide, 3, salt);
    launch(q, scatter_collide, N, LOCAL);
    read_buf(q, out_buf, scatter_bytes, got);
    for (size_t i = 0; i < N; ++i) ref[idx[i]] = host[i] + salt;
    check_round(app_check_u32("scatter_collide", got, ref, SCATTER_TARGETS), "scatter_collide", r);
    h = fold(h, got, scatter_bytes);
  }
  print_fold("scatter_collide", h);

  /* 6. per_group_flag: safe */
  h = FNV_START;
  APP_ARG(per_group_flag, 0, val_buf);
  APP_ARG(per_group_flag, 1, flags_buf);
  APP_ARG(per_group_flag, 2, out_buf);
  for (uint32_t g = 0; g < GROUPS; ++g) flags_ref[g] = g * 2u + 1u;
  for (int r = 0; r < ROUNDS; ++r) {
    fill_random(host, N, 7000u + (uint32_t)r, 0xffffffffu);
    fill_random(flags, GROUPS, 8000u + (uint32_t)r, 0xffffffffu);
    fill_random(got, N, 9000u + (uint32_t)r, 0xffffffffu);
    write_buf(q, val_buf, nbytes, host);
    write_buf(q, flags_buf, GROUPS * 4, flags);
    write_buf(q, out_buf, nbytes, got);
    launch(q, per_group_flag, N, LOCAL);
    read_buf(q, flags_buf, GROUPS * 4, flags);
    read_buf(q, out_buf, nbytes, got);
    for (size_t i = 0; i < N; ++i) ref[i] = host[i] * 3u + (uint32_t)(i / LOCAL);
    check_round(app_check_u32("per_group_flag.flags", flags, flags_ref, GROUPS), "per_group_flag", r);
    check_round(app_check_u32("per_group_flag.own", got, ref, N), "per_group_flag", r);
    h = fold(h, flags, GROUPS * 4);
    h = fold(h, got, nbytes);
  }
  print_fold("per_group_flag", h);

  cl_mem bufs[] = {buf, idx_buf, val_buf, out_buf, flags_buf, fout_buf};
  for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; ++i) APP_CHECK(clReleaseMemObject(bufs[i]));
  cl_kernel kernels[] = {sum_then_scale,       max_then_rescale, stencil_inplace, group_overwrite,
                         group_overwrite_wide, scatter_collide,  per_group_flag};
  for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; ++i) APP_CHECK(clReleaseKernel(kernels[i]));
  APP_CHECK(clReleaseProgram(program));
  APP_CHECK(clReleaseCommandQueue(q));
  APP_CHECK(clReleaseContext(ctx));
  free(host); free(got); free(ref); free(idx); free(flags); free(flags_ref); free(fgot); free(fref);
  return app_finish();
}
