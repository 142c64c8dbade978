// OpenCL C 2.0 pipes: producer and consumer.
__kernel void producer(__global const int* src, __write_only pipe int out) {
  int v = src[get_global_id(0)];
  write_pipe(out, &v);
}
__kernel void consumer(__read_only pipe int in, __global int* dst) {
  int v = 0;
  if (read_pipe(in, &v) == 0) dst[get_global_id(0)] = v;
}
