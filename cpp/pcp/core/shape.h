// Shapes, strides (in elements) and axis handling shared by every op.
#pragma once
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace pcp {

using Shape = std::vector<int64_t>;
using Strides = std::vector<int64_t>;

// Element count; throws ValueError when the dimensions' product does not fit in int64.
int64_t numel(const Shape& s);
// Throws ValueError naming `op` for a negative dimension, or when the shape's size in bytes (of
// items of `itemsize`) overflows int64; views of x check with x.itemsize(), as NumPy does.
void check_shape(const Shape& s, const char* op, size_t itemsize = 1);
// Bytes of a contiguous tensor of shape `s`; MemoryError naming `op` when they overflow.
int64_t checked_nbytes(const Shape& s, size_t itemsize, const char* op);
Strides contiguous_strides(const Shape& s);
// The first and last element a non-empty view (shape, strides, offset) reaches in its memory, in
// lo and hi; false when the arithmetic overflows int64 (or shape and strides differ in length).
bool view_span(const Shape& shape, const Strides& strides, int64_t offset, int64_t* lo, int64_t* hi);
// Rows of a tensor viewed as (rows, last axis): the product of all but the last dimension (1 for
// a 0-d shape). The row kernels (softmax, layer norm, cross-entropy) run over these.
int64_t rows_of(const Shape& s);
std::string shape_str(const Shape& s);  // "(2, 3)"

// NumPy broadcasting of two shapes; throws ValueError naming `op` when they do not broadcast.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);

// Maps a possibly negative axis into [0, ndim); throws IndexError naming `op`.
int normalize_axis(int64_t axis, int64_t ndim, const char* op);

// Sorted unique normalized axes; an empty optional-like flag `all` means every axis.
std::vector<int> normalize_axes(const std::vector<int64_t>& axes, int64_t ndim, const char* op);

struct ShapePrinter {
  const Shape& s;
};
inline std::ostream& operator<<(std::ostream& os, const ShapePrinter& p) { return os << shape_str(p.s); }

}  // namespace pcp
