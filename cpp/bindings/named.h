// Every bound function is wrapped by named("op", f): an error it raises names the function the
// user called. Errors thrown deep inside (the allocator, a helper op such as permute under
// transpose, "unary op:") are renamed or prefixed on the way out, and std::bad_alloc becomes
// a MemoryError. def(m, "op", f, ...) binds a module function that way.
#pragma once
#include <pybind11/pybind11.h>

#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include "pcp/core/tensor.h"

namespace pcp::bindings {

// An argument as the caller passed it. Any object loads, and it converts to A inside the named
// call: a wrong type is then a TypeError naming the op and the argument, not pybind11's
// 'incompatible function arguments' with a list of signatures, and a const Tensor& parameter
// also takes a NumPy array, a list or a number, as NumPy's functions do.
template <class A>
struct Arg {
  pybind11::object obj;
};

// Rethrows the exception being handled with its message naming `op` (same exception type).
[[noreturn]] void rethrow_named(const char* op);
// "op: message": replaces a leading "other_op: " (an identifier, or "unary op"), else prefixes.
std::string name_message(const char* op, const std::string& message);

namespace detail {
Tensor tensor_arg(const pybind11::object& obj);  // to_tensor, or the Tensor itself
[[noreturn]] void wrong_argument(int index, const char* expected, const pybind11::object& got);

template <class A>
constexpr bool passes_through = std::is_base_of_v<pybind11::handle, std::decay_t<A>>;  // py::object, py::args...

template <class A>
struct param {
  using type = Arg<A>;
  using value = std::decay_t<A>;
  static decltype(auto) get(const type& a, int index) {
    if constexpr (std::is_same_v<value, Tensor> && !std::is_same_v<A, Tensor&>) {
      return tensor_arg(a.obj);
    } else {
      try {
        if constexpr (std::is_same_v<A, Tensor&>) {
          return a.obj.template cast<Tensor&>();
        } else {
          // pybind11's converting bool cast takes None for False: a flag must be given.
          if constexpr (std::is_same_v<value, bool>)
            if (a.obj.is_none()) throw pybind11::cast_error();
          return a.obj.template cast<value>();
        }
      } catch (const pybind11::cast_error&) {
        wrong_argument(index, pybind11::detail::make_caster<value>::name.text, a.obj);
      }
    }
  }
};

template <class F> struct signature_of : signature_of<decltype(&F::operator())> {};
template <class C, class R, class... A> struct signature_of<R (C::*)(A...) const> { using type = R (*)(A...); };
template <class C, class R, class... A> struct signature_of<R (C::*)(A...)> { using type = R (*)(A...); };
template <class R, class... A> struct signature_of<R (*)(A...)> { using type = R (*)(A...); };

template <class A>
using param_t = std::conditional_t<passes_through<A>, A, typename param<A>::type>;

template <class A, class T>
decltype(auto) get_param(T&& a, int index) {
  if constexpr (passes_through<A>)
    return std::forward<T>(a);
  else
    return param<A>::get(a, index);
}

template <class F, class R, class... A, size_t... I>
auto wrap(const char* op, F f, R (*)(A...), std::index_sequence<I...>) {
  return [op, f = std::move(f)](param_t<A>... args) -> R {
    try {
      return f(get_param<A>(std::forward<param_t<A>>(args), int(I) + 1)...);
    } catch (const pybind11::error_already_set&) {
      throw;  // a Python exception raised by Python code: already says what it is
    } catch (...) {
      rethrow_named(op);
    }
  };
}
template <class F, class R, class... A>
auto wrap_signature(const char* op, F f, R (*sig)(A...)) {
  return wrap(op, std::move(f), sig, std::index_sequence_for<A...>{});
}
}  // namespace detail

template <class F>
auto named(const char* op, F f) {
  return detail::wrap_signature(op, std::move(f), typename detail::signature_of<std::decay_t<F>>::type{nullptr});
}

// The docstring of pcp.<name> (docstrings.cpp), or nullptr where there is none yet.
const char* op_doc(const char* name);
// The elementwise functions' docstrings, added to docstrings.cpp's table.
void add_elementwise_docs(std::unordered_map<std::string, std::string>& docs);
// The Tensor protocols' and operators' docstrings, added to tensor_docs.cpp's table.
void add_protocol_docs(std::unordered_map<std::string, std::string>& docs);
// A raw string written from its second line on (R"(\n...)"), without that first newline.
inline std::string doc_text(const char* s) { return s[0] == '\n' ? s + 1 : s; }
// The docstring of the Tensor member pcp.Tensor.<name> that is not a module function
// (tensor_docs.cpp); a std::logic_error at import when it has none, so none goes undocumented.
const char* tensor_doc(const char* name);

// Binds pcp.<name>, named (above), with its docstring from docstrings.cpp when it has one (it
// replaces a docstring among `extra`).
template <class F, class... Extra>
void def(pybind11::module_& m, const char* name, F f, const Extra&... extra) {
  if (const char* doc = op_doc(name)) m.def(name, named(name, std::move(f)), extra..., pybind11::doc(doc));
  else m.def(name, named(name, std::move(f)), extra...);
}

}  // namespace pcp::bindings

namespace pybind11::detail {
template <class A>
struct type_caster<pcp::bindings::Arg<A>> {
  PYBIND11_TYPE_CASTER(pcp::bindings::Arg<A>, make_caster<std::decay_t<A>>::name);
  bool load(handle src, bool) {
    value.obj = reinterpret_borrow<object>(src);
    return true;
  }
  static handle cast(const pcp::bindings::Arg<A>& v, return_value_policy, handle) { return v.obj.inc_ref(); }
};
}  // namespace pybind11::detail
