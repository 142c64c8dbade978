// Kernels whose accesses, parameters, names or bodies come through macros.
#define IDX(r, c, w) ((r) * (w) + (c))
#define STORE(p, i, v) (p)[i] = (v)
#define LOAD(p, i) (p)[i]
__kernel void macro_access(__global const float* src, __global float* dst, int w) {
  int r = get_global_id(1), c = get_global_id(0);
  STORE(dst, IDX(r, c, w), LOAD(src, IDX(r, c, w)) * 2.0f);
}

// Parameters from a macro: the parameter list still ends with a plain ')'.
#define BUFFER_ARGS __global float* data, const int n
__kernel void params_from_macro(BUFFER_ARGS) {
  if (get_global_id(0) < n) data[get_group_id(0)] = n;
}

// The whole declaration from a macro: no reliable place for the extra parameters.
#define DECLARE_KERNEL(name) __kernel void name(__global int* out)
DECLARE_KERNEL(header_from_macro) { out[get_group_id(0)] = 1; }
// ... which matters only when the kernel needs the rewrite.
DECLARE_KERNEL(header_from_macro_plain) { out[get_global_id(0)] = 2; }

// The body's braces from a macro.
#define BODY { out[get_group_id(0)] = 3; }
__kernel void body_from_macro(__global int* out) BODY

// A macro defined before the kernel that calls get_group_id: expanded inside the body, so the
// rewrite's #define applies to it.
#define GROUP get_group_id(0)
__kernel void group_from_macro(__global int* out) { out[GROUP] = 4; }

// The kernel keyword from a macro.
#define KERNEL __kernel
KERNEL void keyword_from_macro(__global int* out) { out[get_group_id(0)] = 5; }

// Operators inside macros: the swizzle store and the increment are writes.
#define BUMP(p, i) (p)[i]++
#define SET_X(p, i) (p)[i].x = 1.0f
__kernel void macro_writes(__global int* counts, __global float4* vecs, __global const int* idx) {
  int i = idx[get_global_id(0)];
  BUMP(counts, i);
  SET_X(vecs, i);
}
