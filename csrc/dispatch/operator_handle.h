// Handles to operators for calling them: OperatorHandle for boxed calls, and
// TypedOperatorHandle<Ret(Args...)> for the typed fast path:
//   static auto add = Dispatcher::singleton().find_op_or_throw("ns::add.Tensor")
//                        .typed<TensorBase(const TensorBase&, const TensorBase&, const Scalar&)>();
//   TensorBase out = add.call(a, b, 1);
#pragma once

#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "dispatch/local_dispatch_key_set.h"
#include "dispatch/operator_entry.h"
#include "dispatch/operator_recorder.h"

namespace op {

template <class Sig>
class TypedOperatorHandle;

class OperatorHandle {
 public:
  explicit OperatorHandle(OperatorEntry* entry) : entry_(entry) {}

  std::string name() const { return entry_->name().str(); }
  const OperatorName& operator_name() const { return entry_->name(); }
  bool has_schema() const { return entry_->has_schema(); }
  const FunctionSchema& schema() const { return entry_->schema(); }
  OperatorEntry& entry() const { return *entry_; }

  // Checks Sig against the schema's argument and return kinds once, here.
  template <class Sig>
  TypedOperatorHandle<Sig> typed() const {
    check_signature(cpp_signature_of<Sig>());
    return TypedOperatorHandle<Sig>(entry_);
  }

  // Boxed call: the stack holds exactly the schema's arguments in order (defaults filled in)
  // and holds the results afterwards. Arguments and results are checked against the schema.
  // A call (not a redispatch) is what an OperatorRecorder records (operator_recorder.h).
  void call_boxed(Stack& stack) const;
  // The same, dispatching on ks as given (no thread-local sets applied): used by kernels to
  // continue below their own key, e.g. op.redispatch_boxed(ks.without_highest(), stack).
  void redispatch_boxed(DispatchKeySet ks, Stack& stack) const;

  bool operator==(const OperatorHandle& other) const { return entry_ == other.entry_; }
  bool operator!=(const OperatorHandle& other) const { return entry_ != other.entry_; }

 protected:
  void check_signature(const CppSignature& sig) const;
  OperatorEntry* entry_;
};

namespace detail {

template <class T>
void add_argument_keys(DispatchKeySet& ks, const T& arg) {
  using D = std::decay_t<T>;
  if constexpr (std::is_same_v<D, TensorBase>) {
    ks = ks | arg.key_set();
  } else if constexpr (std::is_same_v<D, std::optional<TensorBase>>) {
    if (arg) ks = ks | arg->key_set();
  } else if constexpr (std::is_same_v<D, ArrayRef<TensorBase>> || std::is_same_v<D, std::vector<TensorBase>>) {
    for (const TensorBase& t : arg) ks = ks | t.key_set();
  } else if constexpr (std::is_same_v<D, ArrayRef<std::optional<TensorBase>>> ||
                       std::is_same_v<D, std::vector<std::optional<TensorBase>>>) {
    for (const auto& t : arg)
      if (t) ks = ks | t->key_set();
  }
}

template <class... Args>
DispatchKeySet arguments_key_set(const Args&... args) {
  DispatchKeySet ks;
  (add_argument_keys(ks, args), ...);
  return ks;
}

}  // namespace detail

template <class Ret, class... Args>
class TypedOperatorHandle<Ret(Args...)> : public OperatorHandle {
 public:
  // Key set = the tensors' keys ∪ includes − excludes; then the highest key with an entry runs.
  // While an OperatorRecorder is active the call is recorded (out of line: the fast path pays
  // one relaxed load and a branch predicted not taken).
  Ret call(Args... args) const {
    if (recording::active()) return call_recorded(std::forward<Args>(args)...);
    const DispatchKeySet ks = compute_dispatch_key_set(detail::arguments_key_set(args...));
    return entry_->template dispatch<Ret, Args...>(*this, ks, std::forward<Args>(args)...);
  }
  // Dispatch on ks as given; kernels pass ks.without_highest() to continue below themselves.
  Ret redispatch(DispatchKeySet ks, Args... args) const {
    return entry_->template dispatch<Ret, Args...>(*this, ks, std::forward<Args>(args)...);
  }

 private:
  friend class OperatorHandle;
  explicit TypedOperatorHandle(OperatorEntry* entry) : OperatorHandle(entry) {}

  __attribute__((noinline, cold)) Ret call_recorded(Args... args) const {
    recording::CallScope recorded(*entry_);
    const DispatchKeySet ks = compute_dispatch_key_set(detail::arguments_key_set(args...));
    return entry_->template dispatch<Ret, Args...>(*this, ks, std::forward<Args>(args)...);
  }
};

}  // namespace op
