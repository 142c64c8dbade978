// Five-point Jacobi step on a width x height grid; the border is left alone.
__kernel void jacobi_2d(__global const double* in, __global double* out, int width, int height) {
  int x = get_global_id(0);
  int y = get_global_id(1);
  if (x < 1 || y < 1 || x >= width - 1 || y >= height - 1) return;
  int c = y * width + x;
  out[c] = 0.25 * (in[c - 1] + in[c + 1] + in[c - width] + in[c + width]);
}
