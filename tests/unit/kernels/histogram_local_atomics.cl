// Histogram per work-group with __local atomics; each group writes its own row of partial bins.
#define BINS 64
__kernel void histogram_per_group(__global const uint* data, __global uint* partial_bins, uint n) {
  __local uint bins[BINS];
  for (uint b = get_local_id(0); b < BINS; b += get_local_size(0)) bins[b] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  uint i = get_global_id(0);
  if (i < n) atomic_add(&bins[data[i] % BINS], 1u);
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint b = get_local_id(0); b < BINS; b += get_local_size(0))
    partial_bins[get_group_id(0) * BINS + b] = bins[b];
}
// The same through a __local pointer argument and atom_inc.
__kernel void count_local(__global const int* flags, __local int* counter, __global int* per_group) {
  if (get_local_id(0) == 0) *counter = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (flags[get_global_id(0)]) atomic_inc(counter);
  barrier(CLK_LOCAL_MEM_FENCE);
  if (get_local_id(0) == 0) per_group[get_group_id(0)] = *counter;
}
