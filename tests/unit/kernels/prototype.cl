// A kernel declared before its definition: both declarations get the extra parameters.
__kernel void with_prototype(__global int* out, int k);

__kernel void with_prototype(__global int* out, int k) { out[get_group_id(0)] = k; }
