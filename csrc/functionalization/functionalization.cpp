#include "functionalization/functionalization.h"

#include <algorithm>
#include <utility>

#include "core/error.h"
#include "dispatch/dispatcher.h"
#include "dispatch/operator_handle.h"
#include "dispatch/registration.h"
#include "ops/_to_copy_ops.h"
#include "ops/lift_ops.h"

namespace op {

FunctionalStorage::FunctionalStorage(TensorBase base)
    : base_(std::move(base)),
      alias_storage_(Storage::allocate(std::max(base_.storage().nbytes(), static_cast<size_t>(base_.numel()) * base_.itemsize()),
                                       Device(DeviceType::Meta))) {}

const TensorBase& FunctionalStorage::base() {
  for (Update& update : updates_) {
    if (update.metas.empty()) {
      base_ = std::move(update.value);
      continue;
    }
    // The bases each view step starts from, then the new value scattered back step by step.
    std::vector<TensorBase> bases{base_};
    for (size_t i = 0; i + 1 < update.metas.size(); ++i) bases.push_back(update.metas[i].forward(bases.back()));
    TensorBase value = std::move(update.value);
    for (size_t i = update.metas.size(); i-- > 0;) value = update.metas[i].reverse(bases[i], value);
    base_ = std::move(value);
  }
  updates_.clear();
  return base_;
}

void FunctionalStorage::add_update(TensorBase value, std::vector<ViewMeta> metas) {
  updates_.push_back({std::move(value), std::move(metas)});
  ++generation_;
}

namespace functionalization {

namespace {

thread_local std::vector<std::string>* tls_trace = nullptr;

FunctionalTensorState& state_of(const TensorBase& t) { return *t.unsafe_impl()->functional; }

// A new value for a wrapper. Its metadata stays the eager alias's: values below may be laid
// out differently (a *_copy result is contiguous), and only the sizes can change (out=).
void set_value(const TensorBase& wrapper, TensorBase value) {
  TensorImpl& impl = *wrapper.unsafe_impl();
  if (value.sizes() != wrapper.sizes()) {
    impl.set_sizes_and_strides(value.sizes().vec(), contiguous_strides(value.sizes()));
    impl.storage_offset = 0;
  }
  impl.functional->value = std::move(value);
}

TensorBase make_wrapper(TensorBase value, std::shared_ptr<FunctionalStorage> storage, std::vector<ViewMeta> metas,
                        const TensorBase& layout) {
  OP_CHECK(value.defined(), "functionalization: cannot wrap an undefined tensor");
  OP_CHECK(!value.is_functional(), "functionalization: the tensor is already functional");
  auto impl = std::make_shared<TensorImpl>(storage->alias_storage(), layout.sizes().vec(), layout.strides().vec(),
                                           layout.storage_offset(), value.dtype());
  impl->device = value.device();
  impl->key_set = value.key_set().add(DispatchKey::Functionalize);
  auto state = std::make_shared<FunctionalTensorState>();
  state->generation = storage->generation();
  state->storage = std::move(storage);
  state->metas = std::move(metas);
  state->value = std::move(value);
  impl->functional = std::move(state);
  return TensorBase(std::move(impl));
}

}  // namespace

bool is_functional(const TensorBase& t) { return t.is_functional(); }

TensorBase to_functional(const TensorBase& value) {
  return make_wrapper(value, std::make_shared<FunctionalStorage>(value), {}, value);
}

TensorBase layout_of(const TensorBase& t) {
  if (!t.is_functional()) return t;
  const TensorImpl& impl = *t.unsafe_impl();
  return TensorBase(std::make_shared<TensorImpl>(impl.storage, impl.sizes, impl.strides, impl.storage_offset, impl.dtype));
}

void sync(const TensorBase& t) {
  if (!t.is_functional()) return;
  FunctionalTensorState& state = state_of(t);
  if (state.generation == state.storage->generation()) return;
  BelowGuard below;
  TensorBase value = state.storage->base();
  for (const ViewMeta& meta : state.metas) value = meta.forward(value);
  state.generation = state.storage->generation();
  set_value(t, std::move(value));
}

TensorBase from_functional(const TensorBase& t) {
  if (!t.is_functional()) return t;
  sync(t);
  return state_of(t).value;
}

TensorBase unwrap(const TensorBase& t) { return from_functional(t); }

std::optional<TensorBase> unwrap(const std::optional<TensorBase>& t) {
  if (!t) return t;
  return from_functional(*t);
}

std::vector<TensorBase> unwrap(ArrayRef<TensorBase> ts) {
  std::vector<TensorBase> out;
  out.reserve(ts.size());
  for (const TensorBase& t : ts) out.push_back(from_functional(t));
  return out;
}

std::vector<std::optional<TensorBase>> unwrap(ArrayRef<std::optional<TensorBase>> ts) {
  std::vector<std::optional<TensorBase>> out;
  out.reserve(ts.size());
  for (const auto& t : ts) out.push_back(unwrap(t));
  return out;
}

TensorBase wrap(const TensorBase& t) { return t.defined() && !t.is_functional() ? to_functional(t) : t; }

std::vector<TensorBase> wrap(const std::vector<TensorBase>& ts) {
  std::vector<TensorBase> out;
  out.reserve(ts.size());
  for (const TensorBase& t : ts) out.push_back(wrap(t));
  return out;
}

bool enabled_on_thread() { return tls_local_dispatch_key_set.included.has(DispatchKey::Functionalize); }

TensorBase make_view(const TensorBase& base, TensorBase value, ViewMeta meta, const TensorBase& layout) {
  if (!base.is_functional()) return wrap(value);  // a plain input under an enabled thread: a fresh storage
  const FunctionalTensorState& state = state_of(base);
  std::vector<ViewMeta> metas = state.metas;
  metas.push_back(std::move(meta));
  return make_wrapper(std::move(value), state.storage, std::move(metas), layout);
}

void replace_view(const TensorBase& self, TensorBase value, ViewMeta meta, const TensorBase& layout) {
  OP_CHECK(self.is_functional(), meta.name, ": expected a functional tensor");
  sync(self);
  FunctionalTensorState& state = state_of(self);
  state.metas.push_back(std::move(meta));
  state.value = std::move(value);
  TensorImpl& impl = *self.unsafe_impl();
  impl.set_sizes_and_strides(layout.sizes().vec(), layout.strides().vec());
  impl.storage_offset = layout.storage_offset();
}

void commit(const char* op, const TensorBase& target, TensorBase value, bool resizable) {
  OP_CHECK(target.is_functional(), op, ": cannot mutate a tensor that is not functional with functional arguments; "
           "make it functional first (opdispatch.to_functional)");
  FunctionalTensorState& state = state_of(target);
  sync(target);
  if (value.sizes() != target.sizes()) {
    OP_CHECK(resizable, op, ": the result of shape ", str_list(value.sizes()), " does not match the shape ",
             str_list(target.sizes()), " of the tensor it writes in place");
    OP_CHECK(state.metas.empty(), op, ": cannot resize a view (of shape ", str_list(target.sizes()),
             ") under functionalization");
  }
  if (value.dtype() != target.dtype()) {
    BelowGuard below;
    record(ops::_to_copy::name, ops::_to_copy::overload_name);
    value = ops::_to_copy::call(value, target.dtype(), std::nullopt, std::nullopt, std::nullopt, false, std::nullopt);
  }
  state.storage->add_update(value, state.metas);
  state.generation = state.storage->generation();
  set_value(target, std::move(value));
}

void record(const char* name, const char* overload) {
  if (tls_trace != nullptr) tls_trace->push_back(str(name, ".", *overload ? overload : "default"));
}

void start_trace() {
  OP_CHECK(tls_trace == nullptr, "functionalization.trace: a trace is already running on this thread");
  tls_trace = new std::vector<std::string>();
}

std::vector<std::string> stop_trace() {
  if (tls_trace == nullptr) return {};
  std::vector<std::string> calls = std::move(*tls_trace);
  delete tls_trace;
  tls_trace = nullptr;
  return calls;
}

namespace {

template <class Visit>
void for_each_tensor(IValue& value, Visit visit) {
  if (value.is_tensor()) {
    visit(value.to_tensor_mut());
  } else if (value.is_tensor_list()) {
    std::vector<TensorBase> list = value.to_tensor_list();
    for (TensorBase& t : list) visit(t);
    value = IValue(std::move(list));
  } else if (value.tag() == IValue::Tag::OptionalTensorList) {
    std::vector<std::optional<TensorBase>> list = value.to_optional_tensor_list();
    for (auto& t : list)
      if (t) visit(*t);
    value = IValue(std::move(list));
  }
}

void functionalize_fallback(const OperatorHandle& op, DispatchKeySet /*ks*/, Stack* stack) {
  const FunctionSchema& schema = op.schema();
  const std::string name = op.name();
  for (const Argument& a : schema.arguments())
    OP_CHECK(!a.is_write(), name, ": mutates its argument '", a.name,
             "' and has no Functionalize kernel; functionalization needs a functional variant of it");
  const size_t n = schema.arguments().size();
  OP_CHECK(stack->size() >= n, name, " (functionalize fallback): expected ", n, " arguments on the stack");
  Stack arguments(stack->end() - static_cast<std::ptrdiff_t>(n), stack->end());
  stack->resize(stack->size() - n);
  bool functional = enabled_on_thread();
  for (IValue& value : arguments)
    for_each_tensor(value, [&](TensorBase& t) {
      if (t.is_functional()) {
        functional = true;
        t = from_functional(t);
      }
    });
  for (const Return& r : schema.returns())
    OP_CHECK(!(functional && r.annotation), name, ": returns an alias of its input and has no Functionalize kernel; "
             "functionalization needs its *_copy variant and a view inverse");
  {
    BelowGuard below;
    if (tls_trace != nullptr) tls_trace->push_back(schema.name().overload.empty() ? name + ".default" : name);
    op.call_boxed(arguments);
  }
  for (IValue& value : arguments) {
    if (functional) for_each_tensor(value, [&](TensorBase& t) { t = wrap(t); });
    stack->push_back(std::move(value));
  }
}

// lift / lift_fresh: a tensor made outside the dispatcher (opdispatch.tensor) becomes functional.
TensorBase lift_functionalize(const TensorBase& self) {
  if (self.is_functional()) return self;
  BelowGuard below;
  return to_functional(call<ops::lift>(self));
}

// lift_fresh's argument is fresh (nothing else aliases it): it is wrapped as it is, and the
// layer below sees no call.
TensorBase lift_fresh_functionalize(const TensorBase& self) {
  return self.is_functional() ? self : to_functional(self);
}

// Lazy tensors live under functionalization (PR 75527): their wrappers are the tensors users
// hold, and the tensors below are the backend's.
bool lives_under_functionalization(Device device) { return backend_key_of(device.type()) == DispatchKey::Lazy; }

// _to_copy: the copy of a functional tensor is functional, as the fallback would make it,
// except when it leaves such a device for one whose tensors are plain: `lazy_t.to("cpu")`
// syncs and unwraps. Inside functionalize() everything stays functional.
TensorBase to_copy_functionalize(const TensorBase& self, std::optional<ScalarType> dtype, std::optional<Layout> layout,
                                 std::optional<Device> device, std::optional<bool> pin_memory, bool non_blocking,
                                 std::optional<MemoryFormat> memory_format) {
  const bool enabled = enabled_on_thread();
  TensorBase value = from_functional(self);
  TensorBase result;
  {
    BelowGuard below;
    result = call<ops::_to_copy>(value, dtype, layout, device, pin_memory, non_blocking, memory_format);
  }
  if (!self.is_functional() && !enabled) return result;
  const bool leaves = lives_under_functionalization(self.device()) && !lives_under_functionalization(result.device());
  return leaves && !enabled ? result : wrap(result);
}

}  // namespace

}  // namespace functionalization
}  // namespace op

OP_LIBRARY_IMPL(aten, Functionalize, m) {
  m.impl("_to_copy", ::op::KernelFunction::make<&::op::functionalization::to_copy_functionalize>());
  m.impl("lift", ::op::KernelFunction::make<&::op::functionalization::lift_functionalize>());
  m.impl("lift_fresh", ::op::KernelFunction::make<&::op::functionalization::lift_fresh_functionalize>());
}

OP_LIBRARY_IMPL(_, Functionalize, m) {
  m.fallback(::op::KernelFunction::make_boxed<&::op::functionalization::functionalize_fallback>(),
             "functionalize fallback");
}
