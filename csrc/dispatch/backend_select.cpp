#include "dispatch/backend_select.h"

#include "dispatch/local_dispatch_key_set.h"

namespace op::impl {

DispatchKeySet backend_key_set(std::optional<Device> device) {
  const DispatchKey backend = backend_key_of(device.value_or(Device(DeviceType::CPU)).type());
  const LocalDispatchKeySet& local = tls_local_dispatch_key_set;
  return (DispatchKeySet(backend) | local.included.below(DispatchKey::BackendSelect)) - local.excluded;
}

}  // namespace op::impl
