// Work-groups that depend on each other, and one that only looks as if they did. Split among
// devices, the first four would give other bytes than one device gives (a chunk reads what another
// writes, or two chunks write one byte), so coex must not split them; the last one it may.

// Item 0 of each group reads the whole buffer, then every item scales its own element by the sum:
// a later group reads what an earlier one has already written.
__kernel void normalise_by_sum(__global float* data, int n) {
  __local float total;
  if (get_local_id(0) == 0) {
    float sum = 0.0f;
    for (int k = 0; k < n; ++k) sum += data[k];
    total = sum;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  int i = get_global_id(0);
  if (i < n) data[i] = data[i] / total;
}

// Group g writes elements [g * step, g * step + local size): with step below the group size, each
// group overwrites the first elements of the group after it, and the last writer wins.
__kernel void overlapping_windows(__global int* out, int step) {
  int g = get_group_id(0);
  out[g * step + get_local_id(0)] = g;
}

// A scatter whose indices collide (the launch fills `index` with (7 i + 3) % 64 for 256 items): two
// groups store to one element.
__kernel void colliding_scatter(__global const float* values, __global const int* index, __global float* out) {
  int i = get_global_id(0);
  out[index[i]] = values[i];
}

// A three-point average in place: each group's first and last items read elements the neighbouring
// groups write.
__kernel void stencil_in_place(__global float* a, int n) {
  int i = get_global_id(0);
  if (i > 0 && i < n - 1) a[i] = (a[i - 1] + a[i] + a[i + 1]) / 3.0f;
}

// Safe: several items of a group store to the group's own element (the same value), no other group
// touches it. Two items of one group writing one byte is no conflict between chunks.
__kernel void group_any_large(__global const float* in, __global int* out, float limit) {
  int i = get_global_id(0);
  if (in[i] > limit) out[get_group_id(0)] = 1;
}
