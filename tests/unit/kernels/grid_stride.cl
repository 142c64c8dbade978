// Grid-stride loop: each work-item handles every get_global_size(0)-th element.
__kernel void scale_all(__global float* data, float factor, ulong n) {
  for (size_t i = get_global_id(0) - get_global_offset(0); i < n; i += get_global_size(0)) data[i] *= factor;
}
