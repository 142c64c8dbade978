// Structs by value and through pointers.
typedef struct {
  float x, y, z;
  int id;
} Particle;
struct Params {
  float dt;
  int count;
};
__kernel void advance(__global Particle* particles, struct Params params, __global const float4* velocity) {
  int i = get_global_id(0);
  if (i >= params.count) return;
  particles[i].x += velocity[i].x * params.dt;
  particles[i].y += velocity[i].y * params.dt;
  particles[i].z += velocity[i].z * params.dt;
}
__kernel void ids(__global const Particle* particles, __global int* out) {
  out[get_global_id(0)] = particles[get_global_id(0)].id;
}
