// Gathers whose indices go through min, max and clamp: loads are modelled (a variable over the hull
// of the builtin's values), stores through them are not, and an operand that may wrap around in its
// type leaves the load unmodelled.

// Each item sums the taps elements from its own on, the last element repeated past the end.
__kernel void gather_ahead(__global const float* src, __global float* dst, int n, int taps) {
  int i = get_global_id(0);
  float s = 0.0f;
  for (int k = 0; k < taps; ++k) s += src[min(i + k, n - 1)];
  dst[i] = s;
}

// min and max against a launch value: the first cap + 1 elements, then a window that starts at cap.
__kernel void capped_copy(__global const uint* src, __global uint* dst, uint cap) {
  uint i = get_global_id(0);
  dst[i] = src[min(i, cap)] + src[max(cap, i) - cap];
}

// A store through min (Diff: no cover, no injectivity claimed), beside a load through clamp.
__kernel void clamped_store(__global const int* src, __global int* dst, int n) {
  int i = get_global_id(0);
  dst[min(i, n - 1)] = src[clamp(i, 0, n - 1)];
}

// i - 1u wraps around at i = 0, where min(i - 1u, n) is n, above the hull of the affine forms: the
// chunk holding item 0 reads src whole.
__kernel void wrapping_min(__global const uint* src, __global uint* dst, uint n) {
  uint i = get_global_id(0);
  dst[i] = src[min(i - 1u, n)];
}
