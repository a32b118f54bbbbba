// For generated BackendSelect kernels of factory functions (no tensor argument to dispatch
// on): the key set that sends the call on to the backend of the requested device,
//   ops::empty_memory_format::redispatch(op::impl::backend_key_set(device), size, dtype, ...);
#pragma once

#include <optional>

#include "core/device.h"
#include "dispatch/dispatch_key_set.h"

namespace op::impl {

// The device's backend key (cpu when no device is given; Meta for meta; an external device's
// registered key), plus thread-local included backend keys, minus thread-local excludes:
// the keys below BackendSelect that an ordinary call would see.
DispatchKeySet backend_key_set(std::optional<Device> device);

}  // namespace op::impl
