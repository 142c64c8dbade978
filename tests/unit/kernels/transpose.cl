// Tiled transpose through __local memory; the tile origin comes from get_group_id.
#define TILE 16
__kernel void transpose(__global float* out, __global const float* in, int width, int height) {
  __local float tile[TILE][TILE + 1];
  int gx = get_group_id(0) * TILE + get_local_id(0);
  int gy = get_group_id(1) * TILE + get_local_id(1);
  if (gx < width && gy < height) tile[get_local_id(1)][get_local_id(0)] = in[gy * width + gx];
  barrier(CLK_LOCAL_MEM_FENCE);
  int tx = get_group_id(1) * TILE + get_local_id(0);
  int ty = get_group_id(0) * TILE + get_local_id(1);
  if (tx < height && ty < width) out[ty * height + tx] = tile[get_local_id(0)][get_local_id(1)];
}
