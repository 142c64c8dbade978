// Kernels without parameters, written () and (void).
__kernel void no_args() { size_t g = get_group_id(0); (void)g; }
__kernel void void_args(void) { if (get_num_groups(0) == 0) return; }
__kernel void no_args_plain(void) { }
