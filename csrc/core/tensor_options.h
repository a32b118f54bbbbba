// Optional dtype and device for factory functions; unset fields take the defaults
// (float32, cpu) when a tensor is created.
#pragma once

#include <optional>

#include "core/device.h"
#include "core/scalar_type.h"

namespace op {

struct TensorOptions {
  std::optional<ScalarType> dtype;
  std::optional<Device> device;

  TensorOptions() = default;
  TensorOptions(ScalarType t) : dtype(t) {}  // NOLINT: empty({2}, ScalarType::Int64)
  TensorOptions(Device d) : device(d) {}     // NOLINT: empty({2}, Device(DeviceType::Meta))
  TensorOptions(DeviceType d) : device(Device(d)) {}  // NOLINT

  TensorOptions with_device(Device d) const { TensorOptions o = *this; o.device = d; return o; }
  ScalarType dtype_or_default() const { return dtype.value_or(ScalarType::Float32); }
  Device device_or_default() const { return device.value_or(Device(DeviceType::CPU)); }
};

}  // namespace op
