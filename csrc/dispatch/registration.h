// Library: a group of registrations made together and undone together, the unit generated
// code and Python register with:
//   Library(Library::DEF, "myops")       defines the namespace's operators (one per namespace)
//   Library(Library::FRAGMENT, "myops")  adds definitions to it from elsewhere
//   Library(Library::IMPL, "myops", DispatchKey::CPU)  registers kernels only
// and OP_LIBRARY / OP_LIBRARY_FRAGMENT / OP_LIBRARY_IMPL register one at static
// initialisation, as each generated translation unit does for its own operators.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "dispatch/dispatcher.h"

namespace op {

class Library {
 public:
  enum Kind { DEF, IMPL, FRAGMENT };

  // ns "_" with kind IMPL is for fallbacks only. `key` restricts an IMPL library to one key.
  Library(Kind kind, std::string ns, std::optional<DispatchKey> key = std::nullopt, std::string file = "",
          int line = 0, Dispatcher* dispatcher = &Dispatcher::singleton());
  ~Library() { close(); }
  Library(Library&&) = default;
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  // Schema without the namespace ("add(Tensor a, Tensor b) -> Tensor") or with this one.
  Library& def(const std::string& schema, const std::string& debug = "");
  // def + a CompositeImplicitAutograd kernel, for operators written in terms of others.
  Library& def(const std::string& schema, KernelFunction kernel, const std::string& debug = "");
  Library& impl(const std::string& name, DispatchKey key, KernelFunction kernel, const std::string& debug = "");
  Library& impl(const std::string& name, KernelFunction kernel, const std::string& debug = "");  // at the library's key
  Library& fallback(DispatchKey key, KernelFunction kernel, const std::string& debug = "");
  Library& fallback(KernelFunction kernel, const std::string& debug = "");  // at the library's key

  // Undoes every registration of this library (in reverse order; any order would do).
  void close();
  Kind kind() const { return kind_; }
  const std::string& ns() const { return ns_; }
  size_t num_registrations() const { return handles_.size(); }

 private:
  std::string qualify(const std::string& name) const;
  std::string where() const;
  DispatchKey key_or(std::optional<DispatchKey> key, const char* what) const;

  Kind kind_;
  std::string ns_;
  std::optional<DispatchKey> key_;
  std::string file_;
  int line_;
  Dispatcher* dispatcher_;
  std::vector<RegistrationHandle> handles_;
};

namespace detail {

// Runs a registration function at static initialisation and keeps its library alive.
// A failure is printed and recorded (static_registration_errors) instead of terminating,
// so a broken library reports the problem when it is loaded.
class StaticLibrary {
 public:
  StaticLibrary(Library::Kind kind, const char* ns, std::optional<DispatchKey> key, void (*init)(Library&),
                const char* file, int line);
  ~StaticLibrary();  // out of line: every generated file has one (docs/benchmarks.md, compile time)

 private:
  std::optional<Library> library_;
};

}  // namespace detail

// Messages of static registrations that failed in this process (empty when all succeeded).
std::vector<std::string> static_registration_errors();

}  // namespace op

#define OP_CONCAT_INNER(a, b) a##b
#define OP_CONCAT(a, b) OP_CONCAT_INNER(a, b)

#define OP_LIBRARY(ns, m) OP_LIBRARY_STATIC_(::op::Library::DEF, ns, std::nullopt, m, __COUNTER__)
#define OP_LIBRARY_FRAGMENT(ns, m) OP_LIBRARY_STATIC_(::op::Library::FRAGMENT, ns, std::nullopt, m, __COUNTER__)
#define OP_LIBRARY_IMPL(ns, key, m) \
  OP_LIBRARY_STATIC_(::op::Library::IMPL, ns, ::op::DispatchKey::key, m, __COUNTER__)

#define OP_LIBRARY_STATIC_(kind, ns, key, m, uid)                                                             \
  static void OP_CONCAT(op_library_init_, uid)(::op::Library&);                                               \
  static const ::op::detail::StaticLibrary OP_CONCAT(op_library_static_, uid)(                                \
      kind, #ns, key, &OP_CONCAT(op_library_init_, uid), __FILE__, __LINE__);                                 \
  void OP_CONCAT(op_library_init_, uid)(::op::Library & m)
