// A kernel as the dispatch table stores it: an optional typed entry point (the fast path:
// one indirect call, no boxing) and a boxed entry point that works on an IValue stack.
// Typed kernels get both (the boxed one is generated); boxed kernels get only the boxed one
// and are reached from typed calls by boxing the arguments.
#pragma once

#include <functional>
#include <memory>
#include <tuple>
#include <typeinfo>
#include <utility>

#include "core/dispatch_key_set.h"
#include "core/ivalue.h"
#include "dispatch/boxing.h"
#include "dispatch/cpp_signature.h"

namespace op {

class OperatorHandle;

// Base of kernel state (a stored function pointer, a lambda's captures, a Python callable).
struct OperatorKernel {
  virtual ~OperatorKernel() = default;
};

using BoxedKernelFn = void (*)(OperatorKernel* functor, const OperatorHandle& op, DispatchKeySet ks, Stack* stack);
// A boxed kernel: pops the operator's arguments off the stack and pushes its results. ks is
// the call's key set with the current key as its highest (ks.without_highest() redispatches).
using BoxedFunction = std::function<void(const OperatorHandle& op, DispatchKeySet ks, Stack* stack)>;

namespace detail {

using AnyFn = void (*)();

template <auto fn, bool WithKeySet>
struct StaticFn {
  template <class... A>
  static decltype(auto) invoke(OperatorKernel*, DispatchKeySet ks, A&&... args) {
    if constexpr (WithKeySet)
      return fn(ks, std::forward<A>(args)...);
    else
      return fn(std::forward<A>(args)...);
  }
};

template <class F, bool WithKeySet>
struct StoredFn final : OperatorKernel {
  explicit StoredFn(F f) : f(std::move(f)) {}
  template <class... A>
  static decltype(auto) invoke(OperatorKernel* k, DispatchKeySet ks, A&&... args) {
    F& self = static_cast<StoredFn*>(k)->f;
    if constexpr (WithKeySet)
      return self(ks, std::forward<A>(args)...);
    else
      return self(std::forward<A>(args)...);
  }
  F f;
};

// The uniform entry points the table stores for a typed callable.
template <class Callable, class R, class ArgList>
struct Trampoline;
template <class Callable, class R, class... A>
struct Trampoline<Callable, R, TypeList<A...>> {
  using Sig = R(A...);
  static R unboxed(OperatorKernel* k, DispatchKeySet ks, A... args) {
    return Callable::invoke(k, ks, std::forward<A>(args)...);
  }
  static void boxed(OperatorKernel* k, const OperatorHandle&, DispatchKeySet ks, Stack* stack) {
    boxing::run_unboxed_on_stack<R, A...>(&unboxed, k, ks, stack);
  }
};

template <auto fn>
struct StaticBoxed {
  static void call(OperatorKernel*, const OperatorHandle& op, DispatchKeySet ks, Stack* stack) { fn(op, ks, stack); }
};

struct StoredBoxed final : OperatorKernel {
  explicit StoredBoxed(BoxedFunction f) : f(std::move(f)) {}
  static void call(OperatorKernel* k, const OperatorHandle& op, DispatchKeySet ks, Stack* stack) {
    static_cast<StoredBoxed*>(k)->f(op, ks, stack);
  }
  BoxedFunction f;
};

// The boxed entry of fallthrough kernels; the dispatcher never calls it (fallthrough keys are
// masked out before lookup), so reaching it is a bug and throws.
void fallthrough_marker(OperatorKernel*, const OperatorHandle& op, DispatchKeySet ks, Stack*);

}  // namespace detail

class KernelFunction {
 public:
  KernelFunction() = default;  // invalid: "no kernel"

  // Skip to the next key below.
  static KernelFunction fallthrough() { return KernelFunction(nullptr, &detail::fallthrough_marker, nullptr, nullptr); }

  // A typed function known at compile time: the fast path inlines it into the trampoline.
  //   KernelFunction::make<&add_cpu>()
  template <auto fn>
  static KernelFunction make();
  // A typed function pointer or lambda (stateful lambdas too), called through one more pointer.
  template <class F>
  static KernelFunction from_unboxed(F f);
  // Boxed kernels: void(const OperatorHandle&, DispatchKeySet, Stack*).
  template <auto fn>
  static KernelFunction make_boxed() {
    return KernelFunction(nullptr, &detail::StaticBoxed<fn>::call, nullptr, nullptr);
  }
  static KernelFunction from_boxed(BoxedFunction fn) {
    return KernelFunction(std::make_shared<detail::StoredBoxed>(std::move(fn)), &detail::StoredBoxed::call, nullptr,
                          nullptr);
  }

  bool is_valid() const { return boxed_ != nullptr; }
  bool is_fallthrough() const { return boxed_ == &detail::fallthrough_marker; }
  bool has_unboxed() const { return unboxed_ != nullptr; }
  const CppSignature* cpp_signature() const { return sig_; }  // nullptr for boxed-only kernels
  // Identity (same entry points and state), for check_invariants.
  bool same_as(const KernelFunction& o) const {
    return boxed_ == o.boxed_ && unboxed_ == o.unboxed_ && functor_ == o.functor_;
  }
  // "unboxed+boxed", "boxed", "fallthrough"
  const char* describe() const;

  void call_boxed(const OperatorHandle& op, DispatchKeySet ks, Stack* stack) const {
    boxed_(functor_.get(), op, ks, stack);
  }

  // A typed call; Args must be exactly the kernel's parameter types (checked: a mismatch
  // throws op::Error instead of calling through a wrong function pointer type).
  template <class Ret, class... Args>
  Ret call(const OperatorHandle& op, DispatchKeySet ks, Args... args) const {
    if (__builtin_expect(unboxed_ != nullptr && *unboxed_type_ == typeid(Ret(Args...)), 1)) {
      auto fn = reinterpret_cast<Ret (*)(OperatorKernel*, DispatchKeySet, Args...)>(unboxed_);
      return fn(functor_.get(), ks, std::forward<Args>(args)...);
    }
    return call_slow<Ret, Args...>(op, ks, std::forward<Args>(args)...);
  }

 private:
  KernelFunction(std::shared_ptr<OperatorKernel> functor, BoxedKernelFn boxed, detail::AnyFn unboxed,
                 const CppSignature* sig)
      : functor_(std::move(functor)), boxed_(boxed), unboxed_(unboxed), unboxed_type_(sig ? sig->type : nullptr), sig_(sig) {}

  template <class Callable, class Traits>
  static KernelFunction typed(std::shared_ptr<OperatorKernel> functor);

  template <class Ret, class... Args>
  Ret call_slow(const OperatorHandle& op, DispatchKeySet ks, Args... args) const;
  [[noreturn]] void signature_mismatch(const OperatorHandle& op, const CppSignature& called) const;

  std::shared_ptr<OperatorKernel> functor_;
  BoxedKernelFn boxed_ = nullptr;
  detail::AnyFn unboxed_ = nullptr;
  const std::type_info* unboxed_type_ = nullptr;  // sig_->type, one indirection closer
  const CppSignature* sig_ = nullptr;
};

// ----- template definitions -----

template <class Callable, class Traits>
KernelFunction KernelFunction::typed(std::shared_ptr<OperatorKernel> functor) {
  using Drop = DropKeySet<typename Traits::Args>;
  using T = detail::Trampoline<Callable, typename Traits::Ret, typename Drop::type>;
  return KernelFunction(std::move(functor), &T::boxed, reinterpret_cast<detail::AnyFn>(&T::unboxed),
                        &cpp_signature_of<typename T::Sig>());
}

template <auto fn>
KernelFunction KernelFunction::make() {
  using Traits = FunctionTraits<std::remove_pointer_t<decltype(fn)>>;
  constexpr bool with_ks = DropKeySet<typename Traits::Args>::takes_key_set;
  return typed<detail::StaticFn<fn, with_ks>, Traits>(nullptr);
}

template <class F>
KernelFunction KernelFunction::from_unboxed(F f) {
  using D = std::decay_t<F>;
  using Traits = FunctionTraits<D>;
  constexpr bool with_ks = DropKeySet<typename Traits::Args>::takes_key_set;
  using Stored = detail::StoredFn<D, with_ks>;
  return typed<Stored, Traits>(std::make_shared<Stored>(std::move(f)));
}

template <class Ret, class... Args>
Ret KernelFunction::call_slow(const OperatorHandle& op, DispatchKeySet ks, Args... args) const {
  if (unboxed_ != nullptr) signature_mismatch(op, cpp_signature_of<Ret(Args...)>());
  Stack stack;
  stack.reserve(sizeof...(Args));
  (stack.push_back(boxing::box(args)), ...);
  call_boxed(op, ks, &stack);
  std::tuple<Args&...> refs(args...);
  return boxing::PopResults<Ret, Args...>::get(stack, refs);
}

}  // namespace op
