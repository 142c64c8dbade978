// A kernel with a syntax error between two good ones.
__kernel void good(__global int* out) { out[get_global_id(0)] = get_group_id(0); }
__kernel void bad(__global int* out) { out[get_global_id(0)] = undefined_thing + ; }
__kernel void good_after(__global float* x) { x[get_global_id(0)] *= 2.0f; }
void broken_helper(__global int* p) { p[0] = missing_function(1); }
__kernel void calls_broken(__global int* out) { broken_helper(out); }
