// For generated BackendSelect kernels of functions taking tensor options: the key set that
// sends the call on to the backend of the requested device and of the tensor arguments,
//   ops::empty_memory_format::redispatch(op::impl::backend_key_set(device), size, dtype, ...);
//   ops::_to_copy::redispatch(op::impl::backend_key_set(device, op::impl::key_set_of(self)), self, ...);
#pragma once

#include <optional>

#include "core/array_ref.h"
#include "core/device.h"
#include "core/dispatch_key_set.h"
#include "core/tensor.h"

namespace op::impl {

// The device's backend key (cpu when no device is given; Meta for meta; an external device's
// registered key), plus thread-local included backend keys, minus thread-local excludes:
// the keys below BackendSelect that an ordinary call would see.
DispatchKeySet backend_key_set(std::optional<Device> device);
// The same, joined with the tensor arguments' keys below BackendSelect, so the highest backend
// among the device and the tensors runs (as a call dispatched on the tensors would pick).
DispatchKeySet backend_key_set(std::optional<Device> device, DispatchKeySet tensors);

// The key set a tensor argument contributes (none for an undefined or absent tensor).
inline DispatchKeySet key_set_of(const TensorBase& t) { return t.key_set(); }
inline DispatchKeySet key_set_of(const std::optional<TensorBase>& t) { return t ? t->key_set() : DispatchKeySet(); }
template <class T>
DispatchKeySet key_set_of(ArrayRef<T> list) {
  DispatchKeySet keys;
  for (const T& t : list) keys = keys | key_set_of(t);
  return keys;
}

}  // namespace op::impl
