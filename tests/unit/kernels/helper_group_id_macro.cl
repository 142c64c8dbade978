// A rewritten helper called where the rewrite cannot edit the call (inside a macro use): no helper
// of the program is rewritten, and the kernels that call one are not split.
int block_start(int block_size) { return get_group_id(0) * block_size; }
#define AT_BLOCK(p, n) p[block_start(n) + get_local_id(0)]
__kernel void through_macro(__global int* out) { AT_BLOCK(out, 16) = 1; }
__kernel void direct(__global int* out) { out[block_start(16) + get_local_id(0)] = 2; }
__kernel void unrelated(__global int* out) { out[get_global_id(0)] = 3; }
