#include "autograd/forward_ad.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "autograd/autograd_meta.h"
#include "autograd/grad_mode.h"
#include "core/error.h"
#include "ops/as_strided_ops.h"
#include "ops/copy_ops.h"
#include "ops/zeros.h"
#include "ops/view_ops.h"
#include "ops/zeros_like.h"

namespace op::autograd {

namespace {

std::mutex level_mutex;
std::atomic<int64_t> level{-1};
// The metas given a tangent in the current level, cleared when it exits.
std::vector<std::weak_ptr<AutogradMetaInterface>> dual_metas;
thread_local bool disabled = false;

// PyTorch's "same feature meta" rule: a tangent is laid out like its primal (strides, storage
// offset, storage size), so that as_strided and views address the tangent's elements as they
// address the primal's. A tangent laid out otherwise is copied into one that is.
TensorBase laid_out_like(const TensorBase& t, const TensorBase& tangent) {
  if (t.numel() == 0 || t.storage().nbytes() == 0) return tangent;  // lazy tensors have no storage
  const int64_t storage_numel = static_cast<int64_t>(t.storage().nbytes() / t.itemsize());
  if (tangent.strides() == t.strides() && tangent.storage_offset() == t.storage_offset() &&
      static_cast<int64_t>(tangent.storage().nbytes() / tangent.itemsize()) == storage_numel)
    return tangent;
  ForwardADDisabled hide;
  TensorBase flat = op::zeros({storage_numel}, t.dtype(), std::nullopt, t.device());
  TensorBase out = ops::as_strided::call(flat, t.sizes(), t.strides(), t.storage_offset());
  ops::copy_::call(out, tangent, false);
  return out;
}

}  // namespace

int64_t enter_dual_level() {
  std::lock_guard<std::mutex> lock(level_mutex);
  OP_CHECK(level.load() < 0, "Nested forward mode AD is not supported at the moment");
  level = 0;
  return 0;
}

void exit_dual_level(int64_t exited) {
  std::vector<std::weak_ptr<AutogradMetaInterface>> metas;
  {
    std::lock_guard<std::mutex> lock(level_mutex);
    OP_CHECK(level.load() >= 0 && exited == level.load(), "Trying to exit a forward AD level that was not the last one "
             "that was created. This is not supported.");
    metas.swap(dual_metas);
    level = -1;
  }
  for (const auto& weak : metas) {
    if (auto meta = weak.lock()) static_cast<AutogradMeta&>(*meta).fw_grad = TensorBase();
  }
}

int64_t current_dual_level() { return level.load(); }

bool forward_ad_active() { return level.load(std::memory_order_relaxed) >= 0 && !disabled; }

TensorBase fw_grad(const TensorBase& t) {
  if (!forward_ad_active()) return TensorBase();
  AutogradMeta* meta = get_autograd_meta(t);
  return meta != nullptr ? meta->fw_grad : TensorBase();
}

bool has_fw_grad(const TensorBase& t) {
  if (!forward_ad_active()) return false;
  AutogradMeta* meta = get_autograd_meta(t);
  return meta != nullptr && meta->fw_grad.defined();
}

void set_fw_grad(const TensorBase& t, const TensorBase& tangent) {
  OP_CHECK(t.defined(), "forward AD: setting the tangent of an undefined tensor");
  if (!tangent.defined()) {
    if (AutogradMeta* meta = get_autograd_meta(t)) meta->fw_grad = TensorBase();
    return;
  }
  OP_CHECK(level.load() >= 0, "Trying to set a forward gradient but no level exists, make sure to enter_dual_level() first.");
  OP_CHECK(tangent.sizes() == t.sizes(), "Trying to set a forward gradient that has a different size than that of the "
           "original Tensor, this is not supported. Tensor is of size ", str_list(t.sizes()),
           " while the given forward gradient is of size ", str_list(tangent.sizes()), ".");
  OP_CHECK(tangent.dtype() == t.dtype(), "Expected tangent to have the same dtype as the primal: ",
           to_string(tangent.dtype()), " vs ", to_string(t.dtype()));
  OP_CHECK(tangent.device() == t.device(), "Expected tangent to be on the same device as the primal: ",
           tangent.device().str(), " vs ", t.device().str());
  materialize_autograd_meta(t);
  TensorBase laid_out = laid_out_like(t, tangent);
  const std::shared_ptr<AutogradMetaInterface>& shared = t.unsafe_impl()->autograd_meta;
  auto& meta = static_cast<AutogradMeta&>(*shared);
  const bool had = meta.fw_grad.defined();
  meta.fw_grad = laid_out;
  if (!had) {
    std::lock_guard<std::mutex> lock(level_mutex);
    dual_metas.emplace_back(shared);
  }
}

TensorBase primal_alias(const TensorBase& t) {
  ForwardADDisabled hide;
  return ops::view::call(t, t.sizes());
}

TensorBase make_dual(const TensorBase& primal, const TensorBase& tangent) {
  OP_CHECK(level.load() >= 0, "Trying to create a dual Tensor for forward AD but no level exists, make sure to "
           "enter_dual_level() first.");
  OP_CHECK(tangent.defined(), "make_dual: the tangent is undefined");
  OP_CHECK(is_floating(primal.dtype()), "Expected primal to be floating point or complex, but got: ",
           to_string(primal.dtype()));
  OP_CHECK(is_floating(tangent.dtype()), "Expected tangent to be floating point or complex, but got: ",
           to_string(tangent.dtype()));
  TensorBase dual = primal_alias(primal);
  set_fw_grad(dual, tangent);
  return dual;
}

bool set_forward_ad_enabled(bool enabled) {
  const bool previous = !disabled;
  disabled = !enabled;
  return previous;
}

ForwardADDisabled::ForwardADDisabled() : previous_(disabled) { disabled = true; }
ForwardADDisabled::~ForwardADDisabled() { disabled = previous_; }

TensorBase fw_grad_or_zeros(const TensorBase& t) {
  TensorBase tangent = fw_grad(t);
  if (tangent.defined()) return tangent;
  ForwardADDisabled hide;
  return op::zeros_like(t);
}

void set_fw_grad_of_output(const TensorBase& output, const TensorBase& tangent) {
  if (!output.defined() || !tangent.defined()) return;
  if (!is_floating(output.dtype())) return;  // an integral output carries no tangent
  if (tangent.sizes() == output.sizes() && tangent.dtype() == output.dtype()) {
    set_fw_grad(output, tangent);
    return;
  }
  TensorBase fitted;
  {
    ForwardADDisabled hide;
    fitted = op::zeros_like(output);
    ops::copy_::call(fitted, tangent, false);  // broadcast to output's size, converted to its dtype
  }
  set_fw_grad(output, fitted);
}

void set_fw_grad_of_output(const std::vector<TensorBase>& outputs, const std::vector<TensorBase>& tangents) {
  OP_CHECK(outputs.size() == tangents.size(), "forward AD: a list output of ", outputs.size(), " tensors got ",
           tangents.size(), " tangents");
  for (size_t i = 0; i < outputs.size(); ++i) set_fw_grad_of_output(outputs[i], tangents[i]);
}

void set_fw_grad_inplace(const TensorBase& self, const TensorBase& tangent) {
  if (!self.defined() || !tangent.defined() || !is_floating(self.dtype())) return;
  AutogradMeta* meta = get_autograd_meta(self);
  TensorBase existing = meta != nullptr ? meta->fw_grad : TensorBase();
  if (existing.defined() && existing.sizes() == self.sizes()) {
    if (existing.unsafe_impl() != tangent.unsafe_impl()) {
      ForwardADDisabled hide;
      ops::copy_::call(existing, tangent, false);
    }
    return;
  }
  if (meta != nullptr && meta->view != nullptr && !existing.defined()) {
    // A view changed in place whose base has no tangent (PyTorch's rule): the base gets zeros, the
    // view a view of them at its own geometry (tangents are laid out like their primals), and the
    // new values are written through it, so the base's tangent sees them.
    const TensorBase& base = meta->view->base;
    AutogradMeta* base_meta = get_autograd_meta(base);
    if ((base_meta == nullptr || !base_meta->fw_grad.defined()) && base.storage().nbytes() > 0 &&
        base.storage().is_alias_of(self.storage()) && base.dtype() == self.dtype()) {
      TensorBase base_t, view_t;
      {
        ForwardADDisabled hide;
        base_t = laid_out_like(base, op::zeros_like(base));
      }
      set_fw_grad(base, base_t);
      base_t = get_autograd_meta(base)->fw_grad;
      {
        ForwardADDisabled hide;
        view_t = ops::as_strided::call(base_t, self.sizes(), self.strides(), self.storage_offset());
        ops::copy_::call(view_t, tangent, false);
      }
      set_fw_grad(self, view_t);
      return;
    }
  }
  set_fw_grad_of_output(self, tangent);
}

void throw_fw_not_implemented(const char* name, const char* reason) {
  fail(str("Trying to use forward AD with ", name, " that does not support it because ", reason, "."));
}

}  // namespace op::autograd
