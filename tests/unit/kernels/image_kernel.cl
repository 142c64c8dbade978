// Brightens an image; the sampler is a program-scope constant.
const sampler_t nearest = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;
__kernel void brighten(__read_only image2d_t src, __write_only image2d_t dst, float gain) {
  int2 p = (int2)(get_global_id(0), get_global_id(1));
  float4 v = read_imagef(src, nearest, p);
  write_imagef(dst, p, v * gain);
}
