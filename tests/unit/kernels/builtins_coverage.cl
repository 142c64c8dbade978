// Many OpenCL C 1.2 builtins at once: every one must resolve, with clang's headers and without.
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void many_builtins(__global float4* f, __global int4* n, __global uint* u, __global double* d) {
  size_t i = get_global_id(0);
  float4 a = f[i];
  float4 b = sqrt(fabs(a)) + sin(a) * cos(a) + native_exp(a) + pow(a, 2.0f) + fma(a, a, a) + mix(a, a, 0.5f);
  b += clamp(a, 0.0f, 1.0f) + step(0.5f, a) + smoothstep(0.0f, 1.0f, a) + (float4)(M_PI_F, MAXFLOAT, FLT_EPSILON, 0);
  float dotp = dot(a, b) + length(a) + distance(a, b);
  float4 c = normalize(cross(a, b));
  int4 k = n[i];
  int4 m = as_int4(abs_diff(k, k)) + (int4)(mad24(k.x, k.y, k.z)) + clamp(k, 0, 10) + rotate(k, 3) + popcount(k) + clz(k);
  int4 s = select(k, m, k > m);
  n[i] = s + convert_int4(c) + convert_int4_sat_rte(b) + as_int4(a) + (int4)(INT_MAX, CHAR_BIT, 0, 0);
  uint x = u[i];
  u[i] = mul_hi(x, 3u) + add_sat(x, 1u) + upsample((ushort)1, (ushort)2) + (uint)any(k > 0) + (uint)all(k > 0) +
         (uint)isnan(dotp);
  d[i] = (double)dotp + sqrt(d[i]);
  mem_fence(CLK_GLOBAL_MEM_FENCE);
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  f[i] = c + (float4)(get_work_dim() + get_local_size(0) + get_local_id(0) + get_global_id(0)) +
         shuffle(a, (uint4)(3, 2, 1, 0));
}
