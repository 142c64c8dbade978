// Stencils that hold their edges with clamp, min and max in the index of a load: each such value is
// a variable over the hull of what the builtin takes over the chunk, so that a chunk of rows reads a
// band of rows (its halo included, cut at the border) rather than the whole image.

// 3x3 box filter over a width x height image, the edge pixels repeated outside.
__kernel void box3x3_clamped(__global const float* src, __global float* dst, int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  float s = 0.0f;
  for (int dy = -1; dy <= 1; ++dy) {
    int yy = clamp(y + dy, 0, height - 1);
    for (int dx = -1; dx <= 1; ++dx) s += src[yy * width + clamp(x + dx, 0, width - 1)];
  }
  dst[y * width + x] = s / 9.0f;
}

// 1-D smoothing; the left end held with max on int, the right one with min on uint.
__kernel void smooth_1d_minmax(__global const int* in, __global int* out, uint n) {
  uint i = get_global_id(0);
  if (i >= n) return;
  int left = in[max((int)i - 1, 0)];
  int right = in[min(i + 1, n - 1)];
  out[i] = (left + 2 * in[i] + right) / 4;
}

// Rows y - margin and y + margin, cut at the border, and row y kept margin rows away from it by a
// nested min(max(...)).
__kernel void row_window(__global const float* src, __global float* dst, int width, int rows, int margin) {
  int x = get_global_id(0), y = get_global_id(1);
  int top = max(y - margin, 0);
  int bottom = min(y + margin, rows - 1);
  int inner = min(max(y, margin), rows - 1 - margin);
  dst[y * width + x] = src[top * width + x] + src[bottom * width + x] + src[inner * width + x];
}
