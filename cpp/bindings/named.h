// Every bound function is wrapped by named("op", f): an error it raises names the function the
// user called. Errors thrown deep inside (the allocator, a helper op such as permute under
// transpose, "unary op:") are renamed or prefixed on the way out, and std::bad_alloc becomes
// a MemoryError. def(m, "op", f, ...) binds a module function that way.
#pragma once
#include <pybind11/pybind11.h>

#include <string>
#include <type_traits>
#include <utility>

namespace pcp::bindings {

// Rethrows the exception being handled with its message naming `op` (same exception type).
[[noreturn]] void rethrow_named(const char* op);
// "op: message": replaces a leading "other_op: " (an identifier, or "unary op"), else prefixes.
std::string name_message(const char* op, const std::string& message);

namespace detail {
template <class F> struct signature_of : signature_of<decltype(&F::operator())> {};
template <class C, class R, class... A> struct signature_of<R (C::*)(A...) const> { using type = R (*)(A...); };
template <class C, class R, class... A> struct signature_of<R (C::*)(A...)> { using type = R (*)(A...); };
template <class R, class... A> struct signature_of<R (*)(A...)> { using type = R (*)(A...); };

template <class F, class R, class... A>
auto wrap(const char* op, F f, R (*)(A...)) {
  return [op, f = std::move(f)](A... args) -> R {
    try {
      return f(std::forward<A>(args)...);
    } catch (const pybind11::error_already_set&) {
      throw;  // a Python exception raised by Python code: already says what it is
    } catch (...) {
      rethrow_named(op);
    }
  };
}
}  // namespace detail

template <class F>
auto named(const char* op, F f) {
  using Sig = typename detail::signature_of<std::decay_t<F>>::type;
  return detail::wrap(op, std::move(f), Sig{nullptr});
}

template <class F, class... Extra>
void def(pybind11::module_& m, const char* name, F f, const Extra&... extra) {
  m.def(name, named(name, std::move(f)), extra...);
}

}  // namespace pcp::bindings
