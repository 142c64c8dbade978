// A helper in a header that the program includes through an -I option.
void copy_one(__global float* out, __global const float* in, size_t i) { out[i] = in[i]; }
