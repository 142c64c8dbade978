// Vector loads and stores through the vloadn/vstoren builtins.
__kernel void vec4_copy(__global const float* src, __global float* dst) {
  size_t i = get_global_id(0);
  float4 v = vload4(i, src);
  vstore4(v * 2.0f, i, dst);
}
__kernel void half_to_float(__global const half* h, __global float* f) {
  f[get_global_id(0)] = vload_half(get_global_id(0), h);
}
