#include "autograd/saved_variable.h"

#include "autograd/autograd_meta.h"
#include "autograd/grad_mode.h"
#include "core/error.h"

namespace op::autograd {

const char kErrBackwardTwice[] =
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if "
    "you need to access saved tensors after calling backward.";

SavedVariable::SavedVariable(const TensorBase& t, bool is_output) : was_defined_(t.defined()) {
  if (!t.defined()) return;
  saved_version_ = version(t);
  output_nr_ = output_nr(t);
  const std::shared_ptr<Node>& fn = grad_fn(t);
  if (fn) producer_ = fn->name();
  // An output saved by its own node (a non-differentiable output has no history to restore).
  is_output_ = is_output && fn != nullptr;
  data_ = is_output ? detach(t) : t;
}

TensorBase SavedVariable::unpack(Node& saved_for) const {
  TensorBase t = unpack(saved_for.name());
  if (!is_output_ || !t.defined() || !GradMode::is_enabled()) return t;
  TensorBase with_history = detach(t);
  set_history(with_history, saved_for.shared_from_this(), output_nr_);
  return with_history;
}

TensorBase SavedVariable::unpack(const std::string& saved_for) const {
  if (freed_) fail(kErrBackwardTwice);
  if (!was_defined_) return TensorBase();
  uint32_t current = version(data_);
  if (current != saved_version_) {
    std::string message = "one of the variables needed for gradient computation has been modified by an inplace "
                          "operation: " + describe_tensor(data_);
    if (!producer_.empty()) message += str(", which is output ", output_nr_, " of ", producer_, ",");
    message += str(" is at version ", current, "; expected version ", saved_version_, " instead.");
    if (!saved_for.empty()) message += str(" (saved for ", saved_for, ")");
    message += " Hint: the backtrace further above can point to the operation that failed to compute its gradient. "
               "The variable in question was changed in there or anywhere later. Good luck!";
    fail(message);
  }
  return data_;
}

void SavedVariable::reset() {
  data_ = TensorBase();
  freed_ = true;
}

std::string describe_tensor(const TensorBase& t) {
  return str("[", to_string(t.dtype()), " tensor ", str_list(t.sizes()), "]");
}

}  // namespace op::autograd
