// A kernel called as a function by another kernel.
__kernel void leaf(__global int* out) { out[get_group_id(0)] = 1; }
__kernel void caller(__global int* out) { leaf(out); }
__kernel void plain_leaf(__global int* out) { out[get_global_id(0)] = 2; }
__kernel void plain_caller(__global int* out) { plain_leaf(out); }
