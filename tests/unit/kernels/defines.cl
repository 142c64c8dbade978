// Sizes and variants chosen by -D options at build time.
#ifndef N
#error N must be defined
#endif
__kernel void scaled(__global float* out, __global const float* in) {
  __local float buf[TILE];
  int i = get_global_id(0);
  buf[get_local_id(0) % TILE] = in[i % N];
#ifdef USE_SCALE
  out[i] = buf[get_local_id(0) % TILE] * SCALE;
#else
  out[i] = buf[get_local_id(0) % TILE];
#endif
}
#ifdef USE_SCALE
__kernel void only_with_scale(__global float* x) { x[get_group_id(0)] = N; }
#endif
#ifdef NOT_DEFINED
__kernel void never_compiled(__global float* x) { x[0] = 1; }
#endif
