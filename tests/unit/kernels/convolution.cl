// 2-D convolution with a (2R+1)^2 mask in __constant memory; the border R wide is left alone. And a
// separable 1-D pass along rows, its taps given as an argument.
__kernel void conv2d(__global const float* image, __constant float* mask, __global float* out,
                     int width, int height, int radius) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x < radius || y < radius || x >= width - radius || y >= height - radius) return;
  int side = 2 * radius + 1;
  float acc = 0.0f;
  for (int dy = -radius; dy <= radius; ++dy)
    for (int dx = -radius; dx <= radius; ++dx)
      acc += image[(y + dy) * width + x + dx] * mask[(dy + radius) * side + dx + radius];
  out[y * width + x] = acc;
}

__kernel void conv_rows(__global const float* in, __global float* out, __global const float* taps, int width,
                        int taps_count) {
  int x = get_global_id(0), y = get_global_id(1);
  int half_width = taps_count / 2;
  float acc = 0.0f;
  for (int t = 0; t < taps_count; ++t) {
    int xx = clamp(x + t - half_width, 0, width - 1);
    acc += taps[t] * in[y * width + xx];
  }
  out[y * width + x] = acc;
}
