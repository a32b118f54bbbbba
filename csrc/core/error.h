// The one exception type of the runtime: every user-facing failure (bad argument, missing
// kernel, conflicting registration) is an op::Error, so bindings can map it to one Python type.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace op {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

namespace detail {
inline void append_all(std::ostringstream&) {}
template <class T, class... Rest>
void append_all(std::ostringstream& out, const T& first, const Rest&... rest) {
  out << first;
  append_all(out, rest...);
}
}  // namespace detail

// str("a", 1, 'b') -> "a1b"; used to build error messages without boilerplate.
template <class... Parts>
std::string str(const Parts&... parts) {
  std::ostringstream out;
  detail::append_all(out, parts...);
  return out.str();
}

[[noreturn]] inline void fail(const std::string& message) { throw Error(message); }

}  // namespace op

// OP_CHECK(cond, parts...) throws op::Error(str(parts...)) when cond is false.
#define OP_CHECK(cond, ...)                         \
  do {                                              \
    if (!(cond)) ::op::fail(::op::str(__VA_ARGS__)); \
  } while (0)
