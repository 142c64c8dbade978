// Indirection through index arrays: a gather reads where an index says, a scatter writes there.
__kernel void gather(__global const float* table, __global const int* index, __global float* out, int n) {
  int i = get_global_id(0);
  if (i < n) out[i] = table[index[i]];
}

__kernel void scatter(__global const float* values, __global const int* index, __global float* out) {
  int i = get_global_id(0);
  out[index[i]] = values[i];
}

// CSR sparse matrix times vector: the row bounds come from memory, the loop is not affine.
__kernel void spmv_csr(__global const int* row_start, __global const int* columns, __global const float* values,
                       __global const float* x, __global float* y, int rows) {
  int row = get_global_id(0);
  if (row >= rows) return;
  float sum = 0.0f;
  for (int k = row_start[row]; k < row_start[row + 1]; ++k) sum += values[k] * x[columns[k]];
  y[row] = sum;
}
