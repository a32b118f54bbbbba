#include "backends/lazy/lazy_tensor.h"

#include <atomic>
#include <map>
#include <mutex>

#include "backends/lazy/graph.h"
#include "core/error.h"
#include "dispatch/local_dispatch_key_set.h"
#include "functionalization/functionalization.h"

namespace op::lazy {

namespace {

// Every live lazy tensor's state, by id; a state leaves it when its tensor dies.
struct Registry {
  std::mutex mutex;
  std::map<uint64_t, std::weak_ptr<LazyTensorState>> live;
};

Registry& registry() {
  static Registry* r = new Registry();  // leaked: tensors may die during static destruction
  return *r;
}

std::atomic<uint64_t> next_id{0};

std::shared_ptr<LazyTensorState> new_state() {
  auto state = std::make_shared<LazyTensorState>();
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.live.emplace(state->id, state);
  return state;
}

LazyTensorState* find_state(const TensorBase& t) {
  if (!t.defined() || t.is_functional() || t.device().type() != lazy_device_type()) return nullptr;
  return dynamic_cast<LazyTensorState*>(t.unsafe_impl()->backend_state.get());
}

TensorBase make_lazy(std::vector<int64_t> sizes, ScalarType dtype, Device device, std::shared_ptr<LazyTensorState> state) {
  OP_CHECK(device.type() == lazy_device_type(), "lazy: cannot make a lazy tensor on ", device.str());
  std::vector<int64_t> strides = contiguous_strides(sizes);
  // A storage of its own with no bytes: no two lazy tensors alias, and reading the memory of
  // one is an error (check_host_data), never a read of someone else's bytes.
  auto impl = std::make_shared<TensorImpl>(Storage::allocate(0, Device(DeviceType::Meta)), std::move(sizes),
                                           std::move(strides), 0, dtype);
  impl->device = device;
  impl->key_set = key_set_of(device.type());
  impl->backend_state = std::move(state);
  return TensorBase(std::move(impl));
}

void resize_to(const TensorBase& t, IntArrayRef sizes) {
  if (t.sizes() != sizes) t.unsafe_impl()->set_sizes_and_strides(sizes.vec(), contiguous_strides(sizes));
}

}  // namespace

DeviceType lazy_device_type() {
  static const DeviceType type = register_device_type("lazy", DispatchKey::Lazy);
  return type;
}

Device lazy_device() { return Device(lazy_device_type()); }

bool is_lazy(const TensorBase& t) { return find_state(t) != nullptr; }

LazyTensorState::LazyTensorState() : id(next_id++) {}

LazyTensorState::~LazyTensorState() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.live.erase(id);
}

LazyTensorState& state_of(const TensorBase& t, const char* what) {
  LazyTensorState* state = find_state(t);
  if (state == nullptr) {
    OP_CHECK(!t.is_functional(), what, ": got a functional wrapper where a plain lazy tensor was expected");
    OP_CHECK(t.defined(), what, ": undefined tensor");
    OP_CHECK(t.device().type() != lazy_device_type(), what, ": this tensor on lazy holds no IR and no data: a view "
             "made of a plain lazy tensor? Lazy tensors hold no views; use functional ones (.to('lazy') makes them)");
    OP_CHECK(false, what, ": expected a lazy tensor, got one on ", t.device().str());
  }
  return *state;
}

std::shared_ptr<LazyTensorState> shared_state(const TensorBase& t) {
  state_of(t, "lazy");
  return std::static_pointer_cast<LazyTensorState>(t.unsafe_impl()->backend_state);
}

TensorBase make_tensor(Value value, Device device) {
  OP_CHECK(value.defined(), "lazy: make_tensor got an undefined IR value");
  const Shape& shape = value.shape();
  auto state = new_state();
  state->ir = std::move(value);
  return make_lazy(shape.sizes, shape.dtype, device, std::move(state));
}

TensorBase make_data_tensor(TensorBase cpu_data, Device device) {
  OP_CHECK(cpu_data.defined() && cpu_data.device().is_cpu(), "lazy: data must be a cpu tensor");
  auto state = new_state();
  std::vector<int64_t> sizes = cpu_data.sizes().vec();
  const ScalarType dtype = cpu_data.dtype();
  state->data = std::move(cpu_data);
  return make_lazy(std::move(sizes), dtype, device, std::move(state));
}

TensorBase share_value(const TensorBase& t, Device device) {
  const LazyTensorState& state = state_of(t, "lazy");
  return state.ir.defined() ? make_tensor(state.ir, device) : make_data_tensor(state.data, device);
}

void set_same_value(const TensorBase& t, const TensorBase& from) {
  const LazyTensorState& source = state_of(from, "lazy");
  if (source.ir.defined()) set_value(t, source.ir);
  else set_data(t, source.data);
}

void set_value(const TensorBase& t, Value value) {
  LazyTensorState& state = state_of(t, "lazy");
  OP_CHECK(value.defined(), "lazy: set_value got an undefined IR value");
  OP_CHECK(value.shape().dtype == t.dtype(), "lazy: a ", ::op::to_string(value.shape().dtype), " value for a ",
           ::op::to_string(t.dtype()), " tensor");
  resize_to(t, value.shape().sizes);
  state.ir = std::move(value);
  state.data = TensorBase();
  state.data_leaf = Value();
}

void set_data(const TensorBase& t, TensorBase cpu_data) {
  LazyTensorState& state = state_of(t, "lazy");
  OP_CHECK(cpu_data.defined() && cpu_data.device().is_cpu() && cpu_data.dtype() == t.dtype(),
           "lazy: set_data needs cpu data of the tensor's dtype");
  resize_to(t, cpu_data.sizes());
  state.ir = Value();
  state.data = std::move(cpu_data);
  state.data_leaf = Value();
}

std::vector<std::shared_ptr<LazyTensorState>> pending_states() {
  std::vector<std::shared_ptr<LazyTensorState>> live;
  {
    // No reference is dropped under the lock: a last one would run the destructor, which locks too.
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    live.reserve(r.live.size());
    for (const auto& [id, weak] : r.live)
      if (auto state = weak.lock()) live.push_back(std::move(state));
  }
  std::vector<std::shared_ptr<LazyTensorState>> out;
  for (auto& state : live)
    if (state->ir.defined()) out.push_back(std::move(state));
  return out;
}

TensorBase materialize(const TensorBase& t) {
  std::shared_ptr<LazyTensorState> state = shared_state(t);
  if (state->ir.defined()) sync_states({state});
  return state->data;
}

bool below_functionalization() { return tls_local_dispatch_key_set.excluded.has(DispatchKey::Functionalize); }

TensorBase wrap_if_above(TensorBase t) {
  return below_functionalization() ? t : functionalization::to_functional(t);
}

namespace {

// Loading the library makes "lazy" a known device name.
const DeviceType registered_at_load = lazy_device_type();

}  // namespace

}  // namespace op::lazy
