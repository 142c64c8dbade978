// Indices computed by helper functions and macros, pointers moved by offsets, accesses inside helpers.
#define ROW_MAJOR(r, c, pitch) ((r) * (pitch) + (c))
#define HALO 1

inline int clamp_index(int i, int n) { return min(max(i, 0), n - 1); }
int flat(int r, int c, int pitch) { return ROW_MAJOR(r, c, pitch); }
float fetch(__global const float* p, int r, int c, int pitch) { return p[flat(r, c, pitch)]; }
void put(__global float* p, int i, float v) { p[i] = v; }

__kernel void shift_rows(__global const float* in, __global float* out, int pitch, int offset) {
  int r = get_global_id(1), c = get_global_id(0);
  __global const float* row = in + r * pitch + offset;
  __global float* dst = &out[ROW_MAJOR(r, 0, pitch)];
  dst[c] = row[c] + fetch(in, r, c, pitch);
}

__kernel void halo_average(__global const float* in, __global float* out, int pitch, int height) {
  int r = get_global_id(1) + HALO, c = get_global_id(0) + HALO;
  if (r >= height - HALO || c >= pitch - HALO) return;
  float up = fetch(in, r - HALO, c, pitch), down = fetch(in, r + HALO, c, pitch);
  put(out, flat(r, c, pitch), 0.5f * (up + down));
}

__kernel void clamped_copy(__global const float* in, __global float* out, int n) {
  int i = get_global_id(0);
  out[i] = in[clamp_index(i - 2, n)];
}
