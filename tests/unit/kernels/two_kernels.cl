// Two kernels: only the second needs the rewrite.
__kernel void fill(__global int* data, int value) { data[get_global_id(0)] = value; }

__kernel void
group_sums(__global const int* data,
           __global int* sums)
{
  if (get_local_id(0) == 0) {
    int s = 0;
    for (size_t k = 0; k < get_local_size(0); ++k) s += data[get_global_id(0) + k];
    sums[get_group_id(0) + get_num_groups(0) * get_group_id(1)] = s;
  }
}
