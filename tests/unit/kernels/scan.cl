// Work-efficient exclusive scan (up-sweep, down-sweep) of 2 * local size elements per work-group in
// __local memory; each group also leaves its total for a second pass.
__kernel void scan_blocks(__global const int* in, __global int* out, __global int* block_sums, __local int* temp) {
  int lid = get_local_id(0);
  int n = 2 * get_local_size(0);
  int base = get_group_id(0) * n;
  temp[2 * lid] = in[base + 2 * lid];
  temp[2 * lid + 1] = in[base + 2 * lid + 1];
  int offset = 1;
  for (int d = n >> 1; d > 0; d >>= 1) {
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < d) {
      int ai = offset * (2 * lid + 1) - 1, bi = offset * (2 * lid + 2) - 1;
      temp[bi] += temp[ai];
    }
    offset *= 2;
  }
  if (lid == 0) {
    block_sums[get_group_id(0)] = temp[n - 1];
    temp[n - 1] = 0;
  }
  for (int d = 1; d < n; d *= 2) {
    offset >>= 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < d) {
      int ai = offset * (2 * lid + 1) - 1, bi = offset * (2 * lid + 2) - 1;
      int t = temp[ai];
      temp[ai] = temp[bi];
      temp[bi] += t;
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  out[base + 2 * lid] = temp[2 * lid];
  out[base + 2 * lid + 1] = temp[2 * lid + 1];
}

// Second pass: every element gets the scanned total of the blocks before its own. A block is two
// work-groups' worth of elements here, so the index divides.
__kernel void add_block_offsets(__global int* out, __global const int* scanned_sums) {
  out[get_global_id(0)] += scanned_sums[get_group_id(0) / 2];
}
