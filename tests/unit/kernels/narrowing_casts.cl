// Indices that leave their C type: narrowing casts, narrow locals, 32-bit unsigned arithmetic that
// wraps around. The affine forms are the mathematical values, so each sub-expression of an index,
// guard or loop bound is recorded with its type (FootprintModel::Fit) and must lie in it over the
// chunk (over the launch, for writes_injective); where it may not, reads are Whole, writes Diff.

// (uchar)i repeats every 256 items: past item 255 the load is not at 4 * i.
__kernel void uchar_gather(__global const float* src, __global float* dst) {
  size_t i = get_global_id(0);
  dst[i] = src[(uchar)i];
}

// A store through (uchar)i: several items write each element; nothing exact, nor injective.
__kernel void uchar_scatter(__global const float* src, __global float* dst) {
  size_t i = get_global_id(0);
  dst[(uchar)i] = src[i];
}

// A ushort local: i * 4096 wraps around every 16 items.
__kernel void ushort_local(__global const float* src, __global float* dst) {
  int i = get_global_id(0);
  ushort j = i * 4096;
  dst[i] = src[j];
}

// 32-bit unsigned arithmetic: i * 0xFFFFFFFFu + n is n - i modulo 2^32, nowhere near 4 * i * 2^32.
__kernel void uint_wrap(__global const float* src, __global float* dst, uint n) {
  uint i = get_global_id(0);
  dst[i] = src[i * 0xFFFFFFFFu + n];
}

// A guard through a cast: (uchar)i < 16 holds for 16 items of every 256, not only the first 16.
__kernel void uchar_guard(__global const float* src, __global float* dst) {
  size_t i = get_global_id(0);
  if ((uchar)i < 16) dst[i] = src[i];
}

// int i = get_global_id(0) within 2^31 items: the conversion fits, the footprint stays exact.
__kernel void int_index(__global const float* src, __global float* dst, int n) {
  int i = get_global_id(0);
  if (i < n) dst[i] = src[i] + src[(int)(i - 1u) + 1];
}

// i - 1u at i = 0 wraps around in the guard, which then is left out, and in the index: the chunk
// that holds item 0 reads src whole (the guard keeps item 0 from the load, but that is not known).
__kernel void uint_minus_one(__global const float* src, __global float* dst, uint n) {
  uint i = get_global_id(0);
  if (i - 1u < n) dst[i] = src[i - 1u];
}

// A short loop bound: (short)m with m = -60000 is 5536, where k < m never holds.
__kernel void short_bound(__global const float* src, __global float* dst, int m) {
  int i = get_global_id(0);
  float s = 0.0f;
  for (int k = 0; k < (short)m; k += 1024) s += src[k];
  dst[i] = s;
}
