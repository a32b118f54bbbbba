#include "dispatch/operator_handle.h"

namespace op {

void OperatorHandle::check_signature(const CppSignature& sig) const {
  const FunctionSchema& s = schema();
  std::string want = schema_kinds(s), have = sig.kinds_str();
  OP_CHECK(want == have, name(), ": typed<", sig.type_name(), ">() does not match the schema '", s.str(), "': it takes ",
           have, " but the schema has ", want);
}

namespace {

// Out of line, so that the call path when nothing records keeps its shape.
__attribute__((noinline, cold)) void call_boxed_recorded(const OperatorHandle& op, Stack& stack) {
  recording::CallScope recorded(op.entry());
  op.entry().dispatch_boxed(op, compute_dispatch_key_set(op.entry().boxed_key_set(stack)), &stack);
}

}  // namespace

void OperatorHandle::call_boxed(Stack& stack) const {
  if (recording::active()) return call_boxed_recorded(*this, stack);
  entry_->dispatch_boxed(*this, compute_dispatch_key_set(entry_->boxed_key_set(stack)), &stack);
}

void OperatorHandle::redispatch_boxed(DispatchKeySet ks, Stack& stack) const { entry_->dispatch_boxed(*this, ks, &stack); }

}  // namespace op
