// Stores and loads through pointers derived from the arguments.
__kernel void rows(__global float* out, __global const float* in, int n) {
  int r = get_global_id(0);
  __global float* row = out + r * n;
  __global const float* src = &in[r * n];
  for (int c = 0; c < n; ++c) row[c] = src[c] * 2.0f;
}
__kernel void swap_roles(__global float* a, __global float* b, int flip) {
  __global float* dst = flip ? a : b;
  __global float* src;
  src = flip ? b : a;
  dst[get_global_id(0)] = src[get_global_id(0)];
}
__kernel void pointer_walk(__global int* p, __global int* q, int n) {
  __global int* end = p + n;
  int sum = 0;
  for (__global int* it = p; it < end; ++it) sum += *it;
  q[get_global_id(0)] = sum;
}
__kernel void escapes_into_private_array(__global int* a, __global int* b) {
  __global int* both[2] = {a, b};
  int v = both[0][0];
  (void)v;
}
__kernel void parameter_reassigned(__global int* first, __global int* second) {
  first = second;
  first[get_global_id(0)] = 1;
}
