// A sampler passed in from the host (with an image, and alone).
__kernel void sample(__read_only image2d_t img, sampler_t s, __global float4* out, int width) {
  int x = get_global_id(0), y = get_global_id(1);
  out[y * width + x] = read_imagef(img, s, (float2)(x + 0.5f, y + 0.5f));
}
__kernel void sampler_only(sampler_t s, __global int* out) {
  out[get_global_id(0)] = 1;
}
