// Loops whose counter steps by more than one: a chunk's footprint is its own elements of every
// stretch (strided bands), not the hull from its first element to the end, so that the chunks of a
// grid-stride loop are independent.

// The step is a scalar argument (the launch passes the global size).
__kernel void stride_by_argument(__global const float* in, __global float* out, int n, int step) {
  for (int i = get_global_id(0); i < n; i += step) out[i] = 2.0f * in[i];
}

// Counting down from the end, a global size at a time.
__kernel void stride_down(__global const float* in, __global float* out, int n) {
  for (int i = n - 1 - (int)get_global_id(0); i >= 0; i -= (int)get_global_size(0)) out[i] = in[i] + 1.0f;
}

// A row of four per element, written by a unit loop inside the strided one.
__kernel void stride_rows(__global const float4* in, __global float* out, uint rows) {
  for (size_t r = get_global_id(0); r < rows; r += get_local_size(0) * get_num_groups(0))
    for (int j = 0; j < 4; ++j) out[r * 4 + j] = in[r].x * (float)j;
}

// Rows split in 2-D: each work-item walks its column, get_global_size(1) rows at a time.
__kernel void stride_rows_2d(__global float* img, int width, int height) {
  int x = get_global_id(0);
  for (int y = get_global_id(1); y < height; y += get_global_size(1)) img[y * width + x] *= 0.5f;
}

// A constant step and a guard on the counter: every 100th element below m, from the local id on.
__kernel void sampled_sum(__global const int* in, __global int* out, int n, int m) {
  int s = 0;
  for (int k = get_local_id(0); k < n; k += 100)
    if (k < m) s += in[k];
  out[get_global_id(0)] = s;
}
