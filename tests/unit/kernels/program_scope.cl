// Program-scope variables: a writable global (OpenCL C 2.0) and a constant table.
__global int counter = 0;
__constant float weights[3] = {0.25f, 0.5f, 0.25f};
__kernel void uses_global_var(__global int* out) { out[get_global_id(0)] = counter++; }
__kernel void uses_constant_table(__global const float* in, __global float* out) {
  int i = get_global_id(0);
  out[i] = in[i] * weights[i % 3];
}
