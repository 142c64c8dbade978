// Seven-point stencil on an nx x ny x nz grid, accumulated into out.
__kernel void stencil_3d(__global const float* restrict in, __global float* restrict out,
                         const int nx, const int ny, const int nz, const float c0, const float c1) {
  const int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
  if (x < 1 || y < 1 || z < 1 || x >= nx - 1 || y >= ny - 1 || z >= nz - 1) return;
  const int plane = nx * ny;
  const int i = z * plane + y * nx + x;
  out[i] = out[i] + c0 * in[i] + c1 * (in[i - 1] + in[i + 1] + in[i - nx] + in[i + nx] + in[i - plane] + in[i + plane]);
}
