// const, __constant and plain pointers, and a const cast away.
__kernel void mixed(__global const int* ro, __constant int* table, __global int* rw, __global int* wo,
                    __global int* unused) {
  int i = get_global_id(0);
  int v = ro[i] + table[i % 4];
  rw[i] = rw[i] * v;
  wo[i] = v;
}
__kernel void casts_const_away(__global const int* looks_read_only) {
  __global int* writable = (__global int*)looks_read_only;
  writable[get_global_id(0)] = 0;
}
