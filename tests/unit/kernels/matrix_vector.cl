// Dense matrix-vector products: one row per work-item, and the transposed product, one column per
// work-item, where consecutive work-items read consecutive elements of a row.
__kernel void matvec(__global const float* m, __global const float* v, __global float* out, int cols) {
  int row = get_global_id(0);
  float acc = 0.0f;
  for (int c = 0; c < cols; c++) acc += m[row * cols + c] * v[c];
  out[row] = acc;
}

__kernel void matvec_transposed(__global const float* m, __global const float* v, __global float* out, int rows,
                                int cols) {
  int col = get_global_id(0);
  float acc = 0.0f;
  for (int r = 0; r < rows; r++) acc += m[r * cols + col] * v[r];
  out[col] = acc;
}

// Batched small products: each work-group multiplies its own 8x8 pair, one element per work-item.
#define B 8
__kernel void batched_matmul(__global const float* a, __global const float* b, __global float* c) {
  int batch = get_group_id(1);
  int row = get_local_id(1), col = get_global_id(0);
  __global const float* ab = a + batch * B * B;
  __global const float* bb = b + batch * B * B;
  float acc = 0.0f;
  for (int k = 0; k < B; ++k) acc += ab[row * B + k] * bb[k * B + col];
  c[batch * B * B + row * B + col] = acc;
}
