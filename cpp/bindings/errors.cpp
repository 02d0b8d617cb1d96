// Error translation: pcp::Error subclasses to Python exceptions, each message naming the op.
#include <cctype>
#include <new>

#include "convert.h"
#include "named.h"
#include "pcp/core/error.h"

namespace pcp::bindings {

// The part before the first ": " when it is an op's name: an identifier ("permute"), or one of
// the generic names the elementwise and reduction code uses ("unary op").
static size_t op_prefix_length(const std::string& m) {
  const size_t colon = m.find(": ");
  if (colon == std::string::npos || colon == 0) return 0;
  const std::string head = m.substr(0, colon);
  if (head == "unary op" || head == "binary op") return colon + 2;
  for (char c : head)
    if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_'))
      return 0;
  return colon + 2;
}

namespace detail {
Tensor tensor_arg(const py::object& obj) {
  if (py::isinstance<Tensor>(obj)) return obj.cast<Tensor>();
  return to_tensor(obj, "tensor");
}

void wrong_argument(int index, const char* expected, const py::object& got) {
  std::string want = expected;
  if (want.find('%') != std::string::npos) want = "Tensor";  // pybind11's placeholder for a bound class
  if (want.size() > 2 && want.front() == '@') {  // pybind11's "@input type@output type@"
    want.pop_back();
    want = want.substr(want.rfind('@') + 1);
  }
  fail<TypeError>("argument ", index, " must be ", want, ", got ",
                  std::string(py::str(py::type::of(got).attr("__name__"))));
}
}  // namespace detail

std::string name_message(const char* op, const std::string& message) {
  const std::string prefix = std::string(op) + ": ";
  if (message.compare(0, prefix.size(), prefix) == 0) return message;
  return prefix + message.substr(op_prefix_length(message));
}

void rethrow_named(const char* op) {
  try {
    throw;
  } catch (const IndexError& e) {
    throw IndexError(name_message(op, e.what()));
  } catch (const TypeError& e) {
    throw TypeError(name_message(op, e.what()));
  } catch (const NotImplementedError& e) {
    throw NotImplementedError(name_message(op, e.what()));
  } catch (const RuntimeError& e) {
    throw RuntimeError(name_message(op, e.what()));
  } catch (const MemoryError& e) {
    throw MemoryError(name_message(op, e.what()));
  } catch (const OverflowError& e) {
    throw OverflowError(name_message(op, e.what()));
  } catch (const BufferError& e) {
    throw BufferError(name_message(op, e.what()));
  } catch (const Error& e) {
    throw ValueError(name_message(op, e.what()));
  } catch (const py::cast_error& e) {
    throw TypeError(name_message(op, e.what()));
  } catch (const py::builtin_exception&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw MemoryError(std::string(op) + ": out of memory");
  } catch (const std::length_error& e) {
    throw MemoryError(std::string(op) + ": out of memory (" + e.what() + ")");
  } catch (const std::exception& e) {
    throw RuntimeError(name_message(op, e.what()));
  }
}

void register_errors() {
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const IndexError& e) {
      PyErr_SetString(PyExc_IndexError, e.what());
    } catch (const TypeError& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const NotImplementedError& e) {
      PyErr_SetString(PyExc_NotImplementedError, e.what());
    } catch (const RuntimeError& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    } catch (const MemoryError& e) {
      PyErr_SetString(PyExc_MemoryError, e.what());
    } catch (const OverflowError& e) {
      PyErr_SetString(PyExc_OverflowError, e.what());
    } catch (const BufferError& e) {
      PyErr_SetString(PyExc_BufferError, e.what());
    } catch (const Error& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });
}

}  // namespace pcp::bindings
