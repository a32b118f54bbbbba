// Everything registered for one operator (its def and its kernels by dispatch key) and the
// dispatch table computed from that plus the backend fallbacks.
//
// The table is a pure function of the registered set (see compute() in the .cpp), recomputed
// after every change, which is what makes registration order-independent.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/dispatch_key_set.h"
#include "dispatch/kernel_function.h"
#include "dispatch/schema.h"

namespace op {

struct RegisteredKernel {
  KernelFunction kernel;
  std::string debug;                     // the label dumps and errors show
  std::optional<FunctionSchema> schema;  // when impl() was given a full schema
  uint64_t id = 0;                       // identifies the registration for its handle
};

struct RegisteredSchema {
  FunctionSchema schema;
  std::string debug;
  uint64_t id = 0;
};

// Backend fallbacks by runtime key (shared by all operators of a Dispatcher).
using Fallbacks = std::array<std::optional<RegisteredKernel>, kDispatchTableSize>;

// Why a table slot holds what it holds.
enum class TableSource : uint8_t {
  Missing,             // nothing: a call reaching this key is an error
  DefaultFallthrough,  // nothing, but the key passes through (autograd keys, ADInplaceOrView, BackendSelect)
  Direct,              // a kernel registered at this key
  CompositeExplicitAutogradNonFunctional,
  CompositeExplicitAutograd,
  CompositeImplicitAutograd,
  Autograd,            // the Autograd alias key
  Fallback,            // the key's backend fallback
};
const char* to_string(TableSource s);

class OperatorEntry {
 public:
  explicit OperatorEntry(OperatorName name);

  const OperatorName& name() const { return name_; }
  bool has_schema() const { return def_.has_value(); }
  const FunctionSchema& schema() const;  // throws op::Error when there is no def
  const std::optional<RegisteredSchema>& def() const { return def_; }
  const std::map<DispatchKey, RegisteredKernel>& kernels() const { return kernels_; }
  bool empty() const { return !def_ && kernels_.empty(); }

  // ----- calls -----
  template <class Ret, class... Args>
  Ret dispatch(const OperatorHandle& op, DispatchKeySet ks, Args... args) const {
    const DispatchKey key = (ks & mask_).highest();
    const KernelFunction& kernel = table_[index_of(key)];
    if (__builtin_expect(!kernel.is_valid(), 0)) report_missing(key, ks);
    return kernel.template call<Ret, Args...>(op, ks.at_or_below(key), std::forward<Args>(args)...);
  }
  // Boxed: checks the stack against the schema before and after the kernel runs.
  void dispatch_boxed(const OperatorHandle& op, DispatchKeySet ks, Stack* stack) const;
  void check_boxed_arguments(const Stack& stack) const;
  DispatchKeySet boxed_key_set(const Stack& stack) const;  // union of the tensor arguments' keys
  [[noreturn]] void report_missing(DispatchKey key, DispatchKeySet ks) const;

  // ----- registration (the Dispatcher serialises these) -----
  // check_* throw op::Error for a registration that conflicts with the active ones; they
  // compare the new registration with each active one, so what is accepted depends only on
  // the active set. add_*/remove_* never throw.
  void check_def(const FunctionSchema& schema, const std::string& debug) const;
  void add_def(RegisteredSchema def);
  bool remove_def(uint64_t id);
  void check_impl(DispatchKey key, const RegisteredKernel& kernel) const;
  void add_impl(DispatchKey key, RegisteredKernel kernel);
  bool remove_impl(DispatchKey key, uint64_t id);
  void update_table(const Fallbacks& fallbacks);

  // ----- introspection -----
  std::string dump(const Fallbacks& fallbacks) const;
  // Runtime key name -> label of what it resolves to, sorted by key name; keys with nothing
  // (missing or passing through by default) are absent.
  std::vector<std::pair<std::string, std::string>> dump_table() const;
  void check_invariants(const Fallbacks& fallbacks) const;

 private:
  struct Table {
    DispatchKeySet mask;  // keys a call may stop at: everything but fallthrough entries
    std::array<KernelFunction, kDispatchTableSize> kernels;
    std::array<TableSource, kDispatchTableSize> sources{};
    std::array<std::string, kDispatchTableSize> labels;
  };
  Table compute(const Fallbacks& fallbacks) const;
  const RegisteredKernel* find(DispatchKey key) const;

  // Hot data first.
  DispatchKeySet mask_;
  std::array<KernelFunction, kDispatchTableSize> table_;
  std::array<TableSource, kDispatchTableSize> sources_{};
  std::array<std::string, kDispatchTableSize> labels_;

  OperatorName name_;
  std::optional<RegisteredSchema> def_;
  std::map<DispatchKey, RegisteredKernel> kernels_;  // at most one per key (runtime or alias)
  std::vector<size_t> tensor_arguments_;             // schema positions that can hold tensors
};

// The schema's argument and return kinds, "(Tensor, int) -> Tensor", to compare with a
// kernel's CppSignature::kinds_str().
std::string schema_kinds(const FunctionSchema& schema);

}  // namespace op
