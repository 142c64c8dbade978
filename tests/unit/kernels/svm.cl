// Memory that no argument names: pointers stored in buffers, pointers made from integers.
__kernel void pointer_to_pointer(__global float* __global* rows, int n) { rows[get_global_id(0)][0] = n; }
__kernel void int_to_pointer(__global ulong* addresses) {
  __global int* p = (__global int*)addresses[get_global_id(0)];
  *p = 1;
}
typedef struct Node {
  __global struct Node* next;
  int value;
} Node;
__kernel void linked_list(__global Node* nodes, __global int* out) {
  out[get_global_id(0)] = nodes[get_global_id(0)].next->value;
}
__kernel void plain(__global int* out) { out[get_global_id(0)] = 0; }
