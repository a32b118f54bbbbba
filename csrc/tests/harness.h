// A minimal test harness: TEST(name) { CHECK(...); } registers a test; main() in
// test_main.cpp runs them all (or those whose name contains argv[1]) and prints
// "N passed, M failed".
#pragma once

#include <functional>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/device.h"
#include "core/dispatch_key_set.h"
#include "core/error.h"
#include "core/scalar_type.h"

namespace optest {

struct TestCase {
  const char* name;
  void (*fn)();
};

std::vector<TestCase>& registry();

struct Registrar {
  Registrar(const char* name, void (*fn)()) { registry().push_back({name, fn}); }
};

struct Failure {
  std::string message;
};

[[noreturn]] inline void fail(const char* file, int line, const std::string& message) {
  throw Failure{std::string(file) + ":" + std::to_string(line) + ": " + message};
}

template <class T, class = void>
struct Printable : std::false_type {};
template <class T>
struct Printable<T, std::void_t<decltype(std::declval<std::ostream&>() << std::declval<const T&>())>> : std::true_type {};

template <class T>
std::string show(const T& v) {
  if constexpr (Printable<T>::value) {
    std::ostringstream out;
    out << v;
    return out.str();
  } else {
    return "<value>";
  }
}
inline std::string show(op::ScalarType t) { return op::to_string(t); }
inline std::string show(op::DispatchKey k) { return op::to_string(k); }
inline std::string show(op::DispatchKeySet ks) { return ks.to_string(); }
inline std::string show(const op::Device& d) { return d.str(); }
inline std::string show(const std::vector<std::pair<std::string, std::string>>& rows) {
  std::string out = "{";
  for (const auto& [k, v] : rows) out += (out.size() > 1 ? ", " : "") + k + ": " + v;
  return out + "}";
}
template <class T>
std::string show(const std::vector<T>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + show(values[i]);
  return out + "]";
}

}  // namespace optest

#define TEST(name)                                                            \
  static void optest_##name();                                                \
  static const ::optest::Registrar optest_registrar_##name(#name, &optest_##name); \
  static void optest_##name()

#define CHECK(cond)                                                          \
  do {                                                                       \
    if (!(cond)) ::optest::fail(__FILE__, __LINE__, "CHECK(" #cond ") failed"); \
  } while (0)

#define CHECK_EQ(a, b)                                                                                   \
  do {                                                                                                   \
    const auto optest_a = (a); /* copies: (a) may be a reference into a temporary */                    \
    const auto optest_b = (b);                                                                           \
    if (!(optest_a == optest_b))                                                                         \
      ::optest::fail(__FILE__, __LINE__,                                                                 \
                     "CHECK_EQ(" #a ", " #b ")\n    left:  " + ::optest::show(optest_a) + "\n    right: " + \
                         ::optest::show(optest_b));                                                      \
  } while (0)

// Expects an op::Error whose message contains `substring`.
#define CHECK_THROWS(expr, substring)                                                                 \
  do {                                                                                                \
    bool optest_threw = false;                                                                        \
    std::string optest_what;                                                                          \
    try {                                                                                             \
      (void)(expr);                                                                                   \
    } catch (const ::op::Error& e) {                                                                  \
      optest_threw = true;                                                                            \
      optest_what = e.what();                                                                         \
    }                                                                                                 \
    if (!optest_threw) ::optest::fail(__FILE__, __LINE__, "expected op::Error from " #expr);          \
    if (optest_what.find(substring) == std::string::npos)                                             \
      ::optest::fail(__FILE__, __LINE__,                                                              \
                     "error message lacks '" + std::string(substring) + "':\n    " + optest_what);    \
  } while (0)
