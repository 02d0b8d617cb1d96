// Errors thrown by PCP. The Python bindings map them to ValueError, TypeError,
// IndexError, NotImplementedError, RuntimeError, MemoryError, OverflowError and BufferError; every message names the op and what it saw.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

namespace pcp {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct ValueError : Error {
  using Error::Error;
};
struct TypeError : Error {
  using Error::Error;
};
struct IndexError : Error {
  using Error::Error;
};
struct NotImplementedError : Error {
  using Error::Error;
};
// A device or driver failed (Python RuntimeError), or ran out of memory (Python MemoryError).
struct RuntimeError : Error {
  using Error::Error;
};
struct MemoryError : Error {
  using Error::Error;
};
// A value does not fit the type asked for (Python OverflowError, as NumPy raises for
// `int32_array + 2**40`).
struct OverflowError : Error {
  using Error::Error;
};
// Memory cannot be exchanged as asked (DLPack of GPU memory; Python BufferError).
struct BufferError : Error {
  using Error::Error;
};

// fail<TypeError>("add: ", x, " ...") builds the message from streamable parts.
template <class E = ValueError, class... Args>
[[noreturn]] void fail(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  throw E(os.str());
}

}  // namespace pcp
