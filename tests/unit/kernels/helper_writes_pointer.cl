// Pointers handed to helpers: the helpers' bodies decide read and written.
void store_value(__global float* p, int i, float v) { p[i] = v; }
float load_value(__global const float* p, int i) { return p[i]; }
void accumulate(__global float* dst, __global float* src, int i) { dst[i] += src[i]; }
__kernel void via_helpers(__global float* in, __global float* out, __global float* acc, __global float* other) {
  int i = get_global_id(0);
  store_value(out, i, load_value(in, i) * 2.0f);
  accumulate(acc, other, i);
}
// A helper that passes the pointer on to another helper.
void forward_store(__global float* p, int i) { store_value(p + 1, i - 1, 0.0f); }
__kernel void via_two_levels(__global float* target, __global float* untouched) {
  forward_store(target, get_global_id(0));
}
