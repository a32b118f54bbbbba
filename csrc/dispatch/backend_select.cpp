#include "dispatch/backend_select.h"

#include "dispatch/local_dispatch_key_set.h"

namespace op::impl {

DispatchKeySet backend_key_set(std::optional<Device> device) { return backend_key_set(device, DispatchKeySet()); }

DispatchKeySet backend_key_set(std::optional<Device> device, DispatchKeySet tensors) {
  const DispatchKey backend = backend_key_of(device.value_or(Device(DeviceType::CPU)).type());
  const LocalDispatchKeySet& local = tls_local_dispatch_key_set;
  const DispatchKeySet requested = DispatchKeySet(backend) | tensors | local.included;
  return requested.below(DispatchKey::BackendSelect) - local.excluded;
}

}  // namespace op::impl
