#include "dispatch/operator_handle.h"

namespace op {

void OperatorHandle::check_signature(const CppSignature& sig) const {
  const FunctionSchema& s = schema();
  std::string want = schema_kinds(s), have = sig.kinds_str();
  OP_CHECK(want == have, name(), ": typed<", sig.type_name(), ">() does not match the schema '", s.str(), "': it takes ",
           have, " but the schema has ", want);
}

void OperatorHandle::call_boxed(Stack& stack) const {
  entry_->dispatch_boxed(*this, compute_dispatch_key_set(entry_->boxed_key_set(stack)), &stack);
}

void OperatorHandle::redispatch_boxed(DispatchKeySet ks, Stack& stack) const { entry_->dispatch_boxed(*this, ks, &stack); }

}  // namespace op
