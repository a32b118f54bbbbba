// opgen: backward only (opgen/selection/sources.py: an inference-only selection keeps no operator it calls)
#include "autograd/accumulate_grad.h"

#include <utility>

#include "autograd/autograd_meta.h"
#include "autograd/grad_mode.h"
#include "autograd/helpers.h"
#include "core/error.h"
#include "ops/add.h"
#include "ops/add_ops.h"
#include "ops/clone.h"

namespace op::autograd {

AccumulateGrad::AccumulateGrad(TensorBase variable)
    : Node(std::numeric_limits<uint64_t>::max()), variable_(std::move(variable)) {
  add_input_metadata(variable_);
}

const HookList<TensorHook>* AccumulateGrad::leaf_hooks() const {
  const AutogradMeta* meta = get_autograd_meta(variable_);
  return meta != nullptr ? meta->hooks.get() : nullptr;
}

variable_list AccumulateGrad::apply(variable_list&& grads) {
  OP_CHECK(grads.size() == 1, name(), ": expected 1 gradient, got ", grads.size());
  TensorBase incoming = std::move(grads[0]);
  grads.clear();
  if (!incoming.defined()) return {};
  incoming = sum_to(incoming, variable_.sizes());
  AutogradMeta& meta = materialize_autograd_meta(variable_);
  if (GradMode::is_enabled()) {
    // create_graph: .grad keeps the gradient's history, replaced out of place, never updated in
    // place (a graph may hold the old value), as PyTorch does.
    meta.grad = meta.grad.defined() ? op::add(meta.grad, incoming) : op::clone(incoming);
    return {};
  }
  if (!meta.grad.defined()) {
    // Kept as is only when nothing else holds it (neither the tensor nor its memory): a gradient
    // handed to several edges, or the caller's grad_output, is copied before later additions
    // change it in place.
    bool unshared = incoming.use_count() == 1 && incoming.storage().use_count() == 1 &&
                    get_autograd_meta(incoming) == nullptr;
    meta.grad = unshared ? incoming : op::clone(detach(incoming));
  } else {
    ops::add__Tensor::call(meta.grad, incoming, 1);  // in place: a caller holding .grad sees the sum
  }
  return {};
}

}  // namespace op::autograd
