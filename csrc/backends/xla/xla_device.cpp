#include "backends/xla/xla_device.h"

namespace op::xla {

DeviceType xla_device_type() {
  static const DeviceType type = register_device_type("xla", DispatchKey::XLA);
  return type;
}

Device xla_device(int index) { return Device(xla_device_type(), index); }

bool is_xla(const TensorBase& t) { return t.defined() && t.device().type() == xla_device_type(); }

namespace {

// Loading the library makes "xla" a known device name.
const DeviceType registered_at_load = xla_device_type();

}  // namespace

}  // namespace op::xla
