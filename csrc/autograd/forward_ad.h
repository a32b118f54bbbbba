// Forward-mode automatic differentiation (PyTorch's forward AD, one level): a tensor may carry a
// tangent (its forward gradient) in its AutogradMeta while a dual level is entered; the generated
// Autograd kernels compute their outputs' tangents from derivatives.yaml's forward formulas
// (`result:`, auto_element_wise, auto_linear) whenever an input has one. Exiting the level drops
// every tangent set in it. Nested levels are refused, as PyTorch refuses them today.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/array_ref.h"
#include "core/tensor.h"

namespace op::autograd {

// Enters the (only) dual level and returns its number, 0. Throws op::Error "Nested forward mode
// AD is not supported at the moment" while one is entered.
int64_t enter_dual_level();
// Exits `level` (it must be the current one) and clears the tangents set in it.
void exit_dual_level(int64_t level);
// The current level, or -1 outside any.
int64_t current_dual_level();

// t's tangent at the current level: undefined when it has none, outside a level, or while a
// ForwardADDisabled guard lives (generated formulas run under one).
TensorBase fw_grad(const TensorBase& t);
bool has_fw_grad(const TensorBase& t);
// Sets (or, undefined, clears) t's tangent at the current level; checks size and dtype
// ("Trying to set a forward gradient that has a different size ...").
void set_fw_grad(const TensorBase& t, const TensorBase& tangent);
// PyTorch's make_dual: an alias (view) of primal, with its autograd history, carrying tangent.
TensorBase make_dual(const TensorBase& primal, const TensorBase& tangent);
// The primal of a dual tensor: an alias (view) of t without its tangent.
TensorBase primal_alias(const TensorBase& t);

// While alive, tangents are invisible (has_fw_grad is false): the generated forward formulas
// compute a tangent from primals and tangents with ordinary operators under it, so those calls
// compute no tangents of their own.
struct ForwardADDisabled {
  ForwardADDisabled();
  ~ForwardADDisabled();
  ForwardADDisabled(const ForwardADDisabled&) = delete;
  ForwardADDisabled& operator=(const ForwardADDisabled&) = delete;

 private:
  bool previous_;
};

// Turns the hiding of tangents on this thread off (true) or on (false), returning the previous
// setting: what a custom Function's forward runs under (PyTorch's AutoFwGradMode(false)).
bool set_forward_ad_enabled(bool enabled);

// Whether forward AD could be active: a level is entered and no guard hides tangents (the
// generated kernels' cheap first test).
bool forward_ad_active();

namespace detail {
inline bool any_fw_grad(const TensorBase& t) { return t.defined() && has_fw_grad(t); }
inline bool any_fw_grad(const std::optional<TensorBase>& t) { return t.has_value() && any_fw_grad(*t); }
inline bool any_fw_grad(ArrayRef<TensorBase> list) {
  for (const TensorBase& t : list)
    if (any_fw_grad(t)) return true;
  return false;
}
inline bool any_fw_grad(const std::vector<TensorBase>& list) { return any_fw_grad(ArrayRef<TensorBase>(list)); }
inline bool any_fw_grad(ArrayRef<std::optional<TensorBase>> list) {
  for (const std::optional<TensorBase>& t : list)
    if (any_fw_grad(t)) return true;
  return false;
}
}  // namespace detail

// Whether any argument carries a tangent (false at once outside a level).
template <class... Ts>
bool any_fw_grad_defined(const Ts&... args) {
  if (!forward_ad_active()) return false;
  return (detail::any_fw_grad(args) || ...);
}

// t's tangent, or zeros like t (what a formula's `<arg>_t` is for an input without one).
TensorBase fw_grad_or_zeros(const TensorBase& t);

// op::Error "Trying to use forward AD with <name> that does not support it because it has not
// been implemented yet." (PyTorch's words, with `reason`: "it has not been implemented yet",
// "it is an out= function").
[[noreturn]] void throw_fw_not_implemented(const char* name, const char* reason = "it has not been implemented yet");

}  // namespace op::autograd

namespace op::autograd {

// What a generated kernel calls with an output's tangent: set_fw_grad, after giving a tangent
// that broadcasts to the output or has another dtype the output's size and dtype.
void set_fw_grad_of_output(const TensorBase& output, const TensorBase& tangent);
// A list output's (split's, unbind's): each output its tangent, the lists of one length.
void set_fw_grad_of_output(const std::vector<TensorBase>& outputs, const std::vector<TensorBase>& tangents);
// An in-place kernel's: self's existing tangent is overwritten in place (PyTorch's
// `self_t.copy_(...)`), so that when self is a view whose tangent is a view of its base's, the
// base's tangent changes with it; without one, set_fw_grad_of_output.
void set_fw_grad_inplace(const TensorBase& self, const TensorBase& tangent);

}  // namespace op::autograd
