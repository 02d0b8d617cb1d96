#include "pcp/core/shape.h"

#include <algorithm>

#include "pcp/core/error.h"

namespace pcp {

// The product of the dimensions (zero ones counted as 1) times the item size overflows int64.
// It must fit, as NumPy requires: then neither the element count, nor any contiguous stride,
// nor the byte size can overflow.
static bool too_big(const Shape& s, size_t itemsize = 1) {
  int64_t span = int64_t(itemsize);
  for (int64_t d : s)
    if (d > 1 && __builtin_mul_overflow(span, d, &span)) return true;
  return false;
}

int64_t numel(const Shape& s) {
  if (too_big(s)) fail<ValueError>("shape ", shape_str(s), " is too big: its element count does not fit in 64 bits");
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

void check_shape(const Shape& s, const char* op, size_t itemsize) {
  for (int64_t d : s)
    if (d < 0) fail<ValueError>(op, ": negative dimension ", d, " in shape ", shape_str(s));
  if (too_big(s, itemsize))
    fail<ValueError>(op, ": shape ", shape_str(s), " is too big: its size in bytes does not fit in 64 bits");
}

int64_t checked_nbytes(const Shape& s, size_t itemsize, const char* op) {
  check_shape(s, op);
  if (too_big(s, itemsize))
    fail<MemoryError>(op, ": a tensor of shape ", shape_str(s), " would take more than 2**63 bytes");
  return numel(s) * int64_t(itemsize);
}

int64_t rows_of(const Shape& s) { return s.empty() ? 1 : numel(Shape(s.begin(), s.end() - 1)); }

bool view_span(const Shape& shape, const Strides& strides, int64_t offset, int64_t* lo, int64_t* hi) {
  *lo = *hi = offset;
  if (strides.size() != shape.size()) return false;
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t reach;
    if (__builtin_mul_overflow(shape[i] - 1, strides[i], &reach)) return false;
    int64_t* end = reach < 0 ? lo : hi;
    if (__builtin_add_overflow(*end, reach, end)) return false;
  }
  return true;
}

Strides contiguous_strides(const Shape& s) {
  Strides st(s.size());
  int64_t acc = 1;
  for (int i = int(s.size()) - 1; i >= 0; --i) {
    st[i] = acc;
    acc *= std::max<int64_t>(s[i], 1);
  }
  return st;
}

std::string shape_str(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(s[i]);
  }
  if (s.size() == 1) out += ",";
  return out + ")";
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1)
      fail<ValueError>(op, ": shapes ", shape_str(a), " and ", shape_str(b),
                       " cannot be broadcast together (dimension ", i, ": ", da, " vs ", db, ")");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int normalize_axis(int64_t axis, int64_t ndim, const char* op) {
  if (axis < -ndim || axis >= std::max<int64_t>(ndim, 0) || (ndim == 0))
    fail<IndexError>(op, ": axis ", axis, " is out of range for a tensor of ", ndim,
                     " dimension", ndim == 1 ? "" : "s", " (expected ", -ndim, " <= axis < ", ndim, ")");
  return int(axis < 0 ? axis + ndim : axis);
}

std::vector<int> normalize_axes(const std::vector<int64_t>& axes, int64_t ndim, const char* op) {
  std::vector<int> out;
  for (int64_t a : axes) {
    int n = normalize_axis(a, ndim, op);
    if (std::find(out.begin(), out.end(), n) != out.end())
      fail<ValueError>(op, ": axis ", a, " appears more than once in the axes");
    out.push_back(n);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace pcp
