// Stage a block of the input in __local memory with an asynchronous copy.
__kernel void stage(__global const float* src, __global float* dst, __local float* buf) {
  event_t e = async_work_group_copy(buf, src + get_group_id(0) * get_local_size(0), get_local_size(0), 0);
  wait_group_events(1, &e);
  dst[get_global_id(0)] = buf[get_local_id(0)] * 2.0f;
}
