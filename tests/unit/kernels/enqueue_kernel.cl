// OpenCL C 2.0 device-side enqueue of a child launch.
__kernel void parent(__global int* data, int n) {
  if (get_global_id(0) == 0) {
    enqueue_kernel(get_default_queue(), CLK_ENQUEUE_FLAGS_WAIT_KERNEL, ndrange_1D(n),
                   ^{ data[get_global_id(0)] *= 2; });
  }
}
