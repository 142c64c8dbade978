// Each work-item handles a K x K block of a 2-D array through nested loops with affine bounds, and a
// strided 1-D pass that visits every STRIDE-th element of its group's span.
__kernel void block_scale(__global float* a, int pitch, int k, float factor) {
  int bx = get_global_id(0) * k, by = get_global_id(1) * k;
  for (int i = 0; i < k; ++i)
    for (int j = 0; j < k; ++j) a[(by + i) * pitch + bx + j] *= factor;
}

#define STRIDE 4
__kernel void strided_sum(__global const int* in, __global int* out) {
  int first = get_group_id(0) * get_local_size(0) * STRIDE + get_local_id(0);
  int sum = 0;
  for (int s = 0; s < STRIDE; ++s) sum += in[first + s * get_local_size(0)];
  out[get_global_id(0)] = sum;
}

// Counting down, and a loop whose bound is the work-item's own index (a triangle).
__kernel void reverse_prefix(__global const int* in, __global int* out, int n) {
  int i = get_global_id(0);
  int acc = 0;
  for (int k = i; k >= 0; --k) acc += in[k];
  out[n - 1 - i] = acc;
}
