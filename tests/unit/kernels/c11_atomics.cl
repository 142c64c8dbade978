// OpenCL C 2.0 atomics on global and on local memory.
__kernel void global_counter(__global atomic_int* counter, __global int* out) {
  out[get_global_id(0)] = atomic_fetch_add_explicit(counter, 1, memory_order_relaxed, memory_scope_device);
}
__kernel void local_counter(__global int* out) {
  __local atomic_int count;
  if (get_local_id(0) == 0) atomic_init(&count, 0);
  work_group_barrier(CLK_LOCAL_MEM_FENCE);
  atomic_fetch_add(&count, 1);
  work_group_barrier(CLK_LOCAL_MEM_FENCE);
  if (get_local_id(0) == 0) out[get_group_id(0)] = atomic_load(&count);
}
// Through a generic pointer the address space is unknown: counted as global.
void bump(volatile atomic_int* p) { atomic_fetch_add(p, 1); }
__kernel void generic_helper(__global int* out) {
  __local atomic_int c;
  bump(&c);
  out[get_global_id(0)] = 0;
}
