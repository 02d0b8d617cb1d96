// Shared by the kernels: grid-stride loops and strided (broadcast) indexing.
// Every kernel runs 256 invocations per workgroup along x and loops over its work with a
// stride of the whole grid, so any size fits in the 65535-workgroup dispatch limit.
#define MAX_DIMS 6
#define GRID_STRIDE (gl_NumWorkGroups.x * gl_WorkGroupSize.x)

// Element offset of row-major flat index i over `shape` (dims 0..ndim-1) with `strides`.
// Strides are signed (negative steps) and 0 for broadcast dimensions.
int strided_offset(uint i, uint ndim, uint shape[MAX_DIMS], int strides[MAX_DIMS]) {
  int off = 0;
  for (int d = int(ndim) - 1; d >= 0; --d) {
    uint q = i / shape[d];
    off += int(i - q * shape[d]) * strides[d];
    i = q;
  }
  return off;
}
