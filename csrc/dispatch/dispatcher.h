// The operator registry: definitions, kernels and backend fallbacks, and lookup of operators
// by name. Registration is commutative and reversible: every registration returns a handle
// that undoes exactly it, a conflicting registration throws and changes nothing, and the state
// (dump, dump_table, calls) depends only on the set of active registrations.
//
// Registration is serialised by a mutex; calls read the tables without locking, so do not
// register kernels for an operator while other threads call it (static initialisers and
// library loading are the intended times to register).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dispatch/kernel_function.h"
#include "dispatch/operator_entry.h"
#include "dispatch/operator_handle.h"
#include "dispatch/registration_handle.h"

namespace op {

class Dispatcher {
 public:
  Dispatcher();  // an independent registry (tests); most code uses singleton()
  ~Dispatcher();
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  static Dispatcher& singleton();  // never destroyed: static registrations may outlive main()

  // def("ns::name.overload(Tensor self) -> Tensor"). Throws op::Error if the schema does not
  // parse, has no namespace, or the operator is already defined.
  RegistrationHandle def(const std::string& schema, const std::string& debug = "");
  // A kernel for an operator at a runtime or alias key. `name` is "ns::name.overload" or a
  // full schema, which must then agree with the def. Allowed before the def. Throws op::Error
  // if the operator already has a kernel at that key or the kernel's signature conflicts.
  RegistrationHandle impl(const std::string& name, DispatchKey key, KernelFunction kernel,
                          const std::string& debug = "");
  // A boxed kernel (or KernelFunction::fallthrough()) for every operator without a kernel at
  // the runtime key `key`. One per key.
  RegistrationHandle fallback(DispatchKey key, KernelFunction kernel, const std::string& debug = "");
  // Reserves a namespace for one DEF library (Library's "only one definer" rule).
  RegistrationHandle claim_namespace(const std::string& ns, const std::string& debug = "");

  // Operators that have a def. Names are "ns::name" or "ns::name.overload".
  std::optional<OperatorHandle> find_op(const std::string& name) const;
  OperatorHandle find_op_or_throw(const std::string& name) const;
  // All defined overloads of "ns::name", sorted by overload name.
  std::vector<OperatorHandle> find_overloads(const std::string& qualified_name) const;
  std::vector<std::string> op_names() const;  // sorted
  // Changes whenever a registration is made or released, so callers that cache lookups
  // (Python's overload resolution) know when to look again.
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }

  // Introspection for tests; an operator never registered reads like one with nothing left.
  std::string dump(const std::string& name) const;
  std::vector<std::pair<std::string, std::string>> dump_table(const std::string& name) const;
  void check_invariants(const std::string& name) const;  // throws op::Error when broken

 private:
  OperatorEntry& entry_for(const OperatorName& name);  // creates; caller holds the lock
  const OperatorEntry* find_entry(const std::string& name) const;
  void update_all_tables();
  uint64_t next_id() {  // called once per registration, just before it takes effect
    generation_.fetch_add(1, std::memory_order_acq_rel);
    return next_id_++;
  }
  template <class Undo>
  RegistrationHandle handle(Undo undo);

  mutable std::mutex mutex_;
  // Entries are never erased (handles point at them); an entry with nothing registered
  // behaves and dumps like an unknown operator.
  std::map<std::string, std::unique_ptr<OperatorEntry>> ops_;
  Fallbacks fallbacks_;
  std::map<std::string, std::pair<uint64_t, std::string>> namespaces_;
  uint64_t next_id_ = 1;
  std::atomic<uint64_t> generation_{0};
  std::shared_ptr<int> alive_;  // handles hold a weak_ptr: releasing after the dispatcher died is a no-op
};

// What the operator handles of a group a selective build left out look their operator up with
// (ops/<g>_schema.cpp compiled for a backward-only runtime source, when nothing selected is
// used for training): raises that the operator is not in this build, naming the selection.
[[noreturn]] OperatorHandle left_out_operator(const char* name, const char* selection);

}  // namespace op
