// Helpers that read get_group_id, get_num_groups or get_global_size are rewritten like kernels:
// each takes the original launch's values from its caller.
int block_start(int block_size);  // a prototype gets the parameters too
int block_start(int block_size) { return get_group_id(0) * block_size; }
size_t groups(void) { return get_num_groups(0); }
int flat_index(void) { return get_global_id(1) * get_global_size(0) + get_global_id(0); }
// Reached only through another helper.
int indirect_start(int block_size) { return block_start(block_size) + 1; }
// Either dimension: a 2-D launch splits along the outermost one with more than one group.
size_t tile_x(void) { return get_group_id(0) * get_local_size(0); }
size_t tile_y(void) { return get_group_id(1) * get_local_size(1); }
__kernel void per_block(__global int* out, int block_size) {
  out[block_start(block_size) + get_local_id(0)] = (int)get_local_id(0);
}
__kernel void count_groups(__global ulong* out) {
  out[get_global_id(0)] = groups();
}
__kernel void uses_flat(__global int* out) { out[flat_index()] = 7; }
__kernel void indirect(__global int* out) { out[indirect_start(4)] = 1; }
__kernel void tiles(__global int* out) {
  size_t x = tile_x() + get_local_id(0), y = tile_y() + get_local_id(1);
  out[y * get_global_size(0) + x] = (int)(get_group_id(1) * get_num_groups(0) + get_group_id(0));
}
// Never split (a global atomic), but it calls a rewritten helper: it passes on the values of an
// unsplit launch, so that the rewritten program still builds.
__kernel void count_blocks(__global int* counter, __global int* out) {
  atomic_add(counter, 1);
  out[block_start(16) + get_local_id(0)] = 2;
}
// A helper with get_global_id and get_local_id only is fine.
int my_id(void) { return get_global_id(0) + 0 * get_local_id(0); }
__kernel void fine_helper(__global int* out) { out[my_id()] = 3; }
