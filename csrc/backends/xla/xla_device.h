// The "xla" device of the sample external backend: tensors carry DispatchKey::XLA (and
// AutogradXLA) and live in host memory, so kernels can compute on them through the CPU
// operators (host_alias.h).
#pragma once

#include "core/device.h"
#include "core/tensor.h"

namespace op::xla {

// Registers "xla" with DispatchKey::XLA on first use (idempotent; the library also does it
// when it is loaded, so Python can name the device right after importing the backend).
DeviceType xla_device_type();
Device xla_device(int index = -1);
bool is_xla(const TensorBase& t);

}  // namespace op::xla
