// Matrix product with square __local tiles (local size TS x TS); n is a multiple of TS.
#define TS 16
__kernel void matmul_tiled(const int n, __global const float* A, __global const float* B, __global float* C) {
  const int row = get_local_id(1), col = get_local_id(0);
  const int grow = TS * get_group_id(1) + row, gcol = TS * get_group_id(0) + col;
  __local float Asub[TS][TS];
  __local float Bsub[TS][TS];
  float acc = 0.0f;
  for (int t = 0; t < n / TS; t++) {
    Asub[row][col] = A[grow * n + TS * t + col];
    Bsub[row][col] = B[(TS * t + row) * n + gcol];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < TS; k++) acc += Asub[row][k] * Bsub[k][col];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  C[grow * n + gcol] = acc;
}
