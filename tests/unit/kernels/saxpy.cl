// y = alpha * x + y. x is not declared const, yet nothing stores through it.
__kernel void saxpy(const int n, const float alpha, __global float* x, __global float* y) {
  int i = get_global_id(0);
  if (i >= n) return;
  y[i] += alpha * x[i];
}
