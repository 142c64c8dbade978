// Dereferences, address-of and increments inside macro bodies, where libclang hides the operator
// token: the shape of the operands decides, and no load or store may go unseen.
#define DEREF(p) (*(p))
#define ADDR(x) (&(x))
#define NEG(x) (-(x))
#define BUMP(x) ((x)++)
__kernel void deref_store(__global int* out, __global const int* in) {
  DEREF(out + get_global_id(0)) = NEG(DEREF(in + get_global_id(0)));
}
__kernel void address_then_store(__global int* out, __global int* untouched) {
  __global int* p = ADDR(out[get_global_id(0)]);
  p[1] = 1;
}
__kernel void bump_through_macro(__global int* counts, __global const int* which) {
  BUMP(counts[which[get_global_id(0)]]);
}
