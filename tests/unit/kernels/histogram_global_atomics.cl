// 256-bin histogram straight into global memory.
__kernel void histogram(__global const uchar* data, __global uint* bins, uint n) {
  uint i = get_global_id(0);
  if (i < n) atomic_inc(&bins[data[i]]);
}
